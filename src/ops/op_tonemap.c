/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tone mapping, host side: the transfer functions and tone curves in double
 * precision, and the tables both backends evaluate them through
 * (kernels/tonemap_math.h). The operator class itself lives in
 * src/ops/op_convert.c, which shares its format handling with `convert`.
 */
#include <math.h>
#include <stdlib.h>

#include "kernels/tonemap_math.h"

#define PQ_M1 (2610.0 / 16384.0)
#define PQ_M2 (2523.0 / 4096.0 * 128.0)
#define PQ_C1 (3424.0 / 4096.0)
#define PQ_C2 (2413.0 / 4096.0 * 32.0)
#define PQ_C3 (2392.0 / 4096.0 * 32.0)

double vkcu_tm_pq_eotf(double e)
{
    if (e <= 0.0)
        return 0.0;
    double p = pow(e, 1.0 / PQ_M2);
    double num = p - PQ_C1;
    if (num < 0.0)
        num = 0.0;
    return pow(num / (PQ_C2 - PQ_C3 * p), 1.0 / PQ_M1);
}

double vkcu_tm_pq_inv_eotf(double y)
{
    if (y <= 0.0)
        return 0.0;
    double p = pow(y, PQ_M1);
    return pow((PQ_C1 + PQ_C2 * p) / (1.0 + PQ_C3 * p), PQ_M2);
}

#define HLG_A 0.17883277
#define HLG_B (1.0 - 4.0 * HLG_A)
#define HLG_C (0.5 - HLG_A * log(4.0 * HLG_A))

double vkcu_tm_hlg_inv_oetf(double e)
{
    if (e <= 0.0)
        return 0.0;
    if (e <= 0.5)
        return e * e / 3.0;
    return (exp((e - HLG_C) / HLG_A) + HLG_B) / 12.0;
}

double vkcu_tm_hlg_gamma(double lw)
{
    return 1.2 + 0.42 * log10(lw / 1000.0);
}

static double hable(double x)
{
    const double a = 0.15, b = 0.50, c = 0.10, d = 0.20, e = 0.02, f = 0.30;
    return (x * (a * x + c * b) + d * e) / (x * (a * x + b) + d * f) - e / f;
}

/* BT.2390 EETF in the PQ domain, black levels 0: signals up to the knee
 * 1.5*maxLum - 0.5 pass, the rest follow a Hermite spline to maxLum. */
static double bt2390(const tm_params *p, double m)
{
    double sw = vkcu_tm_pq_inv_eotf(p->src_peak / 10000.0);
    double max_lum = vkcu_tm_pq_inv_eotf(p->peak / 10000.0) / sw;
    double e = vkcu_tm_pq_inv_eotf(m * p->peak / 10000.0) / sw;
    if (max_lum >= 1.0)
        return m;
    if (e > 1.0)
        e = 1.0;
    double ks = 1.5 * max_lum - 0.5;
    if (e > ks) {
        double t = (e - ks) / (1.0 - ks), t2 = t * t, t3 = t2 * t;
        e = (2 * t3 - 3 * t2 + 1) * ks + (t3 - 2 * t2 + t) * (1.0 - ks) + (-2 * t3 + 3 * t2) * max_lum;
    }
    return vkcu_tm_pq_eotf(e * sw) * 10000.0 / p->peak;
}

double vkcu_tm_curve(const tm_params *p, double m)
{
    double w = p->src_peak / p->peak; /* source peak relative to the target */
    if (m <= 0.0)
        return 0.0;
    switch (p->curve) {
    case TM_CURVE_BT2390:
        return bt2390(p, m);
    case TM_CURVE_HABLE:
        return w <= 1.0 ? m : hable(m) / hable(w);
    case TM_CURVE_REINHARD:
        return w <= 1.0 ? m : m * (1.0 + m / (w * w)) / (1.0 + m);
    default:
        return m < 1.0 ? m : 1.0;
    }
}

