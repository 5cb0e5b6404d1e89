/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The encode sink's encoder thread: it owns the encoder and the muxer
 * between open and close, encodes the queued frames (or takes the GOP
 * workers' packets), mends timestamps the muxer would refuse and writes
 * every packet, encoded and copied, in queue order; image sequences are
 * written one file per frame (sink_encode_priv.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/clock.h"
#include "util/log.h"
#include "outfile.h"
#include "sink_encode_priv.h"

int vkcu_encsink_thread_fail(vkcu_sink *s, int ret, const char *fmt, ...)
{
    encode_sink *e = s->priv;
    va_list ap;
    /* The first error wins (workers and the encoder thread may fail together). */
    pthread_mutex_lock(&e->lock);
    if (!e->thread_ret) {
        va_start(ap, fmt);
        vsnprintf(e->thread_err, sizeof(e->thread_err), fmt, ap);
        va_end(ap);
        e->thread_ret = ret;
    }
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
    return ret;
}

/* Timestamps the muxer would refuse are mended as ffmpeg's CLI mends them:
 * a dts after its pts, or a dts not after the previous one (an input with
 * broken timestamps, stream-copied), becomes the nearest valid value. */
static void mend_timestamps(vkcu_sink *s, AVPacket *pkt)
{
    encode_sink *e = s->priv;
    const AVOutputFormat *ofmt = e->oc->oformat;
    int64_t *last = &e->last_dts[pkt->stream_index];
    if (ofmt->flags & AVFMT_NOTIMESTAMPS)
        return;
    if (pkt->dts != AV_NOPTS_VALUE && pkt->pts != AV_NOPTS_VALUE && pkt->dts > pkt->pts) {
        /* The median of pts, dts and the next possible dts. */
        int64_t a = pkt->pts, b = pkt->dts, c = *last != AV_NOPTS_VALUE ? *last + 1 : INT64_MIN / 2;
        pkt->pts = pkt->dts = a + b + c - FFMIN3(a, b, c) - FFMAX3(a, b, c);
    }
    if (pkt->dts != AV_NOPTS_VALUE && *last != AV_NOPTS_VALUE) {
        int64_t min = *last + !(ofmt->flags & AVFMT_TS_NONSTRICT);
        if (pkt->dts < min) {
            LOGV("%s: stream %d: non-monotonic dts %lld after %lld; changed to %lld", s->params->job.output,
                 pkt->stream_index, (long long)pkt->dts, (long long)*last, (long long)min);
            if (pkt->pts >= pkt->dts)
                pkt->pts = FFMAX(pkt->pts, min);
            pkt->dts = min;
        }
    }
    *last = pkt->dts;
}

/* The next image of a sequence, as its own file under the output rule:
 * written under a temporary name and moved into place whole. */
static int write_image(vkcu_sink *s, AVPacket *pkt)
{
    encode_sink *e = s->priv;
    const vkcu_job_params *p = s->params;
    char name[4096], tmp[4200], err[768];
    int number = (int)(e->images + 1);
    if (av_get_frame_filename2(name, sizeof(name), p->job.output, number, 0) < 0)
        return vkcu_encsink_thread_fail(s, VKCU_ERR_OUTPUT, "%s: cannot make the name of image %d from this pattern",
                                        p->job.output, number);
    const char *inputs[] = { p->job.input, p->job.pipeline_file, NULL };
    int ret = vkcu_outfile_begin(name, p->job.overwrite, inputs, tmp, sizeof(tmp), err, sizeof(err));
    if (ret < 0)
        return vkcu_encsink_thread_fail(s, ret, "%s", err);
    FILE *f = vkcu_outfile_fopen(tmp, "wb");
    int bad = !f || fwrite(pkt->data, 1, pkt->size, f) != (size_t)pkt->size;
    int en = errno;
    if (f && vkcu_outfile_fclose(f, tmp) != 0 && !bad) {
        bad = 1;
        en = errno;
    }
    if (bad) {
        vkcu_outfile_abort(tmp);
        return vkcu_encsink_thread_fail(s, VKCU_ERR_OUTPUT, "%s: write error: %s%s", name, strerror(en),
                                        en == ENOSPC ? " (disk full)" : "");
    }
    if ((ret = vkcu_outfile_commit(tmp, name, err, sizeof(err))) < 0)
        return vkcu_encsink_thread_fail(s, ret, "%s", err);
    e->images++;
    e->video_bytes += pkt->size;
    return 0;
}

static int write_out(vkcu_sink *s, AVPacket *pkt)
{
    encode_sink *e = s->priv;
    double t = vkcu_now();
    int64_t pts = pkt->pts, dts = pkt->dts;
    int index = pkt->stream_index;
    if (index == e->vst->index && e->image == IMAGE_SEQ) {
        int ret = write_image(s, pkt);
        e->t_mux += vkcu_now() - t;
        return ret;
    }
    if (index == e->vst->index && e->image == IMAGE_ONE && e->images++) {
        /* ffmpeg refuses this too ("Cannot write more than one file with the same name"). */
        const char *path = s->params->job.output, *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
        if (!dot || (slash && dot < slash))
            dot = path + strlen(path);
        return vkcu_encsink_thread_fail(
            s, VKCU_ERR_USAGE,
            "%s: one image holds one frame, and the input has more: add %s for "
            "one image (a thumbnail; with %s T, the frame at T), or name a sequence such as "
            "'%.*s%%03d%s'",
            path, VKCU_SETTING_IS("max_frames", "1"), VKCU_SETTING("start_time"), (int)(dot - path), path, dot);
    }
    mend_timestamps(s, pkt);
    if (index == e->vst->index)
        e->video_bytes += pkt->size;
    int ret = av_interleaved_write_frame(e->oc, pkt);
    e->t_mux += vkcu_now() - t;
    if (ret == AVERROR(EINVAL) && !(e->oc->pb && e->oc->pb->error < 0)) {
        /* Refused, not failed to write: the input's timestamps are to blame. */
        char buf[128];
        AVRational tb = e->oc->streams[index]->time_base;
        if (index == e->vst->index)
            return vkcu_encsink_thread_fail(s, VKCU_ERR_INPUT,
                                            "%s: frame at %.3f s (dts %.3f s): the %s muxer refused its "
                                            "timestamps: %s (the input's timestamps are broken)",
                                            s->params->job.input, pts * av_q2d(tb), dts * av_q2d(tb), e->oc->oformat->name,
                                            vkcu_err_str(ret, buf, sizeof(buf)));
        return vkcu_encsink_thread_fail(s, VKCU_ERR_INPUT,
                                        "%s: the %s muxer refused a packet of output stream %d (pts %lld, dts %lld "
                                        "in 1/%d s): %s (the input's timestamps are broken)",
                                        s->params->job.input, e->oc->oformat->name, index, (long long)pts, (long long)dts,
                                        tb.den, vkcu_err_str(ret, buf, sizeof(buf)));
    }
    if (e->to_stdout && (ret == AVERROR(EPIPE) || (e->oc->pb && e->oc->pb->error == AVERROR(EPIPE))))
        return vkcu_encsink_thread_fail(s, VKCU_ERR_PIPE_CLOSED, "standard output closed by its reader");
    if (ret < 0) {
        char buf[128];
        return vkcu_encsink_thread_fail(s, VKCU_ERR_OUTPUT, "%s: write error: %s%s", s->params->job.output,
                                        vkcu_err_str(ret, buf, sizeof(buf)),
                                        ret == AVERROR(ENOSPC) ? " (disk full)" : "");
    }
    if (e->oc->pb && e->oc->pb->error < 0) {
        char buf[128];
        return vkcu_encsink_thread_fail(s, VKCU_ERR_OUTPUT, "%s: write error: %s%s", s->params->job.output,
                                        vkcu_err_str(e->oc->pb->error, buf, sizeof(buf)),
                                        e->oc->pb->error == AVERROR(ENOSPC) ? " (disk full)" : "");
    }
    return 0;
}

static int drain(vkcu_sink *s)
{
    encode_sink *e = s->priv;
    for (;;) {
        double t = vkcu_now();
        int ret = avcodec_receive_packet(e->enc, e->pkt);
        e->t_encode += vkcu_now() - t;
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF)
            return 0;
        if (ret < 0) {
            char buf[128];
            return vkcu_encsink_thread_fail(s, ret, "%s: encoder %s failed after frame %lld: %s", s->params->job.output,
                                            e->enc->codec->name, (long long)e->frames,
                                            vkcu_err_str(ret, buf, sizeof(buf)));
        }
        e->pkt->stream_index = e->vst->index;
        av_packet_rescale_ts(e->pkt, e->enc->time_base, e->vst->time_base);
        ret = write_out(s, e->pkt);
        if (ret < 0)
            return ret;
    }
}

static int encode_one(vkcu_sink *s, AVFrame *frame)
{
    encode_sink *e = s->priv;
    AVFrame *in = frame;
    int ret;
    frame->pict_type = AV_PICTURE_TYPE_NONE;
    /* A frame of the encoder's own frames context (the GPU session's
     * zero-copy path) goes in as it is; host frames are uploaded. */
    if (e->hw_frame && frame->format != AV_PIX_FMT_VULKAN) {
        ret = vkcu_vkencode_upload(e->enc, frame, e->hw_frame);
        if (ret < 0) {
            char buf[128];
            return vkcu_encsink_thread_fail(
                s, VKCU_ERR_DEVICE, "%s: frame %lld: upload to the Vulkan encoder failed: %s", s->params->job.output,
                (long long)e->frames, vkcu_err_str(ret, buf, sizeof(buf)));
        }
        in = e->hw_frame;
    }
    double t = vkcu_now();
    vkcu_vkencode_timer_before(e->timer, in);
    ret = avcodec_send_frame(e->enc, in);
    e->t_encode += vkcu_now() - t;
    if (ret < 0) {
        char buf[128];
        if (in == e->hw_frame)
            av_frame_unref(e->hw_frame);
        return vkcu_encsink_thread_fail(s, ret, "%s: encoder %s refused frame %lld: %s", s->params->job.output,
                                        e->enc->codec->name, (long long)e->frames, vkcu_err_str(ret, buf, sizeof(buf)));
    }
    e->frames++;
    ret = drain(s);
    /* After the packets were asked for: FFmpeg's compute encoders take the
     * frame and submit its work in receive_packet, not in send_frame (a
     * stamp after send_frame alone timed 151 of 300 FFV1 frames). */
    vkcu_vkencode_timer_after(e->timer, in);
    if (in == e->hw_frame)
        av_frame_unref(e->hw_frame);
    return ret;
}

/* Takes the first queue item (lock held). */
queue_item vkcu_encsink_pop_head(encode_sink *e)
{
    queue_item it = e->queue[e->q_head];
    e->queue[e->q_head] = (queue_item){ 0 };
    e->q_head = (e->q_head + 1) % QUEUE_ITEMS;
    e->q_count--;
    if (it.index >= 0)
        e->q_frames--;
    pthread_cond_broadcast(&e->cond);
    return it;
}

/* Whether the first item can be written now (lock held): a copied packet, a
 * frame this thread encodes itself, or one its GOP worker has encoded. */
static int head_ready(const encode_sink *e)
{
    const queue_item *h = &e->queue[e->q_head];
    return e->q_count && (h->index < 0 || e->nb_gw < 2 || h->state == 2);
}

/* The encoder thread: takes the queue in order and writes every packet, so
 * the muxer has one writer. With GOP workers it only writes their packets. */
void *vkcu_encsink_thread_main(void *arg)
{
    vkcu_sink *s = arg;
    encode_sink *e = s->priv;
    const int workers = e->nb_gw > 1;
    int ret = 0;
    for (;;) {
        pthread_mutex_lock(&e->lock);
        double t = vkcu_now();
        int starved = !e->q_count;
        while (!e->thread_ret && !e->aborting && !head_ready(e) && !(e->finishing && !e->q_count))
            pthread_cond_wait(&e->cond, &e->lock);
        if (starved && e->frames) /* waiting for the first frame is set-up, not starvation */
            e->t_idle += vkcu_now() - t;
        if (e->thread_ret || e->aborting || !e->q_count) {
            int finish = !e->thread_ret && !e->aborting;
            pthread_mutex_unlock(&e->lock);
            if (finish && !workers) { /* intra-only workers have nothing left to flush */
                avcodec_send_frame(e->enc, NULL);
                ret = drain(s);
            }
            break;
        }
        queue_item it = vkcu_encsink_pop_head(e);
        pthread_mutex_unlock(&e->lock);
        if (it.index >= 0 && !workers) {
            ret = encode_one(s, it.frame);
        } else {
            if (it.index >= 0) {
                it.pkt->stream_index = e->vst->index;
                av_packet_rescale_ts(it.pkt, e->enc->time_base, e->vst->time_base);
                e->frames++;
            }
            ret = write_out(s, it.pkt);
        }
        av_frame_free(&it.frame);
        av_packet_free(&it.pkt);
        if (ret < 0)
            break;
    }
    pthread_mutex_lock(&e->lock);
    if (!e->thread_ret)
        e->thread_ret = ret;
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
    return NULL;
}
