/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Exportable interop images and semaphores (see interop_vk.h). */
#include <stdio.h>

#include "interop_vk.h"
#include "check.h"
#include "util/error.h"

int vkcu_vk_export_image(const vkcu_vkfn *vk, VkPhysicalDevice phys, VkDevice dev, VkFormat format, int w, int h,
                         VkImage *image, VkDeviceMemory *memory, VkDeviceSize *size, int *fd, char *err, size_t errlen)
{
    int ret = VKCU_ERR_DEVICE;
    *fd = -1;
    VkExternalMemoryImageCreateInfo ext = { .sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO,
                                            .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT };
    VkImageCreateInfo ici = {
        .sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO, .pNext = &ext, .imageType = VK_IMAGE_TYPE_2D,
        .format = format, .extent = { (uint32_t)w, (uint32_t)h, 1 }, .mipLevels = 1, .arrayLayers = 1,
        .samples = VK_SAMPLE_COUNT_1_BIT, .tiling = VK_IMAGE_TILING_OPTIMAL,
        .usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_SAMPLED_BIT |
                 VK_IMAGE_USAGE_STORAGE_BIT,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE, .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
    };
    VK_CHECK(vk->vkCreateImage(dev, &ici, NULL, image));
    VkMemoryRequirements req;
    vk->vkGetImageMemoryRequirements(dev, *image, &req);
    VkPhysicalDeviceMemoryProperties mp;
    vk->vkGetPhysicalDeviceMemoryProperties(phys, &mp);
    int type = -1;
    for (uint32_t i = 0; i < mp.memoryTypeCount && type < 0; i++)
        if ((req.memoryTypeBits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
            type = (int)i;
    if (type < 0) {
        snprintf(err, errlen, "Vulkan: no device-local memory type for interop images");
        goto fail;
    }
    VkMemoryDedicatedAllocateInfo ded = { .sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO, .image = *image };
    VkExportMemoryAllocateInfo exp = { .sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO, .pNext = &ded,
                                       .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT };
    VkMemoryAllocateInfo mai = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .pNext = &exp,
                                 .allocationSize = req.size, .memoryTypeIndex = (uint32_t)type };
    VK_CHECK(vk->vkAllocateMemory(dev, &mai, NULL, memory));
    VK_CHECK(vk->vkBindImageMemory(dev, *image, *memory, 0));
    *size = req.size;
    VkMemoryGetFdInfoKHR gfd = { .sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, .memory = *memory,
                                 .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT };
    VK_CHECK(vk->vkGetMemoryFdKHR(dev, &gfd, fd));
    return 0;
fail:
    return ret;
}

int vkcu_vk_export_semaphore(const vkcu_vkfn *vk, VkDevice dev, int timeline, VkSemaphore *sem, int *fd,
                             char *err, size_t errlen)
{
    int ret = VKCU_ERR_DEVICE;
    *fd = -1;
    VkSemaphoreTypeCreateInfo type = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                       .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE };
    VkExportSemaphoreCreateInfo exp = { .sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
                                        .pNext = timeline ? &type : NULL,
                                        .handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT };
    VkSemaphoreCreateInfo sci = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &exp };
    VK_CHECK(vk->vkCreateSemaphore(dev, &sci, NULL, sem));
    VkSemaphoreGetFdInfoKHR gfd = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR, .semaphore = *sem,
                                    .handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT };
    VK_CHECK(vk->vkGetSemaphoreFdKHR(dev, &gfd, fd));
    return 0;
fail:
    return ret;
}
