/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * GPU session: the Vulkan device matched to the CUDA device by UUID, the
 * interop ring, and the per-frame handoff (docs/architecture.md,
 * "The interop protocol").
 * This file opens and closes a session; session_priv.h lists the files that
 * do the rest (bind, ring, record, handoff, chainrun, pending, the ways out,
 * stats).
 *
 * Per frame: the handoff thread has the decoded frame copied by Vulkan into
 * the next ring slot (record.c), runs the chain on the CUDA stream reading
 * the slot through texture objects (chainrun.c), writes the planar host
 * layout where the session's way out takes it (exit.h: by default a device
 * staging buffer copied into pinned host memory). pop() waits only on the
 * copy's event.
 *
 * Everything imported into CUDA is imported once per slot, at start-up
 * (import.c). Teardown frees CUDA's side first, then Vulkan's.
 */
#include <errno.h>
#include <string.h>
#include <libavutil/mem.h>

#include "cuda_absent.h"
#include "session_priv.h"
#include "util/log.h"

int vkcu_gpu_available(void)
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

static int pick_queue(vkcu_gpu *g)
{
    /* Prefer a compute family (FFmpeg's own transfers use the transfer one). */
    int best = -1;
    for (int i = 0; i < g->hwctx->nb_qf; i++) {
        const AVVulkanDeviceQueueFamily *q = &g->hwctx->qf[i];
        if ((q->flags & VK_QUEUE_COMPUTE_BIT) && best < 0)
            best = i;
    }
    for (int i = 0; best < 0 && i < g->hwctx->nb_qf; i++)
        if (g->hwctx->qf[i].flags & (VK_QUEUE_TRANSFER_BIT | VK_QUEUE_GRAPHICS_BIT))
            best = i;
    if (best < 0)
        return -1;
    g->qf = g->hwctx->qf[best].idx;
    /* The process's compute queues in turn (claimed across processes: gpu/vkdev_claims.c). */
    g->queue_index = vkcu_vkdev_compute_queue(g->cuda_device, g->lane, g->qf, (uint32_t)g->hwctx->qf[best].num);
    return 0;
}

int vkcu_gpu_open(const vkcu_gpu_config *p, vkcu_gpu **out, char *err, size_t errlen)
{
    int ret = 0, n = 0;
    vkcu_gpu *g = NULL;
    *out = NULL;
    double t0 = vkcu_now();
    /* The Vulkan device on its own thread (if the job has not started it
     * already) while this one starts CUDA. */
    vkcu_vkdev_prepare(p->device);
    cudaError_t ce = cudaGetDeviceCount(&n);
    if (ce != cudaSuccess || n == 0) {
        vkcu_cuda_absent_text(ce, err, errlen);
        return VKCU_ERR_DEVICE;
    }
    if (p->device < 0 || p->device >= n) {
        {
        char ordinal[16];
        snprintf(ordinal, sizeof(ordinal), "%d", p->device);
        snprintf(err, errlen, "%s: there are %d CUDA device(s) (0..%d)", VKCU_SETTING_IS("device", ordinal), n, n - 1);
    }
        return VKCU_ERR_DEVICE;
    }
    g = av_mallocz(sizeof(*g));
    if (!g)
        return AVERROR(ENOMEM);
    g->cfg = *p;
    g->cuda_device = p->device;
    if (p->ring_size < 1 || p->ring_size > MAX_SLOTS) { /* never clamped: vkcu_job_run refuses these first */
        snprintf(err, errlen, "ring_size %d is not in [1, %d] (interop ring slots)", p->ring_size, MAX_SLOTS);
        ret = AVERROR(EINVAL);
        goto fail;
    }
    g->nb_slots = p->ring_size;
    /* No cudaSetDevice here: it waits for the primary context, which
     * vkcu_vkdev_prepare's thread is making while the decoder opens and
     * decodes its first frame (vkcu_gpu_bind, at the first frame). */
    struct cudaDeviceProp prop;
    CU_CHECK(cudaGetDeviceProperties(&prop, p->device));
    g->memory = (int64_t)prop.totalGlobalMem;
    double t1 = vkcu_now();
    int lane = 0;
    ret = vkcu_vkdev_acquire(p->device, p->decode_queue_pin - 1, &g->vk_device, &lane, err, errlen);
    LOGD("GPU set-up: CUDA runtime %.0f ms, then %.0f ms more for the Vulkan device", (t1 - t0) * 1e3,
         (vkcu_now() - t1) * 1e3);
    if (ret < 0)
        goto fail;
    vkcu_vkdev_times_get(p->device, &g->setup);
    g->lane = lane;
    g->dev = (AVHWDeviceContext *)g->vk_device->data;
    g->hwctx = g->dev->hwctx;
    const char *missing = NULL;
    if (vkcu_vk_load(&g->vk, g->hwctx->get_proc_addr, g->hwctx->inst, g->hwctx->act_dev, &missing) < 0) {
        snprintf(err, errlen, "Vulkan device lacks %s", missing);
        ret = VKCU_ERR_DEVICE;
        goto fail;
    }
    VkPhysicalDeviceProperties2 pr = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2 };
    g->vk.vkGetPhysicalDeviceProperties2(g->hwctx->phys_dev, &pr);
    if (pick_queue(g) < 0) {
        snprintf(err, errlen, "Vulkan device has no compute or transfer queue");
        ret = VKCU_ERR_DEVICE;
        goto fail;
    }
    g->vk.vkGetDeviceQueue(g->hwctx->act_dev, g->qf, g->queue_index, &g->queue);
    VkCommandPoolCreateInfo pci = { .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                    .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                    .queueFamilyIndex = g->qf };
    VK_CHECK(g->vk.vkCreateCommandPool(g->hwctx->act_dev, &pci, NULL, &g->pool));
    /* Timestamps for --stats, where the queue family has them. */
    uint32_t nqf = 0;
    g->vk.vkGetPhysicalDeviceQueueFamilyProperties2(g->hwctx->phys_dev, &nqf, NULL);
    VkQueueFamilyProperties2 qfp[32];
    if (nqf > 32)
        nqf = 32;
    for (uint32_t i = 0; i < nqf; i++)
        qfp[i] = (VkQueueFamilyProperties2){ .sType = VK_STRUCTURE_TYPE_QUEUE_FAMILY_PROPERTIES_2 };
    g->vk.vkGetPhysicalDeviceQueueFamilyProperties2(g->hwctx->phys_dev, &nqf, qfp);
    if (g->qf < nqf && qfp[g->qf].queueFamilyProperties.timestampValidBits) {
        VkQueryPoolCreateInfo qci = { .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                      .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 2 * MAX_SLOTS };
        if (g->vk.vkCreateQueryPool(g->hwctx->act_dev, &qci, NULL, &g->timestamps) == VK_SUCCESS) {
            g->ts_valid = 1;
            g->ts_period = pr.properties.limits.timestampPeriod;
        }
    }
    LOGV("GPU: CUDA device %d (%s): decode lane %d, handoff queue family %u index %u; ring of %d slots",
         p->device, prop.name, g->lane, g->qf, g->queue_index, g->nb_slots);
    if ((ret = vkcu_gpu_handoff_start(g, err, errlen)) < 0)
        goto fail;
    g->setup_open_ms = (vkcu_now() - t0) * 1e3;
    *out = g;
    return 0;
