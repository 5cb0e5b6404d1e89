/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * FFmpeg's Vulkan encoders (see vkencode.h): the table of them, the device
 * each runs on (gpu/vkdev_encode.c: the GPU's UUID-matched shared device, never a
 * second device opened by ordinal), the encoder's frames context and the
 * checks before any output, the upload of host frames, and the timer
 * around the encoder's submissions. The GPU backend's frames normally
 * reach the encoder without the host (gpu.h: vkcu_gpu_encode_into;
 * docs/gpu-rings.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>
#include <libavutil/imgutils.h>
#include <libavutil/mem.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>

#include "vkdev.h"
#include "outring_vk.h"
#include "vkfn.h"
#include "vkshader.h"
#include "util/log.h"
#include "vkencode.h"

/* Frames the compute encoders keep in flight on the GPU unless told
 * otherwise (their async_depth; FFmpeg's default, 1, has the encoder wait
 * for each frame before it takes the next). */
#define COMPUTE_ASYNC_DEPTH 3

static int ffv1_rules(AVCodecContext *enc, enum AVPixelFormat fmt, char *err, size_t errlen);

static const vkcu_vkencoder encoders[] = {
    { "h264_vulkan", "libx264", VK_VIDEO_CODEC_OPERATION_ENCODE_H264_BIT_KHR, 0, NULL, NULL },
    { "hevc_vulkan", "libx265", VK_VIDEO_CODEC_OPERATION_ENCODE_H265_BIT_KHR, 0, NULL, NULL },
    { "ffv1_vulkan", "ffv1", 0, VKCU_SHADERS_FFV1, "yuv422p or yuv444p10", ffv1_rules },
    { "prores_ks_vulkan", "prores_ks", 0, VKCU_SHADERS_PRORES, "yuv422p10", NULL },
};

const vkcu_vkencoder *vkcu_vkencode_get(int i)
{
    return i >= 0 && i < (int)(sizeof(encoders) / sizeof(encoders[0])) ? &encoders[i] : NULL;
}

const vkcu_vkencoder *vkcu_vkencode_find(const char *encoder)
{
    for (int i = 0; encoder && vkcu_vkencode_get(i); i++)
        if (!strcmp(encoders[i].name, encoder))
            return &encoders[i];
    return NULL;
}

int vkcu_vkencode_is_vulkan(const char *encoder)
{
    return vkcu_vkencode_find(encoder) != NULL;
}

uint32_t vkcu_vkencode_op(const char *encoder)
{
    const vkcu_vkencoder *e = vkcu_vkencode_find(encoder);
    return e ? e->video_op : 0;
}

int vkcu_vkencode_device(const char *encoder, int cuda_device, AVBufferRef **device, char *why, size_t whylen)
{
    const vkcu_vkencoder *e = vkcu_vkencode_find(encoder);
    *device = NULL;
    if (!e) {
        snprintf(why, whylen, "internal: %s is not a Vulkan encoder", encoder ? encoder : "(none)");
        return AVERROR_BUG;
    }
    if (e->video_op)
        return vkcu_vkdev_acquire_encode(cuda_device, e->video_op, device, why, whylen);
    if (cuda_device < 0) {
        snprintf(why, whylen, "runs on the GPU backend only (its frames come from the GPU's output ring)");
        return VKCU_ERR_DEVICE;
    }
    int queue;
    int ret = vkcu_vkdev_acquire_compute_lane(cuda_device, 0, device, &queue, why, whylen);
    if (ret < 0)
        return ret;
    const AVVulkanDeviceContext *hw = ((AVHWDeviceContext *)(*device)->data)->hwctx;
    vkcu_vk_features f;
    vkcu_vk_features_enabled(hw->get_proc_addr, hw->inst, hw->phys_dev, &hw->device_features,
                             hw->enabled_dev_extensions, hw->nb_enabled_dev_extensions, &f);
    char missing[512];
    int compute = 0;
    for (int i = 0; i < hw->nb_qf; i++)
        compute |= !!(hw->qf[i].flags & VK_QUEUE_COMPUTE_BIT);
    if (!compute || vkcu_vk_encoder_features_missing(&f, e->shaders, missing, sizeof(missing))) {
        VkPhysicalDeviceProperties2 pr = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2 };
        PFN_vkGetPhysicalDeviceProperties2 props =
            (PFN_vkGetPhysicalDeviceProperties2)hw->get_proc_addr(hw->inst, "vkGetPhysicalDeviceProperties2");
        if (props)
            props(hw->phys_dev, &pr);
        snprintf(why, whylen, "%s lacks %s%s (FFmpeg's compute encoders need %s)", pr.properties.deviceName[0] ?
                 pr.properties.deviceName : "the GPU", compute ? "the device features " : "a compute queue",
                 compute ? missing : "", compute ? "them" : "one");
        av_buffer_unref(device);
        return VKCU_ERR_DEVICE;
    }
    return 0;
}

