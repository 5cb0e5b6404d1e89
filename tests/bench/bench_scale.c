/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scale speed on the GPU, timed with CUDA events on one stream: 4K -> 1080p
 * (NV12 and P010, every filter) and 1080p -> 720p, the input read through
 * texture objects as from the interop images, next to a device-to-device
 * copy of the same input frame (cudaMemcpy of its bytes) and the `copy`
 * operator's kernel. Target (issue 17): 4K -> 1080p lanczos at most 3x the
 * copy. Prints ms/frame and ratios. Built by `make`, run by tools/bench.sh.
 */
#include <libavutil/imgutils.h>

#include "test_gpu_util.h"
#include "test_scale_util.h"

static double time_op(const char *text, enum AVPixelFormat fmt, int w, int h, tg_frame *d, int frames, cudaStream_t st)
{
    vkcu_video_format in = ct_format(fmt, w, h, AVCOL_SPC_BT709, AVCOL_RANGE_MPEG), out;
    vkcu_chain chain;
    if (ct_op(&chain, text, &in, &out, 1) < 0)
        exit(1);
    vkcu_op *op = chain.ops[0];
    if (op->cls->init_gpu && op->cls->init_gpu(op) < 0)
        exit(1);
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    vkcu_gpu_frame o;
    for (int i = 0; i < 10; i++)
        op->cls->run_gpu(op, &d->g, &o, st);
    CK(cudaEventRecord(a, st));
    for (int i = 0; i < frames; i++)
        if (op->cls->run_gpu(op, &d->g, &o, st) < 0) {
            fprintf(stderr, "bench_scale: %s: run_gpu failed\n", text);
            exit(1);
        }
    CK(cudaEventRecord(b, st));
    CK(cudaEventSynchronize(b));
    CK(cudaGetLastError());
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    vkcu_chain_free(&chain);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms / frames;
}

static double time_memcpy(enum AVPixelFormat fmt, int w, int h, int frames, cudaStream_t st)
{
    size_t bytes = (size_t)av_image_get_buffer_size(fmt, w, h, 1);
    void *src, *dst;
    CK(cudaMalloc(&src, bytes));
    CK(cudaMalloc(&dst, bytes));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < 10; i++)
        CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, st));
    CK(cudaEventRecord(a, st));
    for (int i = 0; i < frames; i++)
        CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, st));
    CK(cudaEventRecord(b, st));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    cudaFree(src);
    cudaFree(dst);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms / frames;
}

static int over;

static void bench(enum AVPixelFormat fmt, int w, int h, int ow, int oh, int frames, int target)
{
    AVFrame *f = tu_frame(fmt, w, h);
    fill_picture(f, 7);
    tg_frame d;
    tg_upload(f, 1, &d);
    av_frame_free(&f);
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    double mc = time_memcpy(fmt, w, h, frames, st);
    double cp = time_op("copy", fmt, w, h, &d, frames, st);
    const char *name = av_get_pix_fmt_name(fmt);
    printf("%-8s %4dx%-4d device-to-device copy of the frame %8.4f ms/frame; copy operator %8.4f\n", name, w, h, mc, cp);
    static const char *filters[] = { "lanczos", "spline36", "bicubic", "bilinear" };
    for (int k = 0; k < 4; k++) {
        char text[96];
        snprintf(text, sizeof(text), "scale=w=%d:h=%d:filter=%s", ow, oh, filters[k]);
        double t = time_op(text, fmt, w, h, &d, frames, st);
        int check = target && k == 0;
        over += check && t > 3 * mc;
        printf("%-8s %4dx%-4d -> %4dx%-4d %-8s %8.4f ms/frame %8.1f fps  %.2fx the copy, %.2fx the copy operator%s\n",
               name, w, h, ow, oh, filters[k], t, 1000 / t, t / mc, t / cp,
               check ? (t > 3 * mc ? "  OVER the 3x target" : "  (target <= 3x)") : "");
    }
    tg_free(&d);
    cudaStreamDestroy(st);
}

int main(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
        printf("bench_scale: no CUDA device\n");
        return 77;
    }
    struct cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("bench_scale on %s\n", prop.name);
    bench(AV_PIX_FMT_NV12, 3840, 2160, 1920, 1080, 500, 1);
    bench(AV_PIX_FMT_P010, 3840, 2160, 1920, 1080, 500, 1);
    bench(AV_PIX_FMT_NV12, 1920, 1080, 1280, 720, 1000, 0);
    bench(AV_PIX_FMT_NV12, 1920, 1080, 3840, 2160, 300, 0);
    printf("bench_scale: %s\n", over ? "4K -> 1080p lanczos OVER 3x the copy" : "4K -> 1080p lanczos within 3x the copy");
    return 0;
}
