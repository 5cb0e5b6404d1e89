/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The session's pending frames: the entries between the handoff thread,
 * which fills them (exit.c: vkcu_gpu_exit_frame) and publishes them at the
 * tail, and the job's thread, which takes them from the head (pop). One
 * lock, the session's; the counts say how much is in flight.
 */
#include <errno.h>
#include <stdio.h>
#include <libavutil/error.h>

#include "session_priv.h"

int vkcu_gpu_in_flight(const vkcu_gpu *g)
{
    return vkcu_queue_count(g->inq) + (int)(g->pend_tail - g->pend_head);
}

int vkcu_gpu_pending(const vkcu_gpu *g)
{
    vkcu_gpu *m = (vkcu_gpu *)g;
    pthread_mutex_lock(&m->lock);
    int n = vkcu_gpu_in_flight(g);
    pthread_mutex_unlock(&m->lock);
    return n;
}

int vkcu_gpu_full(const vkcu_gpu *g)
{
    return vkcu_gpu_pending(g) >= g->nb_slots;
}

/* Waits for room in the output queue: an operator that multiplies frames
 * (fps, one frame per field) can give more outputs for one input than the
 * queue holds. The caller pops while the queue is full, so the wait ends;
 * closing the session ends it too. */
int vkcu_gpu_reserve_pending(vkcu_gpu *g, char *err, size_t errlen)
{
    pthread_mutex_lock(&g->lock);
    while (g->pend_tail - g->pend_head >= MAX_PENDING - 1 && !g->quit && !g->werr)
        pthread_cond_wait(&g->cond, &g->lock);
    int stop = g->pend_tail - g->pend_head >= MAX_PENDING - 1;
    pthread_mutex_unlock(&g->lock);
    if (stop) {
        snprintf(err, errlen, "GPU session closed with output pending");
        return AVERROR_EXIT;
    }
    return 0;
}

pending_frame *vkcu_gpu_pending_next(vkcu_gpu *g)
{
    int i = (int)(g->pend_tail % MAX_PENDING);
    pending_frame *pf = &g->pending[i];
    pf->ev_start = g->events[i][0];
    pf->ev_ops = g->events[i][1];
    pf->ev_end = g->events[i][2];
    pf->vk_timed = 0;
    return pf;
}

void vkcu_gpu_pending_publish(vkcu_gpu *g)
{
    pthread_mutex_lock(&g->lock);
    g->pend_tail++;
    if (vkcu_gpu_in_flight(g) > g->max_in_flight)
        g->max_in_flight = vkcu_gpu_in_flight(g);
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
}

int vkcu_gpu_pending_wait(vkcu_gpu *g, int wait, pending_frame **out, char *err, size_t errlen)
{
    pthread_mutex_lock(&g->lock);
    while (g->pend_tail == g->pend_head) {
        if (g->werr) {
            int ret = g->werr;
            snprintf(err, errlen, "%s", g->werrmsg);
            pthread_mutex_unlock(&g->lock);
            return ret;
        }
        if (!wait || vkcu_queue_idle(g->inq)) {
            pthread_mutex_unlock(&g->lock);
            return AVERROR(EAGAIN);
        }
        pthread_cond_wait(&g->cond, &g->lock);
    }
    *out = &g->pending[g->pend_head % MAX_PENDING];
    pthread_mutex_unlock(&g->lock);
    return 0;
}

void vkcu_gpu_pending_done(vkcu_gpu *g)
{
    pthread_mutex_lock(&g->lock);
    g->pend_head++;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
}
