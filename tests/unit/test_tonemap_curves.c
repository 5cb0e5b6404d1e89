/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tone curves against analytic double-precision references written here
 * from the standards (ST 2084 PQ, BT.2100 HLG, BT.2390 EETF, Hable, extended
 * Reinhard): first the host curves, then the tables both backends evaluate
 * through (tm_log_lookup, the EOTF table), then whole pixels through
 * tm_pixel for grey and saturated colours.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/tonemap_math.h"

static int failures;

static void expect(const char *what, double got, double want, double tol)
{
    double err = fabs(got - want);
    if (!(err <= tol)) {
        printf("FAIL %s: got %.9g want %.9g (error %.3g > %.3g)\n", what, got, want, err, tol);
        failures++;
    }
}

static double pq_eotf(double e) /* ST 2084, normalised to 10000 cd/m2 */
{
    const double m1 = 0.1593017578125, m2 = 78.84375, c1 = 0.8359375, c2 = 18.8515625, c3 = 18.6875;
    double p = pow(e, 1 / m2);
    return pow(fmax(p - c1, 0) / (c2 - c3 * p), 1 / m1);
}

static double pq_inv(double y)
{
    const double m1 = 0.1593017578125, m2 = 78.84375, c1 = 0.8359375, c2 = 18.8515625, c3 = 18.6875;
    double p = pow(y, m1);
    return pow((c1 + c2 * p) / (1 + c3 * p), m2);
}

static double hlg_inv(double e) /* BT.2100 inverse OETF */
{
    const double a = 0.17883277, b = 0.28466892, c = 0.55991073;
    return e <= 0.5 ? e * e / 3 : (exp((e - c) / a) + b) / 12;
}

static double eetf(double nits, double src, double dst) /* BT.2390, black 0 */
{
    double sw = pq_inv(src / 1e4), e1 = fmin(pq_inv(nits / 1e4) / sw, 1.0), maxl = pq_inv(dst / 1e4) / sw;
    double ks = 1.5 * maxl - 0.5, e2 = e1;
    if (e1 > ks) {
        double t = (e1 - ks) / (1 - ks);
        e2 = (2 * t * t * t - 3 * t * t + 1) * ks + (t * t * t - 2 * t * t + t) * (1 - ks) + (-2 * t * t * t + 3 * t * t) * maxl;
    }
    return pq_eotf(e2 * sw) * 1e4;
}

static double hable_f(double x)
{
    return ((x * (0.15 * x + 0.05) + 0.004) / (x * (0.15 * x + 0.5) + 0.06)) - 0.02 / 0.3;
}

