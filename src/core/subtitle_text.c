/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Text subtitle conversion for the encode sink (subtitle_text.h): each
 * event decoded by libavcodec's decoder into ASS dialogue text, its
 * override blocks ({\i1} ...) left out and its line breaks (\N, \n) kept,
 * written as the target codec's packet:
 *   mov_text: a 16-bit big-endian byte count, then the UTF-8 text (3GPP
 *             TS 26.245 TextSample, no modifier boxes), with the sample
 *             description FFmpeg's mov_text encoder writes by default;
 *   subrip:   the text, lines ending in CR LF (Matroska S_TEXT/UTF8);
 *   webvtt:   the text (the cue payload), lines ending in LF.
 * Timings are the event's: its start (the packet's pts plus the decoder's
 * start_display_time) and its display time.
 */
#include <string.h>
#include <libavutil/bprint.h>
#include <libavutil/intreadwrite.h>
#include <libavutil/mem.h>

#include "encoders.h"
#include "subtitle_text.h"
#include "util/log.h"

struct vkcu_sub_text {
    AVCodecContext *dec;
    AVStream *ost;
    enum AVCodecID target;
    AVRational tb;              /* the input stream's */
    int index;                  /* the input stream's */
};

static const enum AVCodecID targets[] = { AV_CODEC_ID_MOV_TEXT, AV_CODEC_ID_SUBRIP, AV_CODEC_ID_WEBVTT };

int vkcu_sub_is_text(enum AVCodecID id)
{
    const AVCodecDescriptor *d = avcodec_descriptor_get(id);
    return d && d->type == AVMEDIA_TYPE_SUBTITLE && (d->props & AV_CODEC_PROP_TEXT_SUB);
}

enum AVCodecID vkcu_sub_text_target(const AVOutputFormat *ofmt)
{
    for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++)
        if (ofmt->subtitle_codec == targets[i] && vkcu_muxer_takes(ofmt, targets[i]) != 0)
            return targets[i];
    for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++)
        if (vkcu_muxer_takes(ofmt, targets[i]) == 1)
            return targets[i];
    return AV_CODEC_ID_NONE;
}

/* What FFmpeg's mov_text encoder writes as the sample description when the
 * source says nothing of its style: no display flags, centred at the
 * bottom, no background, an empty box, one style (font 1, 18 px, opaque
 * white) and a font table naming font 1 "Serif". */
static const uint8_t movtext_description[] = {
    0x00, 0x00, 0x00, 0x00, 0x01, 0xFF, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x12, 0xFF, 0xFF, 0xFF, 0xFF,
    0x00, 0x00, 0x00, 0x12, 'f', 't', 'a', 'b', 0x00, 0x01, 0x00, 0x01, 0x05, 'S', 'e', 'r', 'i', 'f',
};

int vkcu_sub_text_open(vkcu_sub_text **out, const AVStream *ist, enum AVCodecID target, AVFormatContext *oc,
                       char *err, size_t errlen)
{
    int ret;
    char buf[128];
    *out = NULL;
    const AVCodec *dc = avcodec_find_decoder(ist->codecpar->codec_id);
    if (!dc) {
        snprintf(err, errlen, "no decoder for %s in this build", avcodec_get_name(ist->codecpar->codec_id));
        return AVERROR_DECODER_NOT_FOUND;
    }
    vkcu_sub_text *t = av_mallocz(sizeof(*t));
    if (!t)
        return AVERROR(ENOMEM);
    t->target = target;
    t->tb = ist->time_base;
    t->index = ist->index;
    if (!(t->dec = avcodec_alloc_context3(dc))) {
        ret = AVERROR(ENOMEM);
        goto fail;
    }
    if ((ret = avcodec_parameters_to_context(t->dec, ist->codecpar)) < 0)
        goto fail;
    t->dec->pkt_timebase = ist->time_base;
    if ((ret = avcodec_open2(t->dec, dc, NULL)) < 0) {
        snprintf(err, errlen, "cannot open the %s decoder: %s", dc->name, vkcu_err_str(ret, buf, sizeof(buf)));
        goto fail;
    }
    /* The stream last, once nothing else can fail: a failure leaves oc as it was. */
    uint8_t *extra = NULL;
    if (target == AV_CODEC_ID_MOV_TEXT) {
        extra = av_mallocz(sizeof(movtext_description) + AV_INPUT_BUFFER_PADDING_SIZE);
        if (!extra) {
            ret = AVERROR(ENOMEM);
            goto fail;
        }
        memcpy(extra, movtext_description, sizeof(movtext_description));
    }
    if (!(t->ost = avformat_new_stream(oc, NULL))) {
        av_free(extra);
        ret = AVERROR(ENOMEM);
        goto fail;
    }
    AVCodecParameters *par = t->ost->codecpar;
    par->codec_type = AVMEDIA_TYPE_SUBTITLE;
    par->codec_id = target;
    par->extradata = extra;
    par->extradata_size = extra ? (int)sizeof(movtext_description) : 0;
    t->ost->time_base = ist->time_base;
    t->ost->disposition = ist->disposition;
    av_dict_copy(&t->ost->metadata, ist->metadata, 0);
    *out = t;
    return 0;
fail:
    if (!err[0])
        snprintf(err, errlen, "cannot set up the conversion to %s: %s", avcodec_get_name(target),
                 vkcu_err_str(ret, buf, sizeof(buf)));
    vkcu_sub_text_close(&t);
    return ret < 0 ? ret : AVERROR(EINVAL);
}

