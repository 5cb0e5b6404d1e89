/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The per-frame interop protocol (docs/architecture.md, "The interop protocol").
 *
 * On the Vulkan side, one submission and no CPU wait: wait the decoded
 * frame's timeline at sem_value and, from the slot's second use on, the
 * slot's `done`; barrier the decoded image to TRANSFER_SRC and the slot's
 * interop images to TRANSFER_DST; copy each plane; barrier the interop
 * images to GENERAL, released to VK_QUEUE_FAMILY_EXTERNAL; signal the
 * frame's timeline at sem_value + 1 (the decoder may reuse its image at
 * once) and the slot's `ready`.
 * On the CUDA stream: wait `ready` before the chain reads the slot, signal
 * `done` once the chain and the download kernels have read it.
 * The timeline variant (--handoff timeline) replaces the slot's two binary
 * semaphores with one timeline: frame n's copy signals 2n+1, CUDA's release
 * of it 2n+2.
 */
#include <string.h>
#include <libavutil/pixdesc.h>

#include "session_priv.h"

/* Waits for slot s's previous copy to have completed (long ago in practice:
 * it waited only on decode and on CUDA K frames back). */
static int slot_fence_wait(vkcu_gpu *g, int s, char *err, size_t errlen)
{
    frame_slot *sl = &g->slot[s];
    if (!sl->submitted)
        return 0;
    VkDevice dev = g->hwctx->act_dev;
    VkResult r = g->vk.vkWaitForFences(dev, 1, &sl->fence, VK_TRUE, (uint64_t)g->cfg.stall_timeout_ms * 1000000ull);
    if (r != VK_SUCCESS) {
        snprintf(err, errlen, "Vulkan: handoff of slot %d did not complete (%s)", s, vkcu_vk_result_str(r));
        return VKCU_ERR_DEVICE;
    }
    g->vk.vkResetFences(dev, 1, &sl->fence);
    sl->submitted = 0;
    return 0;
}

/* The copy's commands (the frame locked): the decoded image to
 * TRANSFER_SRC and the slot's images to TRANSFER_DST, each plane copied,
 * the slot's images released to VK_QUEUE_FAMILY_EXTERNAL. */
static void record_planes(vkcu_gpu *g, frame_slot *sl, VkCommandBuffer cmd, const AVFrame *frame, AVVkFrame *vkf,
                          int multiplane)
{
    VkImageMemoryBarrier2 bar[1 + 4 + 4];
    int nb = 0;
    for (int p = 0; p < (multiplane ? 1 : sl->nb_planes); p++)
        bar[nb++] = vkcu_vk_image_barrier(vkf->img[p], VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_MEMORY_WRITE_BIT,
                                          VK_PIPELINE_STAGE_2_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_READ_BIT,
                                          vkf->layout[p], VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                          VK_QUEUE_FAMILY_IGNORED, VK_QUEUE_FAMILY_IGNORED);
    /* The slot's previous contents are not needed: no acquire from EXTERNAL. */
    for (int p = 0; p < sl->nb_planes; p++)
        bar[nb++] = vkcu_vk_image_barrier(sl->plane[p].image, VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT, 0,
                                          VK_PIPELINE_STAGE_2_TRANSFER_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                                          VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                          VK_QUEUE_FAMILY_IGNORED, VK_QUEUE_FAMILY_IGNORED);
    VkDependencyInfo di = { .sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO, .imageMemoryBarrierCount = (uint32_t)nb,
                            .pImageMemoryBarriers = bar };
    g->vk.vkCmdPipelineBarrier2(cmd, &di);

    /* The ring holds the visible picture only: hardware frames keep
     * crop_left/crop_top (FFmpeg trims only right and bottom), so each plane
     * is copied from that offset, in the plane's own texels. A subsampled
     * plane starts at the offset rounded down and spans the rounded-up
     * width, as av_frame_apply_cropping crops software frames; an odd luma
     * offset is therefore still one whole-texel copy, the same bytes as
     * the CPU path. The extent fits: floor(cl/2) + ceil((w-cl)/2) <= ceil(w/2). */
    int cl = (int)frame->crop_left, ct = (int)frame->crop_top;
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(g->ring_fmt);
    for (int p = 0; p < sl->nb_planes; p++) {
        int sx = p ? cl >> desc->log2_chroma_w : cl, sy = p ? ct >> desc->log2_chroma_h : ct;
        VkImageAspectFlags aspect = multiplane ? (p == 0 ? VK_IMAGE_ASPECT_PLANE_0_BIT
                                                         : p == 1 ? VK_IMAGE_ASPECT_PLANE_1_BIT
                                                                  : VK_IMAGE_ASPECT_PLANE_2_BIT)
                                               : VK_IMAGE_ASPECT_COLOR_BIT;
        VkImageCopy region = {
            .srcSubresource = { aspect, 0, 0, 1 },
            .srcOffset = { sx, sy, 0 },
            .dstSubresource = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1 },
            .extent = { (uint32_t)sl->plane[p].width, (uint32_t)sl->plane[p].height, 1 },
        };
        g->vk.vkCmdCopyImage(cmd, vkf->img[multiplane ? 0 : p], VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                             sl->plane[p].image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
    }
    nb = 0;
    for (int p = 0; p < sl->nb_planes; p++)
        bar[nb++] = vkcu_vk_image_barrier(sl->plane[p].image, VK_PIPELINE_STAGE_2_TRANSFER_BIT,
                                          VK_ACCESS_2_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_2_BOTTOM_OF_PIPE_BIT, 0,
                                          VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_GENERAL, g->qf,
                                          VK_QUEUE_FAMILY_EXTERNAL);
    di.imageMemoryBarrierCount = (uint32_t)nb;
    g->vk.vkCmdPipelineBarrier2(cmd, &di);
}

