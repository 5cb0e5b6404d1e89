/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * deinterlace: the shared row plan and per-sample math
 * (kernels/deint_math.h) at the picture's edges, and the CPU operator's
 * sequencing through its API: output counts and timestamps at the stream's
 * ends, deint=interlaced on mixed flags (progressive frames pass through
 * byte for byte), parity from each frame's flags, thread-count invariance,
 * and the NV12/P010 layouts giving the bytes of the planar ones.
 */
#include <string.h>
#include <libavutil/frame.h>

#include "kernels/deint_math.h"
#include "ops/op.h"
#include "test_util.h"
#include "core/vkcu.h"

/* Every line a planned row reads exists, kept rows are copies, and the
 * lines read are of the right parity, for every small height. */
static void test_row_plan(void)
{
    for (int h = 3; h <= 24; h++)
        for (int keep = 0; keep < 2; keep++)
            for (int boundary = 0; boundary < 2; boundary++)
                for (int wide = 0; wide < 2; wide++)
                    for (int y = 0; y < h; y++) {
                        di_row r = di_row_plan(y, h, keep, boundary, wide);
                        int kept = (y & 1) == keep;
                        CHECK((r.kind == DI_ROW_COPY) == kept, "h=%d y=%d keep=%d: kind %d", h, y, keep, r.kind);
                        if (kept)
                            continue;
                        int lines[8] = { r.m1, r.p1, r.m2, r.p2, r.m3, r.p3, r.m4, r.p4 };
                        for (int i = 0; i < 8; i++)
                            CHECK(lines[i] >= 0 && lines[i] < h, "h=%d y=%d wide=%d boundary=%d: line %d outside",
                                  h, y, wide, boundary, lines[i]);
                        /* neighbours come from the kept field, the 2- and
                         * 4-line taps from the missing field's parity */
                        CHECK((r.m1 & 1) == keep && (r.p1 & 1) == keep, "h=%d y=%d: m1/p1 parity", h, y);
                        if (r.kind == DI_ROW_LINE || r.spat)
                            CHECK((r.m2 & 1) != keep && (r.p2 & 1) != keep, "h=%d y=%d: m2/p2 parity", h, y);
                        if (r.kind == DI_ROW_LINE || r.kind == DI_ROW_INTRA)
                            CHECK((r.m3 & 1) == keep && (r.p3 & 1) == keep, "h=%d y=%d: m3/p3 parity", h, y);
                        CHECK(r.kind != DI_ROW_INTRA || boundary, "intra rows only at the stream's ends");
                        CHECK(r.kind != DI_ROW_LINE || (y >= 4 && y + 4 < h), "h=%d y=%d: full filter too near the edge",
                              h, y);
                    }
    /* FFmpeg's rule at more than 8 bits: the room below is tested against
     * two lines, so the line above the last one reflects upwards. */
    di_row r8 = di_row_plan(8, 10, 1, 0, 0), r16 = di_row_plan(8, 10, 1, 0, 1);
    CHECK(r8.p1 == 9 && r16.p1 == 7, "10-bit reflection next to the bottom (8-bit %d, 16-bit %d)", r8.p1, r16.p1);
    r8 = di_row_plan(1, 10, 0, 0, 0);
    r16 = di_row_plan(1, 10, 0, 0, 1);
    CHECK(r8.m1 == 0 && r16.m1 == 2, "10-bit reflection next to the top (8-bit %d, 16-bit %d)", r8.m1, r16.m1);
}

static void test_sample(void)
{
    di_taps flat;
    int *v = &flat.c;
    for (size_t i = 0; i < sizeof(flat) / sizeof(int); i++)
        v[i] = 77;
    for (int kind = DI_ROW_LINE; kind <= DI_ROW_INTRA; kind++) {
        di_row r = { .kind = kind, .spat = 1 };
        CHECK(di_sample(&r, &flat, 255) == 77, "kind %d: a flat picture stays flat", kind);
    }
    /* Still picture with a horizontal line in the missing field: the fields
     * before and after agree, so it is woven back at full resolution. */
    di_taps still = flat;
    still.a0 = still.b0 = 200;
    di_row line = { .kind = DI_ROW_LINE };
    CHECK(di_sample(&line, &still, 255) == 200, "still detail is woven, not interpolated away");
    /* Motion: the fields disagree, the current lines are dark: the sample
     * follows the current field instead of combing. */
    di_taps moving = flat;
    moving.c = moving.e = moving.c3m = moving.c3p = 20;
    moving.a0 = 240;
    moving.b0 = 20;
    int o = di_sample(&line, &moving, 255);
    CHECK(o < 130, "moving content is interpolated from the current field (got %d)", o);
    /* The high-frequency taps can overshoot; the result stays in range. */
    di_taps edge = { .c = 1023, .e = 0, .c3m = 0, .c3p = 1023, .pm = 0, .pp = 1023, .nm = 0, .np = 1023,
                     .a0 = 1023, .b0 = 0, .a2m = 0, .b2m = 0, .a2p = 0, .b2p = 0,
                     .a4m = 1023, .b4m = 1023, .a4p = 1023, .b4p = 1023 };
    o = di_sample(&line, &edge, 1023);
    CHECK(o >= 0 && o <= 1023, "10-bit result in range (got %d)", o);
}

