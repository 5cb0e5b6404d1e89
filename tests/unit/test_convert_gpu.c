/*
 * GPU test: convert and tonemap run_gpu against run_cpu, byte for byte, for
 * every output format, with the input planes both as pitch-linear device
 * memory and as CUDA arrays read through texture objects (what imported
 * interop images look like). Exits 77 when no CUDA device is present.
 */
#include <cuda_runtime_api.h>
#include <libavutil/imgutils.h>

#include "test_convert_util.h"

static const char *out_names[] = { "yuv420p", "yuv420p10", "yuv422p", "yuv422p10", "yuv444p", "yuv444p10", "yuv444p16",
                                   "nv12", "p010", "rgb24", "rgba", "rgb48", "rgba64", "rgbaf16" };

#define CK(call)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            printf("FAIL %s: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

typedef struct dev_input {
    vkcu_gpu_frame f;
    void *mem[4];
    cudaArray_t arr[4];
} dev_input;

/* Uploads a software frame as pitch-linear memory (arrays = 0) or as CUDA
 * arrays with texture objects (arrays = 1). */
static void upload(const AVFrame *src, int arrays, dev_input *di)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(src->format);
    int planes = av_pix_fmt_count_planes(src->format), bytes = d->comp[0].depth > 8 ? 2 : 1;
    memset(di, 0, sizeof(*di));
    di->f.nb_planes = planes;
    for (int p = 0; p < planes; p++) {
        int w = p ? AV_CEIL_RSHIFT(src->width, d->log2_chroma_w) : src->width;
        int h = p ? AV_CEIL_RSHIFT(src->height, d->log2_chroma_h) : src->height;
        int comps = planes == 2 && p == 1 ? 2 : 1;
        size_t row = (size_t)w * comps * bytes;
        vkcu_gpu_plane *pl = &di->f.plane[p];
        pl->width = w, pl->height = h;
        if (!arrays) {
            CK(cudaMallocPitch(&di->mem[p], &pl->pitch, row, h));
            CK(cudaMemcpy2D(di->mem[p], pl->pitch, src->data[p], src->linesize[p], row, h, cudaMemcpyHostToDevice));
            pl->ptr = di->mem[p];
            continue;
        }
        struct cudaChannelFormatDesc cd = cudaCreateChannelDesc(bytes * 8, comps == 2 ? bytes * 8 : 0, 0, 0,
                                                                cudaChannelFormatKindUnsigned);
        CK(cudaMallocArray(&di->arr[p], &cd, w, h, cudaArraySurfaceLoadStore));
        CK(cudaMemcpy2DToArray(di->arr[p], 0, 0, src->data[p], src->linesize[p], row, h, cudaMemcpyHostToDevice));
        struct cudaResourceDesc rd;
        memset(&rd, 0, sizeof(rd));
        rd.resType = cudaResourceTypeArray;
        rd.res.array.array = di->arr[p];
        struct cudaTextureDesc td;
        memset(&td, 0, sizeof(td));
        td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
        td.filterMode = cudaFilterModePoint;
        td.readMode = cudaReadModeElementType;
        td.normalizedCoords = 0;
        cudaTextureObject_t tex;
        CK(cudaCreateTextureObject(&tex, &rd, &td, NULL));
        pl->tex = tex;
    }
}

static void release(dev_input *di)
{
    for (int p = 0; p < 4; p++) {
        if (di->f.plane[p].tex)
            cudaDestroyTextureObject(di->f.plane[p].tex);
        if (di->arr[p])
            cudaFreeArray(di->arr[p]);
        if (di->mem[p])
            cudaFree(di->mem[p]);
    }
}