fail:
    vkcu_gpu_close(&g);
    return ret;
}

void vkcu_gpu_prepare(int device) { vkcu_vkdev_prepare(device); }
void vkcu_gpu_prepare_wait(int device) { vkcu_vkdev_prepare_wait(device); }
AVBufferRef *vkcu_gpu_vulkan_device(vkcu_gpu *g) { return g->vk_device; }
int64_t vkcu_gpu_memory(const vkcu_gpu *g) { return g->memory; }
void vkcu_gpu_set_chain(vkcu_gpu *g, vkcu_chain *chain)
{
    g->chain = chain;
    /* The first frame: bind now, before the sink opens (a failure shows at push). */
    char err[512];
    vkcu_gpu_bind(g, err, sizeof(err));
}

void vkcu_gpu_close(vkcu_gpu **pg)
{
    vkcu_gpu *g = *pg;
    if (!g)
        return;
    vkcu_gpu_handoff_stop(g);
    if (g->bound) /* CUDA objects exist only past the bind; freed with this thread's device current */
        cudaSetDevice(g->cuda_device);
    if (g->stream)
        cudaStreamSynchronize(g->stream);
    VkDevice dev = g->hwctx ? g->hwctx->act_dev : VK_NULL_HANDLE;
    if (dev && g->vk.vkDeviceWaitIdle) {
        /* Our submissions only: wait on the slot fences rather than the whole device. */
        for (int s = 0; s < g->nb_slots; s++)
            if (g->slot[s].submitted)
                g->vk.vkWaitForFences(dev, 1, &g->slot[s].fence, VK_TRUE, 5000000000ull);
    }
    /* CUDA's side first, then the Vulkan objects it mapped. */
    vkcu_gpu_exit_free(g);
    vkcu_gpu_ring_free_cuda(g);
    for (int i = 0; i < MAX_PENDING; i++)
        for (int k = 0; k < 3; k++)
            if (g->events[i][k])
                cudaEventDestroy(g->events[i][k]);
    if (g->stream)
        cudaStreamDestroy(g->stream);
    if (dev) {
        vkcu_gpu_ring_free_vk(g);
        if (g->timestamps)
            g->vk.vkDestroyQueryPool(dev, g->timestamps, NULL);
        if (g->pool)
            g->vk.vkDestroyCommandPool(dev, g->pool, NULL);
    }
    av_buffer_unref(&g->vk_device);
    if (g->sync_ready) {
        pthread_mutex_destroy(&g->lock);
        pthread_cond_destroy(&g->cond);
    }
    av_freep(pg);
}
