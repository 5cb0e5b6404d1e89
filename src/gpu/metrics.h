/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Frame metrics on the GPU (metrics.c): two pictures that stayed in CUDA
 * device memory (frames of a session with cuda_pool, devframes.c) compared
 * where they are, with the arithmetic and order of kernels/metrics_math.h,
 * so the per-component figures equal the CPU's bit for bit. Only a few
 * numbers per frame cross to the host.
 *
 * Thread-safety: one object is used by one thread at a time.
 */
#ifndef VKCU_GPU_METRICS_H
#define VKCU_GPU_METRICS_H

#include <stddef.h>
#include <libavutil/frame.h>

#include "kernels/metrics_math.h"

typedef struct vkcu_gpu_metrics vkcu_gpu_metrics;

/* Sets up on CUDA device `device` (its own stream, scratch made as frames
 * need it). VKCU_ERR_DEVICE with a line in err when CUDA cannot. */
int vkcu_gpu_metrics_open(int device, vkcu_gpu_metrics **out, char *err, size_t errlen);
/* 1 when a and b can be measured here: both CUDA frames of the object's
 * device (vkcu_frame_cuda_device), of one format and size, every component
 * in a plane of its own with samples of 8 to 16 bits in the low bits. */
int vkcu_gpu_metrics_takes(const vkcu_gpu_metrics *g, const AVFrame *a, const AVFrame *b);
/* Compares a and b (vkcu_gpu_metrics_takes) and waits for the figures: one
 * vkcu_plane_stats per component, in the format's component order. The
 * frames' memory may be reused once the call returns. */
int vkcu_gpu_metrics_run(vkcu_gpu_metrics *g, const AVFrame *a, const AVFrame *b, vkcu_plane_stats *st, char *err,
                         size_t errlen);
/* Pairs measured by this object. */
int64_t vkcu_gpu_metrics_pairs(const vkcu_gpu_metrics *g);
void vkcu_gpu_metrics_close(vkcu_gpu_metrics **g);

#endif
