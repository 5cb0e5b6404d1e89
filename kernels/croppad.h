/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `crop` and `pad` as one placement: every output plane is the fill value,
 * except a rectangle that takes the input's elements from (src_x, src_y)
 * on. Crop is a placement at (0, 0) of a window starting inside the input;
 * pad places the whole input at an offset. The host works out one
 * vkcu_place_plane per plane (src/ops/op_croppad.c) and both backends read the
 * same numbers: the CPU reference copies and fills rows, the CUDA kernel
 * (kernels/croppad.cu) decides per element with vkcu_place_source, so the
 * two cannot disagree on where the picture lands.
 *
 * Coordinates are in elements of the plane: a sample, or for semi-planar
 * chroma (NV12, P010) one Cb/Cr pair.
 */
#ifndef VKCU_CROPPAD_H
#define VKCU_CROPPAD_H

#include <stddef.h>
#include <stdint.h>
#include "common.h"
#include "frame.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkcu_place_plane {
    int out_w, out_h;   /* the output plane */
    int dst_x, dst_y;   /* where the copied rectangle starts in the output */
    int copy_w, copy_h; /* its size; 0 when the plane is all fill */
    int src_x, src_y;   /* its first element in the input plane */
    int sample_bytes;   /* 1 or 2 */
    int comps;          /* samples interleaved in an element (2 for NV12/P010 chroma; 3, 4 packed RGB) */
    uint8_t fill[8];    /* one element of the fill colour, as stored (sample_bytes * comps bytes) */
} vkcu_place_plane;

/* Whether output element (x, y) comes from the input; if so *sx, *sy is
 * the input element. */
VKCU_HD int vkcu_place_source(const vkcu_place_plane *g, int x, int y, int *sx, int *sy)
{
    int rx = x - g->dst_x, ry = y - g->dst_y;
    if (rx < 0 || ry < 0 || rx >= g->copy_w || ry >= g->copy_h)
        return 0;
    *sx = g->src_x + rx;
    *sy = g->src_y + ry;
    return 1;
}

/* Enqueues the placement of one plane of `in` into the pitch-linear plane
 * `out` on `stream` (a cudaStream_t). Returns a cudaError_t (0: queued). */
int vkcu_cuda_place(const vkcu_gpu_plane *in, const vkcu_gpu_plane *out, const vkcu_place_plane *g, void *stream);

#ifdef __cplusplus
}
#endif

#endif
