/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The VMAF scorer (src/regress/vmaf.c, vmaf_cuda.c) on synthetic moving
 * pictures (vmaf_util.h), in a build with libvmaf (exit 77 without):
 *
 * - libvmaf on worker threads (2, 3, and one per CPU) gives the scores of
 *   one thread, bit for bit, frame by frame and in the mean, at 8 and 10
 *   bits and an odd size: libvmaf hands each frame's spatial features to
 *   one worker and runs motion in order;
 * - the GPU asked for where it cannot run (no CUDA driver or device, or a
 *   libvmaf without its CUDA backend) is no error: the scorer runs on the
 *   CPU, its engine line says so and why, and the scores are the CPU's; on
 *   a machine where it can run, the GPU's scores are within the bound of
 *   tests/gpu.d/vmaf.sh (0.01 a frame, 0.001 in the mean) and printed;
 * - vkcu_vmaf_add_device: the formats it takes, and a CPU scorer refuses it;
 * - the CPU path's conversion of P010 (swscale, as vmaf.c does it) keeps
 *   every code value the device path's shift (kernels/vmaf_luma.h) gives.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <libswscale/swscale.h>

#include "core/vkcu.h"
#include "kernels/vmaf_luma.h"
#include "vmaf_util.h"

#define W 641
#define H 361
#define N 10

static int same_scores(const double *a, const double *b, int n)
{
    return !memcmp(a, b, (size_t)n * sizeof(*a));
}

static void check_threads(enum AVPixelFormat fmt)
{
    char err[512], engine[400];
    double one[N], many[N], mean_one, mean_many;
    const char *name = av_get_pix_fmt_name(fmt);
    vkcu_vmaf_params p = VKCU_VMAF_PARAMS_DEFAULT;
    p.threads = 1;
    int ret = tv_score(&p, fmt, W, H, N, one, &mean_one, engine, sizeof(engine), err, sizeof(err));
    CHECK(ret == 0, "%s, 1 thread: %s", name, err);
    if (ret < 0)
        return;
    CHECK(strstr(engine, "on the CPU, 1 thread") != NULL, "%s: engine line '%s'", name, engine);
    /* A pair that tests something: VMAF neither saturated nor zero, and not flat. */
    double lo = one[0], hi = one[0];
    for (int i = 1; i < N; i++)
        lo = fmin(lo, one[i]), hi = fmax(hi, one[i]);
    CHECK(lo > 20 && hi < 99 && hi > lo, "%s: scores %.3f..%.3f are not a useful test", name, lo, hi);
    int counts[] = { 2, 3, 0 };
    for (int k = 0; k < 3; k++) {
        p.threads = counts[k];
        ret = tv_score(&p, fmt, W, H, N, many, &mean_many, engine, sizeof(engine), err, sizeof(err));
        CHECK(ret == 0, "%s, threads %d: %s", name, counts[k], err);
        if (ret < 0)
            continue;
        if (counts[k] > 1) {
            char want[64];
            snprintf(want, sizeof(want), "on the CPU, %d threads", counts[k]);
            CHECK(strstr(engine, want) != NULL, "%s: engine line '%s', expected '%s'", name, engine, want);
        }
        int first = -1;
        for (int i = 0; i < N && first < 0; i++)
            if (memcmp(&one[i], &many[i], sizeof(double)))
                first = i;
        CHECK(same_scores(one, many, N) && !memcmp(&mean_one, &mean_many, sizeof(double)),
              "%s: threads %d (%s) differ from one thread: frame %d %.17g vs %.17g, mean %.17g vs %.17g", name,
              counts[k], engine, first, first >= 0 ? many[first] : 0, first >= 0 ? one[first] : 0, mean_many, mean_one);
    }
    printf("%s %dx%d, %d frames: mean %.6f on 1 thread, the same bit for bit on 2, 3 and every CPU\n", name, W, H, N,
           mean_one);
}

static void check_gpu_choice(void)
{
    char err[512], engine[400], cpu_engine[400];
    double cpu[N], gpu[N], mean_cpu, mean_gpu;
    vkcu_vmaf_params p = VKCU_VMAF_PARAMS_DEFAULT;
    int ret = tv_score(&p, AV_PIX_FMT_YUV420P, W, H, N, cpu, &mean_cpu, cpu_engine, sizeof(cpu_engine), err, sizeof(err));
    CHECK(ret == 0, "CPU: %s", err);
    CHECK(!strstr(cpu_engine, "not available"), "a CPU scorer asked for nothing else, yet says '%s'", cpu_engine);
    p.gpu = 1;
    ret = tv_score(&p, AV_PIX_FMT_YUV420P, W, H, N, gpu, &mean_gpu, engine, sizeof(engine), err, sizeof(err));
    CHECK(ret == 0, "GPU asked for: %s (a GPU that cannot run libvmaf's CUDA code must not be an error)", err);
    if (ret < 0)
        return;
    if (strstr(engine, "on the GPU")) {
        CHECK(vkcu_vmaf_cuda_built(), "on the GPU without libvmaf's CUDA backend: '%s'", engine);
        double worst = 0, sum = 0;
        for (int i = 0; i < N; i++)
            worst = fmax(worst, fabs(gpu[i] - cpu[i])), sum += fabs(gpu[i] - cpu[i]);
        printf("GPU (%s) against the CPU: largest per-frame difference %.6f, mean absolute %.6f, means %.6f / %.6f\n",
               engine, worst, sum / N, mean_gpu, mean_cpu);
        CHECK(worst <= 0.01 && sum / N <= 0.001, "GPU scores too far from the CPU's: largest %.6f, mean %.6f", worst,
              sum / N);
        return;
    }
    /* The fallback: the CPU, saying why, with the CPU's scores. */
    const char *why = strstr(engine, "(libvmaf's CUDA backend is not available: ");
    CHECK(why && strlen(why) > strlen("(libvmaf's CUDA backend is not available: )") + 5 && strstr(engine, "on the CPU"),
          "fallback engine line '%s' does not say the CPU and why", engine);
    if (!vkcu_vmaf_cuda_built())
        CHECK(strstr(engine, "built without it") != NULL, "no CUDA backend in this libvmaf, yet '%s'", engine);
    CHECK(same_scores(cpu, gpu, N) && mean_cpu == mean_gpu, "the fallback's scores differ from the CPU's");
    printf("GPU asked for, no GPU here: %s\n", engine);
}

