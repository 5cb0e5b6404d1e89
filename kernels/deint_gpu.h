/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * C-callable launchers of the `deinterlace` CUDA kernels (kernels/deint.cu),
 * called by src/ops/op_deint.c. Every launcher enqueues on `stream` (a
 * cudaStream_t) and returns 0 or a negative AVERROR; nothing here waits for
 * the GPU.
 *
 * The operator keeps its own pitch-linear copy of each input frame (the
 * interop slot it arrived in is reused by later frames). A plane row holds
 * `samples` samples of `bytes` bytes: interleaved chroma (NV12/P010) is
 * simply twice as many samples, since the filter reads no column but its own.
 */
#ifndef VKCU_DEINT_GPU_H
#define VKCU_DEINT_GPU_H

#include <stddef.h>
#include <stdint.h>
#include "frame.h"

#ifdef __cplusplus
extern "C" {
#endif

int vkcu_di_gpu_alloc_pitch(void **ptr, size_t *pitch, size_t width_bytes, int height);
void vkcu_di_gpu_free(void **ptr);

/* Copies plane `in` (texture or pitch-linear; `comps` interleaved samples
 * of `bytes` bytes per element) into the pitch-linear buffer dst. */
int vkcu_di_gpu_ingest(const vkcu_gpu_plane *in, int comps, int bytes, void *dst, size_t dst_pitch, void *stream);

/* Copies a pitch-linear plane (the deint=interlaced pass-through). */
int vkcu_di_gpu_copy(const void *src, size_t src_pitch, void *dst, size_t dst_pitch, size_t width_bytes, int height,
                void *stream);

typedef struct di_gpu_args {
    const void *prev, *cur, *next; /* the three frames' copies of this plane */
    size_t pitch;                  /* of prev, cur and next */
    void *dst;
    size_t dst_pitch;
    int samples, height;           /* per row; rows */
    int bytes, shift, maxval;      /* sample size; value shift inside it (6: P010); (1 << depth) - 1 */
    int keep;                      /* parity of the lines kept from cur */
    int second;                    /* the second field of cur: a = cur, b = next (else a = prev, b = cur) */
    int boundary;                  /* the stream's first or last field */
} di_gpu_args;

/* One output plane: kept lines copied, the others interpolated. */
int vkcu_di_gpu_filter(const di_gpu_args *a, void *stream);

#ifdef __cplusplus
}
#endif

#endif
