/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Audio re-encoding for the encode sink (audio_encode.h): decode, convert
 * with swresample to what the encoder takes, cut into the encoder's frame
 * size, encode. Timestamps count samples from the stream's first decoded
 * frame, in 1/sample rate, as ffmpeg's CLI times what it encodes.
 * Single-threaded codecs, so the same input gives the same packets.
 */
#include <string.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/channel_layout.h>
#include <libavutil/opt.h>
#include <libswresample/swresample.h>

#include "audio_encode.h"
#include "encoders.h"
#include "util/log.h"

/* Frames of encoders that take any size (PCM) are cut at this many samples. */
#define ANY_FRAME_SIZE 1024

struct vkcu_audio_enc {
    AVCodecContext *dec, *enc;
    SwrContext *swr;
    AVAudioFifo *fifo;
    AVFrame *frame, *converted, *chunk;
    AVPacket *pkt;
    AVStream *ost;
    int index;                  /* the input stream's */
    int64_t next_pts;           /* in 1/sample rate; AV_NOPTS_VALUE before the first frame */
    int chunk_size;
    /* what swr was set up for (a decoder may change it mid-stream) */
    AVChannelLayout swr_layout;
    int swr_rate;
    int swr_fmt;
};

const AVCodec *vkcu_audio_encoder_for(const AVOutputFormat *ofmt)
{
    static const char *const preferred[] = { "opus", "aac", "ac3", "pcm_s16le" };
    const AVCodec *c = ofmt->audio_codec != AV_CODEC_ID_NONE ? avcodec_find_encoder(ofmt->audio_codec) : NULL;
    if (c && vkcu_muxer_takes(ofmt, c->id) == 1)
        return c;
    for (size_t i = 0; i < sizeof(preferred) / sizeof(preferred[0]); i++)
        if ((c = avcodec_find_encoder_by_name(preferred[i])) && vkcu_muxer_takes(ofmt, c->id) == 1)
            return c;
    return NULL;
}

static int pick_rate(const AVCodec *c, int want)
{
    const void *cfg = NULL;
    int n = 0, best = 0;
    if (avcodec_get_supported_config(NULL, c, AV_CODEC_CONFIG_SAMPLE_RATE, 0, &cfg, &n) < 0 || !cfg || !n)
        return want;
    const int *r = cfg;
    for (int i = 0; i < n; i++) {
        if (r[i] == want)
            return want;
        /* the nearest rate at or above the input's, else the highest */
        if ((r[i] > want && (best < want || r[i] < best)) || (best < want && r[i] > best))
            best = r[i];
    }
    return best;
}

static enum AVSampleFormat pick_format(const AVCodec *c, enum AVSampleFormat want)
{
    const void *cfg = NULL;
    int n = 0;
    if (avcodec_get_supported_config(NULL, c, AV_CODEC_CONFIG_SAMPLE_FORMAT, 0, &cfg, &n) < 0 || !cfg || !n)
        return want;
    const enum AVSampleFormat *f = cfg;
    for (int i = 0; i < n; i++)
        if (f[i] == want)
            return want;
    return f[0];
}

static int pick_layout(const AVCodec *c, const AVChannelLayout *want, AVChannelLayout *out)
{
    const void *cfg = NULL;
    int n = 0;
    if (avcodec_get_supported_config(NULL, c, AV_CODEC_CONFIG_CHANNEL_LAYOUT, 0, &cfg, &n) < 0 || !cfg || !n)
        return av_channel_layout_copy(out, want);
    const AVChannelLayout *l = cfg;
    for (int i = 0; i < n; i++)
        if (!av_channel_layout_compare(&l[i], want))
            return av_channel_layout_copy(out, want);
    /* More channels than the encoder takes: stereo (Opus takes mono and stereo), else its first. */
    AVChannelLayout stereo = AV_CHANNEL_LAYOUT_STEREO, mono = AV_CHANNEL_LAYOUT_MONO;
    const AVChannelLayout *pick = want->nb_channels == 1 ? &mono : &stereo;
    for (int i = 0; i < n; i++)
        if (!av_channel_layout_compare(&l[i], pick))
            return av_channel_layout_copy(out, pick);
    return av_channel_layout_copy(out, &l[0]);
}

