/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The encode sink's GOP-parallel workers (--encode-workers, FFV1): each
 * encodes every n-th GOP with its own encoder, and the encoder thread
 * writes their packets in order (sink_encode_priv.h, gop_worker).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libavutil/opt.h>
#include <libavutil/imgutils.h>

#include "gpu/vkdev.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/thread.h"
#include "sink_encode_priv.h"

/* The queue slot holding frame `index`, or -1 (lock held). */
static int find_frame(const encode_sink *e, int64_t index)
{
    for (int i = 0; i < e->q_count; i++) {
        const queue_item *it = &e->queue[(e->q_head + i) % QUEUE_ITEMS];
        if (it->frame && it->index == index)
            return (e->q_head + i) % QUEUE_ITEMS;
    }
    return -1;
}

static void *gop_worker_main(void *arg)
{
    gop_worker *w = arg;
    vkcu_sink *s = w->s;
    encode_sink *e = s->priv;
    /* VKCU_TEST_ENCODER_FAIL_AT=N: the encoder refuses frame N, as a GPU
     * that fails mid-way would (tests/cli/encode-workers.sh). */
    const char *fail_env = getenv("VKCU_TEST_ENCODER_FAIL_AT");
    const int64_t fail_at = fail_env && *fail_env ? atoll(fail_env) : -1;
    for (;;) {
        pthread_mutex_lock(&e->lock);
        int slot;
        while ((slot = find_frame(e, w->next)) < 0 && !e->thread_ret && !e->aborting &&
               !(e->finishing && e->next_index <= w->next))
            pthread_cond_wait(&e->cond, &e->lock);
        if (slot < 0) { /* done, failed or aborted */
            pthread_mutex_unlock(&e->lock);
            break;
        }
        queue_item *it = &e->queue[slot];
        AVFrame *frame = it->frame;
        it->frame = NULL; /* the worker owns it now; the slot still counts as a frame */
        it->state = 1;
        pthread_mutex_unlock(&e->lock);

        double t = vkcu_now();
        frame->pict_type = AV_PICTURE_TYPE_NONE;
        AVFrame *in = frame;
        int ret = 0;
        /* A compute encoder's instance takes host frames (a chain output
         * that does not fit the output ring) uploaded, as the encoder
         * thread does for one encoder. */
        if (w->hw_frame && frame->format != AV_PIX_FMT_VULKAN) {
            ret = vkcu_vkencode_upload(w->enc, frame, w->hw_frame);
            if (ret < 0) {
                char buf[128];
                av_frame_free(&frame);
                vkcu_encsink_thread_fail(s, VKCU_ERR_DEVICE, "%s: frame %lld: upload to the Vulkan encoder failed: %s",
                                         s->params->job.output, (long long)w->next, vkcu_err_str(ret, buf, sizeof(buf)));
                break;
            }
            in = w->hw_frame;
        }
        const int traced = in->format == AV_PIX_FMT_VULKAN; /* VKCU_ENCODE_TRACE (gpu/vkdev.h) */
        if (traced)
            vkcu_vkdev_trace("send %lld inst %d vkf %p", (long long)w->next, (int)(w - e->gw), (void *)in->data[0]);
        ret = w->next == fail_at ? AVERROR_EXTERNAL : avcodec_send_frame(w->enc, in);
        if (in == w->hw_frame)
            av_frame_unref(w->hw_frame);
        AVPacket *out = NULL;
        if (ret >= 0)
            ret = avcodec_receive_packet(w->enc, w->pkt);
        if (ret >= 0 && !(out = av_packet_alloc()))
            ret = AVERROR(ENOMEM);
        if (out)
            av_packet_move_ref(out, w->pkt);
        if (traced)
            vkcu_vkdev_trace("done %lld inst %d size %d", (long long)w->next, (int)(w - e->gw), out ? out->size : -1);
        av_frame_free(&frame);
        if (ret < 0) {
            char buf[128];
            av_packet_free(&out);
            vkcu_encsink_thread_fail(s, ret, "%s: encoder %s failed at frame %lld: %s", s->params->job.output,
                                     w->enc->codec->name, (long long)w->next, vkcu_err_str(ret, buf, sizeof(buf)));
            break;
        }
        pthread_mutex_lock(&e->lock);
        e->t_encode += vkcu_now() - t;
        it->pkt = out;
        it->state = 2;
        w->next++;
        if (w->next % e->gop == 0)
            w->next += (int64_t)(e->nb_gw - 1) * e->gop;
        pthread_cond_broadcast(&e->cond);
        pthread_mutex_unlock(&e->lock);
    }
    return NULL;
}

/* Joins the GOP workers (after the encoder thread: they stop on finishing,
 * on an error or on abort, which the encoder thread's end implies). */
