/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Frames that stay in CUDA device memory (a reader's frames on the GPU
 * backend, include/vkcu/reader.h): no host copy anywhere.
 *
 * The pool. A session with cfg.cuda_pool = N has the chain's output written
 * (the planar kernel of exit_devpool.c, the one device copy a frame takes) into
 * one of N linear pitched buffers of this pool, and pop() hands the buffer
 * over inside the AVFrame. Buffers are made as they are first needed and
 * come back when the frame's last reference goes, from whatever thread the
 * consumer drops it on; with all N out, the handoff thread waits, and so the
 * decoder: that is the back-pressure a slow consumer puts on the decoder.
 *
 * Ordering. A buffer may come back while the consumer's kernels that read
 * it are still queued on the consumer's own stream (a tensor is freed as
 * soon as Python drops it). vkcu_frame_cuda_release_after records an event
 * on that stream and makes the session's stream wait for it, so the next
 * write into any buffer of the pool runs after that work. Once the session
 * is gone (the reader closed with frames still held), a returning buffer is
 * freed instead, after the consumer's stream has finished with it.
 *
 * Copies of their own (vkcu_frame_cuda_copy, a reader's detach) are
 * allocated stream-ordered (cudaMallocAsync) and freed the same way on a
 * per-device release stream that first waits for the consumer's streams.
 *
 * The consumer's threads are not ours: every CUDA call made on them saves
 * the thread's current device and puts it back (PyTorch keeps its own).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <libavutil/buffer.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>

#include "session_priv.h"

#define MARK_MAGIC 0x766b6344u /* "vkcD" */

enum { KIND_POOL = 1, KIND_OWN = 2 };

/* What a frame's opaque_ref says about its planes. */
typedef struct cuda_mark {
    uint32_t magic;
    int device;
    int kind;
} cuda_mark;

typedef struct devbuf {
    struct vkcu_devpool *pool;
    uint8_t *ptr;
} devbuf;

struct vkcu_devpool {
    pthread_mutex_t lock;
    pthread_cond_t back;   /* a buffer came back */
    int device;
    cudaStream_t stream;   /* the session's; NULL once closed */
    cudaEvent_t consumer;  /* recorded on a consumer's stream, waited on by `stream` */
    size_t size;
    int count, made, nfree, closed;
    devbuf **free;
};

/* A copy of its own: freed on the release stream of its device. */
typedef struct ownbuf {
    int device;
    uint8_t *ptr;
} ownbuf;

int vkcu_cuda_enter(int device)
{
    int old = -1;
    if (cudaGetDevice(&old) != cudaSuccess)
        old = -1;
    if (old != device)
        cudaSetDevice(device);
    return old;
}

void vkcu_cuda_leave(int old, int device)
{
    if (old >= 0 && old != device)
        cudaSetDevice(old);
}

static cudaStream_t consumer_stream(int64_t stream)
{
    if (stream == 2)
        return cudaStreamPerThread;
    if (stream <= 1)
        return cudaStreamLegacy;
    return (cudaStream_t)(intptr_t)stream;
}

/* One release stream and event per device for copies of their own, made
 * at first use and kept for the process (a stream is a driver object, not
 * memory a leak checker sees). */
#define MAX_DEVICES 64
static pthread_mutex_t release_lock = PTHREAD_MUTEX_INITIALIZER;
static cudaStream_t release_stream[MAX_DEVICES];
static cudaEvent_t release_event[MAX_DEVICES];

/* Call with release_lock held and `device` current. */
static int release_stream_get(int device)
{
    if (device < 0 || device >= MAX_DEVICES)
        return -1;
    if (!release_stream[device]) {
        if (cudaStreamCreateWithFlags(&release_stream[device], cudaStreamNonBlocking) != cudaSuccess) {
            release_stream[device] = NULL;
            return -1;
        }
        if (cudaEventCreateWithFlags(&release_event[device], cudaEventDisableTiming) != cudaSuccess) {
            cudaStreamDestroy(release_stream[device]);
            release_stream[device] = NULL;
            return -1;
        }
    }
    return 0;
}

int vkcu_devpool_create(int device, cudaStream_t stream, size_t size, int count, vkcu_devpool **out, char *err,
                        size_t errlen)
{
    int ret = 0;
    vkcu_devpool *p = calloc(1, sizeof(*p));
    *out = NULL;
    if (!p || !(p->free = calloc((size_t)count, sizeof(*p->free)))) {
        free(p);
        snprintf(err, errlen, "out of memory");
        return AVERROR(ENOMEM);
    }
    p->device = device;
    p->stream = stream;
    p->size = size;
    p->count = count;
    CU_CHECK(cudaEventCreateWithFlags(&p->consumer, cudaEventDisableTiming));
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->back, NULL);
    *out = p;
    return 0;
fail:
    free(p->free);
    free(p);
    return ret;
}