/* Compares the GPU output planes with the CPU frame; returns differing bytes. */
static long long compare(const vkcu_gpu_frame *g, const AVFrame *cpu)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(cpu->format);
    long long diff = 0;
    for (int p = 0; p < av_pix_fmt_count_planes(cpu->format); p++) {
        int h = p ? AV_CEIL_RSHIFT(cpu->height, d->log2_chroma_h) : cpu->height;
        int row = av_image_get_linesize(cpu->format, cpu->width, p);
        uint8_t *buf = malloc((size_t)row * h);
        CK(cudaMemcpy2D(buf, row, g->plane[p].ptr, g->plane[p].pitch, row, h, cudaMemcpyDeviceToHost));
        for (int y = 0; y < h; y++)
            for (int x = 0; x < row; x++)
                diff += buf[(size_t)y * row + x] != cpu->data[p][(size_t)y * cpu->linesize[p] + x];
        free(buf);
    }
    return diff;
}

static int failures, cases;

static void run(const char *op, const AVFrame *in, vkcu_video_format inf, const char *extra)
{
    for (int oi = 0; oi < 14; oi++) {
        char text[256];
        snprintf(text, sizeof(text), "%s=format=%s%s", op, out_names[oi], extra);
        vkcu_chain ch;
        vkcu_video_format outf;
        if (ct_op(&ch, text, &inf, &outf, 2) < 0) {
            failures++;
            continue;
        }
        vkcu_op *o = ch.ops[0];
        AVFrame *ref = ct_run(&ch, in, &outf);
        for (int arrays = 0; arrays < 2 && ref; arrays++) {
            dev_input di;
            upload(in, arrays, &di);
            di.f.fmt = inf;
            vkcu_gpu_frame out;
            memset(&out, 0, sizeof(out));
            int ret = o->cls->init_gpu(o);
            if (ret >= 0)
                ret = o->cls->run_gpu(o, &di.f, &out, NULL);
            CK(cudaDeviceSynchronize());
            long long diff = ret < 0 ? -1 : compare(&out, ref);
            cases++;
            if (diff) {
                printf("FAIL %s on %s (%s input): %lld bytes differ%s\n", text, av_get_pix_fmt_name(in->format),
                       arrays ? "array/texture" : "pitch-linear", diff, ret < 0 ? " (run_gpu failed)" : "");
                failures++;
            }
            release(&di);
        }
        av_frame_free(&ref);
        vkcu_chain_free(&ch);
    }
}

int main(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
        printf("test_convert_gpu: skipped: no CUDA device (cudaGetDeviceCount: %d devices)\n", n);
        return 77;
    }
    const enum AVPixelFormat fmts[] = { AV_PIX_FMT_NV12, AV_PIX_FMT_P010LE, AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV420P10LE,
                                        AV_PIX_FMT_YUV422P10LE, AV_PIX_FMT_YUV444P };
    const int sizes[][2] = { { 323, 187 }, { 640, 360 } }; /* odd and even */
    for (int si = 0; si < 2; si++)
        for (int fi = 0; fi < 6; fi++) {
            int w = sizes[si][0], h = sizes[si][1];
            AVFrame *in = ct_frame(fmts[fi], w, h);
            ct_fill_random(in, 42 + fi + si);
            vkcu_video_format inf = ct_format(fmts[fi], w, h, AVCOL_SPC_BT709, AVCOL_RANGE_MPEG);
            run("convert", in, inf, ":matrix=bt2020:range=full");
            if (fi == 0)
                run("convert", in, inf, ":in_chroma_loc=center:chroma_loc=topleft");
            if (fi == 1 || fi == 3) { /* HDR: PQ and HLG */
                inf.matrix = AVCOL_SPC_BT2020_NCL;
                inf.primaries = AVCOL_PRI_BT2020;
                inf.transfer = AVCOL_TRC_SMPTE2084;
                run("tonemap", in, inf, "");
                run("tonemap", in, inf, ":curve=hable:src_peak=4000");
                inf.transfer = AVCOL_TRC_ARIB_STD_B67;
                run("tonemap", in, inf, "");
            }
            av_frame_free(&in);
        }
    printf("test_convert_gpu: %d cases (convert, tonemap PQ/HLG; 6 input layouts, 14 output formats, pitch-linear and "
           "texture inputs): %s\n",
           cases, failures ? "FAIL" : "GPU bytes equal CPU bytes");
    return failures ? 1 : 0;
}