/* The video encoders' frames: NV12/P010 images of the encode profile. */
static int setup_video(AVCodecContext *enc, AVBufferRef *device, enum AVPixelFormat host_fmt, AVBufferRef **out,
                       char *err, size_t errlen)
{
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(host_fmt);
    if (host_fmt != AV_PIX_FMT_YUV420P && host_fmt != AV_PIX_FMT_YUV420P10LE && host_fmt != AV_PIX_FMT_NV12 &&
        host_fmt != AV_PIX_FMT_P010LE) {
        snprintf(err, errlen, "Vulkan encode takes 4:2:0 8- or 10-bit frames, not %s (add convert=format=yuv420p)",
                 desc ? desc->name : "?");
        return VKCU_ERR_USAGE;
    }
    AVBufferRef *frames = av_hwframe_ctx_alloc(device);
    if (!frames)
        return AVERROR(ENOMEM);
    AVHWFramesContext *fc = (AVHWFramesContext *)frames->data;
    fc->format = AV_PIX_FMT_VULKAN;
    fc->sw_format = desc->comp[0].depth > 8 ? AV_PIX_FMT_P010LE : AV_PIX_FMT_NV12;
    fc->width = enc->width;
    fc->height = enc->height;
    /* The images' usage and create flags as the driver asks for the encode
     * profile (the GPU session writes them with a transfer: TRANSFER_DST is
     * among them). Of the create flags the driver allows, only
     * VIDEO_PROFILE_INDEPENDENT is asked for: the encoder picks its profile
     * later. Where the query fails, FFmpeg's defaults for the device. */
    AVVulkanDeviceContext *dh = ((AVHWDeviceContext *)device->data)->hwctx;
    vkcu_vkfn fn = { .vkGetInstanceProcAddr = dh->get_proc_addr };
    VkFormat vf;
    VkImageUsageFlags usage;
    VkImageCreateFlags flags;
    char why[256];
    if (vkcu_outring_encode_format(&fn, device, enc->codec_id == AV_CODEC_ID_HEVC ? "hevc_vulkan" : "h264_vulkan",
                                   desc->comp[0].depth, &vf, &usage, &flags, why, sizeof(why)) == 0) {
        AVVulkanFramesContext *vfc = fc->hwctx;
        vfc->usage = usage;
        vfc->img_flags = flags & VK_IMAGE_CREATE_VIDEO_PROFILE_INDEPENDENT_BIT_KHR;
    } else {
        LOGV("Vulkan encoder input images with FFmpeg's default usage: %s", why);
    }
    int ret = av_hwframe_ctx_init(frames);
    if (ret < 0) {
        char buf[128];
        snprintf(err, errlen, "cannot create Vulkan encoder input frames: %s", vkcu_err_str(ret, buf, sizeof(buf)));
        av_buffer_unref(&frames);
        return VKCU_ERR_DEVICE;
    }
    *out = frames;
    return 0;
}

static int in_list(const enum AVPixelFormat *list, int n, enum AVPixelFormat fmt)
{
    for (int i = 0; list && (n < 0 ? list[i] != AV_PIX_FMT_NONE : i < n); i++)
        if (list[i] == fmt)
            return 1;
    return 0;
}

/* FFmpeg 8.1's rules for ffv1_vulkan below level 4 (ffv1enc_vulkan.c):
 * subsampled chroma needs the luma size to be a multiple of 64 chroma
 * samples, and inter frames (GOPs longer than one frame) need level 4.
 * vkcu refuses rather than choose level 4, which FFmpeg marks experimental:
 * the user says level=4 (and gets strict=experimental with it). */
