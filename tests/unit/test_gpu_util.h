/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * GPU test and benchmark helpers: a software frame on the device, its planes
 * either pitch-linear memory (what operators hand each other) or CUDA
 * arrays read through texture objects (what the imported interop images
 * are), and the way back. A CUDA error prints where and exits 1.
 */
#ifndef VKCU_TEST_GPU_UTIL_H
#define VKCU_TEST_GPU_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include <libavutil/frame.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>

#include "ops/op.h"
#include "test_util.h"

#define CK(call)                                                                                        \
    do {                                                                                                \
        cudaError_t e_ = (call);                                                                        \
        if (e_ != cudaSuccess) {                                                                        \
            printf("FAIL %s: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__);         \
            exit(1);                                                                                    \
        }                                                                                               \
    } while (0)

typedef struct tg_frame {
    vkcu_gpu_frame g;
    void *mem[4];
    cudaArray_t arr[4];
} tg_frame;

/* Uploads a software frame: pitch-linear planes (arrays = 0) or CUDA arrays
 * with clamped, point-sampled, element-read texture objects (arrays = 1). */
static inline void tg_upload(const AVFrame *src, int arrays, tg_frame *t)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(src->format);
    int bytes = d->comp[0].depth > 8 ? 2 : 1;
    memset(t, 0, sizeof(*t));
    t->g.fmt.pix_fmt = src->format;
    t->g.fmt.width = src->width;
    t->g.fmt.height = src->height;
    t->g.nb_planes = av_pix_fmt_count_planes(src->format);
    t->g.pts = src->pts;
    t->g.duration = src->duration;
    for (int p = 0; p < t->g.nb_planes; p++) {
        /* planes 1 and 2 are chroma; an alpha plane (3) is full size */
        int chroma = p == 1 || p == 2;
        int w = chroma ? AV_CEIL_RSHIFT(src->width, d->log2_chroma_w) : src->width;
        int h = chroma ? AV_CEIL_RSHIFT(src->height, d->log2_chroma_h) : src->height;
        size_t row = (size_t)av_image_get_linesize(src->format, src->width, p);
        vkcu_gpu_plane *pl = &t->g.plane[p];
        pl->width = w, pl->height = h;
        if (!arrays) {
            CK(cudaMallocPitch(&t->mem[p], &pl->pitch, row, h));
            CK(cudaMemcpy2D(t->mem[p], pl->pitch, src->data[p], src->linesize[p], row, h, cudaMemcpyHostToDevice));
            pl->ptr = t->mem[p];
            continue;
        }
        int two = t->g.nb_planes == 2 && p == 1; /* semi-planar Cb/Cr pairs */
        struct cudaChannelFormatDesc cd =
            cudaCreateChannelDesc(8 * bytes, two ? 8 * bytes : 0, 0, 0, cudaChannelFormatKindUnsigned);
        CK(cudaMallocArray(&t->arr[p], &cd, w, h, cudaArraySurfaceLoadStore));
        CK(cudaMemcpy2DToArray(t->arr[p], 0, 0, src->data[p], src->linesize[p], row, h, cudaMemcpyHostToDevice));
        struct cudaResourceDesc rd;
        memset(&rd, 0, sizeof(rd));
        rd.resType = cudaResourceTypeArray;
        rd.res.array.array = t->arr[p];
        struct cudaTextureDesc td;
        memset(&td, 0, sizeof(td));
        td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
        td.filterMode = cudaFilterModePoint;
        td.readMode = cudaReadModeElementType;
        cudaTextureObject_t tex;
        CK(cudaCreateTextureObject(&tex, &rd, &td, NULL));
        pl->tex = tex;
    }
}

static inline void tg_free(tg_frame *t)
{
    for (int p = 0; p < 4; p++) {
        if (t->g.plane[p].tex)
            cudaDestroyTextureObject((cudaTextureObject_t)t->g.plane[p].tex);
        if (t->arr[p])
            cudaFreeArray(t->arr[p]);
        if (t->mem[p])
            cudaFree(t->mem[p]);
    }
    memset(t, 0, sizeof(*t));
}

/* A pitch-linear GPU frame (an operator's output) back into a new software
 * frame of `fmt`, with its timestamps. */
static inline AVFrame *tg_download(const vkcu_gpu_frame *g, enum AVPixelFormat fmt)
{
    AVFrame *f = tu_frame(fmt, g->fmt.width, g->fmt.height);
    if (!f)
        return NULL;
    for (int p = 0; p < g->nb_planes; p++)
        CK(cudaMemcpy2D(f->data[p], f->linesize[p], g->plane[p].ptr, g->plane[p].pitch,
                        (size_t)av_image_get_linesize(fmt, g->fmt.width, p), g->plane[p].height, cudaMemcpyDeviceToHost));
    f->pts = g->pts;
    f->duration = g->duration;
    return f;
}

#endif
