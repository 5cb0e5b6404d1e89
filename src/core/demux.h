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
    /* 1: a seek by timestamp lands on the key frame at or before it (the
     * container has an index of its own: MP4, Matroska with cues, AVI with
     * idx1; or FFmpeg indexes it as it reads: raw streams). 0: the demuxer
     * seeks by a search over timestamps that lands on any packet (MPEG-TS,
     * MPEG-PS, FLV, AVI without idx1): such inputs are moved to a key frame
     * by vkcu_demux_seek_packet instead. */
    int indexed;
    int64_t skip_video;     /* video packets vkcu_demux_read still drops (vkcu_demux_seek_packet) */
} vkcu_demux;

/* Video packets read from where the demuxer stands, without decoding, in
 * decode order, counted as vkcu_demux_read counts them: each one's pts and
 * dts (AV_NOPTS_VALUE: none), duration (0: none), whether it is a key frame
 * and whether the demuxer marked it AV_PKT_FLAG_DISCARD (decoded, never
 * shown: an edit list's pre-roll); and the largest pts - dts of them all
 * (how far a frame can show after its decode position). The job's trim
 * (pipeline_open.c) and random access's index (reader_seek.c) read the
 * input this one way. */
typedef struct vkcu_packet_scan {
    int64_t *pts, *dts, *duration;
    uint8_t *key, *discard;
    int64_t n;
    int64_t max_delay;
} vkcu_packet_scan;

/* The first checks vkcu_demux_open makes, with its words: the path exists,
 * is no folder, is not empty, and FFmpeg opens its container (no stream is
 * read; a pipe is not opened). For a plan that says what a job would. */
int vkcu_demux_check(const char *path, char *err, size_t errlen);
/* video_stream: the Nth video stream (from 0), or -1 for FFmpeg's best. */
int vkcu_demux_open(const char *path, int video_stream, vkcu_demux **out, char *err, size_t errlen);
/* The audio and subtitle streams a job picks (audio_streams and
 * subtitle_streams of vkcu_job: VKCU_STREAMS_ALL, VKCU_STREAMS_NONE or
 * VKCU_STREAM_NTH(n)). vkcu_demux_check_picks: 0, or VKCU_ERR_USAGE with a
 * line naming the file and how many streams of the kind it has, for an n
 * past the last. vkcu_demux_picked: whether input stream `index` (audio or
 * subtitle; any other kind: 1) is one of them. */
int vkcu_demux_check_picks(const vkcu_demux *d, int audio_streams, int subtitle_streams, char *err, size_t errlen);
int vkcu_demux_picked(const vkcu_demux *d, int index, int audio_streams, int subtitle_streams);
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
/* Reads video packets from where the demuxer stands (see vkcu_packet_scan)
 * until `limit` of them, or until one decodes after `stop` (its dts, or
 * pts without one, above it: none after it shows at or before `stop`) and
 * 16 more have followed (AV_NOPTS_VALUE: no such stop), or the end. 0, or a
 * read error; damage ends the scan as it ends a job. Free with
 * vkcu_packet_scan_free. */
int vkcu_demux_scan(vkcu_demux *d, int64_t limit, int64_t stop, vkcu_packet_scan *scan);
void vkcu_packet_scan_free(vkcu_packet_scan *scan);
/* The last key frame, in decode order, that shows at or before pts t, as
 * an index into the scan; 0 when none does (decode from the start). */
int64_t vkcu_packet_scan_key_before(const vkcu_packet_scan *scan, int64_t t);
/* Moves the demuxer to the start of the input and has vkcu_demux_read drop
 * the first `packet` video packets: the next video packet read is that one
 * (a key frame found by vkcu_demux_scan), in any container. Other streams'
 * packets still come. */
int vkcu_demux_seek_packet(vkcu_demux *d, int64_t packet);
void vkcu_demux_close(vkcu_demux **d);
/* Where output timestamps count from (AV_TIME_BASE), as ffmpeg's CLI takes
 * it: the input's start time, or in a container whose timestamps may jump
 * (MPEG-TS) the earliest start of the streams not discarded. The job and
 * random access (reader_seek.c) count from the same place. */
int64_t vkcu_demux_input_start(const AVFormatContext *fmt);

#endif