static int ffv1_rules(AVCodecContext *enc, enum AVPixelFormat fmt, char *err, size_t errlen)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    int level = enc->level >= 0 && enc->level <= 4 ? enc->level : 3;
    if (level >= 4) {
        if (enc->strict_std_compliance > FF_COMPLIANCE_EXPERIMENTAL) {
            enc->strict_std_compliance = FF_COMPLIANCE_EXPERIMENTAL;
            LOGV("ffv1_vulkan: FFV1 level 4, which FFmpeg marks experimental (strict=experimental set with it)");
        }
        return 0;
    }
    int hs = d->log2_chroma_w, vs = d->log2_chroma_h, chroma = d->nb_components >= 3;
    if (chroma && ((hs && enc->width % (64 << hs)) || (vs && enc->height % (64 << vs)))) {
        snprintf(err, errlen, "codes %s (chroma subsampled) at %dx%d only at FFV1 level 4 (below it the "
                 "width%s must be a multiple of %d), which FFmpeg marks experimental: add %s to accept it, or use %s "
                 "(the CPU encoder, any size, same decoded frames)", av_get_pix_fmt_name(fmt), enc->width, enc->height,
                 vs ? " and height" : "", 64 << hs, VKCU_SETTING_IS("encoder_opts", "level=4"),
                 VKCU_SETTING_IS("encoder", "ffv1"));
        return VKCU_ERR_USAGE;
    }
    if (enc->gop_size > 1) {
        snprintf(err, errlen, "codes GOPs of %d frames only at FFV1 level 4, which FFmpeg marks "
                 "experimental: add %s to accept it, or set %s (key frames only)", enc->gop_size,
                 VKCU_SETTING_IS("encoder_opts", "level=4"), VKCU_SETTING_IS("gop", "1"));
        return VKCU_ERR_USAGE;
    }
    return 0;
}

/* The compute encoders' frames: images of the chain's own format. */
static int setup_compute(AVCodecContext *enc, AVBufferRef *device, enum AVPixelFormat host_fmt, AVBufferRef **out,
                         char *err, size_t errlen)
{
    const char *name = enc->codec->name;
    const vkcu_vkencoder *e = vkcu_vkencode_find(name);
    /* The Vulkan encoders run their CPU twin's set-up for the format
     * (ff_ffv1_encode_setup_plane_info, ff_prores_kostya_encode_init), so
     * the twin's list is the formats they take. */
    const AVCodec *twin = e ? avcodec_find_encoder_by_name(e->cpu_twin) : NULL;
    const void *cfg = NULL;
    int n = 0;
    if (twin && avcodec_get_supported_config(NULL, twin, AV_CODEC_CONFIG_PIX_FORMAT, 0, &cfg, &n) >= 0 && cfg &&
        !in_list(cfg, n, host_fmt)) {
        snprintf(err, errlen, "cannot take %s frames (as %s; add convert=format=%s to the chain)",
                 av_get_pix_fmt_name(host_fmt), e->cpu_twin, e->convert_to);
        return VKCU_ERR_USAGE;
    }
    /* The formats this device makes images of with the storage usage the
     * encoders' shaders read through. */
    AVHWFramesConstraints *cons = av_hwdevice_get_hwframe_constraints(device, NULL);
    int made = cons && in_list(cons->valid_sw_formats, -1, host_fmt);
    av_hwframe_constraints_free(&cons);
    if (!made) {
        snprintf(err, errlen, "the GPU makes no %s images it can read", av_get_pix_fmt_name(host_fmt));
        return VKCU_ERR_DEVICE;
    }
    int ret = e && e->frame_rules ? e->frame_rules(enc, host_fmt, err, errlen) : 0;
    if (ret < 0)
        return ret;
    AVBufferRef *frames = av_hwframe_ctx_alloc(device);
    if (!frames)
        return AVERROR(ENOMEM);
    AVHWFramesContext *fc = (AVHWFramesContext *)frames->data;
    fc->format = AV_PIX_FMT_VULKAN;
    fc->sw_format = host_fmt;
    fc->width = enc->width;
    fc->height = enc->height;
    /* Usage left to FFmpeg: its default is what its own upload gives these
     * encoders (TRANSFER_SRC/DST, STORAGE, SAMPLED where the format has
     * them). One image per plane: a multi-planar 4:2:0 or 4:2:2 image must
     * have an even size, a plane image any. */
    AVVulkanFramesContext *vfc = fc->hwctx;
    vfc->flags |= AV_VK_FRAME_FLAG_DISABLE_MULTIPLANE;
    /* VKCU_ENCODE_PREALLOC=N (a measurement, issue 36): N images made
     * before the first frame, none (or fewer) while the encoders run. */
    const char *pre = getenv("VKCU_ENCODE_PREALLOC");
    fc->initial_pool_size = pre ? atoi(pre) : 0;
    ret = av_hwframe_ctx_init(frames);
    const VkImageUsageFlags need = VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    if (ret >= 0 && (vfc->usage & need) != need) {
        /* FFmpeg 8.1's default usage misses the formats whose planes are
         * images of their own either way (the alpha ones: yuva444p10 for
         * ProRes 4444) once multi-planar images are disabled: for them
         * vkfmt_from_pixfmt2 maps the features of a format it never
         * queried (its feats_secondary, unset). Ask for the usage the
         * encoders need, as FFmpeg's own upload gets it. */
        av_buffer_unref(&frames);
        if (!(frames = av_hwframe_ctx_alloc(device)))
            return AVERROR(ENOMEM);
        fc = (AVHWFramesContext *)frames->data;
        fc->format = AV_PIX_FMT_VULKAN;
        fc->sw_format = host_fmt;
        fc->width = enc->width;
        fc->height = enc->height;
        vfc = fc->hwctx;
        vfc->flags |= AV_VK_FRAME_FLAG_DISABLE_MULTIPLANE;
        vfc->usage = need | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
        fc->initial_pool_size = pre ? atoi(pre) : 0;
        ret = av_hwframe_ctx_init(frames);
    }
    if (ret < 0) {
        char buf[128];
        snprintf(err, errlen, "cannot create %s %dx%d input frames on the GPU: %s", av_get_pix_fmt_name(host_fmt), enc->width, enc->height, vkcu_err_str(ret, buf, sizeof(buf)));
        av_buffer_unref(&frames);
        return VKCU_ERR_DEVICE;
    }
    if ((vfc->usage & need) != need) {
        snprintf(err, errlen, "the GPU's %s images lack %s", av_get_pix_fmt_name(host_fmt),
                 vfc->usage & VK_IMAGE_USAGE_STORAGE_BIT ? "transfer writes" : "the storage usage the encoder reads them with");
        av_buffer_unref(&frames);
        return VKCU_ERR_DEVICE;
    }
    *out = frames;
    return 0;
}

