/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One stream on several software decoders at once, the same frames as one
 * decoder from the start (decode.h: vkcu_decoder_open_parallel).
 *
 * The packets, in decoding order, are cut into segments at the access units
 * segment.c finds (H.264 IDR; HEVC IDR, BLA and CRA), once a segment holds
 * at least min_packets. Each segment is decoded by a fresh decoder on a
 * worker thread, its first packet preceded by the parameter sets the stream
 * carried before it; the workers' frames wait in their segment's queue and
 * the caller takes them segment after segment, so every frame comes out in
 * the order, with the timestamps, that one decoder gives:
 *   - a CRA's RASL pictures refer to the segment before: that segment's
 *     decoder also decodes the CRA and its leading pictures and keeps only
 *     the RASL ones (by pts); the next segment's decoder drops them itself;
 *   - a packet without a pts ends the cuts (a frame drained at a segment's
 *     end would be timed from no packet), unless no packet has a timestamp
 *     (raw streams: the caller times every frame);
 *   - damage (a refused packet, a decode error, a concealed picture) in any
 *     segment but the first could be concealed from the pictures before it:
 *     when the caller reaches it, the workers stop and one decoder takes
 *     over from the previous segment's start, its frames up to the damage
 *     (which the caller already has) dropped: the rest of the stream is
 *     decoded in sequence (a "redo", counted in the statistics line).
 * The frames waiting behind the first segment are bounded in bytes; a
 * worker waits while the bound is reached, the first segment's never does.
 * The caller's side is libavcodec's: send returns EAGAIN when the reading
 * is too far ahead, receive EAGAIN while a frame needs more packets.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <limits.h>
#include <libavutil/imgutils.h>
#include <libavutil/mem.h>
#include <libavutil/pixdesc.h>

#include "gpu/vkdev.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/thread.h"
#include "decode.h"
#include "segment.h"

#define HEAD_QUEUE_MAX 8      /* frames the segment being taken runs ahead */
#define UNFED_MAX 1024        /* packets read ahead of the last segment's decoder */

typedef struct par_event {
    AVFrame *frame;           /* a picture; NULL: an error or a refused packet */
    int err;                  /* the decoder's error (frame NULL, rejected 0) */
    int rejected;             /* a packet the decoder refused as invalid */
    int64_t pos, pts;         /* the refused packet's */
    AVRational framerate;     /* the decoder's, as it gave the frame */
    int64_t bytes;
} par_event;

typedef struct par_seg {
    int64_t index;
    AVPacket **pkts;          /* own packets, then (a CRA follows) the CRA and its leading pictures */
    int64_t npk, pkroom, nown, fed;
    AVPacket *orig0;          /* the first packet without the parameter sets put before it */
    int closed, assigned, finished;
    int64_t *drop;            /* pts of frames of the extra packets not to keep (the CRA, RADL) */
    int64_t ndrop, droproom;
    par_event *ev;
    int64_t nev, evroom, evhead;
    int64_t kept;             /* frames the caller took */
    int64_t held, held_peak;  /* bytes of its frames waiting now, and at most */
    struct par_seg *next;
} par_seg;

/* Frame buffers shared by the segments' decoders, as libavcodec's own pool
 * lays them out (get_buffer.c): a fresh decoder per segment would otherwise
 * allocate (and zero) every buffer of every frame it holds anew. */
typedef struct par_pool {
    enum AVPixelFormat format;
    int width, height;
    int linesize[4];
    AVBufferPool *pools[4];
} par_pool;

#define POOLS_MAX 4

struct vkcu_par {
    const vkcu_demux *demux;
    /* On the GPU: the job's Vulkan device (the redo's decoder decodes on
     * it), and the CUDA device whose shared Vulkan device gives each worker
     * a decode lane of its own (gpu/vkdev.h: vkcu_vkdev_acquire). NULL: in
     * software. */
    AVBufferRef *hw;
    int cuda_device;
    _Atomic int64_t *waiting; /* the process's bytes waiting, host or GPU memory */
    pthread_mutex_t pool_lock;
    par_pool pool[POOLS_MAX]; /* the latest formats, the oldest replaced */
    int npool;
    vkcu_nal_reader nal;
    vkcu_param_sets ps;
    int n;
    int64_t min_packets, budget;
    /* The bytes the pieces behind the first may hold now: doubled when the
     * caller must wait for a frame of a piece still decoding (it has read as
     * far ahead as it may: decoding is what it waits for), one frame less for each frame it takes while that piece's
     * decoder is held back by the caller's pace (the caller is slower than
     * one decoder: frames decoded ahead would only wait). So a slow sink
     * keeps memory flat, a fast one gets every decoder, up to the budget. */
    int64_t allow, last_frame_bytes;
    pthread_t *threads;
    int nthreads;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stop;
    par_seg *head, *tail, *extending, *prev;
    int64_t live, max_live, nseg;
    int draining, cuts_off, send_blocked;
    /* Cuts at HEVC CRA and BLA pictures: a decoder started at one makes up
     * the pictures its reference picture set names from before (H.265
     * 8.3.3), and FFmpeg's Vulkan decoder (8.1) hands those to the GPU as
     * reference slots it never decoded (Vulkan's validation layer:
     * VUID-vkCmdBeginVideoCodingKHR-slotIndex-07239), after which the
     * driver has decoded a few pictures wrong (docs/performance.md, "The
     * race under a small budget, found"). In software the made-up pictures
     * are grey and never used. So on the GPU, IDR pictures only;
     * VKCU_GPU_CUT_OPEN=1 cuts there too (measurements). */
    int open_cuts;
    int ts_kind;              /* the first packet's: 1 a pts, 2 no timestamp at all, 3 a dts alone */
    int64_t bytes, frames, peak_bytes, peak_frames;
    AVRational framerate;
    /* after a redo: one decoder, in sequence */
    vkcu_decoder *seq;
    AVPacket **seqq;
    int64_t nseqq, seqroom, seqpos, seq_skip, rejected_base;
    int seq_mode, seq_drained;
    int64_t redos;
    /* The workers' time, seconds (under the lock): opening decoders,
     * decoding (the decoder's calls), waiting for room to queue a frame. */
    double t_open, t_decode, t_room;
    /* Of t_decode: in avcodec_send_packet, in avcodec_receive_frame, in
     * get_buffer2 (Vulkan frames), and how many frames were allocated. */
    double t_send, t_receive, t_get_buffer;
    int64_t get_buffers;
    double t_caller;          /* the caller's waits for the first segment's frames */
    int64_t opens;
};

