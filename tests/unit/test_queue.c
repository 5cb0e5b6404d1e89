/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The bounded queue (util/queue.h) that carries frames between threads
 * (the GPU handoff thread's input, compare's decoding threads):
 * - FIFO order, one producer and one consumer, and every producer's own
 *   order kept with 4 producers and 3 consumers;
 * - a producer blocks when the queue is full and goes on when room is made;
 * - close ends a waiting consumer after what is left; abort wakes a blocked
 *   producer and a waiting consumer; what is left is freed once;
 * - an item in service keeps the queue from being idle until done.
 * All of it again pinned to one CPU (as `taskset -c 0`).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "test_util.h"
#include "util/queue.h"

typedef struct item {
    int producer, seq;
} item;

typedef struct thread_arg {
    vkcu_queue *q;
    int producer, n;
    atomic_int pushed;  /* pushes that returned */
    int ret;            /* the last push/pop result */
    int popped, bad_order, last[8];
    long long sum;
} thread_arg;

static void nap(void)
{
    struct timespec ts = { 0, 2000000 };
    nanosleep(&ts, NULL);
}

/* Waits for *v to reach want; returns the value seen. The bound (~60 s)
 * only keeps a broken queue from hanging the test: the wait ends on the
 * value, so a loaded machine waits longer and passes the same. */
static int await(atomic_int *v, int want)
{
    for (int i = 0; i < 30000 && atomic_load(v) < want; i++)
        nap();
    return atomic_load(v);
}

static void *producer_main(void *a)
{
    thread_arg *t = a;
    for (int i = 0; i < t->n; i++) {
        item it = { t->producer, i };
        t->ret = vkcu_queue_push(t->q, &it);
        if (t->ret < 0)
            break;
        atomic_fetch_add(&t->pushed, 1);
    }
    return NULL;
}

static void *consumer_main(void *a)
{
    thread_arg *t = a;
    for (int p = 0; p < 8; p++)
        t->last[p] = -1;
    for (;;) {
        item it;
        t->ret = vkcu_queue_pop(t->q, &it, VKCU_QUEUE_WAIT);
        if (t->ret < 0)
            break;
        if (it.producer < 0 || it.producer >= 8 || it.seq <= t->last[it.producer])
            t->bad_order++;
        else
            t->last[it.producer] = it.seq;
        t->sum += it.seq;
        t->popped++;
    }
    return NULL;
}

