/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The output ring's Vulkan side and its readback consumer (see outring_vk.h). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <libavutil/error.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>
#include <libavutil/imgutils.h>
#include <libavutil/macros.h>
#include <libavutil/mem.h>
#include <libavutil/pixdesc.h>

#include "outring_vk.h"
#include "check.h"
#include "util/error.h"

typedef struct readback_ticket {
    VkCommandBuffer cmd;
    VkFence fence;
    int submitted;                  /* fence not yet waited on */
} readback_ticket;

struct vkcu_outring {
    AVBufferRef *vk_device;
    AVHWDeviceContext *dev;
    AVVulkanDeviceContext *hwctx;
    const vkcu_vkfn *vk;
    uint32_t qf, queue_index;
    VkQueue queue;
    VkCommandPool pool;
    size_t frame_size;
    int nb_slots;
    int export_semaphores;
    vkcu_outring_slot slot[VKCU_OUTRING_MAX_SLOTS];
    readback_ticket ticket[VKCU_OUTRING_TICKETS];
    int64_t next_ticket, readbacks;
    AVBufferPool *host_pool;
    int host_type;                  /* memory type of host buffers */
    int err_alloc;                  /* the code of the pool's last failed allocation, 0 if none */
    char alloc_err[256];
};

/* A host-visible buffer behind one AVBufferRef of the pool. It outlives the
 * ring when a consumer still holds it, so it keeps what its release needs. */
typedef struct host_buffer {
    AVBufferRef *vk_device;
    VkDevice dev;
    VkBuffer buffer;
    VkDeviceMemory memory;
    PFN_vkDestroyBuffer destroy_buffer;
    PFN_vkUnmapMemory unmap;
    PFN_vkFreeMemory free_memory;
} host_buffer;

static int memory_type(const vkcu_outring *r, uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer)
{
    VkPhysicalDeviceMemoryProperties mp;
    r->vk->vkGetPhysicalDeviceMemoryProperties(r->hwctx->phys_dev, &mp);
    int found = -1;
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++) {
        VkMemoryPropertyFlags f = mp.memoryTypes[i].propertyFlags;
        if (!(bits & (1u << i)) || (f & want) != want)
            continue;
        if ((f & prefer) == prefer)
            return (int)i;
        if (found < 0)
            found = (int)i;
    }
    return found;
}

static void host_buffer_free(void *opaque, uint8_t *data)
{
    host_buffer *hb = opaque;
    (void)data;
    hb->unmap(hb->dev, hb->memory);
    hb->destroy_buffer(hb->dev, hb->buffer, NULL);
    hb->free_memory(hb->dev, hb->memory, NULL);
    av_buffer_unref(&hb->vk_device);
    av_free(hb);
}

static AVBufferRef *host_buffer_alloc(void *opaque, size_t size)
{
    vkcu_outring *r = opaque;
    VkDevice dev = r->hwctx->act_dev;
    char *err = r->alloc_err;
    size_t errlen = sizeof(r->alloc_err);
    void *map = NULL;
    AVBufferRef *ref = NULL;
    int ret = VKCU_ERR_DEVICE;
    host_buffer *hb = av_mallocz(sizeof(*hb));
    if (!hb)
        return NULL;
    hb->dev = dev;
    hb->destroy_buffer = r->vk->vkDestroyBuffer;
    hb->unmap = r->vk->vkUnmapMemory;
    hb->free_memory = r->vk->vkFreeMemory;
    VkBufferCreateInfo bci = { .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = size,
                               .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT, .sharingMode = VK_SHARING_MODE_EXCLUSIVE };
    VK_CHECK(r->vk->vkCreateBuffer(dev, &bci, NULL, &hb->buffer));
    VkMemoryRequirements req;
    r->vk->vkGetBufferMemoryRequirements(dev, hb->buffer, &req);
    /* Cached: the consumer reads every byte once on the CPU, which is slow
     * from write-combined memory. Coherent: no invalidate after the fence. */
    int type = memory_type(r, req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                           VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    if (type < 0) {
        snprintf(err, errlen, "Vulkan: no host-visible coherent memory type for the readback buffers");
        goto fail;
    }
    VkMemoryAllocateInfo mai = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size,
                                 .memoryTypeIndex = (uint32_t)type };
    VK_CHECK(r->vk->vkAllocateMemory(dev, &mai, NULL, &hb->memory));
    VK_CHECK(r->vk->vkBindBufferMemory(dev, hb->buffer, hb->memory, 0));
    VK_CHECK(r->vk->vkMapMemory(dev, hb->memory, 0, VK_WHOLE_SIZE, 0, &map));
    ret = AVERROR(ENOMEM);
    hb->vk_device = av_buffer_ref(r->vk_device);
    if (!hb->vk_device)
        goto fail;
    ref = av_buffer_create(map, size, host_buffer_free, hb, 0);
    if (!ref)
        goto fail;
    return ref;
fail:
    r->err_alloc = ret;
    if (map)
        r->vk->vkUnmapMemory(dev, hb->memory);
    if (hb->buffer)
        r->vk->vkDestroyBuffer(dev, hb->buffer, NULL);
    if (hb->memory)
        r->vk->vkFreeMemory(dev, hb->memory, NULL);
    av_buffer_unref(&hb->vk_device);
    av_free(hb);
    return NULL;
}

