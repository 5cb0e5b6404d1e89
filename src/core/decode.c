/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Decode stage: libavcodec, in software or on the Vulkan Video hwaccel.
 *
 * On Vulkan the decoder runs with thread_count = 1: FFmpeg's frame threads
 * stall with the Vulkan hwaccel on NVIDIA's driver (7.1.5 always, 8.1.2 at
 * 8 threads: docs/architecture.md, "A job, stage by stage"). Video-queue
 * codecs (H.264, HEVC, AV1, VP9) and FFmpeg 8.1's compute hwaccels (FFV1,
 * ProRes, ProRes RAW, DPX) both give Vulkan frames here
 * (vkcu_vk_decode_kind says which way a codec goes).
 * When the hwaccel cannot take the stream (H.264 4:2:2 or 10-bit on an
 * H200, say), get_format falls back to a software format and the frames
 * come out in system memory: the GPU session then uploads them.
 */
#include <stdlib.h>
#include <string.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>
#include <libavutil/imgutils.h>
#include <libavutil/intreadwrite.h>
#include <libavutil/pixdesc.h>

#include "gpu/vkdev.h"
#include "gpu/vk.h"
#include "util/clock.h"
#include "util/format.h"
#include "util/log.h"
#include "decode.h"

/* Whether two chains of Vulkan structures (the frames' create_pnext: the
 * video profile list) say the same thing, field by field. A structure not
 * known here never matches, so a new kind of chain costs reuse, not
 * correctness. */
static int vk_chain_equal(const void *a, const void *b);

static int vk_profile_equal(const VkVideoProfileInfoKHR *a, const VkVideoProfileInfoKHR *b)
{
    return a->videoCodecOperation == b->videoCodecOperation && a->chromaSubsampling == b->chromaSubsampling &&
           a->lumaBitDepth == b->lumaBitDepth && a->chromaBitDepth == b->chromaBitDepth &&
           vk_chain_equal(a->pNext, b->pNext);
}

static int vk_chain_equal(const void *va, const void *vb)
{
    const VkBaseInStructure *a = va, *b = vb;
    for (; a && b; a = a->pNext, b = b->pNext) {
        if (a->sType != b->sType)
            return 0;
        switch (a->sType) {
        case VK_STRUCTURE_TYPE_VIDEO_PROFILE_LIST_INFO_KHR: {
            const VkVideoProfileListInfoKHR *x = (const void *)a, *y = (const void *)b;
            if (x->profileCount != y->profileCount)
                return 0;
            for (uint32_t i = 0; i < x->profileCount; i++)
                if (!vk_profile_equal(&x->pProfiles[i], &y->pProfiles[i]))
                    return 0;
            break;
        }
        case VK_STRUCTURE_TYPE_VIDEO_DECODE_USAGE_INFO_KHR:
            if (((const VkVideoDecodeUsageInfoKHR *)a)->videoUsageHints !=
                ((const VkVideoDecodeUsageInfoKHR *)b)->videoUsageHints)
                return 0;
            break;
        case VK_STRUCTURE_TYPE_VIDEO_DECODE_H264_PROFILE_INFO_KHR: {
            const VkVideoDecodeH264ProfileInfoKHR *x = (const void *)a, *y = (const void *)b;
            if (x->stdProfileIdc != y->stdProfileIdc || x->pictureLayout != y->pictureLayout)
                return 0;
            break;
        }
        case VK_STRUCTURE_TYPE_VIDEO_DECODE_H265_PROFILE_INFO_KHR:
            if (((const VkVideoDecodeH265ProfileInfoKHR *)a)->stdProfileIdc !=
                ((const VkVideoDecodeH265ProfileInfoKHR *)b)->stdProfileIdc)
                return 0;
            break;
        case VK_STRUCTURE_TYPE_VIDEO_DECODE_AV1_PROFILE_INFO_KHR: {
            const VkVideoDecodeAV1ProfileInfoKHR *x = (const void *)a, *y = (const void *)b;
            if (x->stdProfile != y->stdProfile || x->filmGrainSupport != y->filmGrainSupport)
                return 0;
            break;
        }
        default:
            return 0;
        }
    }
    return !a && !b;
}

/* Whether frames made for b could serve a decoder that asked for a. */
static int frames_params_equal(const AVHWFramesContext *a, const AVHWFramesContext *b)
{
    const AVVulkanFramesContext *x = a->hwctx, *y = b->hwctx;
    if (a->format != b->format || a->sw_format != b->sw_format || a->width != b->width ||
        a->height != b->height || a->device_ref->data != b->device_ref->data || x->tiling != y->tiling ||
        x->usage != y->usage || x->img_flags != y->img_flags || x->flags != y->flags || x->nb_layers != y->nb_layers)
        return 0;
    for (int i = 0; i < AV_NUM_DATA_POINTERS; i++)
        if (x->format[i] != y->format[i])
            return 0;
    return vk_chain_equal(x->create_pnext, y->create_pnext);
}

