/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * FFmpeg's Vulkan encoders, one mechanism for all of them: the Vulkan Video
 * encoders (h264_vulkan, hevc_vulkan: a video encode queue) and the compute
 * encoders of FFmpeg 8.1 (ffv1_vulkan, prores_ks_vulkan: compute shaders,
 * any Vulkan GPU). Here: which device each runs on, the encoder's frames
 * context, the checks that run before any output is created (so a GPU that
 * cannot run the encoder fails at once, with one line that says what to
 * use instead), the upload of host frames for the paths that have them,
 * and timestamps around the encoder's own GPU work.
 *
 * On the GPU backend the frames reach the encoder without the host: the
 * chain's last kernel writes each frame into a slot of the output ring, in
 * the layout of the encoder's images (NV12/P010 for the video encoders,
 * the chain's planar layout for the compute encoders), and one GPU copy
 * fills an image of the encoder's frames context (gpu.h:
 * vkcu_gpu_encode_into; docs/gpu-rings.md). What differs between the two
 * kinds is only that layout and the queue the encoder submits on.
 */
#ifndef VKCU_VKENCODE_H
#define VKCU_VKENCODE_H

#include <stddef.h>
#include <stdint.h>
#include <libavcodec/avcodec.h>

/* One of FFmpeg's Vulkan encoders. */
typedef struct vkcu_vkencoder {
    const char *name;      /* FFmpeg's name, as users know it */
    const char *cpu_twin;  /* the software encoder of the same bitstream (what to use without the GPU) */
    uint32_t video_op;     /* VK_VIDEO_CODEC_OPERATION_ENCODE_*: a Vulkan Video encoder; 0: a compute encoder */
    /* The compute encoders' own rules (0 / NULL for the video encoders): */
    unsigned shaders;      /* the shader features they need (VKCU_SHADERS_*, vkshader.h) */
    const char *convert_to; /* the formats to convert to when the chain's is not one they take */
    /* rules on the frames beyond their format (NULL: none): 0, or
     * VKCU_ERR_USAGE with the reason in err */
    int (*frame_rules)(AVCodecContext *enc, enum AVPixelFormat fmt, char *err, size_t errlen);
} vkcu_vkencoder;

/* The Vulkan encoder of that name, or NULL. */
const vkcu_vkencoder *vkcu_vkencode_find(const char *encoder);
/* The i-th Vulkan encoder (i from 0), or NULL past the last. */
const vkcu_vkencoder *vkcu_vkencode_get(int i);

/* 1 when `encoder` is one of FFmpeg's Vulkan encoders (either kind). */
int vkcu_vkencode_is_vulkan(const char *encoder);

/* The Vulkan Video codec operation of `encoder`
 * (VK_VIDEO_CODEC_OPERATION_ENCODE_H264/H265_BIT_KHR); 0 for the compute
 * encoders and for other names. */
uint32_t vkcu_vkencode_op(const char *encoder);

/* The Vulkan device `encoder` runs on. Video encoders: the GPU of CUDA
 * device `cuda_device` (its UUID-matched shared device; < 0 without CUDA:
 * the first Vulkan device with an encode queue for the codec). Compute
 * encoders: only the GPU backend's shared device (cuda_device >= 0), the
 * one the session decodes on, with the shader features FFmpeg's encoders
 * need (vkshader.h). Returns 0 with a reference in *device, or
 * VKCU_ERR_DEVICE with a one-line reason in `why` (no loader, no device, no
 * encode queue, a missing feature, named). */
int vkcu_vkencode_device(const char *encoder, int cuda_device, AVBufferRef **device, char *why, size_t whylen);

/* vkcu's defaults for a Vulkan encoder, set before the user's options
 * (which may change them): the compute encoders keep 3 frames in flight on
 * the GPU (their async_depth; FFmpeg's default, 1, has the encoder wait for
 * each frame before it takes the next; the packets do not change). Other
 * encoders are left as they are. */
void vkcu_vkencode_defaults(AVCodecContext *enc);

/* VKCU_ENCODE_INSTANCE_DEVICES=1, a measurement (issue 36): a compute
 * encoder's instances beside the first each on a VkDevice of their own,
 * their frames through the host (the output ring is not used). */
int vkcu_vkencode_instance_devices(void);
/* For it: a new FFmpeg Vulkan device on the physical device of `like`. */
int vkcu_vkencode_instance_device(const AVBufferRef *like, AVBufferRef **out);

