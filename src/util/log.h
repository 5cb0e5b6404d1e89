/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Logging shared by every stage. A failed call's reason goes into the
 * caller's err by one convention: kernels/check.h (CU_CHECK) and
 * src/gpu/check.h (VK_CHECK).
 */
#ifndef VKCU_LOG_H
#define VKCU_LOG_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include "error.h"
/* vkcu_now and vkcu_thread_create live in clock.h and thread.h; many files
 * still take them from here (src/gpu/, src/regress/): new code includes
 * those headers itself. */
#include "clock.h"
#include "thread.h"

#ifdef __cplusplus
extern "C" {
#endif

void vkcu_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The threshold that applies to the calling thread's messages. */
int vkcu_log_level(void);

/* Where a thread's messages go: a context's callback and threshold. A
 * thread without a target (library calls made outside vkcu_run) logs to
 * standard error at vkcu_set_log_level's level (default VKCU_LOG_INFO). */
typedef struct vkcu_log_target {
    vkcu_log_callback callback; /* NULL: standard error, "vkcu: " first */
    void *opaque;
    int level;
    vkcu_setting_name_callback setting_name; /* NULL: settings are named as the public structs' fields */
    /* The context's stop request (vkcu_context_stop); NULL: none. It rides
     * here because the target is what every thread of a context's jobs
     * carries (vkcu_thread_create). */
    const atomic_int *stop;
} vkcu_log_target;
/* 1 when the job on the calling thread is to stop: vkcu_request_stop() for
 * the process, or vkcu_context_stop() for the context whose target the
 * thread has. Async-signal-safe. Every check inside the library asks this,
 * never vkcu_stop_requested() alone. */
int vkcu_job_stop_requested(void);
/* Sets the calling thread's target (NULL: none); returns the previous one,
 * for the caller to restore. The target must outlive its use. */
const vkcu_log_target *vkcu_log_target_swap(const vkcu_log_target *target);
/* The calling thread's target (NULL: none). */
const vkcu_log_target *vkcu_log_target_get(void);

/* How a message names a public setting (a field of vkcu_settings, vkcu_job,
 * vkcu_compare_job or vkcu_verify_job): "ring_size", or "overwrite=1",
 * "align=index" with a value; or the program's own name for it ("-y") from
 * the calling thread's target's setting_name callback (else the process's
 * default, vkcu_set_setting_name_callback: public, vkcu/common.h). Library text never spells a command-line option: it calls
 * this, through VKCU_SETTING / VKCU_SETTING_IS, when the text is made (the
 * buffer lives as long as the enclosing block). */
const char *vkcu_setting_text(const char *setting, const char *value, char *buf, size_t size);
#define VKCU_SETTING(name) vkcu_setting_text(name, NULL, (char[80]){ 0 }, 80)
#define VKCU_SETTING_IS(name, value) vkcu_setting_text(name, value, (char[80]){ 0 }, 80)
/* Installs, once per process, the av_log callback that sends FFmpeg's lines
 * on a thread with a log target that has a callback to that callback
 * ("ffmpeg: " first); threads without one print as FFmpeg does. */
void vkcu_log_route_ffmpeg(void);

/* FFmpeg's own threshold (av_log_set_level, process-wide), from a vkcu
 * level: what FFmpeg prints itself on threads without a log target that has
 * a callback. vkcu_open sets it from the context's log_level; until then it
 * is VKCU_LOG_INFO's (FFmpeg's fatal lines only). */
void vkcu_log_ffmpeg_threshold(enum vkcu_log_level level);
/* Threshold of the messages of threads without a log target (library calls
 * made outside a context), and FFmpeg's as above: for tests and tools
 * inside the tree (programs set a context's log_level). */
void vkcu_set_log_level(enum vkcu_log_level level);

/* vkcu_request_stop and vkcu_stop_requested are public (vkcu/common.h). */


#define LOGE(...) vkcu_log(VKCU_LOG_ERROR, __VA_ARGS__)
#define LOGW(...) vkcu_log(VKCU_LOG_WARNING, __VA_ARGS__)
#define LOGI(...) vkcu_log(VKCU_LOG_INFO, __VA_ARGS__)
#define LOGV(...) vkcu_log(VKCU_LOG_VERBOSE, __VA_ARGS__)
#define LOGD(...) vkcu_log(VKCU_LOG_DEBUG, __VA_ARGS__)

#ifdef __cplusplus
}
#endif
#endif