void vkcu_encsink_stop_workers(encode_sink *e)
{
    pthread_mutex_lock(&e->lock);
    if (e->thread_ret || !e->finishing)
        e->aborting = 1;
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
    for (int i = 0; i < e->nb_gw; i++)
        if (e->gw[i].running) {
            pthread_join(e->gw[i].thread, NULL);
            e->gw[i].running = 0;
        }
}

void vkcu_encsink_free_workers(encode_sink *e)
{
    for (int i = 0; i < e->nb_gw; i++) {
        if (i) /* worker 0 uses e->enc */
            avcodec_free_context(&e->gw[i].enc);
        av_packet_free(&e->gw[i].pkt);
        av_frame_free(&e->gw[i].hw_frame);
    }
    av_freep(&e->gw);
    e->nb_gw = 0;
}

/* Whether the job's encoder is one of FFmpeg's compute encoders, whose
 * instances encode frames in parallel (vkcu_compute_instances). */
static int compute_encoder(const AVCodec *codec)
{
    const vkcu_vkencoder *vke = vkcu_vkencode_find(codec->name);
    return vke && !vke->video_op;
}

/* A compute encoder's instance beside the first: the same settings, the
 * same device and the same frames context (the output ring's frames are
 * its images), one frame in flight. */
static int open_instance(vkcu_sink *s, const AVCodec *codec, const vkcu_video_format *fmt, AVRational tb,
                         int global_header, int index, gop_worker *w)
{
    encode_sink *e = s->priv;
    int ret = vkcu_encsink_configure_encoder(s, codec, fmt, tb, global_header, &w->enc);
    if (ret < 0)
        return ret;
    av_opt_set_int(w->enc->priv_data, "async_depth", 1, 0);
    /* what the first one was opened with beside the settings (FFV1 level 4: strict=experimental) */
    w->enc->strict_std_compliance = e->enc->strict_std_compliance;
    if (!(w->hw_frame = av_frame_alloc()))
        return AVERROR(ENOMEM);
    /* On a compute queue of its own where the device has one (FFV1;
     * vkcu_compute_instance_queues): FFmpeg orders a queue's work with
     * barriers over the whole queue, so instances sharing one run one after
     * another. Its frames context is made on that queue's device context
     * (the encoder takes its device from it); the frames it is given may be
     * the first one's (the output ring's images). */
    AVBufferRef *dev = NULL;
    char why[256];
    int queue = 0;
    if (vkcu_vkencode_instance_devices()) {
        /* A measurement (issue 36): a VkDevice of its own, made by FFmpeg;
         * the frames come through the host (exit_encode.c declines the
         * ring), each instance uploading into its own images. */
        why[0] = 0;
        if ((ret = vkcu_vkencode_instance_device(e->enc->hw_device_ctx, &dev)) < 0 ||
            (ret = vkcu_vkencode_setup(w->enc, dev, e->enc->sw_pix_fmt, why, sizeof(why))) < 0) {
            char buf[128];
            snprintf(s->err, s->errlen, "%s: VKCU_ENCODE_INSTANCE_DEVICES=1: %s instance %d: %s",
                     s->params->job.output, codec->name, index, why[0] ? why : vkcu_err_str(ret, buf, sizeof(buf)));
            av_buffer_unref(&dev);
            return VKCU_ERR_DEVICE;
        }
        av_buffer_unref(&dev);
        w->queue = -1;
        return 0;
    }
    if (vkcu_compute_instance_queues(codec->name) && s->params->settings.device >= 0 &&
        vkcu_vkdev_acquire_compute_lane(s->params->settings.device, index, &dev, &queue, why, sizeof(why)) == 0 &&
        queue > 0) {
        ret = vkcu_vkencode_setup(w->enc, dev, e->enc->sw_pix_fmt, why, sizeof(why));
        av_buffer_unref(&dev);
        if (ret < 0) {
            LOGV("%s: %s instance %d: no compute queue of its own (%s)", s->params->job.output, codec->name, index,
                 why);
        } else {
            w->queue = queue;
            return 0;
        }
    }
    av_buffer_unref(&dev);
    w->enc->hw_device_ctx = av_buffer_ref(e->enc->hw_device_ctx);
    w->enc->hw_frames_ctx = av_buffer_ref(e->enc->hw_frames_ctx);
    if (!w->enc->hw_device_ctx || !w->enc->hw_frames_ctx)
        return AVERROR(ENOMEM);
    w->enc->pix_fmt = AV_PIX_FMT_VULKAN;
    w->enc->sw_pix_fmt = e->enc->sw_pix_fmt;
    return 0;
}

/* Sets up GOP-parallel encoding where it applies (FFV1, not two-pass, more
 * than one worker wanted, the queue of n GOPs within its bounds; or a
 * compute encoder's instances); otherwise leaves one encoder. Extra
 * encoders must come out of avcodec_open2 with the first one's extradata,
 * or the idea of "the same packets" fails. */