static int create_semaphore(vkcu_outring *r, VkSemaphore *sem, char *err, size_t errlen)
{
    int ret = VKCU_ERR_DEVICE;
    VkExportSemaphoreCreateInfo exp = { .sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
                                        .handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT };
    VkSemaphoreCreateInfo sci = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO,
                                  .pNext = r->export_semaphores ? &exp : NULL };
    VK_CHECK(r->vk->vkCreateSemaphore(r->hwctx->act_dev, &sci, NULL, sem));
    return 0;
fail:
    return ret;
}

static int create_slot(vkcu_outring *r, vkcu_outring_slot *sl, char *err, size_t errlen)
{
    int ret = VKCU_ERR_DEVICE;
    VkDevice dev = r->hwctx->act_dev;
    VkExternalMemoryBufferCreateInfo ext = { .sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
                                             .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT };
    VkBufferCreateInfo bci = { .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .pNext = &ext, .size = r->frame_size,
                               .usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                               .sharingMode = VK_SHARING_MODE_EXCLUSIVE };
    VK_CHECK(r->vk->vkCreateBuffer(dev, &bci, NULL, &sl->buffer));
    VkMemoryRequirements req;
    r->vk->vkGetBufferMemoryRequirements(dev, sl->buffer, &req);
    int type = memory_type(r, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
    if (type < 0) {
        snprintf(err, errlen, "Vulkan: no device-local memory type for the output ring");
        goto fail;
    }
    VkMemoryDedicatedAllocateInfo ded = { .sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO,
                                          .buffer = sl->buffer };
    VkExportMemoryAllocateInfo exp = { .sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO, .pNext = &ded,
                                       .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT };
    VkMemoryAllocateInfo mai = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .pNext = &exp,
                                 .allocationSize = req.size, .memoryTypeIndex = (uint32_t)type };
    VK_CHECK(r->vk->vkAllocateMemory(dev, &mai, NULL, &sl->memory));
    VK_CHECK(r->vk->vkBindBufferMemory(dev, sl->buffer, sl->memory, 0));
    sl->alloc_size = req.size;
    sl->memory_type = (uint32_t)type;
    if (create_semaphore(r, &sl->filled, err, errlen) < 0 || create_semaphore(r, &sl->drained, err, errlen) < 0)
        goto fail;
    return 0;
fail:
    return ret;
}

int vkcu_outring_create(const vkcu_outring_params *p, vkcu_outring **out, char *err, size_t errlen)
{
    int ret = VKCU_ERR_DEVICE;
    *out = NULL;
    if (p->nb_slots < 1 || p->nb_slots > VKCU_OUTRING_MAX_SLOTS || !p->frame_size) {
        snprintf(err, errlen, "output ring: %d slots of %zu bytes (1..%d slots, non-empty frames)", p->nb_slots,
                 p->frame_size, VKCU_OUTRING_MAX_SLOTS);
        return VKCU_ERR_DEVICE;
    }
    vkcu_outring *r = av_mallocz(sizeof(*r));
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return VKCU_ERR_DEVICE;
    }
    r->vk_device = av_buffer_ref(p->vk_device);
    if (!r->vk_device) {
        av_free(r);
        snprintf(err, errlen, "out of memory");
        return VKCU_ERR_DEVICE;
    }
    r->dev = (AVHWDeviceContext *)r->vk_device->data;
    r->hwctx = r->dev->hwctx;
    r->vk = p->vk;
    r->qf = p->queue_family;
    r->queue_index = p->queue_index;
    r->frame_size = p->frame_size;
    r->export_semaphores = p->export_semaphores;
    VkDevice dev = r->hwctx->act_dev;
    r->vk->vkGetDeviceQueue(dev, r->qf, r->queue_index, &r->queue);
    VkCommandPoolCreateInfo pci = { .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                    .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                    .queueFamilyIndex = r->qf };
    VK_CHECK(r->vk->vkCreateCommandPool(dev, &pci, NULL, &r->pool));
    for (int s = 0; s < p->nb_slots; s++) {
        r->nb_slots = s + 1; /* freed up to here on failure */
        if (create_slot(r, &r->slot[s], err, errlen) < 0)
            goto fail;
    }
    for (int t = 0; t < VKCU_OUTRING_TICKETS; t++) {
        VkCommandBufferAllocateInfo cai = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                            .commandPool = r->pool, .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                            .commandBufferCount = 1 };
        VK_CHECK(r->vk->vkAllocateCommandBuffers(dev, &cai, &r->ticket[t].cmd));
        VkFenceCreateInfo fci = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
        VK_CHECK(r->vk->vkCreateFence(dev, &fci, NULL, &r->ticket[t].fence));
    }
    r->host_pool = av_buffer_pool_init2(r->frame_size, r, host_buffer_alloc, NULL);
    if (!r->host_pool) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    *out = r;
    return 0;