/* ---- the operator through its API ---- */

static AVFrame *pattern(enum AVPixelFormat fmt, int w, int h, int n, int flags)
{
    AVFrame *f = av_frame_alloc();
    if (!f)
        return NULL;
    f->format = fmt;
    f->width = w;
    f->height = h;
    if (av_frame_get_buffer(f, 0) < 0) {
        av_frame_free(&f);
        return NULL;
    }
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    int maxv = (1 << d->comp[0].depth) - 1;
    for (int c = 0; c < d->nb_components; c++) {
        int cw = c ? AV_CEIL_RSHIFT(w, d->log2_chroma_w) : w, ch = c ? AV_CEIL_RSHIFT(h, d->log2_chroma_h) : h;
        for (int y = 0; y < ch; y++)
            for (int x = 0; x < cw; x++) {
                /* a bar moving by field: odd lines are 1/50 s later */
                int t = 2 * n + (y & 1);
                int val = ((x + 3 * t) % 16 < 5 ? maxv * 3 / 4 : maxv / 8) + ((x * 7 + y * 13 + c) % 9);
                tu_set(f, c, x, y, val > maxv ? maxv : val);
            }
    }
    f->pts = 2 * n;
    f->duration = 2;
    f->flags = flags;
    return f;
}

typedef struct run_result {
    int n;
    AVFrame *out[64];
} run_result;

static int collect(vkcu_op *op, const AVFrame *src, run_result *res)
{
    AVFrame *o = tu_frame(op->out.pix_fmt, op->out.width, op->out.height);
    if (!o)
        return AVERROR(ENOMEM);
    int ret = op->cls->run_cpu(op, src, o);
    if (ret < 0 || res->n >= 64) {
        av_frame_free(&o);
        return ret < 0 ? ret : -1;
    }
    res->out[res->n++] = o;
    return ret;
}

/* Feeds in[0..n), each followed by its ready outputs (VKCU_OP_MORE), then
 * the end of the stream; collects every output. */
static int run_op(vkcu_op *op, AVFrame *const *in, int n, run_result *res)
{
    int ret;
    res->n = 0;
    for (int i = 0; i < n; i++) {
        ret = collect(op, in[i], res);
        while (ret == VKCU_OP_MORE)
            ret = collect(op, NULL, res);
        if (ret < 0 && ret != AVERROR(EAGAIN))
            return ret;
    }
    while ((ret = collect(op, NULL, res)) >= 0)
        ;
    return ret == AVERROR_EOF ? res->n : ret;
}

static void free_result(run_result *r)
{
    for (int i = 0; i < r->n; i++)
        av_frame_free(&r->out[i]);
    r->n = 0;
}

static int make_op(vkcu_chain *chain, const char *text, enum AVPixelFormat fmt, int w, int h, int threads,
                   vkcu_video_format *out)
{
    char err[512];
    vkcu_video_format in = { .pix_fmt = fmt, .width = w, .height = h, .time_base = { 1, 25 },
                             .frame_rate = { 25, 2 } };
    int ret = vkcu_chain_parse(text, chain, err, sizeof(err));
    if (ret >= 0) {
        chain->ops[0]->threads = threads;
        ret = vkcu_chain_init(chain, &in, out, err, sizeof(err));
    }
    if (ret < 0)
        fprintf(stderr, "%s: %s\n", text, err);
    return ret;
}

