/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * FFmpeg's Vulkan encoders as vkcu sets them up, on the machine's Vulkan
 * device (lavapipe in CI), without running an encoder (lavapipe lacks the
 * features FFmpeg's compute encoders need, and has no video encode queue):
 * - the table: the four encoders, their CPU twins and queue kinds;
 * - vkcu_vkencode_setup for the compute encoders (FFmpeg 8.1): frames of the
 *   chain's own format, one image per plane, with the storage and transfer
 *   usage the encoder and the ring's copy need, async_depth 3 unless set;
 *   refused, naming the remedy: formats the CPU twin does not take,
 *   ffv1_vulkan below level 4 at 4:2:0 sizes that are not multiples of 128
 *   and with GOPs longer than one frame; level 4 asked for sets
 *   strict=experimental; the video encoders' 4:2:0-only rule;
 * - the compute encoders' instances share one compute queue unless
 *   VKCU_ENCODE_INSTANCE_QUEUES=all (on queues of their own they were not
 *   always exact: docs/performance.md, "Issue 36, step 3");
 * - the timer around an encoder's submissions: a stand-in "encoder" that
 *   waits each frame's timeline and signals the next value, as FFmpeg's do,
 *   is timed frame by frame (busy time > 0, every frame counted), and a
 *   frame with no submission in between is not.
 * Exit 77 without a Vulkan device.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libavcodec/avcodec.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>

#include "core/sink.h"
#include "gpu/vk.h"
#include "gpu/vkencode.h"
#include "gpu/vkinstance.h"
#include "test_util.h"
#include "util/error.h"

static void test_table(void)
{
    static const struct { const char *name, *twin; int video; } want[] = {
        { "h264_vulkan", "libx264", 1 }, { "hevc_vulkan", "libx265", 1 },
        { "ffv1_vulkan", "ffv1", 0 },    { "prores_ks_vulkan", "prores_ks", 0 },
    };
    int n = 0;
    for (int i = 0; vkcu_vkencode_get(i); i++)
        n++;
    CHECK(n == 4, "%d Vulkan encoders in the table", n);
    for (int i = 0; i < 4; i++) {
        const vkcu_vkencoder *e = vkcu_vkencode_find(want[i].name);
        CHECK(e && !strcmp(e->cpu_twin, want[i].twin) && !!e->video_op == want[i].video &&
                  vkcu_vkencode_is_vulkan(want[i].name) && vkcu_vkencode_op(want[i].name) == (e ? e->video_op : 1),
              "%s: twin %s, video op %#x", want[i].name, e ? e->cpu_twin : "?", e ? (unsigned)e->video_op : 0u);
    }
    CHECK(!vkcu_vkencode_is_vulkan("ffv1") && !vkcu_vkencode_is_vulkan(NULL) && !vkcu_vkencode_op("libx264"),
          "a software encoder counted as a Vulkan one");
}

/* Sets up `name` for w x h frames of fmt with opts; returns the result, the
 * encoder context in *out (the caller frees it). */
static int setup(AVBufferRef *dev, const char *name, enum AVPixelFormat fmt, int w, int h, const char *opts,
                 AVCodecContext **out, char *err, size_t errlen)
{
    const AVCodec *c = avcodec_find_encoder_by_name(name);
    AVCodecContext *enc = c ? avcodec_alloc_context3(c) : NULL;
    *out = enc;
    if (!enc)
        return -1;
    enc->width = w;
    enc->height = h;
    enc->pix_fmt = fmt;
    enc->time_base = (AVRational){ 1, 25 };
    vkcu_vkencode_defaults(enc); /* as the encode sink does, before the user's options */
    if (opts) {
        AVDictionary *d = NULL;
        av_dict_parse_string(&d, opts, "=", ":", 0);
        for (const AVDictionaryEntry *t = NULL; (t = av_dict_iterate(d, t));)
            CHECK(av_opt_set(enc, t->key, t->value, AV_OPT_SEARCH_CHILDREN) >= 0, "%s: option %s", name, t->key);
        av_dict_free(&d);
    }
    err[0] = 0;
    return vkcu_vkencode_setup(enc, dev, fmt, err, errlen);
}

static int compute_cases(AVBufferRef *dev)
{
    char err[512];
    AVCodecContext *enc = NULL;
    int cases = 0;
    /* Taken: the chain's format, one image per plane, storage + transfer-dst usage, async_depth 3. */
    static const struct { const char *name; enum AVPixelFormat fmt; int w, h; const char *opts; } ok[] = {
        { "ffv1_vulkan", AV_PIX_FMT_YUV420P, 256, 128, NULL },
        { "ffv1_vulkan", AV_PIX_FMT_YUV444P, 77, 45, NULL },
        { "ffv1_vulkan", AV_PIX_FMT_YUV444P10, 1, 1, NULL },
        { "ffv1_vulkan", AV_PIX_FMT_YUV422P10, 384, 71, NULL },
        { "ffv1_vulkan", AV_PIX_FMT_YUV420P, 1920, 1080, "level=4" },
        { "ffv1_vulkan", AV_PIX_FMT_YUV420P10, 77, 45, "level=4:g=12" },
        { "prores_ks_vulkan", AV_PIX_FMT_YUV422P10, 1920, 1080, NULL },
        { "prores_ks_vulkan", AV_PIX_FMT_YUV444P10, 77, 45, NULL },
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++, cases++) {
        const char *fn = av_get_pix_fmt_name(ok[i].fmt);
        int r = setup(dev, ok[i].name, ok[i].fmt, ok[i].w, ok[i].h, ok[i].opts, &enc, err, sizeof(err));
        if (r == VKCU_ERR_DEVICE && strstr(err, "makes no")) { /* this device's images, not vkcu's rule */
            printf("note: %s %s: %s\n", ok[i].name, fn, err);
            avcodec_free_context(&enc);
            continue;
        }
        CHECK(r == 0, "%s %s %dx%d (%s): refused: %s", ok[i].name, fn, ok[i].w, ok[i].h, ok[i].opts ? ok[i].opts : "",
              err);
        if (r == 0) {
            AVHWFramesContext *fc = (AVHWFramesContext *)enc->hw_frames_ctx->data;
            AVVulkanFramesContext *vfc = fc->hwctx;
            int64_t depth = 0;
            av_opt_get_int(enc->priv_data, "async_depth", 0, &depth);
            CHECK(enc->pix_fmt == AV_PIX_FMT_VULKAN && enc->sw_pix_fmt == ok[i].fmt && fc->sw_format == ok[i].fmt &&
                      fc->width == ok[i].w && fc->height == ok[i].h &&
                      (vfc->flags & AV_VK_FRAME_FLAG_DISABLE_MULTIPLANE) &&
                      (vfc->usage & (VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT)) ==
                          (VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT) && depth == 3,
                  "%s %s: frames %s %dx%d, flags %#llx, usage %#x, async_depth %lld", ok[i].name, fn,
                  av_get_pix_fmt_name(fc->sw_format), fc->width, fc->height, (unsigned long long)vfc->flags,
                  (unsigned)vfc->usage, (long long)depth);
            if (ok[i].opts && strstr(ok[i].opts, "level=4"))
                CHECK(enc->strict_std_compliance == FF_COMPLIANCE_EXPERIMENTAL,
                      "level 4 without strict=experimental (%d)", enc->strict_std_compliance);
            /* A frame of that context: one image per plane. */
            AVFrame *f = av_frame_alloc();
            int got = av_hwframe_get_buffer(enc->hw_frames_ctx, f, 0);
            int imgs = 0;
            while (got == 0 && imgs < AV_NUM_DATA_POINTERS && ((AVVkFrame *)f->data[0])->img[imgs])
                imgs++;
            CHECK(got == 0 && imgs == av_pix_fmt_count_planes(ok[i].fmt), "%s %s: a frame of %d images", ok[i].name,
                  fn, imgs);
            av_frame_free(&f);
        }
        avcodec_free_context(&enc);
    }
    /* A depth the user set stays. */
    if (setup(dev, "ffv1_vulkan", AV_PIX_FMT_YUV444P, 64, 64, "async_depth=1", &enc, err, sizeof(err)) == 0) {
        int64_t depth = 0;
        av_opt_get_int(enc->priv_data, "async_depth", 0, &depth);
        CHECK(depth == 1, "async_depth set to 1 became %lld", (long long)depth);
    }
    avcodec_free_context(&enc);
    cases++;
    /* Refused before any image is made, naming the remedy. */
    static const struct { const char *name; enum AVPixelFormat fmt; int w, h; const char *opts; const char *say[3]; } no[] = {
        { "ffv1_vulkan", AV_PIX_FMT_YUV420P, 1920, 1080, NULL,
          { "codes yuv420p (chroma subsampled) at 1920x1080 only at FFV1 level 4", "level=4", "ffv1" } },
        { "ffv1_vulkan", AV_PIX_FMT_YUV422P, 320, 240, NULL, { "width must be a multiple of 128", "level=4", NULL } },
        { "ffv1_vulkan", AV_PIX_FMT_YUV444P, 64, 64, "g=12", { "GOPs of 12 frames only at FFV1 level 4", "gop", NULL } },
        { "ffv1_vulkan", AV_PIX_FMT_RGB24, 64, 64, NULL, { "cannot take rgb24 frames (as ffv1", "convert=format=", NULL } },
        { "prores_ks_vulkan", AV_PIX_FMT_YUV420P, 64, 64, NULL,
          { "cannot take yuv420p frames (as prores_ks", "convert=format=yuv422p10", NULL } },
    };
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++, cases++) {
        int r = setup(dev, no[i].name, no[i].fmt, no[i].w, no[i].h, no[i].opts, &enc, err, sizeof(err));
        int said = 1;
        for (int k = 0; k < 3 && no[i].say[k]; k++)
            said &= strstr(err, no[i].say[k]) != NULL;
        CHECK(r == VKCU_ERR_USAGE && said && !enc->hw_frames_ctx, "%s %s %dx%d: %d '%s'", no[i].name,
              av_get_pix_fmt_name(no[i].fmt), no[i].w, no[i].h, r, err);
        avcodec_free_context(&enc);
    }
    return cases;
}

