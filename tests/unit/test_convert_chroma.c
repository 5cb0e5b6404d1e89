/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Chroma resampling and siting of convert against a straightforward
 * double-precision reference: bilinear upsampling from 4:2:0 and 4:2:2 for
 * all six input sitings, downsampling to 4:2:0 for left/center/topleft
 * ([1 2 1]/4 co-sited, [1 1]/2 centred), re-siting 4:2:0 -> 4:2:0, and the
 * exact pass-through of same-siting 4:2:0 layout changes. Identity matrix
 * and range with a depth increase keep the resampled values visible exactly.
 */
#include "kernels/convert_math.h"
#include "test_convert_util.h"

static const char *sitings[] = { "left", "center", "topleft", "top", "bottomleft", "bottom" };
/* chroma offsets (x, y) in half luma samples */
static const int site_off[6][2] = { { 0, 1 }, { 1, 1 }, { 0, 0 }, { 1, 0 }, { 0, 2 }, { 1, 2 } };

static int failures;

/* Bilinear value of a chroma plane (cw x ch) at luma position (x, y). */
static double up_ref(const AVFrame *f, int c, int ssx, int ssy, const int off[2], double x, double y)
{
    int cw = AV_CEIL_RSHIFT(f->width, ssx), ch = AV_CEIL_RSHIFT(f->height, ssy);
    double px = ssx ? (x - off[0] * 0.5) / 2.0 : x, py = ssy ? (y - off[1] * 0.5) / 2.0 : y;
    int kx = (int)floor(px), ky = (int)floor(py);
    double fx = px - kx, fy = py - ky, v = 0;
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 2; i++) {
            double w = (i ? fx : 1 - fx) * (j ? fy : 1 - fy);
            if (w == 0)
                continue;
            int sx = kx + i < 0 ? 0 : kx + i >= cw ? cw - 1 : kx + i;
            int sy = ky + j < 0 ? 0 : ky + j >= ch ? ch - 1 : ky + j;
            v += w * tu_get(f, c, sx, sy);
        }
    return v;
}

static double clampd(double v, double hi)
{
    return v < 0 ? 0 : v > hi ? hi : v;
}

/* 1-D downsampling taps at output chroma index k, offset off. */
static int down_taps(int k, int off, double pos[3], double w[3])
{
    if (off & 1) {
        pos[0] = 2 * k + off / 2, pos[1] = pos[0] + 1, w[0] = w[1] = 0.5;
        return 2;
    }
    pos[1] = 2 * k + off / 2, pos[0] = pos[1] - 1, pos[2] = pos[1] + 1;
    w[0] = w[2] = 0.25, w[1] = 0.5;
    return 3;
}

/* Output chroma (k, l) of a 4:2:0 output: per dimension, downsampling of the
 * bilinear interpolant, except where input and output have the same
 * subsampled siting (then the sample itself). 4:4:4 input clamps luma
 * positions into the picture; a 4:2:0 input is interpolated at the
 * unclamped positions with chroma indices clamped. */
static double down_ref(const AVFrame *f, int c, int sub, const int in_off[2], const int out_off[2], int k, int l)
{
    double px[3], wx[3], py[3], wy[3], v = 0;
    int nx = down_taps(k, out_off[0], px, wx), ny = down_taps(l, out_off[1], py, wy);
    if (sub && in_off[0] == out_off[0])
        nx = 1, px[0] = 2 * k + in_off[0] * 0.5, wx[0] = 1; /* lands on the sample itself */
    if (sub && in_off[1] == out_off[1])
        ny = 1, py[0] = 2 * l + in_off[1] * 0.5, wy[0] = 1;
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) {
            double x = sub ? px[i] : clampd(px[i], f->width - 1), y = sub ? py[j] : clampd(py[j], f->height - 1);
            v += wx[i] * wy[j] * up_ref(f, c, sub, sub, in_off, x, y);
        }
    return v;
}

static void check(const char *what, const ct_tally *t)
{
    int ok = t->n > 0 && t->exact == t->n;
    failures += !ok;
    if (!ok || getenv("VKCU_TEST_VERBOSE"))
        printf("%s %s: %lld samples, %lld exact, max error %d\n", ok ? "ok" : "FAIL", what, t->n, t->exact, t->maxerr);
}

static AVFrame *convert(const AVFrame *in, const char *text, enum AVChromaLocation loc)
{
    vkcu_video_format inf = ct_format(in->format, in->width, in->height, AVCOL_SPC_BT709, AVCOL_RANGE_MPEG), outf;
    inf.chroma_loc = loc;
    vkcu_chain ch;
    if (ct_op(&ch, text, &inf, &outf, 2) < 0)
        return NULL;
    AVFrame *o = ct_run(&ch, in, &outf);
    vkcu_chain_free(&ch);
    return o;
}

