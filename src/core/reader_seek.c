/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Random access for readers (vkcu_reader_frames_at): exact frames by
 * number, decoded from the keyframe before each, with a demuxer, decoder,
 * chain and GPU session that stay open between calls.
 *
 * The index. At the first call the video stream's packets are read once
 * without decoding (as a job with start_frame finds frame N): their
 * presentation timestamps, sorted, number the frames, and the keyframes'
 * timestamps say where decoding may start. Inputs without timestamps or
 * that cannot seek (raw elementary streams, pipes) have no index.
 *
 * A call. The distinct targets are taken in presentation order. For each,
 * the decoder goes on from where it is when the target lies ahead and no
 * keyframe lies between (targets in one group of pictures share a decode),
 * and otherwise seeks to the keyframe at or before it and flushes. The seek
 * aims at that keyframe's own time: in containers indexed by decode time
 * (MP4) as in those indexed by presentation time (Matroska) the keyframe
 * found is that one, as long as a group of pictures is longer than the
 * stream's reordering; should decoding start past the target all the same,
 * it seeks again from the keyframe before. Frames before the target are
 * dropped; the target goes through
 * the chain (CPU, or the GPU session's ring) and becomes a reader frame.
 * Only chains of per-frame operators are accepted, so a frame does not
 * depend on where decoding started. Frames come out with pts from the
 * input's start, as an iteration without a trim gives them.
 *
 * This file shares the job runner's pieces (demux, decode, timing, chain,
 * gpu) rather than its loop: a job decodes one window from one start,
 * while this decoder is steered target by target and kept.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libavutil/pixdesc.h>

#include "context.h"
#include "gpu/gpu.h"
#include "reader_priv.h"
#include "decode.h"
#include "demux.h"
#include "util/array.h"
#include "util/pool.h"

struct reader_seek {
    vkcu_job_params jp;        /* the context's settings */
    vkcu_demux *demux;
    vkcu_decoder *dec;
    vkcu_gpu *gpu;
    int gpu_prepared;
    vkcu_chain chain;
    int chain_parsed, chain_ready;
    vkcu_video_format in_fmt, out_fmt;
    vkcu_frame_clock clock;
    AVPacket *pkt;
    int pkt_pending;           /* pkt was refused for now (EAGAIN): send it again first */
    AVFrame *frame;
    int64_t pos;               /* pts of the last frame out of the decoder; INT64_MIN: none since the seek */
    int draining;              /* the end of the input was sent to the decoder */
    enum vkcu_path path;
    reader_hostpool pool;
    /* the index */
    int indexed;               /* 1: built; <0: why there is none (index_err) */
    char index_err[512];
    int64_t *pts, n;           /* presentation timestamps of the frames, sorted */
    int64_t *keys, nk;         /* those of the keyframes */
    int64_t *key_packets;      /* each keyframe's place among the video packets (vkcu_demux_seek_packet) */
    int64_t max_delay, origin, start, end;
    /* counters */
    int64_t decoded, seeks;
    int setups;
    vkcu_reader_stats gpu_done; /* GPU counters of sessions closed */
};

static int no_index(reader_seek *s, int ret, char *err, size_t errlen, const char *fmt, const char *path)
{
    snprintf(s->index_err, sizeof(s->index_err), fmt, path);
    s->indexed = ret;
    return vkcu_reader_fail(ret, err, errlen, s->index_err);
}

/* The frames' presentation timestamps (sorted afterwards), the key frames
 * with their places among the video packets, the reordering and the end,
 * from every video packet but those never shown. AVERROR(ENOSYS): a shown
 * packet without a pts. */
static int index_from_scan(reader_seek *s, const vkcu_packet_scan *scan, const vkcu_demux *d)
{
    int64_t room = 0, key_room = 0, key_packet_room = 0, frame = 0; /* util/array.h */
    AVRational tb = d->video->time_base;
    if (d->frame_rate.num > 0)
        frame = av_rescale_q(1, av_inv_q(d->frame_rate), tb);
    s->end = INT64_MIN;
    for (int64_t i = 0; i < scan->n; i++) {
        if (scan->discard[i])
            continue;
        if (scan->pts[i] == AV_NOPTS_VALUE)
            return AVERROR(ENOSYS);
        if (scan->dts[i] != AV_NOPTS_VALUE && scan->pts[i] - scan->dts[i] > s->max_delay)
            s->max_delay = scan->pts[i] - scan->dts[i];
        if (VKCU_ARRAY_GROW(s->pts, s->n, room, 1024) < 0)
            return AVERROR(ENOMEM);
        s->pts[s->n++] = scan->pts[i];
        if (scan->key[i]) {
            if (VKCU_ARRAY_GROW(s->keys, s->nk, key_room, 1024) < 0 ||
                VKCU_ARRAY_GROW(s->key_packets, s->nk, key_packet_room, 1024) < 0)
                return AVERROR(ENOMEM);
            s->key_packets[s->nk] = i;
            s->keys[s->nk++] = scan->pts[i];
        }
        int64_t end = scan->pts[i] + (scan->duration[i] > 0 ? scan->duration[i] : frame);
        if (end > s->end)
            s->end = end;
    }
    return 0;
}

