/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The output ring's Vulkan side on the machine's Vulkan device (Mesa's
 * lavapipe in CI), playing CUDA's part with Vulkan itself:
 * - each slot's memory exported as an opaque FD and imported into a second
 *   allocation (as CUDA imports it): bytes written through the import come
 *   back, through the readback submission, in the host buffer;
 * - the slot protocol over 3 rounds of a 3-slot ring: the writer waits on
 *   `drained` before reusing a slot, signals `filled`; the readback waits on
 *   `filled` and signals `drained` (with exported semaphores imported by the
 *   writer where the driver exports them; lavapipe 22.3 does not, and the
 *   test then says so and signals the ring's own semaphores);
 * - every host frame stays intact while later readbacks run and after the
 *   ring is freed; ring creation and freeing leave no file descriptor open.
 * Without a device: the capability line `vkcu probe` prints per device
 * (output ring, zero-copy encode) for the H200's queue families and
 * extensions (no encode queue: refused, saying why) and for made-up devices
 * with an encode queue, with and without the extensions it needs.
 * Exit 77 with the reason where there is no Vulkan device or it cannot
 * export memory (after the capability checks passed).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>
#include <libavutil/pixdesc.h>

#include "gpu/outring_vk.h"
#include "gpu/vk.h"
#include "gpu/vkinstance.h"
#include "test_util.h"
#include "util/error.h"

#define NB(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define SLOTS 3
#define ROUNDS 3
#define FRAMES (SLOTS * ROUNDS)
/* Not a multiple of 4 or of a page: the copy must move exactly this much. */
#define FRAME_SIZE (4 * 192 * 46 + 37) /* also holds to_frame's largest slot: 4 planes, 70x46 at 16 bits */

static uint8_t pattern(int frame, size_t i)
{
    uint64_t s = (uint64_t)frame * 1000003u + i + 1;
    return (uint8_t)tu_rand(&s);
}

typedef struct writer {
    /* The writer's (CUDA's) view of each slot: the imported memory, mapped. */
    VkBuffer buffer[SLOTS];
    VkDeviceMemory memory[SLOTS];
    uint8_t *map[SLOTS];
    VkSemaphore filled[SLOTS], drained[SLOTS]; /* imported, or the ring's own */
    int imported_sems;
    VkFence fence;
    VkQueue queue;
} writer;

static int submit(const vkcu_vkfn *vk, AVHWDeviceContext *dctx, writer *w, uint32_t qf, VkSemaphore wait,
                  VkSemaphore signal, VkFence fence)
{
    VkSemaphoreSubmitInfo wi = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO, .semaphore = wait,
                                 .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT };
    VkSemaphoreSubmitInfo si = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO, .semaphore = signal,
                                 .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT };
    VkSubmitInfo2 sub = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2, .waitSemaphoreInfoCount = wait ? 1 : 0,
                          .pWaitSemaphoreInfos = &wi, .signalSemaphoreInfoCount = signal ? 1 : 0,
                          .pSignalSemaphoreInfos = &si };
    vkcu_vk_queue_lock(dctx, qf, 0);
    VkResult r = vk->vkQueueSubmit2(w->queue, 1, &sub, fence);
    vkcu_vk_queue_unlock(dctx, qf, 0);
    return r == VK_SUCCESS ? 0 : -1;
}

/* Slot 0 (used: the writer waits on its drained) filled with a frame laid
 * out as vkcu_outring_layout gives it for `sw` (the encoders' layouts:
 * NV12/P010 for the video encoders, planar 8- to 16-bit 4:2:0/4:2:2/4:4:4
 * with or without alpha for the compute encoders), copied by
 * vkcu_outring_to_frame into a frame of a plain FFmpeg Vulkan frames
 * context of that format (images with TRANSFER_DST | TRANSFER_SRC, as an
 * encoder's would be written and as FFmpeg's download reads them; no
 * encoder; one_per_plane: one image per plane, as the compute encoders'
 * frames are made, else FFmpeg's choice: one multi-planar image where the
 * driver has the format), downloaded by FFmpeg. Every visible byte must be
 * the slot's, the frame's timeline value must advance by one and its
 * layout be stored. Returns 1 when it ran and matched, 0 when not run (the
 * device makes no such images; *why says so), -1 on failure. */