void vkcu_vkencode_defaults(AVCodecContext *enc)
{
    const vkcu_vkencoder *e = enc->codec ? vkcu_vkencode_find(enc->codec->name) : NULL;
    if (e && !e->video_op)
        av_opt_set_int(enc->priv_data, "async_depth", COMPUTE_ASYNC_DEPTH, 0);
}

int vkcu_vkencode_instance_devices(void)
{
    const char *env = getenv("VKCU_ENCODE_INSTANCE_DEVICES");
    return env && !strcmp(env, "1");
}

int vkcu_vkencode_instance_device(const AVBufferRef *like, AVBufferRef **out)
{
    const AVVulkanDeviceContext *hw = ((const AVHWDeviceContext *)like->data)->hwctx;
    PFN_vkEnumeratePhysicalDevices en =
        (PFN_vkEnumeratePhysicalDevices)hw->get_proc_addr(hw->inst, "vkEnumeratePhysicalDevices");
    VkPhysicalDevice pd[16];
    uint32_t n = 16, index = 0;
    if (en && en(hw->inst, &n, pd) >= 0)
        for (uint32_t i = 0; i < n; i++)
            if (pd[i] == hw->phys_dev)
                index = i;
    char name[16];
    snprintf(name, sizeof(name), "%u", index);
    return av_hwdevice_ctx_create(out, AV_HWDEVICE_TYPE_VULKAN, name, NULL, 0);
}

