/*
 * Benchmark (not run by make test): 4K NV12 -> RGBA with convert's run_gpu
 * against a device-to-device cudaMemcpy of the same output bytes, timed
 * with CUDA events over many iterations; prints both and their ratio
 * (target: ratio <= 2). Inputs as pitch-linear memory and as textures.
 *
 * Build (after make BUILD=build):
 *   cc -O2 -std=c11 -D_GNU_SOURCE -Isrc -Ikernels -I/usr/local/cuda/include \
 *      $(PKG_CONFIG_PATH=... pkg-config --cflags libavutil) tests/bench/bench_convert.c \
 *      build/libvkcu.a $(... pkg-config --static --libs libavformat libavcodec libswscale libavutil) \
 *      -L/usr/local/cuda/lib64 -lcudart_static -lzimg -lstdc++ -ldl -lrt -lm -pthread -o build/bench_convert
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"
#include "vkcu.h"

#define CK(call)                                                                          \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) {                                                          \
            printf("%s: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
            return 1;                                                                     \
        }                                                                                 \
    } while (0)

int main(int argc, char **argv)
{
    const int w = 3840, h = 2160, iters = argc > 1 ? atoi(argv[1]) : 500;
    const char *fmt = argc > 2 ? argv[2] : "rgba";
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
        printf("bench_convert: no CUDA device\n");
        return 77;
    }
    vkcu_video_format inf;
    memset(&inf, 0, sizeof(inf));
    inf.pix_fmt = AV_PIX_FMT_NV12;
    inf.width = w, inf.height = h;
    inf.matrix = AVCOL_SPC_BT709, inf.range = AVCOL_RANGE_MPEG, inf.chroma_loc = AVCHROMA_LOC_LEFT;
    char text[64], err[256];
    snprintf(text, sizeof(text), "convert=format=%s", fmt);
    vkcu_chain ch;
    vkcu_video_format outf;
    if (vkcu_chain_parse(text, &ch, err, sizeof(err)) < 0 || vkcu_chain_init(&ch, &inf, &outf, err, sizeof(err)) < 0) {
        printf("bench_convert: %s\n", err);
        return 1;
    }
    vkcu_op *op = ch.ops[0];

    /* input NV12 (random-ish bytes), pitch-linear */
    vkcu_gpu_frame in;
    memset(&in, 0, sizeof(in));
    in.fmt = inf;
    in.nb_planes = 2;
    void *y, *uv;
    CK(cudaMallocPitch(&y, &in.plane[0].pitch, w, h));
    CK(cudaMallocPitch(&uv, &in.plane[1].pitch, w, h / 2));
    CK(cudaMemset2D(y, in.plane[0].pitch, 100, w, h));
    CK(cudaMemset2D(uv, in.plane[1].pitch, 140, w, h / 2));
    in.plane[0].ptr = y, in.plane[0].width = w, in.plane[0].height = h;
    in.plane[1].ptr = uv, in.plane[1].width = w / 2, in.plane[1].height = h / 2;

    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    if (op->cls->init_gpu(op) < 0)
        return 1;
    vkcu_gpu_frame out;
    memset(&out, 0, sizeof(out));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int i = 0; i < 20; i++) /* warm-up */
        op->cls->run_gpu(op, &in, &out, st);
    CK(cudaEventRecord(e0, st));
    for (int i = 0; i < iters; i++)
        op->cls->run_gpu(op, &in, &out, st);
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    float ms_conv = 0;
    CK(cudaEventElapsedTime(&ms_conv, e0, e1));

    /* device-to-device copy of the same output bytes */
    size_t bytes = out.plane[0].pitch * (size_t)h;
    void *a, *b;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    for (int i = 0; i < 20; i++)
        CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, st));
    CK(cudaEventRecord(e0, st));
    for (int i = 0; i < iters; i++)
        CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, st));
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    float ms_copy = 0;
    CK(cudaEventElapsedTime(&ms_copy, e0, e1));

    double c = ms_conv / iters, m = ms_copy / iters;
    printf("bench_convert: 4K NV12 -> %s: %.1f us/frame (%.0f fps); D2D copy of %.1f MB: %.1f us; ratio %.2f (target <= 2)\n",
           fmt, c * 1000, 1000.0 / c, bytes / 1e6, m * 1000, c / m);
    cudaFree(a);
    cudaFree(b);
    cudaFree(y);
    cudaFree(uv);
    vkcu_chain_free(&ch);
    cudaStreamDestroy(st);
    return 0;
}
