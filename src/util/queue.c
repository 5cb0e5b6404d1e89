/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The bounded FIFO (queue.h): a ring of capacity items under one lock, one
 * condition for "not full" (producers) and one for "not empty" (consumers);
 * close and abort broadcast both so that no waiter sleeps past the end.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/queue.h"

struct vkcu_queue {
    pthread_mutex_t lock;
    pthread_cond_t not_full, not_empty;
    int capacity, head, count, in_service;
    int closed, aborted;
    size_t item_size;
    unsigned char *items;
};

vkcu_queue *vkcu_queue_create(int capacity, size_t item_size)
{
    if (capacity < 1 || !item_size || (size_t)capacity > SIZE_MAX / item_size)
        return NULL;
    vkcu_queue *q = calloc(1, sizeof(*q));
    if (!q)
        return NULL;
    q->items = calloc((size_t)capacity, item_size);
    if (!q->items) {
        free(q);
        return NULL;
    }
    q->capacity = capacity;
    q->item_size = item_size;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->not_full, NULL);
    pthread_cond_init(&q->not_empty, NULL);
    return q;
}

void vkcu_queue_free(vkcu_queue **pq, void (*free_item)(void *item))
{
    vkcu_queue *q = pq ? *pq : NULL;
    if (!q)
        return;
    for (int i = 0; free_item && i < q->count; i++)
        free_item(q->items + (size_t)((q->head + i) % q->capacity) * q->item_size);
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->not_full);
    pthread_cond_destroy(&q->not_empty);
    free(q->items);
    free(q);
    *pq = NULL;
}

int vkcu_queue_push(vkcu_queue *q, const void *item)
{
    pthread_mutex_lock(&q->lock);
    while (q->count == q->capacity && !q->closed && !q->aborted)
        pthread_cond_wait(&q->not_full, &q->lock);
    int ret = q->aborted ? -ECANCELED : q->closed ? -EPIPE : 0;
    if (!ret) {
        memcpy(q->items + (size_t)((q->head + q->count) % q->capacity) * q->item_size, item, q->item_size);
        q->count++;
        pthread_cond_signal(&q->not_empty);
    }
    pthread_mutex_unlock(&q->lock);
    return ret;
}

int vkcu_queue_pop(vkcu_queue *q, void *item, int flags)
{
    pthread_mutex_lock(&q->lock);
    while (!q->count && !q->closed && !q->aborted && (flags & VKCU_QUEUE_WAIT))
        pthread_cond_wait(&q->not_empty, &q->lock);
    int ret = q->aborted ? -ECANCELED : q->count ? 0 : q->closed ? -EPIPE : -EAGAIN;
    if (!ret) {
        unsigned char *src = q->items + (size_t)q->head * q->item_size;
        memcpy(item, src, q->item_size);
        memset(src, 0, q->item_size);
        q->head = (q->head + 1) % q->capacity;
        q->count--;
        if (flags & VKCU_QUEUE_SERVICE)
            q->in_service++;
        pthread_cond_signal(&q->not_full);
    }
    pthread_mutex_unlock(&q->lock);
    return ret;
}

void vkcu_queue_done(vkcu_queue *q)
{
    pthread_mutex_lock(&q->lock);
    if (q->in_service > 0)
        q->in_service--;
    pthread_mutex_unlock(&q->lock);
}

void vkcu_queue_close(vkcu_queue *q)
{
    pthread_mutex_lock(&q->lock);
    q->closed = 1;
    pthread_cond_broadcast(&q->not_full);
    pthread_cond_broadcast(&q->not_empty);
    pthread_mutex_unlock(&q->lock);
}

void vkcu_queue_abort(vkcu_queue *q)
{
    pthread_mutex_lock(&q->lock);
    q->aborted = 1;
    pthread_cond_broadcast(&q->not_full);
    pthread_cond_broadcast(&q->not_empty);
    pthread_mutex_unlock(&q->lock);
}

int vkcu_queue_count(vkcu_queue *q)
{
    pthread_mutex_lock(&q->lock);
    int n = q->count + q->in_service;
    pthread_mutex_unlock(&q->lock);
    return n;
}

int vkcu_queue_idle(vkcu_queue *q)
{
    return vkcu_queue_count(q) == 0;
}