static void mapped_free(void *opaque, uint8_t *data)
{
    munmap(data, (size_t)(uintptr_t)opaque);
}

/* A zeroed frame buffer mapped with its pages in place: the frames waiting
 * behind the first segment are hundreds of megabytes, each page touched
 * first by the decoder, and one fault a page costs (in a virtual machine
 * most of all) more than the second decoder saves. One call maps them all. */
static AVBufferRef *mapped_alloc(size_t size)
{
    if (size < ((size_t)64 << 10))
        return av_buffer_allocz(size);
    void *data = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (data == MAP_FAILED)
        return NULL;
    AVBufferRef *buf = av_buffer_create(data, size, mapped_free, (void *)(uintptr_t)size, 0);
    if (!buf)
        munmap(data, size);
    return buf;
}

static void pool_uninit(par_pool *pl)
{
    for (int i = 0; i < 4; i++)
        av_buffer_pool_uninit(&pl->pools[i]);
    memset(pl, 0, sizeof(*pl));
}

static int pool_init(par_pool *pl, AVCodecContext *avctx, const AVFrame *f)
{
    int w = f->width, h = f->height, align[AV_NUM_DATA_POINTERS], unaligned;
    ptrdiff_t ls[4];
    size_t size[4];
    avcodec_align_dimensions2(avctx, &w, &h, align);
    do {
        if (av_image_fill_linesizes(pl->linesize, avctx->pix_fmt, w) < 0)
            return AVERROR(EINVAL);
        w += w & ~(w - 1);
        unaligned = 0;
        for (int i = 0; i < 4; i++)
            unaligned |= pl->linesize[i] % align[i];
    } while (unaligned);
    for (int i = 0; i < 4; i++)
        ls[i] = pl->linesize[i];
    if (av_image_fill_plane_sizes(size, avctx->pix_fmt, h, ls) < 0)
        return AVERROR(EINVAL);
    for (int i = 0; i < 4; i++) {
        if (!size[i])
            continue;
        if (size[i] > INT_MAX - 128 || !(pl->pools[i] = av_buffer_pool_init(size[i] + 16 + 64 - 1, mapped_alloc))) {
            pool_uninit(pl);
            return AVERROR(ENOMEM);
        }
    }
    pl->format = avctx->pix_fmt;
    pl->width = f->width;
    pl->height = f->height;
    return 0;
}

static int par_get_buffer(AVCodecContext *avctx, AVFrame *f, int flags)
{
    vkcu_par *p = avctx->opaque;
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(avctx->pix_fmt);
    if (avctx->hw_frames_ctx || f->format != avctx->pix_fmt || !d || (d->flags & AV_PIX_FMT_FLAG_PAL))
        return avcodec_default_get_buffer2(avctx, f, flags);
    pthread_mutex_lock(&p->pool_lock);
    par_pool *pl = NULL;
    for (int i = 0; i < p->npool && !pl; i++)
        if (p->pool[i].format == f->format && p->pool[i].width == f->width && p->pool[i].height == f->height)
            pl = &p->pool[i];
    if (!pl) {
        if (p->npool == POOLS_MAX) {
            pool_uninit(&p->pool[0]);
            memmove(&p->pool[0], &p->pool[1], sizeof(p->pool[0]) * (POOLS_MAX - 1));
            memset(&p->pool[POOLS_MAX - 1], 0, sizeof(p->pool[0]));
            p->npool--;
        }
        pl = &p->pool[p->npool];
        if (pool_init(pl, avctx, f) < 0) {
            pthread_mutex_unlock(&p->pool_lock);
            return avcodec_default_get_buffer2(avctx, f, flags);
        }
        p->npool++;
    }
    int ret = 0;
    for (int i = 0; i < 4; i++) {
        f->linesize[i] = pl->pools[i] ? pl->linesize[i] : 0;
        if (pl->pools[i] && !(f->buf[i] = av_buffer_pool_get(pl->pools[i])))
            ret = AVERROR(ENOMEM);
        f->data[i] = f->buf[i] ? f->buf[i]->data : NULL;
    }
    pthread_mutex_unlock(&p->pool_lock);
    f->extended_data = f->data;
    if (ret < 0)
        av_frame_unref(f);
    return ret;
}

