/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The CLI as a client of the public API (include/vkcu/): its log,
 * progress and watchdog callbacks, and one job run through a context.
 * Where a message needs a command-line option's name, it is added here,
 * never in the library.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <libavutil/error.h>

#include "cli.h"
#include "util/log.h"
#include "core/stage.h"

/* The library's messages, as the CLI has always printed its own. */
void cli_log(void *opaque, enum vkcu_log_level level, const char *message)
{
    (void)opaque;
    if (level == VKCU_LOG_ERROR)
        vkcu_progress_break_line(); /* the error starts on its own line */
    const char *tag = level == VKCU_LOG_ERROR ? "error: " : level == VKCU_LOG_WARNING ? "warning: " : "";
    fprintf(stderr, "vkcu: %s%s\n", tag, message);
}

static void cli_progress(void *opaque, const vkcu_progress_info *info)
{
    (void)opaque;
    vkcu_progress_draw(info);
}

/* A stalled driver call cannot be unwound: the command ends here, with
 * the device exit code and no partial file (the library has logged the
 * stall). */
static void cli_watchdog(void *opaque, const char *input, double stalled_seconds)
{
    (void)opaque;
    (void)stalled_seconds;
    fprintf(stderr, "vkcu: %s: raise --stall-timeout, or use --backend cpu\n", input);
    vkcu_abandon_outputs();
    _exit(VKCU_EXIT_DEVICE);
}

int cli_exit_code(int ret)
{
    /* -EINVAL: the library refused an argument, which on the command line
     * is a usage error like any other. */
    return ret == AVERROR(EINVAL) ? VKCU_EXIT_USAGE : vkcu_exit_code(ret);
}

int cli_open_context(const vkcu_job_params *p, vkcu_context **ctx)
{
    return cli_open_context_log(p, cli_log, ctx);
}

int cli_open_context_log(const vkcu_job_params *p, vkcu_log_callback log, vkcu_context **ctx)
{
    vkcu_settings s;
    vkcu_default_settings(&s);
    s.log_callback = log;
    s.log_level = (enum vkcu_log_level)vkcu_log_level();
    s.backend = p->backend;
    s.device = p->device;
    s.ring_size = p->ring_size;
    s.stall_timeout_ms = p->stall_timeout_ms;
    s.timeline_handoff = p->timeline_handoff;
    s.vulkan_download = p->download == VKCU_DOWNLOAD_VULKAN;
    s.decode_threads = p->decode_threads;
    s.encode_workers = p->encode_workers;
    if (p->progress && isatty(STDERR_FILENO))
        s.progress_callback = cli_progress;
    s.watchdog_callback = cli_watchdog;
    return vkcu_open(ctx, &s);
}

void cli_job_from_params(const vkcu_job_params *p, vkcu_job *job_)
{
    vkcu_job job;
    vkcu_default_job(&job);
    job.input = p->input;
    job.video_stream = p->video_stream;
    job.chain = p->chain;
    job.sink = p->sink;
    job.output = p->output;
    job.output_format = p->output_format;
    job.encoder = p->encoder;
    job.crf = p->crf;
    job.bitrate = p->bitrate;
    job.preset = p->preset;
    job.gop = p->gop;
    job.encoder_opts = p->encoder_opts;
    job.faststart = p->faststart;
    job.overwrite = p->overwrite;
    job.keep_partial = p->keep_partial;
    job.hash_out = p->hash_out;
    job.hash_out_name = p->hash_out_name;
    job.hash_algo = p->hash_algo;
    job.hash_format = p->hash_format;
    job.start_time = p->start_time;
    job.duration = p->duration;
    job.start_frame = p->start_frame;
    job.frame_count = p->frame_count;
    job.max_frames = p->max_frames;
    job.strict = p->strict;
    job.require_gpu_decode = p->require_gpu_decode;
    job.decode_only = p->decode_only;
    *job_ = job;
}

void cli_params_from_job(const vkcu_job *job, vkcu_job_params *p)
{
    p->input = job->input;
    p->video_stream = job->video_stream;
    p->chain = job->chain;
    p->sink = job->sink;
    p->output = job->output;
    p->output_format = job->output_format;
    p->encoder = job->encoder;
    p->crf = job->crf;
    p->bitrate = job->bitrate;
    p->preset = job->preset;
    p->gop = job->gop;
    p->encoder_opts = job->encoder_opts;
    p->faststart = job->faststart;
    p->overwrite = job->overwrite;
    p->keep_partial = job->keep_partial;
    p->hash_out = job->hash_out;
    p->hash_out_name = job->hash_out_name;
    p->hash_algo = job->hash_algo;
    p->hash_format = job->hash_format;
    p->start_time = job->start_time;
    p->duration = job->duration;
    p->start_frame = job->start_frame;
    p->frame_count = job->frame_count;
    p->max_frames = job->max_frames;
    p->strict = job->strict;
    p->require_gpu_decode = job->require_gpu_decode;
    p->decode_only = job->decode_only;
}

int cli_run_job(const vkcu_job_params *p, vkcu_job_result *r)
{
    vkcu_job job;
    cli_job_from_params(p, &job);
    vkcu_context *ctx = NULL;
    int ret = cli_open_context(p, &ctx);
    if (ret < 0) {
        memset(r, 0, sizeof(*r));
        return ret;
    }
    ret = vkcu_run(ctx, &job, r);
    vkcu_close(&ctx);
    return ret;
}