/* A stand-in encoder: waits the frame's timeline at its value and signals
 * the next, as FFmpeg's encoders submit (ff_vk_exec_add_dep_frame). */
static int fake_encode(const vkcu_vkfn *vk, AVHWDeviceContext *dctx, VkQueue q, uint32_t qf, AVFrame *f)
{
    AVHWFramesContext *fc = (AVHWFramesContext *)f->hw_frames_ctx->data;
    AVVulkanFramesContext *vfc = fc->hwctx;
    AVVkFrame *vkf = (AVVkFrame *)f->data[0];
    vfc->lock_frame(fc, vkf);
    VkSemaphoreSubmitInfo w = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO, .semaphore = vkf->sem[0],
                                .value = vkf->sem_value[0], .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT };
    VkSemaphoreSubmitInfo s = w;
    s.value = vkf->sem_value[0] + 1;
    VkSubmitInfo2 si = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2, .waitSemaphoreInfoCount = 1,
                         .pWaitSemaphoreInfos = &w, .signalSemaphoreInfoCount = 1, .pSignalSemaphoreInfos = &s };
    vkcu_vk_queue_lock(dctx, qf, 0);
    VkResult r = vk->vkQueueSubmit2(q, 1, &si, VK_NULL_HANDLE);
    vkcu_vk_queue_unlock(dctx, qf, 0);
    if (r == VK_SUCCESS)
        vkf->sem_value[0]++;
    vfc->unlock_frame(fc, vkf);
    return r == VK_SUCCESS ? 0 : -1;
}