static void seg_free(par_seg *s)
{
    if (!s)
        return;
    for (int64_t i = 0; i < s->npk; i++)
        av_packet_free(&s->pkts[i]);
    free(s->pkts);
    av_packet_free(&s->orig0);
    free(s->drop);
    for (int64_t i = s->evhead; i < s->nev; i++)
        av_frame_free(&s->ev[i].frame);
    free(s->ev);
    av_free(s);
}

static int64_t frame_bytes(const AVFrame *f)
{
    if (f->hw_frames_ctx) { /* its images, in GPU memory */
        const AVHWFramesContext *fc = (const AVHWFramesContext *)f->hw_frames_ctx->data;
        int size = av_image_get_buffer_size(fc->sw_format, f->width, f->height, 1);
        return size > 0 ? size : 0;
    }
    int64_t b = 0;
    for (int i = 0; i < AV_NUM_DATA_POINTERS && f->buf[i]; i++)
        b += (int64_t)f->buf[i]->size;
    return b;
}

/* The frames waiting behind first segments, in bytes, of every parallel
 * decoder of the process (a batch runs several), in host memory and in GPU
 * memory: the budget is the process's. The decoders live of each kind. */
static _Atomic int64_t waiting_bytes, waiting_gpu_bytes;
static _Atomic int live_decoders, live_gpu_decoders;

static int vkcu_par_live(int gpu)
{
    return atomic_load(gpu ? &live_gpu_decoders : &live_decoders);
}

/* Under the lock: whether the worker of s waits before queueing b bytes more. */
static int must_wait(const vkcu_par *p, const par_seg *s, int64_t b)
{
    if (p->stop)
        return 0;
    if (s == p->head)
        return s->nev - s->evhead >= HEAD_QUEUE_MAX;
    return s->nev > s->evhead && (p->bytes + b > p->allow || atomic_load(p->waiting) + b > p->budget);
}

static int push_event(vkcu_par *p, par_seg *s, par_event *e)
{
    int ret = 0;
    pthread_mutex_lock(&p->lock);
    double t0 = must_wait(p, s, e->bytes) ? vkcu_now() : 0;
    while (must_wait(p, s, e->bytes)) {
        if (s == p->head) {
            pthread_cond_wait(&p->cond, &p->lock);
        } else { /* bytes another decoder's caller frees wake no one here: look again */
            struct timespec t;
            clock_gettime(CLOCK_REALTIME, &t);
            t.tv_nsec += 20 * 1000000;
            if (t.tv_nsec >= 1000000000) {
                t.tv_sec++;
                t.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&p->cond, &p->lock, &t);
        }
    }
    if (t0 > 0)
        p->t_room += vkcu_now() - t0;
    if (p->stop || VKCU_ARRAY_GROW(s->ev, s->nev, s->evroom, 64) < 0) {
        ret = p->stop ? AVERROR_EXIT : AVERROR(ENOMEM);
        av_frame_free(&e->frame);
    } else {
        s->ev[s->nev++] = *e;
        s->held += e->bytes;
        s->held_peak = FFMAX(s->held_peak, s->held);
        p->bytes += e->bytes;
        atomic_fetch_add(p->waiting, e->bytes);
        p->frames += e->frame != NULL;
        p->peak_bytes = FFMAX(p->peak_bytes, p->bytes);
        p->peak_frames = FFMAX(p->peak_frames, p->frames);
        pthread_cond_broadcast(&p->cond);
    }
    pthread_mutex_unlock(&p->lock);
    return ret;
}

/* Sends pkt (NULL: drain) to the segment's decoder and queues what comes
 * out. <0 ends the segment (an error queued, or stop). */
static int feed(vkcu_par *p, par_seg *s, vkcu_decoder *dec, const AVPacket *pkt, double *t_send, double *t_receive)
{
    for (;;) {
        double t0 = vkcu_now();
        int ret = avcodec_send_packet(dec->avctx, pkt);
        *t_send += vkcu_now() - t0;
        if (ret == AVERROR_INVALIDDATA && pkt) {
            par_event e = { .rejected = 1, .pos = pkt->pos, .pts = pkt->pts };
            if ((ret = push_event(p, s, &e)) < 0)
                return ret;
        } else if (ret < 0 && ret != AVERROR(EAGAIN) && ret != AVERROR_EOF) {
            par_event e = { .err = VKCU_ERR_INPUT };
            push_event(p, s, &e);
            return VKCU_ERR_INPUT;
        }
        int again = ret == AVERROR(EAGAIN);
        for (;;) {
            AVFrame *f = av_frame_alloc();
            if (!f)
                return AVERROR(ENOMEM);
            double t1 = vkcu_now();
            int r = vkcu_decoder_receive(dec, f);
            *t_receive += vkcu_now() - t1;
            if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) {
                av_frame_free(&f);
                break;
            }
            par_event e = { .framerate = dec->avctx->framerate };
            if (r < 0) {
                av_frame_free(&f);
                e.err = r;
            } else {
                e.frame = f;
                e.bytes = frame_bytes(f);
            }
            int q = push_event(p, s, &e);
            if (q < 0)
                return q;
            if (r < 0 && r != AVERROR_INVALIDDATA)
                return r;
        }
        if (!again)
            return 0;
    }
}