static int frames_equal(const AVFrame *a, const AVFrame *b)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(a->format);
    for (int c = 0; c < d->nb_components; c++) {
        int cw = c ? AV_CEIL_RSHIFT(a->width, d->log2_chroma_w) : a->width;
        int ch = c ? AV_CEIL_RSHIFT(a->height, d->log2_chroma_h) : a->height;
        for (int y = 0; y < ch; y++)
            for (int x = 0; x < cw; x++)
                if (tu_get(a, c, x, y) != tu_get(b, c, x, y))
                    return 0;
    }
    return 1;
}

static void test_sequence(void)
{
    enum { N = 6 };
    const int il = AV_FRAME_FLAG_INTERLACED | AV_FRAME_FLAG_TOP_FIELD_FIRST;
    AVFrame *in[N];
    for (int i = 0; i < N; i++)
        in[i] = pattern(AV_PIX_FMT_YUV420P, 37, 23, i, il);
    vkcu_chain chain = { 0 };
    vkcu_video_format of;
    run_result r = { 0 };

    /* frame mode: one output per input, timestamps unchanged */
    if (make_op(&chain, "deinterlace=mode=frame", AV_PIX_FMT_YUV420P, 37, 23, 1, &of) >= 0) {
        CHECK(run_op(chain.ops[0], in, N, &r) == N, "frame mode: %d outputs for %d inputs", r.n, N);
        for (int i = 0; i < r.n; i++)
            CHECK(r.out[i]->pts == 2 * i && r.out[i]->duration == 2 && !(r.out[i]->flags & AV_FRAME_FLAG_INTERLACED),
                  "frame mode output %d: pts %lld duration %lld", i, (long long)r.out[i]->pts,
                  (long long)r.out[i]->duration);
        CHECK(of.time_base.num == 1 && of.time_base.den == 25, "frame mode keeps the time base");
        free_result(&r);
        vkcu_chain_free(&chain);
    }

    /* field mode: two outputs per input in half ticks; the last frame's
     * second field half a frame interval after it */
    if (make_op(&chain, "deinterlace", AV_PIX_FMT_YUV420P, 37, 23, 1, &of) >= 0) {
        CHECK(of.time_base.num == 1 && of.time_base.den == 50 && of.frame_rate.num == 25 && of.frame_rate.den == 1,
              "field mode: time base %d/%d, rate %d/%d", of.time_base.num, of.time_base.den, of.frame_rate.num,
              of.frame_rate.den);
        CHECK(run_op(chain.ops[0], in, N, &r) == 2 * N, "field mode: %d outputs for %d inputs", r.n, N);
        for (int i = 0; i < r.n; i++)
            CHECK(r.out[i]->pts == 2 * i && r.out[i]->duration == 2, "field output %d: pts %lld duration %lld", i,
                  (long long)r.out[i]->pts, (long long)r.out[i]->duration);
        /* both fields of a frame keep the kept lines of their own field */
        if (r.n == 2 * N) {
            int top_kept = 1, bottom_kept = 1;
            for (int x = 0; x < 37; x++) {
                top_kept &= tu_get(r.out[4], 0, x, 6) == tu_get(in[2], 0, x, 6);
                bottom_kept &= tu_get(r.out[5], 0, x, 7) == tu_get(in[2], 0, x, 7);
            }
            CHECK(top_kept && bottom_kept, "tff: the first field keeps the top lines, the second the bottom");
        }
        free_result(&r);
        vkcu_chain_free(&chain);
    }

    /* one frame alone: both fields, the frame standing in for its neighbours */
    if (make_op(&chain, "deinterlace", AV_PIX_FMT_YUV420P, 37, 23, 1, &of) >= 0) {
        CHECK(run_op(chain.ops[0], in, 1, &r) == 2, "a single frame gives two fields (%d)", r.n);
        free_result(&r);
        vkcu_chain_free(&chain);
    }

    /* deint=interlaced: frame 3 progressive passes through, once */
    in[3]->flags = 0;
    if (make_op(&chain, "deinterlace=deint=interlaced", AV_PIX_FMT_YUV420P, 37, 23, 1, &of) >= 0) {
        CHECK(run_op(chain.ops[0], in, N, &r) == 2 * N - 1, "mixed flags: %d outputs, expected %d", r.n, 2 * N - 1);
        if (r.n == 2 * N - 1)
            CHECK(frames_equal(r.out[6], in[3]) && r.out[6]->pts == 12 && r.out[6]->duration == 4,
                  "the progressive frame passes through unchanged at its own time (pts %lld)",
                  (long long)r.out[6]->pts);
        free_result(&r);
        vkcu_chain_free(&chain);
    }
    in[3]->flags = il;

    /* parity=auto follows the flags: bottom-first frames equal parity=bff */
    for (int i = 0; i < N; i++)
        in[i]->flags = AV_FRAME_FLAG_INTERLACED;
    run_result rb = { 0 };
    vkcu_chain cb = { 0 };
    if (make_op(&chain, "deinterlace", AV_PIX_FMT_YUV420P, 37, 23, 1, &of) >= 0 &&
        make_op(&cb, "deinterlace=parity=bff", AV_PIX_FMT_YUV420P, 37, 23, 1, &of) >= 0) {
        run_op(chain.ops[0], in, N, &r);
        run_op(cb.ops[0], in, N, &rb);
        int same = r.n == rb.n && r.n == 2 * N;
        for (int i = 0; same && i < r.n; i++)
            same = frames_equal(r.out[i], rb.out[i]);
        CHECK(same, "parity=auto on bottom-first frames equals parity=bff");
        free_result(&r);
        free_result(&rb);
    }
    vkcu_chain_free(&chain);
    vkcu_chain_free(&cb);
    for (int i = 0; i < N; i++)
        av_frame_free(&in[i]);
}

