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

typedef struct vkcu_job_params {
    /* The public description, as the caller filled it: the context's
     * settings (vkcu_context_describe) and the job (vkcu/job.h says what
     * each field means). job.on_frame is the public frame callback (a
     * vkcu_picture); job.hash_path is vkcu_job_run_to_hash_file's, not
     * vkcu_job_run's; the settings' log fields are the context's. */
    vkcu_settings settings;
    vkcu_job job;
    /* What only the library sets: */
    int progress;                /* 1: progress reports to settings.progress_callback (none without one) */
    double deadline;             /* >0: vkcu_now() after which the job stops and fails (verify's timeout) */
    /* Called with the finished temporary of the encoded output just before
     * it is moved into place (the batch writes its resume record there);
     * <0 fails the job with err set. NULL: none. */
    int (*before_publish)(void *opaque, const char *tmp, const char *path, char *err, size_t errlen);
    void *publish_opaque;
    int callback_timing;         /* 1: the callback sink gives the frames the hash sink would hash, timed as its
                                  * lines in 1/frame rate (on_open's time base): compare's media inputs */
    /* VKCU_SINK_CALLBACK for the library's own users (compare, the
     * reader): FFmpeg's frame instead of job.on_frame's vkcu_picture, with
     * job.callback_opaque. */
    int (*on_frame)(void *opaque, const struct AVFrame *frame);
    /* On the GPU, with on_frame: >0 keeps the frames in CUDA device memory,
     * in a pool of this many buffers (gpu.h, cuda_pool); on_frame then gets
     * frames with device pointers (vkcu_frame_cuda_device says so). A reader
     * (core/reader.c) sets it. 0: host frames. */
    int cuda_pool;
    /* >1: the automatic parallel decode (settings.decode_parallel) takes
     * one of this many equal shares of the cores, the other jobs of the
     * share running beside this one (compare's two inputs). 0: the cores
     * that the process's other parallel decoders leave. */
    int decode_share;
    /* >1: the streams this job's GPU decodes at once with it (a batch's
     * workers on one device): the automatic parallel decode on the GPU
     * takes one such share of the decode queues, so a batch with as many
     * files at once as engines decodes each in one piece. 0: alone. */
    int gpu_share;
} vkcu_job_params;

/* The public defaults (vkcu_default_settings, vkcu_default_job) and
 * progress on. */
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
