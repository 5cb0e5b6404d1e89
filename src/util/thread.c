/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Threads that inherit their creator's log target (thread.h). */
#include <errno.h>
#include <sched.h>
#include <unistd.h>
#include <stdlib.h>

#include "log.h"
#include "thread.h"

typedef struct thread_start {
    void *(*start)(void *);
    void *arg;
    const vkcu_log_target *target;
} thread_start;

static void *thread_trampoline(void *opaque)
{
    thread_start ts = *(thread_start *)opaque;
    free(opaque);
    vkcu_log_target_swap(ts.target);
    return ts.start(ts.arg);
}

int vkcu_thread_create(pthread_t *thread, void *(*start)(void *), void *arg)
{
    thread_start *ts = malloc(sizeof(*ts));
    if (!ts)
        return ENOMEM;
    *ts = (thread_start){ start, arg, vkcu_log_target_get() };
    int ret = pthread_create(thread, NULL, thread_trampoline, ts);
    if (ret)
        free(ts);
    return ret;
}

int vkcu_cpu_count(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
