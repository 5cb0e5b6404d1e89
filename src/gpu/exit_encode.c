/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Into a Vulkan encoder's images (exit.h), for an encoder taking the
 * session's frames (vkcu_gpu_encode_into): the output ring carries the
 * frames in the layout of the encoder's images (the video encoders'
 * NV12/P010, packed by vkcu_cuda_to_semiplanar; the compute encoders'
 * planar images of the chain's own format, vkcu_cuda_to_planar), and one
 * Vulkan submission copies the slot into an image of the encoder's frames
 * context (vkcu_outring_to_frame). pop() hands over that AV_PIX_FMT_VULKAN
 * frame, whose timeline orders the encoder after the copy, so nothing
 * waits on the host. Frames that do not fit the encoder's images decline
 * this way out: they go through the host, and the sink uploads them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/hwcontext.h>
#include <libavutil/pixdesc.h>

#include "exit.h"
#include "vkdev.h"
#include "vkencode.h"
#include "util/log.h"

typedef struct encode_exit {
    vkcu_outring *ring;
    vkcu_outring_cuda cu;
    vkcu_slot_layout slot;     /* the encoder's image layout within a ring slot */
    int semi;                  /* NV12/P010 images: packed on the GPU */
    VkImageLayout layout;      /* the layout the images are left in */
    int cur;                   /* the ring slot of the output being written */
} encode_exit;

int vkcu_gpu_encode_into(vkcu_gpu *g, AVBufferRef *frames, char *why, size_t whylen)
{
    AVHWFramesContext *fc = (AVHWFramesContext *)frames->data;
    AVVulkanFramesContext *vfc = fc->hwctx;
    vkcu_slot_layout l;
    why[0] = 0;
    /* VKCU_ENCODE_VIA_HOST=1 (a measurement, issue 36): frames through the
     * host, each encoder instance uploading into images of its own. */
    const char *via_host = getenv("VKCU_ENCODE_VIA_HOST");
    if (via_host && !strcmp(via_host, "1"))
        snprintf(why, whylen, "VKCU_ENCODE_VIA_HOST=1");
    else if (vkcu_vkencode_instance_devices())
        snprintf(why, whylen, "VKCU_ENCODE_INSTANCE_DEVICES=1 (instances on devices of their own)");
    else if (fc->format != AV_PIX_FMT_VULKAN || fc->device_ctx->type != AV_HWDEVICE_TYPE_VULKAN)
        snprintf(why, whylen, "the encoder's frames are not Vulkan frames");
    else if (((AVVulkanDeviceContext *)fc->device_ctx->hwctx)->act_dev != g->hwctx->act_dev)
        snprintf(why, whylen, "the encoder runs on another Vulkan device than the decoder and CUDA's ring");
    else if (vkcu_outring_layout(fc->sw_format, fc->width, fc->height, &l) < 0)
        snprintf(why, whylen, "the encoder takes %s images, which the output ring has no layout for",
                 av_get_pix_fmt_name(fc->sw_format));
    else if (!(vfc->usage & VK_IMAGE_USAGE_TRANSFER_DST_BIT))
        snprintf(why, whylen, "the encoder's images cannot be written by a transfer");
    if (why[0])
        return 1;
    av_buffer_unref(&g->enc_frames);
    g->enc_frames = av_buffer_ref(frames);
    if (!g->enc_frames) {
        snprintf(why, whylen, "out of memory");
        return 1;
    }
    return 0;
}

static int encode_wants(const vkcu_gpu *g, enum AVPixelFormat host_fmt)
{
    (void)host_fmt;
    return g->enc_frames != NULL;
}

/* The ring in the encoder's layout, when the chain's output fits the
 * encoder's frames: NV12/P010 images (the Vulkan Video encoders) take any
 * 4:2:0 output of their depth, packed on the GPU; other images (the compute
 * encoders) take the chain's output in its own planar layout, byte for byte. */
static int encode_open(vkcu_gpu *g, void *priv, enum AVPixelFormat dev_out, int w, int h, char *err, size_t errlen)
{
    encode_exit *x = priv;
    AVHWFramesContext *fc = (AVHWFramesContext *)g->enc_frames->data;
    AVVulkanFramesContext *vfc = fc->hwctx;
    int depth16 = fc->sw_format == AV_PIX_FMT_P010;
    x->semi = depth16 || fc->sw_format == AV_PIX_FMT_NV12;
    int fits = !x->semi ? fc->sw_format == g->host_fmt
               : depth16 ? dev_out == AV_PIX_FMT_P010 || dev_out == AV_PIX_FMT_YUV420P10
                         : dev_out == AV_PIX_FMT_NV12 || dev_out == AV_PIX_FMT_YUV420P;
    if (!fits || fc->width != w || fc->height != h || vkcu_outring_layout(fc->sw_format, w, h, &x->slot) < 0) {
        LOGV("GPU: %s %dx%d frames do not fit the encoder's %s %dx%d images; they go through the host",
             av_get_pix_fmt_name(dev_out), w, h, av_get_pix_fmt_name(fc->sw_format), fc->width, fc->height);
        av_buffer_unref(&g->enc_frames);
        return 1;
    }
    /* A video encoder's images stay in its source layout; a compute
     * encoder's barrier takes its images from whatever layout they are in. */
    x->layout = vfc->usage & VK_IMAGE_USAGE_VIDEO_ENCODE_SRC_BIT_KHR ? VK_IMAGE_LAYOUT_VIDEO_ENCODE_SRC_KHR
                                                                     : VK_IMAGE_LAYOUT_GENERAL;
    int ret = vkcu_gpu_exit_outring(g, x->slot.size, &x->ring, &x->cu, err, errlen);
    if (ret == 0)
        LOGV("GPU: output ring: %d slots of %zu bytes (%s, %s), copied into the encoder's images on the GPU",
             g->nb_slots, x->slot.size, av_get_pix_fmt_name(fc->sw_format),
             x->semi ? "packed on the GPU" : "as the chain writes it");
    return ret;
}