static int to_frame(const vkcu_vkfn *vk, AVHWDeviceContext *dctx, vkcu_outring *ring, writer *w, uint32_t qf,
                    int *used, enum AVPixelFormat sw, int W, int H, int one_per_plane, const char **why)
{
#ifdef __SANITIZE_ADDRESS__
    /* FFmpeg's download (av_hwframe_transfer_data) leaves its device
     * context unfreed in the sanitizer build: see test_vkdev.c. */
    (void)vk, (void)dctx, (void)ring, (void)w, (void)qf, (void)used, (void)sw, (void)W, (void)H, (void)one_per_plane;
    *why = "not run (sanitizer build)";
    return 0;
#else
    char err[256] = "";
    const int s = 0, n = 1000 + sw * 7 + W;
    vkcu_slot_layout l;
    CHECK(vkcu_outring_layout(sw, W, H, &l) == 0, "%s %dx%d: no slot layout", av_get_pix_fmt_name(sw), W, H);
    for (int p = 0; p < l.nb_planes; p++)
        CHECK(l.pitch[p] % 64 == 0 && l.pitch[p] % l.texel[p] == 0 && l.pitch[p] >= l.plane_w[p] * l.texel[p] &&
                  (p == 0 ? l.offset[p] == 0 : l.offset[p] == l.offset[p - 1] + (size_t)l.pitch[p - 1] * l.plane_h[p - 1]),
              "%s %dx%d plane %d: pitch %d, texel %d, offset %zu", av_get_pix_fmt_name(sw), W, H, p, l.pitch[p],
              l.texel[p], l.offset[p]);
    VkDevice dev = ((AVVulkanDeviceContext *)dctx->hwctx)->act_dev;
    AVBufferRef *devref = av_buffer_ref(vkcu_outring_device(ring));
    AVBufferRef *frames = av_hwframe_ctx_alloc(devref);
    AVHWFramesContext *fc = (AVHWFramesContext *)frames->data;
    fc->format = AV_PIX_FMT_VULKAN;
    fc->sw_format = sw;
    fc->width = W;
    fc->height = H;
    AVVulkanFramesContext *vfc = fc->hwctx;
    vfc->usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
    if (one_per_plane)
        vfc->flags |= AV_VK_FRAME_FLAG_DISABLE_MULTIPLANE;
    int r = av_hwframe_ctx_init(frames);
    if (r < 0) {
        /* lavapipe 22.3 may lack a format: said, not failed. */
        *why = "not run: FFmpeg or this device makes no such images";
        av_buffer_unref(&frames);
        av_buffer_unref(&devref);
        return 0;
    }
    CHECK(l.size <= FRAME_SIZE, "slot of %zu bytes for a %zu-byte frame", (size_t)FRAME_SIZE, l.size);
    if (used[s]) {
        submit(vk, dctx, w, qf, w->drained[s], VK_NULL_HANDLE, w->fence);
        vk->vkWaitForFences(dev, 1, &w->fence, VK_TRUE, 5000000000ull);
        vk->vkResetFences(dev, 1, &w->fence);
    }
    for (size_t i = 0; i < l.size; i++)
        w->map[s][i] = pattern(n, i);
    submit(vk, dctx, w, qf, VK_NULL_HANDLE, w->filled[s], VK_NULL_HANDLE);
    used[s] = 1;
    AVFrame *hwf = av_frame_alloc(), *back = av_frame_alloc();
    CHECK((r = av_hwframe_get_buffer(frames, hwf, 0)) == 0, "frame: %s", av_err2str(r));
    int ticket = -1, nb_img = 0;
    uint64_t v0 = 0;
    AVVkFrame *vkf = r == 0 ? (AVVkFrame *)hwf->data[0] : NULL;
    if (vkf) {
        v0 = vkf->sem_value[0];
        while (nb_img < AV_NUM_DATA_POINTERS && vkf->img[nb_img])
            nb_img++;
    }
    /* Waits `filled` and signals `drained` even when the frame is refused
     * later: only a frame from the pool is handed over. */
    r = vkf ? vkcu_outring_to_frame(ring, s, hwf, &l, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, &ticket, err, sizeof(err))
            : -1;
    CHECK(r == 0, "to_frame (%s %dx%d): %s", av_get_pix_fmt_name(sw), W, H, err);
    CHECK(r < 0 || (vkf->sem_value[0] == v0 + 1 && vkf->layout[0] == VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL),
          "the frame's timeline value %llu (was %llu), layout %d", (unsigned long long)vkf->sem_value[0],
          (unsigned long long)v0, (int)vkf->layout[0]);
    if (r == 0)
        CHECK((r = vkcu_outring_wait(ring, ticket, 5000000000ull, err, sizeof(err))) == 0, "to_frame wait: %s", err);
    if (r == 0) {
        back->format = sw;
        CHECK((r = av_hwframe_transfer_data(back, hwf, 0)) == 0, "download: %s", av_err2str(r));
    }
    long bad = r == 0 ? 0 : -1;
    for (int p = 0; !bad && p < l.nb_planes; p++)
        for (int y = 0; y < l.plane_h[p]; y++)
            for (int x = 0; x < l.plane_w[p] * l.texel[p]; x++)
                bad += back->data[p][y * back->linesize[p] + x] != pattern(n, l.offset[p] + (size_t)y * l.pitch[p] + x);
    CHECK(!bad, "the encode consumer's %s %dx%d frame (%d image%s) differs from the slot in %ld bytes",
          av_get_pix_fmt_name(sw), W, H, nb_img, nb_img == 1 ? "" : "s", bad);
    /* Refused before any submission: a software frame, and a Vulkan frame
     * of another format than the slot's. */
    err[0] = 0;
    CHECK(vkcu_outring_to_frame(ring, s, back, &l, VK_IMAGE_LAYOUT_GENERAL, &ticket, err, sizeof(err)) ==
                  VKCU_ERR_DEVICE && strstr(err, "not a Vulkan frame"),
          "a software frame accepted: '%s'", err);
    vkcu_slot_layout other = l;
    other.format = sw == AV_PIX_FMT_NV12 ? AV_PIX_FMT_YUV420P : AV_PIX_FMT_NV12;
    err[0] = 0;
    CHECK(vkf && vkcu_outring_to_frame(ring, s, hwf, &other, VK_IMAGE_LAYOUT_GENERAL, &ticket, err, sizeof(err)) ==
                     VKCU_ERR_DEVICE && strstr(err, "the destination frame is"),
          "a frame of another format accepted: '%s'", err);
    av_frame_free(&hwf);
    av_frame_free(&back);
    av_buffer_unref(&frames);
    av_buffer_unref(&devref);
    *why = bad ? "WRONG" : nb_img > 1 || l.nb_planes == 1 ? "bit-exact (image per plane)" : "bit-exact (multi-planar)";
    return bad ? -1 : 1;
#endif
}

