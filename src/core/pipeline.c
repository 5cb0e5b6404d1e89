/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job runner: demux -> decode -> operators (CPU reference, or the GPU
 * session) -> sink, with trimming, progress, the stall watchdog, and one
 * error line that names the file when anything goes wrong.
 *
 * vkcu_job_run is its steps: the opening (pipeline_open.c), the frame loop
 * and the drain into the sink (pipeline_frames.c), then here the end: the
 * failed job's one line, the result's figures, and everything closed. The
 * running job's state is pipeline_priv.h's `job`.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include "gpu/vkdev.h"
#include "gpu/enginestats.h"
#include "gpu/vk.h"
#include "gpu/vkencode.h"
#include "util/log.h"
#include "util/pool.h"
#include "pipeline_priv.h"

const char *vkcu_path_name(enum vkcu_path path)
{
    switch (path) {
    case VKCU_PATH_CPU: return "cpu";
    case VKCU_PATH_VULKAN_CUDA: return "vulkan-decode+cuda";
    case VKCU_PATH_SW_UPLOAD_CUDA: return "sw-decode+upload+cuda";
    case VKCU_PATH_VULKAN_COMPUTE_CUDA: return "vulkan-compute-decode+cuda";
    default: return "none";
    }
}

/* VKCU_ENGINE_STATS=1 (gpu/enginestats.h): the process's engine figures
 * so far, one log line per queue and a summary, at the end of each GPU job. */
static void log_engine_stats(void)
{
    vkcu_engine_stats s;
    size_t len = 16384;
    char *text = av_malloc(len);
    if (!text)
        return;
    vkcu_engine_stats_get(&s);
    vkcu_engine_stats_text(&s, text, len);
    for (char *line = text, *end; *line; line = end + 1) {
        if (!(end = strchr(line, '\n')))
            break;
        *end = 0;
        LOGI("%s", line);
    }
    av_free(text);
}

/* --stats: when each step of the set-up ran, in ms from the job's start:
 * the shared device's threads (gpu/vkdev.c), then this job's own. */
static void setup_timeline(job *j)
{
    vkcu_job_result *r = j->r;
    const double t0 = j->t0, t_demux = j->t_demux, t_open = j->t_open;
    char *buf = r->setup_timeline;
    size_t len = sizeof(r->setup_timeline), used;
    vkcu_vkdev_timeline(j->p->settings.device, t0, buf, len);
    if (!buf[0]) /* no GPU device was made */
        return;
    const struct { const char *name; double a, b; } steps[] = {
        { "demux", t_demux, t_demux + r->setup_ms_demux / 1e3 },
        { "gpu_open", t_open, t_open + r->setup_ms_gpu_open / 1e3 },
        { "decoder", t_open + r->setup_ms_gpu_open / 1e3, j->t_backend },
        { "first_frame", j->t_backend, j->t_first },
    };
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
        if (steps[i].a > 0 && steps[i].b >= steps[i].a && (used = strlen(buf)) < len)
            snprintf(buf + used, len - used, "%s%s=%.0f-%.0f", used ? " " : "", steps[i].name, (steps[i].a - t0) * 1e3,
                     (steps[i].b - t0) * 1e3);
}

/* User and system time of the whole process so far. */
static double process_cpu_seconds(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) < 0)
        return 0;
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

/* The pictures the decoder concealed errors in, said once: how many and
 * the first few (each is a verbose line as it comes). */
static void warn_damage(const job *j)
{
    const int64_t n = j->concealed_pictures;
    const int listed = n < CONCEALED_LISTED ? (int)n : CONCEALED_LISTED;
    char frames[128] = "";
    if (!n)
        return;
    for (int k = 0; k < listed; k++) {
        size_t len = strlen(frames);
        snprintf(frames + len, sizeof(frames) - len, "%s%lld", k ? ", " : "", (long long)j->concealed_first[k]);
    }
    LOGW("%s: %lld damaged picture%s, concealed by the decoder: frame%s %s%s (%s lists each); kept and marked (use "
         "%s to stop)", j->p->job.input, (long long)n, n > 1 ? "s" : "", n > 1 ? "s" : "", frames, n > listed ? ", ..." : "",
         VKCU_SETTING_IS("log_level", "verbose"), VKCU_SETTING_IS("strict", "1"));
}

