/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Run-time loading of the Vulkan entry points vkcu uses. */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>
#include <libavutil/version.h>

#include "vkfn.h"

static PFN_vkGetInstanceProcAddr loader_gipa;
static pthread_once_t loader_once = PTHREAD_ONCE_INIT;

static void open_loader(void)
{
    void *lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        lib = dlopen("libvulkan.so", RTLD_NOW | RTLD_LOCAL);
    if (lib)
        loader_gipa = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr");
}

PFN_vkGetInstanceProcAddr vkcu_vk_loader(void)
{
    pthread_once(&loader_once, open_loader);
    return loader_gipa;
}

int vkcu_vk_load(vkcu_vkfn *fn, PFN_vkGetInstanceProcAddr gipa, VkInstance inst, VkDevice dev,
                 const char **missing)
{
    fn->vkGetInstanceProcAddr = gipa;
    fn->vkCreateInstance = (PFN_vkCreateInstance)gipa(NULL, "vkCreateInstance");
    fn->vkEnumerateInstanceVersion = (PFN_vkEnumerateInstanceVersion)gipa(NULL, "vkEnumerateInstanceVersion");
    if (!inst)
        return fn->vkCreateInstance ? 0 : (*missing = "vkCreateInstance", -1);
#define X(name)                                                   \
    fn->name = (PFN_##name)gipa(inst, #name);                     \
    if (!fn->name) {                                              \
        *missing = #name;                                         \
        return -1;                                                \
    }
    VKCU_INSTANCE_FNS(X)
#undef X
    if (!dev)
        return 0;
#define X(name)                                                   \
    fn->name = (PFN_##name)fn->vkGetDeviceProcAddr(dev, #name);   \
    if (!fn->name) {                                              \
        *missing = #name;                                         \
        return -1;                                                \
    }
    VKCU_DEVICE_FNS(X)
#undef X
    return 0;
}

const char *vkcu_vk_result_str(VkResult r)
{
    switch (r) {
#define R(x) case x: return #x;
    R(VK_SUCCESS) R(VK_NOT_READY) R(VK_TIMEOUT) R(VK_ERROR_OUT_OF_HOST_MEMORY)
    R(VK_ERROR_OUT_OF_DEVICE_MEMORY) R(VK_ERROR_INITIALIZATION_FAILED) R(VK_ERROR_DEVICE_LOST)
    R(VK_ERROR_MEMORY_MAP_FAILED) R(VK_ERROR_LAYER_NOT_PRESENT) R(VK_ERROR_EXTENSION_NOT_PRESENT)
    R(VK_ERROR_FEATURE_NOT_PRESENT) R(VK_ERROR_INCOMPATIBLE_DRIVER) R(VK_ERROR_TOO_MANY_OBJECTS)
    R(VK_ERROR_FORMAT_NOT_SUPPORTED) R(VK_ERROR_INVALID_EXTERNAL_HANDLE)
#undef R
    default: return "VkResult error";
    }
}

int vkcu_vk_queue_families(const vkcu_vkfn *fn, VkPhysicalDevice dev, int video, vkcu_vk_queue_family *out, int max)
{
    VkQueueFamilyProperties2 qp[32];
    VkQueueFamilyVideoPropertiesKHR qv[32];
    uint32_t n = 0;
    fn->vkGetPhysicalDeviceQueueFamilyProperties2(dev, &n, NULL);
    if (n > 32)
        n = 32;
    if ((int)n > max)
        n = (uint32_t)max;
    for (uint32_t q = 0; q < n; q++) {
        qv[q] = (VkQueueFamilyVideoPropertiesKHR){ .sType = VK_STRUCTURE_TYPE_QUEUE_FAMILY_VIDEO_PROPERTIES_KHR };
        qp[q] = (VkQueueFamilyProperties2){ .sType = VK_STRUCTURE_TYPE_QUEUE_FAMILY_PROPERTIES_2,
                                            .pNext = video ? &qv[q] : NULL };
    }
    fn->vkGetPhysicalDeviceQueueFamilyProperties2(dev, &n, qp);
    for (uint32_t q = 0; q < n; q++)
        out[q] = (vkcu_vk_queue_family){ .flags = qp[q].queueFamilyProperties.queueFlags,
                                         .count = qp[q].queueFamilyProperties.queueCount,
                                         .video_ops = video ? qv[q].videoCodecOperations : 0 };
    return (int)n;
}

/* FFmpeg 7.1 has the fields without the macro; 8.1 deprecates them under it. */
#if !defined(FF_API_VULKAN_SYNC_QUEUES) || FF_API_VULKAN_SYNC_QUEUES
#define HAVE_QUEUE_LOCK 1
#else
#define HAVE_QUEUE_LOCK 0
#endif

void vkcu_vk_queue_lock(AVHWDeviceContext *ctx, uint32_t queue_family, uint32_t index)
{
#if HAVE_QUEUE_LOCK
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    AVVulkanDeviceContext *hw = ctx->hwctx;
    hw->lock_queue(ctx, queue_family, index);
#pragma GCC diagnostic pop
#else
    (void)ctx, (void)queue_family, (void)index;
#endif
}

void vkcu_vk_queue_unlock(AVHWDeviceContext *ctx, uint32_t queue_family, uint32_t index)
{
#if HAVE_QUEUE_LOCK
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    AVVulkanDeviceContext *hw = ctx->hwctx;
    hw->unlock_queue(ctx, queue_family, index);
#pragma GCC diagnostic pop
#else
    (void)ctx, (void)queue_family, (void)index;
#endif
}

void vkcu_vk_queue_lock_set(AVHWDeviceContext *ctx, vkcu_vk_queue_lock_fn lock, vkcu_vk_queue_lock_fn unlock)
{
#if HAVE_QUEUE_LOCK
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    AVVulkanDeviceContext *hw = ctx->hwctx;
    hw->lock_queue = lock;
    hw->unlock_queue = unlock;
#pragma GCC diagnostic pop
#else
    (void)ctx, (void)lock, (void)unlock;
#endif
}

/* One lock over every queue's submissions (vkcu_vk_submit_lock_install).
 * FFmpeg's own per-queue lock is still taken inside it, so a queue is never
 * used by two threads at once either way. One mutex for the process: the
 * lock is held only around vkQueueSubmit2 itself. */
#if HAVE_QUEUE_LOCK
static pthread_mutex_t submit_mutex = PTHREAD_MUTEX_INITIALIZER;
static vkcu_vk_queue_lock_fn inner_lock, inner_unlock;

static void submit_lock(AVHWDeviceContext *ctx, uint32_t queue_family, uint32_t index)
{
    pthread_mutex_lock(&submit_mutex);
    inner_lock(ctx, queue_family, index);
}

static void submit_unlock(AVHWDeviceContext *ctx, uint32_t queue_family, uint32_t index)
{
    inner_unlock(ctx, queue_family, index);
    pthread_mutex_unlock(&submit_mutex);
}
#endif

int vkcu_vk_submit_lock_wanted(void)
{
    const char *env = getenv("VKCU_VK_SUBMIT_LOCK");
    return env && !strcmp(env, "1");
}

int vkcu_vk_submit_lock_install(AVHWDeviceContext *ctx)
{
#if HAVE_QUEUE_LOCK
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    AVVulkanDeviceContext *hw = ctx->hwctx;
    if (!hw->lock_queue || !hw->unlock_queue || hw->lock_queue == submit_lock)
        return hw->lock_queue == submit_lock;
    pthread_mutex_lock(&submit_mutex);
    int same = !inner_lock || (inner_lock == hw->lock_queue && inner_unlock == hw->unlock_queue);
    if (same) {
        inner_lock = hw->lock_queue;
        inner_unlock = hw->unlock_queue;
        hw->lock_queue = submit_lock;
        hw->unlock_queue = submit_unlock;
    }
    pthread_mutex_unlock(&submit_mutex);
    return same;
#pragma GCC diagnostic pop
#else
    (void)ctx;
    return 0;
#endif
}

VkResult vkcu_vk_submit(PFN_vkQueueSubmit2 submit, struct AVHWDeviceContext *ctx, uint32_t queue_family, uint32_t index,
                        VkQueue queue, VkCommandBuffer cmd, const VkSemaphoreSubmitInfo *waits, int nb_waits,
                        const VkSemaphoreSubmitInfo *signals, int nb_signals, VkFence fence)
{
    VkCommandBufferSubmitInfo cbi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO, .commandBuffer = cmd };
    VkSubmitInfo2 si = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2, .waitSemaphoreInfoCount = (uint32_t)nb_waits,
                         .pWaitSemaphoreInfos = waits, .commandBufferInfoCount = 1, .pCommandBufferInfos = &cbi,
                         .signalSemaphoreInfoCount = (uint32_t)nb_signals, .pSignalSemaphoreInfos = signals };
    vkcu_vk_queue_lock(ctx, queue_family, index);
    VkResult r = submit(queue, 1, &si, fence);
    vkcu_vk_queue_unlock(ctx, queue_family, index);
    return r;
}
