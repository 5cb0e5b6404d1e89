/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Frame timestamps as the ffmpeg command line makes them (timing.h; 8.1, unchanged from 7.1 in what tests/cli/inputs.sh compares).
 *
 * The rules follow fftools' decoder (timestamp extrapolation and the frame
 * duration estimate) and its frame-rate conversion at the encoder input
 * (fps_mode). They matter most for inputs whose timestamps are missing
 * (raw H.264/HEVC: the demuxer's 1/1200000 time base and made-up times),
 * repeated or out of order: the output must neither be refused by the
 * muxer nor last a fraction of the input.
 */
#include <math.h>
#include <string.h>
#include <libavutil/mathematics.h>

#include "timing.h"

void vkcu_frame_clock_init(vkcu_frame_clock *c, const AVFormatContext *fmt, const AVStream *st, int64_t origin)
{
    memset(c, 0, sizeof(*c));
    c->tb = st->time_base;
    c->avg_rate = st->avg_frame_rate;
    c->guess_rate = av_guess_frame_rate((AVFormatContext *)fmt, (AVStream *)st, NULL);
    c->unreliable = !!(fmt->iformat->flags & AVFMT_NOTIMESTAMPS);
    c->origin = origin;
    c->last_pts = AV_NOPTS_VALUE;
}

void vkcu_frame_clock_packet(const vkcu_frame_clock *c, AVPacket *pkt)
{
    if (c->unreliable) {
        pkt->pts = AV_NOPTS_VALUE;
        pkt->dts = AV_NOPTS_VALUE;
    }
}

/* How long frame f lasts, by the evidence at hand: the container's duration
 * where it has timestamps, the codec's frame rate where it has none, else
 * the gap to the previous frame, else the stream's average rate. */
static int64_t estimate_duration(const vkcu_frame_clock *c, const AVCodecContext *dec, const AVFrame *f)
{
    const int64_t gap = c->last_pts != AV_NOPTS_VALUE ? f->pts - c->last_pts : -1;
    /* libavformat makes up a duration of 1 tick where the container has
     * none; a real gap of more than two ticks exposes it. */
    const int made_up = f->duration == 1 && gap > 2;
    int64_t codec_dur = 0;
    if (f->duration > 0 && !c->unreliable && !made_up)
        return f->duration;
    if (dec && dec->framerate.num > 0 && dec->framerate.den > 0) {
        AVRational field_rate = av_mul_q(dec->framerate, (AVRational){ 2, 1 });
        codec_dur = av_rescale_q(f->repeat_pict + 2, av_inv_q(field_rate), c->tb);
    }
    if (codec_dur > 0 && c->unreliable)
        return codec_dur;
    if (gap > 0)
        return gap;
    if (f->duration > 0)
        return f->duration;
    if (codec_dur > 0)
        return codec_dur;
    if (c->avg_rate.num > 0 && c->avg_rate.den > 0) {
        int64_t d = av_rescale_q(1, av_inv_q(c->avg_rate), c->tb);
        if (d > 0)
            return d;
    }
    return FFMAX(c->last_dur, 1);
}

void vkcu_frame_clock_stamp(vkcu_frame_clock *c, const AVCodecContext *dec, AVFrame *f)
{
    f->pts = f->best_effort_timestamp;
    if (f->pts == AV_NOPTS_VALUE)
        f->pts = c->last_pts == AV_NOPTS_VALUE ? c->origin : c->last_pts + c->last_dur;
    c->last_dur = estimate_duration(c, dec, f);
    c->last_pts = f->pts;
    /* A frame without a duration lasts one frame of the guessed rate (as a
     * filter graph's output frames do in ffmpeg). */
    if (f->duration <= 0 && c->guess_rate.num > 0 && c->guess_rate.den > 0)
        f->duration = av_rescale_q(1, av_inv_q(c->guess_rate), c->tb);
}

enum vkcu_fps_mode vkcu_fps_mode_for(const AVOutputFormat *ofmt, int input_streams)
{
    enum vkcu_fps_mode mode;
    /* Images (image2) carry no timestamps and no other stream: one image
     * per frame, whatever time a trimmed output's first frame starts at
     * (a constant rate from zero would repeat the first frame to fill it). */
    if (!strcmp(ofmt->name, "image2") || !strcmp(ofmt->name, "image2pipe"))
        return VKCU_FPS_PASSTHROUGH;
    if (!strcmp(ofmt->name, "avi"))
        mode = VKCU_FPS_VFR;
    else if (ofmt->flags & AVFMT_VARIABLE_FPS)
        mode = ofmt->flags & AVFMT_NOTIMESTAMPS ? VKCU_FPS_PASSTHROUGH : VKCU_FPS_VFR;
    else
        mode = VKCU_FPS_CFR;
    /* A lone video stream need not start at zero: nothing to stay in sync with. */
    if (mode == VKCU_FPS_CFR && input_streams == 1)
        mode = VKCU_FPS_VSCFR;
    return mode;
}

void vkcu_frame_sync_init(vkcu_frame_sync *s, enum vkcu_fps_mode mode, AVRational rate, AVRational tb_in,
                          const AVRational *supported)
{
    memset(s, 0, sizeof(*s));
    s->mode = mode;
    s->tb_in = tb_in;
    if (!(rate.num > 0 && rate.den > 0))
        rate = mode == VKCU_FPS_CFR || mode == VKCU_FPS_VSCFR ? (AVRational){ 25, 1 } : (AVRational){ 0, 1 };
    if (rate.num > 0 && supported)
        rate = supported[av_find_nearest_q_idx(rate, supported)];
    s->rate = rate;
    s->tb_out = rate.num > 0 ? av_inv_q(rate) : tb_in;
}

/* The frame's pts in tb_out, unrounded: exact to 1/2^17 and kept off exact
 * midpoints, so that rounding it agrees with ffmpeg's. */
static double exact_pts(const vkcu_frame_sync *s, int64_t pts)
{
    AVRational tb = s->tb_out;
    int extra = av_clip(29 - av_log2(tb.den), 0, 16);
    tb.den <<= extra;
    double x = (double)av_rescale_q(pts, s->tb_in, tb) / (double)(1 << extra);
    if (x != (double)llrint(x))
        x += FFSIGN(x) * 1.0 / (1 << 17);
    return x;
}

static int64_t median3(const int64_t *h)
{
    int64_t a = h[0], b = h[1], c = h[2];
    if (a > b) {
        int64_t t = a;
        a = b;
        b = t;
    }
    return c < a ? a : c > b ? b : c;
}

int vkcu_frame_sync_push(vkcu_frame_sync *s, AVFrame *f, int (*emit)(void *opaque, AVFrame *f), void *opaque)
{
    const int constant = s->mode == VKCU_FPS_CFR || s->mode == VKCU_FPS_VSCFR;
    int64_t nb, nb_prev;
    if (!f) {
        /* At the end, the last frame is repeated as often as recent frames
         * were (usually not at all). */
        nb = nb_prev = median3(s->prev_hist);
    } else {
        double duration = f->duration * av_q2d(s->tb_in) / av_q2d(s->tb_out);
        double pts = exact_pts(s, f->pts);
        double delta0 = pts - s->next_pts; /* how far the frame lies from its slot */
        double delta = delta0 + duration;
        nb_prev = 0;
        nb = 1;
        if (delta0 < 0 && delta > 0 && s->mode != VKCU_FPS_PASSTHROUGH) {
            /* Overlaps the previous frame: starts at its slot, shorter. */
            pts = s->next_pts;
            duration += delta0;
            delta0 = 0;
        }
        switch (s->mode) {
        case VKCU_FPS_VSCFR:
            if (s->frame_number == 0 && delta0 >= 0.5) {
                delta = duration;
                delta0 = 0;
                s->next_pts = llrint(pts);
            }
            /* fall through */
        case VKCU_FPS_CFR:
            if (delta < -1.1)
                nb = 0;
            else if (delta > 1.1) {
                nb = llrintf((float)delta);
                if (delta0 > 1.1)
                    nb_prev = llrintf((float)(delta0 - 0.6));
            }
            f->duration = 1;
            break;
        case VKCU_FPS_VFR:
            if (delta <= -0.6)
                nb = 0;
            else if (delta > 0.6)
                s->next_pts = llrint(pts);
            f->duration = llrint(duration);
            break;
        case VKCU_FPS_PASSTHROUGH:
            s->next_pts = llrint(pts);
            f->duration = llrint(duration);
            break;
        }
    }
    memmove(s->prev_hist + 1, s->prev_hist, sizeof(s->prev_hist) - sizeof(s->prev_hist[0]));
    s->prev_hist[0] = nb_prev;
    if (f && nb > (nb_prev && s->last_dropped) + (nb > nb_prev) && nb > 3600 * 30 * 30) {
        /* A gap of more than 30 hours: a broken timestamp, not a still picture. */
        s->dropped++;
        return 0;
    }
    if (nb == 0 && f)
        s->dropped++;
    else if (nb > 1)
        s->duplicated += nb - 1;
    s->last_dropped = f && nb == nb_prev;

    int ret = 0;
    for (int64_t i = 0; i < nb && ret >= 0; i++) {
        AVFrame *in = i < nb_prev && s->prev ? s->prev : f;
        if (!in)
            break;
        in->pts = s->next_pts;
        ret = emit(opaque, in);
        s->frame_number++;
        s->next_pts++;
    }
    if (ret >= 0 && f && constant) {
        av_frame_free(&s->prev);
        if (!(s->prev = av_frame_clone(f)))
            return AVERROR(ENOMEM);
    }
    return ret;
}

void vkcu_frame_sync_free(vkcu_frame_sync *s)
{
    av_frame_free(&s->prev);
}