static int build_index(vkcu_reader *r, reader_seek *s, char *err, size_t errlen)
{
    char line[512] = "";
    if (s->indexed > 0)
        return 0;
    if (s->indexed < 0)
        return vkcu_reader_fail(s->indexed, err, errlen, s->index_err);
    int ret;
    if (!s->demux && (ret = vkcu_demux_open(r->input, r->p.video_stream, &s->demux, line, sizeof(line))) < 0)
        return vkcu_reader_fail(ret, err, errlen, line);
    vkcu_demux *d = s->demux;
    if (!d->fmt->pb || !(d->fmt->pb->seekable & AVIO_SEEKABLE_NORMAL) || (d->fmt->iformat->flags & AVFMT_NOTIMESTAMPS))
        return no_index(s, AVERROR(ENOSYS), err, errlen,
                        "%s: random access needs a seekable file with timestamps (a raw stream or a pipe has none: "
                        "iterate instead)", r->input);
    for (unsigned i = 0; i < d->fmt->nb_streams; i++)
        if ((int)i != d->video_index)
            d->fmt->streams[i]->discard = AVDISCARD_ALL;
    vkcu_packet_scan scan;
    ret = vkcu_demux_scan(d, INT64_MAX, AV_NOPTS_VALUE, &scan);
    if (ret >= 0)
        ret = index_from_scan(s, &scan, d);
    vkcu_packet_scan_free(&scan);
    if (ret == AVERROR(ENOSYS))
        return no_index(s, ret, err, errlen, "%s: video packets without timestamps: random access cannot number "
                        "the frames (iterate instead)", r->input);
    if (ret < 0) {
        char buf[128];
        snprintf(line, sizeof(line), "%s: cannot read the input to number its frames: %s", r->input,
                 vkcu_err_str(ret, buf, sizeof(buf)));
        return vkcu_reader_fail(VKCU_ERR_INPUT, err, errlen, line);
    }
    if (!s->n)
        return no_index(s, VKCU_ERR_INPUT, err, errlen, "%s: no video frames to number", r->input);
    qsort(s->pts, (size_t)s->n, sizeof(*s->pts), vkcu_i64_cmp);
    /* Key frames in presentation order, each with its packet (insertion:
     * they come nearly in order already). */
    for (int64_t i = 1; i < s->nk; i++)
        for (int64_t k = i; k > 0 && s->keys[k - 1] > s->keys[k]; k--) {
            FFSWAP(int64_t, s->keys[k - 1], s->keys[k]);
            FFSWAP(int64_t, s->key_packets[k - 1], s->key_packets[k]);
        }
    s->start = d->video->start_time != AV_NOPTS_VALUE ? d->video->start_time : 0;
    s->origin = av_rescale_q(vkcu_demux_input_start(d->fmt), AV_TIME_BASE_Q, d->video->time_base);
    if ((d->indexed ? avformat_seek_file(d->fmt, d->video_index, INT64_MIN, s->start, s->start, 0)
                    : vkcu_demux_seek_packet(d, 0)) < 0) {
        snprintf(line, sizeof(line), "%s: cannot seek back to the start after numbering the frames", r->input);
        return vkcu_reader_fail(VKCU_ERR_INPUT, err, errlen, line);
    }
    vkcu_frame_clock_init(&s->clock, d->fmt, d->video, s->origin);
    s->pos = INT64_MIN;
    s->indexed = 1;
    return 0;
}

static reader_seek *seek_get(vkcu_reader *r)
{
    if (!r->seek && (r->seek = calloc(1, sizeof(*r->seek)))) {
        vkcu_context_job_params(r->ctx, &r->seek->jp);
        r->seek->pos = INT64_MIN;
    }
    return r->seek;
}

