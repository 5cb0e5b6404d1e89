/*
 * Encode sink: libavcodec encoder + libavformat muxer. The container
 * follows the output's extension; `.y4m` and `.nut` get raw frames. Other
 * streams (audio, subtitles, data) are copied, with container metadata and
 * chapters. Output goes to a temporary name and is renamed at the end.
 */
#include <string.h>
#include <libavutil/avstring.h>
#include <libavutil/display.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>

#include "log.h"
#include "stage.h"

typedef struct encode_sink {
    AVFormatContext *oc;
    AVCodecContext *enc;
    AVStream *vst;
    int *stream_map;        /* input stream -> output stream, -1: dropped */
    int nb_map;
    AVPacket *pkt;
    AVRational in_tb;
    char tmp[4200];
    int header_written;
    int64_t frames;
} encode_sink;

static const char *default_encoder(const AVOutputFormat *ofmt, const char *path)
{
    const char *ext = strrchr(path, '.');
    ext = ext ? ext + 1 : "";
    if (!av_strcasecmp(ext, "y4m"))
        return "wrapped_avframe";
    if (!av_strcasecmp(ext, "nut") || !av_strcasecmp(ext, "yuv") || !av_strcasecmp(ext, "raw"))
        return "rawvideo";
    if (!av_strcasecmp(ext, "ivf") || !av_strcasecmp(ext, "webm") || !av_strcasecmp(ext, "obu"))
        return "libsvtav1";
    if (!av_strcasecmp(ext, "hevc") || !av_strcasecmp(ext, "h265") || !av_strcasecmp(ext, "265"))
        return "libx265";
    (void)ofmt;
    return "libx264";
}

static int pix_fmt_supported(const AVCodec *codec, enum AVPixelFormat fmt)
{
    const void *cfg = NULL;
    int n = 0;
    if (avcodec_get_supported_config(NULL, codec, AV_CODEC_CONFIG_PIX_FORMAT, 0, &cfg, &n) < 0 || !cfg)
        return 1; /* the encoder does not say: let it decide */
    const enum AVPixelFormat *p = cfg;
    for (int i = 0; i < n; i++)
        if (p[i] == fmt)
            return 1;
    return 0;
}

