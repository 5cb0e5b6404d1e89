/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Threads of the library: each logs where the thread that made it logs
 * (its context's callback and threshold, log.h), so that a job's worker,
 * encoder and watchdog lines reach the job's context like its own.
 */
#ifndef VKCU_UTIL_THREAD_H
#define VKCU_UTIL_THREAD_H

#include <pthread.h>

#ifdef __cplusplus
extern "C" {
#endif

/* pthread_create (default attributes) whose thread starts with the calling
 * thread's log target. Returns 0 or an errno value, as pthread_create. */
int vkcu_thread_create(pthread_t *thread, void *(*start)(void *), void *arg);

/* The CPUs this process may run on (taskset, cgroup cpusets), at least 1. */
int vkcu_cpu_count(void);

#ifdef __cplusplus
}
#endif

#endif
