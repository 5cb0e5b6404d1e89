/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Progress (progress.c): what a running job tells its progress callback.
 */
#ifndef VKCU_CORE_PROGRESS_H
#define VKCU_CORE_PROGRESS_H

#include <stdint.h>
#include <vkcu/job.h>

/* A job's progress reports, at most 4 a second, to the job's progress
 * callback (none: nothing is reported). */
typedef struct vkcu_progress {
    int enabled;
    vkcu_progress_callback callback; /* set before vkcu_progress_init; NULL: no reports */
    void *opaque;
    double start, last;
    int64_t total;
    const char *label;
    /* Set before vkcu_progress_init (by the trim set-up); init keeps them. */
    double rate;            /* frames per second of the input; 0: unknown (no speed) */
    int64_t expected;       /* frames the trimmed job will write; 0: use init's total */
} vkcu_progress;
void vkcu_progress_init(vkcu_progress *p, int enabled, int64_t total, const char *label);
void vkcu_progress_update(vkcu_progress *p, int64_t frames, int final);

#endif
