/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * VMAF through libvmaf (vmaf.h): the scorer, its CPU path and host frames;
 * the GPU side is vmaf_cuda.c. On the CPU, libvmaf's worker threads each
 * take a whole frame's spatial features (VIF, ADM) while the motion
 * feature runs in order on the calling thread, so the scores are those of
 * one thread (tests/unit/test_vmaf.c checks it); pictures then come from
 * libvmaf's pool, whose fetch waits for a free one, so a fast decoder
 * cannot queue frames without bound. Scores are read only after the final
 * flush, because libvmaf's motion feature of a frame needs the frame after
 * it and is settled only when the stream ends.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/pixdesc.h>

#include "core/vkcu.h"
#include "util/log.h"
#include "util/thread.h"
#include "vmaf.h"

void vkcu_vmaf_missing(const char *what, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: this vkcu was built without libvmaf (Debian has no libvmaf package): build libvmaf "
             "outside the checkout and rebuild vkcu with 'make VMAF_PREFIX=DIR' (docs/regression.md, VMAF)", what);
}

#ifndef HAVE_LIBVMAF

int vkcu_vmaf_available(void)
{
    return 0;
}

int vkcu_vmaf_cuda_built(void)
{
    return 0;
}

void vkcu_vmaf_describe(char *buf, size_t n)
{
    snprintf(buf, n, "not built in (compare's %s and the manifest key min-vmaf need libvmaf: docs/regression.md, "
             "VMAF)", VKCU_SETTING("vmaf"));
}

int vkcu_vmaf_open(vkcu_vmaf **v, const vkcu_vmaf_params *p, char *err, size_t errlen)
{
    (void)p;
    *v = NULL;
    vkcu_vmaf_missing(VKCU_SETTING("vmaf"), err, errlen);
    return VKCU_ERR_USAGE;
}

const char *vkcu_vmaf_engine(const vkcu_vmaf *v)
{
    (void)v;
    return "libvmaf not built in";
}

int vkcu_vmaf_on_gpu(const vkcu_vmaf *v)
{
    (void)v;
    return 0;
}

int vkcu_vmaf_add(vkcu_vmaf *v, const AVFrame *ref, const AVFrame *dist, char *err, size_t errlen)
{
    (void)v, (void)ref, (void)dist;
    vkcu_vmaf_missing(VKCU_SETTING("vmaf"), err, errlen);
    return VKCU_ERR_USAGE;
}

int vkcu_vmaf_add_device(vkcu_vmaf *v, const vkcu_vmaf_device_frame *ref, const vkcu_vmaf_device_frame *dist,
                         void *stream, char *err, size_t errlen)
{
    (void)v, (void)ref, (void)dist, (void)stream;
    vkcu_vmaf_missing(VKCU_SETTING("vmaf"), err, errlen);
    return VKCU_ERR_USAGE;
}

int vkcu_vmaf_finish(vkcu_vmaf *v, double **scores, int64_t *n, double *mean, char *err, size_t errlen)
{
    (void)v, (void)mean;
    *scores = NULL;
    *n = 0;
    vkcu_vmaf_missing(VKCU_SETTING("vmaf"), err, errlen);
    return VKCU_ERR_USAGE;
}

void vkcu_vmaf_close(vkcu_vmaf **v)
{
    *v = NULL;
}

#else

#include <math.h>
#include <libswscale/swscale.h>

#include "vmaf_priv.h"

int vkcu_vmaf_available(void)
{
    return 1;
}

int vkcu_vmaf_cuda_built(void)
{
#ifdef HAVE_LIBVMAF_CUDA
    return 1;
#else
    return 0;
#endif
}

void vkcu_vmaf_describe(char *buf, size_t n)
{
    snprintf(buf, n, "libvmaf %s, model %s built in%s", vmaf_version(), VKCU_VMAF_MODEL,
             vkcu_vmaf_cuda_built() ? ", CUDA backend built in" : "");
}

