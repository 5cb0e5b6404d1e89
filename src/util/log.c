/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Logging (log.h) and the stop flag (vkcu/common.h). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/error.h>
#include <libavutil/log.h>

#include "log.h"

static int log_level = VKCU_LOG_INFO;
static vkcu_setting_name_callback default_namer;
static void *default_namer_opaque;
static volatile sig_atomic_t stop_flag;
/* Per thread, so that jobs of different contexts log to their own callbacks. */
static _Thread_local const vkcu_log_target *thread_target;

const vkcu_log_target *vkcu_log_target_get(void)
{
    return thread_target;
}

const vkcu_log_target *vkcu_log_target_swap(const vkcu_log_target *target)
{
    const vkcu_log_target *prev = thread_target;
    thread_target = target;
    return prev;
}

/* FFmpeg's lines on a thread of a job whose context has a log callback go
 * to that callback, at the context's threshold; every other thread keeps
 * FFmpeg's own printing, at FFmpeg's process-wide threshold (set from a
 * vkcu level below). The levels keep what the CLI has always shown at each
 * of its levels: fatal at error, errors at verbose, the rest up to
 * FFmpeg's verbose at debug. FFmpeg sends a line in pieces: they are
 * gathered per thread until the newline. */
static _Thread_local char av_line[1024];
static _Thread_local size_t av_len;
static _Thread_local int av_print_prefix = 1;

static int av_level_to_vkcu(int av_level)
{
    if (av_level <= AV_LOG_FATAL)
        return VKCU_LOG_ERROR;
    if (av_level <= AV_LOG_ERROR)
        return VKCU_LOG_VERBOSE;
    if (av_level <= AV_LOG_VERBOSE)
        return VKCU_LOG_DEBUG;
    return VKCU_LOG_DEBUG + 1; /* FFmpeg's debug and trace: below any vkcu threshold */
}

static void av_log_to_target(void *avcl, int level, const char *fmt, va_list vl)
{
    const vkcu_log_target *t = thread_target;
    if (!t || !t->callback) {
        av_log_default_callback(avcl, level, fmt, vl);
        return;
    }
    int av_level = level >= 0 ? level & 0xff : level; /* the high bits carry a colour */
    int vkcu_level = av_level_to_vkcu(av_level);
    if (vkcu_level > t->level)
        return; /* before formatting: FFmpeg's debug lines come from its inner loops */
    char piece[sizeof(av_line)];
    av_log_format_line2(avcl, level, fmt, vl, piece, sizeof(piece), &av_print_prefix);
    size_t n = strlen(piece), room = sizeof(av_line) - 1 - av_len;
    memcpy(av_line + av_len, piece, n < room ? n : room);
    av_len += n < room ? n : room;
    av_line[av_len] = 0;
    if (!av_len || (av_line[av_len - 1] != '\n' && av_len < sizeof(av_line) - 1))
        return;
    while (av_len && (av_line[av_len - 1] == '\n' || av_line[av_len - 1] == '\r'))
        av_line[--av_len] = 0;
    if (av_len && vkcu_level <= t->level) {
        char line[sizeof(av_line) + 16];
        snprintf(line, sizeof(line), "ffmpeg: %s", av_line);
        t->callback(t->opaque, (enum vkcu_log_level)vkcu_level, line);
    }
    av_len = 0;
    av_line[0] = 0;
}

static void install_av_log(void)
{
    av_log_set_callback(av_log_to_target);
}

void vkcu_log_route_ffmpeg(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_av_log);
}

void vkcu_log_ffmpeg_threshold(enum vkcu_log_level level)
{
    /* the FFmpeg levels av_level_to_vkcu delivers at each vkcu level */
    static const int av_levels[] = { AV_LOG_QUIET, AV_LOG_FATAL, AV_LOG_FATAL, AV_LOG_FATAL, AV_LOG_ERROR, AV_LOG_VERBOSE };
    if (level >= VKCU_LOG_QUIET && level <= VKCU_LOG_DEBUG)
        av_log_set_level(av_levels[level + 1]);
}

/* Until a context says otherwise, FFmpeg's own printing keeps to the
 * default level's share (its fatal lines): the library writes nothing to
 * the standard streams on its own, also where FFmpeg logs outside a job
 * (a preset's encoder options checked as it loads). */
__attribute__((constructor)) static void ffmpeg_threshold_default(void)
{
    vkcu_log_ffmpeg_threshold(VKCU_LOG_INFO);
}

void vkcu_set_log_level(enum vkcu_log_level level)
{
    log_level = level;
    vkcu_log_ffmpeg_threshold(level);
}
int vkcu_log_level(void) { return thread_target ? thread_target->level : log_level; }

void vkcu_log(int level, const char *fmt, ...)
{
    const vkcu_log_target *t = thread_target;
    if (level > (t ? t->level : log_level))
        return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (t && t->callback) {
        t->callback(t->opaque, (enum vkcu_log_level)level, line);
        return;
    }
    const char *tag = level == VKCU_LOG_ERROR ? "error: " : level == VKCU_LOG_WARNING ? "warning: " : "";
    /* One write per line so concurrent jobs do not interleave within a line. */
    fprintf(stderr, "vkcu: %s%s\n", tag, line);
}

void vkcu_set_setting_name_callback(vkcu_setting_name_callback namer, void *opaque)
{
    default_namer = namer;
    default_namer_opaque = opaque;
}

const char *vkcu_setting_text(const char *setting, const char *value, char *buf, size_t size)
{
    const vkcu_log_target *t = thread_target;
    vkcu_setting_name_callback namer = t && t->setting_name ? t->setting_name : default_namer;
    void *opaque = t && t->setting_name ? t->opaque : default_namer_opaque;
    if (namer) {
        const char *name = namer(opaque, setting, value, buf, size);
        if (name)
            return name;
    }
    snprintf(buf, size, "%s%s%s", setting, value ? "=" : "", value ? value : "");
    return buf;
}

void vkcu_request_stop(void) { stop_flag = 1; }
int vkcu_stop_requested(void) { return stop_flag; }

int vkcu_job_stop_requested(void)
{
    const vkcu_log_target *t = thread_target;
    return stop_flag || (t && t->stop && atomic_load(t->stop));
}
