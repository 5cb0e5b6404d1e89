/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Vulkan Video encode support: the device behind `--encoder
 * h264_vulkan|hevc_vulkan` (gpu/device.c: the GPU's UUID-matched shared
 * device, never a second device opened by ordinal), the encoder's frames
 * context, and the upload of host frames into it (the CPU backend, and GPU
 * jobs whose frames cannot come from the output ring). The GPU backend's
 * frames normally reach the encoder without the host: the output ring's
 * slots, written in NV12/P010 layout, are copied into the encoder's images
 * on the GPU (gpu.h: vkcu_gpu_encode_into; docs/gpu-rings.md). No device
 * here has an encode queue, so that path is written, not run.
 */
#include <stdio.h>
#include <string.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>
#include <libavutil/pixdesc.h>

#include "device.h"
#include "outring_vk.h"
#include "vkfn.h"
#include "util/log.h"
#include "vkencode.h"


int vkcu_vkencode_is_vulkan(const char *encoder)
{
    return encoder && (!strcmp(encoder, "h264_vulkan") || !strcmp(encoder, "hevc_vulkan"));
}

uint32_t vkcu_vkencode_op(const char *encoder)
{
    if (!encoder)
        return 0;
    return !strcmp(encoder, "h264_vulkan")   ? VK_VIDEO_CODEC_OPERATION_ENCODE_H264_BIT_KHR
           : !strcmp(encoder, "hevc_vulkan") ? VK_VIDEO_CODEC_OPERATION_ENCODE_H265_BIT_KHR
                                             : 0;
}

int vkcu_vkencode_device(const char *encoder, int cuda_device, AVBufferRef **device, char *why, size_t whylen)
{
    return vkcu_vkdev_acquire_encode(cuda_device, vkcu_vkencode_op(encoder), device, why, whylen);
}

int vkcu_vkencode_setup(AVCodecContext *enc, AVBufferRef *device, enum AVPixelFormat host_fmt, char *err,
                        size_t errlen)
{
    int ret;
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
    ret = av_hwframe_ctx_init(frames);
    if (ret < 0) {
        char buf[128];
        snprintf(err, errlen, "cannot create Vulkan encoder input frames: %s", vkcu_err_str(ret, buf, sizeof(buf)));
        av_buffer_unref(&frames);
        return VKCU_ERR_DEVICE;
    }
    enc->hw_device_ctx = av_buffer_ref(device);
    if (!enc->hw_device_ctx) {
        av_buffer_unref(&frames);
        return AVERROR(ENOMEM);
    }
    enc->hw_frames_ctx = frames;
    enc->pix_fmt = AV_PIX_FMT_VULKAN;
    enc->sw_pix_fmt = fc->sw_format;
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