fail:
    vkcu_outring_free(&r);
    return ret;
}

int vkcu_outring_nb_slots(const vkcu_outring *r) { return r->nb_slots; }
AVBufferRef *vkcu_outring_device(const vkcu_outring *r) { return r->vk_device; }
int64_t vkcu_outring_readbacks(const vkcu_outring *r) { return r->readbacks; }

const vkcu_outring_slot *vkcu_outring_slot_get(const vkcu_outring *r, int s)
{
    return s >= 0 && s < r->nb_slots ? &r->slot[s] : NULL;
}

int vkcu_outring_export_memory(vkcu_outring *r, int s, int *fd, char *err, size_t errlen)
{
    int ret = VKCU_ERR_DEVICE;
    *fd = -1;
    VkMemoryGetFdInfoKHR gfd = { .sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, .memory = r->slot[s].memory,
                                 .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT };
    VK_CHECK(r->vk->vkGetMemoryFdKHR(r->hwctx->act_dev, &gfd, fd));
    return 0;
fail:
    return ret;
}

int vkcu_outring_export_semaphores(vkcu_outring *r, int s, int *filled_fd, int *drained_fd, char *err,
                                   size_t errlen)
{
    int ret = VKCU_ERR_DEVICE;
    *filled_fd = *drained_fd = -1;
    if (!r->export_semaphores) {
        snprintf(err, errlen, "output ring: semaphores made without export");
        return VKCU_ERR_DEVICE;
    }
    VkSemaphoreGetFdInfoKHR gfd = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR,
                                    .semaphore = r->slot[s].filled,
                                    .handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT };
    VK_CHECK(r->vk->vkGetSemaphoreFdKHR(r->hwctx->act_dev, &gfd, filled_fd));
    gfd.semaphore = r->slot[s].drained;
    VK_CHECK(r->vk->vkGetSemaphoreFdKHR(r->hwctx->act_dev, &gfd, drained_fd));
    return 0;
fail:
    if (*filled_fd >= 0)
        close(*filled_fd);
    *filled_fd = -1;
    return ret;
}

/* reset: only the submitting thread resets (and reuses) a ticket; any
 * thread may wait on one whose frame it has not released yet. */
static int ticket_wait(vkcu_outring *r, readback_ticket *t, uint64_t timeout_ns, int reset, char *err, size_t errlen)
{
    if (!t->submitted)
        return 0;
    VkResult res = r->vk->vkWaitForFences(r->hwctx->act_dev, 1, &t->fence, VK_TRUE, timeout_ns);
    if (res == VK_TIMEOUT && !timeout_ns)
        return AVERROR(EAGAIN);
    if (res != VK_SUCCESS) {
        snprintf(err, errlen, "Vulkan: readback of the output ring did not complete (%s%s)", vkcu_vk_result_str(res),
                 res == VK_ERROR_DEVICE_LOST ? ", GPU lost" : "");
        return VKCU_ERR_DEVICE;
    }
    if (reset) {
        r->vk->vkResetFences(r->hwctx->act_dev, 1, &t->fence);
        t->submitted = 0;
    }
    return 0;
}

/* Every consumer's submission has this shape: the next ticket, the slot
 * acquired from CUDA (queue family EXTERNAL) for transfer reads, the
 * consumer's commands, the slot released back for CUDA's next write; waits
 * `filled` (and the consumer's own waits), signals `drained` (and its own). */
static int slot_begin(vkcu_outring *r, int s, int *ti, VkCommandBuffer *cmd, char *err, size_t errlen)
{
    *ti = (int)(r->next_ticket % VKCU_OUTRING_TICKETS);
    readback_ticket *t = &r->ticket[*ti];
    /* Its frame was consumed long ago in practice: tickets outnumber the
     * frames a session keeps pending. */
    int ret = ticket_wait(r, t, 10000000000ull, 1, err, errlen);
    if (ret < 0)
        return ret;
    VkCommandBufferBeginInfo bi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                    .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT };
    VK_CHECK(r->vk->vkBeginCommandBuffer(t->cmd, &bi));
    VkBufferMemoryBarrier2 acquire =
        vkcu_vk_buffer_barrier(r->slot[s].buffer, VK_PIPELINE_STAGE_2_NONE, 0, VK_PIPELINE_STAGE_2_TRANSFER_BIT,
                               VK_ACCESS_2_TRANSFER_READ_BIT, VK_QUEUE_FAMILY_EXTERNAL, r->qf);
    VkDependencyInfo di = { .sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO, .bufferMemoryBarrierCount = 1,
                            .pBufferMemoryBarriers = &acquire };
    r->vk->vkCmdPipelineBarrier2(t->cmd, &di);
    *cmd = t->cmd;
    return 0;
fail:
    return ret;
}

