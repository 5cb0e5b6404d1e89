/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The task-queue pool of batch runs and manifest runs (jobs.h). */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <libavutil/error.h>

#include "jobs.h"
#include "thread.h"

typedef struct jobs_worker {
    vkcu_jobs *pool;
    int index;
} jobs_worker;

struct vkcu_jobs {
    vkcu_jobs_work_fn work;
    void *opaque;
    pthread_t *threads;
    jobs_worker *workers;
    int started;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int running;             /* workers not yet ended */
    unsigned events, seen;   /* items finished and workers ended; those the waiter has seen */
};

static void *jobs_main(void *arg)
{
    jobs_worker *w = arg;
    vkcu_jobs *j = w->pool;
    int more;
    do {
        more = j->work(j->opaque, w->index);
        pthread_mutex_lock(&j->lock);
        j->events++;
        if (!more)
            j->running--;
        pthread_cond_broadcast(&j->changed);
        pthread_mutex_unlock(&j->lock);
    } while (more);
    return NULL;
}

static void jobs_free(vkcu_jobs *j)
{
    pthread_cond_destroy(&j->changed);
    pthread_mutex_destroy(&j->lock);
    free(j->threads);
    free(j->workers);
    free(j);
}

int vkcu_jobs_start(vkcu_jobs **jobs, const vkcu_jobs_params *params)
{
    *jobs = NULL;
    if (!params || params->workers < 1 || !params->work)
        return AVERROR(EINVAL);
    int n = params->workers;
    vkcu_jobs *j = calloc(1, sizeof(*j));
    if (!j)
        return AVERROR(ENOMEM);
    j->threads = calloc((size_t)n, sizeof(*j->threads));
    j->workers = calloc((size_t)n, sizeof(*j->workers));
    pthread_mutex_init(&j->lock, NULL);
    pthread_cond_init(&j->changed, NULL);
    if (!j->threads || !j->workers) {
        jobs_free(j);
        return AVERROR(ENOMEM);
    }
    j->work = params->work;
    j->opaque = params->opaque;
    int (*create)(pthread_t *, void *(*)(void *), void *) =
        params->thread_create ? params->thread_create : vkcu_thread_create;
    /* Counted before each start: a worker that ends at once finds it set. */
    for (int w = 0; w < n; w++) {
        j->workers[w] = (jobs_worker){ j, w };
        pthread_mutex_lock(&j->lock);
        j->running++;
        pthread_mutex_unlock(&j->lock);
        if (create(&j->threads[w], jobs_main, &j->workers[w]) != 0) {
            pthread_mutex_lock(&j->lock);
            j->running--;
            pthread_mutex_unlock(&j->lock);
            break;
        }
        j->started++;
    }
    if (!j->started) {
        jobs_free(j);
        return AVERROR(EAGAIN);
    }
    *jobs = j;
    return j->started;
}

int vkcu_jobs_wait(vkcu_jobs *j, double seconds)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long long ns = ts.tv_nsec + (long long)(seconds * 1e9);
    ts.tv_sec += (time_t)(ns / 1000000000LL);
    ts.tv_nsec = (long)(ns % 1000000000LL);
    pthread_mutex_lock(&j->lock);
    int timed_out = 0;
    while (j->running > 0 && j->events == j->seen && !timed_out)
        timed_out = pthread_cond_timedwait(&j->changed, &j->lock, &ts) == ETIMEDOUT;
    j->seen = j->events;
    int ended = j->running == 0;
    pthread_mutex_unlock(&j->lock);
    return ended;
}

void vkcu_jobs_join(vkcu_jobs **jobs)
{
    vkcu_jobs *j = jobs ? *jobs : NULL;
    if (!j)
        return;
    for (int w = 0; w < j->started; w++)
        pthread_join(j->threads[w], NULL);
    jobs_free(j);
    *jobs = NULL;
}
