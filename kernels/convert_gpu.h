/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * C-callable CUDA side of the convert and tonemap operators
 * (kernels/convert.cu), used by src/ops/op_convert.c.
 *
 * A cv_gpu holds the operator's device state: its output planes
 * (pitch-linear device memory, owned here, valid until the next run) and,
 * for tonemap, a device copy of the host-built tables. Not thread-safe: one
 * operator instance, one job thread.
 */
#ifndef VKCU_CONVERT_GPU_H
#define VKCU_CONVERT_GPU_H

#include "frame.h"
#include "check.h"
#include "convert_math.h"
#include "tonemap_math.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cv_gpu cv_gpu;

/* Failures of vkcu_cv_gpu_create/vkcu_cv_gpu_run, with their one-line
 * reason in err (check.h): */
#define CV_GPU_ERR_DEVICE VKCU_CHECK_ERR /* CUDA failed */
#define CV_GPU_ERR_INPUT  (-2)           /* the frame does not fit the description */

/* Allocates the output planes for desc (copied) and, when desc->tonemap,
 * uploads the table block (TM_TABLE_FLOATS floats, laid out as
 * vkcu_tm_tables_build makes it) with the scalars of *tm. Returns 0 or a
 * CV_GPU_ERR_DEVICE. */
int vkcu_cv_gpu_create(cv_gpu **g, const cv_desc *desc, const float *tm_block, const tm_tables *tm, char *err,
                       size_t errlen);
/* Converts `in` into the operator-owned planes and describes them in *out
 * (planes, sizes; out->fmt is left to the caller). Work is queued on
 * `stream` (cudaStream_t); nothing waits for it. */
int vkcu_cv_gpu_run(cv_gpu *g, const vkcu_gpu_frame *in, vkcu_gpu_frame *out, void *stream, char *err,
                    size_t errlen);
void vkcu_cv_gpu_destroy(cv_gpu **g);

#ifdef __cplusplus
}
#endif

#endif
