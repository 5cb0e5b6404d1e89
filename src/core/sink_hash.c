/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Hash sink: per-frame hashes of the processed frames, in FFmpeg's
 * framemd5 text format (so a result diffs against `ffmpeg -f framemd5`)
 * or as JSON lines.
 *
 * Frame hash definition (stable across backends and versions; docs/hash.md):
 * the visible picture only; planes in the order of the planar layout
 * (Y, U, V[, A] or the packed RGB plane); each row's samples packed without
 * padding; samples wider than 8 bits as 16-bit little-endian words, 10-bit
 * values in the low bits. GPU frames (NV12/P010) are hashed in their planar
 * equivalent (yuv420p/yuv420p10le), so both backends give the same hashes.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <libavutil/adler32.h>
#include <libavutil/crc.h>
#include <libavutil/hash.h>
#include <libavutil/imgutils.h>
#include <libavutil/intreadwrite.h>
#include <libavutil/pixdesc.h>

#include "gpu/gpu.h" /* vkcu_frame_digest_get */
#include "util/blake3.h"
#include "util/file.h"
#include "util/hash_algo.h"
#include "util/json.h"
#include "util/log.h"
#include "decode.h"
#include "sink.h"
#include "timing.h"
#include "util/queue.h"
#include "util/xxhash64.h"

/* Frames are hashed on worker threads (MD5 runs at well under 1 GB/s, a
 * 4K frame is 12 MB) and the lines are written in frame order. */
#define HASH_RING 32

typedef struct hash_item {
    AVFrame *frame;     /* NULL once hashed */
    char hex[AV_HASH_MAX_SIZE * 2 + 1];
    int size, ret, state; /* 0 empty, 1 queued, 2 hashing, 3 done */
    int64_t pts, dur;
    int concealed;      /* the frame is marked damaged (AV_FRAME_FLAG_CORRUPT, core/pipeline.c) */
    int width, height;  /* the picture's (JSON lines of VKCU_TIMING_DECODED name them: the size may change) */
    enum AVPixelFormat format;
} hash_item;

typedef struct hash_sink {
    AVRational out_tb;
    vkcu_frame_sync sync; /* onto 1/frame rate, as ffmpeg -f framemd5 (variable frame rate), or passed through */
    int64_t last_pts;   /* VKCU_TIMING_DECODED: the previous line's, which no later one goes below */
    int64_t frames;     /* lines written */
    enum vkcu_hash_algo algo;
    hash_item ring[HASH_RING];
    int64_t head, tail; /* next to write, next to queue */
    int nb_workers, depth;
    pthread_t workers[16];
    vkcu_queue *work;   /* hash_item *: queued for the workers, in frame order */
    pthread_mutex_t lock;
    pthread_cond_t done; /* an item's hash is done */
    /* VKCU_HASH_FORMAT_WHOLE: one running hash, fed in frame order */
    struct AVHashContext *whole;
    vkcu_xxh64_state whole_xxh;
    vkcu_blake3 whole_b3;
    int64_t whole_frames;
} hash_sink;

/* Semi-planar (NV12, P010, ...) and MSB-aligned samples: hashed as their
 * planar equivalent (yuv420p, yuv420p10le, ...) so that a frame's hash does
 * not depend on the layout a backend keeps it in. */
static int needs_planarising(const AVPixFmtDescriptor *d)
{
    if (d->flags & AV_PIX_FMT_FLAG_RGB || d->nb_components < 3)
        return 0;
    return d->comp[1].plane == d->comp[2].plane || d->comp[0].shift || d->comp[1].shift;
}

static void walk_planarised(const AVFrame *f, const AVPixFmtDescriptor *d,
                            void (*update)(void *, const uint8_t *, size_t), void *ctx, int *size)
{
    uint8_t row[16384 * 2];
    int total = 0;
    for (int c = 0; c < d->nb_components; c++) {
        const AVComponentDescriptor *cd = &d->comp[c];
        int w = c == 1 || c == 2 ? AV_CEIL_RSHIFT(f->width, d->log2_chroma_w) : f->width;
        int h = c == 1 || c == 2 ? AV_CEIL_RSHIFT(f->height, d->log2_chroma_h) : f->height;
        int wide = cd->depth > 8, mask = (1 << cd->depth) - 1;
        if (w > 16384)
            w = 16384;
        for (int y = 0; y < h; y++) {
            const uint8_t *src = f->data[cd->plane] + (ptrdiff_t)y * f->linesize[cd->plane] + cd->offset;
            for (int x = 0; x < w; x++) {
                const uint8_t *p = src + (ptrdiff_t)x * cd->step;
                int v = (wide ? AV_RL16(p) : p[0]) >> cd->shift & mask;
                if (wide)
                    AV_WL16(row + 2 * x, v);
                else
                    row[x] = (uint8_t)v;
            }
            update(ctx, row, (size_t)w << wide);
        }
        total += (w << wide) * h;
    }
    *size = total;
}