static int encode_open(vkcu_sink *s, const vkcu_video_format *fmt, AVRational tb)
{
    encode_sink *e = s->priv;
    const vkcu_job_params *p = s->params;
    vkcu_demux *d = s->demux;
    const char *path = p->output;
    int ret;
    e->in_tb = tb;
    const char *fmtname = NULL;
    const char *ext = strrchr(path, '.');
    if (ext && !av_strcasecmp(ext, ".y4m"))
        fmtname = "yuv4mpegpipe";
    else if (ext && (!av_strcasecmp(ext, ".yuv") || !av_strcasecmp(ext, ".raw")))
        fmtname = "rawvideo";
    const AVOutputFormat *ofmt = av_guess_format(fmtname, path, NULL);
    if (!ofmt) {
        snprintf(s->err, s->errlen, "%s: unknown output format (use an extension such as .mkv, .mp4, .nut, .y4m)", path);
        return VKCU_ERR_USAGE;
    }
    const char *encname = p->encoder && *p->encoder && strcmp(p->encoder, "auto") ? p->encoder : default_encoder(ofmt, path);
    const AVCodec *codec = avcodec_find_encoder_by_name(encname);
    if (!codec) {
        snprintf(s->err, s->errlen, "%s: encoder '%s' is not available in this build", path, encname);
        return VKCU_ERR_USAGE;
    }
    if (!pix_fmt_supported(codec, fmt->pix_fmt)) {
        snprintf(s->err, s->errlen, "%s: encoder %s cannot take %s frames (add convert=format=... to the chain)",
                 path, codec->name, av_get_pix_fmt_name(fmt->pix_fmt));
        return VKCU_ERR_USAGE;
    }
    ret = vkcu_outfile_begin(path, p->overwrite, e->tmp, sizeof(e->tmp), s->err, s->errlen);
    if (ret < 0)
        return ret;
    ret = avformat_alloc_output_context2(&e->oc, ofmt, NULL, e->tmp);
    if (ret < 0)
        goto fail_out;

    e->enc = avcodec_alloc_context3(codec);
    if (!e->enc) {
        ret = AVERROR(ENOMEM);
        goto fail_out;
    }
    e->enc->width = fmt->width;
    e->enc->height = fmt->height;
    e->enc->pix_fmt = fmt->pix_fmt;
    e->enc->time_base = tb;
    e->enc->framerate = d->frame_rate;
    e->enc->sample_aspect_ratio = d->video->codecpar->sample_aspect_ratio;
    e->enc->colorspace = fmt->matrix;
    e->enc->color_range = fmt->range;
    e->enc->color_primaries = fmt->primaries;
    e->enc->color_trc = fmt->transfer;
    e->enc->chroma_sample_location = fmt->chroma_loc;
    if (p->gop > 0)
        e->enc->gop_size = p->gop;
    if (p->bitrate > 0)
        e->enc->bit_rate = p->bitrate;
    if (p->crf >= 0)
        av_opt_set_int(e->enc->priv_data, "crf", p->crf, 0);
    if (p->preset && *p->preset && av_opt_set(e->enc->priv_data, "preset", p->preset, 0) < 0) {
        snprintf(s->err, s->errlen, "%s: encoder %s has no preset '%s'", path, codec->name, p->preset);
        ret = VKCU_ERR_USAGE;
        goto fail_out;
    }
    if (p->encoder_opts && *p->encoder_opts) {
        AVDictionary *opts = NULL;
        if (av_dict_parse_string(&opts, p->encoder_opts, "=", ":", 0) < 0) {
            snprintf(s->err, s->errlen, "--encoder-opt: cannot parse '%s' (expected key=value:key=value)", p->encoder_opts);
            av_dict_free(&opts);
            ret = VKCU_ERR_USAGE;
            goto fail_out;
        }
        const AVDictionaryEntry *t = NULL;
        while ((t = av_dict_iterate(opts, t))) {
            if (av_opt_set(e->enc, t->key, t->value, AV_OPT_SEARCH_CHILDREN) < 0) {
                snprintf(s->err, s->errlen, "--encoder-opt: %s has no option %s=%s", codec->name, t->key, t->value);
                av_dict_free(&opts);
                ret = VKCU_ERR_USAGE;
                goto fail_out;
            }
        }
        av_dict_free(&opts);
    }
    if (ofmt->flags & AVFMT_GLOBALHEADER)
        e->enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    if (codec->id == AV_CODEC_ID_FFV1)
        e->enc->thread_count = 0;
    ret = avcodec_open2(e->enc, codec, NULL);
    if (ret < 0) {
        char buf[128];
        snprintf(s->err, s->errlen, "%s: cannot open encoder %s: %s", path, codec->name, vkcu_err_str(ret, buf, sizeof(buf)));
        ret = VKCU_ERR_USAGE;
        goto fail_out;
    }

    /* Streams: video first at the input's position, others copied. */
    e->nb_map = d->fmt->nb_streams;
    e->stream_map = av_calloc(e->nb_map, sizeof(int));
    if (!e->stream_map) {
        ret = AVERROR(ENOMEM);
        goto fail_out;
    }
    for (int i = 0; i < e->nb_map; i++) {
        AVStream *ist = d->fmt->streams[i];
        e->stream_map[i] = -1;
        if (i == d->video_index) {
            e->vst = avformat_new_stream(e->oc, NULL);
            if (!e->vst) {
                ret = AVERROR(ENOMEM);
                goto fail_out;
            }
            AV_CHECK(avcodec_parameters_from_context(e->vst->codecpar, e->enc));
            e->vst->time_base = tb;
            e->vst->avg_frame_rate = d->video->avg_frame_rate;
            e->vst->r_frame_rate = d->video->r_frame_rate;
            av_dict_copy(&e->vst->metadata, ist->metadata, 0);
            /* Rotation (display matrix) travels with the stream. */
            for (int k = 0; k < ist->codecpar->nb_coded_side_data; k++) {
                const AVPacketSideData *sd = &ist->codecpar->coded_side_data[k];
                if (sd->type == AV_PKT_DATA_DISPLAYMATRIX &&
                    !av_packet_side_data_add(&e->vst->codecpar->coded_side_data, &e->vst->codecpar->nb_coded_side_data,
                                             sd->type, av_memdup(sd->data, sd->size), sd->size, 0)) {
                    ret = AVERROR(ENOMEM);
                    goto fail_out;
                }
            }
            e->stream_map[i] = e->vst->index;
            continue;
        }
        enum AVMediaType t = ist->codecpar->codec_type;
        if (t != AVMEDIA_TYPE_AUDIO && t != AVMEDIA_TYPE_SUBTITLE && t != AVMEDIA_TYPE_DATA)
            continue;
        if (avformat_query_codec(ofmt, ist->codecpar->codec_id, FF_COMPLIANCE_NORMAL) != 1) {
            LOGW("%s: stream %d (%s %s) cannot go into %s; dropped", d->path, i, av_get_media_type_string(t),
                 avcodec_get_name(ist->codecpar->codec_id), ofmt->name);
            continue;
        }
        AVStream *ost = avformat_new_stream(e->oc, NULL);
        if (!ost) {
            ret = AVERROR(ENOMEM);
            goto fail_out;
        }
        AV_CHECK(avcodec_parameters_copy(ost->codecpar, ist->codecpar));
        ost->codecpar->codec_tag = 0;
        ost->time_base = ist->time_base;
        ost->disposition = ist->disposition;
        av_dict_copy(&ost->metadata, ist->metadata, 0);
        e->stream_map[i] = ost->index;
    }
    av_dict_copy(&e->oc->metadata, d->fmt->metadata, 0);
    if (d->fmt->nb_chapters) {
        e->oc->chapters = av_calloc(d->fmt->nb_chapters, sizeof(*e->oc->chapters));
        if (!e->oc->chapters) {
            ret = AVERROR(ENOMEM);
            goto fail_out;
        }
        for (unsigned i = 0; i < d->fmt->nb_chapters; i++) {
            const AVChapter *ic = d->fmt->chapters[i];
            AVChapter *oc = av_mallocz(sizeof(*oc));
            if (!oc) {
                ret = AVERROR(ENOMEM);
                goto fail_out;
            }
            *oc = (AVChapter){ .id = ic->id, .time_base = ic->time_base, .start = ic->start, .end = ic->end };
            av_dict_copy(&oc->metadata, ic->metadata, 0);
            e->oc->chapters[e->oc->nb_chapters++] = oc;
        }
    }
    if (!(ofmt->flags & AVFMT_NOFILE)) {
        ret = avio_open(&e->oc->pb, e->tmp, AVIO_FLAG_WRITE);
        if (ret < 0) {
            char buf[128];
            snprintf(s->err, s->errlen, "%s: cannot create output: %s", path, vkcu_err_str(ret, buf, sizeof(buf)));
            ret = VKCU_ERR_OUTPUT;
            goto fail_out;
        }
    }
    ret = avformat_write_header(e->oc, NULL);
    if (ret < 0) {
        char buf[128];
        snprintf(s->err, s->errlen, "%s: cannot write the %s header: %s", path, ofmt->name, vkcu_err_str(ret, buf, sizeof(buf)));
        ret = VKCU_ERR_OUTPUT;
        goto fail_out;
    }
    e->header_written = 1;
    e->pkt = av_packet_alloc();
    if (!e->pkt) {
        ret = AVERROR(ENOMEM);
        goto fail_out;
    }
    LOGV("%s: %s in %s, %s", path, codec->name, ofmt->name, av_get_pix_fmt_name(fmt->pix_fmt));
    return 0;
fail:
fail_out:
    if (!s->err[0]) {
        char buf[128];
        snprintf(s->err, s->errlen, "%s: cannot set up the output: %s", path, vkcu_err_str(ret, buf, sizeof(buf)));
    }
    return ret;
}

