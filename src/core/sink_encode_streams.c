/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The encode sink's other streams: the video stream of the output, then
 * each audio, subtitle and data stream of the input copied where the
 * container holds it (a trial header where the muxer does not say),
 * audio encoded and text subtitles converted where it does not, or
 * dropped with a line that says why; container metadata and chapters
 * (sink_encode_priv.h).
 */
#include <string.h>

#include "util/log.h"
#include "encoders.h"
#include "sink_encode_priv.h"

/* An audio stream the job encodes rather than copies: the one the container
 * cannot hold (with the container's audio encoder), or every one with a
 * named audio_encoder. 1: encoded (its output stream mapped); 0: copy or
 * drop it as other streams; <0: the job fails (a named encoder that cannot
 * be set up), with s->err set. */
static int audio_stream(vkcu_sink *s, const AVOutputFormat *ofmt, AVStream *ist, int copy)
{
    encode_sink *e = s->priv;
    const vkcu_job_params *p = s->params;
    const char *named = p->job.audio_encoder && *p->job.audio_encoder && strcmp(p->job.audio_encoder, "auto") ? p->job.audio_encoder
                                                                                                   : NULL;
    if ((named && !strcmp(named, "copy")) || (copy && !named) || (ofmt->flags & AVFMT_NOTIMESTAMPS))
        return 0;
    const AVCodec *codec = named ? avcodec_find_encoder_by_name(named) : vkcu_audio_encoder_for(ofmt);
    if (!codec)
        return 0; /* the check refused unknown names: here, no encoder fits the container */
    char why[512] = "";
    int ret = vkcu_audio_enc_open(&e->audio[ist->index], ist, codec, e->oc, why, sizeof(why));
    if (ret < 0) {
        if (named) {
            snprintf(s->err, s->errlen, "%s: stream %d (audio %s): %s: %s", p->job.output, ist->index,
                     avcodec_get_name(ist->codecpar->codec_id), VKCU_SETTING_IS("audio_encoder", named), why);
            return VKCU_ERR_USAGE;
        }
        LOGW("%s: stream %d (audio %s) cannot go into %s, nor be encoded with %s (%s); dropped", s->demux->path,
             ist->index, avcodec_get_name(ist->codecpar->codec_id), ofmt->name, codec->name, why);
        ist->discard = AVDISCARD_ALL;
        return 1;
    }
    e->stream_map[ist->index] = vkcu_audio_enc_stream(e->audio[ist->index]);
    if (named)
        LOGV("%s: stream %d (audio %s) encoded with %s", s->demux->path, ist->index,
             avcodec_get_name(ist->codecpar->codec_id), codec->name);
    else
        LOGI("%s: stream %d (audio %s) cannot go into %s: encoded with %s (%s chooses another, %s drops it)",
             s->demux->path, ist->index, avcodec_get_name(ist->codecpar->codec_id), ofmt->name, codec->name,
             VKCU_SETTING("audio_encoder"), VKCU_SETTING_IS("no_audio", "1"));
    return 1;
}

/* A subtitle stream the container cannot hold: text is converted to the
 * text codec it holds (subtitle_text.h); what cannot be is dropped with a
 * warning naming the stream. */
static void subtitle_stream(vkcu_sink *s, const AVOutputFormat *ofmt, AVStream *ist)
{
    encode_sink *e = s->priv;
    const char *path = s->demux->path, *name = avcodec_get_name(ist->codecpar->codec_id);
    const char *none = VKCU_SETTING_IS("subtitle_streams", "none");
    enum AVCodecID target = ofmt->flags & AVFMT_NOTIMESTAMPS ? AV_CODEC_ID_NONE : vkcu_sub_text_target(ofmt);
    ist->discard = AVDISCARD_ALL;
    if (!vkcu_sub_is_text(ist->codecpar->codec_id)) {
        if (target != AV_CODEC_ID_NONE)
            LOGW("%s: stream %d (subtitle %s) cannot go into %s, and bitmap subtitles cannot become text (%s); "
                 "dropped (%s drops subtitles without this warning)", path, ist->index, name, ofmt->name,
                 avcodec_get_name(target), none);
        else
            LOGW("%s: stream %d (subtitle %s) cannot go into %s; dropped (%s drops subtitles without this warning)",
                 path, ist->index, name, ofmt->name, none);
        return;
    }
    if (target == AV_CODEC_ID_NONE) {
        LOGW("%s: stream %d (subtitle %s) cannot go into %s, which holds no text subtitles; dropped (%s drops "
             "subtitles without this warning)", path, ist->index, name, ofmt->name, none);
        return;
    }
    char why[512] = "";
    if (vkcu_sub_text_open(&e->subs[ist->index], ist, target, e->oc, why, sizeof(why)) < 0) {
        LOGW("%s: stream %d (subtitle %s) cannot go into %s, nor be converted to %s (%s); dropped", path, ist->index,
             name, ofmt->name, avcodec_get_name(target), why);
        return;
    }
    ist->discard = AVDISCARD_DEFAULT;
    e->stream_map[ist->index] = vkcu_sub_text_stream(e->subs[ist->index]);
    LOGI("%s: stream %d (subtitle %s) cannot go into %s: converted to %s (text and timings kept, styling not; %s "
         "drops it)", path, ist->index, name, ofmt->name, avcodec_get_name(target), none);
}