/* get_format's part for a decoder that reuses frames (vkcu_decoder_open_reuse):
 * libavcodec's own parameters for this stream (which also bootstraps its
 * Vulkan decoder), then the frames of the decoder before when they are the
 * same, else a new frames context that the next decoder may reuse. On any
 * failure the decoder is left to make its own, as without reuse. */
static void reuse_frames(AVCodecContext *avctx, vkcu_frames_reuse *r)
{
    AVBufferRef **slot = &r->frames;
    AVBufferRef *ref = NULL;
    if (avcodec_get_hw_frames_parameters(avctx, avctx->hw_device_ctx, AV_PIX_FMT_VULKAN, &ref) < 0)
        return;
    if (*slot && frames_params_equal((AVHWFramesContext *)ref->data, (AVHWFramesContext *)(*slot)->data)) {
        av_buffer_unref(&ref);
        avctx->hw_frames_ctx = av_buffer_ref(*slot);
        return;
    }
    if (av_hwframe_ctx_init(ref) < 0) {
        av_buffer_unref(&ref);
        return;
    }
    av_buffer_unref(slot);
    *slot = ref;
    avctx->hw_frames_ctx = av_buffer_ref(ref);
}

/* The frames' allocation, timed for the figures at -v. */
static int timed_get_buffer(AVCodecContext *avctx, AVFrame *frame, int flags)
{
    vkcu_frames_reuse *r = avctx->opaque;
    double t = vkcu_now();
    int ret = avcodec_default_get_buffer2(avctx, frame, flags);
    r->t_get_buffer += vkcu_now() - t;
    r->get_buffers++;
    return ret;
}

static enum AVPixelFormat pick_vulkan(AVCodecContext *avctx, const enum AVPixelFormat *fmts)
{
    const enum AVPixelFormat *p;
    for (p = fmts; *p != AV_PIX_FMT_NONE; p++)
        if (*p == AV_PIX_FMT_VULKAN && avctx->hw_device_ctx) {
            if (avctx->opaque && !avctx->hw_frames_ctx)
                reuse_frames(avctx, avctx->opaque);
            return *p;
        }
    /* No Vulkan offered (or its hwaccel failed to start): first software format. */
    for (p = fmts; *p != AV_PIX_FMT_NONE; p++) {
        const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(*p);
        if (!(desc->flags & AV_PIX_FMT_FLAG_HWACCEL))
            return *p;
    }
    return AV_PIX_FMT_NONE;
}

int vkcu_decoder_vulkan_supported(const vkcu_demux *d, AVBufferRef *hw_device, char *why, size_t whylen)
{
    const AVCodecParameters *par = d->video->codecpar;
    VkVideoCodecOperationFlagsKHR need;
    int kind = vkcu_vk_decode_kind(par->codec_id, &need);
    if (kind == VKCU_VK_DECODE_NONE) {
        snprintf(why, whylen, "no Vulkan decoder for %s", avcodec_get_name(par->codec_id));
        return 0;
    }
    AVHWDeviceContext *dev = (AVHWDeviceContext *)hw_device->data;
    AVVulkanDeviceContext *vk = dev->hwctx;
    if (kind == VKCU_VK_DECODE_COMPUTE) {
        /* Its frames come in the stream's own format, which the ring must carry. */
        if (!vkcu_vk_compute_decode_ok(par->codec_id, par->format, par->extradata, par->extradata_size, why, whylen) ||
            (par->format >= 0 && !vkcu_format_gpu_carries(par->format, why, whylen)))
            return 0;
        for (int i = 0; i < vk->nb_qf; i++)
            if (vk->qf[i].flags & VK_QUEUE_COMPUTE_BIT)
                return kind;
        snprintf(why, whylen, "the Vulkan device has no compute queue for FFmpeg's %s decoder",
                 avcodec_get_name(par->codec_id));
        return 0;
    }
    for (int i = 0; i < vk->nb_qf; i++)
        if (vk->qf[i].video_caps & need)
            return kind;
    snprintf(why, whylen, "the Vulkan device has no %s decode", avcodec_get_name(par->codec_id));
    return 0;
}

