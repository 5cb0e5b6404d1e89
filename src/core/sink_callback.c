/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Callback sink: processed frames go to a function of the caller's
 * (vkcu compare reads two jobs' frames this way). */
#include "stage.h"

static int callback_open(vkcu_sink *s, const vkcu_video_format *fmt, AVRational tb)
{
    const vkcu_job_params *p = s->params;
    vkcu_stream_info info = {
        .tb_num = tb.num, .tb_den = tb.den,
        .fps_num = fmt->frame_rate.num, .fps_den = fmt->frame_rate.den ? fmt->frame_rate.den : 1,
        .start = 0, /* the job counts frame times from the input's start */
        .width = fmt->width, .height = fmt->height, .pix_fmt = fmt->pix_fmt,
    };
    return p->on_open ? p->on_open(p->cb_opaque, &info) : 0;
}

static int callback_write(vkcu_sink *s, AVFrame *frame)
{
    return s->params->on_frame ? s->params->on_frame(s->params->cb_opaque, frame) : 0;
}

static int callback_close(vkcu_sink *s, int ok)
{
    (void)s, (void)ok;
    return 0;
}

const vkcu_sink_class vkcu_sink_callback = {
    .name = "callback",
    .open = callback_open,
    .write_frame = callback_write,
    .close = callback_close,
};
