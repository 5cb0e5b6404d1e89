/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tone mapping math shared by the CPU reference and the CUDA kernels: HDR
 * (PQ or HLG, BT.2020) R'G'B' to SDR BT.709 R'G'B', both as 16-bit codes.
 *
 * Every transcendental function comes from tables the host builds once in
 * double precision (src/ops/op_tonemap.c) and both backends read: a direct
 * 65536-entry table over the 16-bit input code for the EOTF, and "log
 * tables" (piecewise linear in x within TM_SEG segments per octave, found
 * from the float's exponent and mantissa bits) for everything that takes a
 * linear-light value. The remaining float arithmetic is written with
 * tm_mul/tm_add/..., which are correctly rounded single-precision
 * operations on both compilers (no contraction into FMA on the GPU; gcc does
 * not contract in ISO C mode and x86-64 has no excess precision), so the two
 * backends produce the same bits.
 *
 * Per pixel: EOTF (and for HLG the OOTF with the BT.2100 system gamma), a
 * tone curve on max(R,G,B) applied as a common gain so hue is kept, BT.2020
 * to BT.709 primaries, out-of-gamut colours desaturated towards their
 * luminance, clip to [0,1], inverse BT.1886 (gamma 2.4) encoding.
 */
#ifndef VKCU_TONEMAP_MATH_H
#define VKCU_TONEMAP_MATH_H

#include "common.h"
#include "convert_math.h"

#define TM_EMIN (-40)  /* log tables cover [2^TM_EMIN, 2^TM_EMAX) */
#define TM_EMAX 16
#define TM_SEG_BITS 7
#define TM_SEG (1 << TM_SEG_BITS)
#define TM_LOG_SIZE ((TM_EMAX - TM_EMIN) * TM_SEG + 1)
#define TM_CODE_SIZE 65536
/* floats in the block vkcu_tm_tables_build returns: eotf, ootf, gain, oetf */
#define TM_TABLE_FLOATS (TM_CODE_SIZE + 3 * TM_LOG_SIZE)

enum tm_transfer { TM_PQ = 0, TM_HLG };
enum vkcu_tm_curve { TM_CURVE_BT2390 = 0, TM_CURVE_HABLE, TM_CURVE_REINHARD, TM_CURVE_CLIP };

/* Pointers to the tables (host or device memory) and scalar parameters. */
typedef struct tm_tables {
    const float *eotf;   /* [TM_CODE_SIZE]: code -> linear; PQ: display light / target peak; HLG: scene light 0..1 */
    const float *ootf;   /* [TM_LOG_SIZE] (HLG): Ys -> Lw/peak * Ys^(gamma-1) */
    const float *gain;   /* [TM_LOG_SIZE]: m -> curve(m)/m, m = max(R,G,B) relative to the target peak */
    const float *oetf;   /* [TM_LOG_SIZE]: linear 0..1 -> inverse BT.1886 */
    int transfer;        /* enum tm_transfer */
    float m2020to709[3][3];
    float ys[3];         /* BT.2020 luminance weights (HLG OOTF) */
    float y709[3];       /* BT.709 luminance weights (gamut desaturation) */
} tm_tables;

#ifdef __CUDA_ARCH__
VKCU_HD float tm_mul(float a, float b) { return __fmul_rn(a, b); }
VKCU_HD float tm_add(float a, float b) { return __fadd_rn(a, b); }
VKCU_HD float tm_sub(float a, float b) { return __fsub_rn(a, b); }
VKCU_HD float tm_div(float a, float b) { return __fdiv_rn(a, b); }
#else
VKCU_HD float tm_mul(float a, float b) { return a * b; }
VKCU_HD float tm_add(float a, float b) { return a + b; }
VKCU_HD float tm_sub(float a, float b) { return a - b; }
VKCU_HD float tm_div(float a, float b) { return a / b; }
#endif

/* x of log table entry i (host table builders use the same mapping). */
VKCU_HD double tm_log_x(int i)
{
    int oct = i >> TM_SEG_BITS, seg = i & (TM_SEG - 1);
    double base = 1.0;
    int e = TM_EMIN + oct;
    for (; e > 0; e--)
        base *= 2.0;
    for (; e < 0; e++)
        base *= 0.5;
    return base * (1.0 + seg / (double)TM_SEG);
}

/* Piecewise-linear lookup of a log table at x >= 0. Below 2^TM_EMIN the
 * function is taken as linear from f(0) = 0 (all tabulated functions
 * vanish at 0 or are used only above it); above the top it is held. */