/* The decoder, chain and GPU session (not the demuxer and the index). */
static void seek_close_decoding(reader_seek *s)
{
    if (s->gpu) {
        vkcu_job_result c = { 0 };
        vkcu_gpu_stats(s->gpu, &c);
        vkcu_reader_gpu_add(&s->gpu_done, &c);
    }
    int saved = s->gpu ? vkcu_cuda_enter(s->jp.settings.device) : -1;
    vkcu_gpu_close(&s->gpu);
    vkcu_decoder_close(&s->dec);
    vkcu_cuda_leave(saved, s->jp.settings.device);
    vkcu_chain_free(&s->chain);
    s->chain_parsed = s->chain_ready = 0;
    av_packet_free(&s->pkt);
    av_frame_free(&s->frame);
    s->pkt_pending = 0;
    s->pos = INT64_MIN;
    s->draining = 0;
    if (s->gpu_prepared) {
        vkcu_gpu_prepare_wait(s->jp.settings.device);
        s->gpu_prepared = 0;
    }
}

void vkcu_reader_seek_close(reader_seek **ps)
{
    reader_seek *s = *ps;
    if (!s)
        return;
    seek_close_decoding(s);
    vkcu_reader_hostpool_free(&s->pool);
    vkcu_demux_close(&s->demux);
    free(s->pts);
    free(s->keys);
    free(s->key_packets);
    free(s);
    *ps = NULL;
}

/* The backend and decoder, as a job opens them (pipeline.c's open_backend). */
static int open_decoding(vkcu_reader *r, reader_seek *s, char *err, size_t errlen)
{
    const vkcu_job_params *p = &s->jp;
    char why[512] = "";
    int ret;
    if (!(s->pkt = av_packet_alloc()) || !(s->frame = av_frame_alloc()))
        return AVERROR(ENOMEM);
    if ((ret = vkcu_chain_parse(r->chain, &s->chain, err, errlen)) < 0)
        return ret;
    s->chain_parsed = 1;
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    for (int i = 0; i < s->chain.nb_ops; i++)
        s->chain.ops[i]->threads = threads > 0 ? threads : 1;
    if (p->settings.backend != VKCU_BACKEND_CPU) {
        vkcu_gpu_prepare(p->settings.device);
        s->gpu_prepared = 1;
        vkcu_gpu_config gc = {
            .device = p->settings.device,
            .ring_size = p->settings.ring_size,
            .timeline_handoff = p->settings.timeline_handoff,
            .stall_timeout_ms = p->settings.stall_timeout_ms,
            .frames_wanted = 1,
            .vulkan_download = p->settings.vulkan_download,
            .cuda_pool = r->p.cuda_frames ? r->p.max_held + p->settings.ring_size + 4 : 0,
        };
        ret = vkcu_gpu_open(&gc, &s->gpu, why, sizeof(why));
        if (ret < 0) {
            if (p->settings.backend == VKCU_BACKEND_GPU) {
                snprintf(err, errlen, "%s: %s: %s", r->input, VKCU_SETTING_IS("backend", "gpu"), why);
                return VKCU_ERR_DEVICE;
            }
            LOGV("no GPU backend (%s); using the CPU reference", why);
        }
    }
    if (s->gpu) {
        AVBufferRef *vk = vkcu_gpu_vulkan_device(s->gpu);
        if (vkcu_decoder_vulkan_supported(s->demux, vk, why, sizeof(why))) {
            ret = vkcu_decoder_open(s->demux, vk, 1, &s->dec, err, errlen);
            if (ret >= 0) {
                s->path = VKCU_PATH_VULKAN_CUDA;
                return 0;
            }
            LOGV("%s: Vulkan decoder did not open (%s); software decode + upload", r->input, err);
            err[0] = 0;
        }
        s->path = VKCU_PATH_SW_UPLOAD_CUDA;
    } else {
        s->path = VKCU_PATH_CPU;
    }
    if (r->p.require_gpu_decode) {
        snprintf(err, errlen, "%s: the GPU does not decode this stream (%s); refused by %s", r->input,
                 s->gpu ? (why[0] ? why : "the Vulkan decoder did not open") : "no GPU backend",
                 VKCU_SETTING_IS("require_gpu_decode", "1"));
        return VKCU_ERR_DEVICE;
    }
    /* One thread, as for hashes: a damaged picture conceals the same way
     * every time. Never in pieces (decode_parallel): random access decodes
     * from a key frame to a target, and pieces would decode the groups of
     * pictures after it (reading the input to its end) for nothing. */
    return vkcu_decoder_open(s->demux, NULL, p->settings.decode_threads > 0 ? p->settings.decode_threads : 1, &s->dec,
                             err, errlen);
}