static void pool_free(vkcu_devpool *p)
{
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->back);
    free(p->free);
    free(p);
}

/* A buffer's last reference went (any thread). */
static void devbuf_back(void *opaque, uint8_t *data)
{
    devbuf *b = opaque;
    vkcu_devpool *p = b->pool;
    (void)data;
    pthread_mutex_lock(&p->lock);
    if (!p->closed) {
        p->free[p->nfree++] = b;
        pthread_cond_signal(&p->back);
        pthread_mutex_unlock(&p->lock);
        return;
    }
    int last = --p->made == 0;
    pthread_mutex_unlock(&p->lock);
    int old = vkcu_cuda_enter(p->device);
    cudaFree(b->ptr);
    vkcu_cuda_leave(old, p->device);
    free(b);
    if (last)
        pool_free(p);
}

AVBufferRef *vkcu_devpool_get(vkcu_devpool *p, int timeout_ms, int *failed)
{
    devbuf *b = NULL;
    int make = 0;
    *failed = 0;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&p->lock);
    while (!p->nfree && p->made >= p->count)
        if (pthread_cond_timedwait(&p->back, &p->lock, &until) == ETIMEDOUT)
            break;
    if (p->nfree)
        b = p->free[--p->nfree];
    else if (p->made < p->count)
        make = ++p->made;
    pthread_mutex_unlock(&p->lock);
    if (make) {
        /* On the session's thread: its device is current. */
        if (!(b = calloc(1, sizeof(*b))) || cudaMalloc((void **)&b->ptr, p->size) != cudaSuccess) {
            free(b);
            pthread_mutex_lock(&p->lock);
            p->made--;
            pthread_mutex_unlock(&p->lock);
            *failed = 1;
            return NULL;
        }
        b->pool = p;
    }
    if (!b)
        return NULL;
    AVBufferRef *ref = av_buffer_create(b->ptr, p->size, devbuf_back, b, 0);
    if (!ref) {
        devbuf_back(b, b->ptr);
        *failed = 1;
    }
    return ref;
}

static int mark(AVFrame *frame, int device, int kind)
{
    AVBufferRef *m = av_buffer_allocz(sizeof(cuda_mark));
    if (!m)
        return AVERROR(ENOMEM);
    cuda_mark *cm = (cuda_mark *)m->data;
    cm->magic = MARK_MAGIC;
    cm->device = device;
    cm->kind = kind;
    av_buffer_unref(&frame->opaque_ref);
    frame->opaque_ref = m;
    return 0;
}

int vkcu_devpool_mark(vkcu_devpool *p, AVFrame *frame)
{
    return mark(frame, p->device, KIND_POOL);
}

void vkcu_devpool_close(vkcu_devpool **pp)
{
    vkcu_devpool *p = *pp;
    if (!p)
        return;
    *pp = NULL;
    pthread_mutex_lock(&p->lock);
    p->closed = 1;
    p->stream = NULL;
    /* The free ones now (the session's thread: its device is current), the
     * rest as they come back. */
    for (int i = 0; i < p->nfree; i++) {
        cudaFree(p->free[i]->ptr);
        free(p->free[i]);
    }
    p->made -= p->nfree;
    p->nfree = 0;
    cudaEventDestroy(p->consumer);
    int last = p->made == 0;
    pthread_mutex_unlock(&p->lock);
    if (last)
        pool_free(p);
}

static const cuda_mark *mark_get(const AVFrame *frame)
{
    if (!frame->opaque_ref || frame->opaque_ref->size != sizeof(cuda_mark) || !frame->buf[0])
        return NULL;
    const cuda_mark *m = (const cuda_mark *)frame->opaque_ref->data;
    return m->magic == MARK_MAGIC ? m : NULL;
}

int vkcu_frame_cuda_device(const AVFrame *frame)
{
    const cuda_mark *m = mark_get(frame);
    return m ? m->device : -1;
}