/* lane_dev: the worker's decode lane on the GPU, NULL in software; lane
 * its stream number there (-1: none could be had, err says why); frames:
 * the worker's frames context, which its decoders share one after another
 * (vkcu_decoder_open_reuse), or NULL for a fresh one each segment.
 * Returns the most bytes of the segment's frames that waited at once. */
static int64_t decode_segment(vkcu_par *p, par_seg *s, AVBufferRef *lane_dev, int lane, const char *lane_err,
                              vkcu_frames_reuse *frames)
{
    vkcu_decoder *dec = NULL;
    char err[256];
    int ret;
    double t0 = vkcu_now();
    if (p->hw && !lane_dev) {
        LOGE("%s: segment %lld: no decode lane: %s", p->demux->path, (long long)s->index, lane_err);
        ret = VKCU_ERR_DEVICE;
    } else if (lane_dev) {
        ret = frames ? vkcu_decoder_open_reuse(p->demux, lane_dev, frames, &dec, err, sizeof(err))
                     : vkcu_decoder_open(p->demux, lane_dev, 1, &dec, err, sizeof(err));
        if (ret < 0)
            LOGE("%s", err);
        else if (s->index)
            LOGV("%s: segment %lld decodes on GPU stream %d", p->demux->path, (long long)s->index, lane);
    } else {
        ret = vkcu_decoder_open_pooled(p->demux, par_get_buffer, p, &dec, err, sizeof(err));
    }
    if (ret < 0) {
        par_event e = { .err = ret == AVERROR(ENOSYS) ? VKCU_ERR_DEVICE : ret };
        push_event(p, s, &e);
    }
    double t1 = vkcu_now();
    pthread_mutex_lock(&p->lock);
    p->t_open += t1 - t0;
    p->opens++;
    double room0 = p->t_room, t_send = 0, t_receive = 0;
    while (ret >= 0 && !p->stop) {
        if (s->fed < s->npk) {
            AVPacket *pkt = s->pkts[s->fed++];
            pthread_mutex_unlock(&p->lock);
            ret = feed(p, s, dec, pkt, &t_send, &t_receive);
            pthread_mutex_lock(&p->lock);
            pthread_cond_broadcast(&p->cond); /* the reader may wait for the packets to go */
        } else if (s->closed) {
            pthread_mutex_unlock(&p->lock);
            feed(p, s, dec, NULL, &t_send, &t_receive);
            pthread_mutex_lock(&p->lock);
            break;
        } else {
            pthread_cond_wait(&p->cond, &p->lock);
        }
    }
    s->finished = 1;
    int64_t held_peak = s->held_peak; /* s is the caller's to free once finished */
    /* decoding: the segment's time less what its pushes waited (this and
     * other workers' waits overlap; good enough for the figures at -v) */
    p->t_decode += FFMAX(vkcu_now() - t1 - (p->t_room - room0), 0);
    p->t_send += t_send;
    p->t_receive += t_receive;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    double tc = vkcu_now();
    vkcu_decoder_close(&dec);
    pthread_mutex_lock(&p->lock);
    p->t_open += vkcu_now() - tc;
    pthread_mutex_unlock(&p->lock);
    return held_peak;
}

static void *worker_main(void *arg)
{
    vkcu_par *p = arg;
    /* On the GPU, a decode lane for the worker's segments: the next of the
     * queues the process claimed, so the workers spread over the engines. */
    AVBufferRef *lane_dev = NULL;
    vkcu_frames_reuse frames = { 0 };
    /* A new frames context per segment would create and prepare every
     * image again (VKCU_DECODE_REUSE_FRAMES=0: so, for measurements). */
    const char *reuse = getenv("VKCU_DECODE_REUSE_FRAMES");
    int reuse_frames = !reuse || strcmp(reuse, "0") != 0;
    int lane = -1;
    char lane_err[256] = "";
    if (p->hw && vkcu_vkdev_acquire(p->cuda_device, -1, &lane_dev, &lane, lane_err, sizeof(lane_err)) < 0)
        lane_dev = NULL;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        par_seg *s = p->head;
        while (s && s->assigned)
            s = s->next;
        if (p->stop)
            break;
        if (!s) {
            pthread_cond_wait(&p->cond, &p->lock);
            continue;
        }
        s->assigned = 1;
        pthread_mutex_unlock(&p->lock);
        /* A pool keeps every image it ever made: one that grew past the
         * worker's share of the budget is let go (its images are freed as
         * their frames are taken), so n pools hold about the budget. */
        frames.t_get_buffer = 0;
        frames.get_buffers = 0;
        int64_t held = decode_segment(p, s, lane_dev, lane, lane_err, &frames);
        if (held > p->budget / p->n || !reuse_frames)
            av_buffer_unref(&frames.frames);
        pthread_mutex_lock(&p->lock);
        p->t_get_buffer += frames.t_get_buffer;
        p->get_buffers += frames.get_buffers;
        pthread_mutex_unlock(&p->lock);
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    av_buffer_unref(&frames.frames);
    av_buffer_unref(&lane_dev);
    return NULL;
}

static void stop_workers(vkcu_par *p)
{
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    p->nthreads = 0;
}

static int start_workers(vkcu_par *p)
{
    p->stop = 0;
    for (int i = 0; i < p->n; i++) {
        if (vkcu_thread_create(&p->threads[i], worker_main, p)) {
            stop_workers(p);
            return AVERROR(EAGAIN);
        }
        p->nthreads++;
    }
    return 0;
}

