/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu public API: what this machine offers. Which Vulkan and CUDA
 * devices there are, what each can do for vkcu, and which Vulkan/CUDA
 * pairs are the same GPU (by UUID): the GPU backend needs such a pair.
 * None of these calls needs a context, and none keeps a device open.
 */
#ifndef VKCU_PROBE_H
#define VKCU_PROBE_H

#include <stdint.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A short summary of the machine. */
typedef struct vkcu_probe_info {
    int vulkan_loader;          /* 1: libvulkan.so.1 loaded */
    int vulkan_instance;        /* 1: a Vulkan 1.3 instance could be created */
    int nb_vulkan;              /* Vulkan devices (a CPU device such as lavapipe counts; it has no video decode) */
    char vulkan_devices[1024];  /* "NAME (video decode: h264 hevc av1); NAME (no video decode)" */
    int nb_cuda;                /* CUDA devices; 0, with cuda_error set, when the driver is missing */
    char cuda_error[128];
    int nb_pairs;               /* CUDA devices with a Vulkan twin (same UUID): the GPU backend works */
    unsigned gpu_decode_ops;    /* Vulkan Video decode operations of the paired devices (VkVideoCodecOperationFlagsKHR) */
    uint64_t reserved[16];      /* zero (version.h: room to grow) */
} vkcu_probe_info;

/**
 * Fills a summary of the machine.
 *
 * @param info the caller's struct; every field is written.
 * @note Thread-safe. Creates and destroys a Vulkan instance and starts CUDA:
 *       milliseconds to a second, once per call.
 */
VKCU_API void vkcu_probe_summary(vkcu_probe_info *info);

/* How a paired GPU decodes a codec (vkcu_probe_gpu_decodes). */
enum vkcu_gpu_decode {
    VKCU_GPU_DECODE_NONE = 0,    /* not on the GPU: software decode (then the CPU, or one upload to the GPU) */
    VKCU_GPU_DECODE_VIDEO = 1,   /* Vulkan Video, on the GPU's video decode engines */
    VKCU_GPU_DECODE_COMPUTE = 2, /* FFmpeg's Vulkan compute decoder (FFV1, ProRes, ProRes RAW, DPX), on any GPU */
};

/**
 * @param info     a summary from vkcu_probe_summary().
 * @param codec_id an FFmpeg enum AVCodecID.
 * @return an enum vkcu_gpu_decode: how a paired GPU decodes the codec with
 *         this build's FFmpeg; 0 (VKCU_GPU_DECODE_NONE) when none does.
 * @note Thread-safe.
 */
VKCU_API int vkcu_probe_gpu_decodes(const vkcu_probe_info *info, int codec_id);

/**
 * Receives one line of text.
 *
 * @param opaque the pointer given with the callback.
 * @param line   one line without its newline, valid only during the call.
 */
typedef void (*vkcu_line_callback)(void *opaque, const char *line);

/**
 * Describes every Vulkan and CUDA device of the machine in detail (name,
 * type, API version, UUID, external memory and semaphore support, queue
 * families and their video codecs, compute capability, memory), the pairs
 * matched by UUID, and the decode paths that follow. The text is meant for
 * people; vkcu_probe_summary() is the form for programs.
 *
 * @param cb     called once per line, in order, on the calling thread.
 * @param opaque passed to cb.
 * @return 0 when at least one Vulkan/CUDA pair exists (the GPU backend is
 *         usable); VKCU_ERR_DEVICE when none does (the text says why);
 *         -ENOMEM.
 * @note Thread-safe.
 */
VKCU_API int vkcu_probe(vkcu_line_callback cb, void *opaque);

/**
 * @return the number of CUDA devices of this machine, 0 when there is no
 *         driver or no GPU (for a program that spreads a batch over all).
 * @note Thread-safe.
 */
VKCU_API int vkcu_cuda_device_count(void);

#ifdef __cplusplus
}
#endif
#endif