static void check_device_entry(void)
{
    static const enum AVPixelFormat yes[] = { AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUV422P,
                                              AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUV420P10LE, AV_PIX_FMT_YUV420P12LE,
                                              AV_PIX_FMT_YUV444P16LE, AV_PIX_FMT_NV12, AV_PIX_FMT_NV16,
                                              AV_PIX_FMT_NV24, AV_PIX_FMT_P010LE, AV_PIX_FMT_P012LE,
                                              AV_PIX_FMT_P016LE, AV_PIX_FMT_P210LE, AV_PIX_FMT_GRAY8,
                                              AV_PIX_FMT_GRAY10LE, AV_PIX_FMT_YUVA420P };
    static const enum AVPixelFormat no[] = { AV_PIX_FMT_YUYV422, AV_PIX_FMT_UYVY422, AV_PIX_FMT_RGB24,
                                             AV_PIX_FMT_GBRP, AV_PIX_FMT_YUV420P9LE, AV_PIX_FMT_YUV420P14LE,
                                             AV_PIX_FMT_P010BE, AV_PIX_FMT_YUV420P10BE, AV_PIX_FMT_CUDA,
                                             AV_PIX_FMT_VULKAN, AV_PIX_FMT_PAL8, AV_PIX_FMT_Y210LE,
                                             AV_PIX_FMT_GRAYF32LE, AV_PIX_FMT_NONE };
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        CHECK(vkcu_vmaf_device_format_supported(yes[i]), "device frames of %s refused", av_get_pix_fmt_name(yes[i]));
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        CHECK(!vkcu_vmaf_device_format_supported(no[i]), "device frames of %s taken",
              no[i] == AV_PIX_FMT_NONE ? "none" : av_get_pix_fmt_name(no[i]));

    char err[512] = "";
    vkcu_vmaf *v = NULL;
    vkcu_vmaf_params p = VKCU_VMAF_PARAMS_DEFAULT;
    CHECK(vkcu_vmaf_open(&v, &p, err, sizeof(err)) == 0, "open: %s", err);
    if (!v)
        return;
    uint8_t plane[64] = { 0 }; /* never read: the scorer refuses first */
    vkcu_vmaf_device_frame f = { .data = { plane }, .pitch = { 8 }, .width = 8, .height = 8, .format = AV_PIX_FMT_NV12 };
    int ret = vkcu_vmaf_add_device(v, &f, &f, NULL, err, sizeof(err));
    CHECK(ret == VKCU_ERR_USAGE && strstr(err, "runs on the CPU"), "device frames to a CPU scorer: %d '%s'", ret, err);
    vkcu_vmaf_close(&v);
    CHECK(v == NULL, "close left the pointer");
}

/* Every 10-bit code value through swscale's P010 -> yuv420p10le (bicubic,
 * as vmaf.c converts) against vkcu_msb_to_lsb16. */
static void check_p010_conversion(void)
{
    int w = 64, h = 32; /* 2048 luma samples: every code value twice */
    AVFrame *in = tu_frame(AV_PIX_FMT_P010LE, w, h), *out = tu_frame(AV_PIX_FMT_YUV420P10LE, w, h);
    struct SwsContext *sws = sws_getContext(w, h, AV_PIX_FMT_P010LE, w, h, AV_PIX_FMT_YUV420P10LE, SWS_BICUBIC, NULL,
                                            NULL, NULL);
    CHECK(in && out && sws, "cannot set up the conversion");
    if (!in || !out || !sws)
        goto done;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            tu_set(in, 0, x, y, (y * w + x) % 1024);
    for (int c = 1; c < 3; c++)
        for (int y = 0; y < h / 2; y++)
            for (int x = 0; x < w / 2; x++)
                tu_set(in, c, x, y, 512);
    sws_scale(sws, (const uint8_t *const *)in->data, in->linesize, 0, h, out->data, out->linesize);
    int bad = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint16_t stored = ((const uint16_t *)(in->data[0] + y * in->linesize[0]))[x];
            int want = vkcu_msb_to_lsb16(stored, 6), got = tu_get(out, 0, x, y);
            if (got != want && bad++ < 3)
                fprintf(stderr, "P010 luma %d: swscale gives %d, the device path %d\n", stored >> 6, got, want);
        }
    CHECK(!bad, "%d of %d P010 luma samples convert unlike the device path's shift", bad, w * h);
done:
    sws_freeContext(sws);
    av_frame_free(&in);
    av_frame_free(&out);
}

int main(void)
{
    check_p010_conversion();
    if (!vkcu_vmaf_available()) {
        if (tu_failures)
            return 1;
        printf("this build has no libvmaf (docs/regression.md, VMAF)\n");
        return 77;
    }
    check_threads(AV_PIX_FMT_YUV420P);
    check_threads(AV_PIX_FMT_YUV420P10LE);
    check_gpu_choice();
    check_device_entry();
    if (tu_failures)
        printf("%d check(s) failed\n", tu_failures);
    return tu_failures ? 1 : 0;
}
