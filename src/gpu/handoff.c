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

int vkcu_gpu_in_flight(const vkcu_gpu *g)
{
    return (int)(g->inq_tail - g->inq_head) + g->worker_busy + (int)(g->pend_tail - g->pend_head);
}

int vkcu_gpu_pending(const vkcu_gpu *g)
{
    vkcu_gpu *m = (vkcu_gpu *)g;
    pthread_mutex_lock(&m->lock);
    int n = vkcu_gpu_in_flight(g);
    pthread_mutex_unlock(&m->lock);
    return n;
}

int vkcu_gpu_full(const vkcu_gpu *g)
{
    return vkcu_gpu_pending(g) >= g->nb_slots;
}

/* The first frame fixes the ring's format and size, the host layout, and
 * sets up the chain's GPU side. */
static int first_frame(vkcu_gpu *g, enum AVPixelFormat sw, int w, int h, char *err, size_t errlen)
{
    int ret = vkcu_gpu_ring_create(g, sw, w, h, err, errlen);
    if (ret < 0 || (ret = vkcu_gpu_download_create(g, err, errlen)) < 0)
        return ret;
    g->ring_ready = 1;
    LOGV("GPU: interop ring: %d slots x %d planes (%s %dx%d), %lld CUDA imports%s", g->nb_slots,
         g->slot[0].nb_planes, av_get_pix_fmt_name(sw), w, h, (long long)g->imports,
         g->digest ? "; frames hashed on the GPU (BLAKE3)" : "");
    return vkcu_gpu_chain_init(g, err, errlen);
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
    if (!g->ring_ready) {
        if ((ret = first_frame(g, sw, vis_w, vis_h, err, errlen)) < 0)
            goto fail;
    } else if (sw != g->ring_fmt || vis_w != g->ring_w || vis_h != g->ring_h) {
        snprintf(err, errlen, "the stream changes format mid-way (%s %dx%d -> %s %dx%d); not supported on the GPU path",
                 av_get_pix_fmt_name(g->ring_fmt), g->ring_w, g->ring_h, av_get_pix_fmt_name(sw), vis_w, vis_h);
        ret = VKCU_ERR_INPUT;
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

static void *handoff_main(void *arg)
{
    vkcu_gpu *g = arg;
    char err[512];
    cudaSetDevice(g->cuda_device);
    pthread_mutex_lock(&g->lock);
    for (;;) {
        if (g->inq_head == g->inq_tail) {
            if (g->quit)
                break;
            pthread_cond_wait(&g->cond, &g->lock);
            continue;
        }
        int i = (int)(g->inq_head % (MAX_SLOTS + 2));
        AVFrame *frame = g->inq[i].frame;
        int flush = g->inq[i].flush;
        g->inq[i].frame = NULL;
        g->inq_head++;
        g->worker_busy = 1;
        int failed = g->werr < 0;
        pthread_mutex_unlock(&g->lock);
        int ret = 0;
        err[0] = 0;
        if (failed)
            av_frame_free(&frame); /* after an error, frames are only released */
        else
            ret = handoff_frame(g, flush ? NULL : frame, err, sizeof(err));
        pthread_mutex_lock(&g->lock);
        g->worker_busy = 0;
        if (ret < 0 && !g->werr) {
            g->werr = ret;
            snprintf(g->werrmsg, sizeof(g->werrmsg), "%s", err[0] ? err : av_err2str(ret));
        }
        pthread_cond_broadcast(&g->cond);
    }
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

int vkcu_gpu_push(vkcu_gpu *g, AVFrame *frame, char *err, size_t errlen)
{
    if (vkcu_gpu_bind(g, err, errlen) < 0) {
        snprintf(err, errlen, "%s", g->bind_err);
        av_frame_free(&frame);
        return g->bind_ret;
    }
    pthread_mutex_lock(&g->lock);
    /* At most ring-size frames in flight; the caller normally pops first. */
    while (!g->werr && g->inq_tail - g->inq_head >= MAX_SLOTS + 1)
        pthread_cond_wait(&g->cond, &g->lock);
    if (g->werr) {
        int ret = g->werr;
        snprintf(err, errlen, "%s", g->werrmsg);
        pthread_mutex_unlock(&g->lock);
        av_frame_free(&frame);
        return ret;
    }
    int i = (int)(g->inq_tail % (MAX_SLOTS + 2));
    g->inq[i].frame = frame;
    g->inq[i].flush = !frame;
    g->inq_tail++;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
    return 0;
}

int vkcu_gpu_handoff_start(vkcu_gpu *g, char *err, size_t errlen)
{
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->cond, NULL);
    g->sync_ready = 1;
    if (pthread_create(&g->worker, NULL, handoff_main, g)) {
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
        g->quit = 1;
        g->werr = g->werr ? g->werr : AVERROR_EXIT; /* release queued frames unprocessed */
        pthread_cond_broadcast(&g->cond);
        pthread_mutex_unlock(&g->lock);
        pthread_join(g->worker, NULL);
        g->worker_running = 0;
    }
    for (int i = 0; i < MAX_SLOTS + 2; i++)
        av_frame_free(&g->inq[i].frame);
}
