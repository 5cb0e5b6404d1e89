/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * C-callable launchers for the GPU session's own kernels (kernels in
 * kernels/frame_kernels.cu and hash_kernels.cu): download into a planar
 * layout, plane copies, BLAKE3 of a frame.
 */
#ifndef VKCU_GPU_KERNELS_H
#define VKCU_GPU_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include "frame.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes `in` in the planar host layout `host_fmt` (vkcu_gpu_host_format)
 * into device memory: plane p at dst + offset[p] with row pitch linesize[p].
 * Returns a cudaError_t. */
int vkcu_cuda_to_planar(const vkcu_gpu_frame *in, int host_fmt, uint8_t *dst, const size_t offset[4],
                        const int linesize[4], void *stream);

/* Writes `in` (NV12, P010, yuv420p or yuv420p10) in the semi-planar layout
 * of FFmpeg's NV12 (8-bit) or P010 (10-bit, the value in the high bits)
 * into device memory: luma at dst + offset[0], interleaved CbCr at
 * dst + offset[1], rows pitch[p] bytes apart (the output ring's slot for
 * the Vulkan encoder). Returns a cudaError_t (cudaErrorInvalidValue for
 * other formats). */
int vkcu_cuda_to_semiplanar(const vkcu_gpu_frame *in, uint8_t *dst, const size_t offset[2], const int pitch[2],
                            void *stream);

/* Copies every plane of `in` into the pitch-linear planes of `out` (same
 * format and size). The `copy` operator's kernel. */
int vkcu_cuda_copy_frame(const vkcu_gpu_frame *in, const vkcu_gpu_frame *out, void *stream);

/* BLAKE3 (32-byte digest) of len bytes at data (device memory, 16-byte
 * aligned) into digest (device, 4-byte aligned), queued on `stream`.
 * scratch: device memory of vkcu_cuda_blake3_scratch(len) bytes, in use
 * until the work completes. Returns a cudaError_t. */
size_t vkcu_cuda_blake3_scratch(size_t len);
int vkcu_cuda_blake3(const uint8_t *data, size_t len, void *scratch, uint8_t *digest, void *stream);

/* Bytes per sample (1 or 2) and samples per pixel (1 or 2) of plane p. */
void vkcu_plane_layout(int pix_fmt, int plane, int *bytes, int *comps, int *log2_w, int *log2_h);
int vkcu_nb_planes(int pix_fmt);

#ifdef __cplusplus
}
#endif
#endif