int vkcu_sub_text_stream(const vkcu_sub_text *t)
{
    return t->ost->index;
}

/* The text of one ASS dialogue event ("ReadOrder,Layer,Style,Name,MarginL,
 * MarginR,MarginV,Effect,Text"): override blocks left out, \N and \n as
 * `nl`, as libavcodec's override parser splits them. */
static void ass_text(AVBPrint *b, const char *ass, const char *nl)
{
    const char *p = ass;
    for (int commas = 0; commas < 8 && p; commas++)
        if ((p = strchr(p, ',')))
            p++;
    if (!p)
        p = ass; /* not a dialogue line: all of it is text */
    while (*p) {
        if (p[0] == '\\' && (p[1] == 'N' || p[1] == 'n')) {
            av_bprintf(b, "%s", nl);
            p += 2;
        } else if (p[0] == '{' && p[1] == '\\') {
            const char *end = strchr(p, '}');
            p = end ? end + 1 : p + strlen(p);
        } else {
            av_bprint_chars(b, *p++, 1);
        }
    }
}

int vkcu_sub_text_send(vkcu_sub_text *t, const AVPacket *pkt, int (*emit)(void *opaque, AVPacket *pkt),
                       void *opaque)
{
    char buf[128];
    AVSubtitle sub;
    int got = 0;
    int ret = avcodec_decode_subtitle2(t->dec, &sub, &got, (AVPacket *)pkt);
    if (ret < 0) {
        LOGV("subtitle stream %d: packet not decoded (%s); skipped", t->index, vkcu_err_str(ret, buf, sizeof(buf)));
        return 0;
    }
    if (!got)
        return 0;
    const char *nl = t->target == AV_CODEC_ID_SUBRIP ? "\r\n" : "\n";
    AVBPrint b;
    av_bprint_init(&b, 0, AV_BPRINT_SIZE_UNLIMITED);
    for (unsigned i = 0; i < sub.num_rects; i++) {
        const AVSubtitleRect *r = sub.rects[i];
        if (b.len && (r->ass || r->text))
            av_bprintf(&b, "%s", nl);
        if (r->ass)
            ass_text(&b, r->ass, nl);
        else if (r->text)
            av_bprintf(&b, "%s", r->text);
    }
    int64_t start = sub.start_display_time, shown = (int64_t)sub.end_display_time - sub.start_display_time;
    int64_t pts = pkt->pts;
    int open_ended = sub.end_display_time == UINT32_MAX;
    avsubtitle_free(&sub);
    if (!av_bprint_is_complete(&b)) {
        av_bprint_finalize(&b, NULL);
        return AVERROR(ENOMEM);
    }
    if (!b.len || pts == AV_NOPTS_VALUE) { /* an event that clears the screen, or one with no time */
        av_bprint_finalize(&b, NULL);
        return 0;
    }
    int head = t->target == AV_CODEC_ID_MOV_TEXT ? 2 : 0;
    unsigned len = b.len > 0xFFFF && head ? 0xFFFF : b.len;
    AVPacket *o = av_packet_alloc();
    if (!o || (ret = av_new_packet(o, (int)(head + len))) < 0) {
        av_packet_free(&o);
        av_bprint_finalize(&b, NULL);
        return AVERROR(ENOMEM);
    }
    if (head)
        AV_WB16(o->data, len);
    memcpy(o->data + head, b.str, len);
    av_bprint_finalize(&b, NULL);
    AVRational ms = { 1, 1000 };
    o->pts = o->dts = pts + av_rescale_q(start, ms, t->tb);
    o->duration = shown > 0 && !open_ended ? av_rescale_q(shown, ms, t->tb) : pkt->duration;
    o->flags |= AV_PKT_FLAG_KEY;
    o->stream_index = t->ost->index;
    av_packet_rescale_ts(o, t->tb, t->ost->time_base);
    return emit(opaque, o);
}

void vkcu_sub_text_close(vkcu_sub_text **pt)
{
    vkcu_sub_text *t = *pt;
    if (!t)
        return;
    avcodec_free_context(&t->dec);
    av_freep(pt);
}