int vkcu_audio_enc_open(vkcu_audio_enc **out, const AVStream *ist, const AVCodec *codec, AVFormatContext *oc,
                        char *err, size_t errlen)
{
    int ret;
    char buf[128];
    *out = NULL;
    vkcu_audio_enc *a = av_mallocz(sizeof(*a));
    if (!a)
        return AVERROR(ENOMEM);
    a->index = ist->index;
    a->next_pts = AV_NOPTS_VALUE;
    a->swr_fmt = -1;
    const AVCodec *dc = avcodec_find_decoder(ist->codecpar->codec_id);
    if (!dc) {
        snprintf(err, errlen, "no decoder for %s in this build", avcodec_get_name(ist->codecpar->codec_id));
        ret = AVERROR_DECODER_NOT_FOUND;
        goto fail;
    }
    if (!(a->dec = avcodec_alloc_context3(dc)) || !(a->enc = avcodec_alloc_context3(codec)) ||
        !(a->frame = av_frame_alloc()) || !(a->converted = av_frame_alloc()) || !(a->chunk = av_frame_alloc()) ||
        !(a->pkt = av_packet_alloc())) {
        ret = AVERROR(ENOMEM);
        goto fail;
    }
    if ((ret = avcodec_parameters_to_context(a->dec, ist->codecpar)) < 0)
        goto fail;
    a->dec->pkt_timebase = ist->time_base;
    a->dec->thread_count = 1;
    if ((ret = avcodec_open2(a->dec, dc, NULL)) < 0) {
        snprintf(err, errlen, "cannot open the %s decoder: %s", dc->name, vkcu_err_str(ret, buf, sizeof(buf)));
        goto fail;
    }
    AVCodecContext *e = a->enc;
    e->sample_rate = pick_rate(codec, a->dec->sample_rate > 0 ? a->dec->sample_rate : 48000);
    e->sample_fmt = pick_format(codec, a->dec->sample_fmt);
    AVChannelLayout in_layout = { 0 };
    if (a->dec->ch_layout.nb_channels > 0)
        ret = av_channel_layout_copy(&in_layout, &a->dec->ch_layout);
    else
        av_channel_layout_default(&in_layout, 2);
    if (ret < 0 || (ret = pick_layout(codec, &in_layout, &e->ch_layout)) < 0) {
        av_channel_layout_uninit(&in_layout);
        goto fail;
    }
    av_channel_layout_uninit(&in_layout);
    e->time_base = (AVRational){ 1, e->sample_rate };
    e->thread_count = 1;
    /* FFmpeg's own Opus encoder is marked experimental (no libopus in this build). */
    e->strict_std_compliance = FF_COMPLIANCE_EXPERIMENTAL;
    if (oc->oformat->flags & AVFMT_GLOBALHEADER)
        e->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    if ((ret = avcodec_open2(e, codec, NULL)) < 0) {
        snprintf(err, errlen, "cannot open the %s encoder: %s", codec->name, vkcu_err_str(ret, buf, sizeof(buf)));
        goto fail;
    }
    a->chunk_size = e->frame_size > 0 && !(codec->capabilities & AV_CODEC_CAP_VARIABLE_FRAME_SIZE) ? e->frame_size
                                                                                                 : ANY_FRAME_SIZE;
    /* The stream last, once nothing else can fail: a failure leaves oc as it was. */
    AVCodecParameters *par = avcodec_parameters_alloc();
    if (!par || !(a->fifo = av_audio_fifo_alloc(e->sample_fmt, e->ch_layout.nb_channels, a->chunk_size * 4)) ||
        (ret = avcodec_parameters_from_context(par, e)) < 0 || !(a->ost = avformat_new_stream(oc, NULL))) {
        avcodec_parameters_free(&par);
        ret = ret < 0 ? ret : AVERROR(ENOMEM);
        goto fail;
    }
    ret = avcodec_parameters_copy(a->ost->codecpar, par);
    avcodec_parameters_free(&par);
    if (ret < 0)
        goto fail;
    a->ost->time_base = e->time_base;
    a->ost->disposition = ist->disposition;
    av_dict_copy(&a->ost->metadata, ist->metadata, 0);
    *out = a;
    return 0;
fail:
    if (!err[0])
        snprintf(err, errlen, "cannot set up the %s encoder: %s", codec->name, vkcu_err_str(ret, buf, sizeof(buf)));
    vkcu_audio_enc_close(&a);
    return ret < 0 ? ret : AVERROR(EINVAL);
}

