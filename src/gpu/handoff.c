/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The handoff thread: Vulkan submissions and CUDA launches run beside the
 * decoder's thread, which only queues decoded frames (push). Per frame the
 * thread takes the next ring slot, has the frame copied into it on the GPU
 * (or uploads a software frame), runs the chain and starts the download;
 * the CPU waits for none of it. An error is kept (werr) and reported by the
 * next push or pop; frames queued after it are only released.
 */
#include <errno.h>
#include <string.h>
#include <libavutil/error.h>
#include <libavutil/pixdesc.h>

#include "session_priv.h"
#include "util/log.h"

/* The first frame (and the first after a format change) fixes the ring's
 * format and size, the host layout, and sets up the chain's GPU side. */
static int first_frame(vkcu_gpu *g, enum AVPixelFormat sw, int w, int h, char *err, size_t errlen)
{
    int ret = vkcu_gpu_ring_create(g, sw, w, h, err, errlen);
    if (ret < 0 || (ret = vkcu_gpu_exit_open(g, err, errlen)) < 0)
        return ret;
    g->ring_ready = 1;
    LOGV("GPU: interop ring: %d slots x %d planes (%s %dx%d), %lld CUDA imports%s", g->nb_slots,
         g->slot[0].nb_planes, av_get_pix_fmt_name(sw), w, h, (long long)g->imports,
         vkcu_gpu_exit_note(g));
    return vkcu_gpu_chain_init(g, err, errlen);
}

/* A format change mid-stream (gpu.h): once the job has popped every frame
 * of the old format (their host buffers, digests and output-ring tickets
 * belong to the old layout), the GPU is made idle and the rings and the
 * download are freed as at close, CUDA's side first, then made again for
 * the new format, each new slot imported once; the chain's GPU side is set
 * up again. The decoder's images are FFmpeg's: nothing of them is kept. */
static int rebuild(vkcu_gpu *g, enum AVPixelFormat sw, int w, int h, char *err, size_t errlen)
{
    int ret = 0;
    pthread_mutex_lock(&g->lock);
    while (g->pend_tail != g->pend_head && !g->quit)
        pthread_cond_wait(&g->cond, &g->lock);
    int quit = g->quit;
    pthread_mutex_unlock(&g->lock);
    if (quit) {
        snprintf(err, errlen, "GPU session closed during a format change");
        return AVERROR_EXIT;
    }
    CU_CHECK(cudaStreamSynchronize(g->stream));
    VkDevice dev = g->hwctx->act_dev;
    /* CUDA has waited every copy's `ready`: the fences are signalled, or about to be. */
    uint64_t timeout = (uint64_t)(g->cfg.stall_timeout_ms > 0 ? g->cfg.stall_timeout_ms : 5000) * 1000000ull;
    for (int s = 0; s < g->nb_slots; s++) {
        frame_slot *sl = &g->slot[s];
        if (!sl->submitted)
            continue;
        VkResult r = g->vk.vkWaitForFences(dev, 1, &sl->fence, VK_TRUE, timeout);
        if (r != VK_SUCCESS) {
            snprintf(err, errlen, "Vulkan: handoff of slot %d did not complete before a format change (%s)", s,
                     vkcu_vk_result_str(r));
            return VKCU_ERR_DEVICE;
        }
        sl->submitted = 0;
    }
    LOGV("GPU: the stream changes format (%s %dx%d -> %s %dx%d): interop ring and download made again",
         av_get_pix_fmt_name(g->ring_fmt), g->ring_w, g->ring_h, av_get_pix_fmt_name(sw), w, h);
    vkcu_gpu_exit_release(g);
    vkcu_gpu_ring_release(g);
    g->rebuilds++;
    return first_frame(g, sw, w, h, err, errlen);
fail:
    return ret;
}

void vkcu_gpu_chain_reinit(vkcu_gpu *g)
{
    pthread_mutex_lock(&g->lock);
    g->rebuild = 1;
    pthread_mutex_unlock(&g->lock);
}

