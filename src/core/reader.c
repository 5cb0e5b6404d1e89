/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Readers (include/vkcu/reader.h): frames pulled by the caller instead of
 * pushed into a callback.
 *
 * Iteration runs the one job runner there is (pipeline.c, vkcu_job_run) on
 * a thread of the reader's with the callback sink, so that a reader's frames
 * are the frames `vkcu hash` hashes, trims, damaged frames, fallbacks and
 * all. The sink's callback turns each frame into a vkcu_frame and puts it in
 * a queue of READER_AHEAD; the caller's vkcu_reader_next takes from it. A
 * full queue stops the job thread, and with it the decoder: that is the
 * back-pressure. On the GPU the job keeps frames in CUDA memory (cuda_pool):
 * the session writes each into a device buffer of a bounded pool
 * (gpu/devframes.c) and hands it over without a host copy.
 *
 * Host frames are copied once into a buffer of the reader's pool, in the
 * planar layout hashes use: the decoder's and the operators' frames stay
 * theirs (a decoder predicts from the frames it returned), and what the
 * caller does with its copy reaches nothing else.
 *
 * The frames themselves (copies, references, the count held) are
 * reader_frame.c's, which reader_seek.c shares.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>

#include "context.h"
#include "gpu/gpu.h"
#include "reader_priv.h"
#include "demux.h"

typedef struct iter_item {
    vkcu_frame *frame; /* NULL: the end (end_ret, end_err) */
} iter_item;

void vkcu_default_reader_params(vkcu_reader_params *p)
{
    memset(p, 0, sizeof(*p));
    p->video_stream = -1;
    p->start_time = -1;
    p->duration = -1;
    p->start_frame = -1;
    p->frame_count = -1;
    p->timing = VKCU_READER_TIMING_DECODED;
    p->max_held = VKCU_READER_MAX_HELD_DEFAULT;
    p->cuda_frames = 1;
}

#define CHECK_RANGE(field, value, lo, hi) VKCU_RANGE(VKCU_SETTING(field), value, lo, hi)

static int check_params(const vkcu_reader_params *p, char *err, size_t errlen)
{
    int ret = VKCU_RESERVED_CHECK(vkcu_reader_params, p, err, errlen);
    if (ret < 0)
        return ret;
    if (!p->input || !*p->input)
        return vkcu_invalid(err, errlen, "no input given");
    if (!strcmp(p->input, "-"))
        return vkcu_invalid(err, errlen, "a reader needs a file (random access seeks in it), not standard input");
    /* A reader opens its input again for each iteration and for random
     * access, after probing it at open. A FIFO's bytes are gone after the
     * first reader, and its second open() waits for a writer that has
     * left, for ever: refused here, before anything opens it. */
    struct stat st;
    if (stat(p->input, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode)))
        return vkcu_invalid(err, errlen, "%s: is a %s: a reader reads its input once to open it, again for each "
                            "iteration and for random access, so it needs a file it can seek in (save the stream "
                            "to a file first)", p->input,
                            S_ISFIFO(st.st_mode) ? "FIFO (named pipe)" : S_ISSOCK(st.st_mode) ? "socket"
                                                                               : "character device");
    CHECK_RANGE("video_stream", p->video_stream, -1, 1023);
    CHECK_RANGE("timing", p->timing, VKCU_READER_TIMING_VFR, VKCU_READER_TIMING_CFR);
    CHECK_RANGE("max_held", p->max_held, 1, VKCU_READER_MAX_HELD_LIMIT);
    CHECK_RANGE("cuda_frames", p->cuda_frames, 0, 1);
    CHECK_RANGE("detach", p->detach, 0, 1);
    CHECK_RANGE("strict", p->strict, 0, 1);
    CHECK_RANGE("require_gpu_decode", p->require_gpu_decode, 0, 1);
    ret = vkcu_check_trim(p->start_time, p->duration, p->start_frame, p->frame_count, err, errlen);
    if (ret < 0)
        return ret;
    if (p->chain && *p->chain) {
        char why[512];
        if (vkcu_chain_check(p->chain, why, sizeof(why)) < 0)
            return vkcu_invalid(err, errlen, "%s", why);
    }
    return 0;
}

static void reader_free(vkcu_reader *r)
{
    if (!r)
        return;
    if (r->acct)
        vkcu_reader_acct_unref(r->acct, 0);
    pthread_mutex_destroy(&r->lock);
    free(r->input);
    free(r->chain);
    free(r);
}

