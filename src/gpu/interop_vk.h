/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Vulkan half of the interop ring, free of CUDA so that it can be
 * exercised on any Vulkan device (CI uses lavapipe): exportable images on
 * dedicated memory and exportable semaphores, handed out as opaque FDs.
 */
#ifndef VKCU_INTEROP_VK_H
#define VKCU_INTEROP_VK_H

#include <stddef.h>
#include "vkfn.h"

/* One single-plane, optimal-tiling image (TRANSFER_DST | SAMPLED | STORAGE)
 * on its own exportable allocation. *fd receives the memory's opaque FD; the
 * caller owns it (and gives it away on a successful CUDA import). */
int vkcu_vk_export_image(const vkcu_vkfn *vk, VkPhysicalDevice phys, VkDevice dev, VkFormat format, int w, int h,
                         VkImage *image, VkDeviceMemory *memory, VkDeviceSize *size, int *fd, char *err, size_t errlen);
/* A binary (timeline = 0) or timeline semaphore exported as an opaque FD. */
int vkcu_vk_export_semaphore(const vkcu_vkfn *vk, VkDevice dev, int timeline, VkSemaphore *sem, int *fd,
                             char *err, size_t errlen);
#endif