void vkcu_frame_cuda_release_after(const AVFrame *frame, int64_t stream)
{
    const cuda_mark *m = mark_get(frame);
    if (!m)
        return;
    cudaStream_t cs = consumer_stream(stream);
    int old = vkcu_cuda_enter(m->device);
    if (m->kind == KIND_POOL) {
        devbuf *b = av_buffer_get_opaque(frame->buf[0]);
        vkcu_devpool *p = b->pool;
        pthread_mutex_lock(&p->lock);
        if (p->closed) {
            /* The buffer will be freed: let the consumer's work finish first. */
            pthread_mutex_unlock(&p->lock);
            cudaStreamSynchronize(cs);
        } else {
            if (cudaEventRecord(p->consumer, cs) == cudaSuccess)
                cudaStreamWaitEvent(p->stream, p->consumer, 0);
            else
                cudaStreamSynchronize(cs);
            pthread_mutex_unlock(&p->lock);
        }
    } else {
        pthread_mutex_lock(&release_lock);
        if (release_stream_get(m->device) == 0 && cudaEventRecord(release_event[m->device], cs) == cudaSuccess)
            cudaStreamWaitEvent(release_stream[m->device], release_event[m->device], 0);
        else
            cudaStreamSynchronize(cs);
        pthread_mutex_unlock(&release_lock);
    }
    vkcu_cuda_leave(old, m->device);
}

static void ownbuf_free(void *opaque, uint8_t *data)
{
    ownbuf *o = opaque;
    (void)data;
    int old = vkcu_cuda_enter(o->device);
    pthread_mutex_lock(&release_lock);
    if (release_stream_get(o->device) == 0)
        cudaFreeAsync(o->ptr, release_stream[o->device]);
    else
        cudaFree(o->ptr);
    pthread_mutex_unlock(&release_lock);
    vkcu_cuda_leave(old, o->device);
    free(o);
}

int vkcu_frame_cuda_copy(const AVFrame *src, AVFrame **copy, char *err, size_t errlen)
{
    int ret = 0;
    const cuda_mark *m = mark_get(src);
    ownbuf *o = NULL;
    AVFrame *dst = NULL;
    *copy = NULL;
    if (!m) {
        snprintf(err, errlen, "internal: not a CUDA frame");
        return AVERROR_BUG;
    }
    int old = vkcu_cuda_enter(m->device);
    size_t size = src->buf[0]->size;
    if (!(o = calloc(1, sizeof(*o))) || !(dst = av_frame_alloc())) {
        snprintf(err, errlen, "out of memory");
        ret = AVERROR(ENOMEM);
        goto fail;
    }
    o->device = m->device;
    CU_CHECK(cudaMallocAsync((void **)&o->ptr, size, cudaStreamPerThread));
    CU_CHECK(cudaMemcpyAsync(o->ptr, src->buf[0]->data, size, cudaMemcpyDeviceToDevice, cudaStreamPerThread));
    CU_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
    if (!(dst->buf[0] = av_buffer_create(o->ptr, size, ownbuf_free, o, 0))) {
        snprintf(err, errlen, "out of memory");
        ret = AVERROR(ENOMEM);
        goto fail;
    }
    o = NULL; /* the buffer's now */
    if ((ret = av_frame_copy_props(dst, src)) < 0 || (ret = mark(dst, m->device, KIND_OWN)) < 0) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    dst->format = src->format;
    dst->width = src->width;
    dst->height = src->height;
    for (int p = 0; p < 4; p++) {
        dst->linesize[p] = src->linesize[p];
        dst->data[p] = src->data[p] ? dst->buf[0]->data + (src->data[p] - src->buf[0]->data) : NULL;
    }
    vkcu_cuda_leave(old, m->device);
    *copy = dst;
    return 0;
fail:
    if (o) {
        if (o->ptr)
            cudaFreeAsync(o->ptr, cudaStreamPerThread);
        free(o);
    }
    av_frame_free(&dst);
    vkcu_cuda_leave(old, m->device);
    return ret;
}

