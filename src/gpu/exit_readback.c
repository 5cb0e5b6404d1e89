/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Read back by Vulkan (exit.h), with --download vulkan
 * (VKCU_DOWNLOAD_VULKAN): the planar kernel writes into the next slot of
 * the output ring (outring_cuda.h: CUDA waits the slot's `drained`, writes,
 * signals `filled`) and a Vulkan transfer reads the slot back into a
 * host-visible buffer (outring_vk.h), which pop() hands over after the
 * transfer's fence.
 */
#include <libavutil/pixdesc.h>

#include "exit.h"
#include "util/log.h"

typedef struct readback_exit {
    vkcu_outring *ring;
    vkcu_outring_cuda cu;
    int cur;                   /* the ring slot of the output being written */
} readback_exit;

static int readback_wants(const vkcu_gpu *g, enum AVPixelFormat host_fmt)
{
    (void)host_fmt;
    return g->cfg.vulkan_download;
}

static int readback_open(vkcu_gpu *g, void *priv, enum AVPixelFormat dev_out, int w, int h, char *err, size_t errlen)
{
    readback_exit *x = priv;
    (void)dev_out, (void)w, (void)h;
    int ret = vkcu_gpu_exit_outring(g, g->host_size, &x->ring, &x->cu, err, errlen);
    if (ret < 0)
        return ret;
    LOGV("GPU: output ring: %d slots of %zu bytes (%s), read back by Vulkan", g->nb_slots, g->host_size,
         av_get_pix_fmt_name(g->host_fmt));
    return 0;
}

static int readback_write(vkcu_gpu *g, void *priv, int slot, const vkcu_gpu_frame *out, pending_frame *pf, char *err,
                          size_t errlen)
{
    readback_exit *x = priv;
    uint8_t *dst = NULL;
    (void)slot, (void)pf;
    int ret = vkcu_outring_cuda_begin(&x->cu, g->stream, &x->cur, &dst, err, errlen);
    if (ret < 0)
        return ret;
    int e = vkcu_gpu_exit_planar(g, out, dst);
    return e ? vkcu_gpu_exit_kernel_failed(e, err, errlen) : 0;
}

static int readback_send(vkcu_gpu *g, void *priv, int slot, pending_frame *pf, char *err, size_t errlen)
{
    readback_exit *x = priv;
    (void)slot;
    int ret = vkcu_outring_cuda_end(&x->cu, x->cur, g->stream, err, errlen);
    /* After CUDA queued `filled` (a binary wait only after its signal). */
    if (ret < 0 || (ret = vkcu_outring_readback(x->ring, x->cur, 1, 1, &pf->host, &pf->ticket, err, errlen)) < 0)
        return ret;
    g->dtoh_bytes += (int64_t)g->host_size;
    return 0;
}

static int readback_wait(vkcu_gpu *g, void *priv, pending_frame *pf, int wait, char *err, size_t errlen)
{
    readback_exit *x = priv;
    if (pf->ticket < 0)
        return 0;
    uint64_t timeout = wait ? (uint64_t)(g->cfg.stall_timeout_ms > 0 ? g->cfg.stall_timeout_ms : 10000) * 1000000ull : 0;
    return vkcu_outring_wait(x->ring, pf->ticket, timeout, err, errlen);
}

static int64_t readback_readbacks(const vkcu_gpu *g, const void *priv)
{
    const readback_exit *x = priv;
    (void)g;
    return x->ring ? vkcu_outring_readbacks(x->ring) : 0;
}

static void readback_close(vkcu_gpu *g, void *priv)
{
    readback_exit *x = priv;
    (void)g;
    /* CUDA's imports before the Vulkan objects they map. */
    vkcu_outring_cuda_release(&x->cu);
    vkcu_outring_free(&x->ring);
}

const vkcu_gpu_exit_class vkcu_gpu_exit_readback = {
    .name = "readback",
    .note = "",
    .priv_size = sizeof(readback_exit),
    .row_align = 64,
    .wants = readback_wants,
    .open = readback_open,
    .write = readback_write,
    .send = readback_send,
    .wait = readback_wait,
    .readbacks = readback_readbacks,
    .close = readback_close,
};
