/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * VMAF on libvmaf's CUDA backend (src/regress/vmaf_cuda.c) with frames in
 * device memory, the entry point the GPU pairing of compare uses
 * (vkcu_vmaf_add_device). On an NVIDIA GPU, in a build whose libvmaf has
 * its CUDA backend (exit 77 otherwise), 1920x1080, moving pictures
 * (vmaf_util.h):
 *
 * - device frames give exactly the scores of the same frames given as host
 *   frames to a GPU scorer (libvmaf uploads their luma into the same
 *   pictures): yuv420p, NV12 (its luma plane as it is), yuv420p10le and
 *   P010 (shifted down on the GPU): NV12 = yuv420p and P010 = yuv420p10le;
 * - the frames are written on a non-blocking stream just before each call
 *   (cleared, then filled), with no synchronisation: the scores are still
 *   exact, so libvmaf's kernels wait for the caller's stream;
 * - against the CPU's scores: within 0.01 a frame and 0.001 in the mean
 *   (the bound of tests/gpu.d/vmaf.sh), printed;
 * - one scorer takes one kind: a host pair after device pairs is refused,
 *   and so is a format vkcu_vmaf_device_format_supported refuses.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cuda_runtime_api.h>

#include "core/vkcu.h"
#include "vmaf_util.h"

#define W 1920
#define H 1080
#define N 8

