/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A persistent worker pool for row-parallel CPU work: the workers are made
 * once and wait between calls, so a job does not create threads per frame.
 *
 * A pool of n threads is the caller plus n - 1 workers; vkcu_pool_rows
 * splits rows [0, height) into n bands at even rows and runs band 0 on the
 * caller. Thread-safety: one caller at a time per pool.
 *
 * vkcu_pool_for_thread gives each calling thread its own pool (a job runs
 * on one thread, so that is one pool per job, and N jobs at once have what
 * N jobs creating threads per call had, no more); vkcu_pool_thread_release
 * tears it down at the job's end, and a thread's exit does too.
 */
#ifndef VKCU_UTIL_POOL_H
#define VKCU_UTIL_POOL_H

#include <stdint.h>

typedef struct vkcu_pool vkcu_pool;
typedef void (*vkcu_pool_rows_fn)(void *ctx, int y0, int y1);

/* threads: 1..VKCU_POOL_MAX_THREADS (clamped); NULL on failure. Workers
 * that cannot be started leave their bands to the caller. */
#define VKCU_POOL_MAX_THREADS 64
vkcu_pool *vkcu_pool_create(int threads);
/* Joins the workers; NULL and *pool == NULL are fine. */
void vkcu_pool_destroy(vkcu_pool **pool);
/* Bands of all threads of the pool (fewer when height < 2 * threads, as one
 * band then); returns when every band is done. */
void vkcu_pool_rows(vkcu_pool *pool, int height, vkcu_pool_rows_fn fn, void *ctx);
int vkcu_pool_threads(const vkcu_pool *pool);

/* The calling thread's pool of `threads` threads, made on first use or
 * remade when `threads` changed; NULL when threads <= 1 or it cannot be made. */
vkcu_pool *vkcu_pool_for_thread(int threads);
void vkcu_pool_thread_release(void);

/* Worker threads started by every pool of the process so far. */
int64_t vkcu_pool_threads_started(void);

#endif
