/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Encode sink: libavcodec encoder + libavformat muxer. The container
 * follows the output's extension; `.y4m` and `.nut` get raw frames. Other
 * streams (audio, subtitles, data) are copied, with container metadata,
 * chapters and rotation; audio the container cannot hold is encoded
 * (audio_encode.h), text subtitles converted (subtitle_text.h). Colour tags
 * and HDR metadata come from the chain's output format. Encoding and muxing
 * run on their own thread behind a bounded queue. Output goes to a
 * temporary name and is renamed at the end.
 *
 * This file opens the output (container, encoder, claim, streams, header),
 * feeds the encoder thread's queue from the job thread and closes the
 * output; the encoder (sink_encode_video.c), the streams
 * (sink_encode_streams.c), the encoder thread (sink_encode_thread.c) and
 * the GOP workers (sink_encode_gop.c) have their own files
 * (sink_encode_priv.h).
 */
#include <pthread.h>
#include <string.h>
#include <libavutil/avstring.h>
#include <libavutil/pixdesc.h>

#include "util/log.h"
#include "util/thread.h"
#include "outfile.h"
#include "sink_encode_priv.h"

/* The container: the output's extension, or output_format (which standard
 * output needs). */
static int pick_container(vkcu_sink *s, const AVOutputFormat **out)
{
    encode_sink *e = s->priv;
    const vkcu_job_params *p = s->params;
    const char *path = p->job.output;
    const char *fmtname = NULL;
    const char *ext = strrchr(path, '.');
    /* "-": standard output, written as it comes (no temporary name). */
    e->to_stdout = !strcmp(path, "-");
    if (ext && !av_strcasecmp(ext, ".y4m"))
        fmtname = "yuv4mpegpipe";
    else if (ext && (!av_strcasecmp(ext, ".yuv") || !av_strcasecmp(ext, ".raw")))
        fmtname = "rawvideo";
    if (p->job.output_format) {
        fmtname = !strcmp(p->job.output_format, "y4m") ? "yuv4mpegpipe"
                  : !strcmp(p->job.output_format, "mkv") ? "matroska"
                                                     : p->job.output_format;
        if (!av_guess_format(fmtname, NULL, NULL)) {
            snprintf(s->err, s->errlen, "%s: no such container in this build (nut, yuv4mpegpipe, matroska, mp4, ...)",
                     VKCU_SETTING_IS("output_format", p->job.output_format));
            return VKCU_ERR_USAGE;
        }
    } else if (e->to_stdout) {
        snprintf(s->err, s->errlen, "%s: name the container of standard output with %s (nut, y4m, matroska, ...)",
                 VKCU_SETTING_IS("output", "-"), VKCU_SETTING("output_format"));
        return VKCU_ERR_USAGE;
    }
    const AVOutputFormat *ofmt = av_guess_format(fmtname, path, NULL);
    if (!ofmt) {
        snprintf(s->err, s->errlen, "%s: unknown output format (use an extension such as .mkv, .mp4, .nut, .y4m)", path);
        return VKCU_ERR_USAGE;
    }
    *out = ofmt;
    return 0;
}

/* The options that depend on the container checked, then the output
 * claimed: a temporary file beside it (or, for an image sequence, none of
 * its names taken). */
static int claim_output(vkcu_sink *s, const AVOutputFormat *ofmt)
{
    encode_sink *e = s->priv;
    const vkcu_job_params *p = s->params;
    const char *path = p->job.output;
    int ret;
    /* The mov muxer moves the index at the trailer by reading the file
     * back: only MP4/MOV have one, and only a file can be re-read. */
    if (p->job.faststart && ((!strstr(ofmt->name, "mp4") && !strstr(ofmt->name, "mov") && strcmp(ofmt->name, "ipod")) ||
                         e->to_stdout)) {
        if (e->to_stdout)
            snprintf(s->err, s->errlen, "%s: the index is moved by re-reading the file; not possible on "
                     "standard output (write a file)", VKCU_SETTING("faststart"));
        else
            snprintf(s->err, s->errlen, "%s: only MP4/MOV outputs have an index to move (this output is %s)",
                     VKCU_SETTING("faststart"), ofmt->name);
        return VKCU_ERR_USAGE;
    }
    /* Only now, with every option checked, does the output appear. A
     * sequence's files appear one by one (write_image); none of them may
     * be there already. */
    if (e->image == IMAGE_SEQ) {
        const char *inputs[] = { p->job.input, p->job.pipeline_file, NULL };
        ret = vkcu_outfile_check_sequence(path, p->job.overwrite, inputs, s->err, s->errlen);
        if (ret < 0)
            return ret;
    } else if (!e->to_stdout) {
        const char *inputs[] = { p->job.input, p->job.pipeline_file, NULL };
        ret = vkcu_outfile_begin(path, p->job.overwrite, inputs, e->tmp, sizeof(e->tmp), s->err, s->errlen);
        if (ret < 0)
            return ret;
    }
    return 0;
}