int vkcu_reader_open(vkcu_context *ctx, const vkcu_reader_params *p, vkcu_reader **out, char *err, size_t errlen)
{
    if (!out)
        return AVERROR(EINVAL);
    *out = NULL;
    if (!ctx || !p) {
        if (err && errlen)
            snprintf(err, errlen, "no %s given", ctx ? "parameters" : "context");
        return AVERROR(EINVAL);
    }
    const vkcu_log_target *prev = vkcu_log_target_swap(vkcu_context_log(ctx));
    char line[512] = "";
    vkcu_demux *d = NULL;
    vkcu_reader *r = NULL;
    int ret = check_params(p, err, errlen);
    if (ret < 0)
        goto done;
    r = calloc(1, sizeof(*r));
    if (r)
        pthread_mutex_init(&r->lock, NULL);
    if (!r || !(r->input = strdup(p->input)) || (p->chain && !(r->chain = strdup(p->chain))) ||
        !(r->acct = vkcu_reader_acct_new())) {
        reader_free(r);
        r = NULL;
        ret = vkcu_reader_fail(AVERROR(ENOMEM), err, errlen, "out of memory");
        goto done;
    }
    r->ctx = ctx;
    r->p = *p;
    r->p.input = r->input;
    r->p.chain = r->chain;
    vkcu_chain chain = { 0 };
    r->chain_per_frame = 1;
    if (vkcu_chain_parse(r->chain, &chain, line, sizeof(line)) >= 0) {
        for (int i = 0; i < chain.nb_ops; i++)
            r->chain_per_frame &= chain.ops[i]->cls->per_frame;
        vkcu_chain_free(&chain);
    }
    /* The input now: a missing or unreadable file is the caller's first news. */
    ret = vkcu_demux_open(r->input, p->video_stream, &d, line, sizeof(line));
    if (ret < 0) {
        struct stat st;
        if (ret == VKCU_ERR_INPUT && stat(r->input, &st) < 0 && errno == ENOENT)
            ret = AVERROR(ENOENT);
        vkcu_reader_fail(ret, err, errlen, line);
        reader_free(r);
        r = NULL;
        goto done;
    }
    const AVCodecParameters *par = d->video->codecpar;
    r->tb = d->video->time_base;
    r->info.width = par->width;
    r->info.height = par->height;
    r->info.codec = avcodec_get_name(par->codec_id);
    r->info.fps_num = d->frame_rate.num;
    r->info.fps_den = d->frame_rate.num ? d->frame_rate.den : 1;
    r->info.tb_num = r->tb.num;
    r->info.tb_den = r->tb.den;
    r->info.duration = d->fmt->duration > 0 ? d->fmt->duration / 1e6 : 0;
    r->info.frames = d->video->nb_frames > 0 ? d->video->nb_frames : -1;
    r->info.seekable = d->fmt->pb && (d->fmt->pb->seekable & AVIO_SEEKABLE_NORMAL) &&
                       !(d->fmt->iformat->flags & AVFMT_NOTIMESTAMPS);
    vkcu_demux_close(&d);
    *out = r;
    ret = 0;
done:
    vkcu_log_target_swap(prev);
    return ret;
}

void vkcu_reader_info_get(const vkcu_reader *r, vkcu_reader_info *info)
{
    if (info)
        memset(info, 0, sizeof(*info));
    if (r && info)
        *info = r->info;
}

/* ---- iteration ---- */

static int iter_push(vkcu_reader *r, const AVFrame *src)
{
    char line[512] = "";
    if (atomic_load(&r->stopping))
        return AVERROR_EXIT;
    int64_t index = -1;
    if (!r->sync_on && r->chain_per_frame && r->p.start_time < 0)
        index = (r->p.start_frame > 0 ? r->p.start_frame : 0) + r->emitted;
    r->emitted++;
    vkcu_frame *f = NULL;
    int ret = vkcu_reader_frame_make(r, &r->iter_pool, src, index, r->out_tb, &f, line, sizeof(line));
    if (ret < 0) {
        snprintf(r->end_err, sizeof(r->end_err), "%s: %s", r->input, line);
        return ret;
    }
    iter_item it = { f };
    if (vkcu_queue_push(r->queue, &it) < 0) {
        vkcu_frame_unref(&f);
        return AVERROR_EXIT; /* the caller stopped the iteration */
    }
    return 0;
}

static int iter_emit(void *opaque, AVFrame *f)
{
    return iter_push(opaque, f);
}

static int iter_on_open(void *opaque, const vkcu_stream_info *info)
{
    vkcu_reader *r = opaque;
    AVRational tb = { info->tb_num, info->tb_den };
    r->out_tb = tb;
    r->sync_on = r->p.timing != VKCU_READER_TIMING_DECODED;
    if (r->sync_on) {
        /* What the hash sink does, to the same time base and the same frames. */
        vkcu_frame_sync_init(&r->sync, r->p.timing == VKCU_READER_TIMING_VFR ? VKCU_FPS_VFR : VKCU_FPS_CFR,
                             (AVRational){ info->fps_num, info->fps_den }, tb, NULL);
        r->out_tb = r->sync.tb_out;
    }
    return 0;
}

