/*
 * denoise speed on the GPU, timed with CUDA events on one stream: tnr at 4K
 * (NV12 and P010, input read through texture objects as from the interop
 * images) next to a device-to-device copy of the same bytes, and nlm at
 * 1080p NV12 at the default radii and at FFmpeg nlmeans_vulkan's default
 * radii (p=7 r=15, i.e. patch=3 search=7, spatial only). Prints fps.
 * Not run by `make test`. Build and run (after `make`):
 *
 *   eval "$(sed -n 's/^\(FFMPEG_PKG_CONFIG_PATH\) := /\1=/p' build/deps.mk)"
 *   cc -O2 -std=c11 -D_GNU_SOURCE -Isrc -Ikernels -Itests/unit -I/usr/local/cuda/include \
 *      $(PKG_CONFIG_PATH=$FFMPEG_PKG_CONFIG_PATH pkg-config --cflags libavutil) \
 *      -o build/bench_denoise tests/bench/bench_denoise.c build/libvkcu.a \
 *      $(PKG_CONFIG_PATH=$FFMPEG_PKG_CONFIG_PATH pkg-config --static --libs libavformat libavcodec libswscale libavutil) \
 *      -L/usr/local/cuda/lib64 -lcudart_static -lzimg -lstdc++ -ldl -lrt -lm -pthread
 *   build/bench_denoise
 */
#include <cuda_runtime_api.h>

#include "test_denoise_util.h"

#define CK(call)                                                                                     \
    do {                                                                                             \
        cudaError_t e_ = (call);                                                                     \
        if (e_ != cudaSuccess) {                                                                     \
            fprintf(stderr, "bench_denoise: %s: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)

typedef struct dev_frame {
    vkcu_gpu_frame g;
    cudaArray_t arr[4];
} dev_frame;

/* Noisy test picture uploaded into CUDA arrays with texture objects. */
static void make_input(enum AVPixelFormat fmt, int w, int h, dev_frame *d)
{
    AVFrame *f = dt_frame(fmt, w, h);
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(fmt);
    int depth = desc->comp[0].depth, bytes = depth > 8 ? 2 : 1;
    uint64_t s = 99;
    for (int c = 0; c < 3; c++) {
        int cw, ch;
        dt_comp_size(f, c, &cw, &ch);
        for (int y = 0; y < ch; y++)
            for (int x = 0; x < cw; x++) {
                double v = (128 + 80 * sin(x * 0.01 + c) * cos(y * 0.013) + 8 * dt_gauss(&s)) * (1 << (depth - 8));
                dt_set(f, c, x, y, (int)fmin(fmax(v, 0), (1 << depth) - 1));
            }
    }
    memset(d, 0, sizeof(*d));
    d->g.fmt.pix_fmt = fmt;
    d->g.fmt.width = w;
    d->g.fmt.height = h;
    d->g.nb_planes = av_pix_fmt_count_planes(fmt);
    for (int p = 0; p < d->g.nb_planes; p++) {
        int ncomp = (p == 1 && d->g.nb_planes == 2) ? 2 : 1;
        int pw = p ? AV_CEIL_RSHIFT(w, desc->log2_chroma_w) : w;
        int ph = p ? AV_CEIL_RSHIFT(h, desc->log2_chroma_h) : h;
        struct cudaChannelFormatDesc cd =
            cudaCreateChannelDesc(8 * bytes, ncomp > 1 ? 8 * bytes : 0, 0, 0, cudaChannelFormatKindUnsigned);
        CK(cudaMallocArray(&d->arr[p], &cd, pw, ph, cudaArraySurfaceLoadStore));
        CK(cudaMemcpy2DToArray(d->arr[p], 0, 0, f->data[p], f->linesize[p], (size_t)pw * ncomp * bytes, ph,
                               cudaMemcpyHostToDevice));
        struct cudaResourceDesc rd;
        memset(&rd, 0, sizeof(rd));
        rd.resType = cudaResourceTypeArray;
        rd.res.array.array = d->arr[p];
        struct cudaTextureDesc td;
        memset(&td, 0, sizeof(td));
        td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
        td.filterMode = cudaFilterModePoint;
        td.readMode = cudaReadModeElementType;
        cudaTextureObject_t tex;
        CK(cudaCreateTextureObject(&tex, &rd, &td, NULL));
        d->g.plane[p].tex = tex;
        d->g.plane[p].width = pw;
        d->g.plane[p].height = ph;
    }
    av_frame_free(&f);
}

static double frame_bytes(const dev_frame *d)
{
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(d->g.fmt.pix_fmt);
    int bytes = desc->comp[0].depth > 8 ? 2 : 1;
    double b = 0;
    for (int p = 0; p < d->g.nb_planes; p++)
        b += (double)d->g.plane[p].width * d->g.plane[p].height * bytes * ((p == 1 && d->g.nb_planes == 2) ? 2 : 1);
    return b;
}

static void bench_op(const char *text, enum AVPixelFormat fmt, int w, int h, int frames)
{
    dev_frame d;
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
        double bytes = frame_bytes(&d);
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
    for (int p = 0; p < 4; p++) {
        if (d.g.plane[p].tex)
            cudaDestroyTextureObject((cudaTextureObject_t)d.g.plane[p].tex);
        if (d.arr[p])
            cudaFreeArray(d.arr[p]);
    }
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
