/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Progress reports of a job, at most 4 a second, to the job's progress
 * callback: frames (of the expected total), fps, the frame rate (for the
 * speed) and the time so far. Without a callback nothing is reported: the
 * terminal line is the CLI's (src/cli/progress.c).
 */
#include <stdio.h>
#include <time.h>

#include "core/progress.h"
#include "util/log.h" /* vkcu_now */

void vkcu_progress_init(vkcu_progress *p, int enabled, int64_t total, const char *label)
{
    p->enabled = enabled && p->callback;
    p->start = vkcu_now();
    p->last = 0;
    p->total = p->expected > 0 ? p->expected : total;
    p->label = label;
}

void vkcu_progress_update(vkcu_progress *p, int64_t frames, int final)
{
    if (!p->enabled)
        return;
    double now = vkcu_now();
    if (!final && now - p->last < 0.25)
        return;
    p->last = now;
    double el = now - p->start;
    vkcu_progress_info info = {
        .input = p->label,
        .frames = frames,
        .expected = p->total > 0 ? p->total : 0,
        .elapsed = el,
        .fps = el > 0 ? frames / el : 0,
        .rate = p->rate,
        .final = final,
    };
    p->callback(p->opaque, &info);
}
