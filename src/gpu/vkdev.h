/*
 * vkcu's own Vulkan device, handed to FFmpeg through AVVulkanDeviceContext
 * instead of av_hwdevice_ctx_create: only the queues and extensions the
 * Vulkan Video decoder and the CUDA interop need. FFmpeg's default asks for
 * every queue of every family it picks, and vkCreateDevice then takes most
 * of the set-up time (DESIGN.md, facts measured on the H200).
 */
#ifndef VKCU_GPU_VKDEV_H
#define VKCU_GPU_VKDEV_H

#include <stddef.h>
#include <libavutil/buffer.h>

#include "vkfn.h"

#define VKCU_VK_MAX_EXTS 16

/* What vkcu_vk_plan_device must find. */
enum {
    VKCU_PLAN_INTEROP = 1, /* external memory and semaphore FDs (the CUDA handoff) */
    VKCU_PLAN_DECODE = 2,  /* a video decode queue family */
};

typedef struct vkcu_vk_plan {
    int compute_family;  /* also used for transfers */
    uint32_t nb_compute;
    int decode_family;   /* -1: the device decodes nothing */
    uint32_t nb_decode;
    VkVideoCodecOperationFlagsKHR decode_ops;
    const char *exts[VKCU_VK_MAX_EXTS]; /* device extensions to enable */
    int nb_exts;
    int video_maintenance1; /* VK_KHR_video_maintenance1 is in exts */
} vkcu_vk_plan;

/* Chooses the queues and extensions from what a physical device offers:
 * every queue of the decode family whose codec operations cover the most
 * codecs (at most max_decode: the decode lanes), and want_compute queues
 * (at least 1, at most the family's) of a compute family, preferring one
 * without graphics. avail: the device's extension names. Returns 0, or -1
 * with the reason in err. Pure: no Vulkan calls. */
int vkcu_vk_plan_device(const vkcu_vk_queue_family *qf, int nqf, const char *const *avail, int navail,
                        unsigned flags, uint32_t want_compute, uint32_t max_decode, vkcu_vk_plan *plan, char *err,
                        size_t errlen);

/* A Vulkan 1.3 instance with no layers or extensions; fn gets its
 * instance-level entry points. VK_NULL_HANDLE with err filled on failure. */
VkInstance vkcu_vk_instance_create(vkcu_vkfn *fn, char *err, size_t errlen);

/* The plan's queues and extensions of physical device pd, wrapped in an
 * initialised Vulkan AVHWDeviceContext. The context owns the VkDevice and,
 * when owns_instance is set, the instance (destroyed when it is freed,
 * also on failure here). Returns 0 or a negative AVERROR with err filled. */
int vkcu_vk_device_create(const vkcu_vkfn *fn, VkInstance inst, int owns_instance, VkPhysicalDevice pd,
                          const vkcu_vk_plan *plan, AVBufferRef **out, char *err, size_t errlen);

/* The device's extension names (up to max, into names[] backed by store). */
int vkcu_vk_device_exts(const vkcu_vkfn *fn, VkPhysicalDevice pd, VkExtensionProperties *store, const char **names,
                        int max);

#endif
