/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Logging, error strings, exit-code mapping and the stop flag. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <libavutil/error.h>
#include <libavutil/log.h>

#include "log.h"

static int log_level = VKCU_LOG_INFO;
static volatile sig_atomic_t stop_flag;
/* Per thread, so that jobs of different contexts log to their own callbacks. */
static _Thread_local const vkcu_log_target *thread_target;

const vkcu_log_target *vkcu_log_target_swap(const vkcu_log_target *target)
{
    const vkcu_log_target *prev = thread_target;
    thread_target = target;
    return prev;
}

typedef struct thread_start {
    void *(*start)(void *);
    void *arg;
    const vkcu_log_target *target;
} thread_start;

static void *thread_trampoline(void *opaque)
{
    thread_start ts = *(thread_start *)opaque;
    free(opaque);
    thread_target = ts.target;
    return ts.start(ts.arg);
}

int vkcu_thread_create(pthread_t *thread, void *(*start)(void *), void *arg)
{
    thread_start *ts = malloc(sizeof(*ts));
    if (!ts)
        return ENOMEM;
    *ts = (thread_start){ start, arg, thread_target };
    int ret = pthread_create(thread, NULL, thread_trampoline, ts);
    if (ret)
        free(ts);
    return ret;
}

void vkcu_set_log_level(enum vkcu_log_level level)
{
    static const int av_levels[] = { AV_LOG_QUIET, AV_LOG_FATAL, AV_LOG_FATAL, AV_LOG_FATAL, AV_LOG_ERROR, AV_LOG_VERBOSE };
    log_level = level;
    av_log_set_level(av_levels[level + 1]);
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

const char *vkcu_err_str(int err, char *buf, size_t size)
{
    switch (err) {
    case VKCU_ERR_USAGE: snprintf(buf, size, "invalid usage"); break;
    case VKCU_ERR_INPUT: snprintf(buf, size, "invalid input"); break;
    case VKCU_ERR_OUTPUT: snprintf(buf, size, "cannot write output"); break;
    case VKCU_ERR_DEVICE: snprintf(buf, size, "GPU device error"); break;
    case VKCU_ERR_MISMATCH: snprintf(buf, size, "mismatch"); break;
    case VKCU_ERR_INTERRUPT: snprintf(buf, size, "interrupted"); break;
    case VKCU_ERR_PIPE_CLOSED: snprintf(buf, size, "standard output closed by its reader"); break;
    default: av_strerror(err, buf, size); break;
    }
    return buf;
}

int vkcu_exit_code(int err)
{
    switch (err) {
    case 0: return VKCU_EXIT_OK;
    case VKCU_ERR_USAGE: return VKCU_EXIT_USAGE;
    case VKCU_ERR_INPUT: return VKCU_EXIT_INPUT;
    case VKCU_ERR_OUTPUT: return VKCU_EXIT_OUTPUT;
    case VKCU_ERR_DEVICE: return VKCU_EXIT_DEVICE;
    case VKCU_ERR_MISMATCH: return VKCU_EXIT_MISMATCH;
    case VKCU_ERR_INTERRUPT: return VKCU_EXIT_INTERRUPT;
    case VKCU_ERR_PIPE_CLOSED: return VKCU_EXIT_OK;
    default: return VKCU_EXIT_FAIL;
    }
}

void vkcu_request_stop(void) { stop_flag = 1; }
int vkcu_stop_requested(void) { return stop_flag; }

double vkcu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
