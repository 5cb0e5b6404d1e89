/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A bounded FIFO between threads: fixed-size items copied in and out, a
 * producer that blocks while it is full, a consumer that blocks while it is
 * empty, and two ways to end it:
 *   - close (the producer has no more items): pops return what is left,
 *     then -EPIPE; pushes fail with -EPIPE;
 *   - abort (either side stops): every push and pop fails with -ECANCELED
 *     at once, and every waiter wakes. What is left stays queued for
 *     vkcu_queue_free to release.
 * A consumer may take an item "in service" (VKCU_QUEUE_SERVICE) and mark it
 * finished with vkcu_queue_done, so that the owner can tell "nothing queued
 * and nothing being worked on" (vkcu_queue_idle) without a lock of its own.
 * Thread-safety: every call may be made from any thread, except
 * vkcu_queue_free, once nobody else uses the queue.
 */
#ifndef VKCU_UTIL_QUEUE_H
#define VKCU_UTIL_QUEUE_H

#include <stddef.h>

typedef struct vkcu_queue vkcu_queue;

/* capacity >= 1 items of item_size bytes; NULL when out of memory. */
vkcu_queue *vkcu_queue_create(int capacity, size_t item_size);
/* Releases the items still queued through free_item (may be NULL), then
 * the queue; NULL and *q == NULL are fine. */
void vkcu_queue_free(vkcu_queue **q, void (*free_item)(void *item));

/* 0 once *item is copied in (waiting while the queue is full), -EPIPE
 * after close, -ECANCELED after abort. */
int vkcu_queue_push(vkcu_queue *q, const void *item);

#define VKCU_QUEUE_WAIT 1    /* wait while the queue is empty (and open) */
#define VKCU_QUEUE_SERVICE 2 /* the item stays counted until vkcu_queue_done */
/* 0 with the oldest item copied to *item; -EAGAIN when empty and not
 * waiting; -EPIPE when closed and empty; -ECANCELED after abort. */
int vkcu_queue_pop(vkcu_queue *q, void *item, int flags);
/* An item popped with VKCU_QUEUE_SERVICE is finished. */
void vkcu_queue_done(vkcu_queue *q);

void vkcu_queue_close(vkcu_queue *q);
void vkcu_queue_abort(vkcu_queue *q);

/* Items queued plus items in service. */
int vkcu_queue_count(vkcu_queue *q);
/* Nothing queued and nothing in service. */
int vkcu_queue_idle(vkcu_queue *q);

#endif