static void free_segments(vkcu_par *p)
{
    for (par_seg *s = p->head, *next; s; s = next) {
        next = s->next;
        seg_free(s);
    }
    seg_free(p->prev);
    p->head = p->tail = p->extending = p->prev = NULL;
    p->live = 0;
    atomic_fetch_sub(p->waiting, p->bytes);
    p->bytes = p->frames = 0;
}

static void free_seq(vkcu_par *p)
{
    for (int64_t i = p->seqpos; i < p->nseqq; i++)
        av_packet_free(&p->seqq[i]);
    free(p->seqq);
    p->seqq = NULL;
    p->nseqq = p->seqroom = p->seqpos = 0;
    vkcu_decoder_close(&p->seq);
    p->seq_mode = p->seq_drained = 0;
}

static void vkcu_par_log_stats(const vkcu_par *p, const char *path)
{
    LOGV("%s: parallel decode: %lld segment%s on %d %sdecoders, %lld redone in sequence after damage; at most %lld "
         "frames (%.1f MiB%s) waited behind the first segment", path, (long long)p->nseg, p->nseg == 1 ? "" : "s",
         p->n, p->hw ? "Vulkan " : "", (long long)p->redos, (long long)p->peak_frames, p->peak_bytes / 1048576.0,
         p->hw ? " of GPU memory" : "");
    LOGV("%s: parallel decode: the workers spent %.2f s decoding, %.2f s waiting for room to queue frames, %.2f s "
         "opening and closing %lld decoders", path, p->t_decode, p->t_room, p->t_open, (long long)p->opens);
    LOGV("%s: parallel decode: of the decoding, %.2f s sending packets, %.2f s receiving frames%s; the caller waited "
         "%.2f s for the first segment's frames", path, p->t_send, p->t_receive,
         p->get_buffers ? "" : " (no Vulkan frames allocated)", p->t_caller);
    if (p->get_buffers)
        LOGV("%s: parallel decode: %lld Vulkan frames taken in %.2f s (%.3f ms each)", path, (long long)p->get_buffers,
             p->t_get_buffer, 1e3 * p->t_get_buffer / (double)p->get_buffers);
}

static void vkcu_par_free(vkcu_par **pp)
{
    vkcu_par *p = *pp;
    if (!p)
        return;
    stop_workers(p);
    free_segments(p);
    free_seq(p);
    vkcu_param_sets_free(&p->ps);
    free(p->threads);
    for (int i = 0; i < p->npool; i++)
        pool_uninit(&p->pool[i]);
    pthread_mutex_destroy(&p->pool_lock);
    pthread_mutex_destroy(&p->lock);
    atomic_fetch_sub(p->hw ? &live_gpu_decoders : &live_decoders, 1);
    av_buffer_unref(&p->hw);
    pthread_cond_destroy(&p->cond);
    av_freep(pp);
}

static int vkcu_par_open(const vkcu_demux *d, AVBufferRef *hw, int cuda_device, int n, int64_t min_packets,
                         int64_t budget, vkcu_par **out, char *why, size_t whylen)
{
    vkcu_par *p = av_mallocz(sizeof(*p));
    *out = NULL;
    if (!p)
        return AVERROR(ENOMEM);
    if (!vkcu_nal_reader_init(&p->nal, d->video->codecpar, why, whylen)) {
        av_free(p);
        return 0;
    }
    p->demux = d;
    p->cuda_device = cuda_device;
    p->waiting = hw ? &waiting_gpu_bytes : &waiting_bytes;
    p->n = n;
    p->min_packets = min_packets > 0 ? min_packets : 1;
    p->budget = budget;
    p->max_live = n + 2;
    const char *open_env = getenv("VKCU_GPU_CUT_OPEN");
    p->open_cuts = !hw || (open_env && !strcmp(open_env, "1"));
    p->threads = calloc((size_t)n, sizeof(*p->threads));
    if (!p->threads || pthread_mutex_init(&p->lock, NULL)) {
        free(p->threads);
        av_free(p);
        return AVERROR(ENOMEM);
    }
    if (hw && !(p->hw = av_buffer_ref(hw))) {
        pthread_mutex_destroy(&p->lock);
        free(p->threads);
        av_free(p);
        return AVERROR(ENOMEM);
    }
    pthread_mutex_init(&p->pool_lock, NULL);
    atomic_fetch_add(p->hw ? &live_gpu_decoders : &live_decoders, 1);
    pthread_cond_init(&p->cond, NULL);
    int ret = start_workers(p);
    if (ret < 0) {
        vkcu_par_free(&p);
        return ret;
    }
    *out = p;
    return 1;
}

static int vkcu_par_flush(vkcu_par *p)
{
    stop_workers(p);
    free_segments(p);
    free_seq(p);
    /* The parameter sets stay, as a flushed decoder keeps them: the piece a
     * seek starts is handed them. Pieces after it count on from nseg, so a
     * damaged one is decoded again from its own start (it has no piece
     * before it), as one decoder flushed there would decode it. */
    p->draining = p->cuts_off = p->send_blocked = p->ts_kind = 0;
    return start_workers(p);
}

static int append_packet(par_seg *s, AVPacket *pkt)
{
    if (VKCU_ARRAY_GROW(s->pkts, s->npk, s->pkroom, 64) < 0)
        return AVERROR(ENOMEM);
    s->pkts[s->npk++] = pkt;
    return 0;
}

