/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What vmaf.c (the scorer, its CPU path, host frames) and vmaf_cuda.c
 * (libvmaf's CUDA backend in vkcu's CUDA context, device frames) share.
 * Included only where HAVE_LIBVMAF is defined.
 */
#ifndef VKCU_VMAF_PRIV_H
#define VKCU_VMAF_PRIV_H

#include <libvmaf/libvmaf.h>

#include "vmaf.h"

struct SwsContext;
typedef struct vkcu_vmaf_cuda vkcu_vmaf_cuda;

enum vmaf_pairs { VMAF_PAIRS_NONE = 0, VMAF_PAIRS_HOST, VMAF_PAIRS_DEVICE };

struct vkcu_vmaf {
    VmafContext *ctx;
    VmafModel *model;
    int64_t n;                      /* pairs fed */
    enum vmaf_pairs pairs;          /* what the first pair was: all pairs are alike */
    int w, h;                       /* of the first pair; libvmaf takes one size */
    enum AVPixelFormat in_fmt, fmt; /* the pairs' format, and the one libvmaf gets */
    enum VmafPixelFormat vfmt;
    int bpc;
    int threads;                    /* libvmaf's n_threads: 0, none */
    int pooled;                     /* 1: host pictures come from libvmaf's pool (threads > 0) */
    struct SwsContext *sws;         /* in_fmt -> fmt when they differ */
    AVFrame *conv[2];
    vkcu_vmaf_cuda *cuda;           /* non-NULL: the features run on the GPU */
    char engine[320];               /* vkcu_vmaf_engine */
};

/* The libvmaf layout for frames of format f: the chroma subsampling and the
 * depth libvmaf takes that lose least, and 1 in *direct when f already is
 * that layout in memory. -1 for formats libvmaf cannot score. */
int vkcu_vmaf_pick_layout(enum AVPixelFormat f, enum AVPixelFormat *to, enum VmafPixelFormat *vf, int *bpc,
                          int *direct);

#ifdef HAVE_LIBVMAF_CUDA
/* Before vmaf_init: retains the primary CUDA context of `device` (the one
 * vkcu's CUDA runtime calls use) and sets up libvmaf's CUDA state in it.
 * On failure *c is NULL, nothing is left behind, and `why` says what stands
 * in the way (no driver, no such device, a GPU too old for libvmaf's code). */
int vkcu_vmaf_cuda_open(vkcu_vmaf_cuda **c, int device, char *why, size_t whylen);
/* Hands the state to ctx (before vmaf_use_features_from_model). */
void vkcu_vmaf_cuda_import(vkcu_vmaf_cuda *c, VmafContext *ctx);
/* After vmaf_close: releases the context (libvmaf's stream and pictures
 * went with vmaf_close). */
void vkcu_vmaf_cuda_close(vkcu_vmaf_cuda **c);
/* "NVIDIA H200": for vkcu_vmaf_engine. */
const char *vkcu_vmaf_cuda_device_name(const vkcu_vmaf_cuda *c);
#endif

#endif
