/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the library's other public entry points (regress/regress_api.c,
 * batch/batch.c) need from a context: its log target and the job settings it implies.
 */
#ifndef VKCU_CONTEXT_H
#define VKCU_CONTEXT_H

#include "util/log.h"
#include "vkcu.h"

/* The context's log target, for vkcu_log_target_swap around a call. */
const vkcu_log_target *vkcu_context_log(const vkcu_context *ctx);
/* An internal job description with the context's settings (backend,
 * device, ring, watchdog, threads, callbacks) and every job field at its
 * default. */
void vkcu_context_job_params(const vkcu_context *ctx, vkcu_job_params *p);
/* The internal job description of a public job on a context (the job's
 * fields over vkcu_context_job_params). */
void vkcu_context_describe(const vkcu_context *ctx, const vkcu_job *job, vkcu_job_params *p);
/* Checks a public job as vkcu_run does: 0, or vkcu_invalid's -EINVAL with
 * the field named. */
int vkcu_check_job(const vkcu_job *job, char *err, size_t errlen);
/* Logs one refusal of an argument on the calling thread's target, copies
 * it to err (may be NULL) and returns -EINVAL. */
int vkcu_invalid(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Refuses an integer setting outside [lo, hi] in the caller's function
 * (one that has err and errlen): returns vkcu_invalid's -EINVAL with the
 * line "NAME VALUE is out of range [LO, HI]", NAME in the caller's words
 * (VKCU_SETTING(field) for a struct field). */
#define VKCU_RANGE(name, value, lo, hi)                                                                  \
    do {                                                                                                 \
        if ((long long)(value) < (long long)(lo) || (long long)(value) > (long long)(hi))                \
            return vkcu_invalid(err, errlen, "%s %lld is out of range [%lld, %lld]", name,              \
                                (long long)(value), (long long)(lo), (long long)(hi));                  \
    } while (0)

/* Refuses a struct a caller filled whose reserved words are not all zero
 * (include/vkcu/version.h, room to grow): 0, or vkcu_invalid's -EINVAL
 * naming the struct (its typedef name, "vkcu_job"), the word, and the
 * vkcu_default_*() call that fills it. */
int vkcu_reserved_check(const char *type, const uint64_t *reserved, size_t words, char *err, size_t errlen);
#define VKCU_RESERVED_CHECK(type, s, err, errlen)                                                              \
    vkcu_reserved_check(#type, (s)->reserved, sizeof((s)->reserved) / sizeof((s)->reserved[0]), err, errlen)

/* Checks a trim (start/duration in seconds or frames; -1: not set) as
 * vkcu_job and vkcu_compare_job document it. 0 or vkcu_invalid's -EINVAL. */
int vkcu_check_trim(double start_time, double duration, int64_t start_frame, int64_t frame_count, char *err,
                    size_t errlen);

#endif