static int timer_case(const vkcu_vkfn *vk, AVBufferRef *dev, uint32_t qf, int64_t *timed)
{
    AVHWDeviceContext *dctx = (AVHWDeviceContext *)dev->data;
    AVVulkanDeviceContext *hw = dctx->hwctx;
    vkcu_vkencode_timer *t = vkcu_vkencode_timer_new(dev);
    if (!t) {
        printf("note: no timestamps on this device's compute family (or no hostQueryReset): the timer is off\n");
        return 0;
    }
    AVBufferRef *frames = av_hwframe_ctx_alloc(dev);
    AVHWFramesContext *fc = (AVHWFramesContext *)frames->data;
    fc->format = AV_PIX_FMT_VULKAN;
    fc->sw_format = AV_PIX_FMT_YUV420P;
    fc->width = 64;
    fc->height = 32;
    int r = av_hwframe_ctx_init(frames);
    CHECK(r == 0, "frames: %s", av_err2str(r));
    VkQueue q;
    vk->vkGetDeviceQueue(hw->act_dev, qf, 0, &q);
    const int n = 40; /* more than the timer's ring of stamp pairs */
    for (int i = 0; r == 0 && i < n; i++) {
        AVFrame *f = av_frame_alloc();
        r = av_hwframe_get_buffer(frames, f, 0);
        if (r == 0) {
            vkcu_vkencode_timer_before(t, f);
            if (i != 5) /* frame 5: the "encoder" submits nothing (its frame is not timed) */
                r = fake_encode(vk, dctx, q, qf, f);
            vkcu_vkencode_timer_after(t, f);
        }
        av_frame_free(&f);
    }
    double busy = 0;
    vkcu_vkencode_timer_result(t, &busy, timed);
    CHECK(r == 0 && *timed == n - 1 && busy > 0, "timer: %lld frames timed of %d (one not submitted), busy %.4f ms",
          (long long)*timed, n, busy);
    vkcu_vkencode_timer_free(&t);
    CHECK(!t, "timer pointer not cleared");
    av_buffer_unref(&frames);
    return 1;
}