/* The chain, from the first target frame (pipeline.c's first_frame). */
static int first_frame(vkcu_reader *r, reader_seek *s, const AVFrame *f, char *err, size_t errlen)
{
    enum AVPixelFormat sw = vkcu_frame_sw_format(f);
    char why[256];
    if (s->gpu && !vkcu_format_gpu_carries(sw, why, sizeof(why))) {
        LOGI("%s: %s; processing on the CPU", r->input, why);
        vkcu_gpu_close(&s->gpu);
        s->path = VKCU_PATH_CPU;
    }
    vkcu_format_from_frame(&s->in_fmt, f, sw);
    s->in_fmt.time_base = s->demux->video->time_base;
    s->in_fmt.frame_rate = s->demux->frame_rate;
    char line[512] = "";
    int ret = vkcu_chain_init(&s->chain, &s->in_fmt, &s->out_fmt, line, sizeof(line));
    if (ret < 0) {
        snprintf(err, errlen, "%s: %s", r->input, line);
        return ret;
    }
    if (s->gpu) {
        if (f->format != AV_PIX_FMT_VULKAN && r->p.require_gpu_decode) {
            snprintf(err, errlen, "%s: the Vulkan decoder gave a software frame (%s); refused by %s", r->input,
                     av_get_pix_fmt_name(sw), VKCU_SETTING_IS("require_gpu_decode", "1"));
            return VKCU_ERR_DEVICE;
        }
        vkcu_gpu_set_chain(s->gpu, &s->chain);
    }
    s->chain_ready = 1;
    return 0;
}

static int frame_is_corrupt(const AVFrame *f)
{
    return (f->flags & AV_FRAME_FLAG_CORRUPT) || f->decode_error_flags;
}

/* The next frame out of the decoder (0), feeding it packets as it needs
 * them; AVERROR_EOF after the last. Corrupt frames are skipped, as a job
 * skips them (or fail, with strict). */
static int next_decoded(vkcu_reader *r, reader_seek *s, AVFrame *f, char *err, size_t errlen)
{
    for (;;) {
        int ret = vkcu_decoder_receive(s->dec, f);
        if (ret == 0) {
            vkcu_frame_clock_stamp(&s->clock, s->dec->avctx, f);
            vkcu_frame_plain_layout(f);
            s->decoded++;
            if (frame_is_corrupt(f)) {
                if (r->p.strict) {
                    snprintf(err, errlen, "%s: frame at pts %lld: corrupt picture (decode errors)", r->input,
                             (long long)f->pts);
                    av_frame_unref(f);
                    return VKCU_ERR_INPUT;
                }
                if (f->pts != AV_NOPTS_VALUE)
                    s->pos = f->pts;
                av_frame_unref(f);
                continue;
            }
            if (f->pts != AV_NOPTS_VALUE)
                s->pos = f->pts;
            return 0;
        }
        if (ret == AVERROR_EOF)
            return AVERROR_EOF;
        if (ret == AVERROR_INVALIDDATA && !r->p.strict)
            continue;
        if (ret != AVERROR(EAGAIN)) {
            char buf[128];
            snprintf(err, errlen, "%s: decode error: %s", r->input, vkcu_err_str(ret, buf, sizeof(buf)));
            return ret == AVERROR_INVALIDDATA ? VKCU_ERR_INPUT : ret;
        }
        if (s->draining)
            return AVERROR_EOF;
        if (!s->pkt_pending) {
            ret = vkcu_demux_read(s->demux, s->pkt, r->p.strict, NULL, err, errlen);
            if (ret == AVERROR_EOF) {
                s->draining = 1;
                if ((ret = vkcu_decoder_send(s->dec, NULL, r->p.strict, err, errlen)) < 0 && ret != AVERROR_EOF)
                    return ret;
                continue;
            }
            if (ret < 0)
                return ret;
            if (s->pkt->stream_index != s->demux->video_index) {
                av_packet_unref(s->pkt);
                continue;
            }
            vkcu_frame_clock_packet(&s->clock, s->pkt);
        }
        ret = vkcu_decoder_send(s->dec, s->pkt, r->p.strict, err, errlen);
        s->pkt_pending = ret == AVERROR(EAGAIN);
        if (!s->pkt_pending)
            av_packet_unref(s->pkt);
        if (ret < 0 && ret != AVERROR(EAGAIN) && ret != AVERROR_EOF)
            return ret;
    }
}

