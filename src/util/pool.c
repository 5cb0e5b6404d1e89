/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The persistent worker pool (pool.h). Each call is one generation: the
 * caller publishes the work and bumps the generation under the lock, every
 * worker runs its own band once per generation, and the last one to finish
 * wakes the caller. Bands are the ones threads created per call used to get,
 * so the work each row sees is unchanged.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "util/pool.h"

typedef struct pool_worker {
    vkcu_pool *pool;
    int index; /* its band */
    pthread_t tid;
    int running;
} pool_worker;

struct vkcu_pool {
    int threads;             /* bands per call: the caller and the workers */
    pool_worker worker[VKCU_POOL_MAX_THREADS];
    pthread_mutex_t lock;
    pthread_cond_t work, done;
    uint64_t generation;
    int pending;             /* workers still on this generation's bands */
    int quit;
    vkcu_pool_rows_fn fn;
    void *ctx;
    int height;
};

static atomic_int_fast64_t threads_started;

int64_t vkcu_pool_threads_started(void)
{
    return (int64_t)atomic_load(&threads_started);
}

/* Even band edges keep 4:2:0 chroma rows inside one band. */
static void run_band(vkcu_pool_rows_fn fn, void *ctx, int height, int threads, int t)
{
    int y0 = (int)((int64_t)height * t / threads) & ~1;
    int y1 = t == threads - 1 ? height : (int)((int64_t)height * (t + 1) / threads) & ~1;
    fn(ctx, y0, y1);
}

static void *worker_main(void *arg)
{
    pool_worker *w = arg;
    vkcu_pool *p = w->pool;
    uint64_t seen = 0;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (p->generation == seen && !p->quit)
            pthread_cond_wait(&p->work, &p->lock);
        if (p->quit)
            break;
        seen = p->generation;
        vkcu_pool_rows_fn fn = p->fn;
        void *ctx = p->ctx;
        int height = p->height;
        pthread_mutex_unlock(&p->lock);
        run_band(fn, ctx, height, p->threads, w->index);
        pthread_mutex_lock(&p->lock);
        if (--p->pending == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

vkcu_pool *vkcu_pool_create(int threads)
{
    if (threads < 1)
        threads = 1;
    if (threads > VKCU_POOL_MAX_THREADS)
        threads = VKCU_POOL_MAX_THREADS;
    vkcu_pool *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->threads = threads;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    for (int t = 1; t < threads; t++) {
        pool_worker *w = &p->worker[t];
        w->pool = p;
        w->index = t;
        if (pthread_create(&w->tid, NULL, worker_main, w) == 0) {
            w->running = 1;
            atomic_fetch_add(&threads_started, 1);
        }
    }
    return p;
}

void vkcu_pool_destroy(vkcu_pool **pp)
{
    vkcu_pool *p = pp ? *pp : NULL;
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->quit = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (int t = 1; t < p->threads; t++)
        if (p->worker[t].running)
            pthread_join(p->worker[t].tid, NULL);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    free(p);
    *pp = NULL;
}

int vkcu_pool_threads(const vkcu_pool *p)
{
    return p ? p->threads : 1;
}

void vkcu_pool_rows(vkcu_pool *p, int height, vkcu_pool_rows_fn fn, void *ctx)
{
    int threads = vkcu_pool_threads(p);
    if (threads <= 1 || height < 2 * threads) {
        fn(ctx, 0, height);
        return;
    }
    int workers = 0;
    for (int t = 1; t < threads; t++)
        workers += p->worker[t].running;
    pthread_mutex_lock(&p->lock);
    p->fn = fn;
    p->ctx = ctx;
    p->height = height;
    p->pending = workers;
    p->generation++;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    run_band(fn, ctx, height, threads, 0);
    for (int t = 1; t < threads; t++)
        if (!p->worker[t].running)
            run_band(fn, ctx, height, threads, t);
    pthread_mutex_lock(&p->lock);
    while (p->pending)
        pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

/* ---- one pool per calling thread ---- */

static pthread_key_t thread_pool_key;
static pthread_once_t thread_pool_once = PTHREAD_ONCE_INIT;

static void thread_pool_free(void *arg)
{
    vkcu_pool *p = arg;
    vkcu_pool_destroy(&p);
}

static void thread_pool_init(void)
{
    pthread_key_create(&thread_pool_key, thread_pool_free);
}

vkcu_pool *vkcu_pool_for_thread(int threads)
{
    if (threads > VKCU_POOL_MAX_THREADS)
        threads = VKCU_POOL_MAX_THREADS;
    if (threads <= 1)
        return NULL;
    pthread_once(&thread_pool_once, thread_pool_init);
    vkcu_pool *p = pthread_getspecific(thread_pool_key);
    if (p && p->threads == threads)
        return p;
    vkcu_pool_destroy(&p);
    p = vkcu_pool_create(threads);
    pthread_setspecific(thread_pool_key, p);
    return p;
}

void vkcu_pool_thread_release(void)
{
    pthread_once(&thread_pool_once, thread_pool_init);
    vkcu_pool *p = pthread_getspecific(thread_pool_key);
    pthread_setspecific(thread_pool_key, NULL);
    vkcu_pool_destroy(&p);
}