int vkcu_encsink_setup_workers(vkcu_sink *s, const AVCodec *codec, const vkcu_video_format *fmt, AVRational tb,
                               int global_header)
{
    encode_sink *e = s->priv;
    const vkcu_job_params *p = s->params;
    int want = p->settings.encode_workers;
    const int compute = e->hw_frame && compute_encoder(codec);
    if (want == 1)
        return 0;
    if (e->hw_frame && !compute) /* a Vulkan Video encoder: one session */
        return 0;
    if (!compute && (codec->id != AV_CODEC_ID_FFV1 || (e->enc->flags & (AV_CODEC_FLAG_PASS1 | AV_CODEC_FLAG_PASS2)))) {
        if (want > 1)
            LOGW("%s: %s applies to FFV1 (one pass) and the GPU's compute encoders only; %s uses its own threads",
                 p->job.output, VKCU_SETTING("encode_workers"), codec->name);
        return 0;
    }
    if (compute) {
        if ((want = vkcu_compute_instances(s->params, codec->name)) < 2)
            return 0;
    } else if (want <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        want = (int)(cpus / 4); /* FFV1 itself uses about 4 slice threads */
    }
    /* ProRes codes every frame alone: the instances take every n-th frame. */
    const int gop = codec->id != AV_CODEC_ID_FFV1 ? 1 : e->enc->gop_size > 0 ? e->enc->gop_size : 1;
    int64_t bytes = av_image_get_buffer_size(fmt->pix_fmt, fmt->width, fmt->height, 1);
    int64_t frames = bytes > 0 ? FFMIN(GOP_QUEUE_FRAMES, GOP_QUEUE_BYTES / bytes) : 0;
    int n = FFMIN(FFMIN(want, MAX_GOP_WORKERS), (int)(frames / gop));
    if (n < 2) {
        if (p->settings.encode_workers > 1 || compute)
            LOGW("%s: %s %d: GOPs of %d frames of %dx%d do not fit the queue (%d frames, 1 GiB); "
                 "one encoder", p->job.output, VKCU_SETTING("encode_workers"), want, gop, fmt->width,
                 fmt->height, GOP_QUEUE_FRAMES);
        return 0;
    }
    if (!(e->gw = av_calloc(n, sizeof(*e->gw))))
        return AVERROR(ENOMEM);
    e->nb_gw = n;
    for (int i = 0; i < n; i++) {
        gop_worker *w = &e->gw[i];
        w->s = s;
        w->next = (int64_t)i * gop;
        if (!(w->pkt = av_packet_alloc()))
            return AVERROR(ENOMEM);
        if (!i) {
            w->enc = e->enc;
            if (compute && !(w->hw_frame = av_frame_alloc()))
                return AVERROR(ENOMEM);
            continue;
        }
        int ret = compute ? open_instance(s, codec, fmt, tb, global_header, i, w)
                          : vkcu_encsink_configure_encoder(s, codec, fmt, tb, global_header, &w->enc);
        if (ret < 0)
            return ret;
        ret = avcodec_open2(w->enc, codec, NULL);
        if (ret < 0 || w->enc->extradata_size != e->enc->extradata_size ||
            (e->enc->extradata_size && memcmp(w->enc->extradata, e->enc->extradata, e->enc->extradata_size))) {
            LOGV("%s: a second %s encoder %s; one encoder", p->job.output, codec->name,
                 ret < 0 ? "does not open" : "has other extradata");
            vkcu_encsink_free_workers(e);
            return 0;
        }
    }
    e->gop = gop;
    e->max_frames = n * gop;
    if (compute) {
        char queues[96] = "0";
        for (int i = 1; i < n; i++)
            snprintf(queues + strlen(queues), sizeof(queues) - strlen(queues), e->gw[i].queue < 0 ? " 0 (own device)" :
                     " %d", e->gw[i].queue);
        LOGV("%s: %s: %d instances on the GPU (%s) on compute queues %s, one frame in flight each, %s of %d frame%s "
             "dealt out in turn", p->job.output, codec->name, n, p->settings.encode_workers > 1 ? "as asked" :
             "the default", queues, gop > 1 ? "GOPs" : "pieces", gop, gop > 1 ? "s" : "");
    } else {
        LOGV("%s: %s: %d GOPs of %d frames encoded at once", p->job.output, codec->name, n, gop);
    }
    return 0;
}

int vkcu_encsink_start_workers(vkcu_sink *s)
{
    encode_sink *e = s->priv;
    for (int i = 0; i < e->nb_gw; i++) {
        if (vkcu_thread_create(&e->gw[i].thread, gop_worker_main, &e->gw[i]) != 0) {
            snprintf(s->err, s->errlen, "%s: cannot start an encoder thread", s->params->job.output);
            return AVERROR(EAGAIN);
        }
        e->gw[i].running = 1;
    }
    return 0;
}
