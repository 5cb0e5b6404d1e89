/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * compare's frame metrics on the GPU (src/gpu/metrics.c, kernels/metrics.cu)
 * against the CPU's (src/regress/metrics.c) and metrics_util.h's plain
 * reference, bit for bit: every layout and size of metrics_util.h (1x1 to
 * 641x361, 8 to 16 bits, 4:2:0/4:2:2/4:4:4, grey, alpha, planar RGB) in four
 * patterns (identical, opposite, noisy, unrelated), plus a 3840x2160 pair
 * and one with a single differing sample at the far corner (its place must
 * come back exactly). The pictures are uploaded as CUDA frames of their own
 * (vkcu_frame_cuda_upload), as the device pool hands them to compare.
 * Also: a host frame or a frame of another size is not taken (the caller
 * falls back to the CPU), and vkcu_frame_cuda_download gives back the bytes
 * uploaded.
 * Exit: 0 pass, 1 fail, 77 without a CUDA device.
 */
#include <stdio.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include <libavutil/imgutils.h>

#include "gpu/gpu.h"
#include "gpu/metrics.h"
#include "metrics_util.h"
#include "regress/compare.h"
#include "regress/compare_priv.h"

static int pair_on_gpu(vkcu_gpu_metrics *g, const AVFrame *a, const AVFrame *b, vkcu_frame_metrics *m, char *why,
                       size_t n)
{
    AVFrame *da = NULL, *db = NULL;
    vkcu_plane_stats st[4];
    int ret = vkcu_frame_cuda_upload(a, 0, &da, why, n);
    if (ret >= 0)
        ret = vkcu_frame_cuda_upload(b, 0, &db, why, n);
    if (ret >= 0 && !vkcu_gpu_metrics_takes(g, da, db)) {
        snprintf(why, n, "not taken");
        ret = -1;
    }
    if (ret >= 0)
        ret = vkcu_gpu_metrics_run(g, da, db, st, why, n);
    if (ret >= 0)
        vkcu_frame_metrics_finish(a, st, m);
    av_frame_free(&da);
    av_frame_free(&db);
    return ret;
}

static void check_pair(vkcu_gpu_metrics *g, const AVFrame *a, const AVFrame *b, const char *name)
{
    vkcu_frame_metrics gpu, cpu, ref;
    char why[300], err[256];
    if (pair_on_gpu(g, a, b, &gpu, why, sizeof(why)) < 0) {
        CHECK(0, "%s: GPU: %s", name, why);
        return;
    }
    CHECK(vkcu_frame_metrics_compute_threads(a, b, 2, &cpu, err, sizeof(err)) == 0, "%s: CPU: %s", name, err);
    mu_reference(a, b, &ref);
    CHECK(mu_same(&gpu, &cpu, why, sizeof(why)), "%s: GPU against CPU: %s", name, why);
    CHECK(mu_same(&gpu, &ref, why, sizeof(why)), "%s: GPU against the reference: %s", name, why);
}

int main(void)
{
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev < 1) {
        printf("test_metrics_gpu: skipped: no CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 77;
    }
    char err[256];
    vkcu_gpu_metrics *g = NULL;
    if (vkcu_gpu_metrics_open(0, &g, err, sizeof(err)) < 0) {
        printf("FAIL open: %s\n", err);
        return 1;
    }
    int pairs = 0;
    for (int c = 0; c < MU_NB_CASES; c++)
        for (int pat = 0; pat < MU_NB_PATTERNS; pat++) {
            const mu_case *k = &mu_cases[c];
            AVFrame *a = tu_frame(k->fmt, k->w, k->h), *b = tu_frame(k->fmt, k->w, k->h);
            char name[128];
            snprintf(name, sizeof(name), "%s %dx%d %s", av_get_pix_fmt_name(k->fmt), k->w, k->h, mu_pattern_names[pat]);
            mu_fill(a, b, pat, (uint64_t)(c * 10 + pat));
            check_pair(g, a, b, name);
            pairs++;
            av_frame_free(&a);
            av_frame_free(&b);
        }

    /* 4K, 8 and 10 bits; then one sample off at the last place of a plane. */
    static const enum AVPixelFormat big[] = { AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV420P10LE };
    for (int i = 0; i < 2; i++) {
        AVFrame *a = tu_frame(big[i], 3840, 2160), *b = tu_frame(big[i], 3840, 2160);
        mu_fill(a, b, MU_NOISE, 77 + i);
        check_pair(g, a, b, i ? "4K 10-bit noise" : "4K 8-bit noise");
        av_frame_copy(b, a);
        mu_set(b, 2, 1919, 1079, mu_get(a, 2, 1919, 1079) ^ 1);
        vkcu_frame_metrics m;
        char why[300];
        CHECK(pair_on_gpu(g, a, b, &m, why, sizeof(why)) == 0 && m.max_diff == 1 && m.max_diff_comp == 2 &&
                  m.max_diff_x == 1919 && m.max_diff_y == 1079,
              "4K corner: max diff %d in %d at (%d,%d) %s", m.max_diff, m.max_diff_comp, m.max_diff_x, m.max_diff_y, why);
        pairs += 2;
        av_frame_free(&a);
        av_frame_free(&b);
    }

    /* What the GPU does not take, and the way back to the host. */
    AVFrame *a = tu_frame(AV_PIX_FMT_YUV420P, 64, 48), *b = tu_frame(AV_PIX_FMT_YUV420P, 64, 32), *da = NULL, *db = NULL,
            *back = NULL;
    mu_fill(a, a, MU_IDENTICAL, 5);
    CHECK(vkcu_frame_cuda_upload(a, 0, &da, err, sizeof(err)) == 0 && vkcu_frame_cuda_upload(b, 0, &db, err, sizeof(err)) == 0,
          "upload: %s", err);
    CHECK(da && vkcu_frame_cuda_device(da) == 0 && vkcu_frame_cuda_device(a) == -1, "the upload is a CUDA frame");
    CHECK(da && db && !vkcu_gpu_metrics_takes(g, da, db), "frames of two sizes taken");
    CHECK(da && !vkcu_gpu_metrics_takes(g, da, a), "a host frame taken");
    int64_t bytes = 0;
    CHECK(da && vkcu_frame_cuda_download(da, &back, &bytes, err, sizeof(err)) == 0, "download: %s", err);
    int same = back && vkcu_frame_cuda_device(back) == -1 && bytes == 64 * 48 * 3 / 2;
    for (int p = 0; p < 3 && same; p++)
        for (int y = 0; y < (p ? 24 : 48) && same; y++)
            same = !memcmp(a->data[p] + y * a->linesize[p], back->data[p] + y * back->linesize[p], p ? 32 : 64);
    CHECK(same, "the download gives the uploaded bytes (%lld bytes counted)", (long long)bytes);
    av_frame_free(&a);
    av_frame_free(&b);
    av_frame_free(&da);
    av_frame_free(&db);
    av_frame_free(&back);

    int64_t measured = vkcu_gpu_metrics_pairs(g);
    vkcu_gpu_metrics_close(&g);
    CHECK(g == NULL && measured == pairs, "pairs measured %lld of %d", (long long)measured, pairs);
    if (tu_failures) {
        printf("%d check(s) failed\n", tu_failures);
        return 1;
    }
    printf("GPU metrics = CPU = reference, bit for bit: %d pairs (%d layouts x 4 patterns, 4K 8/10-bit)\n", pairs,
           MU_NB_CASES);
    return 0;
}
