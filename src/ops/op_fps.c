/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `fps`: constant frame rate by dropping and repeating frames, choosing for
 * each output time the same source frame as FFmpeg's fps filter (its
 * documented behaviour, FFmpeg 7.1, without start_time):
 *
 *   - every input pts is moved to the output time base 1/rate with the
 *     `round` mode; the first frame's is the first output time;
 *   - with two frames buffered, the older is dropped when the newer one's
 *     time is at or before the next output time; otherwise the older is
 *     output (again) at the next output time, which then advances by one;
 *   - at the end of the stream, the end time (the last frame's pts plus its
 *     duration, rounded with `round`, or upwards with eof_action=pass) takes
 *     the part of the newer frame: the last frame fills the grid up to it.
 *
 * Output frames last one tick of 1/rate; the output format's time base and
 * frame rate become 1/rate and rate, so that sinks encode at that rate.
 * One input can give several outputs (VKCU_OP_MORE, op.h). Frames are kept
 * by reference on the CPU and copied into operator-owned device memory on
 * the GPU (the input's ring slot is reused once the call returns).
 */
#include <cuda_runtime_api.h>
#include <math.h>
#include <libavutil/eval.h>
#include <libavutil/mathematics.h>

#include "kernels/frame_kernels.h"
#include "util/log.h"
#include "op.h"

enum { EOF_ROUND, EOF_PASS };

typedef struct fps_priv {
    AVRational rate, tb_in, tb_out;
    enum AVRounding rounding;
    int eof_action;
    /* the buffered frames, oldest first: store index and pts in tb_out */
    int nb, store[2];
    int64_t pts[2];
    int64_t next_pts;   /* the next output time, AV_NOPTS_VALUE before the first frame */
    int64_t end_in;     /* the last input's pts + duration, in tb_in */
    int eof;
    int64_t eof_pts;
    /* CPU: references; GPU: device copies */
    AVFrame *cpu[2];
    vkcu_gpu_frame gpu[2];
    uint8_t *mem[2][4];
} fps_priv;

static const vkcu_op_key fps_keys[] = {
    { "fps", VKCU_KEY_STRING, "25", 0, 0, NULL,
      "output frame rate, an expression as ffmpeg's fps=: 30, 30000/1001, 29.97, ntsc, pal, film, ntsc_film, source_fps/2" },
    { "round", VKCU_KEY_ENUM, "near", 0, 0, "near|down|up|zero|inf",
      "rounding of timestamps onto the output grid (ffmpeg's fps round=)" },
    { "eof_action", VKCU_KEY_ENUM, "round", 0, 0, "round|pass",
      "end of stream: round the end time like the others, or keep the last frame up to it (rounded up)" },
    { 0 },
};

/* The rate as ffmpeg's fps filter reads it: an expression (30, 30000/1001,
 * 29.97, ntsc, source_fps/2, ...) whose value becomes the nearest fraction
 * with terms up to INT_MAX, so 29.97 is 2997/100, not 30000/1001. */
static int parse_rate(const char *text, AVRational source, AVRational *rate, char *why, size_t whylen)
{
    static const char *const names[] = { "source_fps", "ntsc", "pal", "film", "ntsc_film", NULL };
    const double values[] = { source.num > 0 && source.den > 0 ? av_q2d(source) : NAN, 30000.0 / 1001.0, 25.0, 24.0,
                              24000.0 / 1001.0 };
    double res = NAN;
    if (av_expr_parse_and_eval(&res, text, names, values, NULL, NULL, NULL, NULL, NULL, 0, NULL) < 0) {
        snprintf(why, whylen, "fps='%s' is not a frame rate (write 30, 30000/1001, 29.97, ntsc or source_fps/2)", text);
        return -1;
    }
    if (isnan(res) && source.num <= 0) {
        snprintf(why, whylen, "fps=%s: the input's frame rate (source_fps) is unknown", text);
        return -1;
    }
    if (!(res >= 0.001 && res <= 1000.0)) {
        snprintf(why, whylen, "fps=%s is %g, outside 0.001 to 1000 frames per second", text, res);
        return -1;
    }
    *rate = av_d2q(res, INT_MAX);
    return 0;
}

static int fps_check(const vkcu_op *op, char *why, size_t whylen)
{
    /* Any input rate: this checks the text; init checks the value again. */
    AVRational r;
    return parse_rate(vkcu_op_str(op, "fps"), (AVRational){ 25, 1 }, &r, why, whylen);
}

static int fps_init(vkcu_op *op, const vkcu_video_format *in, vkcu_video_format *out)
{
    fps_priv *p = op->priv;
    char why[256];
    if (parse_rate(vkcu_op_str(op, "fps"), in->frame_rate, &p->rate, why, sizeof(why)) < 0) {
        LOGE("%s: %s", op->cls->name, why);
        return VKCU_ERR_USAGE;
    }
    if (in->time_base.num <= 0 || in->time_base.den <= 0) {
        LOGE("%s: the input's frames have no time base to retime them by", op->cls->name);
        return VKCU_ERR_USAGE;
    }
    static const enum AVRounding modes[] = { AV_ROUND_NEAR_INF, AV_ROUND_DOWN, AV_ROUND_UP, AV_ROUND_ZERO,
                                             AV_ROUND_INF };
    p->rounding = modes[vkcu_op_enum(op, "round")];
    p->eof_action = vkcu_op_enum(op, "eof_action");
    p->tb_in = in->time_base;
    p->tb_out = av_inv_q(p->rate);
    p->next_pts = AV_NOPTS_VALUE;
    p->store[0] = 0;
    p->store[1] = 1;
    *out = *in;
    out->time_base = p->tb_out;
    out->frame_rate = p->rate;
    return 0;
}

static int64_t to_out(const fps_priv *p, int64_t pts, enum AVRounding rnd)
{
    return av_rescale_q_rnd(pts, p->tb_in, p->tb_out, rnd | AV_ROUND_PASS_MINMAX);
}

/* Takes a new input's timing; the caller stores its picture in store[nb - 1]. */
static void push_frame(fps_priv *p, int64_t pts, int64_t duration)
{
    p->pts[p->nb++] = to_out(p, pts, p->rounding);
    if (p->next_pts == AV_NOPTS_VALUE)
        p->next_pts = p->pts[0];
    p->end_in = pts + (duration > 0 ? duration : 0);
}

/* Drops what the grid has passed; 1 when the oldest frame is due at
 * next_pts, 0 when more input (or the end) is needed first. */
static int advance(fps_priv *p)
{
    for (;;) {
        if (!p->nb || (!p->eof && p->nb < 2))
            return 0;
        if ((p->nb == 2 && p->pts[1] <= p->next_pts) || (p->eof && p->eof_pts <= p->next_pts)) {
            int s = p->store[0];
            p->store[0] = p->store[1];
            p->store[1] = s;
            p->pts[0] = p->pts[1];
            p->nb--;
            continue;
        }
        return 1;
    }
}

/* The frame flow common to both backends, after an input was pushed (or
 * none, in == NULL). Returns 1 when a frame is due (store[0] at *pts),
 * AVERROR(EAGAIN) for more input, AVERROR_EOF at the end. */
static int step(fps_priv *p, int have_input, int64_t *pts)
{
    if (!advance(p)) {
        if (have_input)
            return AVERROR(EAGAIN);
        /* in == NULL with nothing ready: the end of the stream (op.h). */
        if (!p->eof) {
            p->eof = 1;
            p->eof_pts = to_out(p, p->end_in, p->eof_action == EOF_PASS ? AV_ROUND_UP : p->rounding);
        }
        if (!advance(p))
            return AVERROR_EOF;
    }
    *pts = p->next_pts++;
    return 1;
}

/* An input while outputs are still due breaks the driver's side of op.h. */
static int accept_input(const vkcu_op *op)
{
    const fps_priv *p = op->priv;
    if (p->nb < 2 && !p->eof)
        return 0;
    LOGE("%s: internal: an input arrived before the ready outputs were taken", op->cls->name);
    return AVERROR_BUG;
}

static int fps_run_cpu(vkcu_op *op, const AVFrame *in, AVFrame *out)
{
    fps_priv *p = op->priv;
    int ret;
    if (in) {
        if ((ret = accept_input(op)) < 0)
            return ret;
        AVFrame **slot = &p->cpu[p->store[p->nb]];
        if (!*slot && !(*slot = av_frame_alloc()))
            return AVERROR(ENOMEM);
        av_frame_unref(*slot);
        if ((ret = av_frame_ref(*slot, in)) < 0)
            return ret;
        push_frame(p, in->pts, in->duration);
    }
    int64_t pts;
    ret = step(p, !!in, &pts);
    if (ret < 0)
        return ret;
    /* A repeated frame is another reference to the same picture. */
    av_frame_unref(out);
    if ((ret = av_frame_ref(out, p->cpu[p->store[0]])) < 0)
        return ret;
    out->pts = pts;
    out->duration = 1;
    return advance(p) ? VKCU_OP_MORE : 0;
}

static int fps_run_gpu(vkcu_op *op, const vkcu_gpu_frame *in, vkcu_gpu_frame *out, void *stream)
{
    fps_priv *p = op->priv;
    int ret;
    if (in) {
        if ((ret = accept_input(op)) < 0)
            return ret;
        int s = p->store[p->nb];
        vkcu_gpu_frame *dst = &p->gpu[s];
        if (!p->mem[s][0]) {
            *dst = *in;
            for (int pl = 0; pl < in->nb_planes; pl++) {
                int bytes, comps, lw, lh;
                vkcu_plane_layout(in->fmt.pix_fmt, pl, &bytes, &comps, &lw, &lh);
                size_t pitch;
                if (cudaMallocPitch((void **)&p->mem[s][pl], &pitch, (size_t)in->plane[pl].width * bytes * comps,
                                    in->plane[pl].height) != cudaSuccess)
                    return AVERROR(ENOMEM);
                dst->plane[pl] = (vkcu_gpu_plane){ .ptr = p->mem[s][pl], .pitch = pitch,
                                                   .width = in->plane[pl].width, .height = in->plane[pl].height };
            }
        }
        /* Ordered on the stream after the kernels that read this store's
         * previous picture (the outputs given before). */
        int e = vkcu_cuda_copy_frame(in, dst, stream);
        if (e) {
            LOGE("%s: CUDA copy failed: %s", op->cls->name, cudaGetErrorString((cudaError_t)e));
            return AVERROR_EXTERNAL;
        }
        dst->fmt = in->fmt;
        dst->flags = in->flags; /* a repeated frame keeps its source's field order, as on the CPU */
        dst->repeat_pict = in->repeat_pict;
        push_frame(p, in->pts, in->duration);
    }
    int64_t pts;
    ret = step(p, !!in, &pts);
    if (ret < 0)
        return ret;
    *out = p->gpu[p->store[0]];
    out->pts = pts;
    out->duration = 1;
    return advance(p) ? VKCU_OP_MORE : 0;
}

static void fps_uninit(vkcu_op *op)
{
    fps_priv *p = op->priv;
    for (int s = 0; s < 2; s++) {
        av_frame_free(&p->cpu[s]);
        for (int pl = 0; pl < 4; pl++)
            if (p->mem[s][pl])
                cudaFree(p->mem[s][pl]);
    }
}

const vkcu_op_class vkcu_op_fps = {
    .name = "fps",
    .help = "constant frame rate: drops and repeats frames, the same ones as ffmpeg's fps filter",
    .accuracy = "exact: the frames, timestamps and durations of ffmpeg's fps filter; CPU and CUDA identical",
    .keys = fps_keys,
    .priv_size = sizeof(fps_priv),
    .check = fps_check,
    .init = fps_init,
    .run_cpu = fps_run_cpu,
    .run_gpu = fps_run_gpu,
    .uninit = fps_uninit,
};
