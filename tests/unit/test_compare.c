/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The comparison's pieces (metrics.c, hash_list.c) on synthetic data: PSNR
 * from a known error, identical pictures (inf dB, SSIM 1), the place of the
 * largest difference, the same numbers for NV12 as for the yuv420p picture
 * it holds (and P010 as yuv420p10le), format mismatches refused, and
 * hash-list parsing (framemd5 and JSON, errors naming the line).
 * Every layout of metrics_util.h, in four patterns (identical, opposite,
 * noisy, unrelated), gives the plain reference's figures bit for bit on 1,
 * 2, 3 and 8 worker threads.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <libavutil/frame.h>
#include <libavutil/pixdesc.h>

#include "regress/compare.h"
#include "metrics_util.h"
#include "test_util.h"

/* A deterministic textured 4:2:0 picture; depth 8 or 10 (values in range). */
static void fill_planar(AVFrame *f, int depth, int seed)
{
    int wide = depth > 8, max = (1 << depth) - 1;
    for (int p = 0; p < 3; p++) {
        int w = p ? (f->width + 1) / 2 : f->width, h = p ? (f->height + 1) / 2 : f->height;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                int v = ((x * 7 + y * 13 + p * 50 + seed * 3) * 2654435761u >> 7) % (max + 1);
                if (wide)
                    ((uint16_t *)(f->data[p] + y * f->linesize[p]))[x] = (uint16_t)v;
                else
                    f->data[p][y * f->linesize[p] + x] = (uint8_t)v;
            }
    }
}

/* The semi-planar form of a planar 4:2:0 frame (P010 keeps samples in the high bits). */
static AVFrame *to_semiplanar(const AVFrame *src, int depth)
{
    AVFrame *f = tu_frame(depth > 8 ? AV_PIX_FMT_P010LE : AV_PIX_FMT_NV12, src->width, src->height);
    int cw = (src->width + 1) / 2, ch = (src->height + 1) / 2;
    for (int y = 0; y < src->height; y++)
        for (int x = 0; x < src->width; x++) {
            if (depth > 8)
                ((uint16_t *)(f->data[0] + y * f->linesize[0]))[x] =
                    (uint16_t)(((const uint16_t *)(src->data[0] + y * src->linesize[0]))[x] << 6);
            else
                f->data[0][y * f->linesize[0] + x] = src->data[0][y * src->linesize[0] + x];
        }
    for (int y = 0; y < ch; y++)
        for (int x = 0; x < cw; x++)
            for (int c = 0; c < 2; c++) {
                if (depth > 8)
                    ((uint16_t *)(f->data[1] + y * f->linesize[1]))[2 * x + c] =
                        (uint16_t)(((const uint16_t *)(src->data[1 + c] + y * src->linesize[1 + c]))[x] << 6);
                else
                    f->data[1][y * f->linesize[1] + 2 * x + c] = src->data[1 + c][y * src->linesize[1 + c] + x];
            }
    return f;
}

static void test_identical_and_offset(void)
{
    char err[256];
    vkcu_frame_metrics m;
    AVFrame *a = tu_frame(AV_PIX_FMT_YUV420P, 64, 48), *b = tu_frame(AV_PIX_FMT_YUV420P, 64, 48);
    fill_planar(a, 8, 1);
    av_frame_copy(b, a);
    CHECK(vkcu_frame_metrics_compute(a, b, &m, err, sizeof(err)) == 0, "identical: %s", err);
    CHECK(m.max_diff == 0 && isinf(m.psnr[0]) && isinf(m.psnr_avg), "identical: max diff %d, psnr %f", m.max_diff, m.psnr[0]);
    CHECK(fabs(m.ssim[0] - 1) < 1e-9 && fabs(m.ssim_all - 1) < 1e-9, "identical: ssim %f", m.ssim_all);
    CHECK(!strcmp(m.comp_names, "yuv"), "labels '%s'", m.comp_names);

    /* Every luma sample off by 2 (kept in range): MSE 4, PSNR 10*log10(255^2/4). */
    for (int y = 0; y < 48; y++)
        for (int x = 0; x < 64; x++) {
            uint8_t *s = &b->data[0][y * b->linesize[0] + x];
            *s = *s >= 128 ? *s - 2 : *s + 2;
        }
    CHECK(vkcu_frame_metrics_compute(a, b, &m, err, sizeof(err)) == 0, "offset: %s", err);
    double want = 10 * log10(255.0 * 255.0 / 4);
    CHECK(fabs(m.mse[0] - 4) < 1e-12 && fabs(m.psnr[0] - want) < 1e-9, "offset: mse %f psnr %f want %f", m.mse[0], m.psnr[0], want);
    CHECK(isinf(m.psnr[1]) && isinf(m.psnr[2]), "chroma untouched");
    /* Luma is 2/3 of the samples: average MSE 4 * 2/3. */
    CHECK(fabs(m.mse_avg - 4 * 2.0 / 3) < 1e-12, "average mse %f", m.mse_avg);
    CHECK(m.max_diff == 2 && m.max_diff_comp == 0, "max diff %d in %d", m.max_diff, m.max_diff_comp);
    CHECK(m.ssim[0] < 1 && m.ssim[0] > 0.9, "ssim of a small offset %f", m.ssim[0]);

    /* One sample far off: found where it is. */
    av_frame_copy(b, a);
    b->data[2][5 * b->linesize[2] + 9] ^= 0x80;
    CHECK(vkcu_frame_metrics_compute(a, b, &m, err, sizeof(err)) == 0, "spot: %s", err);
    CHECK(m.max_diff == 128 && m.max_diff_comp == 2 && m.max_diff_x == 9 && m.max_diff_y == 5,
          "spot at v(9,5): got %d in %d at (%d,%d)", m.max_diff, m.max_diff_comp, m.max_diff_x, m.max_diff_y);
    av_frame_free(&a);
    av_frame_free(&b);
}

