/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * C-callable side of the `scale` CUDA kernels (kernels/scale.cu), called by
 * src/ops/op_scale.c. Launchers enqueue on `stream` (a cudaStream_t) and return
 * 0 or a negative AVERROR; nothing here waits for the GPU.
 */
#ifndef VKCU_SCALE_GPU_H
#define VKCU_SCALE_GPU_H

#include <stddef.h>
#include <stdint.h>
#include "frame.h"
#include "scale_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Output rows per block of the one-pass kernel. */
#define SC_TILE_H 32
/* Shared memory the one-pass kernel may use for a tile's intermediate rows;
 * planes that need more (extreme downscaling) take the two-pass kernels,
 * which give the same bytes. */
#define SC_TILE_SHMEM (48 * 1024)

/* Tile width of both kernels: one warp of output columns. */
#define SC_TILE_W 32

/* A tap table (sc_taps) in device memory. span: the most input samples any
 * 32 (SC_TILE_W = SC_TILE_H) consecutive outputs read; tile: per group of
 * 32 outputs, the first input sample they read and how many (lowest start
 * to highest start + taps). */
typedef struct sc_gpu_taps {
    int taps, span;
    int32_t *start;
    int16_t *w;
    int32_t *tile; /* [2 * groups]: first, count */
} sc_gpu_taps;

int vkcu_sc_gpu_taps_upload(sc_gpu_taps *g, const sc_taps *t);
void vkcu_sc_gpu_taps_free(sc_gpu_taps *g);
int vkcu_sc_gpu_alloc_pitch(void **ptr, size_t *pitch, size_t width_bytes, int height);
void vkcu_sc_gpu_free(void **ptr);

/* One plane: in (in_h rows) -> out (out_w x out_h elements, pitch-linear).
 * One kernel when a tile's intermediate rows fit SC_TILE_SHMEM (pass 1 into
 * shared memory, pass 2 from it), else two: pass 1 into mid (int16,
 * out_w * ncomp per row, in_h rows), pass 2 from it. */
typedef struct sc_gpu_pass {
    int ncomp, bytes, shift, depth;
    void *mid;
    size_t mid_pitch;
    int in_h, out_w, out_h;
    sc_gpu_taps h, v;
} sc_gpu_pass;

int vkcu_sc_gpu_scale_plane(const sc_gpu_pass *a, const vkcu_gpu_plane *in, const vkcu_gpu_plane *out, void *stream);

/* Every plane of a frame (n <= 4; planes 1.. share one layout, as in every
 * supported format). When each plane's tile input window and intermediate
 * rows fit SC_TILE_SHMEM, one launch does them all (the tile's input
 * samples staged in shared memory, each read from the frame about once);
 * else each plane goes through vkcu_sc_gpu_scale_plane. Same bytes either way. */
int vkcu_sc_gpu_scale_frame(const sc_gpu_pass *a, int n, const vkcu_gpu_plane *in, const vkcu_gpu_plane *out,
                       void *stream);

#ifdef __cplusplus
}
#endif

#endif
