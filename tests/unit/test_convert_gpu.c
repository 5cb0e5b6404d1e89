/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * GPU test: convert and tonemap run_gpu against run_cpu, byte for byte, for
 * every output format, with the input planes both as pitch-linear device
 * memory and as CUDA arrays read through texture objects (what imported
 * interop images look like). Exits 77 when no CUDA device is present.
 */
#include <libavutil/imgutils.h>

#include "test_convert_util.h"
#include "test_gpu_util.h"

static const char *out_names[] = { "yuv420p", "yuv420p10", "yuv422p", "yuv422p10", "yuv444p", "yuv444p10", "yuv444p16",
                                   "nv12", "p010", "rgb24", "rgba", "rgb48", "rgba64", "rgbaf16" };

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
            tg_frame di;
            tg_upload(in, arrays, &di);
            di.g.fmt = inf;
            vkcu_gpu_frame out;
            memset(&out, 0, sizeof(out));
            int ret = o->cls->init_gpu(o);
            if (ret >= 0)
                ret = o->cls->run_gpu(o, &di.g, &out, NULL);
            CK(cudaDeviceSynchronize());
            long long diff = ret < 0 ? -1 : compare(&out, ref);
            cases++;
            if (diff) {
                printf("FAIL %s on %s (%s input): %lld bytes differ%s\n", text, av_get_pix_fmt_name(in->format),
                       arrays ? "array/texture" : "pitch-linear", diff, ret < 0 ? " (run_gpu failed)" : "");
                failures++;
            }
            tg_free(&di);
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
            AVFrame *in = tu_frame(fmts[fi], w, h);
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