static int seq_append(vkcu_par *p, const AVPacket *pkt)
{
    AVPacket *c = av_packet_clone(pkt);
    if (!c || VKCU_ARRAY_GROW(p->seqq, p->nseqq, p->seqroom, 256) < 0) {
        av_packet_free(&c);
        return AVERROR(ENOMEM);
    }
    p->seqq[p->nseqq++] = c;
    return 0;
}

/* Under the lock: whether the caller may send another packet now. */
static int can_send(const vkcu_par *p)
{
    if (p->send_blocked && p->live >= p->max_live)
        return 0;
    return !p->tail || p->tail->npk - p->tail->fed < UNFED_MAX;
}

static int vkcu_par_send(vkcu_par *p, const AVPacket *pkt)
{
    if (p->seq_mode) {
        if (!pkt) {
            p->draining = 1;
            return 0;
        }
        return seq_append(p, pkt);
    }
    int ret = 0;
    enum vkcu_access_kind kind = pkt ? vkcu_access_kind(&p->nal, pkt->data, (size_t)pkt->size) : VKCU_AU_NONE;
    pthread_mutex_lock(&p->lock);
    if (!pkt) {
        p->draining = 1;
        if (p->extending)
            p->extending->closed = 1;
        if (p->tail)
            p->tail->closed = 1;
        p->extending = NULL;
        goto done;
    }
    /* Frames are timed from their own packet's pts, or (a raw stream) from
     * no packet at all: a stream that mixes the two, or has packets with a
     * dts alone, times a frame by the packet decoded when it comes out. */
    int ts = pkt->pts != AV_NOPTS_VALUE ? 1 : pkt->dts == AV_NOPTS_VALUE ? 2 : 3;
    if (!p->ts_kind)
        p->ts_kind = ts;
    if (ts != p->ts_kind || ts == 3)
        p->cuts_off = 1;
    int cut = !p->cuts_off && !p->ps.overflow && p->tail && p->tail->nown >= p->min_packets &&
              (kind == VKCU_AU_CLEAN || (kind == VKCU_AU_BLA && p->open_cuts) ||
               (kind == VKCU_AU_CRA && p->open_cuts && p->ts_kind == 1));
    if ((cut && p->live >= p->max_live) || !can_send(p)) {
        p->send_blocked |= cut;
        ret = AVERROR(EAGAIN);
        goto done;
    }
    AVPacket *c = av_packet_clone(pkt);
    if (!c) {
        ret = AVERROR(ENOMEM);
        goto done;
    }
    if (p->extending) {
        if (kind == VKCU_AU_RADL || kind == VKCU_AU_RASL || kind == VKCU_AU_NONE) {
            par_seg *e = p->extending;
            AVPacket *x = av_packet_clone(pkt);
            if (!x || append_packet(e, x) < 0 ||
                (kind != VKCU_AU_RASL && (VKCU_ARRAY_GROW(e->drop, e->ndrop, e->droproom, 16) < 0 ||
                                          !(e->drop[e->ndrop++] = pkt->pts, 1)))) {
                av_packet_free(&x);
                av_packet_free(&c);
                ret = AVERROR(ENOMEM);
                goto done;
            }
        } else {
            p->extending->closed = 1;
            p->extending = NULL;
        }
    }
    if (!cut && p->tail) {
        if ((ret = append_packet(p->tail, c)) < 0)
            av_packet_free(&c);
        else
            p->tail->nown++;
        goto added;
    }
    /* A new segment: the first, or a cut. */
    par_seg *s = av_mallocz(sizeof(*s));
    AVPacket *first = s && p->ps.count ? vkcu_param_sets_prefix(&p->ps, &p->nal, c) : NULL;
    if (!s || (p->ps.count && !first) || append_packet(s, first ? first : c) < 0) {
        av_packet_free(&first);
        av_packet_free(&c);
        av_free(s);
        ret = AVERROR(ENOMEM);
        goto done;
    }
    s->orig0 = first ? c : NULL;
    s->nown = 1;
    s->index = p->nseg++;
    if (p->tail) {
        if (kind == VKCU_AU_CRA) {
            /* The segment before decodes on through the CRA's leading pictures
             * for its RASL ones: it keeps no frame of the CRA itself. */
            AVPacket *x = av_packet_clone(pkt);
            par_seg *e = p->tail;
            if (!x || append_packet(e, x) < 0 || VKCU_ARRAY_GROW(e->drop, e->ndrop, e->droproom, 16) < 0) {
                av_packet_free(&x);
                ret = AVERROR(ENOMEM);
            } else {
                e->drop[e->ndrop++] = pkt->pts;
                p->extending = e;
            }
        } else {
            p->tail->closed = 1;
        }
        p->tail->next = s;
    } else {
        p->head = s;
    }
    p->tail = s;
    p->live++;
    p->send_blocked = 0;
    if (s->index)
        LOGV("%s: segment %lld from pts %lld (%s)", p->demux->path, (long long)s->index, (long long)pkt->pts,
             kind == VKCU_AU_CRA ? "CRA" : kind == VKCU_AU_BLA ? "BLA" : "IDR");
added:
    if (ret >= 0)
        ret = vkcu_param_sets_add(&p->ps, &p->nal, pkt->data, (size_t)pkt->size);
done:
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    return ret;
}

static int dropped(const par_seg *s, int64_t pts)
{
    for (int64_t i = 0; i < s->ndrop; i++)
        if (s->drop[i] == pts)
            return 1;
    return 0;
}