static int encode_write(vkcu_gpu *g, void *priv, int slot, const vkcu_gpu_frame *out, pending_frame *pf, char *err,
                        size_t errlen)
{
    encode_exit *x = priv;
    uint8_t *dst = NULL;
    (void)slot;
    /* The encoder's image first: once CUDA has taken the slot, only the
     * copy's submission may follow (it waits `filled`, signals `drained`). */
    if (!(pf->vkframe = av_frame_alloc())) {
        snprintf(err, errlen, "out of memory");
        return AVERROR(ENOMEM);
    }
    int ret = av_hwframe_get_buffer(g->enc_frames, pf->vkframe, 0);
    if (ret < 0) {
        char buf[128];
        snprintf(err, errlen, "cannot get a frame of the Vulkan encoder: %s", vkcu_err_str(ret, buf, sizeof(buf)));
        av_frame_free(&pf->vkframe);
        return VKCU_ERR_DEVICE;
    }
    vkcu_vkdev_trace("get vkf %p", (void *)pf->vkframe->data[0]);
    if ((ret = vkcu_outring_cuda_begin(&x->cu, g->stream, &x->cur, &dst, err, errlen)) < 0)
        return ret;
    int e = x->semi ? vkcu_cuda_to_semiplanar(out, dst, x->slot.offset, x->slot.pitch, g->stream)
                    : vkcu_cuda_to_planar(out, g->host_fmt, dst, x->slot.offset, x->slot.pitch, g->stream);
    return e ? vkcu_gpu_exit_kernel_failed(e, err, errlen) : 0;
}

static int encode_send(vkcu_gpu *g, void *priv, int slot, pending_frame *pf, char *err, size_t errlen)
{
    encode_exit *x = priv;
    int ticket, ret;
    (void)slot;
    if ((ret = vkcu_outring_cuda_end(&x->cu, x->cur, g->stream, err, errlen)) < 0)
        return ret;
    /* The encoder's own image, filled from the slot on the GPU; the frame's
     * timeline (not a host wait) orders the encoder after it. */
    if ((ret = vkcu_outring_to_frame(x->ring, x->cur, pf->vkframe, &x->slot, x->layout, &ticket, err, errlen)) < 0)
        return ret;
    pf->ticket = ticket;
    vkcu_vkdev_trace("copy vkf %p slot %d ticket %d", (void *)pf->vkframe->data[0], x->cur, ticket);
    return 0;
}

/* VKCU_ENCODE_COPY_WAIT=1 (a measurement, issue 36): the frame is handed
 * over only once its copy has run, a host wait where the frame's timeline
 * alone should do. */
static int encode_wait(vkcu_gpu *g, void *priv, pending_frame *pf, int wait, char *err, size_t errlen)
{
    encode_exit *x = priv;
    const char *e = getenv("VKCU_ENCODE_COPY_WAIT");
    if (!e || strcmp(e, "1") || pf->ticket < 0)
        return 0;
    uint64_t timeout = wait ? (uint64_t)(g->cfg.stall_timeout_ms > 0 ? g->cfg.stall_timeout_ms : 10000) * 1000000ull : 0;
    return vkcu_outring_wait(x->ring, pf->ticket, timeout, err, errlen);
}

static int64_t encode_readbacks(const vkcu_gpu *g, const void *priv)
{
    const encode_exit *x = priv;
    (void)g;
    return x->ring ? vkcu_outring_readbacks(x->ring) : 0;
}

static void encode_close(vkcu_gpu *g, void *priv)
{
    encode_exit *x = priv;
    (void)g;
    /* CUDA's imports before the Vulkan objects they map. */
    vkcu_outring_cuda_release(&x->cu);
    vkcu_outring_free(&x->ring);
}

const vkcu_gpu_exit_class vkcu_gpu_exit_encode = {
    .name = "encode",
    .note = "",
    .priv_size = sizeof(encode_exit),
    .row_align = 64,
    .wants = encode_wants,
    .open = encode_open,
    .write = encode_write,
    .send = encode_send,
    .wait = encode_wait,
    .readbacks = encode_readbacks,
    .close = encode_close,
};