/* The packet of the key frame at pts `key` (0, the first, for the start). */
static int64_t key_packet(const reader_seek *s, int64_t key)
{
    int64_t n = vkcu_i64_count_le(s->keys, s->nk, key);
    return n && s->keys[n - 1] == key ? s->key_packets[n - 1] : 0;
}

static int seek_to(vkcu_reader *r, reader_seek *s, int64_t key, char *err, size_t errlen)
{
    vkcu_demux *d = s->demux;
    int ret = -1;
    if (!d->indexed) /* a seek by time lands on any packet: count packets from the start instead */
        ret = vkcu_demux_seek_packet(d, key_packet(s, key));
    else if (key > s->start)
        ret = vkcu_demux_seek(d, key);
    if (ret < 0 && (ret = avformat_seek_file(d->fmt, d->video_index, INT64_MIN, s->start, s->start, 0)) < 0) {
        snprintf(err, errlen, "%s: cannot seek to the keyframe at pts %lld", r->input, (long long)key);
        return VKCU_ERR_INPUT;
    }
    if ((ret = vkcu_decoder_flush(s->dec)) < 0) {
        snprintf(err, errlen, "%s: cannot restart the decoders after a seek", r->input);
        return ret;
    }
    if (s->pkt_pending)
        av_packet_unref(s->pkt);
    s->pkt_pending = 0;
    s->draining = 0;
    s->pos = INT64_MIN;
    vkcu_frame_clock_init(&s->clock, d->fmt, d->video, s->origin);
    s->seeks++;
    return 0;
}

/* The keyframe at or before pts t (the stream's start when none is). */
static int64_t key_before(const reader_seek *s, int64_t t)
{
    int64_t n = vkcu_i64_count_le(s->keys, s->nk, t);
    return n ? s->keys[n - 1] : s->start;
}

typedef struct emit_ctx {
    vkcu_reader *r;
    reader_seek *s;
    int64_t index;
    vkcu_frame **dst;
    char *err;
    size_t errlen;
} emit_ctx;

static int emit_cpu(void *opaque, AVFrame *f)
{
    emit_ctx *e = opaque;
    if (*e->dst) {
        snprintf(e->err, e->errlen, "internal: a per-frame chain gave two frames for one");
        return AVERROR_BUG;
    }
    return vkcu_reader_frame_make(e->r, &e->s->pool, f, e->index, e->s->demux->video->time_base, e->dst, e->err,
                                  e->errlen);
}

/* Frames the GPU finished, in the order they were pushed (wait: until none is pending). */
static int gpu_collect(vkcu_reader *r, reader_seek *s, int wait_all, const int64_t *targets, vkcu_frame **got,
                       int *popped, char *err, size_t errlen)
{
    int ret = 0;
    for (;;) {
        int wait = wait_all ? vkcu_gpu_pending(s->gpu) > 0 : vkcu_gpu_full(s->gpu);
        ret = vkcu_gpu_pop(s->gpu, s->frame, wait, err, errlen);
        if (ret == AVERROR(EAGAIN))
            return 0;
        if (ret < 0)
            return ret;
        int k = (*popped)++;
        ret = vkcu_reader_frame_make(r, &s->pool, s->frame, targets[k], s->demux->video->time_base, &got[k], err,
                                     errlen);
        av_frame_unref(s->frame);
        if (ret < 0)
            return ret;
    }
}

static int name_temporal_op(vkcu_reader *r, char *err, size_t errlen)
{
    vkcu_chain c = { 0 };
    const char *name = "an operator";
    char line[512];
    if (vkcu_chain_parse(r->chain, &c, line, sizeof(line)) >= 0)
        for (int i = 0; i < c.nb_ops; i++)
            if (!c.ops[i]->cls->per_frame) {
                name = c.ops[i]->cls->name;
                break;
            }
    snprintf(line, sizeof(line), "%s: random access takes chains of operators that look at one frame at a time; "
             "%s depends on other frames, so frame N would depend on where decoding starts (iterate instead)",
             r->input, name);
    vkcu_chain_free(&c);
    return vkcu_reader_fail(AVERROR(EINVAL), err, errlen, line);
}

int vkcu_reader_seek_frame_count(vkcu_reader *r, int64_t *count, char *err, size_t errlen)
{
    reader_seek *s = seek_get(r);
    if (!s)
        return vkcu_reader_fail(AVERROR(ENOMEM), err, errlen, "out of memory");
    int ret = build_index(r, s, err, errlen);
    if (ret < 0)
        return ret;
    *count = s->n;
    return 0;
}