int vkcu_vmaf_open(vkcu_vmaf **out, const vkcu_vmaf_params *params, char *err, size_t errlen)
{
    vkcu_vmaf_params p = params ? *params : VKCU_VMAF_PARAMS_DEFAULT;
    vkcu_vmaf *v = calloc(1, sizeof(*v));
    *out = NULL;
    if (!v)
        return AVERROR(ENOMEM);
    char why[256] = "";
    int want_gpu = p.gpu;
#ifndef HAVE_LIBVMAF_CUDA
    if (want_gpu) {
        snprintf(why, sizeof(why), "this libvmaf was built without it (tools/deps.sh builds it where nvcc is)");
        want_gpu = 0;
    }
#endif
    int cpus = p.threads > 0 ? p.threads : vkcu_cpu_count();
#ifdef HAVE_LIBVMAF_CUDA
    if (want_gpu)
        vkcu_vmaf_cuda_open(&v->cuda, p.device, why, sizeof(why));
#endif
    /* On the GPU every feature of the model runs there; worker threads would only wait. */
    v->threads = v->cuda || cpus <= 1 ? 0 : cpus;
    VmafConfiguration cfg = { .log_level = VMAF_LOG_LEVEL_NONE, .n_threads = (unsigned)v->threads, .n_subsample = 1 };
    VmafModelConfig mcfg = { .name = "vmaf", .flags = VMAF_MODEL_FLAGS_DEFAULT };
    if (vmaf_init(&v->ctx, cfg) < 0) {
        snprintf(err, errlen, "%s: libvmaf %s cannot start", VKCU_SETTING("vmaf"), vmaf_version());
        vkcu_vmaf_close(&v);
        return AVERROR(ENOMEM);
    }
#ifdef HAVE_LIBVMAF_CUDA
    /* Before the model picks its feature extractors: the CUDA ones when a CUDA state is there. */
    if (v->cuda)
        vkcu_vmaf_cuda_import(v->cuda, v->ctx);
#endif
    if (vmaf_model_load(&v->model, &mcfg, VKCU_VMAF_MODEL) < 0) {
        snprintf(err, errlen, "%s: libvmaf %s has no built-in model %s (build it with the meson option "
                 "built_in_models=true)", VKCU_SETTING("vmaf"), vmaf_version(), VKCU_VMAF_MODEL);
        vkcu_vmaf_close(&v);
        return VKCU_ERR_USAGE;
    }
    if (vmaf_use_features_from_model(v->ctx, v->model) < 0) {
        snprintf(err, errlen, "%s: libvmaf %s cannot set up the features of %s", VKCU_SETTING("vmaf"), vmaf_version(), VKCU_VMAF_MODEL);
        vkcu_vmaf_close(&v);
        return AVERROR(EINVAL);
    }
#ifdef HAVE_LIBVMAF_CUDA
    if (v->cuda)
        snprintf(v->engine, sizeof(v->engine), "libvmaf %s on the GPU (CUDA device %d, %s)", vmaf_version(), p.device,
                 vkcu_vmaf_cuda_device_name(v->cuda));
    else
#endif
        snprintf(v->engine, sizeof(v->engine), "libvmaf %s on the CPU, %d thread%s%s%s%s", vmaf_version(),
                 v->threads ? v->threads : 1, v->threads > 1 ? "s" : "",
                 why[0] ? " (libvmaf's CUDA backend is not available: " : "", why, why[0] ? ")" : "");
    *out = v;
    return 0;
}

const char *vkcu_vmaf_engine(const vkcu_vmaf *v)
{
    return v->engine;
}

int vkcu_vmaf_on_gpu(const vkcu_vmaf *v)
{
    return v->cuda != NULL;
}

/* A libvmaf picture holding frame f's three planes (f in v->fmt): from
 * libvmaf's pool with worker threads (waiting for one to be free), else
 * allocated. */
