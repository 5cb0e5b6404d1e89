/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * denoise speed on the GPU, timed with CUDA events on one stream: tnr at 4K
 * (NV12 and P010, input read through texture objects as from the interop
 * images) next to a device-to-device copy of the same bytes, and nlm at
 * 1080p NV12 at the default radii and at FFmpeg nlmeans_vulkan's default
 * radii (p=7 r=15, i.e. patch=3 search=7, spatial only). Prints fps.
 * Not run by `make test`. Build and run (after `make`):
 *
 *   eval "$(sed -n 's/^\(FFMPEG_PKG_CONFIG_PATH\) := /\1=/p' build/deps.mk)"
 *   cc -O2 -std=c11 -D_GNU_SOURCE -Isrc -I. -Itests/unit -I/usr/local/cuda/include \
 *      $(PKG_CONFIG_PATH=$FFMPEG_PKG_CONFIG_PATH pkg-config --cflags libavutil) \
 *      -o build/bench_denoise tests/bench/bench_denoise.c build/libvkcu.a \
 *      $(PKG_CONFIG_PATH=$FFMPEG_PKG_CONFIG_PATH pkg-config --static --libs libavformat libavcodec libswscale libavutil) \
 *      -L/usr/local/cuda/lib64 -lcudart_static -lzimg -lstdc++ -ldl -lrt -lm -pthread
 *   build/bench_denoise
 */
#include <libavutil/imgutils.h>

#include "test_denoise_util.h"
#include "test_gpu_util.h"

/* Noisy test picture uploaded into CUDA arrays with texture objects. */
static void make_input(enum AVPixelFormat fmt, int w, int h, tg_frame *d)
{
    AVFrame *f = tu_frame(fmt, w, h);
    int depth = av_pix_fmt_desc_get(fmt)->comp[0].depth;
    uint64_t s = 99;
    for (int c = 0; c < 3; c++) {
        int cw, ch;
        dt_comp_size(f, c, &cw, &ch);
        for (int y = 0; y < ch; y++)
            for (int x = 0; x < cw; x++) {
                double v = (128 + 80 * sin(x * 0.01 + c) * cos(y * 0.013) + 8 * dt_gauss(&s)) * (1 << (depth - 8));
                tu_set(f, c, x, y, (int)fmin(fmax(v, 0), (1 << depth) - 1));
            }
    }
    tg_upload(f, 1, d);
    av_frame_free(&f);
}

static void bench_op(const char *text, enum AVPixelFormat fmt, int w, int h, int frames)
{
    tg_frame d;
    make_input(fmt, w, h, &d);
    vkcu_chain chain;
    if (dt_make(&chain, text, fmt, w, h, 1) < 0)
        exit(1);
    vkcu_op *op = chain.ops[0];
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    vkcu_gpu_frame out;
    for (int i = 0; i < 10; i++) /* warm-up: allocation, history, look-ahead */
        op->cls->run_gpu(op, &d.g, &out, st);
    CK(cudaStreamSynchronize(st));
    CK(cudaEventRecord(a, st));
    for (int i = 0; i < frames; i++) {
        int ret = op->cls->run_gpu(op, &d.g, &out, st);
        if (ret < 0 && ret != AVERROR(EAGAIN)) {
            fprintf(stderr, "bench_denoise: run_gpu failed: %d\n", ret);
            exit(1);
        }
    }
    CK(cudaEventRecord(b, st));
    CK(cudaEventSynchronize(b));
    CK(cudaGetLastError());
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    printf("%-62s %-8s %4dx%-4d %9.1f fps  (%.3f ms/frame)\n", text, av_get_pix_fmt_name(fmt), w, h,
           frames * 1000.0 / ms, ms / frames);

    if (strstr(text, "tnr")) {
        /* reference: a device-to-device copy of the same bytes (read + write) */
        void *src, *dst;
        double bytes = av_image_get_buffer_size(fmt, w, h, 1);
        CK(cudaMalloc(&src, (size_t)bytes));
        CK(cudaMalloc(&dst, (size_t)bytes));
        CK(cudaEventRecord(a, st));
        for (int i = 0; i < frames; i++)
            CK(cudaMemcpyAsync(dst, src, (size_t)bytes, cudaMemcpyDeviceToDevice, st));
        CK(cudaEventRecord(b, st));
        CK(cudaEventSynchronize(b));
        CK(cudaEventElapsedTime(&ms, a, b));
        printf("%-62s %-8s %4dx%-4d %9.1f fps  (%.3f ms/frame)\n", "  device-to-device copy of the frame",
               av_get_pix_fmt_name(fmt), w, h, frames * 1000.0 / ms, ms / frames);
        cudaFree(src);
        cudaFree(dst);
    }
    vkcu_chain_free(&chain);
    tg_free(&d);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    cudaStreamDestroy(st);
}

int main(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
        printf("bench_denoise: no CUDA device\n");
        return 77;
    }
    struct cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("bench_denoise on %s\n", prop.name);
    bench_op("denoise=mode=tnr:sigma=5", AV_PIX_FMT_NV12, 3840, 2160, 1000);
    bench_op("denoise=mode=tnr:sigma=5", AV_PIX_FMT_P010, 3840, 2160, 1000);
    bench_op("denoise=mode=nlm:sigma=5:patch=3:search=7:tradius=0", AV_PIX_FMT_NV12, 1920, 1080, 200);
    bench_op("denoise=mode=nlm:sigma=5", AV_PIX_FMT_NV12, 1920, 1080, 200);
    bench_op("denoise=mode=nlm:sigma=5:patch=2:search=7:tradius=1", AV_PIX_FMT_NV12, 1920, 1080, 100);
    bench_op("denoise=mode=nlm:sigma=5", AV_PIX_FMT_P010, 1920, 1080, 200);
    printf("targets: tnr 4K >= 1000 fps; nlm 1080p >= 185 fps (5x nlmeans_vulkan s=4 p=7 r=15)\n");
    return 0;
}