int vkcu_reader_seek_at_time(vkcu_reader *r, double seconds, int64_t *index, char *err, size_t errlen)
{
    char line[512];
    reader_seek *s = seek_get(r);
    if (!s)
        return vkcu_reader_fail(AVERROR(ENOMEM), err, errlen, "out of memory");
    int ret = build_index(r, s, err, errlen);
    if (ret < 0)
        return ret;
    AVRational tb = s->demux->video->time_base;
    double first = (s->pts[0] - s->origin) * av_q2d(tb), end = (s->end - s->origin) * av_q2d(tb);
    if (!(seconds >= first && seconds < end)) {
        snprintf(line, sizeof(line), "%s: %g s is outside the frames' times [%.6f, %.6f) s", r->input, seconds, first,
                 end);
        return vkcu_reader_fail(AVERROR(EINVAL), err, errlen, line);
    }
    /* In ticks, a hair over so that a frame's own time finds that frame. */
    int64_t t = s->origin + (int64_t)floor(seconds * tb.den / tb.num + 1e-6);
    int64_t n = vkcu_i64_count_le(s->pts, s->n, t);
    *index = n ? n - 1 : 0;
    return 0;
}

/* Frames of the index that start before `seconds`: a frame whose time is
 * `seconds` to a hair (the slack vkcu_reader_seek_at_time allows) starts at
 * it, not before. */
static int64_t frames_before(const reader_seek *s, AVRational tb, double seconds)
{
    int64_t t = s->origin + (int64_t)ceil(seconds * tb.den / tb.num - 1e-6);
    return vkcu_i64_count_le(s->pts, s->n, t - 1);
}

int vkcu_reader_seek_in_time(vkcu_reader *r, double start_seconds, double stop_seconds, int64_t *first,
                             int64_t *count, char *err, size_t errlen)
{
    char line[512];
    reader_seek *s = seek_get(r);
    if (!s)
        return vkcu_reader_fail(AVERROR(ENOMEM), err, errlen, "out of memory");
    int ret = build_index(r, s, err, errlen);
    if (ret < 0)
        return ret;
    AVRational tb = s->demux->video->time_base;
    double begin = (s->pts[0] - s->origin) * av_q2d(tb), end = (s->end - s->origin) * av_q2d(tb);
    if (!(start_seconds <= stop_seconds))
        snprintf(line, sizeof(line), "%s: the range [%g, %g) s ends before it starts", r->input, start_seconds,
                 stop_seconds);
    else if (!(start_seconds >= begin && start_seconds < end))
        snprintf(line, sizeof(line), "%s: the range's start %g s is outside the frames' times [%.6f, %.6f) s",
                 r->input, start_seconds, begin, end);
    else if (!(stop_seconds <= end))
        snprintf(line, sizeof(line), "%s: the range's end %g s is after the end of the last frame, %.6f s", r->input,
                 stop_seconds, end);
    else
        line[0] = 0;
    if (line[0])
        return vkcu_reader_fail(AVERROR(EINVAL), err, errlen, line);
    *first = frames_before(s, tb, start_seconds);
    *count = frames_before(s, tb, stop_seconds) - *first;
    return 0;
}

/* The request checked before anything is decoded: a count in range, a chain
 * of per-frame operators, the index built and every number in it. */
static int seek_frames_check(vkcu_reader *r, const int64_t *indices, int count, reader_seek **sp, char *err,
                             size_t errlen)
{
    char line[640] = "";
    int ret = 0;
    if (count < 1 || count > VKCU_READER_MAX_HELD_LIMIT) {
        snprintf(line, sizeof(line), "%s: %d frames asked for at once; give 1 to %d", r->input, count,
                 VKCU_READER_MAX_HELD_LIMIT);
        return vkcu_reader_fail(AVERROR(EINVAL), err, errlen, line);
    }
    if (!r->chain_per_frame)
        return name_temporal_op(r, err, errlen);
    reader_seek *s = seek_get(r);
    if (!s)
        return vkcu_reader_fail(AVERROR(ENOMEM), err, errlen, "out of memory");
    if ((ret = build_index(r, s, err, errlen)) < 0)
        return ret;
    for (int i = 0; i < count; i++)
        if (indices[i] < 0 || indices[i] >= s->n) {
            snprintf(line, sizeof(line), "%s: frame %lld does not exist: the input has %lld frames (0 to %lld)",
                     r->input, (long long)indices[i], (long long)s->n, (long long)s->n - 1);
            return vkcu_reader_fail(AVERROR(EINVAL), err, errlen, line);
        }
    *sp = s;
    return 0;
}

