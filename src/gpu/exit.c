/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The way out of the session (exit.h): one class chosen per format, and
 * what every way out shares. Per output of the chain (vkcu_gpu_exit_frame,
 * on the handoff thread): the class's kernels, the ops event, what takes the
 * frame off the GPU, the end event, and the entry published to pop(). pop()
 * (the job's thread) waits only on that entry's end event (and on what the
 * class waits for, a Vulkan readback's fence) and hands the frame over
 * without a copy.
 */
#include <errno.h>
#include <string.h>
#include <libavutil/imgutils.h>
#include <libavutil/mem.h>
#include <libavutil/pixdesc.h>

#include "exit.h"
#include "util/log.h"

/* Tried in this order; the first that wants the session and opens takes it. */
static const vkcu_gpu_exit_class *const exits[] = {
    &vkcu_gpu_exit_digest, &vkcu_gpu_exit_none,     &vkcu_gpu_exit_encode,
    &vkcu_gpu_exit_devpool, &vkcu_gpu_exit_readback, &vkcu_gpu_exit_host,
};

enum AVPixelFormat vkcu_gpu_host_format(enum AVPixelFormat f)
{
    if (f == AV_PIX_FMT_NV12)
        return AV_PIX_FMT_YUV420P;
    if (f == AV_PIX_FMT_P010)
        return AV_PIX_FMT_YUV420P10LE;
    return f;
}

/* The planar host layout of the chain's output; align: the row pitch. */
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

int vkcu_gpu_exit_open(vkcu_gpu *g, char *err, size_t errlen)
{
    const vkcu_video_format *out_fmt = g->chain && g->chain->nb_ops ? &g->chain->ops[g->chain->nb_ops - 1]->out : NULL;
    /* Host layout: the chain's output, planar. */
    enum AVPixelFormat dev_out = out_fmt ? out_fmt->pix_fmt : g->ring_fmt;
    int ow = out_fmt ? out_fmt->width : g->ring_w, oh = out_fmt ? out_fmt->height : g->ring_h;
    enum AVPixelFormat host_fmt = vkcu_gpu_host_format(dev_out);
    for (size_t i = 0; i < sizeof(exits) / sizeof(exits[0]); i++) {
        const vkcu_gpu_exit_class *c = exits[i];
        if (c->wants && !c->wants(g, host_fmt))
            continue;
        int ret = host_layout(g, host_fmt, ow, oh, c->row_align);
        if (ret < 0)
            return ret;
        if (c->priv_size && !(g->exit_priv = av_mallocz(c->priv_size)))
            return AVERROR(ENOMEM);
        g->exit = c;
        ret = c->open(g, g->exit_priv, dev_out, ow, oh, err, errlen);
        if (ret == 0)
            return 0;
        vkcu_gpu_exit_release(g);
        if (ret < 0)
            return ret;
    }
    snprintf(err, errlen, "no way out of the GPU for %s %dx%d frames", av_get_pix_fmt_name(dev_out), ow, oh);
    return VKCU_ERR_DEVICE;
}

void vkcu_gpu_exit_release(vkcu_gpu *g)
{
    if (g->exit)
        g->exit->close(g, g->exit_priv);
    av_freep(&g->exit_priv);
    g->exit = NULL;
}

void vkcu_gpu_exit_free(vkcu_gpu *g)
{
    for (int i = 0; i < MAX_PENDING; i++) {
        av_buffer_unref(&g->pending[i].host);
        av_frame_free(&g->pending[i].vkframe);
    }
    av_buffer_unref(&g->enc_frames);
    vkcu_gpu_exit_release(g);
}

const char *vkcu_gpu_exit_note(const vkcu_gpu *g)
{
    return g->exit ? g->exit->note : "";
}

int vkcu_gpu_exit_frame(vkcu_gpu *g, int slot, const vkcu_gpu_frame *out, char *err, size_t errlen)
{
    int ret = 0;
    int idx = (int)(g->pend_tail % MAX_PENDING);
    pending_frame *pf = &g->pending[idx];
    if ((ret = g->exit->write(g, g->exit_priv, slot, out, pf, err, errlen)) < 0)
        goto fail;
    CU_CHECK(cudaEventRecord(pf->ev_ops, g->stream));
    pf->ticket = -1;
    if (g->exit->send && (ret = g->exit->send(g, g->exit_priv, slot, pf, err, errlen)) < 0)
        goto fail;
    CU_CHECK(cudaEventRecord(pf->ev_end, g->stream));
    pf->slot = slot;
    pf->pts = out->pts;
    pf->duration = out->duration;
    pf->flags = out->flags & (AV_FRAME_FLAG_INTERLACED | AV_FRAME_FLAG_TOP_FIELD_FIRST | AV_FRAME_FLAG_CORRUPT |
                              g->exit->frame_flags);
    pf->repeat_pict = out->repeat_pict;
    pf->host_fmt = g->host_fmt;
    const vkcu_video_format *of = g->chain && g->chain->nb_ops ? &g->chain->ops[g->chain->nb_ops - 1]->out : NULL;
    pf->width = of ? of->width : g->ring_w;
    pf->height = of ? of->height : g->ring_h;
    vkcu_gpu_pending_publish(g);
    return 0;
fail:
    av_buffer_unref(&pf->host);
    av_frame_free(&pf->vkframe);
    return ret;
}

int vkcu_gpu_pop(vkcu_gpu *g, AVFrame *out, int wait, char *err, size_t errlen)
{
    int ret = 0;
    pending_frame *pf;
    if ((ret = vkcu_gpu_pending_wait(g, wait, &pf, err, errlen)) < 0)
        return ret;
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
    if (g->exit->wait && (ret = g->exit->wait(g, g->exit_priv, pf, wait, err, errlen)) < 0)
        return ret;
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
    out->pts = pf->pts;
    out->duration = pf->duration;
    int own = AV_FRAME_FLAG_INTERLACED | AV_FRAME_FLAG_TOP_FIELD_FIRST | AV_FRAME_FLAG_CORRUPT | g->exit->frame_flags;
    out->flags = (out->flags & ~own) | pf->flags;
    if (g->exit->give && (ret = g->exit->give(g, g->exit_priv, pf, out, err, errlen)) < 0)
        return ret;
    out->repeat_pict = pf->repeat_pict;
    vkcu_gpu_pending_done(g);
    return 0;
fail:
    return ret;
}