/* Sets up `enc` (allocated for a Vulkan encoder, its options applied, not
 * yet opened) for Vulkan frames on `device` (a reference is taken):
 * hw_device_ctx, hw_frames_ctx of enc->width x enc->height, pix_fmt
 * AV_PIX_FMT_VULKAN, sw_pix_fmt. `host_fmt` is the layout the chain's
 * frames have.
 * - Video encoders: NV12 (8-bit) or P010 (10-bit) images with the usage
 *   the encode profile asks of the driver; host_fmt 4:2:0 at 8 or 10 bits.
 * - Compute encoders: images of host_fmt itself (the format is never
 *   changed), one image per plane, FFmpeg's default usage (which gives the
 *   storage usage their shaders read through; TRANSFER_DST, which the
 *   ring's copy needs, is checked). host_fmt must be one the encoder's CPU
 *   twin takes (they share its set-up code) and one the device makes
 *   storage images of. ffv1_vulkan: below level 4, 4:2:0 and 4:2:2 need a
 *   width (and, for 4:2:0, a height) that is a multiple of 128 and GOPs of
 *   one frame, as FFmpeg 8.1 requires; vkcu refuses other frames naming the
 *   remedy (level=4, which FFmpeg marks experimental, or the CPU ffv1)
 *   rather than choosing level 4 by itself; level 4 asked for also sets
 *   strict=experimental (said at verbose level).
 * Returns 0; VKCU_ERR_USAGE (frames the encoder cannot take with these
 * settings) or VKCU_ERR_DEVICE (the device cannot make its images), with
 * the reason in err. */
int vkcu_vkencode_setup(AVCodecContext *enc, AVBufferRef *device, enum AVPixelFormat host_fmt, char *err,
                        size_t errlen);

/* The CPU reference of the semi-planar layout the GPU writes for the Vulkan
 * Video encoders (vkcu_cuda_to_semiplanar, kernels/frame_kernels.h): `in`
 * (NV12, P010, yuv420p or yuv420p10le) as FFmpeg's NV12 (8-bit) or P010
 * (16-bit samples, the 10-bit value in the high bits, low 6 bits zero): luma
 * rows at dst[0], interleaved CbCr rows at dst[1], pitch[p] bytes apart.
 * AVERROR(EINVAL) for other formats. */
int vkcu_vkencode_pack(const AVFrame *in, uint8_t *const dst[2], const int pitch[2]);

/* The CPU reference of the planar slot the GPU writes for the compute
 * encoders (vkcu_cuda_to_planar into a vkcu_outring_layout): every plane of
 * `in` copied row by row to dst + offset[p], pitch[p] bytes apart; padding
 * is left as it was. `in` must be in its planar host layout
 * (vkcu_gpu_host_format). AVERROR(EINVAL) for formats without a slot layout. */
int vkcu_vkencode_pack_planar(const AVFrame *in, uint8_t *dst, const size_t offset[4], const int pitch[4]);

/* Puts a host frame into a new frame of enc->hw_frames_ctx (props copied):
 * as it is when the images have its format, else interleaved into
 * NV12/P010 first (the video encoders). */
int vkcu_vkencode_upload(AVCodecContext *enc, const AVFrame *host, AVFrame *hw);

/* Timestamps around a Vulkan encoder's own GPU work: before each frame is
 * sent, a submission waits for the frame to be ready (its timeline at the
 * current value: the ring's copy or the upload) and writes a timestamp;
 * after, one waits for the value the encoder's submission signals and
 * writes another. The encoder's GPU time is the union of the intervals
 * [ready, done] (a frame is not counted before the previous one was done),
 * so when the encoder's GPU work is the limit, frames / busy time is the
 * rate it allows. NULL (no timing) where the device's compute family has no
 * timestamps or hostQueryReset is off. One thread uses a timer. */
typedef struct vkcu_vkencode_timer vkcu_vkencode_timer;
vkcu_vkencode_timer *vkcu_vkencode_timer_new(AVBufferRef *device);
/* Around avcodec_send_frame of `frame` (an AV_PIX_FMT_VULKAN frame). */
void vkcu_vkencode_timer_before(vkcu_vkencode_timer *t, const AVFrame *frame);
void vkcu_vkencode_timer_after(vkcu_vkencode_timer *t, const AVFrame *frame);
/* Waits for the stamps still pending; the busy time in ms and the frames
 * timed. */
void vkcu_vkencode_timer_result(vkcu_vkencode_timer *t, double *busy_ms, int64_t *frames);
/* Accepts NULL; clears the pointer. Call before the encoder's device goes. */
void vkcu_vkencode_timer_free(vkcu_vkencode_timer **t);

#endif