/* The file opened and the container's header written: from here on the
 * output has bytes. */
static int open_muxer(vkcu_sink *s, const AVOutputFormat *ofmt, const char *url)
{
    encode_sink *e = s->priv;
    const vkcu_job_params *p = s->params;
    const char *path = p->job.output;
    int ret;
    if (!(ofmt->flags & AVFMT_NOFILE)) {
        ret = avio_open(&e->oc->pb, url, AVIO_FLAG_WRITE);
        if (ret < 0) {
            char buf[128];
            snprintf(s->err, s->errlen, "%s: cannot create output: %s", path, vkcu_err_str(ret, buf, sizeof(buf)));
            ret = VKCU_ERR_OUTPUT;
            return ret;
        }
    }
    /* y4m beyond 8 bits (yuv420p10 ...) is an extension of the format's
     * own definition that FFmpeg writes only when told to; it reads it back. */
    if (!strcmp(ofmt->name, "yuv4mpegpipe"))
        e->oc->strict_std_compliance = FF_COMPLIANCE_UNOFFICIAL;
    AVDictionary *mux_opts = NULL;
    if (p->job.faststart)
        av_dict_set(&mux_opts, "movflags", "+faststart", 0);
    if (e->image == IMAGE_ONE)
        av_dict_set(&mux_opts, "update", "1", 0); /* the name as it is, no number */
    ret = avformat_write_header(e->oc, &mux_opts);
    av_dict_free(&mux_opts);
    if (ret < 0) {
        char buf[128];
        snprintf(s->err, s->errlen, "%s: cannot write the %s header: %s%s", path, ofmt->name,
                 vkcu_err_str(ret, buf, sizeof(buf)), ret == AVERROR(ENOSPC) ? " (disk full)"
                 : e->to_stdout ? " (on standard output, use a container that needs no seeking: nut, y4m, matroska)" : "");
        ret = VKCU_ERR_OUTPUT;
        return ret;
    }
    e->header_written = 1;
    e->pkt = av_packet_alloc();
    e->last_dts = av_malloc_array(e->oc->nb_streams, sizeof(*e->last_dts));
    for (unsigned i = 0; e->last_dts && i < e->oc->nb_streams; i++)
        e->last_dts[i] = AV_NOPTS_VALUE;
    if (!e->pkt || !e->last_dts)
        return AVERROR(ENOMEM);
    return 0;
}

/* The encoder thread, then the GOP workers. */
static int start_threads(vkcu_sink *s)
{
    encode_sink *e = s->priv;
    const char *path = s->params->job.output;
    pthread_mutex_init(&e->lock, NULL);
    pthread_cond_init(&e->cond, NULL);
    if (vkcu_thread_create(&e->thread, vkcu_encsink_thread_main, s) != 0) {
        pthread_mutex_destroy(&e->lock);
        pthread_cond_destroy(&e->cond);
        snprintf(s->err, s->errlen, "%s: cannot start the encoder thread", path);
        return AVERROR(EAGAIN);
    }
    e->thread_running = 1;
    return vkcu_encsink_start_workers(s);
}

