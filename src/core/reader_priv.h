/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The reader's own header (include/vkcu/reader.h is the public one), shared
 * by the files that implement it:
 *   reader.c       the reader, its frames and their pool, iteration (a job
 *                  on a thread of its own with the callback sink, feeding a
 *                  bounded queue)
 *   reader_seek.c  random access: the frame index, and a demuxer, decoder,
 *                  chain and GPU session of its own, kept between calls
 *   dlpack.c       frames as DLPack tensors
 */
#ifndef VKCU_READER_PRIV_H
#define VKCU_READER_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <libavutil/buffer.h>
#include <libavutil/frame.h>

#include "timing.h"
#include "util/log.h"
#include "util/queue.h"
#include "vkcu.h"

/* Frames decoded ahead of the caller by iteration (the queue's capacity). */
#define READER_AHEAD 4

/* What outlives the reader: the count of frames held (frames may be
 * released after vkcu_reader_close) and the counters frames update. */
typedef struct reader_acct {
    pthread_mutex_t lock;
    int refs;               /* the reader's, and one per frame that points here */
    int held, max_seen;
    int64_t detached;
} reader_acct;

/* The layout frames are handed out in: the planar twin of the frame's
 * layout (NV12 -> yuv420p ...), rows 64-byte aligned, one buffer. */
typedef struct reader_layout {
    enum AVPixelFormat src_fmt, fmt;
    int width, height, nb_planes;
    int linesize[4], rows[4], row_bytes[4];
    size_t offset[4], size;
} reader_layout;

/* Host buffers of one layout, reused. */
typedef struct reader_hostpool {
    reader_layout layout;
    AVBufferPool *pool;
} reader_hostpool;

struct vkcu_frame_priv {
    vkcu_frame pub;         /* what the caller sees; pub.priv points back here */
    _Atomic int refs;
    AVFrame *av;            /* owns the memory: a pool buffer (host or CUDA) or a copy's own */
    reader_acct *acct;      /* set while the frame is held by the caller; NULL: not counted */
};

typedef struct reader_seek reader_seek;

struct vkcu_reader {
    vkcu_context *ctx;
    vkcu_reader_params p;   /* strings point to the copies below */
    char *input, *chain;
    int chain_per_frame;    /* every operator of the chain is per_frame (ops/op.h) */
    pthread_mutex_t lock;   /* one public call at a time */
    reader_acct *acct;
    vkcu_reader_info info;
    AVRational tb;
    /* iteration: a job on its own thread, frames through `queue` */
    pthread_t thread;
    int started, finished;  /* the thread was started; the end was taken from the queue */
    vkcu_queue *queue;      /* iter_item */
    _Atomic int stopping;
    int end_ret;            /* the job's result, set before the end is queued */
    char end_err[512];
    /* the iteration thread's own */
    reader_hostpool iter_pool;
    vkcu_frame_sync sync;
    int sync_on;
    AVRational out_tb;
    int64_t emitted;
    /* counters (lock) */
    vkcu_reader_stats st;
    vkcu_reader_stats iter_totals; /* GPU counters of finished iterations */
    reader_seek *seek;
};

/* reader.c */
/* reader_frame.c */
/* The count of a reader's held frames, which outlives the reader while its
 * frames do (the last frame frees it); was_held: the frame was counted. */
reader_acct *vkcu_reader_acct_new(void);
void vkcu_reader_acct_unref(reader_acct *a, int was_held);
/* A frame for the caller made from a frame of a job (host frames are copied
 * into hp's pool, or into a buffer of their own with the reader's detach;
 * CUDA frames are referenced, or copied with detach). Not yet held. */
int vkcu_reader_frame_make(vkcu_reader *r, reader_hostpool *hp, const AVFrame *src, int64_t index, AVRational tb,
                           vkcu_frame **out, char *err, size_t errlen);
/* The caller now holds f (counted against max_held unless detached). */
void vkcu_reader_hand_out(vkcu_reader *r, vkcu_frame *f);
/* Frames the caller holds now. */
int vkcu_reader_held(vkcu_reader *r);
/* Logs a failing call's line at VKCU_LOG_ERROR and copies it into err. */
int vkcu_reader_fail(int ret, char *err, size_t errlen, const char *line);
void vkcu_reader_hostpool_free(reader_hostpool *hp);
/* Adds a job's GPU counters (imports, copies, bytes each way: the result's
 * that vkcu_gpu_stats fills) to a reader's. */
void vkcu_reader_gpu_add(vkcu_reader_stats *to, const vkcu_job_result *from);

/* reader_seek.c (called with the reader's lock held) */
int vkcu_reader_seek_frame_count(vkcu_reader *r, int64_t *count, char *err, size_t errlen);
int vkcu_reader_seek_frames(vkcu_reader *r, const int64_t *indices, int count, vkcu_frame **frames, char *err,
                            size_t errlen);
int vkcu_reader_seek_at_time(vkcu_reader *r, double seconds, int64_t *index, char *err, size_t errlen);
int vkcu_reader_seek_in_time(vkcu_reader *r, double start_seconds, double stop_seconds, int64_t *first,
                             int64_t *count, char *err, size_t errlen);
/* Adds random access's counters to s. */
void vkcu_reader_seek_stats(vkcu_reader *r, vkcu_reader_stats *s);
void vkcu_reader_seek_close(reader_seek **s);

#endif
