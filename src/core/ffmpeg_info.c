/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What this build reads, and the FFmpeg it carries: the video codecs it
 * decodes with their software decoders and the demuxers
 * (include/vkcu/formats.h), FFmpeg's version, configuration and component
 * counts (include/vkcu/version.h). encoders.c says what it writes. A
 * program linking libvkcu.so cannot ask the library's FFmpeg itself (its
 * symbols stay inside), so `vkcu formats` and `vkcu --version` read these.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>

#include <vkcu/formats.h>
#include <vkcu/version.h>

void vkcu_ffmpeg_info_get(vkcu_ffmpeg_info *info)
{
    memset(info, 0, sizeof(*info));
    info->version = av_version_info();
    info->avcodec = avcodec_version();
    info->avformat = avformat_version();
    info->avutil = avutil_version();
    info->configuration = avcodec_configuration();
    const AVCodec *c;
    void *it = NULL;
    while ((c = av_codec_iterate(&it)))
        av_codec_is_decoder(c) ? info->nb_decoders++ : info->nb_encoders++;
    it = NULL;
    while (av_demuxer_iterate(&it))
        info->nb_demuxers++;
    it = NULL;
    while (av_muxer_iterate(&it))
        info->nb_muxers++;
}

int vkcu_demuxer_get(int index, vkcu_container_info *info)
{
    if (!info)
        return AVERROR(EINVAL);
    const AVInputFormat *f = NULL;
    void *it = NULL;
    for (int n = 0; index >= 0 && (f = av_demuxer_iterate(&it)) && n < index; n++)
        ;
    if (index < 0 || !f)
        return AVERROR(ENOENT);
    memset(info, 0, sizeof(*info));
    info->name = f->name;
    info->description = f->long_name ? f->long_name : f->name;
    info->extensions = f->extensions ? f->extensions : "";
    return 0;
}

/* Hardware-only decoders (NVDEC's *_cuvid) are not vkcu's decode path. */
static int software_decoder_of(const AVCodec *c, enum AVCodecID id)
{
    return c->id == id && av_codec_is_decoder(c) && !(c->capabilities & AV_CODEC_CAP_HARDWARE);
}

/* The video descriptors that have a software decoder, in FFmpeg's order:
 * found once (every codec against every descriptor), then read by index. */
#define MAX_DECODED_CODECS 1024
static const AVCodecDescriptor *decoded[MAX_DECODED_CODECS];
static int nb_decoded;

static void find_decoded(void)
{
    const AVCodecDescriptor *desc = NULL;
    while ((desc = avcodec_descriptor_next(desc)) && nb_decoded < MAX_DECODED_CODECS) {
        if (desc->type != AVMEDIA_TYPE_VIDEO)
            continue;
        const AVCodec *c;
        void *it = NULL;
        while ((c = av_codec_iterate(&it)) && !software_decoder_of(c, desc->id))
            ;
        if (c)
            decoded[nb_decoded++] = desc;
    }
}

int vkcu_decoder_get(int index, vkcu_decoder_info *info)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (!info)
        return AVERROR(EINVAL);
    pthread_once(&once, find_decoded);
    if (index < 0 || index >= nb_decoded)
        return AVERROR(ENOENT);
    const AVCodecDescriptor *desc = decoded[index];
    memset(info, 0, sizeof(*info));
    info->codec = desc->name;
    info->description = desc->long_name ? desc->long_name : "";
    info->codec_id = desc->id;
    const AVCodec *c;
    void *it = NULL;
    size_t len = 0;
    while ((c = av_codec_iterate(&it)))
        if (software_decoder_of(c, desc->id) && len + strlen(c->name) + 3 < sizeof(info->decoders))
            len += (size_t)snprintf(info->decoders + len, sizeof(info->decoders) - len, "%s%s", len ? ", " : "",
                                    c->name);
    return 0;
}
