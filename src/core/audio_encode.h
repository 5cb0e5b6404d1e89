/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Audio of the encode sink, where a stream cannot be copied: the input's
 * audio decoded, converted (sample format, rate, channels: swresample) and
 * re-encoded for a container that cannot hold the source's codec (Opus
 * for WebM), or with the encoder the job names. The sink owns one per such
 * stream, on the job thread; its packets go to the encoder thread's queue
 * like copied ones.
 */
#ifndef VKCU_CORE_AUDIO_ENCODE_H
#define VKCU_CORE_AUDIO_ENCODE_H

#include <stddef.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>

typedef struct vkcu_audio_enc vkcu_audio_enc;

/* The audio encoder for a stream of codec `id` that ofmt cannot hold: the
 * container's own audio codec where this build encodes it, else the first
 * of opus, aac, ac3, pcm_s16le that the container holds; NULL: none. */
const AVCodec *vkcu_audio_encoder_for(const AVOutputFormat *ofmt);

/* Adds the encoded stream for input stream `ist` to oc (before its header
 * is written), with encoder `codec`. 0, or a negative error with a line in
 * err. */
int vkcu_audio_enc_open(vkcu_audio_enc **out, const AVStream *ist, const AVCodec *codec, AVFormatContext *oc,
                        char *err, size_t errlen);
/* The output stream's index in oc. */
int vkcu_audio_enc_stream(const vkcu_audio_enc *a);
/* Decodes one packet of the input stream (its timestamps in the input
 * stream's time base, already on the output's timeline), or drains
 * everything (pkt NULL), and hands each encoded packet, in the output
 * stream's time base, to emit, which takes it. 0 or a negative error (an
 * undecodable packet is skipped, not an error). */
int vkcu_audio_enc_send(vkcu_audio_enc *a, const AVPacket *pkt, int (*emit)(void *opaque, AVPacket *pkt),
                        void *opaque, char *err, size_t errlen);
void vkcu_audio_enc_close(vkcu_audio_enc **a);

#endif