static int decoder_open(const vkcu_demux *d, AVBufferRef *hw_device, vkcu_frames_reuse *frames, int threads,
                        int (*get_buffer2)(AVCodecContext *, AVFrame *, int), void *opaque,
                        vkcu_decoder **out, char *err, size_t errlen)
{
    const AVCodecParameters *par = d->video->codecpar;
    const AVCodec *codec = NULL;
    vkcu_decoder *dec = NULL;
    int ret;
    *out = NULL;
    /* AV1 in software is dav1d; the native decoder only drives hwaccels. */
    if (par->codec_id == AV_CODEC_ID_AV1 && !hw_device)
        codec = avcodec_find_decoder_by_name("libdav1d");
    if (!codec)
        codec = avcodec_find_decoder(par->codec_id);
    if (!codec) {
        snprintf(err, errlen, "%s: unsupported video codec '%s'", d->path, avcodec_get_name(par->codec_id));
        return VKCU_ERR_INPUT;
    }
    dec = av_mallocz(sizeof(*dec));
    if (!dec)
        return AVERROR(ENOMEM);
    dec->path = d->path;
    dec->avctx = avcodec_alloc_context3(codec);
    if (!dec->avctx) {
        ret = AVERROR(ENOMEM);
        goto fail;
    }
    if ((ret = avcodec_parameters_to_context(dec->avctx, par)) < 0)
        goto fail;
    dec->avctx->pkt_timebase = d->video->time_base;
    /* Cropping is applied in vkcu_decoder_receive, exactly: libavcodec's own
     * keeps the left offset a multiple of its alignment and silently drops
     * the rest, so frames would come out wider than the spec's picture. */
    dec->avctx->apply_cropping = 0;
    const AVPacketSideData *crop =
        av_packet_side_data_get(par->coded_side_data, par->nb_coded_side_data, AV_PKT_DATA_FRAME_CROPPING);
    if (crop && crop->size >= 4 * sizeof(uint32_t))
        for (int i = 0; i < 4; i++)
            dec->container_crop[i] = AV_RL32(crop->data + 4 * i);
    if (hw_device) {
        dec->avctx->hw_device_ctx = av_buffer_ref(hw_device);
        if (!dec->avctx->hw_device_ctx) {
            ret = AVERROR(ENOMEM);
            goto fail;
        }
        dec->avctx->get_format = pick_vulkan;
        dec->avctx->opaque = frames; /* NULL: its own frames */
        if (frames)
            dec->avctx->get_buffer2 = timed_get_buffer;
        /* 1; VKCU_VK_DECODE_THREADS=N frame threads with FFmpeg 8.1 (a measurement knob: gpu/vkdev_acquire.c) */
        dec->avctx->thread_count = vkcu_vkdev_decode_threads();
        if (dec->avctx->thread_count > 1)
            dec->avctx->thread_type = FF_THREAD_FRAME;
        /* Frames stay referenced while they wait in the interop queue. */
        dec->avctx->extra_hw_frames = 8;
        dec->hw = 1;
    } else {
        dec->avctx->thread_count = threads;
        if (get_buffer2 && (codec->capabilities & AV_CODEC_CAP_DR1)) {
            dec->avctx->get_buffer2 = get_buffer2;
            dec->avctx->opaque = opaque;
        }
    }
    ret = avcodec_open2(dec->avctx, codec, NULL);
    if (ret < 0) {
        char buf[128];
        snprintf(err, errlen, "%s: cannot open the %s decoder: %s", d->path, codec->name,
                 vkcu_err_str(ret, buf, sizeof(buf)));
        ret = hw_device ? AVERROR(ENOSYS) : VKCU_ERR_INPUT;
        goto fail;
    }
    *out = dec;
    return 0;
fail:
    vkcu_decoder_close(&dec);
    return ret;
}

int vkcu_decoder_open(const vkcu_demux *d, AVBufferRef *hw_device, int threads,
                      vkcu_decoder **out, char *err, size_t errlen)
{
    return decoder_open(d, hw_device, NULL, threads, NULL, NULL, out, err, errlen);
}

int vkcu_decoder_open_reuse(const vkcu_demux *d, AVBufferRef *hw_device, vkcu_frames_reuse *frames,
                            vkcu_decoder **out, char *err, size_t errlen)
{
    return decoder_open(d, hw_device, frames, 1, NULL, NULL, out, err, errlen);
}

int vkcu_decoder_open_pooled(const vkcu_demux *d, int (*get_buffer2)(AVCodecContext *, AVFrame *, int),
                             void *opaque, vkcu_decoder **out, char *err, size_t errlen)
{
    return decoder_open(d, NULL, NULL, 1, get_buffer2, opaque, out, err, errlen);
}

int vkcu_decoder_send(vkcu_decoder *dec, const AVPacket *pkt, int strict, char *err, size_t errlen)
{
    if (dec->par)
        return dec->par_cls->send(dec->par, pkt);
    int ret = avcodec_send_packet(dec->avctx, pkt);
    if (ret == AVERROR_INVALIDDATA && pkt) {
        dec->packets_rejected++;
        if (strict) {
            snprintf(err, errlen, "%s: corrupt data in packet at byte %lld (pts %lld)", dec->path,
                     (long long)pkt->pos, (long long)pkt->pts);
            return VKCU_ERR_INPUT;
        }
        LOGW("%s: corrupt packet at byte %lld skipped (use %s to stop)", dec->path, (long long)pkt->pos,
             VKCU_SETTING_IS("strict", "1"));
        return 0;
    }
    if (ret == AVERROR_EOF || ret == AVERROR(EAGAIN))
        return ret;
    if (ret < 0) {
        char buf[128];
        snprintf(err, errlen, "%s: decoder error: %s", dec->path, vkcu_err_str(ret, buf, sizeof(buf)));
        return VKCU_ERR_INPUT;
    }
    return 0;
}

