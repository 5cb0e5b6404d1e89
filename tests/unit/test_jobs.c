/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The task-queue pool (util/jobs.h) behind batch runs and manifest runs:
 * - every item is done exactly once with 1, 2 and 16 workers, each by a
 *   worker whose index is in range, and every worker is told "no more"
 *   exactly once;
 * - when thread starts fail part way, the workers that started still do
 *   every item; when the first start fails, nothing runs and the start
 *   says EAGAIN;
 * - waiting with a timeout returns 0 while workers run and 1 once all
 *   ended; join leaves no thread behind (LSan checks the memory under
 *   `make test-asan`).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "test_util.h"
#include "util/jobs.h"
#include <libavutil/error.h>

#define ITEMS 5000
#define MAX_WORKERS 16

typedef struct run {
    pthread_mutex_t lock;
    int next, n;
    atomic_int done[ITEMS];
    atomic_int by_worker[MAX_WORKERS];
    atomic_int ended[MAX_WORKERS]; /* the 0s each worker got */
    atomic_int bad_index;
    int workers;
    atomic_int hold; /* while set, workers spin before taking an item */
} run;

static int take_item(void *opaque, int worker)
{
    run *r = opaque;
    if (worker < 0 || worker >= r->workers) {
        atomic_fetch_add(&r->bad_index, 1);
        return 0;
    }
    while (atomic_load(&r->hold)) {
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    pthread_mutex_lock(&r->lock);
    if (r->next >= r->n) {
        pthread_mutex_unlock(&r->lock);
        atomic_fetch_add(&r->ended[worker], 1);
        return 0;
    }
    int k = r->next++;
    pthread_mutex_unlock(&r->lock);
    atomic_fetch_add(&r->done[k], 1);
    atomic_fetch_add(&r->by_worker[worker], 1);
    return 1;
}

static void run_init(run *r, int workers, int n)
{
    memset(r, 0, sizeof(*r));
    pthread_mutex_init(&r->lock, NULL);
    r->workers = workers;
    r->n = n;
}

/* Every item exactly once and every worker ended once; the number of items
 * done twice or never, and of workers that did not end exactly once. */
static int items_wrong(run *r)
{
    int wrong = 0;
    for (int k = 0; k < r->n; k++)
        wrong += atomic_load(&r->done[k]) != 1;
    for (int w = 0; w < r->workers; w++)
        wrong += atomic_load(&r->ended[w]) != 1;
    return wrong;
}

/* Thread creation that fails from the fail_from-th call on. */
static atomic_int creates, fail_from;
static int failing_create(pthread_t *t, void *(*start)(void *), void *arg)
{
    if (atomic_fetch_add(&creates, 1) >= atomic_load(&fail_from))
        return EAGAIN;
    return pthread_create(t, NULL, start, arg);
}

static void check_counts(void)
{
    static const int counts[] = { 1, 2, MAX_WORKERS };
    int threads_before = tu_proc_count("task");
    for (int c = 0; c < 3; c++) {
        int n = counts[c];
        static run r;
        run_init(&r, n, ITEMS);
        /* Hold the workers until all have started, so that each takes a share. */
        atomic_store(&r.hold, 1);
        vkcu_jobs *j = NULL;
        vkcu_jobs_params jp = { .workers = n, .work = take_item, .opaque = &r };
        int started = vkcu_jobs_start(&j, &jp);
        CHECK(started == n && j, "%d workers: %d started", n, started);
        if (!j)
            continue;
        CHECK(vkcu_jobs_wait(j, 0.01) == 0, "%d workers: the wait says done while they are held", n);
        atomic_store(&r.hold, 0);
        while (!vkcu_jobs_wait(j, 0.25))
            ;
        CHECK(r.next == ITEMS, "%d workers: %d of %d items taken once all ended", n, r.next, ITEMS);
        vkcu_jobs_join(&j);
        CHECK(!j, "%d workers: join clears the pointer", n);
        int wrong = items_wrong(&r), total = 0;
        for (int w = 0; w < n; w++)
            total += atomic_load(&r.by_worker[w]);
        CHECK(!wrong && total == ITEMS, "%d workers: %d items or workers not done exactly once, %d done", n, wrong, total);
        CHECK(!atomic_load(&r.bad_index), "%d workers: %d calls with a worker index out of range", n,
              atomic_load(&r.bad_index));
        pthread_mutex_destroy(&r.lock);
    }
    int threads_after = tu_proc_count("task");
    CHECK(threads_before == threads_after, "threads before %d, after join %d", threads_before, threads_after);
}

static void check_start_failures(void)
{
    /* 16 asked for, the 4th start fails: 3 workers do everything. */
    static run r;
    run_init(&r, 3, ITEMS);
    atomic_store(&creates, 0);
    atomic_store(&fail_from, 3);
    vkcu_jobs *j = NULL;
    vkcu_jobs_params jp = { .workers = MAX_WORKERS, .work = take_item, .opaque = &r, .thread_create = failing_create };
    int started = vkcu_jobs_start(&j, &jp);
    CHECK(started == 3 && j, "a start that fails at the 4th thread: %d started, expected 3", started);
    vkcu_jobs_join(&j); /* join waits for the work to end */
    int wrong = items_wrong(&r);
    CHECK(!wrong && r.next == ITEMS, "3 of 16 started: %d items or workers not done exactly once", wrong);
    CHECK(!atomic_load(&r.bad_index), "3 of 16 started: a worker index past the started ones");
    pthread_mutex_destroy(&r.lock);

    /* No thread starts: nothing runs, EAGAIN, no pool. */
    run_init(&r, MAX_WORKERS, ITEMS);
    atomic_store(&creates, 0);
    atomic_store(&fail_from, 0);
    jp.opaque = &r;
    started = vkcu_jobs_start(&j, &jp);
    CHECK(started == AVERROR(EAGAIN) && !j, "no thread starts: %d, expected AVERROR(EAGAIN) and no pool", started);
    CHECK(r.next == 0, "no thread starts: %d items ran", r.next);
    pthread_mutex_destroy(&r.lock);

    jp.workers = 0;
    CHECK(vkcu_jobs_start(&j, &jp) == AVERROR(EINVAL) && !j, "0 workers is refused");
    vkcu_jobs_join(&j); /* NULL is fine */
    vkcu_jobs_join(NULL);
}

int main(void)
{
    check_counts();
    check_start_failures();
    if (tu_pin_one_cpu() == 0)
        check_counts();
    else
        CHECK(0, "cannot pin to one CPU");
    if (tu_failures)
        return 1;
    printf("jobs: every item once with 1, 2 and 16 workers (all CPUs and one), start failures, join\n");
    return 0;
}
