/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Vulkan Video encode (FFmpeg's h264_vulkan / hevc_vulkan): whether a device
 * here can run it, and the upload of host frames into Vulkan frames for it.
 *
 * The check runs before any output is created, so `--encoder h264_vulkan`
 * on a GPU without a video encode queue (an H200) fails at once with one
 * line that says what to use instead.
 */
#ifndef VKCU_VKENCODE_H
#define VKCU_VKENCODE_H

#include <stddef.h>
#include <stdint.h>
#include <libavcodec/avcodec.h>

/* 1 when `encoder` is a Vulkan Video encoder name (h264_vulkan, hevc_vulkan). */
int vkcu_vkencode_is_vulkan(const char *encoder);

/* The Vulkan Video codec operation of `encoder`
 * (VK_VIDEO_CODEC_OPERATION_ENCODE_H264/H265_BIT_KHR), 0 when it is not a
 * Vulkan encoder. */
uint32_t vkcu_vkencode_op(const char *encoder);

/* The Vulkan device `encoder` runs on: the GPU of CUDA device
 * `cuda_device` (its UUID-matched shared device; < 0 without CUDA: the
 * first Vulkan device with an encode queue for the codec). Returns 0 with
 * a reference in *device, or VKCU_ERR_DEVICE with a one-line reason in
 * `why` (no loader, no device, or no encode queue for that codec, naming
 * the devices seen). */
int vkcu_vkencode_device(const char *encoder, int cuda_device, AVBufferRef **device, char *why, size_t whylen);

/* Sets up `enc` (not yet opened) for Vulkan frames on `device` (a
 * reference is taken): hw_device_ctx, hw_frames_ctx with NV12 (8-bit) or
 * P010 (10-bit) frames of enc->width x enc->height, and pix_fmt
 * AV_PIX_FMT_VULKAN. `host_fmt` is the planar layout frames arrive in
 * (yuv420p or yuv420p10le). */
int vkcu_vkencode_setup(AVCodecContext *enc, AVBufferRef *device, enum AVPixelFormat host_fmt, char *err,
                        size_t errlen);

/* The CPU reference of the semi-planar layout the GPU writes for the Vulkan
 * encoder (vkcu_cuda_to_semiplanar, kernels/frame_kernels.h): `in` (NV12,
 * P010, yuv420p or yuv420p10le) as FFmpeg's NV12 (8-bit) or P010 (16-bit
 * samples, the 10-bit value in the high bits, low 6 bits zero): luma rows at
 * dst[0], interleaved CbCr rows at dst[1], pitch[p] bytes apart.
 * AVERROR(EINVAL) for other formats. */
int vkcu_vkencode_pack(const AVFrame *in, uint8_t *const dst[2], const int pitch[2]);

/* Interleaves a planar host frame into a semi-planar staging frame and
 * uploads it into a new frame of enc->hw_frames_ctx (props copied). */
int vkcu_vkencode_upload(AVCodecContext *enc, const AVFrame *host, AVFrame *hw);

#endif