int vkcu_vkencode_setup(AVCodecContext *enc, AVBufferRef *device, enum AVPixelFormat host_fmt, char *err,
                        size_t errlen)
{
    const vkcu_vkencoder *e = enc->codec ? vkcu_vkencode_find(enc->codec->name) : NULL;
    AVBufferRef *frames = NULL;
    int ret = e && !e->video_op ? setup_compute(enc, device, host_fmt, &frames, err, errlen)
                                : setup_video(enc, device, host_fmt, &frames, err, errlen);
    if (ret < 0)
        return ret;
    enc->hw_device_ctx = av_buffer_ref(device);
    if (!enc->hw_device_ctx) {
        av_buffer_unref(&frames);
        return AVERROR(ENOMEM);
    }
    enc->hw_frames_ctx = frames;
    enc->pix_fmt = AV_PIX_FMT_VULKAN;
    enc->sw_pix_fmt = ((AVHWFramesContext *)frames->data)->sw_format;
    return 0;
}

int vkcu_vkencode_pack(const AVFrame *in, uint8_t *const dst[2], const int pitch[2])
{
    int semi = in->format == AV_PIX_FMT_NV12 || in->format == AV_PIX_FMT_P010LE;
    int high = in->format == AV_PIX_FMT_P010LE || in->format == AV_PIX_FMT_YUV420P10LE;
    if (!semi && in->format != AV_PIX_FMT_YUV420P && in->format != AV_PIX_FMT_YUV420P10LE)
        return AVERROR(EINVAL);
    /* P010 keeps its high 10 bits, yuv420p10 moves up by 6: (v >> rs) << ls. */
    int rs = semi && high ? 6 : 0, ls = high ? 6 : 0;
    int w = in->width, h = in->height, cw = (w + 1) / 2, ch = (h + 1) / 2;
    for (int y = 0; y < h; y++) {
        const uint8_t *s = in->data[0] + (size_t)y * in->linesize[0];
        uint8_t *d = dst[0] + (size_t)y * pitch[0];
        for (int x = 0; x < w; x++) {
            if (high)
                ((uint16_t *)d)[x] = (uint16_t)((((const uint16_t *)s)[x] >> rs) << ls);
            else
                d[x] = s[x];
        }
    }
    for (int y = 0; y < ch; y++) {
        const uint8_t *u = in->data[1] + (size_t)y * in->linesize[1];
        const uint8_t *v = semi ? NULL : in->data[2] + (size_t)y * in->linesize[2];
        uint8_t *d = dst[1] + (size_t)y * pitch[1];
        for (int x = 0; x < cw; x++) {
            /* semi-planar in: pairs already; planar: one sample from each plane */
            int iu = semi ? 2 * x : x, iv = semi ? 2 * x + 1 : x;
            const uint8_t *vp = semi ? u : v;
            if (high) {
                ((uint16_t *)d)[2 * x] = (uint16_t)((((const uint16_t *)u)[iu] >> rs) << ls);
                ((uint16_t *)d)[2 * x + 1] = (uint16_t)((((const uint16_t *)vp)[iv] >> rs) << ls);
            } else {
                d[2 * x] = u[iu];
                d[2 * x + 1] = vp[iv];
            }
        }
    }
    return 0;
}

int vkcu_vkencode_pack_planar(const AVFrame *in, uint8_t *dst, const size_t offset[4], const int pitch[4])
{
    vkcu_slot_layout l;
    if (vkcu_outring_layout(in->format, in->width, in->height, &l) < 0)
        return AVERROR(EINVAL);
    for (int p = 0; p < l.nb_planes; p++) {
        size_t row = (size_t)l.plane_w[p] * l.texel[p];
        for (int y = 0; y < l.plane_h[p]; y++)
            memcpy(dst + offset[p] + (size_t)y * pitch[p], in->data[p] + (size_t)y * in->linesize[p], row);
    }
    return 0;
}

int vkcu_vkencode_upload(AVCodecContext *enc, const AVFrame *host, AVFrame *hw)
{
    AVHWFramesContext *fc = (AVHWFramesContext *)enc->hw_frames_ctx->data;
    AVFrame *staging = NULL;
    int ret;
    if (host->format == fc->sw_format) {
        staging = av_frame_clone(host);
        if (!staging)
            return AVERROR(ENOMEM);
    } else {
        staging = av_frame_alloc();
        if (!staging)
            return AVERROR(ENOMEM);
        staging->format = fc->sw_format;
        staging->width = host->width;
        staging->height = host->height;
        ret = av_frame_get_buffer(staging, 0);
        if (ret < 0)
            goto fail;
        ret = vkcu_vkencode_pack(host, staging->data, staging->linesize);
        if (ret < 0)
            goto fail;
    }
    ret = av_hwframe_get_buffer(enc->hw_frames_ctx, hw, 0);
    if (ret < 0)
        goto fail;
    ret = av_hwframe_transfer_data(hw, staging, 0);
    if (ret < 0)
        goto fail;
    ret = av_frame_copy_props(hw, host);
fail:
    av_frame_free(&staging);
    if (ret < 0)
        av_frame_unref(hw);
    return ret;
}