/* Whether a muxer that does not say which codecs it holds (mpegts, mxf:
 * avformat_query_codec answers "unknown") takes input stream `ist`, tried
 * as ffmpeg's -c copy tries it: a header written to memory with the video
 * stream and this one. 1: it does; 0: it refuses this stream (the video
 * alone is taken); -1: the trial says nothing (the video alone is refused,
 * or the muxer writes no file of its own): copy, as ffmpeg would. */
static int muxer_trial(const AVOutputFormat *ofmt, const AVCodecContext *venc, AVRational vtb, const AVStream *ist)
{
    if (ofmt->flags & AVFMT_NOFILE)
        return -1;
    int result[2];
    for (int with = 0; with < 2; with++) {
        AVFormatContext *oc = NULL;
        AVStream *v, *o = NULL;
        int ret = avformat_alloc_output_context2(&oc, ofmt, NULL, NULL);
        if (ret >= 0 && (!(v = avformat_new_stream(oc, NULL)) || (with && !(o = avformat_new_stream(oc, NULL)))))
            ret = AVERROR(ENOMEM);
        if (ret >= 0 && (ret = avcodec_parameters_from_context(v->codecpar, venc)) >= 0) {
            v->time_base = vtb;
            if (o && (ret = avcodec_parameters_copy(o->codecpar, ist->codecpar)) >= 0) {
                o->codecpar->codec_tag = 0;
                o->time_base = ist->time_base;
            }
        }
        if (ret >= 0)
            ret = avio_open_dyn_buf(&oc->pb);
        if (ret >= 0) {
            ret = avformat_write_header(oc, NULL);
            uint8_t *buf = NULL;
            avio_close_dyn_buf(oc->pb, &buf);
            oc->pb = NULL;
            av_free(buf);
        }
        avformat_free_context(oc);
        if (ret == AVERROR(ENOMEM))
            return -1;
        result[with] = ret >= 0;
    }
    return !result[0] ? -1 : result[1];
}

/* The output's video stream, at input stream i's position. */
static int video_stream(vkcu_sink *s, int i, AVRational tb)
{
    encode_sink *e = s->priv;
    AVStream *ist = s->demux->fmt->streams[i];
    int ret = 0;
    e->vst = avformat_new_stream(e->oc, NULL);
    if (!e->vst)
        return AVERROR(ENOMEM);
    if ((ret = avcodec_parameters_from_context(e->vst->codecpar, e->enc)) < 0)
        goto fail;
    e->vst->time_base = tb;
    e->vst->avg_frame_rate = e->sync.rate;
    e->vst->disposition = ist->disposition;
    av_dict_copy(&e->vst->metadata, ist->metadata, 0);
    /* Rotation (display matrix) and stereo/spherical descriptions
     * travel with the stream; HDR metadata came from the format. */
    for (int k = 0; k < ist->codecpar->nb_coded_side_data; k++) {
        const AVPacketSideData *sd = &ist->codecpar->coded_side_data[k];
        if (sd->type != AV_PKT_DATA_DISPLAYMATRIX && sd->type != AV_PKT_DATA_STEREO3D &&
            sd->type != AV_PKT_DATA_SPHERICAL)
            continue;
        AVPacketSideData *nsd = av_packet_side_data_new(&e->vst->codecpar->coded_side_data,
                                                        &e->vst->codecpar->nb_coded_side_data, sd->type,
                                                        sd->size, 0);
        if (!nsd)
            return AVERROR(ENOMEM);
        memcpy(nsd->data, sd->data, sd->size);
    }
    e->stream_map[i] = e->vst->index;
    return 0;
fail:
    return ret;
}

