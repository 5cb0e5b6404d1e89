/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Vulkan Video encode support: the device behind `--encoder
 * h264_vulkan|hevc_vulkan` (gpu/device.c: the GPU's UUID-matched shared
 * device, never a second device opened by ordinal), and the first (upload)
 * path into FFmpeg's Vulkan encoders. CUDA writing straight into the
 * encoder's input images (DESIGN.md §6) needs a device with an encode
 * queue to be built against; the H200 has none.
 */
#include <stdio.h>
#include <string.h>
#include <libavutil/hwcontext.h>
#include <libavutil/pixdesc.h>

#include "device.h"
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

/* yuv420p -> NV12 and yuv420p10le -> P010 (MSB-aligned samples). */
static void interleave(const AVFrame *in, AVFrame *out, int high)
{
    int w = in->width, h = in->height;
    for (int y = 0; y < h; y++) {
        if (!high) {
            memcpy(out->data[0] + y * out->linesize[0], in->data[0] + y * in->linesize[0], w);
        } else {
            const uint16_t *s = (const uint16_t *)(in->data[0] + y * in->linesize[0]);
            uint16_t *d = (uint16_t *)(out->data[0] + y * out->linesize[0]);
            for (int x = 0; x < w; x++)
                d[x] = (uint16_t)(s[x] << 6);
        }
    }
    for (int y = 0; y < (h + 1) / 2; y++) {
        if (!high) {
            const uint8_t *u = in->data[1] + y * in->linesize[1], *v = in->data[2] + y * in->linesize[2];
            uint8_t *d = out->data[1] + y * out->linesize[1];
            for (int x = 0; x < (w + 1) / 2; x++) {
                d[2 * x] = u[x];
                d[2 * x + 1] = v[x];
            }
        } else {
            const uint16_t *u = (const uint16_t *)(in->data[1] + y * in->linesize[1]);
            const uint16_t *v = (const uint16_t *)(in->data[2] + y * in->linesize[2]);
            uint16_t *d = (uint16_t *)(out->data[1] + y * out->linesize[1]);
            for (int x = 0; x < (w + 1) / 2; x++) {
                d[2 * x] = (uint16_t)(u[x] << 6);
                d[2 * x + 1] = (uint16_t)(v[x] << 6);
            }
        }
    }
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
        interleave(host, staging, fc->sw_format == AV_PIX_FMT_P010LE);
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
