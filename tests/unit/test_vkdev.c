/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu's own Vulkan device (src/gpu/vk.c). Without a GPU:
 * - the queue and extension plan on an H200's queue families (as its driver
 *   reports them): the decode family's 7 queues and one compute queue, not
 *   every queue of every family; the extensions FFmpeg's decoder and the
 *   CUDA handoff need and nothing else; the refusals, each with its reason;
 * - on the machine's own Vulkan device (Mesa's lavapipe on CI: no video
 *   queue, so decode is left out of the plan): the device is made, FFmpeg
 *   accepts it (av_hwdevice_ctx_init), allocates Vulkan frames on it and
 *   moves a frame up and back bit-exactly through its one compute queue.
 * Exit 0 when every check passed (the Vulkan part is skipped, saying so,
 * where there is no Vulkan device at all).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>

#include "gpu/vkdev.h"
#include "gpu/vk.h"
#include "gpu/vkshader.h"
#include "gpu/vkinstance.h"
#include "util/error.h"
#include "test_util.h"

#define DEC VK_QUEUE_VIDEO_DECODE_BIT_KHR
#define H264 VK_VIDEO_CODEC_OPERATION_DECODE_H264_BIT_KHR
#define H265 VK_VIDEO_CODEC_OPERATION_DECODE_H265_BIT_KHR
#define AV1 VK_VIDEO_CODEC_OPERATION_DECODE_AV1_BIT_KHR
#define ENC264 VK_VIDEO_CODEC_OPERATION_ENCODE_H264_BIT_KHR
#define ENC265 VK_VIDEO_CODEC_OPERATION_ENCODE_H265_BIT_KHR
#define GCT (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT)
#define CT (VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT)

/* The H200's families (driver 580): graphics 16, transfer 2, compute 8,
 * decode 7 (H.264 and HEVC), optical flow 1. */
static const vkcu_vk_queue_family h200[] = {
    { GCT, 16, 0 }, { VK_QUEUE_TRANSFER_BIT, 2, 0 }, { CT, 8, 0 }, { DEC | VK_QUEUE_TRANSFER_BIT, 7, H264 | H265 },
    { VK_QUEUE_OPTICAL_FLOW_BIT_NV | VK_QUEUE_TRANSFER_BIT, 1, 0 },
};
static const char *const all_exts[] = {
    VK_KHR_SWAPCHAIN_EXTENSION_NAME, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME,
    VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME, VK_EXT_DESCRIPTOR_BUFFER_EXTENSION_NAME,
    VK_KHR_VIDEO_QUEUE_EXTENSION_NAME, VK_KHR_VIDEO_DECODE_QUEUE_EXTENSION_NAME,
    VK_KHR_VIDEO_DECODE_H264_EXTENSION_NAME, VK_KHR_VIDEO_DECODE_H265_EXTENSION_NAME,
    VK_KHR_VIDEO_DECODE_AV1_EXTENSION_NAME, VK_KHR_VIDEO_MAINTENANCE_1_EXTENSION_NAME,
    VK_NV_OPTICAL_FLOW_EXTENSION_NAME, VK_EXT_EXTERNAL_MEMORY_DMA_BUF_EXTENSION_NAME,
    VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME,
};
#define NB(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int plan_has(const vkcu_vk_plan *p, const char *ext)
{
    for (int i = 0; i < p->nb_exts; i++)
        if (!strcmp(p->exts[i], ext))
            return 1;
    return 0;
}

static int plan(const vkcu_vk_queue_family *qf, int nqf, const char *const *avail, int navail, unsigned flags,
                uint32_t compute, uint32_t decode, uint32_t encode, vkcu_vk_plan *p, char *err, size_t errlen)
{
    vkcu_vk_plan_want want = { .flags = flags, .compute = compute, .decode = decode, .encode = encode };
    return vkcu_vk_plan_device(qf, nqf, avail, navail, &want, p, err, errlen);
}

