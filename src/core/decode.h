/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The decode stage (decode.c): libavcodec on a demuxed video stream, with
 * the Vulkan Video (or compute) hwaccel on a Vulkan device or in software.
 * Errors are one user-facing line in `err`, naming the file.
 */
#ifndef VKCU_CORE_DECODE_H
#define VKCU_CORE_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <libavcodec/avcodec.h>

#include "demux.h"

typedef struct vkcu_decoder {
    AVCodecContext *avctx;
    const char *path;
    int hw;                 /* 1: Vulkan Video hwaccel active */
    int64_t packets_rejected; /* packets the decoder refused as invalid data */
    /* The container's crop window (Matroska PixelCrop, MP4 'clap'), applied
     * after the codec's: top, bottom, left, right. */
    uint32_t container_crop[4];
    int container_crop_warned;
} vkcu_decoder;

/* hw_device: a Vulkan AVHWDeviceContext, or NULL for software decode.
 * With hw_device set, fails with AVERROR(ENOSYS) when the device cannot
 * decode this stream (codec, profile or size), so the caller can fall back. */
int vkcu_decoder_open(const vkcu_demux *d, AVBufferRef *hw_device, int threads,
                      vkcu_decoder **out, char *err, size_t errlen);
/* Whether a Vulkan device can decode this stream (codec, profile, depth,
 * chroma format, size): VKCU_VK_DECODE_VIDEO (a video decode queue) or
 * VKCU_VK_DECODE_COMPUTE (FFmpeg's compute hwaccels), 0 no (reason in why). */
int vkcu_decoder_vulkan_supported(const vkcu_demux *d, AVBufferRef *hw_device, char *why, size_t whylen);
/* pkt NULL: drain. Invalid packets are counted and skipped unless strict. */
int vkcu_decoder_send(vkcu_decoder *dec, const AVPacket *pkt, int strict, char *err, size_t errlen);
/* 0 with a frame, AVERROR(EAGAIN), AVERROR_EOF, or an error. */
int vkcu_decoder_receive(vkcu_decoder *dec, AVFrame *frame);
void vkcu_decoder_close(vkcu_decoder **dec);
/* The software pixel format of decoded frames (resolves hardware frames). */
enum AVPixelFormat vkcu_frame_sw_format(const AVFrame *frame);

#endif
