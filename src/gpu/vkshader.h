/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The device features that FFmpeg's Vulkan compute shaders use: its compute
 * encoders (ffv1_vulkan, prores_ks_vulkan) and its Vulkan filters. FFmpeg
 * does not check them on a device it did not make; its own device creation
 * enables every one the device has (hwcontext_vulkan.c,
 * device_features_copy_needed), and its precompiled encoder shaders
 * declare SPIR-V capabilities that need some of them. vkcu's own device
 * (vk.c) enables the same set where the device has it; here, which of
 * them each compute encoder's SPIR-V needs, so that a device without one of
 * them is refused before any output (the encode sink) and `vkcu probe`
 * says which.
 */
#ifndef VKCU_GPU_VKSHADER_H
#define VKCU_GPU_VKSHADER_H

#include <stddef.h>

#include "vkfn.h"

/* A device's features at the four levels vkcu reads (what it supports, or
 * what a device was made with). */
typedef struct vkcu_vk_features {
    VkPhysicalDeviceFeatures f10;
    VkPhysicalDeviceVulkan11Features f11;
    VkPhysicalDeviceVulkan12Features f12;
    VkPhysicalDeviceVulkan13Features f13;
    int expect_assume;   /* VK_KHR_shader_expect_assume's shaderExpectAssume (with the extension) */
    VkSubgroupFeatureFlags subgroup_ops; /* subgroup operations of compute shaders (a property) */
} vkcu_vk_features;

/* What the physical device supports (vkGetPhysicalDeviceFeatures2 through
 * gipa; exts: its extension names, for the extension features). */
void vkcu_vk_features_query(PFN_vkGetInstanceProcAddr gipa, VkInstance inst, VkPhysicalDevice pd,
                            const char *const *exts, int nb_exts, vkcu_vk_features *out);

/* What a made device has enabled: the chain of VkPhysicalDeviceFeatures2
 * (AVVulkanDeviceContext.device_features) read into *out; exts: its enabled
 * extensions; the subgroup operations from its physical device. */
void vkcu_vk_features_enabled(PFN_vkGetInstanceProcAddr gipa, VkInstance inst, VkPhysicalDevice pd,
                              const VkPhysicalDeviceFeatures2 *chain, const char *const *exts, int nb_exts,
                              vkcu_vk_features *out);

/* Which of FFmpeg's compute encoders' shaders a feature check is for: a
 * field of each encoder's row in vkencode.c's table (0: none). */
enum { VKCU_SHADERS_FFV1 = 1, VKCU_SHADERS_PRORES = 2, VKCU_SHADERS_ALL = 3 };

/* The features the encoders of `shaders` (VKCU_SHADERS_*) cannot run
 * without that `f` lacks, as a comma-separated list of Vulkan's names into
 * missing ("" when none). Returns how many. */
int vkcu_vk_encoder_features_missing(const vkcu_vk_features *f, unsigned shaders, char *missing, size_t len);

/* The device extension ffv1_vulkan's shaders need (ExpectAssumeKHR), which
 * vk.c enables where offered (NULL when these headers lack it). */
const char *vkcu_vk_shader_extension(void);

#endif