/* 0, or 77 when the device cannot play CUDA's part (said why). */
static int run(const vkcu_vkfn *vk, AVBufferRef *devref, uint32_t qf, int export_sems, const char *devname)
{
    char err[256] = "";
    AVHWDeviceContext *dctx = (AVHWDeviceContext *)devref->data;
    AVVulkanDeviceContext *hw = dctx->hwctx;
    VkDevice dev = hw->act_dev;
    PFN_vkImportSemaphoreFdKHR import_sem =
        (PFN_vkImportSemaphoreFdKHR)vk->vkGetDeviceProcAddr(dev, "vkImportSemaphoreFdKHR");
    int fds0 = tu_proc_count("fd");

    vkcu_outring_params rp = { .vk_device = devref, .vk = vk, .queue_family = qf, .queue_index = 0,
                               .nb_slots = SLOTS, .frame_size = FRAME_SIZE, .export_semaphores = export_sems };
    vkcu_outring *ring = NULL;
    int r = vkcu_outring_create(&rp, &ring, err, sizeof(err));
    CHECK(r == 0, "ring not made: %s", err);
    if (r < 0)
        return 0;
    CHECK(vkcu_outring_nb_slots(ring) == SLOTS, "%d slots", vkcu_outring_nb_slots(ring));
    rp.nb_slots = VKCU_OUTRING_MAX_SLOTS + 1;
    vkcu_outring *bad = NULL;
    err[0] = 0;
    CHECK(vkcu_outring_create(&rp, &bad, err, sizeof(err)) == VKCU_ERR_DEVICE && !bad && strstr(err, "1..16 slots"),
          "17 slots accepted or unexplained: '%s'", err);

    writer w = { 0 };
    vk->vkGetDeviceQueue(dev, qf, 0, &w.queue);
    VkFenceCreateInfo fci = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
    vk->vkCreateFence(dev, &fci, NULL, &w.fence);
    VkPhysicalDeviceMemoryProperties mp;
    vk->vkGetPhysicalDeviceMemoryProperties(hw->phys_dev, &mp);
    int ok = 1, skipped = 0;
    for (int s = 0; s < SLOTS && ok; s++) {
        const vkcu_outring_slot *sl = vkcu_outring_slot_get(ring, s);
        int fd = -1;
        ok = vkcu_outring_export_memory(ring, s, &fd, err, sizeof(err)) == 0 && fd >= 0;
        CHECK(ok, "slot %d: memory not exported: %s", s, err);
        if (!ok)
            break;
        /* Import as CUDA does: the same size, dedicated, into a buffer of its own. */
        VkExternalMemoryBufferCreateInfo ext = { .sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
                                                 .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT };
        VkBufferCreateInfo bci = { .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .pNext = &ext, .size = FRAME_SIZE,
                                   .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT, .sharingMode = VK_SHARING_MODE_EXCLUSIVE };
        vk->vkCreateBuffer(dev, &bci, NULL, &w.buffer[s]);
        VkMemoryRequirements req;
        vk->vkGetBufferMemoryRequirements(dev, w.buffer[s], &req);
        /* An opaque FD is imported with the memory type it was made with. */
        uint32_t type = sl->memory_type;
        if (!(req.memoryTypeBits & (1u << type)) ||
            !(mp.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) {
            printf("SKIP import: the ring's memory on %s is not host-visible, so the test cannot stand in for CUDA's writes\n",
                   devname);
            close(fd);
            ok = 0;
            skipped = 1;
            break;
        }
        VkMemoryDedicatedAllocateInfo ded = { .sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO,
                                              .buffer = w.buffer[s] };
        VkImportMemoryFdInfoKHR imp = { .sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR, .pNext = &ded,
                                        .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT, .fd = fd };
        VkMemoryAllocateInfo mai = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .pNext = &imp,
                                     .allocationSize = sl->alloc_size, .memoryTypeIndex = type };
        VkResult vr = vk->vkAllocateMemory(dev, &mai, NULL, &w.memory[s]);
        if (vr != VK_SUCCESS) {
            printf("SKIP import: %s cannot import its own opaque FD memory (%s)\n", devname, vkcu_vk_result_str(vr));
            close(fd); /* the import failed: still ours */
            ok = 0;
            skipped = 1;
            break;
        }
        vk->vkBindBufferMemory(dev, w.buffer[s], w.memory[s], 0);
        vk->vkMapMemory(dev, w.memory[s], 0, VK_WHOLE_SIZE, 0, (void **)&w.map[s]);
        if (export_sems) {
            int ffd, dfd;
            ok = vkcu_outring_export_semaphores(ring, s, &ffd, &dfd, err, sizeof(err)) == 0;
            CHECK(ok, "slot %d: semaphores not exported: %s", s, err);
            VkSemaphoreCreateInfo sci = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO };
            for (int k = 0; ok && k < 2; k++) {
                VkSemaphore *sem = k ? &w.drained[s] : &w.filled[s];
                vk->vkCreateSemaphore(dev, &sci, NULL, sem);
                VkImportSemaphoreFdInfoKHR is = { .sType = VK_STRUCTURE_TYPE_IMPORT_SEMAPHORE_FD_INFO_KHR,
                                                  .semaphore = *sem,
                                                  .handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT,
                                                  .fd = k ? dfd : ffd };
                ok = import_sem && import_sem(dev, &is) == VK_SUCCESS;
                CHECK(ok, "slot %d: exported semaphore not imported", s);
                if (!ok)
                    close(k ? dfd : ffd);
            }
            w.imported_sems = 1;
        } else {
            int ffd, dfd;
            err[0] = 0;
            CHECK(vkcu_outring_export_semaphores(ring, s, &ffd, &dfd, err, sizeof(err)) < 0 && ffd < 0 && dfd < 0 &&
                      strstr(err, "without export"),
                  "unexportable semaphores exported: '%s'", err);
            w.filled[s] = sl->filled;
            w.drained[s] = sl->drained;
        }
    }

    /* The protocol, frame by frame; every host frame kept until the end. */
    AVBufferRef *host[FRAMES] = { 0 };
    int used[SLOTS] = { 0 }, tickets[FRAMES];
    for (int n = 0; n < FRAMES && ok; n++) {
        int s = n % SLOTS;
        if (used[s]) {
            /* CUDA's wait on `drained` before the slot is written again. */
            ok = submit(vk, dctx, &w, qf, w.drained[s], VK_NULL_HANDLE, w.fence) == 0 &&
                 vk->vkWaitForFences(dev, 1, &w.fence, VK_TRUE, 5000000000ull) == VK_SUCCESS;
            vk->vkResetFences(dev, 1, &w.fence);
            CHECK(ok, "frame %d: the writer's wait on slot %d's drained did not complete", n, s);
        }
        for (size_t i = 0; i < FRAME_SIZE; i++)
            w.map[s][i] = pattern(n, i);
        ok = ok && submit(vk, dctx, &w, qf, VK_NULL_HANDLE, w.filled[s], VK_NULL_HANDLE) == 0;
        CHECK(ok, "frame %d: filled not signalled", n);
        ok = ok && vkcu_outring_readback(ring, s, 1, 1, &host[n], &tickets[n], err, sizeof(err)) == 0;
        CHECK(ok, "frame %d: readback not submitted: %s", n, err);
        used[s] = 1;
        /* Frames are waited on one slot behind, as the session pops them. */
        if (ok && n >= 1) {
            ok = vkcu_outring_wait(ring, tickets[n - 1], 5000000000ull, err, sizeof(err)) == 0;
            CHECK(ok, "frame %d: readback did not complete: %s", n - 1, err);
        }
    }
    if (ok)
        CHECK(vkcu_outring_wait(ring, tickets[FRAMES - 1], 5000000000ull, err, sizeof(err)) == 0,
              "last readback: %s", err);
    CHECK(!ok || vkcu_outring_readbacks(ring) == FRAMES, "%lld readbacks, want %d",
          (long long)vkcu_outring_readbacks(ring), FRAMES);
    /* The encode consumer's copy, into frames FFmpeg allocated (NV12 and
     * P010, one multi-planar image each, their own timelines): what
     * FFmpeg's download then reads is what the writer put in the slot. */
    int copies = 0, copies_skipped = 0;
    char copy_notes[1024] = "";
    if (ok) {
        VkFormat vf;
        VkImageUsageFlags usage;
        VkImageCreateFlags flags;
        err[0] = 0;
        CHECK(vkcu_outring_encode_format(vk, devref, "h264_vulkan", 8, &vf, &usage, &flags, err, sizeof(err)) ==
                      VKCU_ERR_DEVICE &&
                  strstr(err, "h264_vulkan: the Vulkan device has no VK_KHR_video_encode_queue"),
              "encode format on a device without encode: '%s'", err);
        /* The video encoders' NV12/P010 and the compute encoders' planar
         * layouts, 8 to 16 bits, 4:2:0/4:2:2/4:4:4, with alpha; padded rows
         * with odd chroma widths, odd sizes, 1x1; FFmpeg's own image choice
         * and one image per plane (the compute encoders' frames). */
        static const enum AVPixelFormat fmts[] = {
            AV_PIX_FMT_NV12, AV_PIX_FMT_P010, AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV420P10, AV_PIX_FMT_YUV420P12,
            AV_PIX_FMT_YUV420P16, AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUV422P10, AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUV444P10,
            AV_PIX_FMT_YUV444P16, AV_PIX_FMT_YUVA420P, AV_PIX_FMT_YUVA444P10, AV_PIX_FMT_YUVA444P16,
        };
        static const int sizes[][2] = { { 70, 46 }, { 77, 45 }, { 1, 1 } };
        for (int f = 0; f < NB(fmts); f++)
            for (int z = 0; z < NB(sizes); z++)
                for (int one = 0; one < 2; one++) {
                    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmts[f]);
                    int even = !(sizes[z][0] & ((1 << d->log2_chroma_w) - 1)) &&
                               !(sizes[z][1] & ((1 << d->log2_chroma_h) - 1));
                    /* Multi-planar 4:2:0/4:2:2 images need even sizes (Vulkan); the compute encoders' are per plane. */
                    if (!one && !even)
                        continue;
                    const char *why = "not run";
                    int r2 = to_frame(vk, dctx, ring, &w, qf, used, fmts[f], sizes[z][0], sizes[z][1], one, &why);
                    copies += r2 > 0;
                    copies_skipped += r2 == 0;
                    if (r2 == 0 && !strstr(copy_notes, av_get_pix_fmt_name(fmts[f])) &&
                        strlen(copy_notes) < sizeof(copy_notes) - 64)
                        snprintf(copy_notes + strlen(copy_notes), sizeof(copy_notes) - strlen(copy_notes), "%s%s",
                                 copy_notes[0] ? " " : "", av_get_pix_fmt_name(fmts[f]));
                }
    }
    /* Drain the last frames' `drained` so no signal is left pending. */
    for (int s = 0; ok && s < SLOTS; s++) {
        submit(vk, dctx, &w, qf, w.drained[s], VK_NULL_HANDLE, w.fence);
        vk->vkWaitForFences(dev, 1, &w.fence, VK_TRUE, 5000000000ull);
        vk->vkResetFences(dev, 1, &w.fence);
    }
    for (int s = 0; s < SLOTS; s++) {
        if (w.map[s])
            vk->vkUnmapMemory(dev, w.memory[s]);
        if (w.buffer[s])
            vk->vkDestroyBuffer(dev, w.buffer[s], NULL);
        if (w.memory[s])
            vk->vkFreeMemory(dev, w.memory[s], NULL);
        if (w.imported_sems) {
            vk->vkDestroySemaphore(dev, w.filled[s], NULL);
            vk->vkDestroySemaphore(dev, w.drained[s], NULL);
        }
    }
    vk->vkDestroyFence(dev, w.fence, NULL);
    vkcu_outring_free(&ring);
    CHECK(!ring, "ring pointer not cleared");
    /* Host frames outlive the ring, each byte what the writer put in its slot. */
    int bad_frames = 0, nb = 0;
    for (int n = 0; n < FRAMES; n++) {
        if (!host[n])
            continue;
        nb++;
        int same = host[n]->size == FRAME_SIZE;
        for (size_t i = 0; same && i < FRAME_SIZE; i++)
            same = host[n]->data[i] == pattern(n, i);
        bad_frames += !same;
        CHECK(same, "frame %d: host bytes differ from what was written into slot %d", n, n % SLOTS);
        av_buffer_unref(&host[n]);
    }
    int fds1 = tu_proc_count("fd");
    CHECK(fds0 == fds1, "file descriptors: %d before the ring, %d after", fds0, fds1);
    if (ok)
        printf("%s readback: %d frames through %d slots bit-exact on %s, semaphores %s, fds %d -> %d; "
               "encode consumer's copy into FFmpeg Vulkan frames: %d bit-exact (NV12, P010, planar 8-16 bit "
               "4:2:0/4:2:2/4:4:4, alpha; 70x46, 77x45, 1x1), %d not run%s%s%s\n",
               tu_failures ? "FAIL" : "PASS", nb, SLOTS, devname,
               export_sems ? "exported and imported" : "not exportable here (ring's own signalled)", fds0, fds1,
               copies, copies_skipped, copies_skipped ? " (FFmpeg or the device makes no such images: " : "", copy_notes,
               copies_skipped ? ")" : "");
    return skipped ? 77 : 0;
}

