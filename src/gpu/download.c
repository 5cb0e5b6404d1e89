/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The way out to the host: the chain's output is written in the planar
 * host layout (vkcu_gpu_host_format) into a device staging buffer, copied
 * into a pinned host buffer from a pool, and an event recorded; pop() waits
 * only on that event and hands the buffer over without a copy.
 * When the hash sink takes BLAKE3 digests (vkcu_hash_on_gpu), the staging
 * buffer holds the frame's hashed byte string (rows packed), the digest is
 * computed there, and only its 32 bytes are copied to the host.
 * With --download vulkan (VKCU_DOWNLOAD_VULKAN) the planar kernel writes
 * into the next slot of the output ring instead (outring_cuda.h: CUDA waits
 * the slot's `drained`, writes, signals `filled`) and a Vulkan transfer
 * reads the slot back into a host-visible buffer (outring_vk.h), which pop()
 * hands over after the transfer's fence.
 * With cfg.cuda_pool (a reader's frames on the GPU, devframes.c) the planar
 * kernel writes into a buffer of the session's device pool instead, and
 * pop() hands that buffer over: the frame never leaves device memory.
 * For a Vulkan encoder taking the session's frames (vkcu_gpu_encode_into)
 * the same ring carries them in the layout of the encoder's images (the
 * video encoders' NV12/P010, vkcu_cuda_to_semiplanar; the compute encoders'
 * planar images of the chain's own format, vkcu_cuda_to_planar) and one
 * Vulkan submission copies the slot into an image of the encoder's frames
 * context (vkcu_outring_to_frame): pop()
 * hands over that AV_PIX_FMT_VULKAN frame, whose timeline orders the
 * encoder after the copy, so nothing waits on the host.
 */
#include <errno.h>
#include <string.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>

#include "util/blake3.h"
#include "util/log.h"
#include "kernels/frame_kernels.h"
#include "session_priv.h"

/* align: row pitch of the staging buffer (64 for the host's consumers; 1,
 * rows packed, when the staging buffer is hashed on the GPU). */
static int host_layout(vkcu_gpu *g, enum AVPixelFormat fmt, int w, int h, int align)
{
    g->host_fmt = fmt;
    int ret = av_image_fill_linesizes(g->host_linesize, fmt, w);
    if (ret < 0)
        return ret;
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    size_t off = 0;
    for (int p = 0; p < 4; p++) {
        g->host_offset[p] = off;
        if (!g->host_linesize[p])
            continue;
        g->host_linesize[p] = FFALIGN(g->host_linesize[p], align);
        int ph = (p == 1 || p == 2) ? AV_CEIL_RSHIFT(h, d->log2_chroma_h) : h;
        off += (size_t)g->host_linesize[p] * ph;
    }
    g->host_size = off;
    return 0;
}

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

int vkcu_gpu_encode_into(vkcu_gpu *g, AVBufferRef *frames, char *why, size_t whylen)
{
    AVHWFramesContext *fc = (AVHWFramesContext *)frames->data;
    AVVulkanFramesContext *vfc = fc->hwctx;
    vkcu_slot_layout l;
    why[0] = 0;
    if (fc->format != AV_PIX_FMT_VULKAN || fc->device_ctx->type != AV_HWDEVICE_TYPE_VULKAN)
        snprintf(why, whylen, "the encoder's frames are not Vulkan frames");
    else if (((AVVulkanDeviceContext *)fc->device_ctx->hwctx)->act_dev != g->hwctx->act_dev)
        snprintf(why, whylen, "the encoder runs on another Vulkan device than the decoder and CUDA's ring");
    else if (vkcu_outring_layout(fc->sw_format, fc->width, fc->height, &l) < 0)
        snprintf(why, whylen, "the encoder takes %s images, which the output ring has no layout for",
                 av_get_pix_fmt_name(fc->sw_format));
    else if (!(vfc->usage & VK_IMAGE_USAGE_TRANSFER_DST_BIT))
        snprintf(why, whylen, "the encoder's images cannot be written by a transfer");
    if (why[0])
        return 1;
    av_buffer_unref(&g->enc_frames);
    g->enc_frames = av_buffer_ref(frames);
    if (!g->enc_frames) {
        snprintf(why, whylen, "out of memory");
        return 1;
    }
    /* A video encoder's images stay in its source layout; a compute
     * encoder's barrier takes its images from whatever layout they are in. */
    g->enc_layout = vfc->usage & VK_IMAGE_USAGE_VIDEO_ENCODE_SRC_BIT_KHR ? VK_IMAGE_LAYOUT_VIDEO_ENCODE_SRC_KHR
                                                                         : VK_IMAGE_LAYOUT_GENERAL;
    return 0;
}

/* The output ring in the encoder's layout, when the chain's output fits the
 * encoder's frames: NV12/P010 images (the Vulkan Video encoders) take any
 * 4:2:0 output of their depth, packed on the GPU; other images (the compute
 * encoders) take the chain's output in its own planar layout, byte for byte.
 * Else the frames go to the host after all (the sink uploads them). */
static int encode_ring_create(vkcu_gpu *g, enum AVPixelFormat dev_out, int w, int h, char *err, size_t errlen)
{
    AVHWFramesContext *fc = (AVHWFramesContext *)g->enc_frames->data;
    int depth16 = fc->sw_format == AV_PIX_FMT_P010;
    g->enc_semi = depth16 || fc->sw_format == AV_PIX_FMT_NV12;
    int fits = !g->enc_semi ? fc->sw_format == g->host_fmt
               : depth16    ? dev_out == AV_PIX_FMT_P010 || dev_out == AV_PIX_FMT_YUV420P10
                            : dev_out == AV_PIX_FMT_NV12 || dev_out == AV_PIX_FMT_YUV420P;
    if (!fits || fc->width != w || fc->height != h || vkcu_outring_layout(fc->sw_format, w, h, &g->enc_slot) < 0) {
        LOGV("GPU: %s %dx%d frames do not fit the encoder's %s %dx%d images; they go through the host",
             av_get_pix_fmt_name(dev_out), w, h, av_get_pix_fmt_name(fc->sw_format), fc->width, fc->height);
        av_buffer_unref(&g->enc_frames);
        return 1;
    }
    size_t size = g->enc_slot.size;
    vkcu_outring_params rp = { .vk_device = g->vk_device, .vk = &g->vk, .queue_family = g->qf,
                               .queue_index = g->queue_index, .nb_slots = g->nb_slots, .frame_size = size,
                               .export_semaphores = 1 };
    int ret = vkcu_outring_create(&rp, &g->outring, err, errlen);
    if (ret == 0)
        ret = vkcu_outring_cuda_import(&g->outring_cu, g->outring, size, err, errlen);
    g->imports += g->outring_cu.imports;
    if (ret == 0)
        LOGV("GPU: output ring: %d slots of %zu bytes (%s, %s), copied into the encoder's images on the GPU",
             g->nb_slots, size, av_get_pix_fmt_name(fc->sw_format), g->enc_semi ? "packed on the GPU" : "as the chain writes it");
    return ret;
}

int vkcu_gpu_download_create(vkcu_gpu *g, char *err, size_t errlen)
{
    int ret = 0;
    const vkcu_video_format *out_fmt = g->chain && g->chain->nb_ops ? &g->chain->ops[g->chain->nb_ops - 1]->out : NULL;
    /* Host layout: the chain's output, planar. */
    enum AVPixelFormat dev_out = out_fmt ? out_fmt->pix_fmt : g->ring_fmt;
    int ow = out_fmt ? out_fmt->width : g->ring_w, oh = out_fmt ? out_fmt->height : g->ring_h;
    g->digest = g->cfg.digest_instead && g->cfg.digest_instead(g->cfg.opaque, vkcu_gpu_host_format(dev_out));
    ret = host_layout(g, vkcu_gpu_host_format(dev_out), ow, oh, g->digest ? 1 : 64);
    if (ret < 0)
        goto fail;
    if (g->enc_frames && !g->digest && g->cfg.frames_wanted &&
        (ret = encode_ring_create(g, dev_out, ow, oh, err, errlen)) <= 0)
        return ret;
    /* Frames that stay on the device: the pool's buffers take the staging
     * buffers' place and are handed over themselves. */
    if (g->cfg.cuda_pool > 0 && !g->digest && !g->enc_frames && g->cfg.frames_wanted) {
        if ((ret = vkcu_devpool_create(g->cuda_device, g->stream, g->host_size, g->cfg.cuda_pool, &g->devpool, err,
                                       errlen)) < 0)
            return ret;
        LOGV("GPU: frames stay in device memory: a pool of %d buffers of %zu bytes (%s)", g->cfg.cuda_pool,
             g->host_size, av_get_pix_fmt_name(g->host_fmt));
        return 0;
    }
    /* Frames that reach the host leave through the output ring when asked;
     * a digest (32 bytes) stays a CUDA copy, and the null sink reads nothing. */
    if (g->cfg.vulkan_download && !g->digest && g->cfg.frames_wanted) {
        vkcu_outring_params rp = { .vk_device = g->vk_device, .vk = &g->vk, .queue_family = g->qf,
                                   .queue_index = g->queue_index, .nb_slots = g->nb_slots,
                                   .frame_size = g->host_size, .export_semaphores = 1 };
        ret = vkcu_outring_create(&rp, &g->outring, err, errlen);
        if (ret == 0)
            ret = vkcu_outring_cuda_import(&g->outring_cu, g->outring, g->host_size, err, errlen);
        g->imports += g->outring_cu.imports;
        if (ret < 0)
            return ret;
        LOGV("GPU: output ring: %d slots of %zu bytes (%s), read back by Vulkan", g->nb_slots, g->host_size,
             av_get_pix_fmt_name(g->host_fmt));
        return 0;
    }
    for (int s = 0; s < g->nb_slots; s++)
        CU_CHECK(cudaMalloc((void **)&g->slot[s].staging, g->host_size));
    if (g->digest) {
        CU_CHECK(cudaMalloc(&g->b3_scratch, vkcu_cuda_blake3_scratch(g->host_size)));
        CU_CHECK(cudaMalloc((void **)&g->b3_digest, VKCU_BLAKE3_LEN));
        CU_CHECK(cudaHostAlloc((void **)&g->digests, MAX_PENDING * VKCU_BLAKE3_LEN, cudaHostAllocDefault));
    } else {
        g->host_pool = av_buffer_pool_init2(g->host_size, NULL, pinned_pool_alloc, NULL);
        if (!g->host_pool)
            return AVERROR(ENOMEM);
    }
    return 0;
fail:
    return ret;
}

/* A buffer of the device pool for the next output, waiting while the
 * consumer holds them all; closing the session ends the wait. */
static int devpool_take(vkcu_gpu *g, AVBufferRef **buf, char *err, size_t errlen)
{
    for (;;) {
        int failed;
        if ((*buf = vkcu_devpool_get(g->devpool, 50, &failed)))
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

/* Waits for room in the output queue: an operator that multiplies frames
 * (fps, one frame per field) can give more outputs for one input than the
 * queue holds. The caller pops while the queue is full, so the wait ends;
 * closing the session ends it too. */
int vkcu_gpu_reserve_pending(vkcu_gpu *g, char *err, size_t errlen)
{
    pthread_mutex_lock(&g->lock);
    while (g->pend_tail - g->pend_head >= MAX_PENDING - 1 && !g->quit && !g->werr)
        pthread_cond_wait(&g->cond, &g->lock);
    int stop = g->pend_tail - g->pend_head >= MAX_PENDING - 1;
    pthread_mutex_unlock(&g->lock);
    if (stop) {
        snprintf(err, errlen, "GPU session closed with output pending");
        return AVERROR_EXIT;
    }
    return 0;
}

pending_frame *vkcu_gpu_pending_next(vkcu_gpu *g)
{
    int i = (int)(g->pend_tail % MAX_PENDING);
    pending_frame *pf = &g->pending[i];
    pf->ev_start = g->events[i][0];
    pf->ev_ops = g->events[i][1];
    pf->ev_end = g->events[i][2];
    pf->vk_timed = 0;
    return pf;
}

static int start_download(vkcu_gpu *g, int s, const vkcu_gpu_frame *out, int pend_idx, int *out_slot, char *err,
                          size_t errlen)
{
    int ret = 0;
    pending_frame *pf = &g->pending[pend_idx];
    uint8_t *staging = g->outring ? NULL : s >= 0 ? g->slot[s].staging : g->slot[0].staging;
    *out_slot = -1;
    if (g->enc_frames) {
        /* The encoder's image first: once CUDA has taken the slot, only the
         * copy's submission may follow (it waits `filled`, signals `drained`). */
        if (!(pf->vkframe = av_frame_alloc())) {
            snprintf(err, errlen, "out of memory");
            return AVERROR(ENOMEM);
        }
        if ((ret = av_hwframe_get_buffer(g->enc_frames, pf->vkframe, 0)) < 0) {
            char buf[128];
            snprintf(err, errlen, "cannot get a frame of the Vulkan encoder: %s", vkcu_err_str(ret, buf, sizeof(buf)));
            av_frame_free(&pf->vkframe);
            return VKCU_ERR_DEVICE;
        }
    }
    if (g->outring && (ret = vkcu_outring_cuda_begin(&g->outring_cu, g->stream, out_slot, &staging, err, errlen)) < 0)
        return ret;
    if (g->devpool) {
        av_buffer_unref(&pf->host);
        if ((ret = devpool_take(g, &pf->host, err, errlen)) < 0)
            return ret;
        staging = pf->host->data;
    }
    /* No CPU consumer (null sink): frames end on the GPU. */
    int e = !g->cfg.frames_wanted ? 0
            : g->enc_frames && g->enc_semi
                ? vkcu_cuda_to_semiplanar(out, staging, g->enc_slot.offset, g->enc_slot.pitch, g->stream)
            : g->enc_frames
                ? vkcu_cuda_to_planar(out, g->host_fmt, staging, g->enc_slot.offset, g->enc_slot.pitch, g->stream)
                : vkcu_cuda_to_planar(out, g->host_fmt, staging, g->host_offset, g->host_linesize, g->stream);
    if (!e && g->digest)
        e = vkcu_cuda_blake3(staging, g->host_size, g->b3_scratch, g->b3_digest, g->stream);
    if (e) {
        snprintf(err, errlen, "CUDA: download kernel failed: %s", cudaGetErrorString((cudaError_t)e));
        return VKCU_ERR_DEVICE;
    }
    CU_CHECK(cudaEventRecord(pf->ev_ops, g->stream));
    if (g->outring && (ret = vkcu_outring_cuda_end(&g->outring_cu, *out_slot, g->stream, err, errlen)) < 0)
        return ret;
    return 0;
fail:
    return ret;
}

static int finish_host_copy(vkcu_gpu *g, int s, const vkcu_gpu_frame *out, int out_slot, char *err, size_t errlen)
{
    int ret = 0;
    int idx = (int)(g->pend_tail % MAX_PENDING);
    pending_frame *pf = &g->pending[idx];
    pf->ticket = -1;
    if (g->enc_frames) {
        /* The encoder's own image, filled from the slot on the GPU; the
         * frame's timeline (not a host wait) orders the encoder after it. */
        int ticket;
        if ((ret = vkcu_outring_to_frame(g->outring, out_slot, pf->vkframe, &g->enc_slot, g->enc_layout, &ticket,
                                         err, errlen)) < 0)
            goto fail;
    } else if (g->outring) {
        /* After CUDA queued `filled` (a binary wait only after its signal). */
        if ((ret = vkcu_outring_readback(g->outring, out_slot, 1, 1, &pf->host, &pf->ticket, err, errlen)) < 0)
            return ret;
        g->dtoh_bytes += (int64_t)g->host_size;
    } else if (g->devpool) {
        /* The planes are in pf->host, on the device, already. */
    } else if (g->digest) {
        CU_CHECK(cudaMemcpyAsync(g->digests + (size_t)idx * VKCU_BLAKE3_LEN, g->b3_digest, VKCU_BLAKE3_LEN,
                                 cudaMemcpyDeviceToHost, g->stream));
        g->dtoh_bytes += VKCU_BLAKE3_LEN;
    } else if (g->cfg.frames_wanted) {
        pf->host = av_buffer_pool_get(g->host_pool);
        if (!pf->host) {
            snprintf(err, errlen, "cannot allocate pinned host memory");
            return AVERROR(ENOMEM);
        }
        uint8_t *staging = s >= 0 ? g->slot[s].staging : g->slot[0].staging;
        CU_CHECK(cudaMemcpyAsync(pf->host->data, staging, g->host_size, cudaMemcpyDeviceToHost, g->stream));
        g->dtoh_bytes += (int64_t)g->host_size;
    }
    CU_CHECK(cudaEventRecord(pf->ev_end, g->stream));
    pf->slot = s;
    pf->pts = out->pts;
    pf->duration = out->duration;
    pf->flags = out->flags & (AV_FRAME_FLAG_INTERLACED | AV_FRAME_FLAG_TOP_FIELD_FIRST | AV_FRAME_FLAG_CORRUPT |
                              (g->devpool ? AV_FRAME_FLAG_KEY : 0));
    pf->repeat_pict = out->repeat_pict;
    pf->host_fmt = g->host_fmt;
    const vkcu_video_format *of = g->chain && g->chain->nb_ops ? &g->chain->ops[g->chain->nb_ops - 1]->out : NULL;
    pf->width = of ? of->width : g->ring_w;
    pf->height = of ? of->height : g->ring_h;
    pthread_mutex_lock(&g->lock);
    g->pend_tail++;
    if (vkcu_gpu_in_flight(g) > g->max_in_flight)
        g->max_in_flight = vkcu_gpu_in_flight(g);
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
    return 0;
fail:
    av_buffer_unref(&pf->host);
    av_frame_free(&pf->vkframe);
    return ret;
}

int vkcu_gpu_download(vkcu_gpu *g, int slot, const vkcu_gpu_frame *out, char *err, size_t errlen)
{
    int out_slot;
    int ret = start_download(g, slot, out, (int)(g->pend_tail % MAX_PENDING), &out_slot, err, errlen);
    if (ret < 0)
        return ret;
    return finish_host_copy(g, slot, out, out_slot, err, errlen);
}

int vkcu_gpu_pop(vkcu_gpu *g, AVFrame *out, int wait, char *err, size_t errlen)
{
    int ret = 0;
    pthread_mutex_lock(&g->lock);
    while (g->pend_tail == g->pend_head) {
        if (g->werr) {
            ret = g->werr;
            snprintf(err, errlen, "%s", g->werrmsg);
            pthread_mutex_unlock(&g->lock);
            return ret;
        }
        if (!wait || vkcu_queue_idle(g->inq)) {
            pthread_mutex_unlock(&g->lock);
            return AVERROR(EAGAIN);
        }
        pthread_cond_wait(&g->cond, &g->lock);
    }
    pending_frame *pf = &g->pending[g->pend_head % MAX_PENDING];
    pthread_mutex_unlock(&g->lock);
    if (vkcu_gpu_bind(g, err, errlen) < 0) { /* bound at the first push: only the error is read here */
        snprintf(err, errlen, "%s", g->bind_err);
        return g->bind_ret;
    }
    cudaError_t q = cudaEventQuery(pf->ev_end);
    if (q == cudaErrorNotReady) {
        if (!wait)
            return AVERROR(EAGAIN);
        CU_CHECK(cudaEventSynchronize(pf->ev_end));
    } else if (q != cudaSuccess) {
        snprintf(err, errlen, "CUDA: %s (GPU lost?)", cudaGetErrorString(q));
        return VKCU_ERR_DEVICE;
    }
    if (pf->ticket >= 0) {
        uint64_t timeout = wait ? (uint64_t)(g->cfg.stall_timeout_ms > 0 ? g->cfg.stall_timeout_ms : 10000) * 1000000ull : 0;
        if ((ret = vkcu_outring_wait(g->outring, pf->ticket, timeout, err, errlen)) < 0)
            return ret;
    }
    vkcu_gpu_stats_frame(g, pf);
    if (pf->vkframe) {
        av_frame_unref(out);
        av_frame_move_ref(out, pf->vkframe);
        av_frame_free(&pf->vkframe);
    } else {
        out->format = pf->host_fmt;
        out->width = pf->width;
        out->height = pf->height;
        out->buf[0] = pf->host;
        pf->host = NULL;
        for (int p = 0; p < 4 && out->buf[0]; p++) {
            out->data[p] = g->host_linesize[p] ? out->buf[0]->data + g->host_offset[p] : NULL;
            out->linesize[p] = g->host_linesize[p];
        }
    }
    if (g->digest) {
        AVBufferRef *d = av_buffer_allocz(sizeof(vkcu_frame_digest));
        if (!d) {
            snprintf(err, errlen, "out of memory");
            return AVERROR(ENOMEM);
        }
        vkcu_frame_digest *fd = (vkcu_frame_digest *)d->data;
        fd->algo = VKCU_HASH_BLAKE3;
        fd->size = (int)g->host_size;
        memcpy(fd->digest, g->digests + (g->pend_head % MAX_PENDING) * VKCU_BLAKE3_LEN, VKCU_BLAKE3_LEN);
        av_buffer_unref(&out->opaque_ref);
        out->opaque_ref = d;
    }
    out->pts = pf->pts;
    out->duration = pf->duration;
    out->flags = (out->flags & ~(AV_FRAME_FLAG_INTERLACED | AV_FRAME_FLAG_TOP_FIELD_FIRST | AV_FRAME_FLAG_CORRUPT |
                                 (g->devpool ? AV_FRAME_FLAG_KEY : 0))) | pf->flags;
    if (g->devpool && vkcu_devpool_mark(g->devpool, out) < 0) {
        snprintf(err, errlen, "out of memory");
        return AVERROR(ENOMEM);
    }
    out->repeat_pict = pf->repeat_pict;
    pthread_mutex_lock(&g->lock);
    g->pend_head++;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
    return 0;
fail:
    return ret;
}

void vkcu_gpu_download_release(vkcu_gpu *g)
{
    /* Pinned buffers still held downstream (a frame queued behind the
     * encoder) outlive the pool: each is freed when its last user lets go. */
    av_buffer_pool_uninit(&g->host_pool);
    vkcu_devpool_close(&g->devpool); /* buffers still held are freed as they come back */
    /* The output ring: CUDA's imports before the Vulkan objects they map. */
    vkcu_outring_cuda_release(&g->outring_cu);
    vkcu_outring_free(&g->outring);
    for (int s = 0; s < g->nb_slots; s++) {
        if (g->slot[s].staging)
            cudaFree(g->slot[s].staging);
        g->slot[s].staging = NULL;
    }
    if (g->b3_scratch)
        cudaFree(g->b3_scratch);
    if (g->b3_digest)
        cudaFree(g->b3_digest);
    if (g->digests)
        cudaFreeHost(g->digests);
    g->b3_scratch = NULL;
    g->b3_digest = NULL;
    g->digests = NULL;
    g->digest = 0;
}

void vkcu_gpu_download_free(vkcu_gpu *g)
{
    for (int i = 0; i < MAX_PENDING; i++) {
        av_buffer_unref(&g->pending[i].host);
        av_frame_free(&g->pending[i].vkframe);
    }
    av_buffer_unref(&g->enc_frames);
    vkcu_gpu_download_release(g);
}

const vkcu_frame_digest *vkcu_frame_digest_get(const AVFrame *frame)
{
    if (frame->data[0] || !frame->opaque_ref || frame->opaque_ref->size != sizeof(vkcu_frame_digest))
        return NULL;
    return (const vkcu_frame_digest *)frame->opaque_ref->data;
}