/* What became of the decoded frames, said once at the end of a job that
 * did not hand every one of them to the sink as it was decoded. */
static void warn_frame_counts(const job *j)
{
    const vkcu_job_params *p = j->p;
    const vkcu_job_result *r = j->r;
    const int hashes = p->job.sink == VKCU_SINK_HASH || (p->job.sink == VKCU_SINK_CALLBACK && p->callback_timing);
    char size[64];
    snprintf(size, sizeof(size), "%s %dx%d", av_get_pix_fmt_name(j->sink_fmt.pix_fmt), j->sink_fmt.width,
             j->sink_fmt.height);
    if (hashes && p->job.timing == VKCU_TIMING_FFMPEG) {
        if (r->frames_dropped)
            LOGW("%s: %lld of %lld decoded frames were dropped by their timestamps, as ffmpeg's framemd5 drops them; "
                 "%s takes every decoded frame", p->job.input, (long long)r->frames_dropped, (long long)r->frames_out,
                 VKCU_SETTING_IS("timing", "decoded"));
        if (r->frames_duplicated)
            LOGW("%s: %lld frames were repeated to fill gaps in their timestamps; %s takes each decoded frame once",
                 p->job.input, (long long)r->frames_duplicated, VKCU_SETTING_IS("timing", "decoded"));
        if (r->frames_rescaled)
            LOGW("%s: %lld of %lld frames were scaled to the first frame's %s, as ffmpeg's framemd5 scales them; "
                 "%s keeps every frame's own size", p->job.input, (long long)r->frames_rescaled, (long long)r->frames_out,
                 size, VKCU_SETTING_IS("timing", "decoded"));
    } else if (p->job.sink == VKCU_SINK_ENCODE && r->frames_rescaled) {
        LOGW("%s: %lld of %lld frames were scaled to the first frame's %s for the encoder: the stream changes "
             "format mid-way", p->job.input, (long long)r->frames_rescaled, (long long)r->frames_out, size);
    }
    if (r->frames_concealed)
        LOGW("%s: %lld frames decoded from damaged data (the decoder concealed errors in them or in the pictures "
             "they refer to, up to the next key frame): kept and marked as concealed; other decoders conceal "
             "differently", p->job.input, (long long)r->frames_concealed);
}

/* The failed job's one line in j->err: what failed where nothing said
 * more, and the lines a stop, a time limit or a full disk get whatever
 * code said it first. Returns the job's code (a write cut short by a stop
 * signal is the stop). */
static int fail_line(job *j, int ret)
{
    const vkcu_job_params *p = j->p;
    if (ret < 0 && !j->err[0]) {
        char buf[128];
        snprintf(j->err, j->errlen, "%s: %s", p->job.input, vkcu_err_str(ret, buf, sizeof(buf)));
    }
    /* A write or an open cut short by a stop signal (an output FIFO that
     * nobody reads) is the stop, not a failure of the output. */
    if (ret == VKCU_ERR_OUTPUT && vkcu_job_stop_requested())
        ret = VKCU_ERR_INTERRUPT;
    if (ret == VKCU_ERR_OUTPUT && p->job.sink == VKCU_SINK_HASH && p->job.hash_out_name && !j->output_refused)
        snprintf(j->err, j->errlen, "%s: cannot write the hashes (disk full, or over the file size limit?)",
                 p->job.hash_out_name);
    if (ret == AVERROR(ETIMEDOUT) && p->deadline > 0)
        snprintf(j->err, j->errlen, "%s: stopped at its time limit after %" PRId64 " frames", p->job.input,
                 j->r->frames_out);
    if (ret == VKCU_ERR_INTERRUPT)
        snprintf(j->err, j->errlen, "%s: interrupted; partial output %s%s%s", p->job.input,
                 p->job.keep_partial && p->job.sink == VKCU_SINK_ENCODE ? "kept (" : "removed",
                 p->job.keep_partial && p->job.sink == VKCU_SINK_ENCODE ? VKCU_SETTING_IS("keep_partial", "1") : "",
                 p->job.keep_partial && p->job.sink == VKCU_SINK_ENCODE ? ")" : "");
    return ret;
}

