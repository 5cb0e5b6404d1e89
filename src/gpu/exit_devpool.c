/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Frames that stay on the device (exit.h), with cfg.cuda_pool (a reader's
 * frames on the GPU): the planar kernel writes into a buffer of the
 * session's device pool (devframes.c), and pop() hands that buffer over:
 * the frame never leaves device memory. The pool's frames carry a mark
 * (vkcu_devpool_mark) and the key flag of the chain's output.
 */
#include <libavutil/pixdesc.h>

#include "exit.h"
#include "util/log.h"

typedef struct devpool_exit {
    vkcu_devpool *pool;
} devpool_exit;

static int devpool_wants(const vkcu_gpu *g, enum AVPixelFormat host_fmt)
{
    (void)host_fmt;
    return g->cfg.cuda_pool > 0;
}

static int devpool_open(vkcu_gpu *g, void *priv, enum AVPixelFormat dev_out, int w, int h, char *err, size_t errlen)
{
    devpool_exit *x = priv;
    (void)dev_out, (void)w, (void)h;
    int ret = vkcu_devpool_create(g->cuda_device, g->stream, g->host_size, g->cfg.cuda_pool, &x->pool, err, errlen);
    if (ret < 0)
        return ret;
    LOGV("GPU: frames stay in device memory: a pool of %d buffers of %zu bytes (%s)", g->cfg.cuda_pool, g->host_size,
         av_get_pix_fmt_name(g->host_fmt));
    return 0;
}

/* A buffer of the pool for the next output, waiting while the consumer
 * holds them all; closing the session ends the wait. */
static int devpool_take(vkcu_gpu *g, devpool_exit *x, AVBufferRef **buf, char *err, size_t errlen)
{
    for (;;) {
        int failed;
        if ((*buf = vkcu_devpool_get(x->pool, 50, &failed)))
            return 0;
        if (failed) {
            snprintf(err, errlen, "CUDA: cannot allocate a frame buffer of %zu bytes on the device", g->host_size);
            return VKCU_ERR_DEVICE;
        }
        pthread_mutex_lock(&g->lock);
        int quit = g->quit;
        pthread_mutex_unlock(&g->lock);
        if (quit) {
            snprintf(err, errlen, "GPU session closed with output pending");
            return AVERROR_EXIT;
        }
    }
}

static int devpool_write(vkcu_gpu *g, void *priv, int slot, const vkcu_gpu_frame *out, pending_frame *pf, char *err,
                         size_t errlen)
{
    devpool_exit *x = priv;
    (void)slot;
    av_buffer_unref(&pf->host);
    int ret = devpool_take(g, x, &pf->host, err, errlen);
    if (ret < 0)
        return ret;
    int e = vkcu_gpu_exit_planar(g, out, pf->host->data);
    return e ? vkcu_gpu_exit_kernel_failed(e, err, errlen) : 0;
}

static int devpool_give(vkcu_gpu *g, void *priv, const pending_frame *pf, AVFrame *out, char *err, size_t errlen)
{
    devpool_exit *x = priv;
    (void)g, (void)pf;
    if (vkcu_devpool_mark(x->pool, out) < 0) {
        snprintf(err, errlen, "out of memory");
        return AVERROR(ENOMEM);
    }
    return 0;
}

static void devpool_close(vkcu_gpu *g, void *priv)
{
    devpool_exit *x = priv;
    (void)g;
    vkcu_devpool_close(&x->pool); /* buffers still held are freed as they come back */
}

const vkcu_gpu_exit_class vkcu_gpu_exit_devpool = {
    .name = "devpool",
    .note = "",
    .priv_size = sizeof(devpool_exit),
    .row_align = 64,
    .frame_flags = AV_FRAME_FLAG_KEY,
    .wants = devpool_wants,
    .open = devpool_open,
    .write = devpool_write,
    .give = devpool_give,
    .close = devpool_close,
};