static int to_picture(vkcu_vmaf *v, const AVFrame *f, VmafPicture *pic)
{
    if (v->pooled ? vmaf_fetch_preallocated_picture(v->ctx, pic) < 0
                  : vmaf_picture_alloc(pic, v->vfmt, (unsigned)v->bpc, (unsigned)v->w, (unsigned)v->h) < 0)
        return AVERROR(ENOMEM);
    size_t bytes = v->bpc > 8 ? 2 : 1;
    for (int p = 0; p < 3; p++)
        for (unsigned y = 0; y < pic->h[p]; y++)
            memcpy((uint8_t *)pic->data[p] + (ptrdiff_t)y * pic->stride[p],
                   f->data[p] + (ptrdiff_t)y * f->linesize[p], pic->w[p] * bytes);
    return 0;
}

static const AVFrame *convert(vkcu_vmaf *v, int k, const AVFrame *f)
{
    if (f->format == v->fmt)
        return f;
    AVFrame *c = v->conv[k];
    if (!c && !(c = v->conv[k] = av_frame_alloc()))
        return NULL;
    if (!c->data[0]) {
        c->width = v->w;
        c->height = v->h;
        c->format = v->fmt;
        if (av_frame_get_buffer(c, 0) < 0)
            return NULL;
    }
    /* FFmpeg's default for the conversions it inserts before a filter. */
    v->sws = sws_getCachedContext(v->sws, v->w, v->h, v->in_fmt, v->w, v->h, v->fmt, SWS_BICUBIC, NULL, NULL, NULL);
    if (!v->sws || sws_scale(v->sws, (const uint8_t *const *)f->data, f->linesize, 0, v->h, c->data, c->linesize) < 0)
        return NULL;
    return c;
}

int vkcu_vmaf_add(vkcu_vmaf *v, const AVFrame *ref, const AVFrame *dist, char *err, size_t errlen)
{
    if (v->pairs == VMAF_PAIRS_DEVICE) {
        snprintf(err, errlen, "%s: pair %" PRId64 " is in host memory and earlier pairs were on the GPU: one scorer "
                 "takes one kind", VKCU_SETTING("vmaf"), v->n);
        return VKCU_ERR_USAGE;
    }
    if (v->n == 0) {
        int direct;
        v->w = ref->width;
        v->h = ref->height;
        v->in_fmt = ref->format;
        if (vkcu_vmaf_pick_layout(ref->format, &v->fmt, &v->vfmt, &v->bpc, &direct) < 0) {
            snprintf(err, errlen, "%s: libvmaf cannot score %s frames", VKCU_SETTING("vmaf"), av_get_pix_fmt_name(ref->format));
            return VKCU_ERR_USAGE;
        }
        if (direct)
            v->fmt = v->in_fmt;
        if (v->threads > 0) {
            /* Room for a pair per worker, one being filled and the two
             * earlier references the motion feature keeps (the vmaf tool's
             * count). */
            VmafPictureConfiguration pc = {
                .pic_params = { .w = (unsigned)v->w, .h = (unsigned)v->h, .bpc = (unsigned)v->bpc, .pix_fmt = v->vfmt },
                .pic_cnt = (unsigned)(v->threads + 1) * 2 + 1,
            };
            if (vmaf_preallocate_pictures(v->ctx, pc) < 0)
                return AVERROR(ENOMEM);
            v->pooled = 1;
        }
        v->pairs = VMAF_PAIRS_HOST;
    }
    if (ref->width != v->w || ref->height != v->h || ref->format != v->in_fmt || dist->width != v->w ||
        dist->height != v->h || dist->format != v->in_fmt) {
        snprintf(err, errlen, "%s: pair %" PRId64 " is %dx%d %s; earlier pairs were %dx%d %s, and libvmaf scores one "
                 "picture format per run", VKCU_SETTING("vmaf"), v->n, ref->width, ref->height, av_get_pix_fmt_name(ref->format), v->w, v->h,
                 av_get_pix_fmt_name(v->in_fmt));
        return VKCU_ERR_INPUT;
    }
    const AVFrame *r = convert(v, 0, ref), *d = r ? convert(v, 1, dist) : NULL;
    if (!r || !d) {
        snprintf(err, errlen, "%s: cannot convert %s frames to %s for libvmaf", VKCU_SETTING("vmaf"), av_get_pix_fmt_name(v->in_fmt),
                 av_get_pix_fmt_name(v->fmt));
        return AVERROR(ENOMEM);
    }
    VmafPicture pr, pd;
    if (to_picture(v, r, &pr) < 0)
        return AVERROR(ENOMEM);
    if (to_picture(v, d, &pd) < 0) {
        vmaf_picture_unref(&pr);
        return AVERROR(ENOMEM);
    }
    /* libvmaf owns both pictures from here on. */
    if (vmaf_read_pictures(v->ctx, &pr, &pd, (unsigned)v->n) < 0) {
        snprintf(err, errlen, "%s: libvmaf failed on pair %" PRId64 " (%dx%d %s)", VKCU_SETTING("vmaf"), v->n, v->w, v->h,
                 av_get_pix_fmt_name(v->fmt));
        return AVERROR(EINVAL);
    }
    v->n++;
    return 0;
}