#define ENC VK_QUEUE_VIDEO_ENCODE_BIT_KHR
#define E264 VK_VIDEO_CODEC_OPERATION_ENCODE_H264_BIT_KHR
#define E265 VK_VIDEO_CODEC_OPERATION_ENCODE_H265_BIT_KHR

static void test_caps(void)
{
    char line[512];
    const vkcu_outring_compute both[] = { { "ffv1_vulkan", "" }, { "prores_ks_vulkan", "" } };
    const vkcu_outring_compute lacking[] = { { "ffv1_vulkan", "shaderInt8, bufferDeviceAddress" },
                                             { "prores_ks_vulkan", "" } };
    /* The H200 (driver 580): graphics, transfer, compute, decode (H.264, HEVC), optical flow. */
    const vkcu_vk_queue_family h200[] = {
        { VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT, 16, 0 },
        { VK_QUEUE_TRANSFER_BIT, 2, 0 },
        { VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT, 8, 0 },
        { VK_QUEUE_VIDEO_DECODE_BIT_KHR | VK_QUEUE_TRANSFER_BIT, 7,
          VK_VIDEO_CODEC_OPERATION_DECODE_H264_BIT_KHR | VK_VIDEO_CODEC_OPERATION_DECODE_H265_BIT_KHR },
        { VK_QUEUE_OPTICAL_FLOW_BIT_NV | VK_QUEUE_TRANSFER_BIT, 1, 0 },
    };
    const char *h200_exts[] = { VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME,
                                VK_KHR_VIDEO_QUEUE_EXTENSION_NAME, VK_KHR_VIDEO_DECODE_QUEUE_EXTENSION_NAME,
                                VK_KHR_VIDEO_DECODE_H264_EXTENSION_NAME, VK_KHR_VIDEO_DECODE_H265_EXTENSION_NAME };
    /* FFmpeg 8.1 with both compute encoders, every feature there: they take ring frames on the compute-only family. */
    VkVideoCodecOperationFlagsKHR ops =
        vkcu_outring_caps(h200, NB(h200), h200_exts, NB(h200_exts), both, 2, line, sizeof(line));
    CHECK(ops == 0 && !strcmp(line, "output ring (CUDA -> Vulkan): yes; zero-copy encode: ffv1_vulkan prores_ks_vulkan "
                                    "(compute queue family 2); h264_vulkan hevc_vulkan: no (no Vulkan video encode queue)"),
          "H200: ops %#x, '%s'", (unsigned)ops, line);
    /* FFmpeg 7.1 (no compute encoders); a device without a needed feature. */
    vkcu_outring_caps(h200, NB(h200), h200_exts, NB(h200_exts), NULL, 0, line, sizeof(line));
    CHECK(strstr(line, "; zero-copy encode: ffv1_vulkan prores_ks_vulkan: not in this build; h264_vulkan hevc_vulkan: no"),
          "H200, FFmpeg 7.1: '%s'", line);
    vkcu_outring_caps(h200, NB(h200), h200_exts, NB(h200_exts), lacking, 2, line, sizeof(line));
    CHECK(strstr(line, "; zero-copy encode: prores_ks_vulkan (compute queue family 2); ffv1_vulkan: no (lacks "
                       "shaderInt8, bufferDeviceAddress); h264_vulkan"),
          "missing features: '%s'", line);
    const vkcu_vk_queue_family no_compute[] = { { VK_QUEUE_TRANSFER_BIT, 2, 0 } };
    vkcu_outring_caps(no_compute, NB(no_compute), h200_exts, NB(h200_exts), both, 2, line, sizeof(line));
    CHECK(strstr(line, "; zero-copy encode: ffv1_vulkan: no (no compute queue); prores_ks_vulkan: no (no compute queue); "),
          "no compute queue: '%s'", line);

    /* A GPU that encodes both codecs on family 1. */
    const vkcu_vk_queue_family enc[] = { { VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT, 2, 0 },
                                         { ENC | VK_QUEUE_TRANSFER_BIT, 1, E264 | E265 } };
    const char *enc_exts[] = { VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME,
                               VK_KHR_VIDEO_QUEUE_EXTENSION_NAME, VK_KHR_VIDEO_ENCODE_QUEUE_EXTENSION_NAME,
                               VK_KHR_VIDEO_ENCODE_H264_EXTENSION_NAME, VK_KHR_VIDEO_ENCODE_H265_EXTENSION_NAME };
    ops = vkcu_outring_caps(enc, NB(enc), enc_exts, NB(enc_exts), both, 2, line, sizeof(line));
    CHECK(ops == (E264 | E265) &&
              !strcmp(line, "output ring (CUDA -> Vulkan): yes; zero-copy encode: ffv1_vulkan prores_ks_vulkan "
                            "(compute queue family 0); h264_vulkan hevc_vulkan (video encode queue family 1)"),
          "encoder: ops %#x, '%s'", (unsigned)ops, line);
    /* Without the HEVC extension only H.264; without the encode queue extension nothing. */
    ops = vkcu_outring_caps(enc, NB(enc), enc_exts, NB(enc_exts) - 1, both, 2, line, sizeof(line));
    CHECK(ops == E264 && strstr(line, "; h264_vulkan (video encode queue family 1)"), "no HEVC ext: ops %#x, '%s'",
          (unsigned)ops, line);
    const char *no_queue_ext[] = { VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME,
                                   VK_KHR_VIDEO_QUEUE_EXTENSION_NAME, VK_KHR_VIDEO_ENCODE_H264_EXTENSION_NAME };
    ops = vkcu_outring_caps(enc, NB(enc), no_queue_ext, NB(no_queue_ext), both, 2, line, sizeof(line));
    CHECK(ops == 0 && strstr(line, "; h264_vulkan hevc_vulkan: no (lacks VK_KHR_video_encode_queue)"), "no queue ext: '%s'",
          line);
    /* No semaphore FDs (lavapipe 22.3): no ring, hence no zero-copy encode either. */
    ops = vkcu_outring_caps(enc, NB(enc), enc_exts + 0, 1, both, 2, line, sizeof(line));
    CHECK(ops == 0 &&
              !strcmp(line, "output ring (CUDA -> Vulkan): no (lacks VK_KHR_external_semaphore_fd); "
                            "zero-copy encode: no (needs the output ring)"),
          "no semaphore FD: '%s'", line);
    printf("%s capability lines\n", tu_failures ? "FAIL" : "PASS");
}