int vkcu_hash_on_gpu(const vkcu_job_params *p, enum AVPixelFormat host_fmt)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(host_fmt);
    return p->job.sink == VKCU_SINK_HASH && p->job.hash_algo == VKCU_HASH_BLAKE3 &&
           (p->job.hash_format == VKCU_HASH_FORMAT_FRAMEMD5 || p->job.hash_format == VKCU_HASH_FORMAT_JSON) && d &&
           !(d->flags & (AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_PAL)) &&
           !needs_planarising(d);
}

/* Feeds the packed rows of every plane to `update`. */
static void walk_rows(const AVFrame *f, void (*update)(void *, const uint8_t *, size_t), void *ctx, int *size)
{
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(f->format);
    if (needs_planarising(desc)) {
        walk_planarised(f, desc, update, ctx, size);
        return;
    }
    int linesizes[4];
    av_image_fill_linesizes(linesizes, f->format, f->width);
    int total = 0;
    int nb_planes = av_pix_fmt_count_planes(f->format);
    for (int p = 0; p < nb_planes; p++) {
        int h = f->height;
        if (p == 1 || p == 2)
            h = AV_CEIL_RSHIFT(h, desc->log2_chroma_h);
        for (int y = 0; y < h; y++)
            update(ctx, f->data[p] + (ptrdiff_t)y * f->linesize[p], linesizes[p]);
        total += linesizes[p] * h;
    }
    *size = total;
}

static void md5_update(void *ctx, const uint8_t *d, size_t n) { av_hash_update(ctx, d, n); }
static void xxh_update(void *ctx, const uint8_t *d, size_t n) { vkcu_xxh64_update(ctx, d, n); }
static void adler_update(void *ctx, const uint8_t *d, size_t n) { *(AVAdler *)ctx = av_adler32_update(*(AVAdler *)ctx, d, n); }
static void b3_update(void *ctx, const uint8_t *d, size_t n) { vkcu_blake3_update(ctx, d, n); }