/* Input stream i, not the video: copied, encoded, converted or dropped. */
static int other_stream(vkcu_sink *s, const AVOutputFormat *ofmt, int i, AVRational tb)
{
    encode_sink *e = s->priv;
    const vkcu_job_params *p = s->params;
    vkcu_demux *d = s->demux;
    AVStream *ist = d->fmt->streams[i];
    int ret = 0;
    enum AVMediaType t = ist->codecpar->codec_type;
    if (t != AVMEDIA_TYPE_AUDIO && t != AVMEDIA_TYPE_SUBTITLE && t != AVMEDIA_TYPE_DATA &&
        t != AVMEDIA_TYPE_ATTACHMENT) {
        ist->discard = AVDISCARD_ALL;
        return 0;
    }
    if (!vkcu_demux_picked(d, i, p->job.audio_streams, p->job.subtitle_streams)) {
        LOGV("%s: stream %d (%s %s) not picked (%s)", d->path, i, av_get_media_type_string(t),
             avcodec_get_name(ist->codecpar->codec_id),
             VKCU_SETTING(t == AVMEDIA_TYPE_AUDIO ? "audio_streams" : "subtitle_streams"));
        ist->discard = AVDISCARD_ALL;
        return 0;
    }
    if (t == AVMEDIA_TYPE_AUDIO && p->job.no_audio) {
        LOGV("%s: stream %d (audio %s) dropped (%s)", d->path, i, avcodec_get_name(ist->codecpar->codec_id),
             VKCU_SETTING_IS("no_audio", "1"));
        ist->discard = AVDISCARD_ALL;
        return 0;
    }
    /* Copied where the container holds the codec; where the muxer
     * does not say (mpegts), where a trial header takes it. */
    int takes = vkcu_muxer_takes(ofmt, ist->codecpar->codec_id);
    int copy = !(ofmt->flags & AVFMT_NOTIMESTAMPS) &&
               (takes == 1 || (takes < 0 && muxer_trial(ofmt, e->enc, tb, ist) != 0));
    if (t == AVMEDIA_TYPE_AUDIO && (ret = audio_stream(s, ofmt, ist, copy)) != 0)
        return ret < 0 ? ret : 0; /* encoded */
    if (!copy && t == AVMEDIA_TYPE_SUBTITLE) {
        subtitle_stream(s, ofmt, ist);
        return 0;
    }
    if (!copy) {
        if (vkcu_muxer_is_image(ofmt))
            LOGV("%s: stream %d (%s %s) dropped: images hold no %s", d->path, i, av_get_media_type_string(t),
                 avcodec_get_name(ist->codecpar->codec_id), av_get_media_type_string(t));
        else if (t == AVMEDIA_TYPE_AUDIO)
            LOGW("%s: stream %d (audio %s) cannot go into %s, and no audio encoder of this build can; dropped "
                 "(%s drops audio without this warning)", d->path, i, avcodec_get_name(ist->codecpar->codec_id),
                 ofmt->name, VKCU_SETTING_IS("no_audio", "1"));
        else
            LOGW("%s: stream %d (%s %s) cannot go into %s; dropped", d->path, i, av_get_media_type_string(t),
                 avcodec_get_name(ist->codecpar->codec_id), ofmt->name);
        ist->discard = AVDISCARD_ALL; /* not read: nor does it count for where the output starts */
        return 0;
    }
    AVStream *ost = avformat_new_stream(e->oc, NULL);
    if (!ost)
        return AVERROR(ENOMEM);
    if ((ret = avcodec_parameters_copy(ost->codecpar, ist->codecpar)) < 0)
        goto fail;
    ost->codecpar->codec_tag = 0;
    ost->time_base = ist->time_base;
    ost->disposition = ist->disposition;
    av_dict_copy(&ost->metadata, ist->metadata, 0);
    e->stream_map[i] = ost->index;
    return 0;
fail:
    return ret;
}

/* The input's chapters, with their metadata. */
static int copy_chapters(AVFormatContext *out, const AVFormatContext *in)
{
    if (!in->nb_chapters)
        return 0;
    out->chapters = av_calloc(in->nb_chapters, sizeof(*out->chapters));
    if (!out->chapters)
        return AVERROR(ENOMEM);
    for (unsigned i = 0; i < in->nb_chapters; i++) {
        const AVChapter *ic = in->chapters[i];
        AVChapter *oc = av_mallocz(sizeof(*oc));
        if (!oc)
            return AVERROR(ENOMEM);
        *oc = (AVChapter){ .id = ic->id, .time_base = ic->time_base, .start = ic->start, .end = ic->end };
        av_dict_copy(&oc->metadata, ic->metadata, 0);
        out->chapters[out->nb_chapters++] = oc;
    }
    return 0;
}

int vkcu_encsink_map_streams(vkcu_sink *s, const AVOutputFormat *ofmt, AVRational tb)
{
    encode_sink *e = s->priv;
    vkcu_demux *d = s->demux;
    /* Streams: video first at the input's position, others copied. */
    e->nb_map = d->fmt->nb_streams;
    e->stream_map = av_calloc(e->nb_map, sizeof(int));
    e->audio = av_calloc(e->nb_map, sizeof(*e->audio));
    e->subs = av_calloc(e->nb_map, sizeof(*e->subs));
    if (!e->stream_map || !e->audio || !e->subs)
        return AVERROR(ENOMEM);
    for (int i = 0; i < e->nb_map; i++) {
        e->stream_map[i] = -1;
        int ret = i == d->video_index ? video_stream(s, i, tb) : other_stream(s, ofmt, i, tb);
        if (ret < 0)
            return ret;
    }
    av_dict_copy(&e->oc->metadata, d->fmt->metadata, 0);
    return copy_chapters(e->oc, d->fmt);
}