/* NV12/P010 are read through their components: the same numbers as planar. */
static void test_semiplanar(int depth)
{
    char err[256];
    vkcu_frame_metrics mp, ms;
    enum AVPixelFormat pf = depth > 8 ? AV_PIX_FMT_YUV420P10LE : AV_PIX_FMT_YUV420P;
    AVFrame *a = tu_frame(pf, 66, 38), *b = tu_frame(pf, 66, 38);
    fill_planar(a, depth, 1);
    fill_planar(b, depth, 2);
    AVFrame *sa = to_semiplanar(a, depth), *sb = to_semiplanar(b, depth);
    CHECK(vkcu_frame_metrics_compute(a, b, &mp, err, sizeof(err)) == 0, "planar %d: %s", depth, err);
    CHECK(vkcu_frame_metrics_compute(sa, sb, &ms, err, sizeof(err)) == 0, "semi-planar %d: %s", depth, err);
    for (int i = 0; i < 3; i++)
        CHECK(mp.mse[i] == ms.mse[i] && mp.ssim[i] == ms.ssim[i], "depth %d plane %d: mse %f/%f ssim %f/%f", depth, i,
              mp.mse[i], ms.mse[i], mp.ssim[i], ms.ssim[i]);
    CHECK(mp.max_diff == ms.max_diff && mp.peak == (1 << depth) - 1, "depth %d: max diff %d/%d, peak %d", depth,
          mp.max_diff, ms.max_diff, mp.peak);
    av_frame_free(&a);
    av_frame_free(&b);
    av_frame_free(&sa);
    av_frame_free(&sb);
}

static void test_mismatch(void)
{
    char err[256];
    vkcu_frame_metrics m;
    AVFrame *a = tu_frame(AV_PIX_FMT_YUV420P, 32, 32), *b = tu_frame(AV_PIX_FMT_YUV420P, 32, 16);
    CHECK(vkcu_frame_metrics_compute(a, b, &m, err, sizeof(err)) == VKCU_ERR_MISMATCH && strstr(err, "32x16"),
          "size mismatch: '%s'", err);
    AVFrame *c = tu_frame(AV_PIX_FMT_RGBAF16LE, 32, 32), *d = tu_frame(AV_PIX_FMT_RGBAF16LE, 32, 32);
    CHECK(vkcu_frame_metrics_compute(c, d, &m, err, sizeof(err)) == VKCU_ERR_USAGE && strstr(err, "compare hashes"),
          "float layout: '%s'", err);
    av_frame_free(&a);
    av_frame_free(&b);
    av_frame_free(&c);
    av_frame_free(&d);
}

