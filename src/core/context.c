/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The public API's entry points (include/vkcu/job.h, version.h): the
 * context, validation at the boundary, and the translation of the public
 * settings and job into the internal job description that pipeline.c runs.
 *
 * Validation lives here, once: a value outside its documented range is
 * refused with -EINVAL and one line naming the field and the range, before
 * anything is opened. Nothing below clamps what this layer let through.
 *
 * Messages of a job go to its context's log callback: the calling thread's
 * log target is set for the duration of vkcu_run (log.c), and the job's own
 * threads inherit it (vkcu_thread_create).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavutil/error.h>

#include "context.h"
#include "encoders.h"
#include "util/log.h"
#include "outfile.h"
#include "vkcu.h"

struct vkcu_context {
    vkcu_settings settings;
    vkcu_log_target log; /* its stop points at `stop` */
    atomic_int stop;     /* vkcu_context_stop */
};

void vkcu_default_settings(vkcu_settings *s)
{
    memset(s, 0, sizeof(*s));
    s->log_level = VKCU_LOG_INFO;
    s->backend = VKCU_BACKEND_AUTO;
    s->ring_size = VKCU_RING_SIZE_DEFAULT;
    s->stall_timeout_ms = 10000;
    s->decode_queue = -1;
    s->decode_parallel = VKCU_DECODE_PARALLEL_AUTO;
}

void vkcu_default_job(vkcu_job *job)
{
    memset(job, 0, sizeof(*job));
    job->video_stream = -1;
    job->sink = VKCU_SINK_ENCODE;
    job->crf = -1;
    job->hash_out = stdout;
    job->start_time = -1;
    job->duration = -1;
    job->start_frame = -1;
    job->frame_count = -1;
}

void vkcu_job_params_default(vkcu_job_params *p)
{
    memset(p, 0, sizeof(*p));
    vkcu_default_settings(&p->settings);
    vkcu_default_job(&p->job);
    p->progress = 1;
}


/* An integer field outside [lo, hi], named by the program's name for it. */
#define RANGE(field, value, lo, hi) VKCU_RANGE(VKCU_SETTING(field), value, lo, hi)

static int check_settings(const vkcu_settings *s, char *err, size_t errlen)
{
    int ret = VKCU_RESERVED_CHECK(vkcu_settings, s, err, errlen);
    if (ret < 0)
        return ret;
    RANGE("log_level", s->log_level, VKCU_LOG_QUIET, VKCU_LOG_DEBUG);
    RANGE("backend", s->backend, VKCU_BACKEND_AUTO, VKCU_BACKEND_GPU);
    RANGE("device", s->device, 0, 63);
    RANGE("ring_size", s->ring_size, VKCU_RING_SIZE_MIN, VKCU_RING_SIZE_MAX);
    RANGE("stall_timeout_ms", s->stall_timeout_ms, 0, 3600000);
    RANGE("timeline_handoff", s->timeline_handoff, 0, 1);
    RANGE("vulkan_download", s->vulkan_download, 0, 1);
    RANGE("decode_threads", s->decode_threads, 0, 256);
    RANGE("encode_workers", s->encode_workers, 0, 64);
    RANGE("decode_queue", s->decode_queue, -1, VKCU_DECODE_QUEUE_MAX);
    RANGE("decode_parallel", s->decode_parallel, VKCU_DECODE_PARALLEL_AUTO, VKCU_DECODE_PARALLEL_MAX);
    RANGE("decode_segment_min", s->decode_segment_min, 0, 1000000);
    return 0;
}

int vkcu_open(vkcu_context **ctx, const vkcu_settings *s)
{
    if (!ctx)
        return AVERROR(EINVAL);
    *ctx = NULL;
    if (!s)
        return vkcu_invalid(NULL, 0, "no settings given");
    /* Refusals of the settings go where the settings say messages go. */
    vkcu_log_target target = { s->log_callback, s->log_opaque,
                               s->log_level < VKCU_LOG_QUIET ? VKCU_LOG_QUIET : (int)s->log_level,
                               s->setting_name_callback, NULL };
    const vkcu_log_target *prev = vkcu_log_target_swap(&target);
    int ret = check_settings(s, NULL, 0);
    vkcu_log_target_swap(prev);
    if (ret < 0)
        return ret;
    vkcu_context *c = calloc(1, sizeof(*c));
    if (!c)
        return AVERROR(ENOMEM);
    c->settings = *s;
    c->log = target;
    atomic_init(&c->stop, 0);
    c->log.stop = &c->stop;
    if (s->log_callback)
        vkcu_log_route_ffmpeg();
    vkcu_log_ffmpeg_threshold(s->log_level); /* what FFmpeg prints itself: job.h, vkcu_open */
    *ctx = c;
    return 0;
}

void vkcu_context_stop(vkcu_context *ctx, int stop)
{
    if (ctx)
        atomic_store(&ctx->stop, stop != 0);
}