static int iter_on_frame(void *opaque, const AVFrame *frame)
{
    vkcu_reader *r = opaque;
    if (!r->sync_on)
        return iter_push(r, frame);
    AVFrame *c = av_frame_clone(frame);
    if (!c)
        return AVERROR(ENOMEM);
    int ret = vkcu_frame_sync_push(&r->sync, c, iter_emit, r);
    av_frame_free(&c);
    return ret;
}

static void *iter_main(void *arg)
{
    vkcu_reader *r = arg;
    vkcu_job_params jp;
    vkcu_context_job_params(r->ctx, &jp);
    jp.job.input = r->input;
    jp.job.video_stream = r->p.video_stream;
    jp.job.chain = r->chain;
    jp.job.sink = VKCU_SINK_CALLBACK;
    jp.job.start_time = r->p.start_time;
    jp.job.duration = r->p.duration;
    jp.job.start_frame = r->p.start_frame;
    jp.job.frame_count = r->p.frame_count;
    jp.job.strict = r->p.strict;
    jp.job.require_gpu_decode = r->p.require_gpu_decode;
    jp.job.on_open = iter_on_open;
    jp.on_frame = iter_on_frame;
    jp.job.callback_opaque = r;
    /* The caller's frames, those queued, one in the sink's hands, one the
     * frame sync keeps, and the ring's: the session never waits while the
     * caller holds fewer than max_held. */
    jp.cuda_pool = r->p.cuda_frames ? r->p.max_held + READER_AHEAD + jp.settings.ring_size + 4 : 0;
    vkcu_job_result res;
    r->end_err[0] = 0;
    int ret = vkcu_job_run(&jp, &res);
    if (ret >= 0 && r->sync_on)
        ret = vkcu_frame_sync_push(&r->sync, NULL, iter_emit, r);
    if (r->sync_on)
        vkcu_frame_sync_free(&r->sync);
    r->sync_on = 0;
    vkcu_reader_hostpool_free(&r->iter_pool);
    if (ret < 0 && !r->end_err[0])
        snprintf(r->end_err, sizeof(r->end_err), "%s", res.error[0] ? res.error : "reader: the job failed");
    pthread_mutex_lock(&r->acct->lock);
    vkcu_reader_gpu_add(&r->iter_totals, &res);
    if (ret >= 0)
        r->iter_totals.fps_steady = res.fps_steady;
    if (res.path != VKCU_PATH_NONE)
        r->st.path = res.path;
    pthread_mutex_unlock(&r->acct->lock);
    r->end_ret = ret;
    iter_item end = { NULL };
    vkcu_queue_push(r->queue, &end); /* fails when the caller stopped: then nobody waits for it */
    return NULL;
}

static void item_free(void *item)
{
    vkcu_frame_unref(&((iter_item *)item)->frame);
}

/* Ends a running iteration: frames queued are dropped (they may hold the
 * GPU's buffers the job needs to finish), the job stops at its next frame. */
static void iter_stop(vkcu_reader *r)
{
    if (!r->started)
        return;
    atomic_store(&r->stopping, 1);
    vkcu_queue_close(r->queue);
    iter_item it;
    while (vkcu_queue_pop(r->queue, &it, 0) == 0)
        vkcu_frame_unref(&it.frame);
    pthread_join(r->thread, NULL);
    vkcu_queue_free(&r->queue, item_free);
    r->started = r->finished = 0;
    r->emitted = 0;
    atomic_store(&r->stopping, 0);
}

static int iter_start(vkcu_reader *r, char *err, size_t errlen)
{
    if (!(r->queue = vkcu_queue_create(READER_AHEAD, sizeof(iter_item))))
        return vkcu_reader_fail(AVERROR(ENOMEM), err, errlen, "out of memory");
    r->emitted = 0;
    r->end_ret = 0;
    if (vkcu_thread_create(&r->thread, iter_main, r)) {
        vkcu_queue_free(&r->queue, NULL);
        return vkcu_reader_fail(AVERROR(EAGAIN), err, errlen, "reader: cannot start its thread");
    }
    r->started = 1;
    return 0;
}

