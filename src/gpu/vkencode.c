/*
 * Vulkan Video encode support: the device query behind `--encoder
 * h264_vulkan|hevc_vulkan`, and the first (upload) path into FFmpeg's
 * Vulkan encoders. CUDA writing straight into the encoder's input images
 * (DESIGN.md §6) needs a device with an encode queue to be built against;
 * the H200 has none.
 */
#include <stdio.h>
#include <string.h>
#include <libavutil/hwcontext.h>
#include <libavutil/pixdesc.h>

#include "vkfn.h"
#include "util/log.h"
#include "vkencode.h"

#define MAX_DEV 16

int vkcu_vkencode_is_vulkan(const char *encoder)
{
    return encoder && (!strcmp(encoder, "h264_vulkan") || !strcmp(encoder, "hevc_vulkan"));
}

int vkcu_vkencode_find_device(const char *encoder, char *why, size_t whylen)
{
    VkVideoCodecOperationFlagsKHR need = !strcmp(encoder, "hevc_vulkan") ? VK_VIDEO_CODEC_OPERATION_ENCODE_H265_BIT_KHR
                                                                       : VK_VIDEO_CODEC_OPERATION_ENCODE_H264_BIT_KHR;
    PFN_vkGetInstanceProcAddr gipa = vkcu_vk_loader();
    if (!gipa) {
        snprintf(why, whylen, "no Vulkan loader (libvulkan.so.1) on this machine");
        return VKCU_ERR_DEVICE;
    }
    vkcu_vkfn fn;
    const char *missing = NULL;
    VkInstance inst = VK_NULL_HANDLE;
    vkcu_vk_load(&fn, gipa, NULL, NULL, &missing);
    VkApplicationInfo app = { .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "vkcu",
                              .apiVersion = VK_API_VERSION_1_3 };
    VkInstanceCreateInfo ci = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app };
    if (!fn.vkCreateInstance || fn.vkCreateInstance(&ci, NULL, &inst) != VK_SUCCESS ||
        vkcu_vk_load(&fn, gipa, inst, NULL, &missing) < 0) {
        if (inst && fn.vkDestroyInstance)
            fn.vkDestroyInstance(inst, NULL);
        snprintf(why, whylen, "cannot create a Vulkan instance (no Vulkan driver?)");
        return VKCU_ERR_DEVICE;
    }
    uint32_t n = MAX_DEV;
    VkPhysicalDevice devs[MAX_DEV];
    if (fn.vkEnumeratePhysicalDevices(inst, &n, devs) < 0)
        n = 0;
    char names[512] = "";
    int found = -1;
    for (uint32_t i = 0; i < n && found < 0; i++) {
        VkPhysicalDeviceProperties2 pr = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2 };
        fn.vkGetPhysicalDeviceProperties2(devs[i], &pr);
        snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", names[0] ? ", " : "",
                 pr.properties.deviceName);
        vkcu_vk_queue_family qf[32];
        int nq = vkcu_vk_queue_families(&fn, devs[i], qf, 32);
        for (int q = 0; q < nq; q++)
            if ((qf[q].flags & VK_QUEUE_VIDEO_ENCODE_BIT_KHR) && (qf[q].video_ops & need))
                found = (int)i;
    }
    fn.vkDestroyInstance(inst, NULL);
    if (found >= 0)
        return found;
    if (!n)
        snprintf(why, whylen, "no Vulkan device on this machine");
    else
        snprintf(why, whylen, "no Vulkan video encode queue for %s on %s (an H200 has none)",
                 !strcmp(encoder, "hevc_vulkan") ? "HEVC" : "H.264", names);
    return VKCU_ERR_DEVICE;
}

int vkcu_vkencode_setup(AVCodecContext *enc, int index, enum AVPixelFormat host_fmt, char *err, size_t errlen)
{
    char dev[16];
    int ret;
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(host_fmt);
    if (host_fmt != AV_PIX_FMT_YUV420P && host_fmt != AV_PIX_FMT_YUV420P10LE && host_fmt != AV_PIX_FMT_NV12 &&
        host_fmt != AV_PIX_FMT_P010LE) {
        snprintf(err, errlen, "Vulkan encode takes 4:2:0 8- or 10-bit frames, not %s (add convert=format=yuv420p)",
                 desc ? desc->name : "?");
        return VKCU_ERR_USAGE;
    }
    snprintf(dev, sizeof(dev), "%d", index);
    AVBufferRef *hwdev = NULL;
    ret = av_hwdevice_ctx_create(&hwdev, AV_HWDEVICE_TYPE_VULKAN, dev, NULL, 0);
    if (ret < 0) {
        char buf[128];
        snprintf(err, errlen, "cannot open Vulkan device %d for encoding: %s", index, vkcu_err_str(ret, buf, sizeof(buf)));
        return VKCU_ERR_DEVICE;
    }
    AVBufferRef *frames = av_hwframe_ctx_alloc(hwdev);
    if (!frames) {
        av_buffer_unref(&hwdev);
        return AVERROR(ENOMEM);
    }
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
        av_buffer_unref(&hwdev);
        return VKCU_ERR_DEVICE;
    }
    enc->hw_device_ctx = hwdev;
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
