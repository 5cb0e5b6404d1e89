/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu's own Vulkan device, handed to FFmpeg through AVVulkanDeviceContext
 * instead of av_hwdevice_ctx_create: only the queues and extensions the
 * Vulkan Video decoder and the CUDA interop need. FFmpeg's default asks for
 * every queue of every family it picks, and vkCreateDevice then takes most
 * of the set-up time (docs/performance.md, "What the device is made with",
 * measured on the H200). The same
 * planner makes the device a Vulkan Video encoder runs on (one encode queue).
 */
#ifndef VKCU_GPU_VK_H
#define VKCU_GPU_VK_H

#include <stddef.h>
#include <libavutil/buffer.h>

#include "vkfn.h"
#include "vkinstance.h"

#define VKCU_VK_MAX_EXTS 32

/* What vkcu_vk_plan_device must find. */
enum {
    VKCU_PLAN_INTEROP = 1, /* external memory and semaphore FDs (the CUDA handoff) */
    VKCU_PLAN_DECODE = 2,  /* a video decode queue family */
};

/* What a device is made for. */
typedef struct vkcu_vk_plan_want {
    unsigned flags;       /* VKCU_PLAN_*: refused when not met */
    uint32_t compute;     /* compute queues (at least 1, at most the family's) */
    uint32_t decode;      /* decode queues at most (the decode lanes); 0: no decode family */
    /* One encode queue for this codec operation (VK_VIDEO_CODEC_OPERATION_
     * ENCODE_*_BIT_KHR), refused when the device has none; 0: no encode. */
    VkVideoCodecOperationFlagsKHR encode;
} vkcu_vk_plan_want;

typedef struct vkcu_vk_plan {
    int compute_family;  /* also used for transfers */
    uint32_t nb_compute;
    int decode_family;   /* -1: the device decodes nothing */
    uint32_t nb_decode;
    VkVideoCodecOperationFlagsKHR decode_ops;
    int encode_family;   /* -1: no encode queue */
    VkVideoCodecOperationFlagsKHR encode_ops;
    const char *exts[VKCU_VK_MAX_EXTS]; /* device extensions to enable */
    /* each one's feature struct (0: none): the supported features in it are
     * enabled, and an extension the device supports none of is left out */
    VkStructureType feature[VKCU_VK_MAX_EXTS];
    int nb_exts;
    int video_maintenance1; /* VK_KHR_video_maintenance1 is in exts */
} vkcu_vk_plan;

/* Chooses the queues and extensions from what a physical device offers:
 * up to want->decode queues of the decode family whose codec operations
 * cover the most codecs, want->compute queues of a compute family
 * (preferring one without graphics or video), and one queue of an encode
 * family with want->encode. avail: the device's extension names. Returns
 * 0, or -1 with the reason in err. Pure: no Vulkan calls. */
int vkcu_vk_plan_device(const vkcu_vk_queue_family *qf, int nqf, const char *const *avail, int navail,
                        const vkcu_vk_plan_want *want, vkcu_vk_plan *plan, char *err, size_t errlen);

/* How this FFmpeg decodes a codec on Vulkan: on a video decode queue, which
 * needs the device to offer *op (VK_VIDEO_CODEC_OPERATION_DECODE_*), on
 * compute queues (FFmpeg 8.1's FFV1, ProRes, ProRes RAW and DPX
 * hwaccels: any Vulkan device), or not at all (no Vulkan hwaccel for it in
 * this build). Read from FFmpeg's decoders' hardware configurations, so a
 * codec FFmpeg adds is found without a change here. Thread-safe. */
enum { VKCU_VK_DECODE_NONE = 0, VKCU_VK_DECODE_VIDEO = 1, VKCU_VK_DECODE_COMPUTE = 2 };
int vkcu_vk_decode_kind(int codec_id, VkVideoCodecOperationFlagsKHR *op);

/* Whether vkcu takes FFmpeg's compute decoder for a codec whose software
 * decoder gives sw_format (AV_PIX_FMT_NONE: not known yet; the codec alone
 * is judged): only where its frames are the software decoder's, bit for
 * bit and in the same layout, so that the GPU backend keeps giving the CPU
 * backend's frames, and where it runs at all (extradata: the stream's, for
 * the codecs whose header decides; NULL when unknown). 1 yes; 0 no, with
 * the reason in why (then software
 * decode + upload). VKCU_COMPUTE_DECODE=all takes every compute decoder (to
 * measure the others), =off none. Thread-safe. */
int vkcu_vk_compute_decode_ok(int codec_id, int sw_format, const uint8_t *extradata, int extradata_size, char *why,
                              size_t whylen);

/* When each step of vkcu_vk_device_create ended (vkcu_now() stamps). */
typedef struct vkcu_vk_device_stamps {
    double start, created, initialised; /* called; vkCreateDevice returned; FFmpeg's init returned */
} vkcu_vk_device_stamps;

/* The plan's queues and extensions of vi->devs[index], wrapped in an
 * initialised Vulkan AVHWDeviceContext that owns the VkDevice (the
 * instance is the process's: vkinstance.h). stamps may be NULL. Returns 0
 * or a negative AVERROR with err filled. Thread-safe. */
int vkcu_vk_device_create(const vkcu_vk_instance *vi, int index, const vkcu_vk_plan *plan, AVBufferRef **out,
                          vkcu_vk_device_stamps *stamps, char *err, size_t errlen);

#endif