/* The distinct targets, in presentation order: the numbers asked for,
 * sorted into targets with repeats dropped; returns how many remain. */
static int distinct_targets(const int64_t *indices, int count, int64_t *targets)
{
    int nt = 0;
    memcpy(targets, indices, (size_t)count * sizeof(*targets));
    qsort(targets, (size_t)count, sizeof(*targets), vkcu_i64_cmp);
    for (int i = 0; i < count; i++)
        if (!nt || targets[nt - 1] != targets[i])
            targets[nt++] = targets[i];
    return nt;
}

/* Frame `index` decoded into s->frame: the decoder goes on from where it is
 * when the target lies ahead with no keyframe between, and otherwise seeks
 * to the keyframe before it (and to the one before that should decoding
 * start past the target); the frames before it are dropped. */
static int decode_target(vkcu_reader *r, reader_seek *s, int64_t index, char *line, size_t linelen)
{
    int ret;
    int64_t t = s->pts[index], key = key_before(s, t);
    int fresh = 0; /* no frame out since the seek: starting past the target means seeking earlier */
    if (t <= s->pos || key > s->pos || s->draining || s->pos == INT64_MIN) {
        if ((ret = seek_to(r, s, key, line, linelen)) < 0)
            return ret;
        fresh = 1;
    }
    for (;;) {
        ret = next_decoded(r, s, s->frame, line, linelen);
        if (ret == 0 && s->frame->pts > t && fresh && key > s->start) {
            av_frame_unref(s->frame);
            key = key_before(s, key - 1);
            if ((ret = seek_to(r, s, key, line, linelen)) < 0)
                return ret;
            continue;
        }
        fresh = 0;
        if (ret == AVERROR_EOF || (ret == 0 && s->frame->pts > t)) {
            av_frame_unref(s->frame);
            snprintf(line, linelen, "%s: frame %lld (pts %lld) could not be decoded (damaged, or the "
                     "decoder skipped it)", r->input, (long long)index, (long long)(t - s->origin));
            return VKCU_ERR_INPUT;
        }
        if (ret < 0)
            return ret;
        if (s->frame->pts == t)
            return ret;
        av_frame_unref(s->frame);
    }
}

/* The decoded target k (in s->frame) through the chain, set up at the first
 * target: into the GPU session's ring (the frames it finished popped into
 * got on the way), or through the CPU chain into got[k]. */
static int chain_target(vkcu_reader *r, reader_seek *s, int k, const int64_t *targets, vkcu_frame **got,
                        int *popped, int *pushed, char *line, size_t linelen)
{
    int ret;
    if (!s->chain_ready && (ret = first_frame(r, s, s->frame, line, linelen)) < 0) {
        av_frame_unref(s->frame);
        return ret;
    }
    s->frame->pts -= s->origin;
    if (s->gpu) {
        /* Taken out of s->frame first: gpu_collect pops the chain's
         * finished frames into s->frame. */
        AVFrame *owned = av_frame_clone(s->frame);
        av_frame_unref(s->frame);
        if (!owned) {
            snprintf(line, linelen, "%s: frame %lld: cannot reference the decoded frame", r->input,
                     (long long)targets[k]);
            return AVERROR(ENOMEM);
        }
        if ((ret = gpu_collect(r, s, 0, targets, got, popped, line, linelen)) < 0) {
            av_frame_free(&owned);
            return ret;
        }
        if ((ret = vkcu_gpu_push(s->gpu, owned, line, linelen)) < 0)
            return ret;
        (*pushed)++;
    } else {
        const vkcu_op *failed = NULL;
        emit_ctx e = { r, s, targets[k], &got[k], line, linelen };
        ret = vkcu_chain_feed_cpu(&s->chain, 0, s->frame, emit_cpu, &e, &failed);
        av_frame_unref(s->frame);
        if (ret < 0 && failed) {
            char buf[128];
            snprintf(line, linelen, "%s: operator %s failed: %s", r->input, failed->cls->name,
                     vkcu_err_str(ret, buf, sizeof(buf)));
        }
        if (ret < 0)
            return ret;
    }
    return 0;
}

/* Every request in the caller's order; a repeated number, a new reference.
 * The targets' own references are dropped afterwards. */