int main(void)
{
    const int w = 67, h = 43; /* odd: edges and partial chroma samples */
    char text[200], what[320];

    /* the composed re-siting filter never needs more than three taps */
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int k = 0; k < 4; k++) {
                cv_taps t;
                cv_taps_resite(k, a, b, &t);
                int sum = t.w[0] + t.w[1] + t.w[2];
                if (t.n > 3 || sum != 16) {
                    printf("FAIL resite taps out %d in %d: n %d sum %d\n", a, b, t.n, sum);
                    failures++;
                }
            }

    /* upsampling: 4:2:0 and 4:2:2 8-bit -> yuv444p16 (x256 exactly) */
    const enum AVPixelFormat sub_fmts[2] = { AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV422P };
    for (int fi = 0; fi < 2; fi++) {
        AVFrame *in = tu_frame(sub_fmts[fi], w, h);
        ct_fill_random(in, 77 + fi);
        int ssy = fi == 0;
        for (int s = 0; s < 6; s++) {
            snprintf(text, sizeof(text), "convert=format=yuv444p16:in_chroma_loc=%s", sitings[s]);
            AVFrame *o = convert(in, text, AVCHROMA_LOC_UNSPECIFIED);
            ct_tally t = { 0 };
            for (int y = 0; o && y < h; y++)
                for (int x = 0; x < w; x++) {
                    ct_count(&t, tu_get(o, 0, x, y), tu_get(in, 0, x, y) * 256);
                    for (int c = 1; c < 3; c++)
                        ct_count(&t, tu_get(o, c, x, y), (int)floor(up_ref(in, c, 1, ssy, site_off[s], x, y) * 256 + 0.5));
                }
            snprintf(what, sizeof(what), "%s %s", av_get_pix_fmt_name(sub_fmts[fi]), text);
            check(what, &t);
            av_frame_free(&o);
        }
        av_frame_free(&in);
    }

    /* downsampling 4:4:4 -> 4:2:0 and re-siting 4:2:0 -> 4:2:0, 8-bit -> 10-bit (x4 exactly) */
    AVFrame *in444 = tu_frame(AV_PIX_FMT_YUV444P, w, h), *in420 = tu_frame(AV_PIX_FMT_YUV420P, w, h);
    ct_fill_random(in444, 5);
    ct_fill_random(in420, 6);
    for (int src = 0; src < 2; src++) {
        const AVFrame *in = src ? in420 : in444;
        for (int si = 0; si < (src ? 3 : 1); si++) {
            for (int so = 0; so < 3; so++) {
                snprintf(text, sizeof(text), "convert=format=yuv420p10:in_chroma_loc=%s:chroma_loc=%s", sitings[si],
                         sitings[so]);
                AVFrame *o = convert(in, text, AVCHROMA_LOC_UNSPECIFIED);
                ct_tally t = { 0 };
                for (int y = 0; o && y < (h + 1) / 2; y++)
                    for (int x = 0; x < (w + 1) / 2; x++)
                        for (int c = 1; c < 3; c++) {
                            double ref = down_ref(in, c, src, site_off[si], site_off[so], x, y);
                            ct_count(&t, tu_get(o, c, x, y), (int)floor(ref * 4 + 0.5));
                        }
                snprintf(what, sizeof(what), "%s %s", av_get_pix_fmt_name(in->format), text);
                check(what, &t);
                av_frame_free(&o);
            }
        }
    }

    /* same siting, layout change only: bytes pass through */
    {
        AVFrame *o = convert(in420, "convert=format=nv12", AVCHROMA_LOC_LEFT);
        ct_tally t = { 0 };
        for (int c = 0; o && c < 3; c++)
            for (int y = 0; y < (c ? (h + 1) / 2 : h); y++)
                for (int x = 0; x < (c ? (w + 1) / 2 : w); x++)
                    ct_count(&t, tu_get(o, c, x, y), tu_get(in420, c, x, y));
        check("yuv420p -> nv12 pass-through", &t);
        av_frame_free(&o);
    }
    av_frame_free(&in444);
    av_frame_free(&in420);
    printf("test_convert_chroma: bilinear upsampling (6 sitings, 4:2:0 and 4:2:2), downsampling and re-siting to "
           "4:2:0 (left/center/topleft) vs double reference: %s\n",
           failures ? "FAIL" : "all samples exact");
    return failures ? 1 : 0;
}
