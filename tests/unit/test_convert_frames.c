/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * convert's run_cpu on whole frames (odd sizes, 2 threads) for every output
 * format, against a slow double-precision per-pixel reference: bilinear
 * chroma (left siting), BT.709 limited in, BT.601 full out for YUV outputs,
 * full-range RGB. Subsampled outputs are fed 4:4:4 so the reference's
 * downsampling is the documented [1 2 1]/4 x [1 1]/2 filter. Integer
 * formats: max 1 LSB, >= 99.9% exact; half float: within one half ULP,
 * >= 99.9% exact.
 */
#include "test_convert_util.h"

static const char *out_names[] = { "yuv420p", "yuv420p10", "yuv422p", "yuv422p10", "yuv444p", "yuv444p10", "yuv444p16",
                                   "nv12", "p010", "rgb24", "rgba", "rgb48", "rgba64", "rgbaf16" };
static const enum AVPixelFormat in_fmts[] = { AV_PIX_FMT_NV12, AV_PIX_FMT_P010LE, AV_PIX_FMT_YUV420P10LE,
                                              AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUV444P10LE };

static double half_to_double(int h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return h & 0x8000 ? -v : v;
}

/* Reference output value (before rounding) of component c at luma position (x, y). */
static double ref_at(const AVFrame *in, double x, double y, int c, int rgb, int depth)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(in->format);
    int ssx = d->log2_chroma_w, ssy = d->log2_chroma_h, id = d->comp[0].depth;
    int cw = AV_CEIL_RSHIFT(in->width, ssx), ch = AV_CEIL_RSHIFT(in->height, ssy);
    double px = ssx ? x / 2.0 : x, py = ssy ? (y - 0.5) / 2.0 : y; /* left siting */
    int kx = (int)floor(px), ky = (int)floor(py);
    double fx = px - kx, fy = py - ky, cc[3];
    cc[0] = tu_get(in, 0, (int)x, (int)y);
    for (int k = 1; k < 3; k++) {
        cc[k] = 0;
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < 2; i++) {
                int sx = kx + i < 0 ? 0 : kx + i >= cw ? cw - 1 : kx + i, sy = ky + j < 0 ? 0 : ky + j >= ch ? ch - 1 : ky + j;
                cc[k] += (i ? fx : 1 - fx) * (j ? fy : 1 - fy) * tu_get(in, k, sx, sy);
            }
    }
    double s = 1 << (id - 8);
    double yn = (cc[0] - 16 * s) / (219 * s), cb = (cc[1] - 128 * s) / (224 * s), cr = (cc[2] - 128 * s) / (224 * s);
    double kr = 0.2126, kb = 0.0722, kg = 1 - kr - kb;
    double r = yn + 2 * (1 - kr) * cr, b = yn + 2 * (1 - kb) * cb, g = (yn - kr * r - kb * b) / kg;
    double max = depth ? (1 << depth) - 1 : 1.0;
    if (rgb)
        return (c == 0 ? r : c == 1 ? g : b) * max;
    kr = 0.299, kb = 0.114, kg = 1 - kr - kb; /* BT.601 full range out */
    double yo = kr * r + kg * g + kb * b;
    if (c == 0)
        return yo * max;
    double v = c == 1 ? (b - yo) / (2 * (1 - kb)) : (r - yo) / (2 * (1 - kr));
    return v * max + (1 << (depth - 1));
}

int main(void)
{
    const int w = 97, h = 61;
    int failures = 0, cases = 0;
    for (int ii = 0; ii < 6; ii++) {
        AVFrame *in = tu_frame(in_fmts[ii], w, h);
        ct_fill_random(in, 1000 + ii);
        int in444 = in_fmts[ii] == AV_PIX_FMT_YUV444P || in_fmts[ii] == AV_PIX_FMT_YUV444P10LE;
        for (int oi = 0; oi < 14; oi++) {
            vkcu_video_format inf = ct_format(in->format, w, h, AVCOL_SPC_BT709, AVCOL_RANGE_MPEG), outf;
            char text[128];
            snprintf(text, sizeof(text), "convert=format=%s:matrix=bt601:range=full:chroma_loc=left", out_names[oi]);
            vkcu_chain chain;
            if (ct_op(&chain, text, &inf, &outf, 2) < 0)
                return 1;
            const AVPixFmtDescriptor *od = av_pix_fmt_desc_get(outf.pix_fmt);
            int sub = od->log2_chroma_w || od->log2_chroma_h;
            if (sub && !in444) {
                vkcu_chain_free(&chain);
                continue;
            }
            AVFrame *o = ct_run(&chain, in, &outf);
            vkcu_chain_free(&chain);
            if (!o)
                return 1;
            int rgb = !!(od->flags & AV_PIX_FMT_FLAG_RGB), half = !!(od->flags & AV_PIX_FMT_FLAG_FLOAT);
            int depth = half ? 0 : od->comp[0].depth, max = half ? 0 : (1 << depth) - 1;
            ct_tally t = { 0 };
            for (int c = 0; c < 3; c++) {
                int cw = c ? AV_CEIL_RSHIFT(w, od->log2_chroma_w) : w, ch = c ? AV_CEIL_RSHIFT(h, od->log2_chroma_h) : h;
                for (int y = 0; y < ch; y++)
                    for (int x = 0; x < cw; x++) {
                        double ref = 0;
                        if (c && sub) { /* downsample reference values at luma positions */
                            double wsum = 0;
                            for (int j = -1; j <= 2; j++)
                                for (int i = -1; i <= 1; i++) {
                                    double wx = od->log2_chroma_w ? (i == 0 ? 0.5 : 0.25) : (i == 0);
                                    double wy = od->log2_chroma_h ? (j == 0 || j == 1 ? 0.5 : 0) : (j == 0);
                                    if (wx == 0 || wy == 0)
                                        continue;
                                    int lx = (x << od->log2_chroma_w) + i, ly = (y << od->log2_chroma_h) + j;
                                    lx = lx < 0 ? 0 : lx >= w ? w - 1 : lx;
                                    ly = ly < 0 ? 0 : ly >= h ? h - 1 : ly;
                                    ref += wx * wy * ref_at(in, lx, ly, c, rgb, depth);
                                    wsum += wx * wy;
                                }
                            ref /= wsum;
                        } else {
                            ref = ref_at(in, x, y, c, rgb, depth);
                        }
                        int got = tu_get(o, c, x, y);
                        if (half) {
                            double gv = half_to_double(got);
                            double ulp = ldexp(1.0, (int)floor(log2(fmax(fabs(ref), 6.1e-5))) - 10);
                            double e = fabs(gv - ref) / ulp;
                            ct_count(&t, e <= 0.5 + 1e-9 ? 0 : e <= 1.0 ? 1 : 2, 0);
                        } else {
                            double r = floor(ref + 0.5);
                            ct_count(&t, got, (int)(r < 0 ? 0 : r > max ? max : r));
                        }
                    }
            }
            av_frame_free(&o);
            int ok = ct_ok(&t);
            cases++;
            failures += !ok;
            if (!ok || getenv("VKCU_TEST_VERBOSE"))
                printf("%s %s -> %s: %lld samples, %.3f%% exact, max %d\n", ok ? "ok" : "FAIL",
                       av_get_pix_fmt_name(in->format), out_names[oi], t.n, 100.0 * t.exact / t.n, t.maxerr);
        }
        av_frame_free(&in);
    }
    printf("test_convert_frames: %d input x output format pairs (all 14 outputs) vs double reference: %s\n", cases,
           failures ? "FAIL" : "max 1 LSB, >= 99.9% exact");
    return failures ? 1 : 0;
}
