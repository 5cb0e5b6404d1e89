/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Frame timestamps as the ffmpeg 8.1 command line makes them, so that an
 * output of vkcu has the frames, timestamps, duration and frame rate that
 * `ffmpeg -i IN OUT` gives for the same input and container.
 *
 * Two halves:
 * - the frame clock (decoder side) gives every decoded frame a pts in the
 *   stream's time base: the decoder's best effort timestamp, or, where there
 *   is none (raw elementary streams, damaged or missing timestamps), the
 *   previous frame's pts plus its estimated duration (the input's start
 *   for the first frame); the job then counts them from the input's start;
 * - the frame sync (output side, one per sink) moves frames onto the output
 *   time base, 1/frame rate, as the muxer's frame-rate mode wants: constant
 *   (frames repeated or dropped to fill the grid: mp4, mov, y4m), variable
 *   (each frame keeps its time, collisions pushed one tick later or dropped:
 *   mkv, nut, framemd5) or passthrough.
 */
#ifndef VKCU_TIMING_H
#define VKCU_TIMING_H

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>

typedef struct vkcu_frame_clock {
    AVRational tb;          /* the frames' time base: the stream's */
    AVRational avg_rate;    /* the stream's average frame rate: a duration of last resort */
    AVRational guess_rate;  /* av_guess_frame_rate: the duration of a frame that has none */
    int unreliable;         /* the container has no timestamps: packet times are ignored */
    int64_t origin;         /* the input's start: the pts of a first frame without one */
    int64_t last_pts, last_dur;
} vkcu_frame_clock;

/* origin: the input's start time (over all streams) in the stream's time base. */
void vkcu_frame_clock_init(vkcu_frame_clock *c, const AVFormatContext *fmt, const AVStream *st, int64_t origin);
/* Packets of a container without timestamps lose the ones the demuxer made
 * up, so that the decoder's frames are timed by the frame clock alone. */
void vkcu_frame_clock_packet(const vkcu_frame_clock *c, AVPacket *pkt);
/* Sets f->pts (and a missing f->duration) of a decoded frame; dec gives the
 * codec's frame rate, which the decoder may learn mid-stream. */
void vkcu_frame_clock_stamp(vkcu_frame_clock *c, const AVCodecContext *dec, AVFrame *f);

enum vkcu_fps_mode {
    VKCU_FPS_PASSTHROUGH = 0, /* timestamps as they are (containers without timestamps) */
    VKCU_FPS_VFR,             /* variable: no duplicates, collisions moved or dropped */
    VKCU_FPS_CFR,             /* constant: frames duplicated or dropped onto the grid */
    VKCU_FPS_VSCFR,           /* constant, but the output may start late (no initial duplicates) */
};

/* The mode the ffmpeg CLI picks by default for this muxer, for an input of
 * input_streams streams. */
enum vkcu_fps_mode vkcu_fps_mode_for(const AVOutputFormat *ofmt, int input_streams);

typedef struct vkcu_frame_sync {
    enum vkcu_fps_mode mode;
    AVRational tb_in, tb_out, rate;
    int64_t next_pts, frame_number;
    int64_t prev_hist[3];
    int last_dropped;
    AVFrame *prev;          /* constant modes: the last frame, repeated to fill gaps and at the end */
    int64_t dropped, duplicated;
} vkcu_frame_sync;

/* rate: the input's frame rate (0/1 when unknown: constant modes use 25);
 * supported: the encoder's frame rates (NULL: any). Sets tb_out and rate. */
void vkcu_frame_sync_init(vkcu_frame_sync *s, enum vkcu_fps_mode mode, AVRational rate, AVRational tb_in,
                          const AVRational *supported);
/* Passes `f` (pts and duration in tb_in; NULL at the end) on: emit is called
 * zero or more times with a frame whose pts and duration are in tb_out (the
 * frame is lent, not given; f's own pts and duration change). Returns 0 or
 * emit's first error. */
int vkcu_frame_sync_push(vkcu_frame_sync *s, AVFrame *f, int (*emit)(void *opaque, AVFrame *f), void *opaque);
void vkcu_frame_sync_free(vkcu_frame_sync *s);

#endif