int vkcu_audio_enc_stream(const vkcu_audio_enc *a)
{
    return a->ost->index;
}

static int drain_encoder(vkcu_audio_enc *a, int (*emit)(void *, AVPacket *), void *opaque)
{
    for (;;) {
        int ret = avcodec_receive_packet(a->enc, a->pkt);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF)
            return 0;
        if (ret < 0)
            return ret;
        AVPacket *p = av_packet_alloc();
        if (!p) {
            av_packet_unref(a->pkt);
            return AVERROR(ENOMEM);
        }
        av_packet_move_ref(p, a->pkt);
        p->stream_index = a->ost->index;
        /* the muxer may have changed the stream's time base in its header */
        av_packet_rescale_ts(p, a->enc->time_base, a->ost->time_base);
        if ((ret = emit(opaque, p)) < 0)
            return ret;
    }
}

/* Encodes the fifo's samples in chunks of the encoder's frame size; at the
 * end (last), the rest too: as a short frame where the encoder takes one,
 * else padded with silence. */
static int encode_fifo(vkcu_audio_enc *a, int last, int (*emit)(void *, AVPacket *), void *opaque)
{
    for (;;) {
        int have = av_audio_fifo_size(a->fifo);
        if (!have || (have < a->chunk_size && !last))
            return 0;
        int n = have < a->chunk_size ? have : a->chunk_size;
        int small = a->enc->codec->capabilities & (AV_CODEC_CAP_SMALL_LAST_FRAME | AV_CODEC_CAP_VARIABLE_FRAME_SIZE);
        AVFrame *f = a->chunk;
        av_frame_unref(f);
        f->nb_samples = small || !a->enc->frame_size ? n : a->chunk_size;
        f->format = a->enc->sample_fmt;
        f->sample_rate = a->enc->sample_rate;
        int ret = av_channel_layout_copy(&f->ch_layout, &a->enc->ch_layout);
        if (ret >= 0)
            ret = av_frame_get_buffer(f, 0);
        if (ret < 0)
            return ret;
        if (f->nb_samples > n)
            av_samples_set_silence(f->data, n, f->nb_samples - n, f->ch_layout.nb_channels, f->format);
        if (av_audio_fifo_read(a->fifo, (void **)f->data, n) < n)
            return AVERROR_BUG;
        f->pts = a->next_pts;
        a->next_pts += n;
        if ((ret = avcodec_send_frame(a->enc, f)) < 0 || (ret = drain_encoder(a, emit, opaque)) < 0)
            return ret;
    }
}

