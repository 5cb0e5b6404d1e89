/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The frame source of a media input to compare: a job (vkcu_job_run,
 * either backend) on its own thread whose frames arrive through the callback
 * sink into a small queue, so that the frames compared are the frames
 * `vkcu hash` hashes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "compare_priv.h"
#include "util/log.h"
#include "util/queue.h"

static int source_on_open(void *opaque, const vkcu_stream_info *info)
{
    frame_source *s = opaque;
    pthread_mutex_lock(&s->lock);
    s->tb = (AVRational){ info->tb_num, info->tb_den };
    s->frame_rate = (AVRational){ info->fps_num, info->fps_den };
    s->start = info->start;
    s->opened = 1;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

static int source_on_frame(void *opaque, const AVFrame *f)
{
    frame_source *s = opaque;
    AVFrame *ref = av_frame_clone(f);
    if (!ref)
        return AVERROR(ENOMEM);
    if (vkcu_queue_push(s->frames, &ref) < 0) { /* the comparison stopped (vkcu_frame_source_close) */
        av_frame_free(&ref);
        return AVERROR_EXIT;
    }
    return 0;
}

static void *source_main(void *arg)
{
    frame_source *s = arg;
    int ret = vkcu_job_run(&s->p, &s->r);
    pthread_mutex_lock(&s->lock);
    s->ret = ret;
    s->done = 1;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    vkcu_queue_close(s->frames);
    return NULL;
}

static void frame_item_free(void *item)
{
    av_frame_free((AVFrame **)item);
}

void vkcu_frame_source_close(frame_source **ps)
{
    frame_source *s = *ps;
    if (!s)
        return;
    if (s->started) {
        vkcu_queue_abort(s->frames); /* the job's next frame ends it */
        pthread_join(s->thread, NULL);
    }
    vkcu_queue_free(&s->frames, frame_item_free);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->cond);
    av_freep(ps);
}

/* Starts the job and waits for its stream description (first frame) or its error. */
int vkcu_frame_source_open(const vkcu_job_params *p, const char *path, frame_source **out, char *err, size_t errlen)
{
    frame_source *s = av_mallocz(sizeof(*s));
    if (!s)
        return AVERROR(ENOMEM);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
    s->frames = vkcu_queue_create(VKCU_SOURCE_QUEUE, sizeof(AVFrame *));
    if (!s->frames) {
        vkcu_frame_source_close(&s);
        return AVERROR(ENOMEM);
    }
    s->p = *p;
    s->p.job.input = path;
    s->p.job.sink = VKCU_SINK_CALLBACK;
    s->p.job.on_open = source_on_open;
    s->p.on_frame = source_on_frame;
    s->p.job.callback_opaque = s;
    s->p.progress = 0;
    s->path = path;
    s->err = err;
    s->errlen = errlen;
    if (vkcu_thread_create(&s->thread, source_main, s)) {
        snprintf(err, errlen, "%s: cannot start a decoding thread", path);
        vkcu_frame_source_close(&s);
        return AVERROR(EAGAIN);
    }
    s->started = 1;
    pthread_mutex_lock(&s->lock);
    while (!s->opened && !s->done)
        pthread_cond_wait(&s->cond, &s->lock);
    int ret = s->opened ? 0 : s->ret < 0 ? s->ret : VKCU_ERR_INPUT;
    pthread_mutex_unlock(&s->lock);
    if (ret < 0) {
        snprintf(err, errlen, "%s", s->r.error[0] ? s->r.error : "no frames could be decoded");
        vkcu_frame_source_close(&s);
        return ret;
    }
    *out = s;
    return 0;
}

/* 0 with *frame (the caller's), AVERROR_EOF after the last one, or an error. */
int vkcu_frame_source_next(frame_source *s, AVFrame **frame)
{
    if (vkcu_queue_pop(s->frames, frame, VKCU_QUEUE_WAIT) == 0)
        return 0;
    /* Closed and empty: the job has ended. */
    pthread_mutex_lock(&s->lock);
    int ret = s->ret;
    pthread_mutex_unlock(&s->lock);
    if (ret < 0) {
        snprintf(s->err, s->errlen, "%s", s->r.error);
        return ret;
    }
    return AVERROR_EOF;
}