int vkcu_vmaf_finish(vkcu_vmaf *v, double **scores, int64_t *n, double *mean, char *err, size_t errlen)
{
    *scores = NULL;
    *n = 0;
    *mean = NAN;
    if (!v->n)
        return 0;
    if (vmaf_read_pictures(v->ctx, NULL, NULL, 0) < 0) {
        snprintf(err, errlen, "%s: libvmaf failed at the end of the stream", VKCU_SETTING("vmaf"));
        return AVERROR(EINVAL);
    }
    double *s = malloc((size_t)v->n * sizeof(*s));
    if (!s)
        return AVERROR(ENOMEM);
    for (int64_t i = 0; i < v->n; i++)
        if (vmaf_score_at_index(v->ctx, v->model, &s[i], (unsigned)i) < 0) {
            snprintf(err, errlen, "%s: libvmaf gave no score for pair %" PRId64, VKCU_SETTING("vmaf"), i);
            free(s);
            return AVERROR(EINVAL);
        }
    if (vmaf_score_pooled(v->ctx, v->model, VMAF_POOL_METHOD_MEAN, mean, 0, (unsigned)(v->n - 1)) < 0) {
        snprintf(err, errlen, "%s: libvmaf gave no pooled score", VKCU_SETTING("vmaf"));
        free(s);
        return AVERROR(EINVAL);
    }
    *scores = s;
    *n = v->n;
    return 0;
}

void vkcu_vmaf_close(vkcu_vmaf **pv)
{
    vkcu_vmaf *v = *pv;
    if (!v)
        return;
    if (v->model)
        vmaf_model_destroy(v->model);
    if (v->ctx)
        vmaf_close(v->ctx);
#ifdef HAVE_LIBVMAF_CUDA
    vkcu_vmaf_cuda_close(&v->cuda);
#endif
    sws_freeContext(v->sws);
    av_frame_free(&v->conv[0]);
    av_frame_free(&v->conv[1]);
    free(v);
    *pv = NULL;
}

#ifndef HAVE_LIBVMAF_CUDA
int vkcu_vmaf_add_device(vkcu_vmaf *v, const vkcu_vmaf_device_frame *ref, const vkcu_vmaf_device_frame *dist,
                         void *stream, char *err, size_t errlen)
{
    (void)v, (void)ref, (void)dist, (void)stream;
    snprintf(err, errlen, "%s: this libvmaf has no CUDA backend, so it scores host frames only", VKCU_SETTING("vmaf"));
    return VKCU_ERR_USAGE;
}
#endif

#endif