/* Converts one decoded frame (NULL: what swr still holds) into the fifo. */
static int convert(vkcu_audio_enc *a, const AVFrame *in)
{
    int ret;
    if (in && (!a->swr || a->swr_rate != in->sample_rate || a->swr_fmt != in->format ||
               av_channel_layout_compare(&a->swr_layout, &in->ch_layout))) {
        swr_free(&a->swr);
        ret = swr_alloc_set_opts2(&a->swr, &a->enc->ch_layout, a->enc->sample_fmt, a->enc->sample_rate,
                                  &in->ch_layout, in->format, in->sample_rate, 0, NULL);
        if (ret >= 0)
            ret = swr_init(a->swr);
        if (ret < 0)
            return ret;
        av_channel_layout_uninit(&a->swr_layout);
        if ((ret = av_channel_layout_copy(&a->swr_layout, &in->ch_layout)) < 0)
            return ret;
        a->swr_rate = in->sample_rate;
        a->swr_fmt = in->format;
    }
    if (!a->swr)
        return 0;
    AVFrame *o = a->converted;
    av_frame_unref(o);
    o->format = a->enc->sample_fmt;
    o->sample_rate = a->enc->sample_rate;
    if ((ret = av_channel_layout_copy(&o->ch_layout, &a->enc->ch_layout)) < 0)
        return ret;
    o->nb_samples = swr_get_out_samples(a->swr, in ? in->nb_samples : 0);
    if (o->nb_samples <= 0)
        return 0;
    if ((ret = av_frame_get_buffer(o, 0)) < 0)
        return ret;
    int got = swr_convert(a->swr, o->data, o->nb_samples, in ? (const uint8_t **)in->extended_data : NULL,
                          in ? in->nb_samples : 0);
    if (got < 0)
        return got;
    return got > 0 && av_audio_fifo_write(a->fifo, (void **)o->data, got) < got ? AVERROR(ENOMEM) : 0;
}

int vkcu_audio_enc_send(vkcu_audio_enc *a, const AVPacket *pkt, int (*emit)(void *opaque, AVPacket *pkt),
                        void *opaque, char *err, size_t errlen)
{
    char buf[128];
    int ret = avcodec_send_packet(a->dec, pkt);
    if (ret < 0 && ret != AVERROR_EOF) {
        LOGV("audio stream %d: packet not decoded (%s); skipped", a->index, vkcu_err_str(ret, buf, sizeof(buf)));
        if (pkt)
            return 0;
    }
    for (;;) {
        ret = avcodec_receive_frame(a->dec, a->frame);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF)
            break;
        if (ret < 0) {
            LOGV("audio stream %d: frame not decoded (%s); skipped", a->index, vkcu_err_str(ret, buf, sizeof(buf)));
            if (!pkt)
                break;
            return 0;
        }
        if (a->next_pts == AV_NOPTS_VALUE) {
            int64_t ts = a->frame->best_effort_timestamp;
            a->next_pts = ts == AV_NOPTS_VALUE ? 0 : av_rescale_q(ts, a->dec->pkt_timebase, a->enc->time_base);
        }
        ret = convert(a, a->frame);
        av_frame_unref(a->frame);
        if (ret < 0 || (ret = encode_fifo(a, 0, emit, opaque)) < 0)
            goto fail;
    }
    if (pkt)
        return 0;
    /* The end: what the resampler holds, the fifo's rest, the encoder's delay. */
    if ((ret = convert(a, NULL)) < 0 || (ret = encode_fifo(a, 1, emit, opaque)) < 0)
        goto fail;
    ret = avcodec_send_frame(a->enc, NULL);
    if (ret >= 0 || ret == AVERROR_EOF)
        ret = drain_encoder(a, emit, opaque);
    if (ret >= 0)
        return 0;
fail:
    snprintf(err, errlen, "audio stream %d: %s encoder: %s", a->index, a->enc->codec->name,
             vkcu_err_str(ret, buf, sizeof(buf)));
    return ret;
}

void vkcu_audio_enc_close(vkcu_audio_enc **pa)
{
    vkcu_audio_enc *a = *pa;
    if (!a)
        return;
    avcodec_free_context(&a->dec);
    avcodec_free_context(&a->enc);
    swr_free(&a->swr);
    if (a->fifo)
        av_audio_fifo_free(a->fifo);
    av_frame_free(&a->frame);
    av_frame_free(&a->converted);
    av_frame_free(&a->chunk);
    av_packet_free(&a->pkt);
    av_channel_layout_uninit(&a->swr_layout);
    av_freep(pa);
}
