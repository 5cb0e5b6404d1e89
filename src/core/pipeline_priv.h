/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the job runner's files share (core/pipeline.c, pipeline_open.c,
 * pipeline_frames.c): the running job's state and its steps. Nothing
 * outside them includes this; the way in is vkcu_job_run (vkcu.h).
 */
#ifndef VKCU_PIPELINE_PRIV_H
#define VKCU_PIPELINE_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <libavcodec/avcodec.h>

#include "gpu/gpu.h"
#include "util/clock.h"
#include "decode.h"
#include "demux.h"
#include "progress.h"
#include "sink.h"
#include "timing.h"
#include "vkcu.h"

struct SwsContext;

#define CONCEALED_LISTED 5 /* damaged pictures the end-of-job warning names */

/* The running job: what vkcu_job_run opens, the frame loop's state, and
 * what the result is made from at the end. */
typedef struct job {
    const vkcu_job_params *p;
    vkcu_job_result *r;
    vkcu_demux *demux;
    vkcu_decoder *dec;
    vkcu_gpu *gpu;
    int vk_decode;           /* VKCU_VK_DECODE_*: how the Vulkan decoder decodes, when it is open */
    vkcu_chain chain;
    vkcu_sink sink;
    int sink_ready;
    vkcu_video_format in_fmt, out_fmt;
    vkcu_video_format sink_fmt;  /* what the sink was opened for: frames of another size or layout are scaled to it */
    struct SwsContext *sws;      /* that scaling (reformat_for_sink), for frames of sws_from */
    vkcu_video_format sws_from;
    AVFrame *scaled;
    int64_t marked_since_key;    /* frames marked damaged since the last key frame (-1: none) */
    int64_t concealed_pictures;  /* pictures the decoder concealed errors in (kept) */
    int64_t concealed_first[CONCEALED_LISTED]; /* the first of them, by frame number: one warning names them at the end */
    AVRational tb;
    int threads;
    vkcu_progress progress;
    /* trimming, in the video stream's time base */
    int64_t trim_start, trim_end;
    vkcu_frame_clock clock;  /* decoded frames' timestamps, as ffmpeg's CLI makes them */
    int64_t frames_seen;     /* decoded frames, counted from the stream start */
    int trimmed_done;
    double t_first;          /* when the first frame left the decoder */
    double t_backend;        /* when the backend and decoder were open */
    double ms_backend;       /* how long opening them took */
    int gpu_prepared;        /* vkcu_gpu_prepare was called: wait for it before returning */
    int gpu_pieces;          /* the device was asked for a decode queue per engine: the automatic
                              * parallel decode runs on the GPU (gpu_pieces_wanted) */
    char *err;
    size_t errlen;
    /* watchdog */
    _Atomic long long last_frame_ms;
    _Atomic int watchdog_stop;
    _Atomic int stalled;     /* the watchdog gave up on the decoder */
    _Atomic int in_sink;     /* the job waits for its sink (a slow encoder, a reader's consumer), not the decoder */
    /* packets of other streams that arrive before the sink opens */
    AVPacket *early[512];
    int nb_early;
    pthread_t watchdog;
    int watchdog_running;
    /* the run's own */
    AVPacket *pkt;
    AVFrame *frame;
    int output_refused;      /* the output is an input: that line stands, not a write error's */
    double t0, t_demux, t_open; /* when the job, the demuxer's opening and the backend's began */
    double cpu0;             /* the process's CPU time at the start */
} job;

static inline long long now_ms(void)
{
    return (long long)(vkcu_now() * 1000.0);
}

/* pipeline_open.c: everything up to the first packet read (the chain, the
 * demuxer, the outputs checked, the backend and decoder, the trim window,
 * the sink not yet opened, the watchdog). 0, or a negative error with
 * j->err filled where it can say more than the code. */
int vkcu_pipeline_open(job *j);

/* pipeline_frames.c: the frame loop. vkcu_pipeline_read reads and decodes
 * up to the input's end, the trim window's end or max_frames: 0 or an
 * error. vkcu_pipeline_drain then flushes the decoder, the operators and
 * the GPU session into the sink and closes it: 0 or an error. */
int vkcu_pipeline_read(job *j);
int vkcu_pipeline_drain(job *j);
/* Whether frames reach the sink at the one size and layout it was opened
 * with (the GPU's hash digests ask too: pipeline_open.c). */
int vkcu_pipeline_sink_takes_one_format(const job *j);

#endif
