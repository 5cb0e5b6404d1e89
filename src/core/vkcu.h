/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The library's internal job description. The public API is include/vkcu/:
 * this header includes it, so the library has one definition of every
 * public type.
 *
 * vkcu_job_params is what pipeline.c runs: the public vkcu_settings and
 * vkcu_job of one vkcu_run() call (core/context.c), or a job that batch,
 * compare and verify build for themselves. It is not validated here: the
 * public entry points and the CLI validate before they fill it.
 */
#ifndef VKCU_H
#define VKCU_H

#include <stdint.h>
#include <stdio.h>

#include "util/log.h"
#include "util/hash_algo.h"
#include <vkcu/vkcu.h>

#ifdef __cplusplus
extern "C" {
#endif

struct AVFrame;

/* The last leg of GPU frames bound for the host: a CUDA copy into pinned
 * memory, or the output ring (CUDA writes exportable Vulkan buffers, a
 * Vulkan transfer reads them back; binary semaphores both ways). */
enum vkcu_download {
    VKCU_DOWNLOAD_CUDA = 0,
    VKCU_DOWNLOAD_VULKAN,
};

typedef struct vkcu_job_params {
    const char *input;           /* file path, or "-" for stdin */
    int video_stream;            /* the Nth video stream (from 0); -1: FFmpeg's best */
    const char *output;          /* VKCU_SINK_ENCODE: path ("-" for stdout, with output_format) */
    const char *output_format;   /* container name (nut, matroska, ...); NULL: from the output's extension */
    enum vkcu_sink_kind sink;
    enum vkcu_backend backend;
    int device;                  /* CUDA ordinal (the Vulkan device is matched by UUID) */
    const char *chain;           /* operator chain text, NULL or "" for none */
    /* encode */
    const char *encoder;         /* NULL/"auto": from the output extension */
    const char *gpu_encoder;     /* a Vulkan encoder preferred on the GPU backend where it can take the frames; NULL: none */
    int crf;                     /* -1: encoder default */
    int64_t bitrate;             /* bits/s, 0: encoder default */
    const char *preset;
    int gop;                     /* 0: encoder default */
    const char *encoder_opts;    /* "k=v:k=v" passed to the encoder */
    int faststart;               /* 1: MP4/MOV index (moov) moved before the media data, for web playback */
    int no_audio;                /* 1: audio streams dropped */
    const char *audio_encoder;   /* NULL/"auto": copy, else the container's audio codec; "copy"; an encoder name */
    int audio_streams;           /* VKCU_STREAMS_ALL, VKCU_STREAMS_NONE or VKCU_STREAM_NTH(n) (vkcu/job.h) */
    int subtitle_streams;        /* the same for subtitle streams */
    int decode_threads;          /* software decoder threads; 0: one (damaged streams decode alike on every run) */
    int encode_workers;          /* intra-GOP encoders (FFV1): GOPs encoded at once; 0: auto, 1: one encoder */
    int decode_parallel;         /* VKCU_DECODE_PARALLEL_AUTO (the default), 0/1 one decoder, N (decode_par.c) */
    int decode_segment_min;      /* packets a parallel decoder's segment holds at least; 0: the default */
    int overwrite;               /* 1: replace an existing output */
    int keep_partial;            /* 1: keep the partial output on failure */
    int strict;                  /* 1: a corrupt frame is fatal */
    /* trimming: <0 unset; time in seconds or frame numbers */
    double start_time, duration;
    int64_t start_frame, frame_count;
    /* hash */
    FILE *hash_out;
    const char *hash_out_name;   /* names hash_out in messages; NULL: not named */
    enum vkcu_hash_algo hash_algo;
    enum vkcu_hash_format hash_format;
    /* GPU */
    int ring_size;               /* interop ring slots, VKCU_RING_SIZE_MIN..MAX (vkcu_job_run: -EINVAL otherwise) */
    int stall_timeout_ms;        /* watchdog: no frame out of the decoder for this long fails */
    int timeline_handoff;        /* 1: one timeline semaphore instead of binary ready/done */
    int decode_queue;            /* >= 0: the Vulkan decode queue the decoder submits on; -1: one the process claimed */
    enum vkcu_download download; /* how GPU frames reach the host (frames hashed on the GPU stay a CUDA copy) */
    int max_frames;              /* >0: stop after this many output frames */
    int require_gpu_decode;      /* 1: a software decode (CPU path or GPU fallback) is an error (VKCU_ERR_DEVICE) */
    double deadline;             /* >0: vkcu_now() after which the job stops and fails (verify's timeout) */
    int decode_only;             /* 1: decode and drop frames (benchmarks: no handoff, no operators) */
    const char *pipeline_file;   /* the preset the settings came from: an input of the job, never written over */
    /* Called with the finished temporary of the encoded output just before
     * it is moved into place (the batch writes its resume record there);
     * <0 fails the job with err set. NULL: none. */
    int (*before_publish)(void *opaque, const char *tmp, const char *path, char *err, size_t errlen);
    void *publish_opaque;
    enum vkcu_timing timing;     /* hash sink (and callback_timing): which frames, at what size (vkcu/job.h) */
    int callback_timing;         /* 1: the callback sink gives the frames the hash sink would hash, timed as its
                                  * lines in 1/frame rate (on_open's time base): compare's media inputs */
    /* VKCU_SINK_CALLBACK: see vkcu_open_callback/vkcu_frame_callback (vkcu/chain.h).
     * The library's own users (compare) take FFmpeg's frame (on_frame); the
     * public API's take a vkcu_picture (on_picture). */
    vkcu_open_callback on_open;
    int (*on_frame)(void *opaque, const struct AVFrame *frame);
    vkcu_frame_callback on_picture;
    void *cb_opaque;
    /* On the GPU, with on_frame: >0 keeps the frames in CUDA device memory,
     * in a pool of this many buffers (gpu.h, cuda_pool); on_frame then gets
     * frames with device pointers (vkcu_frame_cuda_device says so). A reader
     * (core/reader.c) sets it. 0: host frames. */
    int cuda_pool;
    /* reporting */
    int progress;                /* 1: progress reports to progress_cb (none without one) */
    vkcu_progress_callback progress_cb;
    void *progress_opaque;
    vkcu_watchdog_callback watchdog_cb; /* a stalled GPU decoder (vkcu/job.h); NULL: logged only */
    void *watchdog_opaque;
} vkcu_job_params;

void vkcu_job_params_default(vkcu_job_params *p);

/* Runs one job to completion. Returns 0 or a negative error; on error,
 * result->error holds a one-line message naming the file. Thread-safe for
 * distinct params/results. vkcu_run() is the public way in. */
int vkcu_job_run(const vkcu_job_params *p, vkcu_job_result *result);

/* The same with the hash list going to the file path (p->hash_out and
 * hash_out_name are set here): written under a temporary name, published
 * (p->before_publish, then the rename) when the job succeeds and removed
 * when it does not (core/context.c). */
int vkcu_job_run_to_hash_file(vkcu_job_params *p, const char *path, vkcu_job_result *result);

#ifdef __cplusplus
}
#endif
#endif