/* The container's crop window, as the ffmpeg CLI applies it (its crop
 * filter, inserted after the decoder): the size is rounded down to whole
 * chroma samples, the offset clamped into the picture and rounded down the
 * same way; the planes' pointers move, nothing is copied. Hardware frames
 * take it into their crop fields instead, for the GPU session's copy. A
 * window that leaves no picture is ignored with a warning (the CLI stops). */
static void apply_container_crop(vkcu_decoder *dec, AVFrame *f)
{
    const uint32_t *c = dec->container_crop;
    if (!(c[0] | c[1] | c[2] | c[3]))
        return;
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(vkcu_frame_sw_format(f));
    int hsub = d->log2_chroma_w, vsub = d->log2_chroma_h;
    int vis_w, vis_h;
    vkcu_frame_visible_size(f, &vis_w, &vis_h);
    int64_t w = (int64_t)vis_w - c[2] - c[3], h = (int64_t)vis_h - c[0] - c[1];
    w &= ~(int64_t)((1 << hsub) - 1);
    h &= ~(int64_t)((1 << vsub) - 1);
    if (w <= 0 || h <= 0) {
        if (!dec->container_crop_warned++)
            LOGW("%s: the container's crop window (top %u, bottom %u, left %u, right %u) leaves no picture of "
                 "%dx%d; ignored", dec->path, c[0], c[1], c[2], c[3], vis_w, vis_h);
        return;
    }
    int64_t x = FFMIN((int64_t)c[2], vis_w - w), y = FFMIN((int64_t)c[0], vis_h - h);
    x &= ~(int64_t)((1 << hsub) - 1);
    y &= ~(int64_t)((1 << vsub) - 1);
    if (f->hw_frames_ctx) {
        f->crop_left += (size_t)x;
        f->crop_top += (size_t)y;
        f->width = (int)f->crop_left + (int)w;
        f->height = (int)f->crop_top + (int)h;
        return;
    }
    int step[4];
    av_image_fill_max_pixsteps(step, NULL, d);
    for (int p = 0; p < 4 && f->data[p]; p++) {
        if (p == 1 && (d->flags & AV_PIX_FMT_FLAG_PAL))
            break; /* the palette */
        int chroma = p == 1 || p == 2;
        f->data[p] += (ptrdiff_t)(chroma ? y >> vsub : y) * f->linesize[p] + (chroma ? (x * step[p]) >> hsub : x * step[p]);
    }
    f->width = (int)w;
    f->height = (int)h;
}

int vkcu_decoder_receive(vkcu_decoder *dec, AVFrame *frame)
{
    if (dec->par) {
        int r = dec->par_cls->receive(dec->par, dec, frame);
        if (r == 0)
            dec->avctx->framerate = dec->par_cls->framerate(dec->par);
        return r;
    }
    int ret = avcodec_receive_frame(dec->avctx, frame);
    if (ret < 0)
        return ret;
    /* The crop window as the ffmpeg CLI applies it: software frames by moving
     * the data pointers (chroma offsets rounded down, as the crop offsets of a
     * subsampled plane are), hardware frames by trimming right and bottom only;
     * they keep crop_left/crop_top for the GPU session's copy.
     * libavcodec has already reset a window that does not fit the frame, so a
     * failure here means a damaged frame. */
    if (av_frame_apply_cropping(frame, AV_FRAME_CROP_UNALIGNED) < 0) {
        av_frame_unref(frame);
        return AVERROR_INVALIDDATA;
    }
    apply_container_crop(dec, frame);
    return 0;
}

void vkcu_decoder_close(vkcu_decoder **pdec)
{
    vkcu_decoder *dec = *pdec;
    if (!dec)
        return;
    if (dec->par)
        dec->par_cls->close(&dec->par, dec->path);
    avcodec_free_context(&dec->avctx);
    av_freep(pdec);
}

int vkcu_decoder_flush(vkcu_decoder *dec)
{
    if (dec->par)
        return dec->par_cls->flush(dec->par);
    avcodec_flush_buffers(dec->avctx);
    return 0;
}

enum AVPixelFormat vkcu_frame_sw_format(const AVFrame *frame)
{
    if (frame->hw_frames_ctx)
        return ((AVHWFramesContext *)frame->hw_frames_ctx->data)->sw_format;
    return frame->format;
}
