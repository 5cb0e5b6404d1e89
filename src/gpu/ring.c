/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The input ring: nb_slots slots, each holding one decoded frame's planes
 * as interop images that Vulkan copies into and CUDA reads through texture
 * objects, with the slot's semaphores (binary variant), command buffer and
 * fence. Slot s takes frames s, s + nb_slots, ...; a slot is reused only
 * once CUDA signalled `done` for its previous frame (record.c). Frames that
 * fell back to software decode are uploaded into the same arrays.
 */
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>

#include "kernels/frame_kernels.h"
#include "session_priv.h"

static void plane_formats(enum AVPixelFormat sw, int plane, VkFormat *f, int *bytes, int *comps, int *w, int *h,
                          int width, int height)
{
    int lw, lh;
    vkcu_plane_layout(sw, plane, bytes, comps, &lw, &lh);
    *w = AV_CEIL_RSHIFT(width, lw);
    *h = AV_CEIL_RSHIFT(height, lh);
    if (*bytes == 1)
        *f = *comps == 2 ? VK_FORMAT_R8G8_UNORM : VK_FORMAT_R8_UNORM;
    else
        *f = *comps == 2 ? VK_FORMAT_R16G16_UNORM : VK_FORMAT_R16_UNORM;
}

/* Builds the ring for frames of this format and size (first frame). */
int vkcu_gpu_ring_create(vkcu_gpu *g, enum AVPixelFormat sw, int w, int h, char *err, size_t errlen)
{
    int ret = 0;
    g->ring_fmt = sw;
    g->ring_w = w;
    g->ring_h = h;
    int nb_planes = vkcu_nb_planes(sw);
    for (int s = 0; s < g->nb_slots; s++) {
        frame_slot *sl = &g->slot[s];
        sl->nb_planes = nb_planes;
        for (int p = 0; p < nb_planes; p++) {
            VkFormat vf;
            int bytes, comps, pw, ph;
            plane_formats(sw, p, &vf, &bytes, &comps, &pw, &ph, w, h);
            ret = vkcu_gpu_import_plane(g, &sl->plane[p], vf, pw, ph, bytes, comps, err, errlen);
            if (ret < 0)
                goto fail;
        }
        if (!g->cfg.timeline_handoff) {
            if ((ret = vkcu_gpu_import_semaphore(g, &sl->ready, &sl->cu_ready, 0, err, errlen)) < 0 ||
                (ret = vkcu_gpu_import_semaphore(g, &sl->done, &sl->cu_done, 0, err, errlen)) < 0)
                goto fail;
        }
        VkCommandBufferAllocateInfo cai = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                            .commandPool = g->pool, .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                            .commandBufferCount = 1 };
        VK_CHECK(g->vk.vkAllocateCommandBuffers(g->hwctx->act_dev, &cai, &sl->cmd));
        VkFenceCreateInfo fci = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
        VK_CHECK(g->vk.vkCreateFence(g->hwctx->act_dev, &fci, NULL, &sl->fence));
    }
    if (g->cfg.timeline_handoff &&
        (ret = vkcu_gpu_import_semaphore(g, &g->timeline, &g->cu_timeline, 1, err, errlen)) < 0)
        goto fail;
    return 0;
fail:
    return ret;
}

void vkcu_gpu_slot_frame(const vkcu_gpu *g, const frame_slot *sl, vkcu_gpu_frame *f, const AVFrame *src)
{
    memset(f, 0, sizeof(*f));
    vkcu_format_from_frame(&f->fmt, src, g->ring_fmt);
    f->fmt.width = g->ring_w;
    f->fmt.height = g->ring_h;
    f->nb_planes = sl->nb_planes;
    for (int p = 0; p < sl->nb_planes; p++) {
        f->plane[p].tex = sl->plane[p].tex;
        f->plane[p].surf = sl->plane[p].surf;
        f->plane[p].width = sl->plane[p].width;
        f->plane[p].height = sl->plane[p].height;
    }
    f->pts = src->pts;
    f->duration = src->duration;
    f->flags = src->flags;
    f->repeat_pict = src->repeat_pict;
}

/* Software fallback: one upload of each plane into the slot's interop arrays. */
int vkcu_gpu_ring_upload(vkcu_gpu *g, int s, const AVFrame *frame, char *err, size_t errlen)
{
    int ret = 0;
    frame_slot *sl = &g->slot[s];
    for (int p = 0; p < sl->nb_planes; p++) {
        int bytes, comps, lw, lh;
        vkcu_plane_layout(g->ring_fmt, p, &bytes, &comps, &lw, &lh);
        size_t row = (size_t)sl->plane[p].width * bytes * comps;
        CU_CHECK(cudaMemcpy2DToArrayAsync(sl->plane[p].array, 0, 0, frame->data[p], frame->linesize[p], row,
                                          sl->plane[p].height, cudaMemcpyHostToDevice, g->stream));
        g->htod_bytes += (int64_t)row * sl->plane[p].height;
    }
    return 0;
fail:
    return ret;
}

void vkcu_gpu_ring_free_cuda(vkcu_gpu *g)
{
    for (int s = 0; s < g->nb_slots; s++) {
        frame_slot *sl = &g->slot[s];
        for (int p = 0; p < 4; p++)
            vkcu_gpu_plane_free_cuda(&sl->plane[p]);
        if (sl->cu_ready)
            cudaDestroyExternalSemaphore(sl->cu_ready);
        if (sl->cu_done)
            cudaDestroyExternalSemaphore(sl->cu_done);
    }
    if (g->cu_timeline)
        cudaDestroyExternalSemaphore(g->cu_timeline);
}

void vkcu_gpu_ring_free_vk(vkcu_gpu *g)
{
    VkDevice dev = g->hwctx->act_dev;
    for (int s = 0; s < g->nb_slots; s++) {
        frame_slot *sl = &g->slot[s];
        for (int p = 0; p < 4; p++)
            vkcu_gpu_plane_free_vk(g, &sl->plane[p]);
        if (sl->ready)
            g->vk.vkDestroySemaphore(dev, sl->ready, NULL);
        if (sl->done)
            g->vk.vkDestroySemaphore(dev, sl->done, NULL);
        if (sl->fence)
            g->vk.vkDestroyFence(dev, sl->fence, NULL);
    }
    if (g->timeline)
        g->vk.vkDestroySemaphore(dev, g->timeline, NULL);
}

void vkcu_gpu_ring_release(vkcu_gpu *g)
{
    VkDevice dev = g->hwctx->act_dev;
    vkcu_gpu_ring_free_cuda(g);
    vkcu_gpu_ring_free_vk(g);
    for (int s = 0; s < g->nb_slots; s++) {
        frame_slot *sl = &g->slot[s];
        if (sl->cmd)
            g->vk.vkFreeCommandBuffers(dev, g->pool, 1, &sl->cmd);
        memset(sl, 0, sizeof(*sl));
    }
    g->timeline = VK_NULL_HANDLE;
    g->cu_timeline = NULL;
    g->tl_frames = 0;
    g->frame_no = 0;
    g->ring_ready = 0;
}