#define CK(call)                                                                                        \
    do {                                                                                                \
        cudaError_t e_ = (call);                                                                        \
        if (e_ != cudaSuccess) {                                                                        \
            printf("FAIL %s: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__);         \
            exit(1);                                                                                    \
        }                                                                                               \
    } while (0)

/* One frame's planes in device memory, refilled from host pictures on a stream. */
typedef struct dev_frame {
    void *mem[3];
    size_t pitch[3];
    vkcu_vmaf_device_frame f;
} dev_frame;

static void dev_alloc(dev_frame *d, enum AVPixelFormat fmt)
{
    memset(d, 0, sizeof(*d));
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(fmt);
    int planes = av_pix_fmt_count_planes(fmt), bytes = desc->comp[0].depth > 8 ? 2 : 1;
    for (int p = 0; p < planes; p++) {
        /* semi-planar chroma: a row of pairs, as wide as luma */
        int cw = p ? (planes == 2 ? W : AV_CEIL_RSHIFT(W, desc->log2_chroma_w)) : W;
        int ch = p ? AV_CEIL_RSHIFT(H, desc->log2_chroma_h) : H;
        CK(cudaMallocPitch(&d->mem[p], &d->pitch[p], (size_t)cw * bytes, ch));
        d->f.data[p] = d->mem[p];
        d->f.pitch[p] = d->pitch[p];
    }
    d->f.width = W;
    d->f.height = H;
    d->f.format = fmt;
}

/* Clears the luma plane, then writes host picture f's luma over it, on stream: no wait. */
static void dev_fill(dev_frame *d, const AVFrame *f, cudaStream_t stream)
{
    int bytes = av_pix_fmt_desc_get(f->format)->comp[0].depth > 8 ? 2 : 1;
    CK(cudaMemset2DAsync(d->mem[0], d->pitch[0], 0, (size_t)W * bytes, H, stream));
    CK(cudaMemcpy2DAsync(d->mem[0], d->pitch[0], f->data[0], f->linesize[0], (size_t)W * bytes, H,
                         cudaMemcpyHostToDevice, stream));
}

static void dev_free(dev_frame *d)
{
    for (int p = 0; p < 3; p++)
        if (d->mem[p])
            cudaFree(d->mem[p]);
}

/* Scores the run as device frames of `fmt` on a GPU scorer. */
static int score_device(enum AVPixelFormat fmt, double *scores, double *mean, char *err, size_t errlen)
{
    vkcu_vmaf_params p = VKCU_VMAF_PARAMS_DEFAULT;
    p.gpu = 1;
    vkcu_vmaf *v = NULL;
    int ret = vkcu_vmaf_open(&v, &p, err, errlen);
    if (ret < 0)
        return ret;
    if (!vkcu_vmaf_on_gpu(v)) {
        snprintf(err, errlen, "not on the GPU: %s", vkcu_vmaf_engine(v));
        vkcu_vmaf_close(&v);
        return -1;
    }
    cudaStream_t stream;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    /* Two sets of frames, alternated, as a decoder's pool would be. */
    dev_frame ref[2], dist[2];
    for (int k = 0; k < 2; k++)
        dev_alloc(&ref[k], fmt), dev_alloc(&dist[k], fmt);
    /* Pinned host copies, so that the uploads are asynchronous like a kernel's writes. */
    AVFrame *hr[N], *hd[N];
    for (int t = 0; t < N; t++) {
        hr[t] = tv_picture(fmt, W, H, t, 0);
        hd[t] = tv_picture(fmt, W, H, t, 1);
        CK(cudaHostRegister(hr[t]->data[0], (size_t)hr[t]->linesize[0] * H, cudaHostRegisterDefault));
        CK(cudaHostRegister(hd[t]->data[0], (size_t)hd[t]->linesize[0] * H, cudaHostRegisterDefault));
    }
    for (int t = 0; t < N && ret >= 0; t++) {
        dev_fill(&ref[t & 1], hr[t], stream);
        dev_fill(&dist[t & 1], hd[t], stream);
        ret = vkcu_vmaf_add_device(v, &ref[t & 1].f, &dist[t & 1].f, stream, err, errlen);
    }
    if (ret >= 0) {
        /* One kind per scorer. */
        char e2[256];
        int r2 = vkcu_vmaf_add(v, hr[0], hd[0], e2, sizeof(e2));
        CHECK(r2 == VKCU_ERR_USAGE && strstr(e2, "one scorer takes one kind"), "host pair after device pairs: %d '%s'",
              r2, e2);
    }
    double *s = NULL;
    int64_t got = 0;
    if (ret >= 0 && (ret = vkcu_vmaf_finish(v, &s, &got, mean, err, errlen)) >= 0) {
        CHECK(got == N, "%lld scores for %d pairs", (long long)got, N);
        if (got == N)
            memcpy(scores, s, N * sizeof(*s));
    }
    free(s);
    vkcu_vmaf_close(&v);
    CK(cudaStreamSynchronize(stream));
    for (int t = 0; t < N; t++) {
        cudaHostUnregister(hr[t]->data[0]);
        cudaHostUnregister(hd[t]->data[0]);
        av_frame_free(&hr[t]);
        av_frame_free(&hd[t]);
    }
    for (int k = 0; k < 2; k++)
        dev_free(&ref[k]), dev_free(&dist[k]);
    cudaStreamDestroy(stream);
    return ret;
}

static void report_diff(const char *what, const double *a, const double *b, double ma, double mb, double frame_bound,
                        double mean_bound)
{
    double worst = 0, sum = 0;
    for (int i = 0; i < N; i++)
        worst = fmax(worst, fabs(a[i] - b[i])), sum += fabs(a[i] - b[i]);
    printf("%s: largest per-frame difference %.6f, mean absolute %.6f (means %.6f, %.6f)\n", what, worst, sum / N, ma,
           mb);
    CHECK(worst <= frame_bound && sum / N <= mean_bound, "%s: beyond %g a frame / %g in the mean", what, frame_bound,
          mean_bound);
}

int main(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
        printf("no CUDA device\n");
        return 77;
    }
    if (!vkcu_vmaf_cuda_built()) {
        printf("this build's libvmaf has no CUDA backend (tools/deps.sh builds it where nvcc is)\n");
        return 77;
    }
    char err[512], engine[400];
    static const enum AVPixelFormat planar[2] = { AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV420P10LE };
    static const enum AVPixelFormat semi[2] = { AV_PIX_FMT_NV12, AV_PIX_FMT_P010LE };
    for (int k = 0; k < 2; k++) {
        const char *name = av_get_pix_fmt_name(planar[k]);
        double cpu[N], host_gpu[N], dev[N], dev_semi[N], m_cpu, m_host, m_dev, m_semi;
        vkcu_vmaf_params p = VKCU_VMAF_PARAMS_DEFAULT;
        int ret = tv_score(&p, planar[k], W, H, N, cpu, &m_cpu, NULL, 0, err, sizeof(err));
        CHECK(ret == 0, "%s on the CPU: %s", name, err);
        p.gpu = 1;
        ret = ret < 0 ? ret : tv_score(&p, planar[k], W, H, N, host_gpu, &m_host, engine, sizeof(engine), err, sizeof(err));
        CHECK(ret == 0 && strstr(engine, "on the GPU"), "%s, host frames on the GPU: %s (%s)", name, ret ? err : "",
              engine);
        if (ret < 0)
            continue;
        ret = score_device(planar[k], dev, &m_dev, err, sizeof(err));
        CHECK(ret == 0, "%s, device frames: %s", name, err);
        if (ret == 0)
            CHECK(!memcmp(dev, host_gpu, sizeof(dev)), "%s: device frames score unlike the same host frames on the GPU "
                  "(first %.6f vs %.6f)", name, dev[0], host_gpu[0]);
        ret = score_device(semi[k], dev_semi, &m_semi, err, sizeof(err));
        CHECK(ret == 0, "%s, device frames: %s", av_get_pix_fmt_name(semi[k]), err);
        if (ret == 0)
            CHECK(!memcmp(dev_semi, host_gpu, sizeof(dev)), "%s device frames score unlike %s (first %.6f vs %.6f)",
                  av_get_pix_fmt_name(semi[k]), name, dev_semi[0], host_gpu[0]);
        char what[600];
        snprintf(what, sizeof(what), "%s %dx%d, GPU (%s) against the CPU", name, W, H, engine);
        report_diff(what, host_gpu, cpu, m_host, m_cpu, 0.01, 0.001);
    }
    /* A format the device path does not take. */
    vkcu_vmaf *v = NULL;
    vkcu_vmaf_params p = VKCU_VMAF_PARAMS_DEFAULT;
    p.gpu = 1;
    if (vkcu_vmaf_open(&v, &p, err, sizeof(err)) == 0 && vkcu_vmaf_on_gpu(v)) {
        vkcu_vmaf_device_frame f = { .data = { (void *)16 }, .pitch = { 4096 }, .width = 64, .height = 64,
                                     .format = AV_PIX_FMT_YUYV422 };
        int ret = vkcu_vmaf_add_device(v, &f, &f, NULL, err, sizeof(err));
        CHECK(ret == VKCU_ERR_USAGE && strstr(err, "yuyv422"), "YUYV device frames: %d '%s'", ret, err);
    }
    vkcu_vmaf_close(&v);
    if (tu_failures)
        printf("%d check(s) failed\n", tu_failures);
    return tu_failures ? 1 : 0;
}
