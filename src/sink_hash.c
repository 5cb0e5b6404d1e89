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
#include <inttypes.h>
#include <string.h>
#include <libavutil/crc.h>
#include <libavutil/hash.h>
#include <libavutil/imgutils.h>
#include <libavutil/intreadwrite.h>
#include <libavutil/pixdesc.h>

#include "log.h"
#include "stage.h"
#include "xxhash64.h"

typedef struct hash_sink {
    AVRational in_tb, out_tb;
    int64_t start;      /* stream start, in in_tb */
    int64_t frames;
} hash_sink;

static const char *algo_name(enum vkcu_hash_algo a)
{
    return a == VKCU_HASH_CRC32 ? "CRC32" : a == VKCU_HASH_XXH64 ? "XXH64" : "MD5";
}

/* Feeds the packed rows of every plane to `update`. */
static void walk_rows(const AVFrame *f, void (*update)(void *, const uint8_t *, size_t), void *ctx, int *size)
{
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(f->format);
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

int vkcu_frame_hash(const AVFrame *frame, enum vkcu_hash_algo algo, char *hex, size_t hexlen, int *size)
{
    if (algo == VKCU_HASH_XXH64) {
        vkcu_xxh64_state st;
        vkcu_xxh64_init(&st, 0);
        walk_rows(frame, xxh_update, &st, size);
        snprintf(hex, hexlen, "%016" PRIx64, vkcu_xxh64_digest(&st));
        return 0;
    }
    struct AVHashContext *h = NULL;
    int ret = av_hash_alloc(&h, algo == VKCU_HASH_CRC32 ? "CRC32" : "MD5");
    if (ret < 0)
        return ret;
    av_hash_init(h);
    walk_rows(frame, md5_update, h, size);
    av_hash_final_hex(h, (uint8_t *)hex, (int)hexlen);
    av_hash_freep(&h);
    return 0;
}

static int hash_open(vkcu_sink *s, const vkcu_video_format *fmt, AVRational tb)
{
    hash_sink *h = s->priv;
    vkcu_demux *d = s->demux;
    h->in_tb = tb;
    h->out_tb = d->frame_rate.num > 0 ? av_inv_q(d->frame_rate) : tb;
    h->start = d->fmt->start_time != AV_NOPTS_VALUE ? av_rescale_q(d->fmt->start_time, AV_TIME_BASE_Q, tb) : 0;
    FILE *o = s->params->hash_out;
    if (s->params->hash_format == VKCU_HASH_FORMAT_JSON) {
        fprintf(o, "{\"type\":\"header\",\"input\":\"%s\",\"hash\":\"%s\",\"tb\":\"%d/%d\",\"pix_fmt\":\"%s\",\"width\":%d,\"height\":%d}\n",
                d->path, algo_name(s->params->hash_algo), h->out_tb.num, h->out_tb.den,
                av_get_pix_fmt_name(fmt->pix_fmt), fmt->width, fmt->height);
    } else {
        fprintf(o, "#format: frame checksums\n#version: 2\n#hash: %s\n#software: vkcu (%s)\n",
                algo_name(s->params->hash_algo), av_get_pix_fmt_name(fmt->pix_fmt));
        fprintf(o, "#tb 0: %d/%d\n#media_type 0: video\n#codec_id 0: rawvideo\n#dimensions 0: %dx%d\n",
                h->out_tb.num, h->out_tb.den, fmt->width, fmt->height);
        AVRational sar = s->demux->video->codecpar->sample_aspect_ratio;
        fprintf(o, "#sar 0: %d/%d\n#stream#, dts,        pts, duration,     size, hash\n", sar.num, sar.num ? sar.den : 1);
    }
    return 0;
}

static int hash_write(vkcu_sink *s, AVFrame *frame)
{
    hash_sink *h = s->priv;
    char hex[AV_HASH_MAX_SIZE * 2 + 1];
    int size = 0;
    int ret = vkcu_frame_hash(frame, s->params->hash_algo, hex, sizeof(hex), &size);
    if (ret < 0)
        return ret;
    int64_t pts = frame->pts != AV_NOPTS_VALUE ? av_rescale_q(frame->pts - h->start, h->in_tb, h->out_tb) : h->frames;
    int64_t dur = frame->duration > 0 ? av_rescale_q(frame->duration, h->in_tb, h->out_tb) : 1;
    if (dur <= 0)
        dur = 1;
    FILE *o = s->params->hash_out;
    if (s->params->hash_format == VKCU_HASH_FORMAT_JSON)
        fprintf(o, "{\"frame\":%" PRId64 ",\"pts\":%" PRId64 ",\"duration\":%" PRId64 ",\"size\":%d,\"hash\":\"%s\"}\n",
                h->frames, pts, dur, size, hex);
    else
        fprintf(o, "0, %10" PRId64 ", %10" PRId64 ", %8" PRId64 ", %8d, %s\n", pts, pts, dur, size, hex);
    h->frames++;
    if (ferror(o)) {
        snprintf(s->err, s->errlen, "cannot write hashes: output error");
        return VKCU_ERR_OUTPUT;
    }
    return 0;
}

static int hash_close(vkcu_sink *s, int ok)
{
    (void)ok;
    return fflush(s->params->hash_out) ? VKCU_ERR_OUTPUT : 0;
}

const vkcu_sink_class vkcu_sink_hash = {
    .name = "hash",
    .priv_size = sizeof(hash_sink),
    .open = hash_open,
    .write_frame = hash_write,
    .close = hash_close,
};

static int null_open(vkcu_sink *s, const vkcu_video_format *fmt, AVRational tb)
{
    (void)s, (void)fmt, (void)tb;
    return 0;
}
static int null_write(vkcu_sink *s, AVFrame *frame)
{
    (void)s, (void)frame;
    return 0;
}
static int null_close(vkcu_sink *s, int ok)
{
    (void)s, (void)ok;
    return 0;
}

const vkcu_sink_class vkcu_sink_null = {
    .name = "null",
    .open = null_open,
    .write_frame = null_write,
    .close = null_close,
};
