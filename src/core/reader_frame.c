/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A reader's frames (reader_priv.h), shared by iteration (reader.c) and
 * random access (reader_seek.c): host frames copied once into a buffer of
 * the reader's pool, in the planar layout hashes use (the decoder's and the
 * operators' frames stay theirs: a decoder predicts from the frames it
 * returned, and what the caller does with its copy reaches nothing else);
 * handed out and reference counted.
 *
 * Frames may be released on any thread, after the reader is closed too:
 * the count of held frames lives in reader_acct, which the last frame
 * frees.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>

#include "context.h"
#include "gpu/gpu.h"
#include "reader_priv.h"

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

reader_acct *vkcu_reader_acct_new(void)
{
    reader_acct *a = calloc(1, sizeof(*a));
    if (!a)
        return NULL;
    pthread_mutex_init(&a->lock, NULL);
    a->refs = 1;
    return a;
}

void vkcu_reader_acct_unref(reader_acct *a, int was_held)
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
        vkcu_reader_acct_unref(o->acct, 1);
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

void vkcu_reader_gpu_add(vkcu_reader_stats *to, const vkcu_job_result *from)
{
    to->imports += from->imports;
    to->dtod_copies += from->dtod_copies;
    to->htod_bytes += from->htod_bytes;
    to->dtoh_bytes += from->dtoh_bytes;
}
