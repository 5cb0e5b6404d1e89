/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Digests instead of frames (exit.h): when the hash sink takes BLAKE3
 * digests of frames in this layout (cfg.digest_instead, core's
 * vkcu_hash_on_gpu), each frame's hashed byte string (the planar layout,
 * rows packed) is written into a device staging buffer, its digest computed
 * there, and only the 32 bytes are copied to the host. pop() hands over a
 * frame without data whose opaque_ref holds the digest
 * (vkcu_frame_digest_get).
 */
#include <errno.h>
#include <string.h>
#include <libavutil/buffer.h>

#include "exit.h"
#include "util/blake3.h"

typedef struct digest_exit {
    uint8_t *staging[MAX_SLOTS];   /* device */
    void *scratch;                 /* device: the tree's chaining values */
    uint8_t *digest;               /* device: the last frame's digest */
    uint8_t *digests;              /* pinned: one digest per pending entry */
} digest_exit;

static int digest_wants(const vkcu_gpu *g, enum AVPixelFormat host_fmt)
{
    return g->cfg.digest_instead && g->cfg.digest_instead(g->cfg.opaque, host_fmt);
}

static int digest_open(vkcu_gpu *g, void *priv, enum AVPixelFormat dev_out, int w, int h, char *err, size_t errlen)
{
    digest_exit *x = priv;
    int ret = 0;
    (void)dev_out, (void)w, (void)h;
    for (int s = 0; s < g->nb_slots; s++)
        CU_CHECK(cudaMalloc((void **)&x->staging[s], g->host_size));
    CU_CHECK(cudaMalloc(&x->scratch, vkcu_cuda_blake3_scratch(g->host_size)));
    CU_CHECK(cudaMalloc((void **)&x->digest, VKCU_BLAKE3_LEN));
    CU_CHECK(cudaHostAlloc((void **)&x->digests, MAX_PENDING * VKCU_BLAKE3_LEN, cudaHostAllocDefault));
    return 0;
fail:
    return ret;
}

static int digest_write(vkcu_gpu *g, void *priv, int slot, const vkcu_gpu_frame *out, pending_frame *pf, char *err,
                        size_t errlen)
{
    digest_exit *x = priv;
    (void)pf;
    uint8_t *staging = x->staging[slot >= 0 ? slot : 0];
    int e = g->cfg.frames_wanted ? vkcu_gpu_exit_planar(g, out, staging) : 0;
    if (!e)
        e = vkcu_cuda_blake3(staging, g->host_size, x->scratch, x->digest, g->stream);
    return e ? vkcu_gpu_exit_kernel_failed(e, err, errlen) : 0;
}

static int digest_send(vkcu_gpu *g, void *priv, int slot, pending_frame *pf, char *err, size_t errlen)
{
    digest_exit *x = priv;
    int ret = 0;
    (void)slot;
    CU_CHECK(cudaMemcpyAsync(x->digests + (size_t)(pf - g->pending) * VKCU_BLAKE3_LEN, x->digest, VKCU_BLAKE3_LEN,
                             cudaMemcpyDeviceToHost, g->stream));
    g->dtoh_bytes += VKCU_BLAKE3_LEN;
    return 0;
fail:
    return ret;
}

static int digest_give(vkcu_gpu *g, void *priv, const pending_frame *pf, AVFrame *out, char *err, size_t errlen)
{
    digest_exit *x = priv;
    AVBufferRef *d = av_buffer_allocz(sizeof(vkcu_frame_digest));
    if (!d) {
        snprintf(err, errlen, "out of memory");
        return AVERROR(ENOMEM);
    }
    vkcu_frame_digest *fd = (vkcu_frame_digest *)d->data;
    fd->algo = VKCU_HASH_BLAKE3;
    fd->size = (int)g->host_size;
    memcpy(fd->digest, x->digests + (size_t)(pf - g->pending) * VKCU_BLAKE3_LEN, VKCU_BLAKE3_LEN);
    av_buffer_unref(&out->opaque_ref);
    out->opaque_ref = d;
    return 0;
}

static void digest_close(vkcu_gpu *g, void *priv)
{
    digest_exit *x = priv;
    (void)g;
    for (int s = 0; s < MAX_SLOTS; s++)
        if (x->staging[s])
            cudaFree(x->staging[s]);
    if (x->scratch)
        cudaFree(x->scratch);
    if (x->digest)
        cudaFree(x->digest);
    if (x->digests)
        cudaFreeHost(x->digests);
}

const vkcu_gpu_exit_class vkcu_gpu_exit_digest = {
    .name = "digest",
    .note = "; frames hashed on the GPU (BLAKE3)",
    .priv_size = sizeof(digest_exit),
    .row_align = 1,
    .wants = digest_wants,
    .open = digest_open,
    .write = digest_write,
    .send = digest_send,
    .give = digest_give,
    .close = digest_close,
};

const vkcu_frame_digest *vkcu_frame_digest_get(const AVFrame *frame)
{
    if (frame->data[0] || !frame->opaque_ref || frame->opaque_ref->size != sizeof(vkcu_frame_digest))
        return NULL;
    return (const vkcu_frame_digest *)frame->opaque_ref->data;
}