/* The same bytes whatever the thread count, and for NV12/P010 as for the
 * planar layouts (the GPU ring's layouts). */
static void test_layouts_threads(void)
{
    enum { N = 4 };
    static const struct { enum AVPixelFormat planar, semi; } pairs[] = {
        { AV_PIX_FMT_YUV420P, AV_PIX_FMT_NV12 },
        { AV_PIX_FMT_YUV420P10, AV_PIX_FMT_P010 },
    };
    for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++) {
        AVFrame *pl[N], *sp[N];
        for (int i = 0; i < N; i++) {
            pl[i] = pattern(pairs[k].planar, 66, 38, i, AV_FRAME_FLAG_INTERLACED);
            sp[i] = tu_frame(pairs[k].semi, 66, 38);
            const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(pairs[k].planar);
            for (int c = 0; c < 3; c++) {
                int cw = c ? AV_CEIL_RSHIFT(66, d->log2_chroma_w) : 66, ch = c ? AV_CEIL_RSHIFT(38, d->log2_chroma_h) : 38;
                for (int y = 0; y < ch; y++)
                    for (int x = 0; x < cw; x++)
                        tu_set(sp[i], c, x, y, tu_get(pl[i], c, x, y));
            }
            av_frame_copy_props(sp[i], pl[i]);
        }
        vkcu_chain c1 = { 0 }, c4 = { 0 }, cs = { 0 };
        vkcu_video_format of;
        run_result r1 = { 0 }, r4 = { 0 }, rs = { 0 };
        if (make_op(&c1, "deinterlace", pairs[k].planar, 66, 38, 1, &of) >= 0 &&
            make_op(&c4, "deinterlace", pairs[k].planar, 66, 38, 4, &of) >= 0 &&
            make_op(&cs, "deinterlace", pairs[k].semi, 66, 38, 3, &of) >= 0) {
            run_op(c1.ops[0], pl, N, &r1);
            run_op(c4.ops[0], pl, N, &r4);
            run_op(cs.ops[0], sp, N, &rs);
            int same_t = r1.n == 2 * N && r4.n == r1.n, same_l = rs.n == r1.n;
            for (int i = 0; i < r1.n; i++) {
                same_t = same_t && frames_equal(r1.out[i], r4.out[i]);
                same_l = same_l && frames_equal(r1.out[i], rs.out[i]);
            }
            CHECK(same_t, "%s: 1 and 4 threads give the same bytes", av_get_pix_fmt_name(pairs[k].planar));
            CHECK(same_l, "%s gives the bytes of %s", av_get_pix_fmt_name(pairs[k].semi),
                  av_get_pix_fmt_name(pairs[k].planar));
        }
        free_result(&r1);
        free_result(&r4);
        free_result(&rs);
        vkcu_chain_free(&c1);
        vkcu_chain_free(&c4);
        vkcu_chain_free(&cs);
        for (int i = 0; i < N; i++) {
            av_frame_free(&pl[i]);
            av_frame_free(&sp[i]);
        }
    }
}

int main(void)
{
    test_row_plan();
    test_sample();
    test_sequence();
    test_layouts_threads();
    if (tu_failures) {
        fprintf(stderr, "%d check(s) failed\n", tu_failures);
        return 1;
    }
    printf("deinterlace: row plan, sample math, sequencing, layouts and threads OK\n");
    return 0;
}