/* The result's figures: the GPU session's, and the job's times. */
static void account(job *j)
{
    vkcu_job_result *r = j->r;
    if (j->gpu) {
        vkcu_gpu_stats(j->gpu, r);
        /* A Vulkan encoder's packets are the bytes of the video that come back. */
        if (vkcu_vkencode_is_vulkan(r->encoder))
            r->dtoh_bytes += r->encoded_bytes;
    }
    r->seconds = vkcu_now() - j->t0;
    r->cpu_seconds = process_cpu_seconds() - j->cpu0;
    r->setup_seconds = j->t_first ? j->t_first - j->t0 : r->seconds;
    if (j->t_backend) {
        r->setup_ms_decoder = FFMAX(j->ms_backend - r->setup_ms_gpu_open, 0);
        r->setup_ms_first_frame = j->t_first ? (j->t_first - j->t_backend) * 1e3 : 0;
    }
    r->fps = r->seconds > 0 ? r->frames_out / r->seconds : 0;
    if (j->t_first && r->frames_out > 1)
        r->fps_steady = (r->frames_out - 1) / (vkcu_now() - j->t_first);
}

/* Everything the job opened, closed; the GPU's set-up threads waited for. */
static void job_close(job *j)
{
    av_packet_free(&j->pkt);
    av_frame_free(&j->frame);
    av_frame_free(&j->scaled);
    sws_freeContext(j->sws);
    for (int i = 0; i < j->nb_early; i++)
        av_packet_free(&j->early[i]);
    /* The handoff thread may still run operators: stop it before freeing them. */
    vkcu_gpu_close(&j->gpu);
    vkcu_decoder_close(&j->dec);
    vkcu_chain_free(&j->chain);
    vkcu_pool_thread_release(); /* the operators' row workers end with the job */
    vkcu_demux_close(&j->demux);
    av_freep(&j->sink.priv);
    if (j->gpu_prepared) { /* no set-up thread outlives the job (the process may exit next) */
        vkcu_gpu_prepare_wait(j->p->settings.device);
        setup_timeline(j);
        if (vkcu_engine_stats_on())
            log_engine_stats();
    }
}

/* The end of every job, done or failed. */
static int job_finish(job *j, int ret)
{
    /* a failed job says its damage too (it may be why), a stopped one not */
    if (ret < 0 && ret != VKCU_ERR_INTERRUPT && ret != VKCU_ERR_PIPE_CLOSED)
        warn_damage(j);
    if (j->watchdog_running) {
        atomic_store(&j->watchdog_stop, 1);
        pthread_join(j->watchdog, NULL);
    }
    if (ret < 0 && j->sink.cls && j->sink.priv && j->sink.cls->close)
        j->sink.cls->close(&j->sink, 0);
    ret = fail_line(j, ret);
    account(j);
    job_close(j);
    return ret;
}

int vkcu_job_run(const vkcu_job_params *p, vkcu_job_result *r)
{
    job j_ = { 0 }, *j = &j_;
    memset(r, 0, sizeof(*r));
    j->p = p;
    j->r = r;
    j->marked_since_key = -1;
    j->err = r->error;
    j->errlen = sizeof(r->error);
    j->threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (j->threads < 1)
        j->threads = 1;
    j->t0 = vkcu_now();
    j->cpu0 = process_cpu_seconds();
    /* Checked here, whatever the backend, and never clamped below. */
    if (p->settings.ring_size < VKCU_RING_SIZE_MIN || p->settings.ring_size > VKCU_RING_SIZE_MAX) {
        snprintf(j->err, j->errlen, "ring_size %d is not in [%d, %d] (interop ring slots)", p->settings.ring_size,
                 VKCU_RING_SIZE_MIN, VKCU_RING_SIZE_MAX);
        return AVERROR(EINVAL);
    }
    int ret = vkcu_pipeline_open(j);
    if (ret >= 0)
        ret = vkcu_pipeline_read(j);
    if (ret >= 0)
        ret = vkcu_pipeline_drain(j);
    if (ret >= 0) {
        warn_damage(j);
        warn_frame_counts(j);
        vkcu_progress_update(&j->progress, r->frames_out, 1);
    }
    return job_finish(j, ret);
}
