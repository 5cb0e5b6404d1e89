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
 * Frames are reference counted and may be released on any thread, after the
 * reader is closed too: the count of held frames lives in reader_acct,
 * which the last frame frees.
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

int vkcu_reader_fail(int ret, char *err, size_t errlen, const char *line)
{
    if (ret == VKCU_ERR_PIPE_CLOSED)
        return ret;
    LOGE("%s", line[0] ? line : "reader failed");
    if (err && errlen && err != line)
        snprintf(err, errlen, "%s", line[0] ? line : "reader failed");
    return ret;
}

/* ---- accounting ---- */

static reader_acct *acct_new(void)
{
    reader_acct *a = calloc(1, sizeof(*a));
    if (!a)
        return NULL;
    pthread_mutex_init(&a->lock, NULL);
    a->refs = 1;
    return a;
}

static void acct_unref(reader_acct *a, int was_held)
{
    pthread_mutex_lock(&a->lock);
    if (was_held)
        a->held--;
    int last = --a->refs == 0;
    pthread_mutex_unlock(&a->lock);
    if (last) {
        pthread_mutex_destroy(&a->lock);
        free(a);
    }
}

int vkcu_reader_held(vkcu_reader *r)
{
    pthread_mutex_lock(&r->acct->lock);
    int n = r->acct->held;
    pthread_mutex_unlock(&r->acct->lock);
    return n;
}

/* ---- layouts and host copies ---- */

/* Semi-planar and MSB-aligned layouts are handed out (and hashed) as their
 * planar twin: sink_hash.c's rule. */
static int needs_planarising(const AVPixFmtDescriptor *d)
{
    if (d->flags & AV_PIX_FMT_FLAG_RGB || d->nb_components < 3)
        return 0;
    return d->comp[1].plane == d->comp[2].plane || d->comp[0].shift || d->comp[1].shift;
}

static enum AVPixelFormat planar_twin(enum AVPixelFormat fmt)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    if (!d || !needs_planarising(d))
        return fmt;
    for (const AVPixFmtDescriptor *c = av_pix_fmt_desc_next(NULL); c; c = av_pix_fmt_desc_next(c)) {
        const uint64_t bad = AV_PIX_FMT_FLAG_BE | AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_HWACCEL |
                             AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_FLOAT |
                             AV_PIX_FMT_FLAG_BAYER;
        if (!(c->flags & AV_PIX_FMT_FLAG_PLANAR) || (c->flags & bad) || c->nb_components != d->nb_components ||
            c->log2_chroma_w != d->log2_chroma_w || c->log2_chroma_h != d->log2_chroma_h)
            continue;
        int ok = 1;
        for (int i = 0; i < c->nb_components && ok; i++)
            ok = c->comp[i].plane == i && !c->comp[i].shift && !c->comp[i].offset &&
                 c->comp[i].depth == d->comp[i].depth && c->comp[i].step == (d->comp[i].depth > 8 ? 2 : 1);
        if (ok)
            return av_pix_fmt_desc_get_id(c);
    }
    return AV_PIX_FMT_NONE;
}

static int layout_for(reader_layout *l, enum AVPixelFormat src_fmt, int w, int h)
{
    memset(l, 0, sizeof(*l));
    l->src_fmt = src_fmt;
    l->fmt = planar_twin(src_fmt);
    l->width = w;
    l->height = h;
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(l->fmt);
    if (!d || (d->flags & AV_PIX_FMT_FLAG_HWACCEL) || av_image_fill_linesizes(l->row_bytes, l->fmt, w) < 0)
        return AVERROR(ENOSYS);
    l->nb_planes = av_pix_fmt_count_planes(l->fmt);
    size_t off = 0;
    for (int p = 0; p < l->nb_planes; p++) {
        l->linesize[p] = FFALIGN(l->row_bytes[p], 64);
        l->rows[p] = (p == 1 || p == 2) ? AV_CEIL_RSHIFT(h, d->log2_chroma_h) : h;
        l->offset[p] = off;
        off += (size_t)l->linesize[p] * l->rows[p];
    }
    l->size = off;
    return 0;
}

void vkcu_reader_hostpool_free(reader_hostpool *hp)
{
    av_buffer_pool_uninit(&hp->pool);
    memset(&hp->layout, 0, sizeof(hp->layout));
}

static AVBufferRef *zeroed_alloc(size_t size)
{
    return av_buffer_allocz(size);
}

/* src's visible picture in hp's layout, in a buffer of the pool (own = 0)
 * or of its own. */