int vkcu_reader_next(vkcu_reader *r, vkcu_frame **frame, char *err, size_t errlen)
{
    if (!frame)
        return AVERROR(EINVAL);
    *frame = NULL;
    if (!r)
        return AVERROR(EINVAL);
    const vkcu_log_target *prev = vkcu_log_target_swap(vkcu_context_log(r->ctx));
    pthread_mutex_lock(&r->lock);
    int ret = 0;
    char line[640];
    if (r->finished)
        goto done;
    int held = vkcu_reader_held(r);
    if (!r->p.detach && held >= r->p.max_held) {
        snprintf(line, sizeof(line), "%s: the caller holds %d frames, as many as %s allows: release one (or copy "
                 "frames out, %s) before asking for the next", r->input, held, VKCU_SETTING("max_held"),
                 VKCU_SETTING_IS("detach", "1"));
        ret = vkcu_reader_fail(AVERROR(ENOBUFS), err, errlen, line);
        goto done;
    }
    if (!r->started && (ret = iter_start(r, err, errlen)) < 0)
        goto done;
    iter_item it;
    if (vkcu_queue_pop(r->queue, &it, VKCU_QUEUE_WAIT) < 0) {
        ret = vkcu_reader_fail(AVERROR_BUG, err, errlen, "reader: internal: the frame queue ended early");
        goto done;
    }
    if (!it.frame) {
        pthread_join(r->thread, NULL);
        vkcu_queue_free(&r->queue, item_free);
        r->started = 0;
        r->finished = 1;
        if (r->end_ret < 0)
            ret = vkcu_reader_fail(r->end_ret, err, errlen, r->end_err);
        goto done;
    }
    vkcu_reader_hand_out(r, it.frame);
    *frame = it.frame;
done:
    pthread_mutex_unlock(&r->lock);
    vkcu_log_target_swap(prev);
    return ret;
}

void vkcu_reader_rewind(vkcu_reader *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->lock);
    iter_stop(r);
    r->finished = 0;
    pthread_mutex_unlock(&r->lock);
}

/* ---- random access (reader_seek.c), under the lock and the log target ---- */

#define WITH_READER(r, call)                                                      \
    do {                                                                          \
        const vkcu_log_target *prev_ = vkcu_log_target_swap(vkcu_context_log((r)->ctx)); \
        pthread_mutex_lock(&(r)->lock);                                           \
        ret = (call);                                                             \
        pthread_mutex_unlock(&(r)->lock);                                         \
        vkcu_log_target_swap(prev_);                                              \
    } while (0)

int vkcu_reader_frame_count(vkcu_reader *r, int64_t *count, char *err, size_t errlen)
{
    int ret;
    if (!r || !count)
        return AVERROR(EINVAL);
    WITH_READER(r, vkcu_reader_seek_frame_count(r, count, err, errlen));
    return ret;
}

int vkcu_reader_frames_at(vkcu_reader *r, const int64_t *indices, int count, vkcu_frame **frames, char *err,
                          size_t errlen)
{
    int ret;
    if (!r || !indices || !frames)
        return AVERROR(EINVAL);
    WITH_READER(r, vkcu_reader_seek_frames(r, indices, count, frames, err, errlen));
    return ret;
}

int vkcu_reader_frame_at_time(vkcu_reader *r, double seconds, int64_t *index, char *err, size_t errlen)
{
    int ret;
    if (!r || !index)
        return AVERROR(EINVAL);
    WITH_READER(r, vkcu_reader_seek_at_time(r, seconds, index, err, errlen));
    return ret;
}

int vkcu_reader_frames_in_time(vkcu_reader *r, double start_seconds, double stop_seconds, int64_t *first,
                               int64_t *count, char *err, size_t errlen)
{
    int ret;
    if (!r || !first || !count)
        return AVERROR(EINVAL);
    WITH_READER(r, vkcu_reader_seek_in_time(r, start_seconds, stop_seconds, first, count, err, errlen));
    return ret;
}

void vkcu_reader_stats_get(vkcu_reader *r, vkcu_reader_stats *s)
{
    if (!s)
        return;
    memset(s, 0, sizeof(*s));
    if (!r)
        return;
    pthread_mutex_lock(&r->lock);
    pthread_mutex_lock(&r->acct->lock);
    *s = r->st;
    s->held = r->acct->held;
    s->max_held_seen = r->acct->max_seen;
    s->detached = r->acct->detached;
    s->imports = r->iter_totals.imports;
    s->dtod_copies = r->iter_totals.dtod_copies;
    s->htod_bytes = r->iter_totals.htod_bytes;
    s->dtoh_bytes = r->iter_totals.dtoh_bytes;
    s->fps_steady = r->iter_totals.fps_steady;
    pthread_mutex_unlock(&r->acct->lock);
    vkcu_reader_seek_stats(r, s);
    pthread_mutex_unlock(&r->lock);
}

void vkcu_reader_close(vkcu_reader **pr)
{
    if (!pr || !*pr)
        return;
    vkcu_reader *r = *pr;
    *pr = NULL;
    const vkcu_log_target *prev = vkcu_log_target_swap(vkcu_context_log(r->ctx));
    pthread_mutex_lock(&r->lock);
    iter_stop(r);
    vkcu_reader_seek_close(&r->seek);
    pthread_mutex_unlock(&r->lock);
    vkcu_log_target_swap(prev);
    reader_free(r);
}