/* extra: barriers of the consumer's own (after its commands), or NULL. */
static int slot_submit(vkcu_outring *r, int s, int ti, int wait_filled, int signal_drained,
                       const VkDependencyInfo *extra, const VkSemaphoreSubmitInfo *waits, int nb_waits,
                       const VkSemaphoreSubmitInfo *signals, int nb_signals, char *err, size_t errlen)
{
    int ret = VKCU_ERR_DEVICE;
    readback_ticket *t = &r->ticket[ti];
    VkBufferMemoryBarrier2 release =
        vkcu_vk_buffer_barrier(r->slot[s].buffer, VK_PIPELINE_STAGE_2_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_READ_BIT,
                               VK_PIPELINE_STAGE_2_NONE, 0, r->qf, VK_QUEUE_FAMILY_EXTERNAL);
    VkDependencyInfo di = extra ? *extra : (VkDependencyInfo){ .sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO };
    di.bufferMemoryBarrierCount = 1;
    di.pBufferMemoryBarriers = &release;
    r->vk->vkCmdPipelineBarrier2(t->cmd, &di);
    VK_CHECK(r->vk->vkEndCommandBuffer(t->cmd));

    VkSemaphoreSubmitInfo w[8], sg[8];
    int nw = 0, ns = 0;
    if (wait_filled)
        w[nw++] = vkcu_vk_sem(r->slot[s].filled, 0, VK_PIPELINE_STAGE_2_TRANSFER_BIT);
    for (int i = 0; i < nb_waits && nw < 8; i++)
        w[nw++] = waits[i];
    if (signal_drained)
        sg[ns++] = vkcu_vk_sem(r->slot[s].drained, 0, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
    for (int i = 0; i < nb_signals && ns < 8; i++)
        sg[ns++] = signals[i];
    VkResult res = vkcu_vk_submit(r->vk->vkQueueSubmit2, r->dev, r->qf, r->queue_index, r->queue, t->cmd, w, nw, sg, ns,
                                  t->fence);
    if (res != VK_SUCCESS) {
        snprintf(err, errlen, "Vulkan: output ring submission failed: %s%s", vkcu_vk_result_str(res),
                 res == VK_ERROR_DEVICE_LOST ? " (GPU lost)" : "");
        return VKCU_ERR_DEVICE;
    }
    t->submitted = 1;
    r->next_ticket++;
    return 0;
fail:
    return ret;
}

int vkcu_outring_readback(vkcu_outring *r, int s, int wait_filled, int signal_drained, AVBufferRef **host,
                          int *ticket, char *err, size_t errlen)
{
    *host = NULL;
    r->err_alloc = 0;
    AVBufferRef *buf = av_buffer_pool_get(r->host_pool);
    if (!buf) {
        snprintf(err, errlen, "%s", r->err_alloc == VKCU_ERR_DEVICE ? r->alloc_err : "out of memory for a readback buffer");
        return VKCU_ERR_DEVICE;
    }
    host_buffer *hb = av_buffer_pool_buffer_get_opaque(buf);
    int ti;
    VkCommandBuffer cmd;
    if (slot_begin(r, s, &ti, &cmd, err, errlen) < 0)
        goto fail;
    VkBufferCopy region = { .size = r->frame_size };
    r->vk->vkCmdCopyBuffer(cmd, r->slot[s].buffer, hb->buffer, 1, &region);
    VkMemoryBarrier2 to_host = { .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER_2,
                                 .srcStageMask = VK_PIPELINE_STAGE_2_TRANSFER_BIT,
                                 .srcAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT,
                                 .dstStageMask = VK_PIPELINE_STAGE_2_HOST_BIT,
                                 .dstAccessMask = VK_ACCESS_2_HOST_READ_BIT };
    VkDependencyInfo di = { .sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO, .memoryBarrierCount = 1,
                            .pMemoryBarriers = &to_host };
    if (slot_submit(r, s, ti, wait_filled, signal_drained, &di, NULL, 0, NULL, 0, err, errlen) < 0)
        goto fail;
    r->readbacks++;
    *host = buf;
    *ticket = ti;
    return 0;
fail:
    av_buffer_unref(&buf);
    return VKCU_ERR_DEVICE;
}

int vkcu_outring_layout(int format, int w, int h, vkcu_slot_layout *l)
{
    memset(l, 0, sizeof(*l));
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get((enum AVPixelFormat)format);
    if (!d || (d->flags & (AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_PAL)) || w < 1 ||
        h < 1 || w > 32768 || h > 32768)
        return AVERROR(EINVAL);
    int nb = av_pix_fmt_count_planes((enum AVPixelFormat)format);
    if (nb < 1 || nb > 4)
        return AVERROR(EINVAL);
    l->format = format;
    l->width = w;
    l->height = h;
    l->nb_planes = nb;
    size_t off = 0;
    for (int p = 0; p < nb; p++) {
        /* Planes 1 and 2 are chroma (subsampled); 0 and an alpha plane 3 are full size. */
        int chroma = (p == 1 || p == 2) && !(d->flags & AV_PIX_FMT_FLAG_RGB);
        l->plane_w[p] = chroma ? AV_CEIL_RSHIFT(w, d->log2_chroma_w) : w;
        l->plane_h[p] = chroma ? AV_CEIL_RSHIFT(h, d->log2_chroma_h) : h;
        int row = av_image_get_linesize((enum AVPixelFormat)format, w, p);
        if (row <= 0 || row % l->plane_w[p])
            return AVERROR(EINVAL); /* bit-packed samples: no whole texel per pixel */
        l->texel[p] = row / l->plane_w[p];
        /* 64 bytes and a whole number of texels: lcm(64, texel). */
        int unit = 64;
        while (unit % l->texel[p])
            unit += 64;
        l->pitch[p] = (row + unit - 1) / unit * unit; /* unit need not be a power of two */
        l->offset[p] = off;
        off += (size_t)l->pitch[p] * l->plane_h[p];
    }
    l->size = off;
    return 0;
}

int vkcu_outring_to_frame(vkcu_outring *r, int s, AVFrame *dst, const vkcu_slot_layout *l, VkImageLayout layout,
                          int *ticket, char *err, size_t errlen)
{
    if (dst->format != AV_PIX_FMT_VULKAN || !dst->hw_frames_ctx || !dst->data[0]) {
        snprintf(err, errlen, "output ring: the destination is not a Vulkan frame");
        return VKCU_ERR_DEVICE;
    }
    AVHWFramesContext *hwfc = (AVHWFramesContext *)dst->hw_frames_ctx->data;
    AVVulkanFramesContext *vkfc = hwfc->hwctx;
    AVVkFrame *vkf = (AVVkFrame *)dst->data[0];
    if (hwfc->sw_format != l->format || dst->width != l->width || dst->height != l->height) {
        snprintf(err, errlen, "output ring: the slot holds %s %dx%d, the destination frame is %s %dx%d",
                 av_get_pix_fmt_name((enum AVPixelFormat)l->format), l->width, l->height,
                 av_get_pix_fmt_name(hwfc->sw_format), dst->width, dst->height);
        return VKCU_ERR_DEVICE;
    }
    if (l->size > r->frame_size) {
        snprintf(err, errlen, "output ring: a %zu-byte frame does not fit slots of %zu bytes", l->size, r->frame_size);
        return VKCU_ERR_DEVICE;
    }
    /* One multi-planar image (FFmpeg's default where the driver has the
     * format), or one image per plane. */
    int nb_img = 0;
    while (nb_img < AV_NUM_DATA_POINTERS && vkf->img[nb_img])
        nb_img++;
    int multiplane = nb_img == 1 && l->nb_planes > 1;
    if (nb_img != 1 && nb_img != l->nb_planes) {
        snprintf(err, errlen, "output ring: a %s frame of %d images for %d planes", av_get_pix_fmt_name(hwfc->sw_format),
                 nb_img, l->nb_planes);
        return VKCU_ERR_DEVICE;
    }
    int ti;
    VkCommandBuffer cmd;
    if (slot_begin(r, s, &ti, &cmd, err, errlen) < 0)
        return VKCU_ERR_DEVICE;
    vkfc->lock_frame(hwfc, vkf);
    VkImageMemoryBarrier2 bar[4];
    /* Every byte is replaced: the old contents are not kept. */
    for (int i = 0; i < nb_img; i++)
        bar[i] = vkcu_vk_image_barrier(vkf->img[i], VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
                                       VK_ACCESS_2_MEMORY_READ_BIT | VK_ACCESS_2_MEMORY_WRITE_BIT,
                                       VK_PIPELINE_STAGE_2_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                                       VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                       VK_QUEUE_FAMILY_IGNORED, VK_QUEUE_FAMILY_IGNORED);
    VkDependencyInfo di = { .sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO, .imageMemoryBarrierCount = (uint32_t)nb_img,
                            .pImageMemoryBarriers = bar };
    r->vk->vkCmdPipelineBarrier2(cmd, &di);
    static const VkImageAspectFlags plane_aspect[] = { VK_IMAGE_ASPECT_PLANE_0_BIT, VK_IMAGE_ASPECT_PLANE_1_BIT,
                                                       VK_IMAGE_ASPECT_PLANE_2_BIT };
    for (int p = 0; p < l->nb_planes; p++) {
        /* bufferRowLength counts texels of the plane's format (R8, R16, R8G8, R16G16B16A16 ...). */
        VkBufferImageCopy region = {
            .bufferOffset = l->offset[p],
            .bufferRowLength = (uint32_t)(l->pitch[p] / l->texel[p]),
            .imageSubresource = { multiplane ? plane_aspect[p] : VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1 },
            .imageExtent = { (uint32_t)l->plane_w[p], (uint32_t)l->plane_h[p], 1 },
        };
        r->vk->vkCmdCopyBufferToImage(cmd, r->slot[s].buffer, vkf->img[multiplane ? 0 : p],
                                      VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
    }
    for (int i = 0; i < nb_img; i++) {
        bar[i].srcStageMask = VK_PIPELINE_STAGE_2_TRANSFER_BIT;
        bar[i].srcAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT;
        bar[i].dstStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
        bar[i].dstAccessMask = VK_ACCESS_2_MEMORY_READ_BIT;
        bar[i].oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
        bar[i].newLayout = layout;
    }
    /* FFmpeg's contract for the frame: wait each image's timeline at
     * sem_value, signal sem_value + 1, then record the value, layout and access. */
    VkSemaphoreSubmitInfo wait[4] = { 0 }, signal[4] = { 0 };
    for (int i = 0; i < nb_img; i++) {
        wait[i] = vkcu_vk_sem(vkf->sem[i], vkf->sem_value[i], VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
        signal[i] = vkcu_vk_sem(vkf->sem[i], vkf->sem_value[i] + 1, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
    }
    int ret = slot_submit(r, s, ti, 1, 1, &di, wait, nb_img, signal, nb_img, err, errlen);
    if (ret == 0) {
        for (int i = 0; i < nb_img; i++) {
            vkf->layout[i] = layout;
            vkf->access[i] = VK_ACCESS_MEMORY_READ_BIT;
            vkf->sem_value[i]++;
        }
        *ticket = ti;
    }
    vkfc->unlock_frame(hwfc, vkf);
    return ret;
}

size_t vkcu_outring_semiplanar_layout(int depth16, int w, int h, size_t offset[2], int pitch[2])
{
    vkcu_slot_layout l;
    if (vkcu_outring_layout(depth16 ? AV_PIX_FMT_P010 : AV_PIX_FMT_NV12, w, h, &l) < 0)
        return 0;
    for (int p = 0; p < 2; p++) {
        offset[p] = l.offset[p];
        pitch[p] = l.pitch[p];
    }
    return l.size;
}

int vkcu_outring_encode_format(const vkcu_vkfn *vk, AVBufferRef *vk_device, const char *encoder, int depth,
                               VkFormat *format, VkImageUsageFlags *usage, VkImageCreateFlags *flags, char *err,
                               size_t errlen)
{
    AVVulkanDeviceContext *hw = ((AVHWDeviceContext *)vk_device->data)->hwctx;
    int hevc = !strcmp(encoder, "hevc_vulkan");
    const char *codec_ext = hevc ? VK_KHR_VIDEO_ENCODE_H265_EXTENSION_NAME : VK_KHR_VIDEO_ENCODE_H264_EXTENSION_NAME;
    int queue_ext = 0, codec = 0;
    for (int i = 0; i < hw->nb_enabled_dev_extensions; i++) {
        queue_ext |= !strcmp(hw->enabled_dev_extensions[i], VK_KHR_VIDEO_ENCODE_QUEUE_EXTENSION_NAME);
        codec |= !strcmp(hw->enabled_dev_extensions[i], codec_ext);
    }
    if (!queue_ext || !codec) {
        snprintf(err, errlen, "%s: the Vulkan device has no %s (no video encode queue for this codec)", encoder,
                 queue_ext ? codec_ext : VK_KHR_VIDEO_ENCODE_QUEUE_EXTENSION_NAME);
        return VKCU_ERR_DEVICE;
    }
    PFN_vkGetPhysicalDeviceVideoFormatPropertiesKHR get_formats =
        (PFN_vkGetPhysicalDeviceVideoFormatPropertiesKHR)vk->vkGetInstanceProcAddr(
            hw->inst, "vkGetPhysicalDeviceVideoFormatPropertiesKHR");
    if (!get_formats) {
        snprintf(err, errlen, "%s: the Vulkan loader lacks vkGetPhysicalDeviceVideoFormatPropertiesKHR", encoder);
        return VKCU_ERR_DEVICE;
    }
    VkVideoEncodeH264ProfileInfoKHR h264 = { .sType = VK_STRUCTURE_TYPE_VIDEO_ENCODE_H264_PROFILE_INFO_KHR,
                                             .stdProfileIdc = STD_VIDEO_H264_PROFILE_IDC_HIGH };
    VkVideoEncodeH265ProfileInfoKHR h265 = { .sType = VK_STRUCTURE_TYPE_VIDEO_ENCODE_H265_PROFILE_INFO_KHR,
                                             .stdProfileIdc = depth > 8 ? STD_VIDEO_H265_PROFILE_IDC_MAIN_10
                                                                        : STD_VIDEO_H265_PROFILE_IDC_MAIN };
    VkVideoComponentBitDepthFlagsKHR bits = depth > 8 ? VK_VIDEO_COMPONENT_BIT_DEPTH_10_BIT_KHR
                                                      : VK_VIDEO_COMPONENT_BIT_DEPTH_8_BIT_KHR;
    VkVideoProfileInfoKHR profile = {
        .sType = VK_STRUCTURE_TYPE_VIDEO_PROFILE_INFO_KHR, .pNext = hevc ? (void *)&h265 : (void *)&h264,
        .videoCodecOperation = hevc ? VK_VIDEO_CODEC_OPERATION_ENCODE_H265_BIT_KHR
                                    : VK_VIDEO_CODEC_OPERATION_ENCODE_H264_BIT_KHR,
        .chromaSubsampling = VK_VIDEO_CHROMA_SUBSAMPLING_420_BIT_KHR, .lumaBitDepth = bits, .chromaBitDepth = bits,
    };
    VkVideoProfileListInfoKHR list = { .sType = VK_STRUCTURE_TYPE_VIDEO_PROFILE_LIST_INFO_KHR, .profileCount = 1,
                                       .pProfiles = &profile };
    VkPhysicalDeviceVideoFormatInfoKHR info = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VIDEO_FORMAT_INFO_KHR,
                                                .pNext = &list, .imageUsage = VK_IMAGE_USAGE_VIDEO_ENCODE_SRC_BIT_KHR };
    VkVideoFormatPropertiesKHR props[16];
    uint32_t n = 16;
    for (uint32_t i = 0; i < n; i++)
        props[i] = (VkVideoFormatPropertiesKHR){ .sType = VK_STRUCTURE_TYPE_VIDEO_FORMAT_PROPERTIES_KHR };
    VkResult res = get_formats(hw->phys_dev, &info, &n, props);
    if (res != VK_SUCCESS && res != VK_INCOMPLETE) {
        snprintf(err, errlen, "%s: no input image format for the %s profile (%s)", encoder,
                 depth > 8 ? "10-bit 4:2:0" : "8-bit 4:2:0", vkcu_vk_result_str(res));
        return VKCU_ERR_DEVICE;
    }
    VkFormat want = depth > 8 ? VK_FORMAT_G10X6_B10X6R10X6_2PLANE_420_UNORM_3PACK16 : VK_FORMAT_G8_B8R8_2PLANE_420_UNORM;
    for (uint32_t i = 0; i < n; i++) {
        if (props[i].format != want)
            continue;
        if (!(props[i].imageUsageFlags & VK_IMAGE_USAGE_TRANSFER_DST_BIT)) {
            snprintf(err, errlen, "%s: the encoder's input images cannot be written by a transfer here", encoder);
            return VKCU_ERR_DEVICE;
        }
        *format = want;
        *usage = props[i].imageUsageFlags & (VK_IMAGE_USAGE_VIDEO_ENCODE_SRC_BIT_KHR | VK_IMAGE_USAGE_TRANSFER_DST_BIT);
        *flags = props[i].imageCreateFlags;
        return 0;
    }
    snprintf(err, errlen, "%s: the encoder takes no %s input images here (%u other formats)", encoder,
             depth > 8 ? "P010" : "NV12", n);
    return VKCU_ERR_DEVICE;
}

int vkcu_outring_wait(vkcu_outring *r, int ticket, uint64_t timeout_ns, char *err, size_t errlen)
{
    if (ticket < 0 || ticket >= VKCU_OUTRING_TICKETS) {
        snprintf(err, errlen, "output ring: no ticket %d", ticket);
        return VKCU_ERR_DEVICE;
    }
    return ticket_wait(r, &r->ticket[ticket], timeout_ns, 0, err, errlen);
}

static int has_ext(const char *const *exts, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(exts[i], name))
            return 1;
    return 0;
}

VkVideoCodecOperationFlagsKHR vkcu_outring_caps(const vkcu_vk_queue_family *qf, int nqf, const char *const *exts,
                                                int nexts, const vkcu_outring_compute *compute_enc, int nb_compute,
                                                char *line, size_t len)
{
    int mem = has_ext(exts, nexts, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
    int sem = has_ext(exts, nexts, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
    size_t o = (size_t)snprintf(line, len, "output ring (CUDA -> Vulkan): %s", mem && sem ? "yes" : "no (lacks ");
    if (!(mem && sem) && o < len)
        o += (size_t)snprintf(line + o, len - o, "%s%s%s)", mem ? "" : VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME,
                              !mem && !sem ? ", " : "", sem ? "" : VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
    VkVideoCodecOperationFlagsKHR ops = 0;
    int family = -1, any_encode = 0, compute = -1;
    /* The compute family vkcu's device takes (vk.c): one without graphics or video first. */
    for (int pass = 0; pass < 2 && compute < 0; pass++)
        for (int i = 0; i < nqf && compute < 0; i++)
            if ((qf[i].flags & VK_QUEUE_COMPUTE_BIT) && qf[i].count &&
                (pass || !(qf[i].flags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_VIDEO_DECODE_BIT_KHR |
                                          VK_QUEUE_VIDEO_ENCODE_BIT_KHR))))
                compute = i;
    for (int i = 0; i < nqf; i++) {
        if (!(qf[i].flags & VK_QUEUE_VIDEO_ENCODE_BIT_KHR) || !qf[i].count)
            continue;
        any_encode = 1;
        VkVideoCodecOperationFlagsKHR o2 = 0;
        if ((qf[i].video_ops & VK_VIDEO_CODEC_OPERATION_ENCODE_H264_BIT_KHR) &&
            has_ext(exts, nexts, VK_KHR_VIDEO_ENCODE_H264_EXTENSION_NAME))
            o2 |= VK_VIDEO_CODEC_OPERATION_ENCODE_H264_BIT_KHR;
        if ((qf[i].video_ops & VK_VIDEO_CODEC_OPERATION_ENCODE_H265_BIT_KHR) &&
            has_ext(exts, nexts, VK_KHR_VIDEO_ENCODE_H265_EXTENSION_NAME))
            o2 |= VK_VIDEO_CODEC_OPERATION_ENCODE_H265_BIT_KHR;
        if (o2 && family < 0)
            family = i;
        ops |= o2;
    }
    if (!(mem && sem)) {
        if (o < len)
            snprintf(line + o, len - o, "; zero-copy encode: no (needs the output ring)");
        return 0;
    }
    /* The compute encoders (ffv1_vulkan, prores_ks_vulkan): a compute queue
     * and the features of their shaders, where this build has them; those
     * that can, together, then each that cannot, with why. */
    if (o < len)
        o += (size_t)snprintf(line + o, len - o, "; zero-copy encode: ");
    if (!nb_compute && o < len)
        o += (size_t)snprintf(line + o, len - o, "ffv1_vulkan prores_ks_vulkan: not in this build");
    int usable = 0;
    for (int i = 0; i < nb_compute && compute >= 0; i++)
        if (!compute_enc[i].missing || !*compute_enc[i].missing) {
            if (o < len)
                o += (size_t)snprintf(line + o, len - o, "%s%s", usable ? " " : "", compute_enc[i].name);
            usable++;
        }
    if (usable && o < len)
        o += (size_t)snprintf(line + o, len - o, " (compute queue family %d)", compute);
    for (int i = 0, shown = usable; i < nb_compute; i++) {
        if (compute >= 0 && (!compute_enc[i].missing || !*compute_enc[i].missing))
            continue;
        if (o < len)
            o += (size_t)snprintf(line + o, len - o, "%s%s: no (%s%s)", shown++ ? "; " : "", compute_enc[i].name,
                                  compute < 0 ? "no compute queue" : "lacks ", compute < 0 ? "" : compute_enc[i].missing);
    }
    const char *why = NULL;
    if (!any_encode)
        why = "no Vulkan video encode queue";
    else if (!has_ext(exts, nexts, VK_KHR_VIDEO_QUEUE_EXTENSION_NAME) ||
             !has_ext(exts, nexts, VK_KHR_VIDEO_ENCODE_QUEUE_EXTENSION_NAME))
        why = "lacks VK_KHR_video_encode_queue";
    else if (!ops)
        why = "no H.264 or HEVC encode on its encode queue";
    if (why) {
        ops = 0;
        if (o < len)
            snprintf(line + o, len - o, "; h264_vulkan hevc_vulkan: no (%s)", why);
    } else if (o < len) {
        snprintf(line + o, len - o, "; %s%s%s (video encode queue family %d)",
                 ops & VK_VIDEO_CODEC_OPERATION_ENCODE_H264_BIT_KHR ? "h264_vulkan" : "",
                 ops == (VK_VIDEO_CODEC_OPERATION_ENCODE_H264_BIT_KHR | VK_VIDEO_CODEC_OPERATION_ENCODE_H265_BIT_KHR) ? " " : "",
                 ops & VK_VIDEO_CODEC_OPERATION_ENCODE_H265_BIT_KHR ? "hevc_vulkan" : "", family);
    }
    return ops;
}

void vkcu_outring_free(vkcu_outring **pr)
{
    vkcu_outring *r = *pr;
    if (!r)
        return;
    VkDevice dev = r->hwctx->act_dev;
    for (int t = 0; t < VKCU_OUTRING_TICKETS; t++) {
        if (r->ticket[t].submitted)
            r->vk->vkWaitForFences(dev, 1, &r->ticket[t].fence, VK_TRUE, 5000000000ull);
        if (r->ticket[t].fence)
            r->vk->vkDestroyFence(dev, r->ticket[t].fence, NULL);
        if (r->ticket[t].cmd)
            r->vk->vkFreeCommandBuffers(dev, r->pool, 1, &r->ticket[t].cmd);
    }
    /* Buffers a consumer still holds are freed when it lets them go. */
    av_buffer_pool_uninit(&r->host_pool);
    for (int s = 0; s < r->nb_slots; s++) {
        vkcu_outring_slot *sl = &r->slot[s];
        if (sl->filled)
            r->vk->vkDestroySemaphore(dev, sl->filled, NULL);
        if (sl->drained)
            r->vk->vkDestroySemaphore(dev, sl->drained, NULL);
        if (sl->buffer)
            r->vk->vkDestroyBuffer(dev, sl->buffer, NULL);
        if (sl->memory)
            r->vk->vkFreeMemory(dev, sl->memory, NULL);
    }
    if (r->pool)
        r->vk->vkDestroyCommandPool(dev, r->pool, NULL);
    av_buffer_unref(&r->vk_device);
    av_freep(pr);
}