static void test_hash_lists(void)
{
    char err[256] = "";
    vkcu_hash_list l;
    const char *fm = "#format: frame checksums\n#version: 2\n#hash: CRC32\n#tb 0: 1/25\n#dimensions 0: 320x240\n"
                     "#stream#, dts,        pts, duration,     size, hash\n"
                     "0,          0,          0,        1,   115200, 0A1B2C3D\n"
                     "1,          0,          0,     1024,      418, 11112222\n"
                     "0,          1,          1,        1,   115200, deadbeef\n";
    CHECK(vkcu_hash_list_parse(fm, strlen(fm), "x.framemd5", &l, err, sizeof(err)) == 0, "framemd5: %s", err);
    CHECK(l.nb == 2 && l.algo == VKCU_HASH_CRC32 && l.algo_known && l.tb.num == 1 && l.tb.den == 25 && l.width == 320,
          "framemd5 header: %d entries, algo %d, tb %d/%d", l.nb, l.algo, l.tb.num, l.tb.den);
    CHECK(l.nb == 2 && !strcmp(l.entries[0].hash, "0a1b2c3d") && l.entries[1].pts == 1 && l.entries[1].size == 115200,
          "framemd5 entries (audio stream skipped, hex lower-cased)");
    vkcu_hash_list_free(&l);

    const char *js = "{\"type\":\"header\",\"input\":\"a.mp4\",\"hash\":\"XXH64\",\"tb\":\"1/30\",\"pix_fmt\":\"yuv420p\",\"width\":64,\"height\":48}\n"
                     "{\"frame\":0,\"pts\":0,\"duration\":1,\"size\":4608,\"hash\":\"0123456789abcdef\"}\n"
                     "{\"frame\":1,\"pts\":2,\"duration\":1,\"size\":4608,\"hash\":\"fedcba9876543210\"}\n";
    CHECK(vkcu_hash_list_parse(js, strlen(js), "x.jsonl", &l, err, sizeof(err)) == 0, "json: %s", err);
    CHECK(l.nb == 2 && l.algo == VKCU_HASH_XXH64 && l.tb.den == 30 && l.entries[1].pts == 2 &&
          !strcmp(l.entries[1].hash, "fedcba9876543210"), "json entries");
    vkcu_hash_list_free(&l);

    const char *bad = "#tb 0: 1/25\n0, 0, 0, 1, 10, abcdef01\n0, 1, 1, 1, ten, abcdef01\n";
    CHECK(vkcu_hash_list_parse(bad, strlen(bad), "bad.framemd5", &l, err, sizeof(err)) == VKCU_ERR_INPUT &&
          strstr(err, "bad.framemd5:3:"), "malformed line: '%s'", err);
}

/* The CPU metrics equal metrics_util.h's reference bit for bit, whatever the threads. */
static void test_reference_and_threads(void)
{
    static const int threads[] = { 1, 2, 3, 8 };
    int checked = 0;
    for (int c = 0; c < MU_NB_CASES; c++)
        for (int pat = 0; pat < MU_NB_PATTERNS; pat++) {
            const mu_case *k = &mu_cases[c];
            AVFrame *a = tu_frame(k->fmt, k->w, k->h), *b = tu_frame(k->fmt, k->w, k->h);
            mu_fill(a, b, pat, (uint64_t)(c * 10 + pat));
            vkcu_frame_metrics want, got;
            mu_reference(a, b, &want);
            for (int t = 0; t < 4; t++) {
                char err[256], why[300];
                int ret = vkcu_frame_metrics_compute_threads(a, b, threads[t], &got, err, sizeof(err));
                CHECK(ret == 0, "%s %dx%d %s: %s", av_get_pix_fmt_name(k->fmt), k->w, k->h, mu_pattern_names[pat], err);
                CHECK(ret != 0 || mu_same(&got, &want, why, sizeof(why)), "%s %dx%d %s, %d threads: %s",
                      av_get_pix_fmt_name(k->fmt), k->w, k->h, mu_pattern_names[pat], threads[t], why);
                checked++;
            }
            if (pat == MU_IDENTICAL)
                CHECK(got.max_diff == 0 && isinf(got.psnr_avg) && got.max_diff_x == 0 && got.max_diff_y == 0,
                      "%s %dx%d identical: max diff %d at (%d,%d), psnr %f", av_get_pix_fmt_name(k->fmt), k->w, k->h,
                      got.max_diff, got.max_diff_x, got.max_diff_y, got.psnr_avg);
            if (pat == MU_OPPOSITE && k->w >= 8 && k->h >= 8)
                CHECK(got.ssim[0] < 0.5, "%s %dx%d opposite: ssim %f", av_get_pix_fmt_name(k->fmt), k->w, k->h, got.ssim[0]);
            av_frame_free(&a);
            av_frame_free(&b);
        }
    CHECK(checked == MU_NB_CASES * MU_NB_PATTERNS * 4, "checked %d", checked);
}

int main(void)
{
    test_identical_and_offset();
    test_semiplanar(8);
    test_semiplanar(10);
    test_mismatch();
    test_reference_and_threads();
    test_hash_lists();
    if (tu_failures) {
        fprintf(stderr, "%d check(s) failed\n", tu_failures);
        return 1;
    }
    printf("compare: metrics and hash lists OK\n");
    return 0;
}