/* Damage in segment h (not the first), whose frames before it the caller
 * has: one decoder takes over from the previous segment's start. Called
 * with the lock held; the workers are stopped. */
static int start_redo(vkcu_par *p, par_seg *h)
{
    par_seg *prev = p->prev;
    pthread_mutex_unlock(&p->lock);
    stop_workers(p);
    pthread_mutex_lock(&p->lock);
    char err[256];
    int ret = vkcu_decoder_open(p->demux, p->hw, 1, &p->seq, err, sizeof(err));
    if (ret < 0) {
        LOGE("%s", err);
        return ret;
    }
    p->seq_skip = (prev ? prev->kept : 0) + h->kept;
    for (int64_t i = 0; prev && i < prev->nown && ret >= 0; i++)
        ret = seq_append(p, prev->pkts[i]);
    for (par_seg *s = h; s && ret >= 0; s = s->next)
        for (int64_t i = 0; i < s->nown && ret >= 0; i++)
            ret = seq_append(p, i == 0 && s->orig0 ? s->orig0 : s->pkts[i]);
    LOGV("%s: damage in segment %lld: decoding on in sequence from segment %lld", p->demux->path,
         (long long)h->index, (long long)(prev ? prev->index : h->index));
    free_segments(p); /* h and prev with them */
    p->seq_mode = 1;
    p->redos++;
    return ret;
}

static int seq_receive(vkcu_par *p, vkcu_decoder *parent, AVFrame *frame)
{
    char err[256];
    for (;;) {
        int r = vkcu_decoder_receive(p->seq, frame);
        if (r == 0) {
            if (p->seq_skip > 0) {
                p->seq_skip--;
                av_frame_unref(frame);
                continue;
            }
            p->framerate = p->seq->avctx->framerate;
            return 0;
        }
        if (r != AVERROR(EAGAIN))
            return r;
        if (p->seqpos < p->nseqq) {
            r = vkcu_decoder_send(p->seq, p->seqq[p->seqpos], 0, err, sizeof(err));
            parent->packets_rejected = p->rejected_base + p->seq->packets_rejected;
            if (r == AVERROR(EAGAIN))
                continue;
            av_packet_free(&p->seqq[p->seqpos++]);
            if (r < 0 && r != AVERROR_EOF) {
                LOGE("%s", err);
                return r;
            }
            continue;
        }
        if (p->draining && !p->seq_drained) {
            vkcu_decoder_send(p->seq, NULL, 0, err, sizeof(err));
            p->seq_drained = 1;
            continue;
        }
        return p->seq_drained ? AVERROR_EOF : AVERROR(EAGAIN);
    }
}

static int vkcu_par_receive(vkcu_par *p, vkcu_decoder *parent, AVFrame *frame)
{
    int ret;
    if (p->seq_mode)
        return seq_receive(p, parent, frame);
    pthread_mutex_lock(&p->lock);
    for (;;) {
        par_seg *h = p->head;
        if (!h) {
            ret = p->draining ? AVERROR_EOF : AVERROR(EAGAIN);
            break;
        }
        if (h->evhead < h->nev) {
            par_event *e = &h->ev[h->evhead];
            int damage = !e->frame || (e->frame->flags & AV_FRAME_FLAG_CORRUPT) || e->frame->decode_error_flags;
            if (damage && h->index > 0) {
                p->rejected_base = parent->packets_rejected;
                if ((ret = start_redo(p, h)) < 0)
                    break;
                pthread_mutex_unlock(&p->lock);
                return seq_receive(p, parent, frame);
            }
            h->evhead++;
            /* The caller is the slower: the piece's decoder is held at the
             * head's bound (a backlog it decoded before it was the head is
             * not the caller's pace: it is what the pieces are for). */
            int64_t queued = h->nev - h->evhead;
            if (!h->finished && queued >= HEAD_QUEUE_MAX - 1 && queued <= HEAD_QUEUE_MAX)
                p->allow = FFMAX(p->allow - e->bytes, 0);
            if (e->bytes)
                p->last_frame_bytes = e->bytes;
            p->bytes -= e->bytes;
            h->held -= e->bytes;
            atomic_fetch_sub(p->waiting, e->bytes);
            p->frames -= e->frame != NULL;
            pthread_cond_broadcast(&p->cond);
            p->framerate = e->framerate;
            if (e->frame) {
                if (h->ndrop && dropped(h, e->frame->pts)) {
                    av_frame_free(&e->frame);
                    continue;
                }
                h->kept++;
                av_frame_move_ref(frame, e->frame);
                av_frame_free(&e->frame);
                ret = 0;
                break;
            }
            if (e->rejected) {
                parent->packets_rejected++;
                LOGW("%s: corrupt packet at byte %lld skipped (use %s to stop)", p->demux->path, (long long)e->pos,
                     VKCU_SETTING_IS("strict", "1"));
                continue;
            }
            ret = e->err;
            break;
        }
        if (h->finished) {
            p->head = h->next;
            if (!p->head)
                p->tail = NULL;
            if (p->extending == h)
                p->extending = NULL;
            /* Kept for a redo of the next segment: its packets, no frames. */
            seg_free(p->prev);
            p->prev = h;
            p->live--;
            pthread_cond_broadcast(&p->cond);
            continue;
        }
        if (!p->draining && can_send(p)) {
            ret = AVERROR(EAGAIN);
            break;
        }
        if (h->closed || h->fed < h->npk) { /* waiting for a piece that decodes: decoding is the slower */
            p->allow = FFMIN(p->budget, FFMAX(p->allow * 2, p->last_frame_bytes * 2));
            pthread_cond_broadcast(&p->cond);
        }
        double tw = vkcu_now();
        pthread_cond_wait(&p->cond, &p->lock);
        p->t_caller += vkcu_now() - tw;
    }
    pthread_mutex_unlock(&p->lock);
    return ret;
}