static void test_instance_queues(void)
{
    static const char *const encs[] = { "ffv1_vulkan", "prores_ks_vulkan" };
    for (int i = 0; i < 2; i++) {
        unsetenv("VKCU_ENCODE_INSTANCE_QUEUES");
        CHECK(!vkcu_compute_instance_queues(encs[i]), "%s: queues of its own by default", encs[i]);
        setenv("VKCU_ENCODE_INSTANCE_QUEUES", "0", 1);
        CHECK(!vkcu_compute_instance_queues(encs[i]), "%s: queues of its own with =0", encs[i]);
        setenv("VKCU_ENCODE_INSTANCE_QUEUES", "all", 1);
        CHECK(vkcu_compute_instance_queues(encs[i]), "%s: no queues of its own with =all", encs[i]);
    }
    CHECK(!vkcu_compute_instance_queues(NULL), "no encoder: queues of its own");
    unsetenv("VKCU_ENCODE_INSTANCE_QUEUES");
}

int main(void)
{
    char err[256] = "";
#ifdef __SANITIZE_ADDRESS__
    /* As test_vkdev: lavapipe stays mapped after the loader unloads it. */
    dlopen("libvulkan_lvp.so", RTLD_NOW | RTLD_NODELETE);
#endif
    test_table();
    test_instance_queues();
    const vkcu_vk_instance *vi = vkcu_vk_instance_get(NULL, err, sizeof(err));
    if (!vi || !vi->nb_devs) {
        printf("no Vulkan device: %s\n", vi ? "none" : err);
        return tu_failures ? 1 : 77;
    }
    const vkcu_vk_caps *caps = vkcu_vk_caps_get(vi, 0);
    vkcu_vk_plan plan;
    vkcu_vk_plan_want want = { .compute = 1 };
    if (!caps || vkcu_vk_plan_device(caps->qf, caps->nqf, caps->exts, caps->nb_exts, &want, &plan, err, sizeof(err)) < 0) {
        printf("%s: no usable queue (%s)\n", vi->devs[0].name, err);
        return tu_failures ? 1 : 77;
    }
    AVBufferRef *dev = NULL;
    if (vkcu_vk_device_create(vi, 0, &plan, &dev, NULL, err, sizeof(err)) < 0) {
        printf("FAIL device on %s: %s\n", vi->devs[0].name, err);
        return 1;
    }
    AVVulkanDeviceContext *hw = ((AVHWDeviceContext *)dev->data)->hwctx;
    vkcu_vkfn fn = vi->fn;
    fn.vkQueueSubmit2 = (PFN_vkQueueSubmit2)fn.vkGetDeviceProcAddr(hw->act_dev, "vkQueueSubmit2");
    fn.vkGetDeviceQueue = (PFN_vkGetDeviceQueue)fn.vkGetDeviceProcAddr(hw->act_dev, "vkGetDeviceQueue");
    char video[512] = "";
    AVCodecContext *enc = NULL;
    /* The video encoders' rule (their setup needs no encode queue to refuse). */
    if (avcodec_find_encoder_by_name("h264_vulkan")) {
        int r = setup(dev, "h264_vulkan", AV_PIX_FMT_YUV422P, 64, 64, NULL, &enc, video, sizeof(video));
        CHECK(r == VKCU_ERR_USAGE && strstr(video, "4:2:0 8- or 10-bit frames, not yuv422p"), "h264_vulkan yuv422p: %d '%s'",
              r, video);
        avcodec_free_context(&enc);
    }
    int cases = 0;
    int compute = avcodec_find_encoder_by_name("ffv1_vulkan") && avcodec_find_encoder_by_name("prores_ks_vulkan");
    if (compute)
        cases = compute_cases(dev);
    else
        printf("note: this build's FFmpeg (%s) has no compute encoders: their set-up not checked\n", av_version_info());
    int64_t timed = 0;
    int timer = timer_case(&fn, dev, (uint32_t)plan.compute_family, &timed);
    av_buffer_unref(&dev);
    if (tu_failures)
        return 1;
    printf("test_vkencode: the table of 4 Vulkan encoders; %d compute encoder set-ups (frames of the chain's format, "
           "one image per plane, storage and transfer usage, async_depth 3; refusals naming level=4, the CPU encoder "
           "or the convert to add)%s; instances on one compute queue unless asked; the timer %s: ok\n", cases, compute ? "" : " not run (no compute encoders)",
           timer ? "timed every submitted frame" : "off on this device");
    (void)timed;
    return 0;
}