static void hand_out_requests(vkcu_reader *r, const int64_t *indices, int count, const int64_t *targets, int nt,
                              vkcu_frame **got, vkcu_frame **frames)
{
    for (int k = 0; k < nt; k++)
        vkcu_reader_hand_out(r, got[k]);
    for (int i = 0; i < count; i++) {
        int lo = 0, hi = nt - 1;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (targets[mid] < indices[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        frames[i] = vkcu_frame_ref(got[lo]);
    }
    for (int k = 0; k < nt; k++)
        vkcu_frame_unref(&got[k]);
}

int vkcu_reader_seek_frames(vkcu_reader *r, const int64_t *indices, int count, vkcu_frame **frames, char *err,
                            size_t errlen)
{
    char line[640] = "";
    int ret = 0, saved = -1;
    reader_seek *s = NULL;
    if ((ret = seek_frames_check(r, indices, count, &s, err, errlen)) < 0)
        return ret;
    int64_t *targets = av_malloc_array((size_t)count, sizeof(*targets));
    vkcu_frame **got = av_calloc((size_t)count, sizeof(*got));
    int nt = 0, pushed = 0, popped = 0;
    if (!targets || !got) {
        ret = vkcu_reader_fail(AVERROR(ENOMEM), err, errlen, "out of memory");
        goto done;
    }
    nt = distinct_targets(indices, count, targets);
    int held = vkcu_reader_held(r);
    if (!r->p.detach && held + nt > r->p.max_held) {
        snprintf(line, sizeof(line), "%s: %d frames asked for while %d are held: more than %s allows (ask for fewer "
                 "at a time, release frames, or copy them out with %s)", r->input, nt, held, VKCU_SETTING("max_held"),
                 VKCU_SETTING_IS("detach", "1"));
        ret = vkcu_reader_fail(AVERROR(ENOBUFS), err, errlen, line);
        goto done;
    }
    if (!s->dec) {
        s->setups++;
        if ((ret = open_decoding(r, s, line, sizeof(line))) < 0) {
            if (!line[0])
                snprintf(line, sizeof(line), "%s: cannot open the decoder", r->input);
            goto fail;
        }
    }
    if (s->gpu)
        saved = vkcu_cuda_enter(s->jp.settings.device);
    for (int k = 0; k < nt; k++) {
        if ((ret = decode_target(r, s, targets[k], line, sizeof(line))) < 0)
            goto fail;
        if ((ret = chain_target(r, s, k, targets, got, &popped, &pushed, line, sizeof(line))) < 0)
            goto fail;
    }
    if (s->gpu && (ret = gpu_collect(r, s, 1, targets, got, &popped, line, sizeof(line))) < 0)
        goto fail;
    for (int k = 0; k < nt; k++)
        if (!got[k]) {
            snprintf(line, sizeof(line), "%s: frame %lld: the chain gave no frame", r->input, (long long)targets[k]);
            ret = AVERROR_BUG;
            goto fail;
        }
    (void)pushed;
    hand_out_requests(r, indices, count, targets, nt, got, frames);
    ret = 0;
    goto out;
fail:
    if (!line[0]) { /* every step names itself; this is the net under them */
        char buf[128];
        snprintf(line, sizeof(line), "%s: random access failed after %d of %d frames: %s", r->input, popped, nt,
                 vkcu_err_str(ret, buf, sizeof(buf)));
    }
    /* The decoder's state is unknown after a failure: the next call starts afresh. */
    vkcu_reader_fail(ret, err, errlen, line);
    for (int k = 0; k < nt; k++)
        vkcu_frame_unref(&got[k]);
    seek_close_decoding(s);
out:
    vkcu_cuda_leave(saved, s->jp.settings.device);
    vkcu_pool_thread_release(); /* the operators' row workers end with the call */
    pthread_mutex_lock(&r->acct->lock);
    if (s->path != VKCU_PATH_NONE)
        r->st.path = s->path;
    pthread_mutex_unlock(&r->acct->lock);
done:
    av_free(targets);
    av_free(got);
    return ret;
}

void vkcu_reader_seek_stats(vkcu_reader *r, vkcu_reader_stats *st)
{
    reader_seek *s = r->seek;
    if (!s)
        return;
    st->random_decoded = s->decoded;
    st->random_seeks = s->seeks;
    st->random_setups = s->setups;
    st->imports += s->gpu_done.imports;
    st->dtod_copies += s->gpu_done.dtod_copies;
    st->htod_bytes += s->gpu_done.htod_bytes;
    st->dtoh_bytes += s->gpu_done.dtoh_bytes;
    if (s->gpu) {
        vkcu_job_result now = { 0 };
        vkcu_gpu_stats(s->gpu, &now);
        vkcu_reader_gpu_add(st, &now);
    }
}