static AVRational vkcu_par_framerate(const vkcu_par *p)
{
    return p->framerate;
}

/* What vkcu_decoder's calls do on a parallel decoder (decode.h). */
static void par_close(vkcu_par **pp, const char *path)
{
    if (*pp)
        vkcu_par_log_stats(*pp, path);
    vkcu_par_free(pp);
}

static const vkcu_par_class par_class = {
    .send = vkcu_par_send,
    .receive = vkcu_par_receive,
    .flush = vkcu_par_flush,
    .framerate = vkcu_par_framerate,
    .close = par_close,
};

int vkcu_decode_parallel_count(int setting, int share)
{
    if (setting == VKCU_DECODE_PARALLEL_AUTO) {
        /* The cores not taken by the parallel decoders already running in
         * this process (a batch's), or one share of them where the caller
         * says how many decodes run side by side (a compare's two inputs:
         * the first opened would otherwise take every core and the second
         * decode alone, the slower of the two setting the pace). */
        int n = FFMIN(vkcu_cpu_count(), 16) / FFMAX(1 + vkcu_par_live(0), share);
        return n >= 2 ? n : 0;
    }
    return setting >= 2 ? setting : 0;
}

int vkcu_decode_parallel_count_gpu(int setting, int share, int lanes)
{
    if (setting == VKCU_DECODE_PARALLEL_AUTO) {
        /* The decode queues this process claimed, shared as the cores are. */
        int n = lanes / FFMAX(1 + vkcu_par_live(1), share);
        return n >= 2 ? n : 0;
    }
    return setting >= 2 ? setting : 0;
}

int64_t vkcu_decode_segment_min(int64_t setting)
{
    const char *env = getenv("VKCU_DECODE_SEGMENT_MIN");
    if (env && *env)
        return FFMAX(atoll(env), 1);
    return setting > 0 ? setting : 48;
}

int64_t vkcu_decode_parallel_budget(void)
{
    const char *env = getenv("VKCU_DECODE_PARALLEL_MIB");
    if (env && *env)
        return FFMAX(atoll(env), 1) << 20;
    /* An eighth of the memory, at most 8 GiB (2700 1080p frames, 680 at
     * 4K), for all the parallel decoders of the process together. */
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    int64_t mem = pages > 0 && page > 0 ? (int64_t)pages * page : (int64_t)4 << 30;
    return FFMIN(mem / 8, (int64_t)8 << 30);
}

int64_t vkcu_decode_parallel_budget_gpu(int64_t gpu_memory)
{
    const char *env = getenv("VKCU_DECODE_PARALLEL_MIB");
    if (env && *env)
        return FFMAX(atoll(env), 1) << 20;
    /* A quarter of the GPU's memory, at most 32 GiB (2.6 GiB is 250 4K
     * frames of 8 bits: a GOP of x264's defaults), for all the parallel
     * decoders of the process together. */
    if (gpu_memory <= 0)
        gpu_memory = (int64_t)16 << 30;
    return FFMIN(gpu_memory / 4, (int64_t)32 << 30);
}

int vkcu_decoder_open_parallel(const vkcu_demux *d, AVBufferRef *hw, int cuda_device, int n, int64_t min_packets,
                               int64_t budget, vkcu_decoder **out, char *err, size_t errlen)
{
    int ret = vkcu_decoder_open(d, hw, 1, out, err, errlen);
    if (ret < 0 || n < 2)
        return ret;
    char why[256] = "";
    /* A pipe or a live input: pieces read ahead of the frames they give, and
     * a read that waits for the writer would hold back frames already
     * decoded (a batch's progress line stood at 0 frames on a half-written
     * FIFO). */
    if (d->fmt->pb && !(d->fmt->pb->seekable & AVIO_SEEKABLE_NORMAL)) {
        LOGV("%s: one decoder (a stream that is not seekable: pieces would read ahead of their frames)", d->path);
        return 0;
    }
    ret = vkcu_par_open(d, hw, cuda_device, n, min_packets, budget, &(*out)->par, why, sizeof(why));
    if (ret > 0)
        (*out)->par_cls = &par_class;
    if (ret < 0) {
        vkcu_decoder_close(out);
        snprintf(err, errlen, "%s: cannot start the parallel decoders", d->path);
        return ret;
    }
    if (ret == 0)
        LOGV("%s: one decoder (%s)", d->path, why);
    else
        LOGV("%s: up to %d %sdecoders in parallel, a segment from every cut after %lld packets%s", d->path, n,
             hw ? "Vulkan " : "", (long long)min_packets,
             hw && !(*out)->par->open_cuts && d->video->codecpar->codec_id == AV_CODEC_ID_HEVC
                 ? " (IDR pictures only: FFmpeg's Vulkan decoder started at a CRA or BLA picture refers to "
                   "pictures it never decoded)" : "");
    return 0;
}
