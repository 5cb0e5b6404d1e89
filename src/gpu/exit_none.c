/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * No way out (exit.h): the job wants no frames (the null sink), so they
 * end on the GPU. pop() still hands over each frame's timestamps, size and
 * flags, without data.
 */
#include "exit.h"

static int none_wants(const vkcu_gpu *g, enum AVPixelFormat host_fmt)
{
    (void)host_fmt;
    return !g->cfg.frames_wanted;
}

static int none_open(vkcu_gpu *g, void *priv, enum AVPixelFormat dev_out, int w, int h, char *err, size_t errlen)
{
    (void)g, (void)priv, (void)dev_out, (void)w, (void)h, (void)err, (void)errlen;
    return 0;
}

static int none_write(vkcu_gpu *g, void *priv, int slot, const vkcu_gpu_frame *out, pending_frame *pf, char *err,
                      size_t errlen)
{
    (void)g, (void)priv, (void)slot, (void)out, (void)pf, (void)err, (void)errlen;
    return 0;
}

static void none_close(vkcu_gpu *g, void *priv)
{
    (void)g, (void)priv;
}

const vkcu_gpu_exit_class vkcu_gpu_exit_none = {
    .name = "none",
    .note = "",
    .row_align = 64,
    .wants = none_wants,
    .open = none_open,
    .write = none_write,
    .close = none_close,
};