int vkcu_frame_cuda_download(const AVFrame *src, AVFrame **host, int64_t *bytes, char *err, size_t errlen)
{
    int ret = 0;
    const cuda_mark *m = mark_get(src);
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(src->format);
    AVFrame *dst = NULL;
    *host = NULL;
    if (!m || !d) {
        snprintf(err, errlen, "internal: not a CUDA frame");
        return AVERROR_BUG;
    }
    if (!(dst = av_frame_alloc())) {
        snprintf(err, errlen, "out of memory");
        return AVERROR(ENOMEM);
    }
    dst->format = src->format;
    dst->width = src->width;
    dst->height = src->height;
    if ((ret = av_frame_get_buffer(dst, 0)) < 0 || (ret = av_frame_copy_props(dst, src)) < 0) {
        snprintf(err, errlen, "out of memory");
        av_frame_free(&dst);
        return ret;
    }
    av_buffer_unref(&dst->opaque_ref); /* the copy's memory is the host's, whatever the source's mark said */
    int old = vkcu_cuda_enter(m->device);
    int64_t moved = 0;
    for (int p = 0; p < 4 && src->data[p]; p++) {
        int h = (p == 1 || p == 2) ? AV_CEIL_RSHIFT(src->height, d->log2_chroma_h) : src->height;
        int row = av_image_get_linesize(src->format, src->width, p);
        CU_CHECK(cudaMemcpy2DAsync(dst->data[p], dst->linesize[p], src->data[p], src->linesize[p], row, h,
                                   cudaMemcpyDeviceToHost, cudaStreamPerThread));
        moved += (int64_t)row * h;
    }
    CU_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
    vkcu_cuda_leave(old, m->device);
    if (bytes)
        *bytes += moved;
    *host = dst;
    return 0;
fail:
    vkcu_cuda_leave(old, m->device);
    av_frame_free(&dst);
    return ret;
}

int vkcu_frame_cuda_upload(const AVFrame *src, int device, AVFrame **out, char *err, size_t errlen)
{
    int ret = 0;
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(src->format);
    ownbuf *o = NULL;
    AVFrame *dst = NULL;
    size_t offset[4] = { 0 }, size = 0;
    int rows[4] = { 0 }, linesize[4] = { 0 };
    *out = NULL;
    if (!d || mark_get(src) || (d->flags & AV_PIX_FMT_FLAG_HWACCEL)) {
        snprintf(err, errlen, "internal: not a host frame of a software format");
        return AVERROR_BUG;
    }
    /* The planes one after the other, rows 256 bytes apart as cudaMallocPitch would. */
    for (int p = 0; p < 4 && src->data[p]; p++) {
        rows[p] = (p == 1 || p == 2) ? AV_CEIL_RSHIFT(src->height, d->log2_chroma_h) : src->height;
        linesize[p] = FFALIGN(av_image_get_linesize(src->format, src->width, p), 256);
        offset[p] = size;
        size += (size_t)linesize[p] * rows[p];
    }
    int old = vkcu_cuda_enter(device);
    if (!(o = calloc(1, sizeof(*o))) || !(dst = av_frame_alloc())) {
        snprintf(err, errlen, "out of memory");
        ret = AVERROR(ENOMEM);
        goto fail;
    }
    o->device = device;
    CU_CHECK(cudaMalloc((void **)&o->ptr, size ? size : 1));
    for (int p = 0; p < 4 && src->data[p]; p++)
        CU_CHECK(cudaMemcpy2D(o->ptr + offset[p], linesize[p], src->data[p], src->linesize[p],
                              av_image_get_linesize(src->format, src->width, p), rows[p], cudaMemcpyHostToDevice));
    if (!(dst->buf[0] = av_buffer_create(o->ptr, size, ownbuf_free, o, 0))) {
        snprintf(err, errlen, "out of memory");
        ret = AVERROR(ENOMEM);
        goto fail;
    }
    o = NULL; /* the buffer's now */
    if ((ret = av_frame_copy_props(dst, src)) < 0 || (ret = mark(dst, device, KIND_OWN)) < 0) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    dst->format = src->format;
    dst->width = src->width;
    dst->height = src->height;
    for (int p = 0; p < 4 && src->data[p]; p++) {
        dst->data[p] = dst->buf[0]->data + offset[p];
        dst->linesize[p] = linesize[p];
    }
    vkcu_cuda_leave(old, device);
    *out = dst;
    return 0;
fail:
    if (o) {
        cudaFree(o->ptr);
        free(o);
    }
    av_frame_free(&dst);
    vkcu_cuda_leave(old, device);
    return ret;
}
