/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Vulkan entry points vkcu calls, loaded at run time: the binary does not
 * link libvulkan, so it starts (and runs the CPU backend) on machines that
 * have no Vulkan at all.
 */
#ifndef VKCU_VKFN_H
#define VKCU_VKFN_H

#include <vulkan/vulkan.h>

#define VKCU_INSTANCE_FNS(X)                   \
    X(vkDestroyInstance)                       \
    X(vkEnumeratePhysicalDevices)              \
    X(vkGetPhysicalDeviceProperties2)          \
    X(vkGetPhysicalDeviceQueueFamilyProperties2) \
    X(vkGetPhysicalDeviceMemoryProperties)     \
    X(vkEnumerateDeviceExtensionProperties)    \
    X(vkGetPhysicalDeviceExternalSemaphoreProperties) \
    X(vkGetPhysicalDeviceImageFormatProperties2) \
    X(vkGetDeviceProcAddr)

#define VKCU_DEVICE_FNS(X)          \
    X(vkCreateImage)                \
    X(vkDestroyImage)               \
    X(vkGetImageMemoryRequirements) \
    X(vkAllocateMemory)             \
    X(vkFreeMemory)                 \
    X(vkBindImageMemory)            \
    X(vkGetMemoryFdKHR)             \
    X(vkCreateSemaphore)            \
    X(vkDestroySemaphore)           \
    X(vkGetSemaphoreFdKHR)          \
    X(vkCreateCommandPool)          \
    X(vkDestroyCommandPool)         \
    X(vkAllocateCommandBuffers)     \
    X(vkBeginCommandBuffer)         \
    X(vkEndCommandBuffer)           \
    X(vkCmdPipelineBarrier2)        \
    X(vkCmdCopyImage)               \
    X(vkCmdResetQueryPool)          \
    X(vkCmdWriteTimestamp2)         \
    X(vkCreateQueryPool)            \
    X(vkDestroyQueryPool)           \
    X(vkGetQueryPoolResults)        \
    X(vkQueueSubmit2)               \
    X(vkGetDeviceQueue)             \
    X(vkCreateFence)                \
    X(vkDestroyFence)               \
    X(vkWaitForFences)              \
    X(vkResetFences)                \
    X(vkDeviceWaitIdle)             \
    X(vkCreateBuffer)               \
    X(vkDestroyBuffer)              \
    X(vkGetBufferMemoryRequirements) \
    X(vkBindBufferMemory)           \
    X(vkMapMemory)                  \
    X(vkUnmapMemory)                \
    X(vkCmdCopyBuffer)              \
    X(vkCmdCopyBufferToImage)       \
    X(vkFreeCommandBuffers)

typedef struct vkcu_vkfn {
    PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
    PFN_vkCreateInstance vkCreateInstance;
    PFN_vkEnumerateInstanceVersion vkEnumerateInstanceVersion;
#define X(name) PFN_##name name;
    VKCU_INSTANCE_FNS(X)
    VKCU_DEVICE_FNS(X)
#undef X
} vkcu_vkfn;

/* Opens libvulkan.so.1 (once per process); NULL when there is none. */
PFN_vkGetInstanceProcAddr vkcu_vk_loader(void);
/* Loads instance-level functions (and device-level ones when dev != NULL).
 * Returns 0, or -1 naming the first missing function in *missing. */
int vkcu_vk_load(vkcu_vkfn *fn, PFN_vkGetInstanceProcAddr gipa, VkInstance inst, VkDevice dev,
                 const char **missing);
const char *vkcu_vk_result_str(VkResult r);

/* One queue family of a physical device, with the video codec operations
 * its queues support (0 without VK_KHR_video_queue). */
typedef struct vkcu_vk_queue_family {
    VkQueueFlags flags;
    uint32_t count;
    VkVideoCodecOperationFlagsKHR video_ops;
} vkcu_vk_queue_family;

/* Fills up to max families; returns how many. video: the device offers
 * VK_KHR_video_queue (only then may the video properties be asked for). */
int vkcu_vk_queue_families(const vkcu_vkfn *fn, VkPhysicalDevice dev, int video, vkcu_vk_queue_family *out, int max);

/* Queue locks shared with FFmpeg. A VkQueue must not be used by two threads
 * at once, and FFmpeg takes its device context's lock_queue around each of
 * its submissions, so every vkcu submission on a queue FFmpeg also uses takes
 * the same lock. FFmpeg 8.1 deprecates lock_queue/unlock_queue (lavu 60.26)
 * with no replacement but VK_KHR_internally_synchronized_queues, which the
 * drivers vkcu targets do not offer, and still calls them itself until
 * lavu 62: these three functions are the only place vkcu touches them, so
 * the deprecation is handled once. Where the fields are gone, queues are
 * internally synchronised and the functions do nothing. */