void vkcu_close(vkcu_context **ctx)
{
    if (!ctx || !*ctx)
        return;
    free(*ctx);
    *ctx = NULL;
}

int vkcu_check_trim(double start_time, double duration, int64_t start_frame, int64_t frame_count, char *err,
                    size_t errlen)
{
    /* -1 means "not set"; any other negative is a mistake. */
    if (start_time != -1 && !(start_time >= 0 && start_time <= 1e9))
        return vkcu_invalid(err, errlen, "%s %g s is out of range [0, 1e9] (-1: not set)", VKCU_SETTING("start_time"),
                            start_time);
    if (duration != -1 && !(duration >= 0 && duration <= 1e9))
        return vkcu_invalid(err, errlen, "%s %g s is out of range [0, 1e9] (-1: not set)", VKCU_SETTING("duration"),
                            duration);
    if (start_frame < -1)
        return vkcu_invalid(err, errlen, "%s %lld is out of range (-1: not set, else >= 0)", VKCU_SETTING("start_frame"),
                            (long long)start_frame);
    if (frame_count < -1)
        return vkcu_invalid(err, errlen, "%s %lld is out of range (-1: not set, else >= 0)", VKCU_SETTING("frame_count"),
                            (long long)frame_count);
    if (start_time != -1 && start_frame != -1)
        return vkcu_invalid(err, errlen, "%s and %s are both set; give one", VKCU_SETTING("start_time"),
                            VKCU_SETTING("start_frame"));
    if (duration != -1 && frame_count != -1)
        return vkcu_invalid(err, errlen, "%s and %s are both set; give one", VKCU_SETTING("duration"),
                            VKCU_SETTING("frame_count"));
    return 0;
}

int vkcu_check_job(const vkcu_job *job, char *err, size_t errlen)
{
    int ret = VKCU_RESERVED_CHECK(vkcu_job, job, err, errlen);
    if (ret < 0)
        return ret;
    if (!job->input || !*job->input)
        return vkcu_invalid(err, errlen, "no input given");
    RANGE("video_stream", job->video_stream, -1, 1023);
    RANGE("sink", job->sink, VKCU_SINK_ENCODE, VKCU_SINK_CALLBACK);
    RANGE("crf", job->crf, -1, VKCU_CRF_MAX);
    RANGE("bitrate", job->bitrate, 0, (int64_t)1e12);
    RANGE("gop", job->gop, 0, VKCU_GOP_MAX);
    RANGE("hash_algo", job->hash_algo, VKCU_HASH_MD5, VKCU_HASH_BLAKE3);
    RANGE("hash_format", job->hash_format, VKCU_HASH_FORMAT_FRAMEMD5, VKCU_HASH_FORMAT_WHOLE);
    RANGE("max_frames", job->max_frames, 0, 0x7fffffff);
    RANGE("faststart", job->faststart, 0, 1);
    RANGE("overwrite", job->overwrite, 0, 1);
    RANGE("keep_partial", job->keep_partial, 0, 1);
    RANGE("strict", job->strict, 0, 1);
    RANGE("require_gpu_decode", job->require_gpu_decode, 0, 1);
    RANGE("decode_only", job->decode_only, 0, 1);
    RANGE("no_audio", job->no_audio, 0, 1);
    RANGE("audio_streams", job->audio_streams, VKCU_STREAMS_NONE, VKCU_STREAM_NTH(VKCU_STREAM_INDEX_MAX));
    RANGE("subtitle_streams", job->subtitle_streams, VKCU_STREAMS_NONE, VKCU_STREAM_NTH(VKCU_STREAM_INDEX_MAX));
    RANGE("timing", job->timing, VKCU_TIMING_FFMPEG, VKCU_TIMING_DECODED);
    if (job->timing != VKCU_TIMING_FFMPEG && job->sink != VKCU_SINK_HASH)
        return vkcu_invalid(err, errlen, "%s: %s applies to hash lists only (the encoder takes one size, the frame "
                            "callback every frame as decoded)", job->input, VKCU_SETTING_IS("timing", "decoded"));
    ret = vkcu_check_trim(job->start_time, job->duration, job->start_frame, job->frame_count, err, errlen);
    if (ret < 0)
        return ret;
    switch (job->sink) {
    case VKCU_SINK_ENCODE:
        if (!job->output || !*job->output)
            return vkcu_invalid(err, errlen, "%s: the encode sink needs an output", job->input);
        break;
    case VKCU_SINK_HASH:
        if (!job->hash_out && !job->hash_path)
            return vkcu_invalid(err, errlen, "%s: the hash sink needs a stream or a file for the hashes", job->input);
        break;
    case VKCU_SINK_CALLBACK:
        if (!job->on_frame)
            return vkcu_invalid(err, errlen, "%s: the callback sink needs a frame callback", job->input);
        break;
    case VKCU_SINK_NULL:
        break;
    }
    if (job->hash_path && (job->sink != VKCU_SINK_HASH || !*job->hash_path))
        return vkcu_invalid(err, errlen, "%s: a hash file is given, but %s", job->input,
                            *job->hash_path ? "the sink is not the hash sink" : "its name is empty");
    char enc_why[512];
    if (vkcu_encode_check(job, enc_why, sizeof(enc_why)) < 0) /* the encoder, its container, its preset: before any input */
        return vkcu_invalid(err, errlen, "%s", enc_why);
    if (job->decode_only && job->sink != VKCU_SINK_NULL)
        return vkcu_invalid(err, errlen, "%s: decode-only jobs write nothing: their sink must be the null sink", job->input);
    if (job->chain && *job->chain) {
        char why[512];
        if (vkcu_chain_check(job->chain, why, sizeof(why)) < 0)
            return vkcu_invalid(err, errlen, "%s", why);
    }
    return 0;
}