VKCU_HD float tm_log_lookup(const float *t, float x)
{
    if (!(x > 0.0f))
        return 0.0f;
    uint32_t b = cv_float_bits(x);
    int e = (int)(b >> 23) - 127;
    if (e < TM_EMIN) /* scale by 2^-TM_EMIN: exact */
        return tm_mul(t[0], tm_mul(x, 1099511627776.0f));
    if (e >= TM_EMAX)
        return t[TM_LOG_SIZE - 1];
    uint32_t m = b & 0x7fffffu;
    int i = (e - TM_EMIN) * TM_SEG + (int)(m >> (23 - TM_SEG_BITS));
    float frac = tm_mul((float)(m & ((1u << (23 - TM_SEG_BITS)) - 1)), 1.0f / (float)(1u << (23 - TM_SEG_BITS)));
    return tm_add(t[i], tm_mul(frac, tm_sub(t[i + 1], t[i])));
}

VKCU_HD float tm_max3(float a, float b, float c)
{
    float m = a > b ? a : b;
    return m > c ? m : c;
}

/* HDR R'G'B' codes (16-bit, BT.2020) -> SDR R'G'B' codes (16-bit, BT.709). */
VKCU_HD void tm_pixel(const tm_tables *t, const int in[3], int out[3])
{
    float l[3], o[3];
    for (int c = 0; c < 3; c++)
        l[c] = t->eotf[in[c]];
    if (t->transfer == TM_HLG) {
        float ys = tm_add(tm_add(tm_mul(t->ys[0], l[0]), tm_mul(t->ys[1], l[1])), tm_mul(t->ys[2], l[2]));
        float g = tm_log_lookup(t->ootf, ys);
        for (int c = 0; c < 3; c++)
            l[c] = tm_mul(l[c], g);
    }
    float m = tm_max3(l[0], l[1], l[2]);
    if (m > 0.0f) {
        float g = tm_log_lookup(t->gain, m);
        for (int c = 0; c < 3; c++)
            l[c] = tm_mul(l[c], g);
    }
    for (int r = 0; r < 3; r++)
        o[r] = tm_add(tm_add(tm_mul(t->m2020to709[r][0], l[0]), tm_mul(t->m2020to709[r][1], l[1])),
                      tm_mul(t->m2020to709[r][2], l[2]));
    float mn = o[0] < o[1] ? o[0] : o[1];
    mn = mn < o[2] ? mn : o[2];
    if (mn < 0.0f) {
        /* pull towards the luminance until the most negative channel is 0 */
        float y = tm_add(tm_add(tm_mul(t->y709[0], o[0]), tm_mul(t->y709[1], o[1])), tm_mul(t->y709[2], o[2]));
        if (y <= 0.0f) {
            o[0] = o[1] = o[2] = 0.0f;
        } else {
            float s = tm_div(y, tm_sub(y, mn));
            for (int c = 0; c < 3; c++)
                o[c] = tm_add(y, tm_mul(s, tm_sub(o[c], y)));
        }
    }
    for (int c = 0; c < 3; c++) {
        float v = vkcu_clampf(o[c], 0.0f, 1.0f);
        float e = tm_log_lookup(t->oetf, v);
        int code = (int)tm_add(tm_mul(e, 65535.0f), 0.5f);
        out[c] = vkcu_clampi(code, 0, 65535);
    }
}

#ifndef __CUDACC__
/* Host side (src/ops/op_tonemap.c): the analytic curves in double precision and
 * the table builder. Luminances are in cd/m^2 (nits). */
typedef struct tm_params {
    int transfer;    /* enum tm_transfer */
    int curve;       /* enum vkcu_tm_curve */
    double peak;     /* target (SDR) peak */
    double src_peak; /* source peak: content/mastering peak (PQ), nominal display peak Lw (HLG) */
} tm_params;

double vkcu_tm_pq_eotf(double e);     /* PQ signal 0..1 -> luminance / 10000 */
double vkcu_tm_pq_inv_eotf(double y); /* luminance / 10000 -> PQ signal */
double vkcu_tm_hlg_inv_oetf(double e);/* HLG signal -> scene light 0..1 */
double vkcu_tm_hlg_gamma(double lw);  /* BT.2100 system gamma for a display peak */
/* Tone curve on light relative to the target peak (1.0 = peak): the SDR
 * light it maps to, relative to the target peak. */
double vkcu_tm_curve(const tm_params *p, double m);
/* Linear BT.2020 RGB to linear BT.709 RGB (from the primaries, D65). */
void vkcu_tm_matrix_2020_to_709(double m[3][3]);
/* Builds all tables in one allocation (returned; free() it) and points *t
 * at them. Returns NULL when out of memory. */
float *vkcu_tm_tables_build(const tm_params *p, tm_tables *t);
#endif

#endif
