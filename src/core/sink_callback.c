/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Callback sink: processed frames go to a function of the caller's
 * (vkcu compare reads two jobs' frames this way; API users get a
 * vkcu_picture, which needs no FFmpeg header to read). With the job's
 * callback_timing (compare against a hash list), the frames are those the
 * hash sink would hash, timed as its lines: onto 1/frame rate by the job's
 * timing rule. */
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>

#include "sink.h"
#include "timing.h"

typedef struct callback_sink {
    int timed;              /* callback_timing: frames through `sync` */
    vkcu_frame_sync sync;
    int64_t last_pts;       /* VKCU_TIMING_DECODED: no frame goes below the previous one */
} callback_sink;

static int callback_open(vkcu_sink *s, const vkcu_video_format *fmt, AVRational tb)
{
    const vkcu_job_params *p = s->params;
    callback_sink *c = s->priv;
    if (p->callback_timing) {
        /* The hash sink's rule (core/sink_hash.c), so that frames pair with a list's lines. */
        c->timed = 1;
        vkcu_frame_sync_init(&c->sync, p->job.timing == VKCU_TIMING_DECODED ? VKCU_FPS_PASSTHROUGH : VKCU_FPS_VFR,
                             fmt->frame_rate, tb, NULL);
        c->last_pts = AV_NOPTS_VALUE;
        tb = c->sync.tb_out;
    }
    vkcu_stream_info info = {
        .tb_num = tb.num, .tb_den = tb.den,
        .fps_num = fmt->frame_rate.num, .fps_den = fmt->frame_rate.den ? fmt->frame_rate.den : 1,
        .start = 0, /* the job counts frame times from the input's start */
        .width = fmt->width, .height = fmt->height, .pix_fmt = fmt->pix_fmt,
        .format = av_get_pix_fmt_name(fmt->pix_fmt),
    };
    return p->job.on_open ? p->job.on_open(p->job.callback_opaque, &info) : 0;
}

static int deliver(vkcu_sink *s, AVFrame *frame)
{
    const vkcu_job_params *p = s->params;
    if (p->on_frame)
        return p->on_frame(p->job.callback_opaque, frame);
    if (!p->job.on_frame)
        return 0;
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(frame->format);
    int row_bytes[4] = { 0 };
    if (!d || av_image_fill_linesizes(row_bytes, frame->format, frame->width) < 0) {
        snprintf(s->err, s->errlen, "frame callback: unsupported pixel format %d", frame->format);
        return AVERROR(EINVAL);
    }
    vkcu_picture pic = {
        .width = frame->width, .height = frame->height,
        .format = d->name,
        .nb_planes = av_pix_fmt_count_planes(frame->format),
        .pts = frame->pts,
        .duration = frame->duration > 0 ? frame->duration : 0,
        .key_frame = !!(frame->flags & AV_FRAME_FLAG_KEY),
        .interlaced = !!(frame->flags & AV_FRAME_FLAG_INTERLACED),
        .top_field_first = !!(frame->flags & AV_FRAME_FLAG_TOP_FIELD_FIRST),
        .avframe = frame,
    };
    for (int i = 0; i < pic.nb_planes && i < 4; i++) {
        /* chroma planes are planes 1 and 2 (NV12's interleaved one is plane 1) */
        int sub = (i == 1 || i == 2) ? d->log2_chroma_h : 0;
        pic.data[i] = frame->data[i];
        pic.linesize[i] = frame->linesize[i];
        pic.row_bytes[i] = row_bytes[i];
        pic.rows[i] = AV_CEIL_RSHIFT(frame->height, sub);
    }
    return p->job.on_frame(p->job.callback_opaque, &pic);
}

static int timed_emit(void *opaque, AVFrame *frame)
{
    vkcu_sink *s = opaque;
    callback_sink *c = s->priv;
    if (s->params->job.timing == VKCU_TIMING_DECODED) { /* as the hash sink's lines (and ffmpeg's muxer) */
        if (c->last_pts != AV_NOPTS_VALUE && frame->pts < c->last_pts)
            frame->pts = c->last_pts;
        c->last_pts = frame->pts;
    }
    return deliver(s, frame);
}

static int callback_write(vkcu_sink *s, AVFrame *frame)
{
    callback_sink *c = s->priv;
    return c->timed ? vkcu_frame_sync_push(&c->sync, frame, timed_emit, s) : deliver(s, frame);
}

static int callback_close(vkcu_sink *s, int ok)
{
    callback_sink *c = s->priv;
    int ret = 0;
    if (!c->timed)
        return 0;
    if (ok)
        ret = vkcu_frame_sync_push(&c->sync, NULL, timed_emit, s);
    s->result->frames_dropped += c->sync.dropped;
    s->result->frames_duplicated += c->sync.duplicated;
    vkcu_frame_sync_free(&c->sync);
    c->timed = 0;
    return ret;
}

const vkcu_sink_class vkcu_sink_callback = {
    .name = "callback",
    .priv_size = sizeof(callback_sink),
    .open = callback_open,
    .write_frame = callback_write,
    .close = callback_close,
};