static void test_plans(void)
{
    vkcu_vk_plan p;
    char err[256] = "";
    int r = plan(h200, NB(h200), all_exts, NB(all_exts), VKCU_PLAN_INTEROP | VKCU_PLAN_DECODE, 1, 8, 0, &p, err, sizeof(err));
    CHECK(r == 0, "H200 plan failed: %s", err);
    CHECK(p.compute_family == 2 && p.nb_compute == 1, "H200: compute family %d x%u, want the compute-only family 2 x1",
          p.compute_family, p.nb_compute);
    CHECK(p.decode_family == 3 && p.nb_decode == 7, "H200: decode family %d x%u, want 3 x7", p.decode_family,
          p.nb_decode);
    CHECK(p.decode_ops == (H264 | H265), "H200: decode ops %#x", (unsigned)p.decode_ops);
    const char *want[] = { VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME,
                           VK_KHR_VIDEO_QUEUE_EXTENSION_NAME, VK_KHR_VIDEO_DECODE_QUEUE_EXTENSION_NAME,
                           VK_KHR_VIDEO_DECODE_H264_EXTENSION_NAME, VK_KHR_VIDEO_DECODE_H265_EXTENSION_NAME,
                           VK_KHR_VIDEO_MAINTENANCE_1_EXTENSION_NAME, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME };
    CHECK(p.nb_exts == NB(want), "H200: %d extensions, want %d", p.nb_exts, NB(want));
    for (int i = 0; i < NB(want); i++)
        CHECK(plan_has(&p, want[i]), "H200: %s not enabled", want[i]);
    /* Offered but not needed: AV1 (the queues cannot), swapchain, descriptor buffer, optical flow. */
    CHECK(!plan_has(&p, VK_KHR_VIDEO_DECODE_AV1_EXTENSION_NAME), "H200: AV1 decode enabled without an AV1 queue");
    CHECK(!plan_has(&p, VK_NV_OPTICAL_FLOW_EXTENSION_NAME) && !plan_has(&p, VK_KHR_SWAPCHAIN_EXTENSION_NAME),
          "H200: an extension nobody uses is enabled");
    CHECK(p.video_maintenance1 == 1, "H200: video maintenance 1 not planned");
    /* FFmpeg's compute encoders' shaders use VK_KHR_shader_expect_assume where offered. */
    if (vkcu_vk_shader_extension()) {
        const char *with_ea[NB(all_exts) + 1];
        for (int i = 0; i < NB(all_exts); i++)
            with_ea[i] = all_exts[i];
        with_ea[NB(all_exts)] = vkcu_vk_shader_extension();
        plan(h200, NB(h200), with_ea, NB(with_ea), VKCU_PLAN_INTEROP | VKCU_PLAN_DECODE, 1, 8, 0, &p, err, sizeof(err));
        CHECK(p.nb_exts == NB(want) + 1 && plan_has(&p, vkcu_vk_shader_extension()),
              "H200 offering %s: %d extensions, it %s planned", vkcu_vk_shader_extension(), p.nb_exts,
              plan_has(&p, vkcu_vk_shader_extension()) ? "is" : "is not");
    }

    /* More compute queues on request, never more than the family has; decode lanes capped. */
    plan(h200, NB(h200), all_exts, NB(all_exts), VKCU_PLAN_INTEROP, 4, 2, 0, &p, err, sizeof(err));
    CHECK(p.nb_compute == 4 && p.nb_decode == 2, "asked 4 compute, 2 decode: got %u, %u", p.nb_compute, p.nb_decode);
    plan(h200, NB(h200), all_exts, NB(all_exts), VKCU_PLAN_INTEROP, 40, 40, 0, &p, err, sizeof(err));
    CHECK(p.nb_compute == 8 && p.nb_decode == 7, "asked 40 and 40: got %u, %u", p.nb_compute, p.nb_decode);

    /* Without the video extensions the device decodes nothing: refused only when decode is required. */
    const char *no_video[] = { VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME,
                               VK_KHR_VIDEO_DECODE_H264_EXTENSION_NAME };
    r = plan(h200, NB(h200), no_video, NB(no_video), VKCU_PLAN_INTEROP, 1, 8, 0, &p, err, sizeof(err));
    CHECK(r == 0 && p.decode_family < 0 && p.nb_exts == 2 && !p.video_maintenance1, "no video extensions: r=%d decode family %d, %d exts", r,
          p.decode_family, p.nb_exts);
    err[0] = 0;
    r = plan(h200, NB(h200), no_video, NB(no_video), VKCU_PLAN_DECODE, 1, 8, 0, &p, err, sizeof(err));
    CHECK(r < 0 && strstr(err, "no Vulkan video decode queue family"), "decode required: r=%d '%s'", r, err);

    /* The CUDA handoff's extensions are required, and named when missing. */
    const char *no_sem[] = { VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME, VK_KHR_VIDEO_QUEUE_EXTENSION_NAME,
                             VK_KHR_VIDEO_DECODE_QUEUE_EXTENSION_NAME, VK_KHR_VIDEO_DECODE_H264_EXTENSION_NAME };
    err[0] = 0;
    r = plan(h200, NB(h200), no_sem, NB(no_sem), VKCU_PLAN_INTEROP, 1, 8, 0, &p, err, sizeof(err));
    CHECK(r < 0 && strstr(err, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME), "no semaphore FD: r=%d '%s'", r, err);

    /* Of two decode families, the one that decodes more codecs; a codec whose extension is missing does not count. */
    const vkcu_vk_queue_family two[] = { { GCT, 1, 0 }, { DEC, 2, H264 }, { DEC, 4, H264 | H265 | AV1 } };
    const char *no_av1[] = { VK_KHR_VIDEO_QUEUE_EXTENSION_NAME, VK_KHR_VIDEO_DECODE_QUEUE_EXTENSION_NAME,
                             VK_KHR_VIDEO_DECODE_H264_EXTENSION_NAME, VK_KHR_VIDEO_DECODE_H265_EXTENSION_NAME };
    r = plan(two, NB(two), no_av1, NB(no_av1), 0, 1, 8, 0, &p, err, sizeof(err));
    CHECK(r == 0 && p.decode_family == 2 && p.decode_ops == (H264 | H265) && p.nb_decode == 4,
          "two decode families: family %d ops %#x x%u", p.decode_family, (unsigned)p.decode_ops, p.nb_decode);
    /* One family for everything (lavapipe's): compute comes from the graphics family. */
    CHECK(r == 0 && p.compute_family == 0 && p.nb_compute == 1, "graphics+compute family: %d x%u", p.compute_family,
          p.nb_compute);

    const vkcu_vk_queue_family none[] = { { VK_QUEUE_TRANSFER_BIT, 2, 0 }, { DEC, 1, H264 } };
    err[0] = 0;
    r = plan(none, NB(none), all_exts, NB(all_exts), 0, 1, 8, 0, &p, err, sizeof(err));
    CHECK(r < 0 && strstr(err, "no compute queue family"), "no compute family: r=%d '%s'", r, err);

    /* No decode asked for: no decode family, no decode extensions. */
    r = plan(h200, NB(h200), all_exts, NB(all_exts), VKCU_PLAN_INTEROP, 1, 0, 0, &p, err, sizeof(err));
    CHECK(r == 0 && p.decode_family < 0 && p.nb_decode == 0 && !plan_has(&p, VK_KHR_VIDEO_DECODE_QUEUE_EXTENSION_NAME) &&
              !p.video_maintenance1,
          "decode 0: r=%d family %d x%u", r, p.decode_family, p.nb_decode);

    /* Encode: the H200 has no encode family, and says so. */
    err[0] = 0;
    r = plan(h200, NB(h200), all_exts, NB(all_exts), VKCU_PLAN_INTEROP, 1, 2, ENC264, &p, err, sizeof(err));
    CHECK(r < 0 && !strcmp(err, "no Vulkan video encode queue for H.264"), "H200 encode: r=%d '%s'", r, err);
    /* A GPU with one (families as an RTX 40's driver lists them): one encode queue and its codec's extension. */
    const vkcu_vk_queue_family rtx[] = {
        { GCT, 16, 0 }, { VK_QUEUE_TRANSFER_BIT, 2, 0 }, { CT, 8, 0 },
        { DEC | VK_QUEUE_TRANSFER_BIT, 4, H264 | H265 | AV1 },
        { VK_QUEUE_VIDEO_ENCODE_BIT_KHR | VK_QUEUE_TRANSFER_BIT, 2, ENC264 | ENC265 },
    };
    const char *enc_exts[] = {
        VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME,
        VK_KHR_VIDEO_QUEUE_EXTENSION_NAME, VK_KHR_VIDEO_DECODE_QUEUE_EXTENSION_NAME,
        VK_KHR_VIDEO_DECODE_H264_EXTENSION_NAME, VK_KHR_VIDEO_ENCODE_QUEUE_EXTENSION_NAME,
        VK_KHR_VIDEO_ENCODE_H264_EXTENSION_NAME, VK_KHR_VIDEO_ENCODE_H265_EXTENSION_NAME,
        VK_KHR_VIDEO_MAINTENANCE_1_EXTENSION_NAME,
    };
    r = plan(rtx, NB(rtx), enc_exts, NB(enc_exts), VKCU_PLAN_INTEROP | VKCU_PLAN_DECODE, 1, 2, ENC264, &p, err,
             sizeof(err));
    CHECK(r == 0 && p.encode_family == 4 && p.encode_ops == ENC264 && p.decode_family == 3 && p.nb_decode == 2 &&
              p.decode_ops == H264,
          "encode plan: r=%d '%s' encode family %d ops %#x, decode family %d x%u ops %#x", r, err, p.encode_family,
          (unsigned)p.encode_ops, p.decode_family, p.nb_decode, (unsigned)p.decode_ops);
    CHECK(plan_has(&p, VK_KHR_VIDEO_ENCODE_QUEUE_EXTENSION_NAME) && plan_has(&p, VK_KHR_VIDEO_ENCODE_H264_EXTENSION_NAME) &&
              !plan_has(&p, VK_KHR_VIDEO_ENCODE_H265_EXTENSION_NAME) && p.video_maintenance1,
          "encode plan extensions: %d", p.nb_exts);
    int queue_exts = 0;
    for (int i = 0; i < p.nb_exts; i++)
        queue_exts += !strcmp(p.exts[i], VK_KHR_VIDEO_QUEUE_EXTENSION_NAME);
    CHECK(queue_exts == 1, "VK_KHR_video_queue listed %d times", queue_exts);
    /* Encode only (the CPU backend's encoder device): no decode queue. */
    r = plan(rtx, NB(rtx), enc_exts, NB(enc_exts), 0, 1, 0, ENC265, &p, err, sizeof(err));
    CHECK(r == 0 && p.decode_family < 0 && p.encode_family == 4 && plan_has(&p, VK_KHR_VIDEO_ENCODE_H265_EXTENSION_NAME) &&
              !plan_has(&p, VK_KHR_VIDEO_DECODE_QUEUE_EXTENSION_NAME),
          "encode only: r=%d decode family %d encode family %d", r, p.decode_family, p.encode_family);
    /* FFmpeg's encoders refuse a device without video maintenance 1: so does the plan. */
    err[0] = 0;
    r = plan(rtx, NB(rtx), enc_exts, NB(enc_exts) - 1, 0, 1, 0, ENC264, &p, err, sizeof(err));
    CHECK(r < 0 && strstr(err, "no Vulkan video encode queue for H.264"), "encode without maintenance 1: r=%d '%s'", r,
          err);
}