static int host_copy(reader_hostpool *hp, const AVFrame *src, int own, AVFrame **out, char *err, size_t errlen)
{
    reader_layout *l = &hp->layout;
    int ret;
    *out = NULL;
    if (!l->size || l->src_fmt != src->format || l->width != src->width || l->height != src->height) {
        vkcu_reader_hostpool_free(hp);
        if ((ret = layout_for(l, src->format, src->width, src->height)) < 0) {
            const char *name = av_get_pix_fmt_name(src->format);
            snprintf(err, errlen, "frames of layout %s cannot be handed out (no planar equivalent)",
                     name ? name : "unknown");
            memset(l, 0, sizeof(*l));
            return VKCU_ERR_INPUT;
        }
        if (!(hp->pool = av_buffer_pool_init(l->size, zeroed_alloc)))
            goto nomem;
    }
    AVFrame *f = av_frame_alloc();
    if (!f)
        goto nomem;
    f->buf[0] = own ? av_buffer_allocz(l->size) : av_buffer_pool_get(hp->pool);
    if (!f->buf[0]) {
        av_frame_free(&f);
        goto nomem;
    }
    f->format = l->fmt;
    f->width = l->width;
    f->height = l->height;
    for (int p = 0; p < l->nb_planes; p++) {
        f->data[p] = f->buf[0]->data + l->offset[p];
        f->linesize[p] = l->linesize[p];
    }
    if (l->fmt == src->format) {
        for (int p = 0; p < l->nb_planes; p++)
            av_image_copy_plane(f->data[p], f->linesize[p], src->data[p], src->linesize[p], l->row_bytes[p],
                                l->rows[p]);
    } else {
        /* Component by component into the planar twin, samples moved as they
         * are. av_write_image_line2 ORs samples in: the planes start zeroed. */
        memset(f->buf[0]->data, 0, l->size);
        const AVPixFmtDescriptor *sd = av_pix_fmt_desc_get(src->format), *dd = av_pix_fmt_desc_get(l->fmt);
        uint16_t *row = av_malloc_array(l->width, sizeof(*row));
        if (!row) {
            av_frame_free(&f);
            goto nomem;
        }
        const uint8_t *sdata[4] = { src->data[0], src->data[1], src->data[2], src->data[3] };
        const int slines[4] = { src->linesize[0], src->linesize[1], src->linesize[2], src->linesize[3] };
        for (int c = 0; c < dd->nb_components; c++) {
            int w = c == 1 || c == 2 ? AV_CEIL_RSHIFT(l->width, dd->log2_chroma_w) : l->width;
            int h = c == 1 || c == 2 ? AV_CEIL_RSHIFT(l->height, dd->log2_chroma_h) : l->height;
            for (int y = 0; y < h; y++) {
                av_read_image_line2(row, sdata, slines, sd, 0, y, c, w, 0, 2);
                av_write_image_line2(row, f->data, f->linesize, dd, 0, y, c, w, 2);
            }
        }
        av_free(row);
    }
    *out = f;
    return 0;
nomem:
    snprintf(err, errlen, "out of memory");
    return AVERROR(ENOMEM);
}

/* ---- frames ---- */

/* The planes of o->av, as the public struct describes them. */
static void frame_bind(struct vkcu_frame_priv *o)
{
    vkcu_frame *f = &o->pub;
    const AVFrame *av = o->av;
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(av->format);
    int row_bytes[4] = { 0 };
    av_image_fill_linesizes(row_bytes, av->format, av->width);
    f->width = av->width;
    f->height = av->height;
    f->format = av_get_pix_fmt_name(av->format);
    f->nb_planes = av_pix_fmt_count_planes(av->format);
    for (int p = 0; p < 4; p++) {
        int in = p < f->nb_planes;
        f->data[p] = in ? av->data[p] : NULL;
        f->linesize[p] = in ? av->linesize[p] : 0;
        f->row_bytes[p] = in ? row_bytes[p] : 0;
        f->rows[p] = !in ? 0 : (p == 1 || p == 2) ? AV_CEIL_RSHIFT(av->height, d->log2_chroma_h) : av->height;
    }
    f->bytes_per_sample = d->comp[0].depth > 16 ? 4 : d->comp[0].depth > 8 ? 2 : 1;
    f->components = 1;
    if (!(d->flags & (AV_PIX_FMT_FLAG_PLANAR | AV_PIX_FMT_FLAG_BITSTREAM)) && d->nb_components > 1 &&
        d->comp[0].step > f->bytes_per_sample)
        f->components = d->comp[0].step / f->bytes_per_sample;
    f->device = vkcu_frame_cuda_device(av);
    f->memory = f->device >= 0 ? VKCU_MEMORY_CUDA : VKCU_MEMORY_HOST;
    f->priv = o;
}

static vkcu_frame *frame_wrap(AVFrame *av)
{
    struct vkcu_frame_priv *o = calloc(1, sizeof(*o));
    if (!o) {
        av_frame_free(&av);
        return NULL;
    }
    atomic_init(&o->refs, 1);
    o->av = av;
    frame_bind(o);
    return &o->pub;
}