struct AVHWDeviceContext;
typedef void (*vkcu_vk_queue_lock_fn)(struct AVHWDeviceContext *ctx, uint32_t queue_family, uint32_t index);
void vkcu_vk_queue_lock(struct AVHWDeviceContext *ctx, uint32_t queue_family, uint32_t index);
void vkcu_vk_queue_unlock(struct AVHWDeviceContext *ctx, uint32_t queue_family, uint32_t index);
/* Makes ctx (not yet initialised) lock its queues through lock/unlock. */
void vkcu_vk_queue_lock_set(struct AVHWDeviceContext *ctx, vkcu_vk_queue_lock_fn lock, vkcu_vk_queue_lock_fn unlock);

/* VKCU_VK_SUBMIT_LOCK=1 (a measurement, issue 36): every submission on
 * ctx's device, on whichever queue, also holds one process-wide mutex, so
 * that no two queues of a device submit at the same time on the host; the
 * work still runs side by side on the GPU. NVIDIA has named such a lock the
 * workaround for a driver bug in which two queues of one VkDevice
 * submitting at once break some internal synchronisation. Install on a
 * device context after av_hwdevice_ctx_init, before any thread submits;
 * every context that locks through it (the lanes) is covered. Returns 1
 * when the lock is in place. */
int vkcu_vk_submit_lock_wanted(void);
int vkcu_vk_submit_lock_install(struct AVHWDeviceContext *ctx);

/* One command buffer submitted to `queue` (queue_family, index of ctx's
 * device) under FFmpeg's queue lock, with these semaphore waits and
 * signals, fence signalled at the end: the one shape of every vkcu
 * submission that carries work. */
VkResult vkcu_vk_submit(PFN_vkQueueSubmit2 submit, struct AVHWDeviceContext *ctx, uint32_t queue_family, uint32_t index,
                        VkQueue queue, VkCommandBuffer cmd, const VkSemaphoreSubmitInfo *waits, int nb_waits,
                        const VkSemaphoreSubmitInfo *signals, int nb_signals, VkFence fence);

/* A semaphore wait or signal of a submission (value: timelines only). */
static inline VkSemaphoreSubmitInfo vkcu_vk_sem(VkSemaphore sem, uint64_t value, VkPipelineStageFlags2 stage)
{
    return (VkSemaphoreSubmitInfo){ .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO, .semaphore = sem, .value = value,
                                    .stageMask = stage };
}

/* A barrier on the colour aspect of the first mip level and layer of an
 * image (every image vkcu moves has one of each). */
static inline VkImageMemoryBarrier2 vkcu_vk_image_barrier(VkImage image, VkPipelineStageFlags2 src_stage,
                                                          VkAccessFlags2 src_access, VkPipelineStageFlags2 dst_stage,
                                                          VkAccessFlags2 dst_access, VkImageLayout old_layout,
                                                          VkImageLayout new_layout, uint32_t src_qf, uint32_t dst_qf)
{
    return (VkImageMemoryBarrier2){
        .sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2,
        .srcStageMask = src_stage,
        .srcAccessMask = src_access,
        .dstStageMask = dst_stage,
        .dstAccessMask = dst_access,
        .oldLayout = old_layout,
        .newLayout = new_layout,
        .srcQueueFamilyIndex = src_qf,
        .dstQueueFamilyIndex = dst_qf,
        .image = image,
        .subresourceRange = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1 },
    };
}

/* A barrier on the whole of a buffer, moving it between queue families. */
static inline VkBufferMemoryBarrier2 vkcu_vk_buffer_barrier(VkBuffer buffer, VkPipelineStageFlags2 src_stage,
                                                            VkAccessFlags2 src_access, VkPipelineStageFlags2 dst_stage,
                                                            VkAccessFlags2 dst_access, uint32_t src_qf, uint32_t dst_qf)
{
    return (VkBufferMemoryBarrier2){
        .sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER_2,
        .srcStageMask = src_stage,
        .srcAccessMask = src_access,
        .dstStageMask = dst_stage,
        .dstAccessMask = dst_access,
        .srcQueueFamilyIndex = src_qf,
        .dstQueueFamilyIndex = dst_qf,
        .buffer = buffer,
        .size = VK_WHOLE_SIZE,
    };
}

#endif
