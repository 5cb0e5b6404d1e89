/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * C-callable launchers of the denoise CUDA kernels (kernels/denoise.cu),
 * called by src/ops/op_denoise.c. Every launcher enqueues on `stream` (a
 * cudaStream_t) and returns 0 or a negative AVERROR; nothing here waits for
 * the GPU.
 *
 * A "channel" is one colour component of one plane: plane geometry comes
 * from the vkcu_gpu_plane, and (ncomp, comp) say which interleaved component
 * (NV12/P010 chroma hold two). `bytes` is 1 or 2 per sample, `shift` the left
 * shift of the value inside a 16-bit sample (6 for P010, else 0).
 */
#ifndef VKCU_DENOISE_GPU_H
#define VKCU_DENOISE_GPU_H

#include <stddef.h>
#include <stdint.h>
#include "frame.h"
#include "denoise_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device memory for the operator's own planes and state. */
int vkcu_dn_gpu_alloc_pitch(void **ptr, size_t *pitch, size_t width_bytes, int height);
void vkcu_dn_gpu_free(void **ptr);
/* Enqueues a zero fill of a pitch-linear buffer. */
int vkcu_dn_gpu_memset(void *ptr, size_t pitch, size_t width_bytes, int height, void *stream);

/* tnr on one whole plane (all its components). prev: the previous output
 * (pitch-linear, same layout), or NULL on the first frame. */
int vkcu_dn_gpu_tnr(const vkcu_gpu_plane *in, const vkcu_gpu_plane *prev, const vkcu_gpu_plane *out,
               int ncomp, int bytes, int shift, const dn_tnr_params *tp, void *stream);

/* Copies one channel of `in` into a uint16 buffer with `pad` samples of edge
 * replication on every side: dst holds (w + 2 pad) x (h + 2 pad) samples. */
int vkcu_dn_gpu_nlm_ingest(const vkcu_gpu_plane *in, int ncomp, int comp, int bytes, int shift,
                      uint16_t *dst, size_t dst_pitch, int pad, void *stream);

typedef struct dn_nlm_gpu_args {
    const uint16_t *frame[16]; /* padded channel of each frame of the window */
    int nb_frames;
    int cur;                   /* index into frame[] of the frame being filtered */
    size_t pitch;              /* bytes, same for all frames */
    int width, height, pad;    /* channel size; pad = search + patch radius */
    int patch, search;         /* radii */
    int shift;                 /* SSD quantisation, see dn_nlm_weight */
    const uint16_t *lut;       /* DN_NLM_LUT weights in device memory */
} dn_nlm_gpu_args;

/* nlm of one channel, written into component `comp` of the pitch-linear
 * output plane `out` (bytes/shift as above). */
int vkcu_dn_gpu_nlm(const dn_nlm_gpu_args *a, const vkcu_gpu_plane *out, int ncomp, int comp, int bytes,
               int shift, void *stream);

/* Host to device copy, enqueued. */
int vkcu_dn_gpu_upload(void *dst, const void *src, size_t size, void *stream);

#ifdef __cplusplus
}
#endif

#endif