static void rgb_to_xyz(const double prim[3][2], double m[3][3])
{
    const double wx = 0.3127, wy = 0.3290; /* D65 */
    double p[3][3], w[3] = { wx / wy, 1.0, (1.0 - wx - wy) / wy };
    for (int c = 0; c < 3; c++) {
        p[0][c] = prim[c][0] / prim[c][1];
        p[1][c] = 1.0;
        p[2][c] = (1.0 - prim[c][0] - prim[c][1]) / prim[c][1];
    }
    /* solve p * s = w (Cramer's rule) */
    double det = p[0][0] * (p[1][1] * p[2][2] - p[1][2] * p[2][1]) - p[0][1] * (p[1][0] * p[2][2] - p[1][2] * p[2][0]) +
                 p[0][2] * (p[1][0] * p[2][1] - p[1][1] * p[2][0]);
    double s[3];
    for (int c = 0; c < 3; c++) {
        double q[3][3];
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 3; k++)
                q[r][k] = k == c ? w[r] : p[r][k];
        s[c] = (q[0][0] * (q[1][1] * q[2][2] - q[1][2] * q[2][1]) - q[0][1] * (q[1][0] * q[2][2] - q[1][2] * q[2][0]) +
                q[0][2] * (q[1][0] * q[2][1] - q[1][1] * q[2][0])) / det;
    }
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            m[r][c] = p[r][c] * s[c];
}

static void invert3(const double a[3][3], double o[3][3])
{
    double det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                 a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            int r1 = (c + 1) % 3, r2 = (c + 2) % 3, c1 = (r + 1) % 3, c2 = (r + 2) % 3;
            o[r][c] = (a[r1][c1] * a[r2][c2] - a[r1][c2] * a[r2][c1]) / det;
        }
}

void vkcu_tm_matrix_2020_to_709(double m[3][3])
{
    static const double p2020[3][2] = { { 0.708, 0.292 }, { 0.170, 0.797 }, { 0.131, 0.046 } };
    static const double p709[3][2] = { { 0.640, 0.330 }, { 0.300, 0.600 }, { 0.150, 0.060 } };
    double a[3][3], b[3][3], binv[3][3];
    rgb_to_xyz(p2020, a);
    rgb_to_xyz(p709, b);
    invert3(b, binv);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            m[r][c] = binv[r][0] * a[0][c] + binv[r][1] * a[1][c] + binv[r][2] * a[2][c];
}

float *vkcu_tm_tables_build(const tm_params *p, tm_tables *t)
{
    float *block = malloc(TM_TABLE_FLOATS * sizeof(float));
    if (!block)
        return NULL;
    float *eotf = block, *ootf = eotf + TM_CODE_SIZE, *gain = ootf + TM_LOG_SIZE, *oetf = gain + TM_LOG_SIZE;
    double lw = p->src_peak, gamma = vkcu_tm_hlg_gamma(lw);
    for (int i = 0; i < TM_CODE_SIZE; i++) {
        double e = i / 65535.0;
        eotf[i] = (float)(p->transfer == TM_HLG ? vkcu_tm_hlg_inv_oetf(e) : vkcu_tm_pq_eotf(e) * 10000.0 / p->peak);
    }
    for (int i = 0; i < TM_LOG_SIZE; i++) {
        double x = tm_log_x(i);
        ootf[i] = (float)(lw / p->peak * pow(x, gamma - 1.0));
        gain[i] = (float)(vkcu_tm_curve(p, x) / x);
        oetf[i] = (float)(x >= 1.0 ? 1.0 : pow(x, 1.0 / 2.4));
    }
    t->eotf = eotf;
    t->ootf = ootf;
    t->gain = gain;
    t->oetf = oetf;
    t->transfer = p->transfer;
    double m[3][3];
    vkcu_tm_matrix_2020_to_709(m);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            t->m2020to709[r][c] = (float)m[r][c];
    t->ys[0] = 0.2627f;
    t->ys[1] = 0.6780f;
    t->ys[2] = 0.0593f;
    t->y709[0] = 0.2126f;
    t->y709[1] = 0.7152f;
    t->y709[2] = 0.0722f;
    return block;
}