static int encode_open(vkcu_sink *s, const vkcu_video_format *fmt, AVRational tb)
{
    encode_sink *e = s->priv;
    const char *path = s->params->job.output;
    const AVOutputFormat *ofmt;
    const AVCodec *codec = NULL;
    int ret = pick_container(s, &ofmt);
    if (ret < 0)
        return ret;
    if ((ret = vkcu_encsink_pick_encoder(s, fmt, ofmt, &tb, &codec)) < 0)
        goto fail;
    if (!strcmp(ofmt->name, "image2") && !e->to_stdout)
        e->image = av_filename_number_test(path) ? IMAGE_SEQ : IMAGE_ONE;
    e->max_frames = QUEUE_FRAMES;
    if ((ret = vkcu_encsink_setup_workers(s, codec, fmt, tb, !!(ofmt->flags & AVFMT_GLOBALHEADER))) < 0)
        goto fail;
    if ((ret = claim_output(s, ofmt)) < 0)
        goto fail;
    const char *url = e->to_stdout ? "pipe:1" : e->tmp;
    ret = avformat_alloc_output_context2(&e->oc, ofmt, NULL, url);
    if (ret < 0)
        goto fail;
    /* y4m above 8 bits (C420p10, C422p10, ...) is what x264, x265 and
     * aomenc read, but FFmpeg's muxer writes it only at "unofficial"
     * compliance (ffmpeg -strict -1); without it 10-bit input failed here. */
    if (!strcmp(ofmt->name, "yuv4mpegpipe"))
        e->oc->strict_std_compliance = FF_COMPLIANCE_UNOFFICIAL;
    if ((ret = vkcu_encsink_map_streams(s, ofmt, tb)) < 0 || (ret = open_muxer(s, ofmt, url)) < 0 ||
        (ret = start_threads(s)) < 0)
        goto fail;
    LOGV("%s: %s in %s, %s", path, codec->name, ofmt->name, av_get_pix_fmt_name(fmt->pix_fmt));
    return 0;
fail:
    s->gpu_frames = NULL;
    if (!s->err[0]) {
        char buf[128];
        snprintf(s->err, s->errlen, "%s: cannot set up the output: %s", path, vkcu_err_str(ret, buf, sizeof(buf)));
    }
    return ret;
}

/* ---- job thread side ---- */

/* Takes ownership of exactly one of frame/pkt. Waits while the queue is full. */
static int enqueue(vkcu_sink *s, AVFrame *frame, AVPacket *pkt)
{
    encode_sink *e = s->priv;
    pthread_mutex_lock(&e->lock);
    while (!e->thread_ret && (e->q_count == QUEUE_ITEMS || (frame && e->q_frames >= e->max_frames)))
        pthread_cond_wait(&e->cond, &e->lock);
    int ret = e->thread_ret;
    if (!ret) {
        e->queue[(e->q_head + e->q_count) % QUEUE_ITEMS] =
            (queue_item){ .frame = frame, .pkt = pkt, .index = frame ? e->next_index++ : -1 };
        e->q_count++;
        if (frame)
            e->q_frames++;
        pthread_cond_broadcast(&e->cond);
    }
    pthread_mutex_unlock(&e->lock);
    if (ret < 0) {
        snprintf(s->err, s->errlen, "%s", e->thread_err);
        av_frame_free(&frame);
        av_packet_free(&pkt);
    }
    return ret;
}

static int encode_emit(void *opaque, AVFrame *frame)
{
    /* A new reference: decoder pool frames and the GPU session's pinned
     * buffers stay alive while the frame waits in the queue. */
    AVFrame *ref = av_frame_clone(frame);
    if (!ref)
        return AVERROR(ENOMEM);
    return enqueue(opaque, ref, NULL);
}

static int encode_write(vkcu_sink *s, AVFrame *frame)
{
    encode_sink *e = s->priv;
    return vkcu_frame_sync_push(&e->sync, frame, encode_emit, s);
}

/* An encoded audio (or converted subtitle) packet, to the queue (enqueue takes it). */
static int audio_emit(void *opaque, AVPacket *pkt)
{
    return enqueue(opaque, NULL, pkt);
}

