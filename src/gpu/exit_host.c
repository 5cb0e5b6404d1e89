/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The way out to the host (exit.h), the default: the chain's output is
 * written in the planar host layout into a device staging buffer (one per
 * ring slot), copied into a pinned host buffer from a pool, and the end
 * event recorded; pop() waits only on that event and hands the buffer over
 * without a copy. All outputs of one input (and the flushed ones) share
 * its slot's staging buffer: kernel, copy and the next kernel are ordered
 * on the one stream.
 */
#include <errno.h>
#include <libavutil/buffer.h>

#include "exit.h"

typedef struct host_exit {
    uint8_t *staging[MAX_SLOTS];   /* device */
    AVBufferPool *pool;            /* pinned host buffers of g->host_size */
} host_exit;

static void pinned_pool_free(void *opaque, uint8_t *data)
{
    (void)opaque;
    cudaFreeHost(data);
}

static AVBufferRef *pinned_pool_alloc(void *opaque, size_t size)
{
    void *ptr = NULL;
    (void)opaque;
    if (cudaHostAlloc(&ptr, size, cudaHostAllocDefault) != cudaSuccess)
        return NULL;
    AVBufferRef *b = av_buffer_create(ptr, size, pinned_pool_free, NULL, 0);
    if (!b)
        cudaFreeHost(ptr);
    return b;
}

static int host_open(vkcu_gpu *g, void *priv, enum AVPixelFormat dev_out, int w, int h, char *err, size_t errlen)
{
    host_exit *x = priv;
    int ret = 0;
    (void)dev_out, (void)w, (void)h;
    for (int s = 0; s < g->nb_slots; s++)
        CU_CHECK(cudaMalloc((void **)&x->staging[s], g->host_size));
    x->pool = av_buffer_pool_init2(g->host_size, NULL, pinned_pool_alloc, NULL);
    return x->pool ? 0 : AVERROR(ENOMEM);
fail:
    return ret;
}

static int host_write(vkcu_gpu *g, void *priv, int slot, const vkcu_gpu_frame *out, pending_frame *pf, char *err,
                      size_t errlen)
{
    host_exit *x = priv;
    (void)pf;
    int e = vkcu_gpu_exit_planar(g, out, x->staging[slot >= 0 ? slot : 0]);
    return e ? vkcu_gpu_exit_kernel_failed(e, err, errlen) : 0;
}

static int host_send(vkcu_gpu *g, void *priv, int slot, pending_frame *pf, char *err, size_t errlen)
{
    host_exit *x = priv;
    int ret = 0;
    pf->host = av_buffer_pool_get(x->pool);
    if (!pf->host) {
        snprintf(err, errlen, "cannot allocate pinned host memory");
        return AVERROR(ENOMEM);
    }
    CU_CHECK(cudaMemcpyAsync(pf->host->data, x->staging[slot >= 0 ? slot : 0], g->host_size, cudaMemcpyDeviceToHost,
                             g->stream));
    g->dtoh_bytes += (int64_t)g->host_size;
    return 0;
fail:
    return ret;
}

static void host_close(vkcu_gpu *g, void *priv)
{
    host_exit *x = priv;
    (void)g;
    /* Pinned buffers still held downstream (a frame queued behind the
     * encoder) outlive the pool: each is freed when its last user lets go. */
    av_buffer_pool_uninit(&x->pool);
    for (int s = 0; s < MAX_SLOTS; s++)
        if (x->staging[s])
            cudaFree(x->staging[s]);
}

const vkcu_gpu_exit_class vkcu_gpu_exit_host = {
    .name = "host",
    .note = "",
    .priv_size = sizeof(host_exit),
    .row_align = 64,
    .open = host_open,
    .write = host_write,
    .send = host_send,
    .close = host_close,
};