int main(void)
{
    char what[128];
    /* transfer functions */
    for (int i = 0; i <= 1000; i++) {
        double e = i / 1000.0;
        snprintf(what, sizeof(what), "PQ EOTF(%.3f)", e);
        expect(what, vkcu_tm_pq_eotf(e), pq_eotf(e), 1e-12 + 1e-12 * pq_eotf(e));
        snprintf(what, sizeof(what), "PQ inverse(EOTF(%.3f))", e);
        expect(what, vkcu_tm_pq_inv_eotf(pq_eotf(e)), e, 1e-9);
        snprintf(what, sizeof(what), "HLG inverse OETF(%.3f)", e);
        expect(what, vkcu_tm_hlg_inv_oetf(e), hlg_inv(e), 1e-7); /* the standard's rounded constant c */
    }
    expect("HLG gamma at 1000", vkcu_tm_hlg_gamma(1000), 1.2, 1e-12);
    expect("HLG gamma at 2000", vkcu_tm_hlg_gamma(2000), 1.2 + 0.42 * log10(2.0), 1e-12);

    /* curves, on light relative to the target peak */
    const double peaks[][2] = { { 1000, 100 }, { 4000, 100 }, { 600, 203 }, { 10000, 100 } };
    for (int pi = 0; pi < 4; pi++) {
        tm_params p = { TM_PQ, TM_CURVE_BT2390, peaks[pi][1], peaks[pi][0] };
        double w = p.src_peak / p.peak;
        for (int i = 0; i <= 400; i++) {
            double m = pow(10.0, -4.0 + i * 0.01) * w; /* 1e-4 .. 1 of the source peak */
            p.curve = TM_CURVE_BT2390;
            snprintf(what, sizeof(what), "BT.2390 %g->%g at %g", p.src_peak, p.peak, m);
            expect(what, vkcu_tm_curve(&p, m), eetf(m * p.peak, p.src_peak, p.peak) / p.peak, 1e-9);
            p.curve = TM_CURVE_HABLE;
            snprintf(what, sizeof(what), "hable %g->%g at %g", p.src_peak, p.peak, m);
            expect(what, vkcu_tm_curve(&p, m), hable_f(m) / hable_f(w), 1e-12);
            p.curve = TM_CURVE_REINHARD;
            snprintf(what, sizeof(what), "reinhard %g->%g at %g", p.src_peak, p.peak, m);
            expect(what, vkcu_tm_curve(&p, m), m * (1 + m / (w * w)) / (1 + m), 1e-12);
        }
        p.curve = TM_CURVE_BT2390;
        expect("BT.2390 maps the source peak to the target peak", vkcu_tm_curve(&p, w), 1.0, 1e-9);
    }

    /* the tables both backends use */
    for (int c = 0; c < 3; c++) {
        tm_params p = { c == 2 ? TM_HLG : TM_PQ, c == 1 ? TM_CURVE_HABLE : TM_CURVE_BT2390, 100, 1000 };
        tm_tables t;
        float *block = vkcu_tm_tables_build(&p, &t);
        if (!block)
            return 1;
        for (int code = 0; code < 65536; code += 97) {
            double e = code / 65535.0, want = p.transfer == TM_HLG ? hlg_inv(e) : pq_eotf(e) * 1e4 / p.peak;
            snprintf(what, sizeof(what), "EOTF table code %d", code);
            expect(what, t.eotf[code], want, 1e-6 * want + 1e-7);
        }
        for (int i = 0; i <= 2000; i++) {
            double m = pow(10.0, -6.0 + i * 0.004); /* 1e-6 .. 100 x target peak */
            snprintf(what, sizeof(what), "gain table at %g", m);
            double want = p.curve == TM_CURVE_HABLE ? hable_f(m) / hable_f(10.0) : eetf(m * 100, 1000, 100) / 100;
            expect(what, tm_log_lookup(t.gain, (float)m) * (double)(float)m, want, 2e-5 * want + 1e-9);
            if (m <= 1.0) {
                snprintf(what, sizeof(what), "BT.1886 inverse table at %g", m);
                expect(what, tm_log_lookup(t.oetf, (float)m), pow((float)m, 1 / 2.4), 1e-5);
            }
            if (p.transfer == TM_HLG && m <= 1.0) {
                snprintf(what, sizeof(what), "HLG OOTF table at %g", m);
                double g = 1000.0 / 100 * pow((float)m, 0.2);
                expect(what, tm_log_lookup(t.ootf, (float)m), g, 2e-5 * g);
            }
        }
        /* whole pixels: grey at the source peak -> SDR white; black stays black; grey keeps R=G=B */
        int in[3], out[3];
        int peak_code = (int)floor((p.transfer == TM_HLG ? 1.0 : pq_inv(1000 / 1e4)) * 65535 + 0.5);
        in[0] = in[1] = in[2] = peak_code;
        tm_pixel(&t, in, out);
        if (out[0] < 65500 || out[0] != out[1] || out[1] != out[2]) {
            printf("FAIL tm_pixel: source peak grey -> %d %d %d, want white\n", out[0], out[1], out[2]);
            failures++;
        }
        in[0] = in[1] = in[2] = 0;
        tm_pixel(&t, in, out);
        if (out[0] || out[1] || out[2]) {
            printf("FAIL tm_pixel: black -> %d %d %d\n", out[0], out[1], out[2]);
            failures++;
        }
        in[0] = 40000, in[1] = in[2] = 0; /* saturated BT.2020 red: out of BT.709, stays valid and red */
        tm_pixel(&t, in, out);
        if (out[0] <= out[1] || out[0] <= out[2]) {
            printf("FAIL tm_pixel: BT.2020 red -> %d %d %d\n", out[0], out[1], out[2]);
            failures++;
        }
        free(block);
    }
    printf("test_tonemap_curves: PQ EOTF/inverse, HLG, BT.2390 EETF, hable, reinhard vs analytic double; tables "
           "(EOTF, gain, OOTF, BT.1886) within 2e-5: %s\n",
           failures ? "FAIL" : "ok");
    return failures ? 1 : 0;
}