const vkcu_log_target *vkcu_context_log(const vkcu_context *ctx)
{
    return &ctx->log;
}

void vkcu_context_job_params(const vkcu_context *c, vkcu_job_params *p)
{
    vkcu_job_params_default(p);
    p->settings = c->settings;
    p->progress = c->settings.progress_callback != NULL; /* the library draws nothing on its own */
}

void vkcu_context_describe(const vkcu_context *c, const vkcu_job *job, vkcu_job_params *p)
{
    vkcu_context_job_params(c, p);
    p->job = *job;
}

/* A hash list to a file: the one rule of outfile.c (a temporary, renamed
 * when the job succeeds, after p->before_publish where set; removed when it
 * fails or is interrupted). vkcu_run's and vkcu batch's one way to do it. */
int vkcu_job_run_to_hash_file(vkcu_job_params *p, const char *path, vkcu_job_result *r)
{
    char tmp[PATH_MAX + 128];
    const char *inputs[] = { p->job.input, p->job.pipeline_file, NULL };
    int ret = vkcu_outfile_begin(path, p->job.overwrite, inputs, tmp, sizeof(tmp), r->error, sizeof(r->error));
    if (ret < 0)
        return ret;
    FILE *f = vkcu_outfile_fopen(tmp, "w");
    if (!f) {
        int e = errno;
        vkcu_outfile_abort(tmp);
        if (e == EINTR && vkcu_job_stop_requested()) { /* a FIFO nobody opened for reading */
            snprintf(r->error, sizeof(r->error), "%.400s: interrupted before it was opened", path);
            return VKCU_ERR_INTERRUPT;
        }
        snprintf(r->error, sizeof(r->error), "%.400s: cannot create: %s", path, strerror(e));
        return VKCU_ERR_OUTPUT;
    }
    p->job.hash_out = f;
    p->job.hash_out_name = path;
    ret = vkcu_job_run(p, r);
    if (vkcu_outfile_fclose(f, tmp) != 0 && ret >= 0) {
        int e = errno;
        snprintf(r->error, sizeof(r->error), "%.400s: write error: %s%s", path, strerror(e),
                 e == ENOSPC ? " (disk full)" : "");
        ret = VKCU_ERR_OUTPUT;
    }
    if (ret >= 0 && p->before_publish)
        ret = p->before_publish(p->publish_opaque, tmp, path, r->error, sizeof(r->error));
    if (ret >= 0)
        ret = vkcu_outfile_commit(tmp, path, r->error, sizeof(r->error));
    else
        vkcu_outfile_abort(tmp);
    return ret;
}

int vkcu_run(vkcu_context *ctx, const vkcu_job *job, vkcu_job_result *result)
{
    if (!result)
        return AVERROR(EINVAL);
    memset(result, 0, sizeof(*result));
    if (!ctx || !job)
        return vkcu_invalid(result->error, sizeof(result->error), "no %s given", ctx ? "job" : "context");
    const vkcu_log_target *prev = vkcu_log_target_swap(&ctx->log);
    int ret = vkcu_check_job(job, result->error, sizeof(result->error));
    if (ret >= 0) {
        vkcu_job_params p;
        vkcu_context_describe(ctx, job, &p);
        ret = job->hash_path ? vkcu_job_run_to_hash_file(&p, job->hash_path, result) : vkcu_job_run(&p, result);
        /* The job's one error line, where the caller's messages go. */
        if (ret < 0 && ret != VKCU_ERR_PIPE_CLOSED)
            LOGE("%s", result->error[0] ? result->error : "job failed");
    }
    vkcu_log_target_swap(prev);
    return ret;
}

void vkcu_abandon_outputs(void)
{
    vkcu_outfile_abort_all();
}

const char *vkcu_error_string(int err, char *buf, size_t size)
{
    return vkcu_err_str(err, buf, size);
}