/* Our device on the machine's Vulkan device, through FFmpeg, on the
 * process's one instance. */
static int test_device(void)
{
    char err[256] = "";
    const vkcu_vk_instance *vi = vkcu_vk_instance_get(NULL, err, sizeof(err));
    if (!vi) {
        printf("SKIP device: %s\n", err);
        return 0;
    }
    if (!vi->nb_devs) {
        printf("SKIP device: no Vulkan device\n");
        return 0;
    }
    /* One instance per process: a second call gives the same one. */
    CHECK(vkcu_vk_instance_get(NULL, err, sizeof(err)) == vi, "a second instance was made");
    CHECK(vkcu_vk_find_uuid(vi, vi->devs[0].uuid) == 0, "device 0 is not found by its own UUID");
    uint8_t nobody[16] = { 0xff, 0xfe };
    CHECK(vkcu_vk_find_uuid(vi, nobody) == -1, "a made-up UUID was found");
    CHECK(vi->t_start > 0 && vi->t_created >= vi->t_start && vi->t_enumerated >= vi->t_created,
          "instance stamps out of order: %f %f %f", vi->t_start, vi->t_created, vi->t_enumerated);
    const vkcu_vk_caps *caps = vkcu_vk_caps_get(vi, 0);
    CHECK(caps && caps->nqf > 0 && caps->nb_exts > 0, "no queue families or extensions read");
    if (!caps)
        return 1;
    CHECK(vkcu_vk_caps_get(vi, 0) == caps && !vkcu_vk_caps_get(vi, vi->nb_devs), "caps are not kept per device");
    const char *devname = vi->devs[0].name;
    vkcu_vk_plan plan;
    vkcu_vk_plan_want want = { .compute = 1, .decode = 8 };
    int r = vkcu_vk_plan_device(caps->qf, caps->nqf, caps->exts, caps->nb_exts, &want, &plan, err, sizeof(err));
    CHECK(r == 0, "%s: plan failed: %s", devname, err);
    if (r < 0)
        return 1;
    AVBufferRef *dev = NULL;
    vkcu_vk_device_stamps st;
    r = vkcu_vk_device_create(vi, 0, &plan, &dev, &st, err, sizeof(err));
    CHECK(r == 0, "%s: device not made: %s", devname, err);
    if (r < 0)
        return 1;
    CHECK(st.start > 0 && st.created >= st.start && st.initialised >= st.created, "device stamps out of order");
    AVVulkanDeviceContext *hw = ((AVHWDeviceContext *)dev->data)->hwctx;
    CHECK(hw->inst == vi->inst && hw->phys_dev == vi->devs[0].pd && hw->act_dev, "hwctx does not hold our handles");
    CHECK(hw->qf[0].idx == plan.compute_family && hw->qf[0].num == 1 &&
              (hw->qf[0].flags & VK_QUEUE_COMPUTE_BIT) && (hw->qf[0].flags & VK_QUEUE_TRANSFER_BIT),
          "qf[0]: family %d x%d flags %#x", hw->qf[0].idx, hw->qf[0].num, (unsigned)hw->qf[0].flags);
    CHECK(hw->nb_qf == 1 + (plan.decode_family >= 0), "%d queue families listed", hw->nb_qf);
    /* All planned (video maintenance 1 and the shaders' expect/assume only where their features are there too). */
    int shader_ext = vkcu_vk_shader_extension() && plan_has(&plan, vkcu_vk_shader_extension());
    CHECK(hw->nb_enabled_dev_extensions <= plan.nb_exts &&
              hw->nb_enabled_dev_extensions >= plan.nb_exts - plan.video_maintenance1 - shader_ext,
          "%d extensions enabled, planned %d", hw->nb_enabled_dev_extensions, plan.nb_exts);
    /* The feature chain says what is on: timeline semaphores and synchronization2. */
    int timeline = 0, sync2 = 0;
    for (const VkBaseInStructure *s = hw->device_features.pNext; s; s = s->pNext) {
        if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES)
            timeline = ((const VkPhysicalDeviceVulkan12Features *)s)->timelineSemaphore;
        if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES)
            sync2 = ((const VkPhysicalDeviceVulkan13Features *)s)->synchronization2;
    }
    CHECK(hw->device_features.sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2 && timeline && sync2,
          "device_features chain: timeline %d, synchronization2 %d", timeline, sync2);
    /* FFmpeg's shader features (its compute encoders' and filters'), on where
     * the device has them, as FFmpeg's own device has them: the same missing
     * list from what is on as from what is there. */
    vkcu_vk_features sup, on;
    vkcu_vk_features_query(vi->fn.vkGetInstanceProcAddr, vi->inst, vi->devs[0].pd, caps->exts, caps->nb_exts, &sup);
    vkcu_vk_features_enabled(vi->fn.vkGetInstanceProcAddr, vi->inst, vi->devs[0].pd, &hw->device_features,
                             hw->enabled_dev_extensions, hw->nb_enabled_dev_extensions, &on);
    char miss_sup[512], miss_on[512];
    int n_sup = vkcu_vk_encoder_features_missing(&sup, VKCU_SHADERS_ALL, miss_sup, sizeof(miss_sup));
    int n_on = vkcu_vk_encoder_features_missing(&on, VKCU_SHADERS_ALL, miss_on, sizeof(miss_on));
    CHECK(n_sup == n_on && !strcmp(miss_sup, miss_on) && on.f12.bufferDeviceAddress == sup.f12.bufferDeviceAddress &&
              on.f12.shaderInt8 == sup.f12.shaderInt8 && on.f10.shaderInt64 == sup.f10.shaderInt64 &&
              on.f12.vulkanMemoryModel == sup.f12.vulkanMemoryModel && on.f12.timelineSemaphore,
          "shader features: the device lacks '%s' of what it has ('%s' missing there)", miss_on, miss_sup);
    printf("note: %s: FFmpeg's compute encoders %s%s\n", devname, n_on ? "could not run here, it lacks " : "could run "
           "here (every feature they need is on)", n_on ? miss_on : "");

    /* FFmpeg makes frames on it and moves one up and back through our queue. */
    AVBufferRef *frames = av_hwframe_ctx_alloc(dev);
    AVHWFramesContext *fc = (AVHWFramesContext *)frames->data;
    fc->format = AV_PIX_FMT_VULKAN;
    fc->sw_format = AV_PIX_FMT_NV12;
    fc->width = 64;
    fc->height = 48;
    r = av_hwframe_ctx_init(frames);
    CHECK(r == 0, "av_hwframe_ctx_init on our device: %s", av_err2str(r));
    AVFrame *src = tu_frame(AV_PIX_FMT_NV12, 64, 48), *hwf = av_frame_alloc(), *back = av_frame_alloc();
    uint64_t seed = 15;
    for (int p = 0; p < 2; p++)
        for (int y = 0; y < (p ? 24 : 48); y++)
            for (int x = 0; x < 64; x++)
                src->data[p][y * src->linesize[p] + x] = (uint8_t)tu_rand(&seed);