/* ---- timestamps around the encoder's submissions ---- */

#define TIMER_PAIRS 32

typedef struct stamp_pair {
    VkCommandBuffer cmd[2];
    VkFence fence[2];
    int submitted[2];
} stamp_pair;

struct vkcu_vkencode_timer {
    AVBufferRef *device;
    AVHWDeviceContext *dev;
    AVVulkanDeviceContext *hw;
    PFN_vkCreateCommandPool create_pool;
    PFN_vkDestroyCommandPool destroy_pool;
    PFN_vkAllocateCommandBuffers alloc_cmd;
    PFN_vkBeginCommandBuffer begin;
    PFN_vkEndCommandBuffer end;
    PFN_vkCmdWriteTimestamp2 write_ts;
    PFN_vkQueueSubmit2 submit;
    PFN_vkCreateFence create_fence;
    PFN_vkDestroyFence destroy_fence;
    PFN_vkWaitForFences wait_fences;
    PFN_vkResetFences reset_fences;
    PFN_vkCreateQueryPool create_qp;
    PFN_vkDestroyQueryPool destroy_qp;
    PFN_vkResetQueryPool reset_qp;
    PFN_vkGetQueryPoolResults get_results;
    uint32_t qf, qi;
    VkQueue queue;
    VkCommandPool pool;
    VkQueryPool qp;
    double period_ns;
    uint64_t mask;
    stamp_pair pair[TIMER_PAIRS];
    int64_t begun, harvested;
    uint64_t ready_value;               /* the frame's timeline value at `before` */
    uint64_t last_done;
    int have_last;
    double busy_ns;
    int64_t frames;
};

