/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the machine offers the GPU backend, for vkcu --version, vkcu
 * formats and vkcu probe. */
#ifndef VKCU_GPU_PROBE_H
#define VKCU_GPU_PROBE_H

#include <stdio.h>

/* Whether CUDA and Vulkan work here, in brief (vkcu --version, vkcu formats).
 * Never fails: what is missing is reported in the fields. */
typedef struct vkcu_probe_info {
    int vulkan_loader;          /* libvulkan.so.1 loaded */
    int vulkan_instance;        /* a Vulkan 1.3 instance could be created */
    int nb_vulkan;              /* Vulkan devices (lavapipe counts: a CPU device without video decode) */
    char vulkan_devices[1024];  /* "NAME (video decode: h264 hevc av1); NAME (no video decode)" */
    int nb_cuda;                /* CUDA devices; 0 with cuda_error set when the driver is missing */
    char cuda_error[128];
    int nb_pairs;               /* CUDA devices with a Vulkan twin (same UUID): the GPU backend works */
    unsigned gpu_decode_ops;    /* Vulkan Video decode operations of the paired devices */
} vkcu_probe_info;
void vkcu_probe_summary(vkcu_probe_info *info);
/* 1 when a paired GPU decodes this codec (enum AVCodecID) with Vulkan Video. */
int vkcu_probe_gpu_decodes(const vkcu_probe_info *info, int codec_id);

/* The full report of `vkcu probe` to out; VKCU_ERR_DEVICE when no GPU pair matched (the report is still written). */
int vkcu_probe(FILE *out);

#endif
