/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The first stage of a job (demux.c): opens the input, picks its video
 * stream and reads packets. Like every stage it writes a one-line,
 * user-facing error into the `err` buffer it is given, naming the file;
 * the pipeline prefixes nothing.
 */
#ifndef VKCU_CORE_DEMUX_H
#define VKCU_CORE_DEMUX_H

#include <stddef.h>
#include <stdint.h>
#include <libavformat/avformat.h>

typedef struct vkcu_demux {
    AVFormatContext *fmt;
    AVStream *video;        /* the stream processed */
    int video_index;
    const char *path;
    AVRational frame_rate;  /* best guess; {0,1} when unknown */
    int64_t frames_estimate; /* for progress and ETA; 0 when unknown */
    int64_t video_packets;  /* of the processed stream, read by vkcu_demux_read */
    int64_t last_video_ts;  /* the last of them's pts (dts without one); AV_NOPTS_VALUE: none */
} vkcu_demux;

/* video_stream: the Nth video stream (from 0), or -1 for FFmpeg's best. */
int vkcu_demux_open(const char *path, int video_stream, vkcu_demux **out, char *err, size_t errlen);
/* The same over caller-supplied I/O (a memory buffer, for the fuzz target),
 * with FFmpeg's best video stream: `path` only names the input in messages;
 * pb stays the caller's to free, after vkcu_demux_close. */
int vkcu_demux_open_io(const char *path, AVIOContext *pb, vkcu_demux **out, char *err, size_t errlen);
/* 0, AVERROR_EOF at the end, or an error (err filled). Data the demuxer
 * cannot read past (vkcu_demux_damaged) ends the stream: a warning says
 * where (after the last good video packet's time), *damaged (may be NULL) is set and AVERROR_EOF returned;
 * with strict, VKCU_ERR_INPUT instead. */
int vkcu_demux_read(vkcu_demux *d, AVPacket *pkt, int strict, int *damaged, char *err, size_t errlen);
/* Whether av_read_frame's error ret comes from the file's bytes (the
 * demuxer refused them: damage) rather than from reading them (the disk,
 * the pipe) or the end. */
int vkcu_demux_damaged(const vkcu_demux *d, int ret);
/* Seeks to the keyframe at or before `ts` (video stream time base). */
int vkcu_demux_seek(vkcu_demux *d, int64_t ts);
void vkcu_demux_close(vkcu_demux **d);
/* Where output timestamps count from (AV_TIME_BASE), as ffmpeg's CLI takes
 * it: the input's start time, or in a container whose timestamps may jump
 * (MPEG-TS) the earliest start of the streams not discarded. The job and
 * random access (reader_seek.c) count from the same place. */
int64_t vkcu_demux_input_start(const AVFormatContext *fmt);

#endif