static int write_out(vkcu_sink *s, AVPacket *pkt)
{
    encode_sink *e = s->priv;
    int ret = av_interleaved_write_frame(e->oc, pkt);
    if (ret < 0) {
        char buf[128];
        snprintf(s->err, s->errlen, "%s: write error: %s%s", s->params->output, vkcu_err_str(ret, buf, sizeof(buf)),
                 ret == AVERROR(ENOSPC) ? " (disk full)" : "");
        return VKCU_ERR_OUTPUT;
    }
    return 0;
}

static int drain(vkcu_sink *s)
{
    encode_sink *e = s->priv;
    for (;;) {
        int ret = avcodec_receive_packet(e->enc, e->pkt);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF)
            return 0;
        if (ret < 0) {
            char buf[128];
            snprintf(s->err, s->errlen, "%s: encoder error: %s", s->params->output, vkcu_err_str(ret, buf, sizeof(buf)));
            return ret;
        }
        e->pkt->stream_index = e->vst->index;
        av_packet_rescale_ts(e->pkt, e->enc->time_base, e->vst->time_base);
        ret = write_out(s, e->pkt);
        if (ret < 0)
            return ret;
    }
}

static int encode_write(vkcu_sink *s, AVFrame *frame)
{
    encode_sink *e = s->priv;
    frame->pict_type = AV_PICTURE_TYPE_NONE;
    int ret = avcodec_send_frame(e->enc, frame);
    if (ret < 0) {
        char buf[128];
        snprintf(s->err, s->errlen, "%s: encoder refused frame %lld: %s", s->params->output, (long long)e->frames,
                 vkcu_err_str(ret, buf, sizeof(buf)));
        return ret;
    }
    e->frames++;
    return drain(s);
}