static void digest_hex(const uint8_t *d, int len, char *hex, size_t hexlen)
{
    for (int i = 0; i < len && (size_t)(2 * i + 2) < hexlen; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

int vkcu_frame_hash(const AVFrame *frame, enum vkcu_hash_algo algo, char *hex, size_t hexlen, int *size)
{
    if (algo == VKCU_HASH_XXH64) {
        vkcu_xxh64_state st;
        vkcu_xxh64_init(&st, 0);
        walk_rows(frame, xxh_update, &st, size);
        snprintf(hex, hexlen, "%016" PRIx64, vkcu_xxh64_digest(&st));
        return 0;
    }
    if (algo == VKCU_HASH_BLAKE3) {
        vkcu_blake3 b;
        uint8_t d[VKCU_BLAKE3_LEN];
        vkcu_blake3_init(&b);
        walk_rows(frame, b3_update, &b, size);
        vkcu_blake3_final(&b, d);
        digest_hex(d, sizeof(d), hex, hexlen);
        return 0;
    }
    if (algo == VKCU_HASH_ADLER32) {
        /* framecrc starts from 0, not adler32's usual 1 */
        AVAdler a = 0;
        walk_rows(frame, adler_update, &a, size);
        snprintf(hex, hexlen, "%08" PRIx32, (uint32_t)a);
        return 0;
    }
    struct AVHashContext *h = NULL;
    int ret = av_hash_alloc(&h, vkcu_hash_algo_name(algo));
    if (ret < 0)
        return ret;
    av_hash_init(h);
    walk_rows(frame, md5_update, h, size);
    av_hash_final_hex(h, (uint8_t *)hex, (int)hexlen);
    av_hash_freep(&h);
    return 0;
}

static void *hash_worker(void *arg)
{
    hash_sink *h = arg;
    hash_item *it;
    /* Until the queue is closed and empty (hash_close). */
    while (vkcu_queue_pop(h->work, &it, VKCU_QUEUE_WAIT) == 0) {
        pthread_mutex_lock(&h->lock);
        it->state = 2;
        pthread_mutex_unlock(&h->lock);
        it->ret = vkcu_frame_hash(it->frame, h->algo, it->hex, sizeof(it->hex), &it->size);
        av_frame_free(&it->frame);
        pthread_mutex_lock(&h->lock);
        it->state = 3;
        pthread_cond_broadcast(&h->done);
        pthread_mutex_unlock(&h->lock);
    }
    return NULL;
}

static int write_line(vkcu_sink *s, hash_item *it)
{
    hash_sink *h = s->priv;
    if (it->ret < 0)
        return it->ret;
    int64_t pts = it->pts, dur = it->dur;
    /* A frame shorter than half a tick (libavformat's made-up 1/1200000 s in
     * raw streams): libavformat's muxers, framemd5 among them, call a
     * packet without duration one tick long when the tick is over 1 ms. */
    if (dur == 0 && h->out_tb.num * 1000LL > h->out_tb.den)
        dur = 1;
    FILE *o = s->params->job.hash_out;
    if (s->params->job.hash_format == VKCU_HASH_FORMAT_JSON) {
        json_t *j = json_pack("{sIsIsIsiss}", "frame", (json_int_t)h->frames, "pts", (json_int_t)pts, "duration",
                              (json_int_t)dur, "size", it->size, "hash", it->hex);
        const char *pf = av_get_pix_fmt_name(it->format);
        if (j && s->params->job.timing == VKCU_TIMING_DECODED && pf &&
            json_object_update_new(j, json_pack("{sisiss}", "width", it->width, "height", it->height, "pix_fmt", pf)) < 0) {
            json_decref(j);
            j = NULL;
        }
        if (j && it->concealed && json_object_set_new(j, "concealed", json_true()) < 0) {
            json_decref(j);
            j = NULL;
        }
        if (vkcu_json_write_line(o, j, 1) < 0) {
            if (ferror(o) && vkcu_stream_reader_gone(o))
                return VKCU_ERR_PIPE_CLOSED; /* as for the other formats below */
            snprintf(s->err, s->errlen, "cannot write hashes: output error");
            return VKCU_ERR_OUTPUT;
        }
    } else {
        /* A comment line, which framemd5 readers (FFmpeg's, vkcu's) skip;
         * vkcu's marks the frame line after it (regress/hash_list.c). */
        if (it->concealed)
            fprintf(o, "%s frame %" PRId64 ", pts %" PRId64 ": decoded from damaged data\n", VKCU_HASH_CONCEALED_MARK,
                    h->frames, pts);
        if (s->params->job.hash_format == VKCU_HASH_FORMAT_FRAMECRC)
            fprintf(o, "0, %10" PRId64 ", %10" PRId64 ", %8" PRId64 ", %8d, 0x%s\n", pts, pts, dur, it->size, it->hex);
        else
            fprintf(o, "0, %10" PRId64 ", %10" PRId64 ", %8" PRId64 ", %8d, %s\n", pts, pts, dur, it->size, it->hex);
    }
    h->frames++;
    if (ferror(o) && vkcu_stream_reader_gone(o))
        return VKCU_ERR_PIPE_CLOSED; /* a reader such as `head` has what it wanted */
    if (ferror(o)) {
        snprintf(s->err, s->errlen, "cannot write hashes: output error");
        return VKCU_ERR_OUTPUT;
    }
    return 0;
}

/* Writes finished lines in order; with `wait`, until fewer than `keep` are pending. */
static int flush_lines(vkcu_sink *s, int keep)
{
    hash_sink *h = s->priv;
    int ret = 0;
    pthread_mutex_lock(&h->lock);
    while (h->head < h->tail && ret >= 0) {
        hash_item *it = &h->ring[h->head % HASH_RING];
        if (it->state != 3) {
            if (h->tail - h->head <= keep)
                break;
            pthread_cond_wait(&h->done, &h->lock);
            continue;
        }
        pthread_mutex_unlock(&h->lock);
        ret = write_line(s, it);
        pthread_mutex_lock(&h->lock);
        it->state = 0;
        h->head++;
    }
    pthread_mutex_unlock(&h->lock);
    return ret;
}

static int hash_open(vkcu_sink *s, const vkcu_video_format *fmt, AVRational tb)
{
    hash_sink *h = s->priv;
    h->algo = s->params->job.hash_format == VKCU_HASH_FORMAT_FRAMECRC ? VKCU_HASH_ADLER32 : s->params->job.hash_algo;
    if (s->params->job.hash_format == VKCU_HASH_FORMAT_WHOLE) {
        if (h->algo == VKCU_HASH_XXH64) {
            vkcu_xxh64_init(&h->whole_xxh, 0);
            return 0;
        }
        if (h->algo == VKCU_HASH_BLAKE3) {
            vkcu_blake3_init(&h->whole_b3);
            return 0;
        }
        int ret = av_hash_alloc(&h->whole, vkcu_hash_algo_name(h->algo));
        if (ret < 0)
            return ret;
        av_hash_init(h->whole);
        return 0;
    }
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->done, NULL);
    h->work = vkcu_queue_create(HASH_RING, sizeof(hash_item *));
    if (!h->work)
        return AVERROR(ENOMEM);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    h->nb_workers = cpus < 2 ? 1 : cpus > 16 ? 16 : (int)cpus;
    h->depth = 2 * h->nb_workers < HASH_RING ? 2 * h->nb_workers : HASH_RING;
    for (int i = 0; i < h->nb_workers; i++)
        if (vkcu_thread_create(&h->workers[i], hash_worker, h)) {
            h->nb_workers = i;
            break;
        }
    if (!h->nb_workers) {
        snprintf(s->err, s->errlen, "cannot start hashing threads");
        return AVERROR(EAGAIN);
    }
    vkcu_demux *d = s->demux;
    const int decoded = s->params->job.timing == VKCU_TIMING_DECODED;
    vkcu_frame_sync_init(&h->sync, decoded ? VKCU_FPS_PASSTHROUGH : VKCU_FPS_VFR, fmt->frame_rate, tb, NULL);
    h->out_tb = h->sync.tb_out;
    h->last_pts = AV_NOPTS_VALUE;
    FILE *o = s->params->job.hash_out;
    if (s->params->job.hash_format == VKCU_HASH_FORMAT_JSON) {
        /* input last: the fixed keys keep their columns whatever the name */
        char tbs[48];
        snprintf(tbs, sizeof(tbs), "%d/%d", h->out_tb.num, h->out_tb.den);
        json_t *j = json_pack("{sssssssssisi}", "type", "header", "hash", vkcu_hash_algo_name(s->params->job.hash_algo),
                              "tb", tbs, "pix_fmt", av_get_pix_fmt_name(fmt->pix_fmt), "width", fmt->width, "height",
                              fmt->height);
        if (j && decoded && json_object_set_new(j, "timing", json_string("decoded")) < 0) {
            json_decref(j);
            j = NULL;
        }
        if (!j || vkcu_json_set_bytes(j, "input", d->path) < 0) {
            json_decref(j);
            j = NULL;
        }
        if (vkcu_json_write_line(o, j, 1) < 0) {
            if (ferror(o) && vkcu_stream_reader_gone(o))
                return VKCU_ERR_PIPE_CLOSED;
            snprintf(s->err, s->errlen, "cannot write hashes: output error");
            return VKCU_ERR_OUTPUT;
        }
    } else if (s->params->job.hash_format == VKCU_HASH_FORMAT_FRAMECRC) {
        /* FATE's header: ffmpeg -flags +bitexact writes no #software line */
        AVRational sar = s->demux->video->codecpar->sample_aspect_ratio;
        fprintf(o, "#tb 0: %d/%d\n#media_type 0: video\n#codec_id 0: rawvideo\n#dimensions 0: %dx%d\n#sar 0: %d/%d\n",
                h->out_tb.num, h->out_tb.den, fmt->width, fmt->height, sar.num, sar.num ? sar.den : 1);
    } else {
        fprintf(o, "#format: frame checksums\n#version: 2\n#hash: %s\n#software: vkcu (%s)\n",
                vkcu_hash_algo_name(s->params->job.hash_algo), av_get_pix_fmt_name(fmt->pix_fmt));
        if (decoded) /* every decoded frame at its own size: compare reads the media side the same way */
            fprintf(o, "%s decoded\n", VKCU_HASH_TIMING_MARK);
        fprintf(o, "#tb 0: %d/%d\n#media_type 0: video\n#codec_id 0: rawvideo\n#dimensions 0: %dx%d\n",
                h->out_tb.num, h->out_tb.den, fmt->width, fmt->height);
        AVRational sar = s->demux->video->codecpar->sample_aspect_ratio;
        fprintf(o, "#sar 0: %d/%d\n#stream#, dts,        pts, duration,     size, hash\n", sar.num, sar.num ? sar.den : 1);
    }
    return 0;
}

static int hash_emit(void *opaque, AVFrame *frame)
{
    vkcu_sink *s = opaque;
    hash_sink *h = s->priv;
    if (s->params->job.timing == VKCU_TIMING_DECODED) {
        /* As ffmpeg's muxer moves a timestamp that goes backward ("non-monotonic
         * DTS"): onto the previous one, which framemd5 allows. */
        if (h->last_pts != AV_NOPTS_VALUE && frame->pts < h->last_pts)
            frame->pts = h->last_pts;
        h->last_pts = frame->pts;
    }
    const int concealed = !!(frame->flags & AV_FRAME_FLAG_CORRUPT);
    if (s->params->job.hash_format == VKCU_HASH_FORMAT_WHOLE) {
        int size;
        if (vkcu_frame_digest_get(frame)) {
            snprintf(s->err, s->errlen, "internal: a frame hashed on the GPU for a whole-stream hash");
            return AVERROR_BUG;
        }
        if (h->whole)
            walk_rows(frame, md5_update, h->whole, &size);
        else if (h->algo == VKCU_HASH_BLAKE3)
            walk_rows(frame, b3_update, &h->whole_b3, &size);
        else
            walk_rows(frame, xxh_update, &h->whole_xxh, &size);
        h->whole_frames++;
        return 0;
    }
    int ret = flush_lines(s, h->depth - 1);
    if (ret < 0)
        return ret;
    const vkcu_frame_digest *dg = vkcu_frame_digest_get(frame);
    if (dg) {
        /* Hashed on the GPU: the line is ready; it waits only for its turn. */
        if (dg->algo != h->algo) {
            snprintf(s->err, s->errlen, "internal: a %s digest for %s lines", vkcu_hash_algo_name(dg->algo),
                     vkcu_hash_algo_name(h->algo));
            return AVERROR_BUG;
        }
        pthread_mutex_lock(&h->lock);
        hash_item *it = &h->ring[h->tail % HASH_RING];
        digest_hex(dg->digest, VKCU_BLAKE3_LEN, it->hex, sizeof(it->hex));
        it->size = dg->size;
        it->ret = 0;
        it->pts = frame->pts;
        it->dur = frame->duration;
        it->concealed = concealed;
        it->width = frame->width;
        it->height = frame->height;
        it->format = vkcu_frame_sw_format(frame);
        it->state = 3;
        h->tail++;
        pthread_cond_broadcast(&h->done);
        pthread_mutex_unlock(&h->lock);
        return 0;
    }
    AVFrame *ref = av_frame_clone(frame);
    if (!ref)
        return AVERROR(ENOMEM);
    pthread_mutex_lock(&h->lock);
    hash_item *it = &h->ring[h->tail % HASH_RING];
    it->frame = ref;
    it->pts = frame->pts;
    it->dur = frame->duration;
    it->concealed = concealed;
    it->width = frame->width;
    it->height = frame->height;
    it->format = vkcu_frame_sw_format(frame);
    it->state = 1;
    h->tail++;
    pthread_mutex_unlock(&h->lock);
    /* Never waits: flush_lines kept fewer than HASH_RING items in flight. */
    return vkcu_queue_push(h->work, &it) < 0 ? AVERROR_BUG : 0;
}

static int hash_write(vkcu_sink *s, AVFrame *frame)
{
    hash_sink *h = s->priv;
    return vkcu_frame_sync_push(&h->sync, frame, hash_emit, s);
}

/* The JSON list's last line: what became of the decoded frames (a reader
 * of frame lines skips it: its type is "summary"). */
static int write_summary(vkcu_sink *s)
{
    const hash_sink *h = s->priv;
    const vkcu_job_result *r = s->result;
    json_t *j = json_pack("{sssIsIsIsIsIsIsIss}", "type", "summary", "frames", (json_int_t)h->frames, "decoded",
                          (json_int_t)r->frames_in, "dropped", (json_int_t)r->frames_dropped, "duplicated",
                          (json_int_t)r->frames_duplicated, "rescaled", (json_int_t)r->frames_rescaled, "concealed",
                          (json_int_t)r->frames_concealed, "format_changes", (json_int_t)r->format_changes, "timing",
                          s->params->job.timing == VKCU_TIMING_DECODED ? "decoded" : "ffmpeg");
    if (vkcu_json_write_line(s->params->job.hash_out, j, 1) < 0) {
        snprintf(s->err, s->errlen, "cannot write hashes: output error");
        return errno == EPIPE ? VKCU_ERR_PIPE_CLOSED : VKCU_ERR_OUTPUT;
    }
    return 0;
}

static int hash_close(vkcu_sink *s, int ok)
{
    hash_sink *h = s->priv;
    int ret = 0;
    if (s->params->job.hash_format == VKCU_HASH_FORMAT_WHOLE) {
        /* as `ffmpeg -f md5` prints it: ALGO=hex */
        char hex[AV_HASH_MAX_SIZE * 2 + 1];
        if (h->whole) {
            av_hash_final_hex(h->whole, (uint8_t *)hex, sizeof(hex));
        } else if (h->algo == VKCU_HASH_BLAKE3) {
            uint8_t d[VKCU_BLAKE3_LEN];
            vkcu_blake3_final(&h->whole_b3, d);
            digest_hex(d, sizeof(d), hex, sizeof(hex));
        } else {
            snprintf(hex, sizeof(hex), "%016" PRIx64, vkcu_xxh64_digest(&h->whole_xxh));
        }
        av_hash_freep(&h->whole);
        if (ok && h->whole_frames) {
            FILE *o = s->params->job.hash_out;
            fprintf(o, "%s=%s\n", vkcu_hash_algo_name(h->algo), hex);
            if (fflush(o) || ferror(o)) /* `| head -c 1` too: as for the frame lines */
                ret = vkcu_stream_reader_gone(o) ? VKCU_ERR_PIPE_CLOSED : VKCU_ERR_OUTPUT;
        }
        return ret;
    }
    if (!h->nb_workers) { /* open failed before or while starting the workers */
        vkcu_queue_free(&h->work, NULL);
        pthread_mutex_destroy(&h->lock);
        pthread_cond_destroy(&h->done);
        return 0;
    }
    if (ok)
        ret = vkcu_frame_sync_push(&h->sync, NULL, hash_emit, s);
    if (ok && ret >= 0)
        ret = flush_lines(s, 0);
    s->result->frames_dropped += h->sync.dropped;
    s->result->frames_duplicated += h->sync.duplicated;
    if (ok && ret >= 0 && s->params->job.hash_format == VKCU_HASH_FORMAT_JSON)
        ret = write_summary(s);
    vkcu_frame_sync_free(&h->sync);
    vkcu_queue_close(h->work); /* the workers hash what is queued, then end */
    for (int i = 0; i < h->nb_workers; i++)
        pthread_join(h->workers[i], NULL);
    h->nb_workers = 0;
    for (int i = 0; i < HASH_RING; i++)
        av_frame_free(&h->ring[i].frame);
    pthread_mutex_destroy(&h->lock);
    vkcu_queue_free(&h->work, NULL);
    pthread_cond_destroy(&h->done);
    if (ret >= 0 && fflush(s->params->job.hash_out))
        ret = vkcu_stream_reader_gone(s->params->job.hash_out) ? VKCU_ERR_PIPE_CLOSED : VKCU_ERR_OUTPUT;
    return ret;
}

const vkcu_sink_class vkcu_sink_hash = {
    .name = "hash",
    .priv_size = sizeof(hash_sink),
    .open = hash_open,
    .write_frame = hash_write,
    .close = hash_close,
};
