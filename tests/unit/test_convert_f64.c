/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The convert fast path's double-precision affine (cvf_apply_f64 in
 * kernels/convert_fast.h, what the CUDA fast kernel runs for integer
 * outputs) against the int64 reference cv_apply, on the CPU: the same
 * header code, with the C library's correctly rounded fma.
 *
 * For every affine the fast path can meet (YUV 8/10-bit input of each
 * matrix and range, to YUV of each matrix, range and depth 8/10/16 and to
 * RGB 8/16), cvf_f64_init must accept it, and the codes must be equal on
 * every corner of the input cube, on random samples, and on samples chosen
 * so that the exact result sits on or next to a rounding boundary.
 * cvf_f64_init must also refuse affines whose sums would not be exact.
 */
#include <stdio.h>
#include <string.h>

#include "kernels/convert_fast.h"

static long long checks, failures;

static uint64_t rng(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static const char *mname(enum cv_matrix m)
{
    static const char *n[] = { "bt601", "bt709", "bt2020", "rgb" };
    return n[m];
}

static void check(const cv_affine *a, const cvf_f64 *f, const char *what, int32_t x0, int32_t x1, int32_t x2)
{
    for (int c = 0; c < 3; c++) {
        int ref = cv_apply(a, c, x0, x1, x2);
        int got = cvf_apply_f64(f, c, cvf_i2d(x0), cvf_i2d(x1), cvf_i2d(x2));
        checks++;
        if (ref != got && failures++ < 20)
            printf("FAIL %s comp %d at (%d, %d, %d): double %d, int64 %d\n", what, c, x0, x1, x2, got, ref);
    }
}

static void check_affine(const cv_side *in, const cv_side *out, uint64_t *seed)
{
    char what[96];
    snprintf(what, sizeof(what), "%s %s %d -> %s %s %d", mname(in->matrix), in->full_range ? "full" : "limited",
             in->depth, mname(out->matrix), out->full_range ? "full" : "limited", out->depth);
    cv_affine a;
    cvf_f64 f;
    vkcu_cv_affine_build(&a, in, out);
    checks++;
    if (!cvf_f64_init(&f, &a, in->depth)) {
        failures++;
        printf("FAIL %s: cvf_f64_init refused it\n", what);
        return;
    }
    const int32_t xmax = ((1 << in->depth) - 1) << CV_FRAC;
    for (int i = 0; i < 8; i++) /* corners */
        check(&a, &f, what, i & 1 ? xmax : 0, i & 2 ? xmax : 0, i & 4 ? xmax : 0);
    for (int i = 0; i < 200000; i++) { /* random samples, and whole codes as luma is */
        int32_t x0 = (int32_t)(rng(seed) % (uint64_t)(xmax + 1)), x1 = (int32_t)(rng(seed) % (uint64_t)(xmax + 1)),
                x2 = (int32_t)(rng(seed) % (uint64_t)(xmax + 1));
        check(&a, &f, what, x0, x1, x2);
        check(&a, &f, what, x0 & ~((1 << CV_FRAC) - 1), x1, x2);
    }
    /* boundaries: solve for the x0 that puts acc at or next to a multiple of
     * 2^shift (acc >> shift changes there), for each output component */
    for (int c = 0; c < 3; c++) {
        if (!a.c[c][0])
            continue;
        for (int i = 0; i < 20000; i++) {
            int32_t x1 = (int32_t)(rng(seed) % (uint64_t)(xmax + 1)), x2 = (int32_t)(rng(seed) % (uint64_t)(xmax + 1));
            int64_t n = (int64_t)(rng(seed) % (uint64_t)(a.maxv[c] + 2));
            int64_t rest = a.k[c] + (int64_t)a.c[c][1] * x1 + (int64_t)a.c[c][2] * x2;
            int64_t x0 = ((n << a.shift) - rest) / a.c[c][0];
            for (int64_t d = -1; d <= 1; d++)
                if (x0 + d >= 0 && x0 + d <= xmax)
                    check(&a, &f, what, (int32_t)(x0 + d), x1, x2);
        }
    }
}

int main(void)
{
    uint64_t seed = 0x2545f4914f6cdd1dull;
    const enum cv_matrix yuvm[] = { CV_MATRIX_BT601, CV_MATRIX_BT709, CV_MATRIX_BT2020 };
    const int in_depths[] = { 8, 10 }, out_depths[] = { 8, 10, 16 };
    int affines = 0;
    for (int mi = 0; mi < 3; mi++)
        for (int fr = 0; fr < 2; fr++)
            for (int di = 0; di < 2; di++) {
                cv_side in = { yuvm[mi], fr, in_depths[di] };
                for (int mo = 0; mo < 3; mo++)
                    for (int fo = 0; fo < 2; fo++)
                        for (int dout = 0; dout < 3; dout++) {
                            cv_side out = { yuvm[mo], fo, out_depths[dout] };
                            check_affine(&in, &out, &seed);
                            affines++;
                        }
                for (int dout = 0; dout < 3; dout += 2) {
                    cv_side out = { CV_MATRIX_RGB, 1, out_depths[dout] };
                    check_affine(&in, &out, &seed);
                    affines++;
                }
            }
    /* refusals: 16-bit inputs make products past 2^53 */
    {
        cv_side in = { CV_MATRIX_BT709, 0, 16 }, out = { CV_MATRIX_RGB, 1, 16 };
        cv_affine a;
        cvf_f64 f;
        vkcu_cv_affine_build(&a, &in, &out);
        checks++;
        if (cvf_f64_init(&f, &a, 16)) {
            failures++;
            printf("FAIL cvf_f64_init accepted 16-bit input, whose sums are not exact in double\n");
        }
    }
    printf("test_convert_f64: %lld checks over %d affines: %s\n", checks, affines,
           failures ? "FAIL" : "the double-precision affine equals the int64 reference");
    return failures ? 1 : 0;
}
