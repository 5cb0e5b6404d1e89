/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The frame flow contract of op.h on the CPU driver (vkcu_chain_feed_cpu):
 * an operator that gives more than one output per input (VKCU_OP_MORE)
 * has every output taken, in order, before the next input, through a chain
 * that also holds frames back (EAGAIN) and flushes; and the fps operator
 * picks the source frames worked out by hand from ffmpeg's fps rules for
 * 25 -> 30 and 60 -> 24 fps.
 */
#include <string.h>
#include <libavutil/error.h>

#include "ops/op.h"
#include "test_util.h"

/* `rep`: every frame n times, the k-th with pts*10+k. */
typedef struct rep_priv {
    AVFrame *cur;
    int left, k;
    int null_calls_at_end; /* in == NULL seen with nothing ready */
} rep_priv;

static const vkcu_op_key rep_keys[] = { { "n", VKCU_KEY_INT, "3", 1, 9, NULL, "copies" }, { 0 } };

static int rep_run(vkcu_op *op, const AVFrame *in, AVFrame *out)
{
    rep_priv *p = op->priv;
    if (in) {
        CHECK(p->left == 0, "rep: input while %d outputs were still ready", p->left);
        av_frame_free(&p->cur);
        p->cur = av_frame_clone(in);
        p->left = vkcu_op_int(op, "n");
        p->k = 0;
    } else if (!p->left) {
        p->null_calls_at_end++;
        return AVERROR_EOF;
    }
    int ret = av_frame_copy(out, p->cur);
    if (ret < 0)
        return ret;
    av_frame_copy_props(out, p->cur);
    out->pts = p->cur->pts * 10 + p->k++;
    return --p->left ? VKCU_OP_MORE : 0;
}

static void rep_uninit(vkcu_op *op)
{
    av_frame_free(&((rep_priv *)op->priv)->cur);
}

/* `lag`: one frame of look-ahead (EAGAIN first), the held one at the end. */
typedef struct lag_priv {
    AVFrame *held;
} lag_priv;

static int lag_run(vkcu_op *op, const AVFrame *in, AVFrame *out)
{
    lag_priv *p = op->priv;
    AVFrame *prev = p->held;
    p->held = in ? av_frame_clone(in) : NULL;
    if (!prev)
        return in ? AVERROR(EAGAIN) : AVERROR_EOF;
    av_frame_copy(out, prev);
    av_frame_copy_props(out, prev);
    av_frame_free(&prev);
    return 0;
}

static void lag_uninit(vkcu_op *op)
{
    av_frame_free(&((lag_priv *)op->priv)->held);
}

static const vkcu_op_key no_keys[] = { { 0 } };
static const vkcu_op_class rep_class = { .name = "rep", .keys = rep_keys, .priv_size = sizeof(rep_priv),
                                         .run_cpu = rep_run, .uninit = rep_uninit };
static const vkcu_op_class lag_class = { .name = "lag", .keys = no_keys, .priv_size = sizeof(lag_priv),
                                         .run_cpu = lag_run, .uninit = lag_uninit };

typedef struct collect {
    int n;
    int64_t pts[256];
    int src[256]; /* the source frame's number, from its first luma sample */
} collect;

static int collect_frame(void *opaque, AVFrame *f)
{
    collect *c = opaque;
    if (c->n < 256) {
        c->pts[c->n] = f->pts;
        c->src[c->n] = f->data[0][0];
    }
    c->n++;
    return 0;
}

static vkcu_op *make_op(const vkcu_op_class *cls, const char *n)
{
    vkcu_op *op = calloc(1, sizeof(*op));
    op->cls = cls;
    op->threads = 1;
    if (n)
        op->value[0] = n;
    else if (cls->keys[0].name)
        op->value[0] = cls->keys[0].def;
    return op;
}

static AVFrame *numbered(int i, int64_t pts, int64_t duration)
{
    AVFrame *f = tu_frame(AV_PIX_FMT_YUV420P, 4, 2);
    for (int p = 0; p < 3; p++)
        memset(f->data[p], i, (size_t)f->linesize[p] * (p ? 1 : 2));
    f->pts = pts;
    f->duration = duration;
    return f;
}

static const vkcu_video_format fmt4x2 = { .pix_fmt = AV_PIX_FMT_YUV420P, .width = 4, .height = 2 };