#ifdef __SANITIZE_ADDRESS__
    /* The sanitizer build (make test-asan) stops after frame allocation:
     * after this round trip the device context is never freed (its free
     * callback is not reached), which LeakSanitizer reports. Suspected, not
     * proven: FFmpeg 7.1 keeps the last transfer's frame dependencies in the
     * frames context's exec pool until the next transfer, a reference
     * cycle. vkcu's jobs do not use av_hwframe_transfer_data on Vulkan
     * frames. make test runs the round trip. */
    if (r == 0) {
        printf("note: upload/download round trip not run in the sanitizer build (see the comment)\n");
        r = 1;
    }
#endif
    if (r == 0) {
        r = av_hwframe_get_buffer(frames, hwf, 0);
        CHECK(r == 0, "av_hwframe_get_buffer: %s", av_err2str(r));
    }
    if (r == 0) {
        r = av_hwframe_transfer_data(hwf, src, 0);
        CHECK(r == 0, "upload: %s", av_err2str(r));
    }
    if (r == 0) {
        back->format = AV_PIX_FMT_NV12;
        r = av_hwframe_transfer_data(back, hwf, 0);
        CHECK(r == 0, "download: %s", av_err2str(r));
    }
    if (r == 0) {
        int same = back->width == 64 && back->height == 48;
        for (int p = 0; same && p < 2; p++)
            for (int y = 0; same && y < (p ? 24 : 48); y++)
                same = !memcmp(src->data[p] + y * src->linesize[p], back->data[p] + y * back->linesize[p], 64);
        CHECK(same, "the frame came back different");
    }
    av_frame_free(&src);
    av_frame_free(&hwf);
    av_frame_free(&back);
    av_buffer_unref(&frames);
    av_buffer_unref(&dev); /* destroys the device, not the process's instance: */
    r = vkcu_vk_device_create(vi, 0, &plan, &dev, NULL, err, sizeof(err));
    CHECK(r == 0, "%s: a second device on the same instance: %s", devname, err);
    av_buffer_unref(&dev);
    printf("%s device: %s, %d extension(s), compute family %d, decode family %d\n", tu_failures ? "FAIL" : "PASS",
           devname, plan.nb_exts, plan.compute_family, plan.decode_family);

    /* Vulkan encode without CUDA (the CPU backend): this device has no
     * encode queue (lavapipe, or an H200), so the one-line reason names it. */
    int has_enc = 0;
    for (int i = 0; i < vi->nb_devs; i++) {
        const vkcu_vk_caps *c = vkcu_vk_caps_get(vi, i);
        for (int q = 0; c && q < c->nqf; q++)
            has_enc |= !!(c->qf[q].flags & VK_QUEUE_VIDEO_ENCODE_BIT_KHR);
    }
    if (!has_enc) {
        err[0] = 0;
        r = vkcu_vkdev_acquire_encode(-1, ENC264, &dev, err, sizeof(err));
        char want_msg[300];
        snprintf(want_msg, sizeof(want_msg), "no Vulkan video encode queue for H.264 on %s", devname);
        CHECK(r == VKCU_ERR_DEVICE && !dev && !strncmp(err, want_msg, strlen(want_msg)), "encode refusal: r=%d '%s'",
              r, err);
        printf("%s encode refusal: %s\n", tu_failures ? "FAIL" : "PASS", err);
    }
    return 0;
}

int main(void)
{
#ifdef __SANITIZE_ADDRESS__
    /* As tests/asan/run.sh preloads it for vkcu: lavapipe stays mapped after
     * the loader unloads it, so its process-lifetime data stays reachable
     * instead of showing as leaks from "<unknown module>". */
    dlopen("libvulkan_lvp.so", RTLD_NOW | RTLD_NODELETE);
#endif
    test_plans();
    printf("%s plans\n", tu_failures ? "FAIL" : "PASS");
    test_device();
    return tu_failures ? 1 : 0;
}