int vkcu_reader_frame_make(vkcu_reader *r, reader_hostpool *hp, const AVFrame *src, int64_t index, AVRational tb,
                           vkcu_frame **out, char *err, size_t errlen)
{
    AVFrame *av = NULL;
    int ret = 0;
    *out = NULL;
    if (vkcu_frame_cuda_device(src) >= 0) {
        if (r->p.detach)
            ret = vkcu_frame_cuda_copy(src, &av, err, errlen);
        else if (!(av = av_frame_clone(src)))
            ret = AVERROR(ENOMEM);
    } else {
        ret = host_copy(hp, src, r->p.detach, &av, err, errlen);
    }
    if (ret < 0) {
        if (ret == AVERROR(ENOMEM))
            snprintf(err, errlen, "out of memory");
        return ret;
    }
    vkcu_frame *f = frame_wrap(av);
    if (!f) {
        snprintf(err, errlen, "out of memory");
        return AVERROR(ENOMEM);
    }
    f->index = index;
    f->pts = src->pts;
    f->duration = src->duration > 0 ? src->duration : 0;
    f->tb_num = tb.num;
    f->tb_den = tb.den;
    f->key_frame = !!(src->flags & AV_FRAME_FLAG_KEY);
    f->interlaced = !!(src->flags & AV_FRAME_FLAG_INTERLACED);
    f->top_field_first = !!(src->flags & AV_FRAME_FLAG_TOP_FIELD_FIRST);
    f->corrupt = (src->flags & AV_FRAME_FLAG_CORRUPT) || src->decode_error_flags;
    /* A detached copy is counted when the caller receives it
     * (vkcu_reader_hand_out): iteration makes frames ahead of the caller,
     * as many as its queue holds, and how many depends on timing. */
    *out = f;
    return 0;
}

void vkcu_reader_hand_out(vkcu_reader *r, vkcu_frame *f)
{
    struct vkcu_frame_priv *o = f->priv;
    pthread_mutex_lock(&r->acct->lock);
    if (!r->p.detach && !o->acct) {
        o->acct = r->acct;
        r->acct->refs++;
        if (++r->acct->held > r->acct->max_seen)
            r->acct->max_seen = r->acct->held;
    }
    r->st.frames++;
    if (r->p.detach)
        r->acct->detached++;
    if (f->memory == VKCU_MEMORY_CUDA)
        r->st.cuda_frames++;
    else if (!r->p.detach)
        r->st.host_copies++;
    pthread_mutex_unlock(&r->acct->lock);
}

vkcu_frame *vkcu_frame_ref(vkcu_frame *f)
{
    if (f)
        atomic_fetch_add(&f->priv->refs, 1);
    return f;
}

void vkcu_frame_unref(vkcu_frame **pf)
{
    if (!pf || !*pf)
        return;
    struct vkcu_frame_priv *o = (*pf)->priv;
    *pf = NULL;
    if (atomic_fetch_sub(&o->refs, 1) != 1)
        return;
    av_frame_free(&o->av);
    if (o->acct)
        acct_unref(o->acct, 1);
    free(o);
}

/* Frame calls fill err only: a frame may outlive its reader and context,
 * whose log callback the line would go to. */
static int frame_fail(int ret, char *err, size_t errlen, const char *line)
{
    if (err && errlen && err != line)
        snprintf(err, errlen, "%s", line);
    return ret;
}

int vkcu_frame_detach(const vkcu_frame *f, vkcu_frame **copy, char *err, size_t errlen)
{
    char line[512] = "";
    AVFrame *av = NULL;
    int ret;
    if (!copy)
        return AVERROR(EINVAL);
    *copy = NULL;
    if (!f)
        return frame_fail(AVERROR(EINVAL), err, errlen, "no frame given");
    const AVFrame *src = f->priv->av;
    if (f->memory == VKCU_MEMORY_CUDA) {
        ret = vkcu_frame_cuda_copy(src, &av, line, sizeof(line));
    } else {
        reader_hostpool hp = { 0 };
        ret = host_copy(&hp, src, 1, &av, line, sizeof(line));
        vkcu_reader_hostpool_free(&hp);
    }
    if (ret < 0)
        return frame_fail(ret, err, errlen, line);
    vkcu_frame *c = frame_wrap(av);
    if (!c)
        return frame_fail(AVERROR(ENOMEM), err, errlen, "out of memory");
    struct vkcu_frame_priv *o = c->priv;
    /* Everything but the memory as the original says. */
    o->pub = *f;
    frame_bind(o);
    if (f->priv->acct) {
        pthread_mutex_lock(&f->priv->acct->lock);
        f->priv->acct->detached++;
        pthread_mutex_unlock(&f->priv->acct->lock);
    }
    *copy = c;
    return 0;
}

/* ---- the reader ---- */

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
        acct_unref(r->acct, 0);
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
        !(r->acct = acct_new())) {
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

void vkcu_reader_gpu_add(vkcu_reader_stats *to, const vkcu_job_result *from)
{
    to->imports += from->imports;
    to->dtod_copies += from->dtod_copies;
    to->htod_bytes += from->htod_bytes;
    to->dtoh_bytes += from->dtoh_bytes;
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