/* The copy's submission: it waits the decoded frame's timeline (and the
 * slot's `done`, or the handoff timeline), signals the frame's timeline
 * and the slot's `ready`. */
static VkResult submit_copy(vkcu_gpu *g, frame_slot *sl, VkCommandBuffer cmd, const AVVkFrame *vkf)
{
    VkSemaphoreSubmitInfo waits[2], signals[2];
    int nw = 0, ns = 0;
    waits[nw++] = vkcu_vk_sem(vkf->sem[0], vkf->sem_value[0], VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
    if (g->cfg.timeline_handoff) {
        /* One timeline, two signalling queues: values must rise in order, so
         * frame n's copy (signal 2n+1) waits CUDA's release of frame n-1 (2n).
         * That also covers the reuse of this slot, K frames back. */
        if (g->tl_frames > 0)
            waits[nw++] = vkcu_vk_sem(g->timeline, 2 * g->tl_frames, VK_PIPELINE_STAGE_2_TRANSFER_BIT);
    } else if (sl->used) {
        waits[nw++] = vkcu_vk_sem(sl->done, 0, VK_PIPELINE_STAGE_2_TRANSFER_BIT);
    }
    signals[ns++] = vkcu_vk_sem(vkf->sem[0], vkf->sem_value[0] + 1, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
    if (g->cfg.timeline_handoff)
        signals[ns++] = vkcu_vk_sem(g->timeline, 2 * g->tl_frames + 1, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
    else
        signals[ns++] = vkcu_vk_sem(sl->ready, 0, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
    return vkcu_vk_submit(g->vk.vkQueueSubmit2, g->dev, g->qf, g->queue_index, g->queue, cmd, waits, nw, signals, ns,
                          sl->fence);
}

/* Records and submits the Vulkan half of the handoff for a decoded frame. */
int vkcu_gpu_record_copy(vkcu_gpu *g, int s, AVFrame *frame, char *err, size_t errlen)
{
    int ret = 0;
    frame_slot *sl = &g->slot[s];
    AVHWFramesContext *hwfc = (AVHWFramesContext *)frame->hw_frames_ctx->data;
    AVVulkanFramesContext *vkfc = hwfc->hwctx;
    AVVkFrame *vkf = (AVVkFrame *)frame->data[0];
    int locked = 0;

    if ((ret = slot_fence_wait(g, s, err, errlen)) < 0)
        return ret;
    VkCommandBuffer cmd = sl->cmd;
    VkCommandBufferBeginInfo bi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                    .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT };
    VK_CHECK(g->vk.vkBeginCommandBuffer(cmd, &bi));
    if (g->ts_valid) {
        g->vk.vkCmdResetQueryPool(cmd, g->timestamps, 2 * s, 2);
        g->vk.vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT, g->timestamps, 2 * s);
    }
    vkfc->lock_frame(hwfc, vkf);
    locked = 1;
    int multiplane = !vkf->img[1];
    record_planes(g, sl, cmd, frame, vkf, multiplane);
    if (g->ts_valid)
        g->vk.vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_BOTTOM_OF_PIPE_BIT, g->timestamps, 2 * s + 1);
    VK_CHECK(g->vk.vkEndCommandBuffer(cmd));

    VkResult r = submit_copy(g, sl, cmd, vkf);
    if (r != VK_SUCCESS) {
        snprintf(err, errlen, "Vulkan: handoff submission failed: %s%s", vkcu_vk_result_str(r),
                 r == VK_ERROR_DEVICE_LOST ? " (GPU lost)" : "");
        ret = VKCU_ERR_DEVICE;
        goto fail;
    }
    sl->submitted = 1;
    for (int p = 0; p < (multiplane ? 1 : sl->nb_planes); p++) {
        vkf->layout[p] = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
        vkf->access[p] = VK_ACCESS_TRANSFER_READ_BIT;
    }
    vkf->sem_value[0]++;
    vkfc->unlock_frame(hwfc, vkf);
    g->dtod++;
    return 0;
fail:
    if (locked)
        vkfc->unlock_frame(hwfc, vkf);
    return ret;
}

int vkcu_gpu_wait_ready(vkcu_gpu *g, int s, char *err, size_t errlen)
{
    int ret = 0;
    struct cudaExternalSemaphoreWaitParams wp;
    memset(&wp, 0, sizeof(wp));
    if (g->cfg.timeline_handoff) {
        wp.params.fence.value = 2 * g->tl_frames + 1;
        CU_CHECK(cudaWaitExternalSemaphoresAsync(&g->cu_timeline, &wp, 1, g->stream));
    } else {
        CU_CHECK(cudaWaitExternalSemaphoresAsync(&g->slot[s].cu_ready, &wp, 1, g->stream));
    }
    return 0;
fail:
    return ret;
}

int vkcu_gpu_signal_done(vkcu_gpu *g, int s, char *err, size_t errlen)
{
    int ret = 0;
    frame_slot *sl = &g->slot[s];
    struct cudaExternalSemaphoreSignalParams sp;
    memset(&sp, 0, sizeof(sp));
    if (g->cfg.timeline_handoff) {
        sp.params.fence.value = 2 * g->tl_frames + 2;
        CU_CHECK(cudaSignalExternalSemaphoresAsync(&g->cu_timeline, &sp, 1, g->stream));
        g->tl_frames++;
    } else {
        CU_CHECK(cudaSignalExternalSemaphoresAsync(&sl->cu_done, &sp, 1, g->stream));
    }
    sl->used = 1;
    return 0;
fail:
    return ret;
}
