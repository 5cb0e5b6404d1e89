/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * VMAF scores through libvmaf, with its default model (vmaf_v0.6.1).
 *
 * libvmaf is optional: Debian has no package of it, so it is built apart
 * (docs/regression.md, "VMAF") and the Makefile compiles this file with
 * HAVE_LIBVMAF only when pkg-config finds it. Without it every entry point
 * below still exists and fails with the one line vkcu_vmaf_missing writes,
 * so callers need no conditional code.
 */
#ifndef VKCU_VMAF_H
#define VKCU_VMAF_H

#include <stddef.h>
#include <stdint.h>
#include <libavutil/frame.h>

#define VKCU_VMAF_MODEL "vmaf_v0.6.1"

/* 1 when libvmaf is built in, else 0. */
int vkcu_vmaf_available(void);
/* vkcu_vmaf_describe() is public (vkcu/regress.h). */
/* The error for a build without libvmaf: `what` (an option or manifest key)
 * needs libvmaf, and how to build vkcu with it. */
void vkcu_vmaf_missing(const char *what, char *err, size_t errlen);

typedef struct vkcu_vmaf vkcu_vmaf;

/* Loads the model. VKCU_ERR_USAGE (vkcu_vmaf_missing's text) without
 * libvmaf; another error when libvmaf cannot start. */
int vkcu_vmaf_open(vkcu_vmaf **v, char *err, size_t errlen);
/* Scores one more pair: ref and dist have the same size and pixel format.
 * Planar YUV 4:2:0, 4:2:2 and 4:4:4 of 8, 10, 12 or 16 bits go to libvmaf as
 * they are; other layouts are converted first, as FFmpeg's libvmaf filter
 * has its input converted (see docs/regression.md). */
int vkcu_vmaf_add(vkcu_vmaf *v, const AVFrame *ref, const AVFrame *dist, char *err, size_t errlen);
/* After the last pair: the score of pair i in scores[i] (an array of *n the
 * caller frees; NULL when no pair was added) and libvmaf's pooled mean. */
int vkcu_vmaf_finish(vkcu_vmaf *v, double **scores, int64_t *n, double *mean, char *err, size_t errlen);
void vkcu_vmaf_close(vkcu_vmaf **v);

#endif
