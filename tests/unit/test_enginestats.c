/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Engine busy time (src/gpu/enginestats.c) on the machine's own Vulkan
 * device (Mesa's lavapipe on CI: its compute queue stands in for a decode
 * queue). With VKCU_ENGINE_STATS=1 the vkQueueSubmit2 handed out is the
 * timing wrapper: 150 submissions through it (more than its 64 slots, so
 * slots are reused; half of them waiting on a timeline semaphore the one
 * before signalled, half filling a buffer) all complete, are all counted,
 * have timestamps, a busy time above zero and no longer than the window,
 * and the buffer holds what the last fill wrote; a reset starts from zero;
 * the text lines carry the figures. Without the variable, nothing is
 * wrapped. Nothing is timed by the test itself. Skipped without a Vulkan
 * device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>

#include "gpu/enginestats.h"
#include "gpu/vk.h"
#include "gpu/vkinstance.h"
#include "test_util.h"

#define FILL_BYTES (8u << 20)

static int off_in_child(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        unsetenv("VKCU_ENGINE_STATS");
        int bad = vkcu_engine_stats_on() || vkcu_engine_stats_hook("vkQueueSubmit2");
        _exit(bad);
    }
    int st = 1;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int main(void)
{
    CHECK(off_in_child(), "without VKCU_ENGINE_STATS=1 the statistics are on or wrap vkQueueSubmit2");
    setenv("VKCU_ENGINE_STATS", "1", 1);
    char err[256] = "";
    const vkcu_vk_instance *vi = vkcu_vk_instance_get(NULL, err, sizeof(err));
    if (!vi || !vi->nb_devs) {
        printf("no Vulkan device here (%s): skipped\n", vi ? "none listed" : err);
        return tu_failures ? 1 : 77;
    }
    const vkcu_vk_caps *caps = vkcu_vk_caps_get(vi, 0);
    vkcu_vk_plan plan;
    vkcu_vk_plan_want want = { .compute = 1 };
    AVBufferRef *ref = NULL;
    if (!caps || vkcu_vk_plan_device(caps->qf, caps->nqf, caps->exts, caps->nb_exts, &want, &plan, err, sizeof(err)) < 0 ||
        vkcu_vk_device_create(vi, 0, &plan, &ref, NULL, err, sizeof(err)) < 0) {
        printf("FAIL device: %s\n", err);
        return 1;
    }
    AVVulkanDeviceContext *hw = ((AVHWDeviceContext *)ref->data)->hwctx;
    VkDevice dev = hw->act_dev;
    uint32_t fam = (uint32_t)plan.compute_family;
    /* The driver's functions (lavapipe has no external semaphore FDs, so not vkcu_vk_load's whole set). */
    struct {
#define FNS(X)                                                                                                     \
    X(vkQueueSubmit2) X(vkGetDeviceQueue) X(vkCreateBuffer) X(vkGetBufferMemoryRequirements) X(vkAllocateMemory)    \
    X(vkBindBufferMemory) X(vkCreateSemaphore) X(vkCreateFence) X(vkCreateCommandPool) X(vkAllocateCommandBuffers)   \
    X(vkBeginCommandBuffer) X(vkCmdFillBuffer) X(vkEndCommandBuffer) X(vkWaitForFences) X(vkResetFences)            \
    X(vkMapMemory) X(vkUnmapMemory) X(vkDeviceWaitIdle) X(vkDestroyCommandPool) X(vkDestroyFence)                   \
    X(vkDestroySemaphore) X(vkDestroyBuffer) X(vkFreeMemory)
#define X(name) PFN_##name name;
        FNS(X)
#undef X
        PFN_vkGetPhysicalDeviceMemoryProperties vkGetPhysicalDeviceMemoryProperties;
    } f;
    PFN_vkGetDeviceProcAddr gdpa = (PFN_vkGetDeviceProcAddr)hw->get_proc_addr(hw->inst, "vkGetDeviceProcAddr");
    f.vkGetPhysicalDeviceMemoryProperties =
        (PFN_vkGetPhysicalDeviceMemoryProperties)hw->get_proc_addr(hw->inst, "vkGetPhysicalDeviceMemoryProperties");
    const char *missing = NULL;
#define X(name)                                                \
    if (!missing && !(f.name = (PFN_##name)gdpa(dev, #name))) \
        missing = #name;
    FNS(X)
#undef X
    if (missing || !f.vkGetPhysicalDeviceMemoryProperties) {
        printf("FAIL: the device lacks %s\n", missing ? missing : "vkGetPhysicalDeviceMemoryProperties");
        return 1;
    }
    PFN_vkQueueSubmit2 real = f.vkQueueSubmit2;
    CHECK(vkcu_engine_stats_on(), "VKCU_ENGINE_STATS=1 is not on");
    /* Registered as the decode family (lavapipe has no video queue). */
    vkcu_engine_stats_device(hw->inst, hw->phys_dev, dev, hw->get_proc_addr, fam, UINT32_MAX);
    PFN_vkQueueSubmit2 timed = (PFN_vkQueueSubmit2)vkcu_engine_stats_hook("vkQueueSubmit2");
    CHECK(timed && (void *)timed != (void *)real, "vkQueueSubmit2 is not wrapped");
    CHECK(!vkcu_engine_stats_hook("vkQueueWaitIdle"), "another function is wrapped");
    VkQueue queue;
    f.vkGetDeviceQueue(dev, fam, 0, &queue);
    vkcu_engine_stats_queue(dev, fam, 0, queue);
    if (!timed)
        return 1;

    /* A buffer to fill, a timeline semaphore, a fence, two command buffers. */
    VkBuffer buf;
    VkDeviceMemory mem;
    VkBufferCreateInfo bci = { .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = FILL_BYTES,
                               .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT };
    CHECK(f.vkCreateBuffer(dev, &bci, NULL, &buf) == VK_SUCCESS, "buffer");
    VkMemoryRequirements mr;
    f.vkGetBufferMemoryRequirements(dev, buf, &mr);
    VkPhysicalDeviceMemoryProperties mp;
    f.vkGetPhysicalDeviceMemoryProperties(hw->phys_dev, &mp);
    uint32_t type = 0;
    const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    while (type < mp.memoryTypeCount && !((mr.memoryTypeBits >> type & 1) && (mp.memoryTypes[type].propertyFlags & host) == host))
        type++;
    VkMemoryAllocateInfo mai = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = mr.size,
                                 .memoryTypeIndex = type };
    CHECK(type < mp.memoryTypeCount && f.vkAllocateMemory(dev, &mai, NULL, &mem) == VK_SUCCESS &&
              f.vkBindBufferMemory(dev, buf, mem, 0) == VK_SUCCESS,
          "buffer memory");
    VkSemaphoreTypeCreateInfo tl = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                     .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE };
    VkSemaphoreCreateInfo sci = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &tl };
    VkSemaphore sem;
    VkFence fence;
    VkFenceCreateInfo fci = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
    CHECK(f.vkCreateSemaphore(dev, &sci, NULL, &sem) == VK_SUCCESS && f.vkCreateFence(dev, &fci, NULL, &fence) == VK_SUCCESS,
          "semaphore, fence");
    VkCommandPool pool;
    VkCommandPoolCreateInfo pci = { .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = fam };
    CHECK(f.vkCreateCommandPool(dev, &pci, NULL, &pool) == VK_SUCCESS, "command pool");
    VkCommandBuffer cb[2];
    VkCommandBufferAllocateInfo ai = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 2 };
    CHECK(f.vkAllocateCommandBuffers(dev, &ai, cb) == VK_SUCCESS, "command buffers");
    VkCommandBufferBeginInfo bi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
    uint32_t values[2] = { 0x11111111u, 0x5a5a5a5au };
    for (int i = 0; i < 2; i++) {
        f.vkBeginCommandBuffer(cb[i], &bi);
        f.vkCmdFillBuffer(cb[i], buf, 0, FILL_BYTES, values[i]);
        f.vkEndCommandBuffer(cb[i]);
    }

    /* 150 submissions: the odd ones wait for the value the even one before signalled. */
    const int n = 150;
    int ok = 1;
    for (int i = 0; i < n && ok; i++) {
        VkCommandBufferSubmitInfo cbi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
                                          .commandBuffer = cb[i == n - 1 ? 1 : 0] };
        VkSemaphoreSubmitInfo s = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO, .semaphore = sem,
                                    .value = (uint64_t)(i / 2 + 1), .stageMask = VK_PIPELINE_STAGE_2_TRANSFER_BIT };
        VkSubmitInfo2 si = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2, .commandBufferInfoCount = 1,
                             .pCommandBufferInfos = &cbi };
        if (i % 2) {
            si.waitSemaphoreInfoCount = 1;
            si.pWaitSemaphoreInfos = &s;
        } else {
            si.signalSemaphoreInfoCount = 1;
            si.pSignalSemaphoreInfos = &s;
        }
        ok = timed(queue, 1, &si, fence) == VK_SUCCESS &&
             f.vkWaitForFences(dev, 1, &fence, VK_TRUE, 10000000000ull) == VK_SUCCESS &&
             f.vkResetFences(dev, 1, &fence) == VK_SUCCESS;
        CHECK(ok, "submission %d through the wrapper failed", i);
    }
    uint32_t *p = NULL;
    CHECK(f.vkMapMemory(dev, mem, 0, FILL_BYTES, 0, (void **)&p) == VK_SUCCESS && p && p[0] == values[1] &&
              p[FILL_BYTES / 4 - 1] == values[1],
          "the buffer does not hold the last fill: %#x", p ? p[0] : 0);
    if (p)
        f.vkUnmapMemory(dev, mem);

    vkcu_engine_stats st;
    vkcu_engine_stats_get(&st);
    CHECK(st.nb == 1, "%d queues reported", st.nb);
    const vkcu_engine_queue *q = &st.q[0];
    CHECK(q->decode && q->family == fam && q->index == 0, "queue %s.%u.%u", q->decode ? "decode" : "compute", q->family,
          q->index);
    CHECK(q->submissions == n, "%lld submissions counted, %d made", (long long)q->submissions, n);
    CHECK(q->timestamps, "no timestamps on family %u", fam);
    CHECK(q->busy_s > 0 && q->busy_s <= st.window_s, "busy %.6f s in a window of %.6f s", q->busy_s, st.window_s);
    CHECK(q->gpu_last_s >= q->gpu_first_s && q->gpu_last_s - q->gpu_first_s >= q->busy_s * 0.999,
          "GPU span %.6f-%.6f shorter than the busy time %.6f", q->gpu_first_s, q->gpu_last_s, q->busy_s);
    /* Each submission was waited for (its fence) before the next, but a driver may show the batch's
     * semaphore signal a moment after its fence's: idle at most at every one. */
    CHECK(q->idle_at_submit >= 0 && q->idle_at_submit <= n, "%lld of %d submissions found the queue idle",
          (long long)q->idle_at_submit, n);
    char text[4096];
    vkcu_engine_stats_text(&st, text, sizeof(text));
    char want_line[128];
    snprintf(want_line, sizeof(want_line), "engine: queue=decode.%u.0 submissions=%d busy_s=", fam, n);
    CHECK(strstr(text, want_line) && strstr(text, "engine: summary window_s=") && strstr(text, " decode_queues=1 ") &&
              strstr(text, "idle_at_submit_pct="),
          "text:\n%s", text);

    double busy = q->busy_s;
    vkcu_engine_stats_reset();
    vkcu_engine_stats_get(&st);
    CHECK(st.nb == 1 && st.q[0].submissions == 0 && st.q[0].busy_s == 0, "after a reset: %lld submissions, busy %f",
          (long long)st.q[0].submissions, st.q[0].busy_s);
    VkCommandBufferSubmitInfo cbi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO, .commandBuffer = cb[0] };
    VkSubmitInfo2 si = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2, .commandBufferInfoCount = 1, .pCommandBufferInfos = &cbi };
    for (int i = 0; i < 3; i++)
        CHECK(timed(queue, 1, &si, VK_NULL_HANDLE) == VK_SUCCESS, "submission after the reset");
    vkcu_engine_stats_get(&st); /* waits for them */
    CHECK(st.q[0].submissions == 3 && st.q[0].busy_s > 0, "after the reset and 3 submissions: %lld, busy %f",
          (long long)st.q[0].submissions, st.q[0].busy_s);
    f.vkDeviceWaitIdle(dev);
    vkcu_engine_stats_forget(dev);
    vkcu_engine_stats_get(&st);
    CHECK(st.q[0].submissions == 3, "the figures went with the device: %lld", (long long)st.q[0].submissions);
    f.vkDestroyCommandPool(dev, pool, NULL);
    f.vkDestroyFence(dev, fence, NULL);
    f.vkDestroySemaphore(dev, sem, NULL);
    f.vkDestroyBuffer(dev, buf, NULL);
    f.vkFreeMemory(dev, mem, NULL);
    av_buffer_unref(&ref);
    if (tu_failures) {
        fprintf(stderr, "%d check(s) failed\n", tu_failures);
        return 1;
    }
    printf("engine statistics: %d timed submissions on %s, busy %.4f s; reset; wrapper off without the variable\n", n,
           vi->devs[0].name, busy);
    return 0;
}