int main(void)
{
    char err[256] = "";
#ifdef __SANITIZE_ADDRESS__
    /* As test_vkdev: lavapipe stays mapped after the loader unloads it, so
     * its process-lifetime data is not reported as leaks. */
    dlopen("libvulkan_lvp.so", RTLD_NOW | RTLD_NODELETE);
#endif
    test_caps();
    const vkcu_vk_instance *vi = vkcu_vk_instance_get(NULL, err, sizeof(err));
    if (!vi) {
        printf("no Vulkan: %s\n", err);
        return tu_failures ? 1 : 77;
    }
    if (!vi->nb_devs) {
        printf("no Vulkan device\n");
        return tu_failures ? 1 : 77;
    }
    vkcu_vkfn fn = vi->fn;
    VkPhysicalDevice pd = vi->devs[0].pd;
    const char *name = vi->devs[0].name;
    const vkcu_vk_caps *caps = vkcu_vk_caps_get(vi, 0);
    if (!caps || !vkcu_vk_caps_has(caps, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME)) {
        printf("%s has no VK_KHR_external_memory_fd: the output ring cannot be exported here\n", name);
        return tu_failures ? 1 : 77;
    }
    VkPhysicalDeviceExternalSemaphoreInfo esi = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO,
                                                  .handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT };
    VkExternalSemaphoreProperties esp = { .sType = VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES };
    fn.vkGetPhysicalDeviceExternalSemaphoreProperties(pd, &esi, &esp);
    const VkExternalSemaphoreFeatureFlags both =
        VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT | VK_EXTERNAL_SEMAPHORE_FEATURE_IMPORTABLE_BIT;
    int export_sems = vkcu_vk_caps_has(caps, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME) &&
                      (esp.externalSemaphoreFeatures & both) == both;
    if (!export_sems)
        printf("note: %s cannot export binary semaphores as opaque FDs (no VK_KHR_external_semaphore_fd): "
               "semaphore export not run, the protocol runs on the ring's own semaphores\n", name);

    vkcu_vk_plan plan;
    vkcu_vk_plan_want want = { .compute = 1 };
    if (vkcu_vk_plan_device(caps->qf, caps->nqf, caps->exts, caps->nb_exts, &want, &plan, err, sizeof(err)) < 0) {
        printf("%s: no usable queue (%s)\n", name, err);
        return tu_failures ? 1 : 77;
    }
    AVBufferRef *dev = NULL;
    if (vkcu_vk_device_create(vi, 0, &plan, &dev, NULL, err, sizeof(err)) < 0) {
        printf("FAIL device on %s: %s\n", name, err);
        return 1;
    }
    AVVulkanDeviceContext *hw = ((AVHWDeviceContext *)dev->data)->hwctx;
    /* One by one: a driver without semaphore export has no vkGetSemaphoreFdKHR,
     * which vkcu_vk_load (the CUDA session's loader) requires. */
    const char *missing = NULL;
#define X(fname)                                                                        \
    fn.fname = (PFN_##fname)fn.vkGetDeviceProcAddr(hw->act_dev, #fname);                 \
    if (!fn.fname && strcmp(#fname, "vkGetSemaphoreFdKHR") && !missing)                 \
        missing = #fname;
    VKCU_DEVICE_FNS(X)
#undef X
    if (missing) {
        printf("FAIL %s lacks %s\n", name, missing);
        av_buffer_unref(&dev);
        return 1;
    }
    int rc = run(&fn, dev, (uint32_t)plan.compute_family, export_sems, name);
    av_buffer_unref(&dev);
    return tu_failures ? 1 : rc;
}