static int encode_packet(vkcu_sink *s, AVPacket *pkt)
{
    encode_sink *e = s->priv;
    if (pkt->stream_index >= e->nb_map || e->stream_map[pkt->stream_index] < 0)
        return 0;
    AVStream *ist = s->demux->fmt->streams[pkt->stream_index];
    pkt->stream_index = e->stream_map[pkt->stream_index];
    av_packet_rescale_ts(pkt, ist->time_base, e->oc->streams[pkt->stream_index]->time_base);
    pkt->pos = -1;
    return write_out(s, pkt);
}

static int encode_close(vkcu_sink *s, int ok)
{
    encode_sink *e = s->priv;
    int ret = 0;
    if (ok && e->enc) {
        avcodec_send_frame(e->enc, NULL);
        ret = drain(s);
        if (ret >= 0 && e->header_written) {
            ret = av_write_trailer(e->oc);
            if (ret < 0)
                snprintf(s->err, s->errlen, "%s: cannot finish the output (disk full?)", s->params->output);
        }
    }
    if (e->oc && e->oc->pb && !(e->oc->oformat->flags & AVFMT_NOFILE)) {
        avio_flush(e->oc->pb);
        if (ok && ret >= 0 && e->oc->pb->error < 0) {
            snprintf(s->err, s->errlen, "%s: write error%s", s->params->output,
                     e->oc->pb->error == AVERROR(ENOSPC) ? " (disk full)" : "");
            ret = VKCU_ERR_OUTPUT;
        }
        avio_closep(&e->oc->pb);
    }
    avformat_free_context(e->oc);
    e->oc = NULL;
    avcodec_free_context(&e->enc);
    av_packet_free(&e->pkt);
    av_freep(&e->stream_map);
    if (e->tmp[0]) {
        if (ok && ret >= 0)
            ret = vkcu_outfile_commit(e->tmp, s->params->output, s->err, s->errlen);
        else if (s->params->keep_partial)
            vkcu_outfile_commit(e->tmp, s->params->output, s->err, s->errlen);
        else
            vkcu_outfile_abort(e->tmp);
        e->tmp[0] = 0;
    }
    return ret < 0 ? (ret == VKCU_ERR_OUTPUT ? ret : VKCU_ERR_OUTPUT) : 0;
}

const vkcu_sink_class vkcu_sink_encode = {
    .name = "encode",
    .priv_size = sizeof(encode_sink),
    .open = encode_open,
    .write_frame = encode_write,
    .write_packet = encode_packet,
    .close = encode_close,
};
