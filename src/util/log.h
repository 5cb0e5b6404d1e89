/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Logging and error-check macros shared by every stage.
 *
 * AV_CHECK / VK_CHECK / CUDA_CHECK log the failing call with its result
 * string and file:line, set `ret` and jump to the function's `fail:` label.
 */
#ifndef VKCU_LOG_H
#define VKCU_LOG_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

void vkcu_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The threshold that applies to the calling thread's messages. */
int vkcu_log_level(void);

/* Where a thread's messages go: a context's callback and threshold. A
 * thread without a target (the CLI's own messages, library calls made
 * outside vkcu_run) logs to standard error at vkcu_set_log_level's level. */
typedef struct vkcu_log_target {
    vkcu_log_callback callback; /* NULL: standard error, "vkcu: " first */
    void *opaque;
    int level;
} vkcu_log_target;
/* Sets the calling thread's target (NULL: none); returns the previous one,
 * for the caller to restore. The target must outlive its use. */
const vkcu_log_target *vkcu_log_target_swap(const vkcu_log_target *target);
/* pthread_create whose thread logs to the creating thread's target. */
int vkcu_thread_create(pthread_t *thread, void *(*start)(void *), void *arg);

/* Maps a negative error to a process exit code. */
int vkcu_exit_code(int err);

/* Threshold of the messages without a log target (the CLI's own) and of
 * FFmpeg's av_log, which is process-wide. */
void vkcu_set_log_level(enum vkcu_log_level level);

/* vkcu_request_stop and vkcu_stop_requested are public (vkcu/common.h). */

/* Seconds on the monotonic clock (CLOCK_MONOTONIC). */
double vkcu_now(void);
/* Text for a vkcu or AVERROR code. */
const char *vkcu_err_str(int err, char *buf, size_t size);

#define LOGE(...) vkcu_log(VKCU_LOG_ERROR, __VA_ARGS__)
#define LOGW(...) vkcu_log(VKCU_LOG_WARNING, __VA_ARGS__)
#define LOGI(...) vkcu_log(VKCU_LOG_INFO, __VA_ARGS__)
#define LOGV(...) vkcu_log(VKCU_LOG_VERBOSE, __VA_ARGS__)
#define LOGD(...) vkcu_log(VKCU_LOG_DEBUG, __VA_ARGS__)

#define AV_CHECK(call)                                                          \
    do {                                                                        \
        int av_check_ret_ = (call);                                             \
        if (av_check_ret_ < 0) {                                                \
            char av_check_buf_[128];                                            \
            LOGV("%s failed: %s (%s:%d)", #call,                                \
                 vkcu_err_str(av_check_ret_, av_check_buf_, sizeof(av_check_buf_)), \
                 __FILE__, __LINE__);                                           \
            ret = av_check_ret_;                                                \
            goto fail;                                                          \
        }                                                                       \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