static int handoff_frame(vkcu_gpu *g, AVFrame *frame, char *err, size_t errlen)
{
    int ret = 0;
    vkcu_gpu_frame in;
    if (!frame) {
        /* Flush operators holding frames back; their outputs need no slot. */
        if (!g->ring_ready)
            return 0;
        return vkcu_gpu_chain_run(g, -1, NULL, err, errlen);
    }
    enum AVPixelFormat sw = frame->format == AV_PIX_FMT_VULKAN
                                ? ((AVHWFramesContext *)frame->hw_frames_ctx->data)->sw_format
                                : frame->format;
    int vis_w, vis_h;
    vkcu_frame_visible_size(frame, &vis_w, &vis_h);
    pthread_mutex_lock(&g->lock);
    int reinit = g->rebuild;
    g->rebuild = 0;
    pthread_mutex_unlock(&g->lock);
    if (!g->ring_ready) {
        if ((ret = first_frame(g, sw, vis_w, vis_h, err, errlen)) < 0)
            goto fail;
    } else if (reinit || sw != g->ring_fmt || vis_w != g->ring_w || vis_h != g->ring_h) {
        if ((ret = rebuild(g, sw, vis_w, vis_h, err, errlen)) < 0)
            goto fail;
    }
    if ((ret = vkcu_gpu_reserve_pending(g, err, errlen)) < 0)
        goto fail;
    int s = (int)(g->frame_no++ % g->nb_slots);
    pending_frame *pf = vkcu_gpu_pending_next(g);
    int vulkan = frame->format == AV_PIX_FMT_VULKAN;
    if (vulkan) {
        if ((ret = vkcu_gpu_record_copy(g, s, frame, err, errlen)) < 0)
            goto fail;
        pf->vk_timed = g->ts_valid;
        if ((ret = vkcu_gpu_wait_ready(g, s, err, errlen)) < 0)
            goto fail;
    } else {
        if ((ret = vkcu_gpu_ring_upload(g, s, frame, err, errlen)) < 0)
            goto fail;
    }
    CU_CHECK(cudaEventRecord(pf->ev_start, g->stream));
    vkcu_gpu_slot_frame(g, &g->slot[s], &in, frame);
    av_frame_free(&frame);
    /* None (an operator holds the frame back), one or several outputs. */
    ret = vkcu_gpu_chain_run(g, s, &in, err, errlen);
    if (ret < 0)
        return ret;
    /* The chain and the download kernels have read the slot: release it. */
    if (vulkan && (ret = vkcu_gpu_signal_done(g, s, err, errlen)) < 0)
        return ret;
    return 0;
fail:
    av_frame_free(&frame);
    return ret;
}

/* What the decoder's thread queues: a frame, or the flush at the end. */
typedef struct handoff_item {
    AVFrame *frame;
    int flush;
} handoff_item;

static void handoff_item_free(void *item)
{
    av_frame_free(&((handoff_item *)item)->frame);
}

static void *handoff_main(void *arg)
{
    vkcu_gpu *g = arg;
    char err[512];
    cudaSetDevice(g->cuda_device);
    handoff_item it;
    /* In service from the pop to vkcu_queue_done: pop() waits while a frame
     * is being handed off, whose output may be on its way. */
    while (vkcu_queue_pop(g->inq, &it, VKCU_QUEUE_WAIT | VKCU_QUEUE_SERVICE) == 0) {
        err[0] = 0;
        int ret = handoff_frame(g, it.flush ? NULL : it.frame, err, sizeof(err));
        pthread_mutex_lock(&g->lock);
        vkcu_queue_done(g->inq);
        if (ret < 0 && !g->werr) {
            g->werr = ret;
            snprintf(g->werrmsg, sizeof(g->werrmsg), "%s", err[0] ? err : av_err2str(ret));
        }
        pthread_cond_broadcast(&g->cond);
        pthread_mutex_unlock(&g->lock);
        /* After an error nothing more is handed off: a push waiting for room
         * returns the error, and what is queued is released at close. */
        if (ret < 0)
            vkcu_queue_abort(g->inq);
    }
    return NULL;
}

int vkcu_gpu_push(vkcu_gpu *g, AVFrame *frame, char *err, size_t errlen)
{
    if (vkcu_gpu_bind(g, err, errlen) < 0) {
        snprintf(err, errlen, "%s", g->bind_err);
        av_frame_free(&frame);
        return g->bind_ret;
    }
    /* At most ring-size frames in flight; the caller normally pops first,
     * so the push waits for room only briefly. */
    handoff_item it = { frame, !frame };
    int ret = vkcu_queue_push(g->inq, &it);
    if (ret == 0)
        return 0;
    pthread_mutex_lock(&g->lock);
    ret = g->werr ? g->werr : AVERROR_EXIT;
    snprintf(err, errlen, "%s", g->werr ? g->werrmsg : "GPU session closed");
    pthread_mutex_unlock(&g->lock);
    av_frame_free(&frame);
    return ret;
}

int vkcu_gpu_handoff_start(vkcu_gpu *g, char *err, size_t errlen)
{
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->cond, NULL);
    g->sync_ready = 1;
    g->inq = vkcu_queue_create(MAX_SLOTS + 1, sizeof(handoff_item));
    if (!g->inq) {
        snprintf(err, errlen, "out of memory");
        return AVERROR(ENOMEM);
    }
    if (vkcu_thread_create(&g->worker, handoff_main, g)) {
        snprintf(err, errlen, "cannot start the handoff thread");
        return AVERROR(EAGAIN);
    }
    g->worker_running = 1;
    return 0;
}

void vkcu_gpu_handoff_stop(vkcu_gpu *g)
{
    if (g->worker_running) {
        pthread_mutex_lock(&g->lock);
        g->quit = 1; /* ends a wait for room in the pending queue */
        g->werr = g->werr ? g->werr : AVERROR_EXIT;
        pthread_cond_broadcast(&g->cond);
        pthread_mutex_unlock(&g->lock);
        vkcu_queue_abort(g->inq); /* queued frames are released unprocessed */
        pthread_join(g->worker, NULL);
        g->worker_running = 0;
    }
    vkcu_queue_free(&g->inq, handoff_item_free);
}
