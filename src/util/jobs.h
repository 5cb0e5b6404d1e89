/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A task-queue pool for runs of many independent items (a batch's files,
 * a manifest's cases): N worker threads, each calling the caller's work
 * function with its worker index until the function says there is no more
 * work. The caller hands out its items itself (under its own lock), so the
 * order it takes them in, its stop rule and its bookkeeping stay its own.
 *
 * Not util/pool.h, which splits one picture's rows between threads kept for
 * a job's life; here each thread lives for one run and takes whole items.
 *
 * Threads are made with vkcu_thread_create (util/thread.h): they log where
 * the starting thread logs. Thread-safety: one thread starts, waits on and
 * joins a pool; the work function runs on every worker at once.
 */
#ifndef VKCU_UTIL_JOBS_H
#define VKCU_UTIL_JOBS_H

#include <pthread.h>

typedef struct vkcu_jobs vkcu_jobs;

/* Runs one item on worker `worker` (0 .. started - 1): 1 when it ran one
 * (it is called again), 0 when there is no more work for it (its thread
 * ends). Every worker keeps calling until it gets 0 itself. */
typedef int (*vkcu_jobs_work_fn)(void *opaque, int worker);

typedef struct vkcu_jobs_params {
    int workers;            /* threads to start, >= 1 */
    vkcu_jobs_work_fn work;
    void *opaque;           /* given to work */
    /* Makes each thread: NULL is vkcu_thread_create. For tests, to make a
     * thread start fail. */
    int (*thread_create)(pthread_t *thread, void *(*start)(void *), void *arg);
} vkcu_jobs_params;

/* Starts the workers. Those that cannot be started leave their share to the
 * others: the work function is called until it returns 0 on every worker
 * that started. Returns the number started (1 .. workers), with *jobs set;
 * or, with *jobs NULL and nothing running, AVERROR(EINVAL) for bad params,
 * AVERROR(ENOMEM) when the pool cannot be allocated, or AVERROR(EAGAIN)
 * when not one thread could be started. */
int vkcu_jobs_start(vkcu_jobs **jobs, const vkcu_jobs_params *params);

/* Waits until every worker has ended (returns 1), or until `seconds` have
 * passed or a worker has finished an item since the last call (returns 0),
 * whichever is first: a caller that shows progress calls it in a loop. */
int vkcu_jobs_wait(vkcu_jobs *jobs, double seconds);

/* Waits for every worker to end (the work function must come to return 0:
 * the caller's stop rule), joins and frees them; clears *jobs. NULL and
 * *jobs == NULL are fine. */
void vkcu_jobs_join(vkcu_jobs **jobs);

#endif