static void test_multi_output(void)
{
    /* rep(3) -> lag -> rep(2): 4 inputs give 24 outputs, in input order. */
    vkcu_chain ch = { 0 };
    ch.ops[ch.nb_ops++] = make_op(&rep_class, "3");
    ch.ops[ch.nb_ops++] = make_op(&lag_class, NULL);
    ch.ops[ch.nb_ops++] = make_op(&rep_class, "2");
    vkcu_video_format out;
    char err[256];
    CHECK(vkcu_chain_init(&ch, &fmt4x2, &out, err, sizeof(err)) == 0, "init: %s", err);
    collect c = { 0 };
    /* After input n: rep(3) gives 3, lag passes on all but the newest, rep(2) doubles. */
    const int after[4] = { 4, 10, 16, 22 };
    for (int i = 0; i < 4; i++) {
        AVFrame *f = numbered(i, i, 1);
        int ret = vkcu_chain_feed_cpu(&ch, 0, f, collect_frame, &c, NULL);
        CHECK(ret == 0, "feed %d: %d", i, ret);
        CHECK(c.n == after[i], "after input %d: %d outputs, expected %d", i, c.n, after[i]);
        av_frame_free(&f);
    }
    CHECK(vkcu_chain_feed_cpu(&ch, 0, NULL, collect_frame, &c, NULL) == 0, "flush");
    CHECK(c.n == 24, "%d outputs, expected 24", c.n);
    for (int n = 0; n < 24 && n < c.n; n++) {
        int i = n / 6, k1 = n / 2 % 3, k2 = n % 2;
        int64_t want = ((int64_t)i * 10 + k1) * 10 + k2;
        CHECK(c.pts[n] == want && c.src[n] == i, "output %d: pts %lld from frame %d, expected %lld from %d", n,
              (long long)c.pts[n], c.src[n], (long long)want, i);
    }
    /* Only the flush reached the operators with nothing ready. */
    CHECK(((rep_priv *)ch.ops[0]->priv)->null_calls_at_end == 1, "rep 1 saw %d end calls",
          ((rep_priv *)ch.ops[0]->priv)->null_calls_at_end);
    CHECK(((rep_priv *)ch.ops[2]->priv)->null_calls_at_end == 1, "rep 2 saw %d end calls",
          ((rep_priv *)ch.ops[2]->priv)->null_calls_at_end);
    for (int i = 0; i < ch.nb_ops; i++) {
        ch.ops[i]->cls->uninit(ch.ops[i]);
        av_freep(&ch.ops[i]->priv);
        free(ch.ops[i]);
    }
}

/* fps through the parser and the driver: frames n of n_in at tb_in, one
 * tick each; the output's source frames, pts 0.. and durations of 1. */
static void test_fps(const char *text, AVRational tb_in, int n_in, const int *want, int n_want)
{
    vkcu_chain ch;
    char err[256];
    CHECK(vkcu_chain_parse(text, &ch, err, sizeof(err)) == 0, "%s: %s", text, err);
    vkcu_video_format in = fmt4x2, out;
    in.time_base = tb_in;
    in.frame_rate = av_inv_q(tb_in);
    CHECK(vkcu_chain_init(&ch, &in, &out, err, sizeof(err)) == 0, "%s: %s", text, err);
    collect c = { 0 };
    for (int i = 0; i < n_in; i++) {
        AVFrame *f = numbered(i, i, 1);
        CHECK(vkcu_chain_feed_cpu(&ch, 0, f, collect_frame, &c, NULL) == 0, "%s: feed %d", text, i);
        av_frame_free(&f);
    }
    CHECK(vkcu_chain_feed_cpu(&ch, 0, NULL, collect_frame, &c, NULL) == 0, "%s: flush", text);
    CHECK(c.n == n_want, "%s: %d frames, expected %d", text, c.n, n_want);
    for (int n = 0; n < c.n && n < n_want; n++)
        CHECK(c.src[n] == want[n] && c.pts[n] == n, "%s: output %d: frame %d at %lld, expected frame %d at %d", text,
              n, c.src[n], (long long)c.pts[n], want[n], n);
    AVRational r = out.frame_rate, tb = out.time_base;
    CHECK(av_cmp_q(tb, av_inv_q(r)) == 0 && r.num > 0, "%s: output rate %d/%d, time base %d/%d", text, r.num, r.den,
          tb.num, tb.den);
    vkcu_chain_free(&ch);
}

int main(void)
{
    test_multi_output();
    /* 25 -> 30: input n at round(1.2 n); output 3 repeats frame 2. */
    static const int up[] = { 0, 1, 2, 2, 3, 4 };
    test_fps("fps=30", (AVRational){ 1, 25 }, 5, up, 6);
    /* 60 -> 24: input n at round(0.4 n); the last at or before each tick. */
    static const int down[] = { 1, 3, 6, 8 };
    test_fps("fps=24", (AVRational){ 1, 60 }, 10, down, 4);
    /* round=down: input n at floor(0.4 n) = 0 0 0 1 1 2 2 2 3 3; end 4. */
    static const int down_floor[] = { 2, 4, 7, 9 };
    test_fps("fps=24:round=down", (AVRational){ 1, 60 }, 10, down_floor, 4);
    /* round=up: ceil(1.2 n) = 0 2 3 4 5, end ceil(6) = 6: output 1 repeats frame 0. */
    static const int up_ceil[] = { 0, 0, 1, 2, 3, 4 };
    test_fps("fps=30:round=up", (AVRational){ 1, 25 }, 5, up_ceil, 6);
    /* 1 -> 10 fps: ten outputs per input, more than one call's worth. */
    static const int ten[] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    test_fps("fps=10", (AVRational){ 1, 1 }, 2, ten, 20);
    if (tu_failures)
        fprintf(stderr, "%d failure(s)\n", tu_failures);
    else
        printf("PASS test_chain_multi\n");
    return tu_failures ? 1 : 0;
}