static void check_order(void)
{
    vkcu_queue *q = vkcu_queue_create(5, sizeof(item));
    thread_arg p = { .q = q, .producer = 0, .n = 1000 }, c = { .q = q };
    pthread_t tp, tc;
    pthread_create(&tc, NULL, consumer_main, &c);
    pthread_create(&tp, NULL, producer_main, &p);
    pthread_join(tp, NULL);
    vkcu_queue_close(q);
    pthread_join(tc, NULL);
    CHECK(c.popped == 1000 && !c.bad_order && c.sum == 999LL * 1000 / 2,
          "one to one: %d popped, %d out of order", c.popped, c.bad_order);
    CHECK(c.ret == -EPIPE, "a consumer after close: %d, expected -EPIPE", c.ret);
    vkcu_queue_free(&q, NULL);

    /* 4 producers, 3 consumers: nothing lost, each producer's order kept by each consumer. */
    q = vkcu_queue_create(3, sizeof(item));
    thread_arg ps[4], cs[3];
    pthread_t tps[4], tcs[3];
    for (int i = 0; i < 3; i++) {
        cs[i] = (thread_arg){ .q = q };
        pthread_create(&tcs[i], NULL, consumer_main, &cs[i]);
    }
    for (int i = 0; i < 4; i++) {
        ps[i] = (thread_arg){ .q = q, .producer = i, .n = 3000 };
        pthread_create(&tps[i], NULL, producer_main, &ps[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(tps[i], NULL);
    vkcu_queue_close(q);
    int popped = 0, bad = 0;
    long long sum = 0;
    for (int i = 0; i < 3; i++) {
        pthread_join(tcs[i], NULL);
        popped += cs[i].popped;
        bad += cs[i].bad_order;
        sum += cs[i].sum;
    }
    CHECK(popped == 12000 && !bad && sum == 4 * (2999LL * 3000 / 2), "4 to 3: %d popped, %d out of order", popped, bad);
    vkcu_queue_free(&q, NULL);
}

static int freed;
static void free_item(void *it)
{
    (void)it;
    freed++;
}

static void check_blocking_and_ends(void)
{
    /* Full: the producer stops at the capacity and goes on after a pop. */
    vkcu_queue *q = vkcu_queue_create(4, sizeof(item));
    thread_arg p = { .q = q, .n = 6 };
    pthread_t tp;
    pthread_create(&tp, NULL, producer_main, &p);
    CHECK(await(&p.pushed, 4) == 4, "producer pushed %d before the queue was full", atomic_load(&p.pushed));
    for (int i = 0; i < 25; i++)
        nap();
    CHECK(atomic_load(&p.pushed) == 4, "a full queue of 4 took %d items", atomic_load(&p.pushed));
    CHECK(vkcu_queue_count(q) == 4, "count %d, expected 4", vkcu_queue_count(q));
    item it;
    CHECK(vkcu_queue_pop(q, &it, 0) == 0 && it.seq == 0, "pop of the first item");
    CHECK(await(&p.pushed, 5) == 5, "after one pop the producer pushed %d, expected 5", atomic_load(&p.pushed));
    /* Abort wakes the producer blocked on the sixth item. */
    vkcu_queue_abort(q);
    pthread_join(tp, NULL);
    CHECK(p.ret == -ECANCELED && atomic_load(&p.pushed) == 5, "blocked producer after abort: %d (%d pushed)", p.ret,
          atomic_load(&p.pushed));
    CHECK(vkcu_queue_pop(q, &it, VKCU_QUEUE_WAIT) == -ECANCELED, "pop after abort");
    CHECK(vkcu_queue_push(q, &it) == -ECANCELED, "push after abort");
    freed = 0;
    vkcu_queue_free(&q, free_item);
    CHECK(freed == 4 && !q, "free after abort released %d items, expected 4", freed);

    /* Abort wakes a consumer waiting on an empty queue. */
    q = vkcu_queue_create(2, sizeof(item));
    thread_arg c = { .q = q };
    pthread_t tc;
    pthread_create(&tc, NULL, consumer_main, &c);
    for (int i = 0; i < 10; i++)
        nap();
    vkcu_queue_abort(q);
    pthread_join(tc, NULL);
    CHECK(c.ret == -ECANCELED && c.popped == 0, "waiting consumer after abort: %d", c.ret);
    vkcu_queue_free(&q, NULL);

    /* Close: what is left first, then -EPIPE; pushes refused. */
    q = vkcu_queue_create(3, sizeof(item));
    for (int i = 0; i < 2; i++)
        vkcu_queue_push(q, &(item){ 0, i });
    vkcu_queue_close(q);
    CHECK(vkcu_queue_push(q, &(item){ 0, 9 }) == -EPIPE, "push after close");
    CHECK(vkcu_queue_pop(q, &it, VKCU_QUEUE_WAIT) == 0 && it.seq == 0, "first left after close");
    CHECK(vkcu_queue_pop(q, &it, VKCU_QUEUE_WAIT) == 0 && it.seq == 1, "second left after close");
    CHECK(vkcu_queue_pop(q, &it, VKCU_QUEUE_WAIT) == -EPIPE, "closed and empty");
    vkcu_queue_free(&q, NULL);

    /* Empty without waiting; in service until done. */
    q = vkcu_queue_create(2, sizeof(item));
    CHECK(vkcu_queue_pop(q, &it, 0) == -EAGAIN, "empty pop without waiting");
    CHECK(vkcu_queue_idle(q), "a new queue is idle");
    vkcu_queue_push(q, &(item){ 0, 1 });
    CHECK(!vkcu_queue_idle(q), "a queue with an item is not idle");
    CHECK(vkcu_queue_pop(q, &it, VKCU_QUEUE_SERVICE) == 0, "pop in service");
    CHECK(!vkcu_queue_idle(q) && vkcu_queue_count(q) == 1, "an item in service keeps the queue busy");
    vkcu_queue_done(q);
    CHECK(vkcu_queue_idle(q), "idle after done");
    vkcu_queue_free(&q, NULL);
}

int main(void)
{
    CHECK(!vkcu_queue_create(0, sizeof(item)), "a queue of 0 items");
    check_order();
    check_blocking_and_ends();
    if (tu_pin_one_cpu() == 0) {
        check_order();
        check_blocking_and_ends();
    } else {
        CHECK(0, "cannot pin to one CPU");
    }
    if (tu_failures)
        return 1;
    printf("queue: order, blocking, close and abort as expected (all CPUs and one)\n");
    return 0;
}