static int timer_load(vkcu_vkencode_timer *t)
{
    VkDevice d = t->hw->act_dev;
    PFN_vkGetDeviceProcAddr gdpa = (PFN_vkGetDeviceProcAddr)t->hw->get_proc_addr(t->hw->inst, "vkGetDeviceProcAddr");
    if (!gdpa)
        return -1;
#define L(field, fname)                                      \
    if (!(t->field = (PFN_##fname)gdpa(d, #fname)))          \
        return -1;
    L(create_pool, vkCreateCommandPool)
    L(destroy_pool, vkDestroyCommandPool)
    L(alloc_cmd, vkAllocateCommandBuffers)
    L(begin, vkBeginCommandBuffer)
    L(end, vkEndCommandBuffer)
    L(write_ts, vkCmdWriteTimestamp2)
    L(submit, vkQueueSubmit2)
    L(create_fence, vkCreateFence)
    L(destroy_fence, vkDestroyFence)
    L(wait_fences, vkWaitForFences)
    L(reset_fences, vkResetFences)
    L(create_qp, vkCreateQueryPool)
    L(destroy_qp, vkDestroyQueryPool)
    L(reset_qp, vkResetQueryPool)
    L(get_results, vkGetQueryPoolResults)
#undef L
    return 0;
}

vkcu_vkencode_timer *vkcu_vkencode_timer_new(AVBufferRef *device)
{
    vkcu_vkencode_timer *t = av_mallocz(sizeof(*t));
    if (!t || !(t->device = av_buffer_ref(device))) {
        av_free(t);
        return NULL;
    }
    t->dev = (AVHWDeviceContext *)device->data;
    t->hw = t->dev->hwctx;
    vkcu_vk_features f;
    vkcu_vk_features_enabled(t->hw->get_proc_addr, t->hw->inst, t->hw->phys_dev, &t->hw->device_features,
                             t->hw->enabled_dev_extensions, t->hw->nb_enabled_dev_extensions, &f);
    int family = -1;
    for (int i = 0; i < t->hw->nb_qf && family < 0; i++)
        if (t->hw->qf[i].flags & VK_QUEUE_COMPUTE_BIT)
            family = i;
    PFN_vkGetPhysicalDeviceQueueFamilyProperties get_qf = (PFN_vkGetPhysicalDeviceQueueFamilyProperties)
        t->hw->get_proc_addr(t->hw->inst, "vkGetPhysicalDeviceQueueFamilyProperties");
    PFN_vkGetPhysicalDeviceProperties get_props =
        (PFN_vkGetPhysicalDeviceProperties)t->hw->get_proc_addr(t->hw->inst, "vkGetPhysicalDeviceProperties");
    if (!f.f12.hostQueryReset || family < 0 || !get_qf || !get_props || timer_load(t) < 0)
        goto fail;
    t->qf = (uint32_t)t->hw->qf[family].idx;
    t->qi = (uint32_t)(t->hw->qf[family].num - 1);
    VkQueueFamilyProperties qfp[32];
    uint32_t nqf = 32;
    get_qf(t->hw->phys_dev, &nqf, qfp);
    if (t->qf >= nqf || !qfp[t->qf].timestampValidBits)
        goto fail;
    uint32_t bits = qfp[t->qf].timestampValidBits;
    t->mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    VkPhysicalDeviceProperties pr;
    get_props(t->hw->phys_dev, &pr);
    t->period_ns = pr.limits.timestampPeriod;
    VkDevice d = t->hw->act_dev;
    PFN_vkGetDeviceQueue get_queue =
        (PFN_vkGetDeviceQueue)((PFN_vkGetDeviceProcAddr)t->hw->get_proc_addr(t->hw->inst, "vkGetDeviceProcAddr"))(
            d, "vkGetDeviceQueue");
    if (!get_queue)
        goto fail;
    get_queue(d, t->qf, t->qi, &t->queue);
    VkCommandPoolCreateInfo pci = { .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                    .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, .queueFamilyIndex = t->qf };
    VkQueryPoolCreateInfo qci = { .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                  .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 2 * TIMER_PAIRS };
    if (t->create_pool(d, &pci, NULL, &t->pool) != VK_SUCCESS || t->create_qp(d, &qci, NULL, &t->qp) != VK_SUCCESS)
        goto fail;
    for (int i = 0; i < TIMER_PAIRS; i++)
        for (int k = 0; k < 2; k++) {
            VkCommandBufferAllocateInfo cai = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                                .commandPool = t->pool, .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                                .commandBufferCount = 1 };
            VkFenceCreateInfo fci = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
            if (t->alloc_cmd(d, &cai, &t->pair[i].cmd[k]) != VK_SUCCESS ||
                t->create_fence(d, &fci, NULL, &t->pair[i].fence[k]) != VK_SUCCESS)
                goto fail;
        }
    return t;
fail:
    vkcu_vkencode_timer_free(&t);
    return NULL;
}

/* Waits for pair k's stamps and adds its interval to the busy time. */
static void harvest(vkcu_vkencode_timer *t, int64_t k)
{
    stamp_pair *p = &t->pair[k % TIMER_PAIRS];
    VkDevice d = t->hw->act_dev;
    int ok = 1;
    for (int i = 0; i < 2; i++) {
        if (!p->submitted[i]) {
            ok = 0;
            continue;
        }
        ok &= t->wait_fences(d, 1, &p->fence[i], VK_TRUE, 10000000000ull) == VK_SUCCESS;
        t->reset_fences(d, 1, &p->fence[i]);
        p->submitted[i] = 0;
    }
    uint64_t ts[2];
    int q = (int)(k % TIMER_PAIRS) * 2;
    if (!ok || t->get_results(d, t->qp, (uint32_t)q, 2, sizeof(ts), ts, sizeof(ts[0]), VK_QUERY_RESULT_64_BIT) !=
                   VK_SUCCESS)
        return;
    uint64_t ready = ts[0] & t->mask, done = ts[1] & t->mask;
    uint64_t start = t->have_last && t->last_done > ready ? t->last_done : ready;
    if (done > start)
        t->busy_ns += (double)(done - start) * t->period_ns;
    if (!t->have_last || done > t->last_done)
        t->last_done = done;
    t->have_last = 1;
    t->frames++;
}

/* One stamp submission: waits the frame's timeline at `value`, then writes
 * query q. */
static int stamp(vkcu_vkencode_timer *t, stamp_pair *p, int which, VkSemaphore sem, uint64_t value, uint32_t q)
{
    VkCommandBufferBeginInfo bi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                    .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT };
    if (t->begin(p->cmd[which], &bi) != VK_SUCCESS)
        return -1;
    t->write_ts(p->cmd[which], VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, t->qp, q);
    if (t->end(p->cmd[which]) != VK_SUCCESS)
        return -1;
    VkSemaphoreSubmitInfo wi = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO, .semaphore = sem, .value = value,
                                 .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT };
    VkCommandBufferSubmitInfo cbi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
                                      .commandBuffer = p->cmd[which] };
    VkSubmitInfo2 si = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2, .waitSemaphoreInfoCount = 1,
                         .pWaitSemaphoreInfos = &wi, .commandBufferInfoCount = 1, .pCommandBufferInfos = &cbi };
    vkcu_vk_queue_lock(t->dev, t->qf, t->qi);
    VkResult r = t->submit(t->queue, 1, &si, p->fence[which]);
    vkcu_vk_queue_unlock(t->dev, t->qf, t->qi);
    if (r != VK_SUCCESS)
        return -1;
    p->submitted[which] = 1;
    return 0;
}