static int encode_packet(vkcu_sink *s, AVPacket *pkt)
{
    encode_sink *e = s->priv;
    if (pkt->stream_index >= e->nb_map || e->stream_map[pkt->stream_index] < 0)
        return 0;
    if (e->audio[pkt->stream_index]) {
        char why[512] = "";
        int ret = vkcu_audio_enc_send(e->audio[pkt->stream_index], pkt, audio_emit, s, why, sizeof(why));
        if (ret < 0 && !s->err[0])
            snprintf(s->err, s->errlen, "%s: %s", s->params->job.output, why);
        return ret;
    }
    if (e->subs[pkt->stream_index])
        return vkcu_sub_text_send(e->subs[pkt->stream_index], pkt, audio_emit, s);
    AVStream *ist = s->demux->fmt->streams[pkt->stream_index];
    AVPacket *copy = av_packet_clone(pkt);
    if (!copy)
        return AVERROR(ENOMEM);
    copy->stream_index = e->stream_map[pkt->stream_index];
    av_packet_rescale_ts(copy, ist->time_base, e->oc->streams[copy->stream_index]->time_base);
    copy->pos = -1;
    return enqueue(s, NULL, copy);
}

/* Ends the encoder thread and the GOP workers, finishing (the queue
 * written, the encoder flushed) or aborting; their times go into the
 * result, their error into the return value. */
static int stop_thread(vkcu_sink *s, int ok, int finish, int ret)
{
    encode_sink *e = s->priv;
    pthread_mutex_lock(&e->lock);
    if (finish)
        e->finishing = 1;
    else
        e->aborting = 1;
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
    pthread_join(e->thread, NULL);
    e->thread_running = 0;
    vkcu_encsink_stop_workers(e);
    if (s->result) {
        s->result->enc_ms_encode = e->t_encode * 1000;
        s->result->encode_instances = e->nb_gw > 1 ? e->nb_gw : 1;
        s->result->enc_ms_mux = e->t_mux * 1000;
        s->result->enc_ms_idle = e->t_idle * 1000;
        s->result->encoded_bytes = e->video_bytes;
        vkcu_vkencode_timer_result(e->timer, &s->result->gpu_ms_encode, &s->result->gpu_encode_frames);
    }
    while (e->q_count) { /* every thread has ended: no lock needed */
        queue_item it = vkcu_encsink_pop_head(e);
        av_frame_free(&it.frame);
        av_packet_free(&it.pkt);
    }
    pthread_mutex_destroy(&e->lock);
    pthread_cond_destroy(&e->cond);
    if (e->thread_ret < 0) {
        if (ok)
            snprintf(s->err, s->errlen, "%s", e->thread_err);
        ret = e->thread_ret;
    }
    return ret;
}

/* The trailer (when finishing), then the last bytes flushed and the file
 * closed; a write error where there was none yet. */
static int end_output(vkcu_sink *s, int ok, int finish, int ret)
{
    encode_sink *e = s->priv;
    if (finish && ret >= 0 && e->header_written) {
        ret = av_write_trailer(e->oc);
        if (ret < 0 && e->to_stdout && (ret == AVERROR(EPIPE) || (e->oc->pb && e->oc->pb->error == AVERROR(EPIPE)))) {
            ret = VKCU_ERR_PIPE_CLOSED;
        } else if (ret < 0) {
            char buf[128];
            snprintf(s->err, s->errlen, "%s: cannot finish the output: %s%s", s->params->job.output,
                     vkcu_err_str(ret, buf, sizeof(buf)), ret == AVERROR(ENOSPC) ? " (disk full)" : "");
            ret = VKCU_ERR_OUTPUT;
        }
    }
    if (e->oc && e->oc->pb && !(e->oc->oformat->flags & AVFMT_NOFILE)) {
        avio_flush(e->oc->pb);
        if (ok && ret >= 0 && e->to_stdout && e->oc->pb->error == AVERROR(EPIPE)) {
            ret = VKCU_ERR_PIPE_CLOSED;
        } else if (ok && ret >= 0 && e->oc->pb->error < 0) {
            char buf[128];
            snprintf(s->err, s->errlen, "%s: write error: %s%s", s->params->job.output,
                     vkcu_err_str(e->oc->pb->error, buf, sizeof(buf)),
                     e->oc->pb->error == AVERROR(ENOSPC) ? " (disk full)" : "");
            ret = VKCU_ERR_OUTPUT;
        }
        avio_closep(&e->oc->pb);
    }
    return ret;
}

