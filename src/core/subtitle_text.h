/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Text subtitles of the encode sink, where a stream cannot be copied: each
 * event of a text subtitle stream (SubRip, ASS, WebVTT, mov_text, ...)
 * decoded by libavcodec and written again as plain text in the text codec
 * the container holds: mov_text for MP4/MOV, SubRip for Matroska, WebVTT
 * for WebM, as ffmpeg converts them by default. The text is kept with its
 * line breaks and timings; styling (bold, italic, colours, positions) is
 * not carried. vkcu writes the packets itself: the bundled FFmpeg has the
 * subtitle decoders but no subtitle encoder. The sink owns one per such
 * stream, on the job thread; its packets go to the encoder thread's queue
 * like copied ones.
 */
#ifndef VKCU_CORE_SUBTITLE_TEXT_H
#define VKCU_CORE_SUBTITLE_TEXT_H

#include <stddef.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>

typedef struct vkcu_sub_text vkcu_sub_text;

/* Whether subtitles of codec `id` are text (convertible here). */
int vkcu_sub_is_text(enum AVCodecID id);
/* The text codec ofmt holds that this file writes: the container's own
 * subtitle codec where it is one of them, else the first of mov_text,
 * subrip, webvtt the container holds; AV_CODEC_ID_NONE: none. */
enum AVCodecID vkcu_sub_text_target(const AVOutputFormat *ofmt);
/* Adds the converted stream for input stream `ist` to oc (before its
 * header is written). 0, or a negative error with a line in err. */
int vkcu_sub_text_open(vkcu_sub_text **out, const AVStream *ist, enum AVCodecID target, AVFormatContext *oc,
                       char *err, size_t errlen);
/* The output stream's index in oc. */
int vkcu_sub_text_stream(const vkcu_sub_text *t);
/* Decodes one packet of the input stream (its timestamps in the input
 * stream's time base, already on the output's timeline) and hands the
 * packet it makes, in the output stream's time base, to emit, which takes
 * it. 0 or a negative error (an undecodable packet is skipped, with a
 * verbose line). */
int vkcu_sub_text_send(vkcu_sub_text *t, const AVPacket *pkt, int (*emit)(void *opaque, AVPacket *pkt),
                       void *opaque);
void vkcu_sub_text_close(vkcu_sub_text **t);

#endif