/* The frame's first timeline semaphore and value (under its lock). */
static VkSemaphore frame_timeline(const AVFrame *frame, uint64_t *value)
{
    if (frame->format != AV_PIX_FMT_VULKAN || !frame->hw_frames_ctx || !frame->data[0])
        return VK_NULL_HANDLE;
    AVHWFramesContext *fc = (AVHWFramesContext *)frame->hw_frames_ctx->data;
    AVVulkanFramesContext *vfc = fc->hwctx;
    AVVkFrame *vkf = (AVVkFrame *)frame->data[0];
    vfc->lock_frame(fc, vkf);
    VkSemaphore sem = vkf->sem[0];
    *value = vkf->sem_value[0];
    vfc->unlock_frame(fc, vkf);
    return sem;
}

void vkcu_vkencode_timer_before(vkcu_vkencode_timer *t, const AVFrame *frame)
{
    if (!t)
        return;
    uint64_t v;
    VkSemaphore sem = frame_timeline(frame, &v);
    if (!sem)
        return;
    while (t->begun - t->harvested >= TIMER_PAIRS)
        harvest(t, t->harvested++);
    int64_t k = t->begun++;
    uint32_t q = (uint32_t)(k % TIMER_PAIRS) * 2;
    t->reset_qp(t->hw->act_dev, t->qp, q, 2);
    t->ready_value = v;
    stamp(t, &t->pair[k % TIMER_PAIRS], 0, sem, v, q);
}

void vkcu_vkencode_timer_after(vkcu_vkencode_timer *t, const AVFrame *frame)
{
    if (!t || t->begun == t->harvested)
        return;
    int64_t k = t->begun - 1;
    stamp_pair *p = &t->pair[k % TIMER_PAIRS];
    uint64_t v;
    VkSemaphore sem = frame_timeline(frame, &v);
    /* No submission of the encoder's signalled past the ready value: nothing to time. */
    if (!sem || !p->submitted[0] || p->submitted[1] || v <= t->ready_value)
        return;
    stamp(t, p, 1, sem, v, (uint32_t)(k % TIMER_PAIRS) * 2 + 1);
}

void vkcu_vkencode_timer_result(vkcu_vkencode_timer *t, double *busy_ms, int64_t *frames)
{
    *busy_ms = 0;
    *frames = 0;
    if (!t)
        return;
    while (t->harvested < t->begun)
        harvest(t, t->harvested++);
    *busy_ms = t->busy_ns / 1e6;
    *frames = t->frames;
}

void vkcu_vkencode_timer_free(vkcu_vkencode_timer **pt)
{
    vkcu_vkencode_timer *t = *pt;
    if (!t)
        return;
    VkDevice d = t->hw->act_dev;
    for (int i = 0; i < TIMER_PAIRS; i++)
        for (int k = 0; k < 2; k++) {
            if (t->pair[i].submitted[k])
                t->wait_fences(d, 1, &t->pair[i].fence[k], VK_TRUE, 10000000000ull);
            if (t->pair[i].fence[k])
                t->destroy_fence(d, t->pair[i].fence[k], NULL);
        }
    if (t->qp)
        t->destroy_qp(d, t->qp, NULL);
    if (t->pool) /* frees the command buffers */
        t->destroy_pool(d, t->pool, NULL);
    av_buffer_unref(&t->device);
    av_freep(pt);
}