/* Frees what open made. */
static void free_output(vkcu_sink *s)
{
    encode_sink *e = s->priv;
    avformat_free_context(e->oc);
    e->oc = NULL;
    vkcu_encsink_free_workers(e);
    s->gpu_frames = NULL;
    vkcu_vkencode_timer_free(&e->timer);
    avcodec_free_context(&e->enc);
    av_frame_free(&e->hw_frame);
    av_buffer_unref(&e->vk_device);
    av_packet_free(&e->pkt);
    for (int i = 0; e->audio && i < e->nb_map; i++)
        vkcu_audio_enc_close(&e->audio[i]);
    av_freep(&e->audio);
    for (int i = 0; e->subs && i < e->nb_map; i++)
        vkcu_sub_text_close(&e->subs[i]);
    av_freep(&e->subs);
    av_freep(&e->stream_map);
    av_freep(&e->last_dts);
    e->header_written = 0;
}

/* The temporary file renamed into place (or kept, partial, or removed),
 * then the encoder's own files after it. */
static int publish(vkcu_sink *s, int ok, int ret)
{
    encode_sink *e = s->priv;
    int published = 0;
    if (e->tmp[0]) {
        published = ok && ret >= 0;
        if (ok && ret >= 0 && s->params->before_publish &&
            (ret = s->params->before_publish(s->params->publish_opaque, e->tmp, s->params->job.output, s->err,
                                             s->errlen)) < 0)
            vkcu_outfile_abort(e->tmp);
        else if (ok && ret >= 0)
            ret = vkcu_outfile_commit(e->tmp, s->params->job.output, s->err, s->errlen);
        else if (s->params->job.keep_partial && strcmp(e->tmp, s->params->job.output)) {
            char err[512];
            if (vkcu_outfile_commit(e->tmp, s->params->job.output, err, sizeof(err)) >= 0)
                LOGW("%s: partial output kept (%s)", s->params->job.output, VKCU_SETTING_IS("keep_partial", "1"));
        } else
            vkcu_outfile_abort(e->tmp);
        e->tmp[0] = 0;
    } else {
        published = ok && ret >= 0; /* standard output */
    }
    /* The encoder's own files (closed with the encoder above) follow the output. */
    if (published && ret >= 0)
        ret = vkcu_encoder_files_commit(&e->files, s->err, s->errlen);
    else
        vkcu_encoder_files_abort(&e->files);
    return ret;
}

static int encode_close(vkcu_sink *s, int ok)
{
    encode_sink *e = s->priv;
    int ret = 0;
    /* --keep-partial: what was decoded is encoded, flushed and finished
     * (trailer, index), so the partial output plays. */
    int finish = ok || (s->params->job.keep_partial && strcmp(e->tmp, s->params->job.output));
    if (e->thread_running && finish) {
        /* The last frame repeated, where the frame rate wants it. */
        ret = vkcu_frame_sync_push(&e->sync, NULL, encode_emit, s);
        /* The audio encoders' last packets. */
        for (int i = 0; ret >= 0 && e->audio && i < e->nb_map; i++)
            if (e->audio[i]) {
                char why[512] = "";
                if ((ret = vkcu_audio_enc_send(e->audio[i], NULL, audio_emit, s, why, sizeof(why))) < 0 && !s->err[0])
                    snprintf(s->err, s->errlen, "%s: %s", s->params->job.output, why);
            }
        if (ret < 0 && ok)
            finish = 0;
    }
    vkcu_frame_sync_free(&e->sync);
    if (e->thread_running)
        ret = stop_thread(s, ok, finish, ret);
    ret = end_output(s, ok, finish, ret);
    free_output(s);
    ret = publish(s, ok, ret);
    if (ret >= 0)
        return 0;
    return ret;
}

const vkcu_sink_class vkcu_sink_encode = {
    .name = "encode",
    .priv_size = sizeof(encode_sink),
    .open = encode_open,
    .write_frame = encode_write,
    .write_packet = encode_packet,
    .close = encode_close,
};
