/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * C-callable launchers of compare's frame metrics on the GPU
 * (kernels/metrics.cu): one plane of two pictures in device memory, the
 * arithmetic and order of kernels/metrics_math.h, so that the figures equal
 * the CPU's bit for bit.
 */
#ifndef VKCU_METRICS_KERNELS_H
#define VKCU_METRICS_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One plane of each picture: samples of 1 byte (wide 0) or 2 (wide 1,
 * little-endian, the value in the low bits), rows pitch bytes apart. */
typedef struct vkcu_metrics_plane {
    const uint8_t *a, *b;
    size_t pitch_a, pitch_b;
    int w, h, wide;
    int64_t c1, c2;          /* vkcu_ssim_c1/c2 of the peak */
} vkcu_metrics_plane;

/* What the GPU leaves for the host, per plane (device memory, zeroed by
 * vkcu_cuda_plane_metrics before its kernels). */
typedef struct vkcu_metrics_result {
    unsigned long long sse;
    unsigned long long diff_key; /* vkcu_diff_key of the largest difference */
    double ssim_sum;
    double pad;
} vkcu_metrics_result;

/* Device scratch the plane needs: the windows' SSIM (floats) and the window
 * rows' sums (doubles), in bytes. */
size_t vkcu_cuda_metrics_scratch(int w, int h);
/* Queues the plane's comparison on `stream` into *out (device memory);
 * scratch: vkcu_cuda_metrics_scratch(w, h) bytes of device memory, 8-byte
 * aligned, in use until the work completes. Returns a cudaError_t. */
int vkcu_cuda_plane_metrics(const vkcu_metrics_plane *p, void *scratch, vkcu_metrics_result *out, void *stream);

#ifdef __cplusplus
}
#endif
#endif
