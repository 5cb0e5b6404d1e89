/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The null sink: takes every frame and keeps nothing. A job with it runs
 * demux, decode and the chain and writes no output (benchmarks; decode-only
 * jobs, which also skip the chain, have it as their sink).
 */
#include "sink.h"

static int null_open(vkcu_sink *s, const vkcu_video_format *fmt, AVRational tb)
{
    (void)s, (void)fmt, (void)tb;
    return 0;
}
static int null_write(vkcu_sink *s, AVFrame *frame)
{
    (void)s, (void)frame;
    return 0;
}
static int null_close(vkcu_sink *s, int ok)
{
    (void)s, (void)ok;
    return 0;
}

const vkcu_sink_class vkcu_sink_null = {
    .name = "null",
    .open = null_open,
    .write_frame = null_write,
    .close = null_close,
};
