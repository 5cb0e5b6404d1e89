/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Picture formats of decoded frames: reading them off AVFrames, writing
 * their tags back, and which layouts the GPU ring and the operators can
 * address. The types (vkcu_video_format) are kernels/frame.h's.
 */
#ifndef VKCU_UTIL_FORMAT_H
#define VKCU_UTIL_FORMAT_H

#include <stddef.h>
#include <libavutil/frame.h>
#include <libavutil/pixfmt.h>

#include "kernels/frame.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills a format from a decoded frame (pix_fmt given separately because
 * hardware frames carry their software format in hw_frames_ctx). The size
 * is the visible picture's (vkcu_frame_visible_size). */
void vkcu_format_from_frame(vkcu_video_format *f, const AVFrame *frame, enum AVPixelFormat sw_fmt);
/* The visible picture of a decoded frame: software frames are cropped
 * already; hardware frames keep their left and top crop offsets, the
 * picture starting at (crop_left, crop_top). */
void vkcu_frame_visible_size(const AVFrame *frame, int *width, int *height);
/* Writes the format's colour tags (and HDR side data) onto a frame. */
int vkcu_format_to_frame(const vkcu_video_format *f, AVFrame *frame);
/* Full-range "J" layouts (yuvj420p, yuvj422p, ... as MJPEG and full-range
 * H.264 decode to) become their plain twins with the range set to full, in
 * place. Every decoded frame passes here, whichever backend runs the job. */
void vkcu_frame_plain_layout(AVFrame *frame);
/* Whether the GPU backend's interop ring carries frames of this layout:
 * planar or semi-planar YUV, gray or planar RGB, integer samples of 8 to
 * 16 bits in one or two bytes, native byte order. 1 yes; 0 no, with the
 * reason in why. Jobs on the GPU backend process other layouts (packed or
 * palette RGB, ...) on the CPU, so that both backends accept the same inputs
 * and chains: what refuses an input is the operators' and the encoder's own
 * checks, which both backends share. */
int vkcu_format_gpu_carries(enum AVPixelFormat fmt, char *why, size_t whylen);
/* What changed between two formats of decoded frames, one bit each
 * (0: nothing the operators or the GPU ring depend on):
 * - VKCU_CHANGE_SIZE: the visible width or height;
 * - VKCU_CHANGE_LAYOUT: the pixel format (depth, chroma subsampling, planes);
 * - VKCU_CHANGE_COLOUR: matrix, range, primaries, transfer or chroma siting.
 * A stream that changes mid-way (new parameter sets, a joined recording)
 * sets the operators up again on any of them; the GPU ring is made again
 * for a change of size or layout. */
enum {
    VKCU_CHANGE_SIZE = 1 << 0,
    VKCU_CHANGE_LAYOUT = 1 << 1,
    VKCU_CHANGE_COLOUR = 1 << 2,
};
int vkcu_format_change(const vkcu_video_format *from, const vkcu_video_format *to);
/* "yuv420p10le 256x192" (with ", bt709 tv" when the colour is tagged): for messages. */
const char *vkcu_format_describe(const vkcu_video_format *f, char *buf, size_t size);
struct AVPixFmtDescriptor;
/* Why no operator can address this layout's samples as whole bytes
 * (unknown, palette, bit-packed or Bayer, float, big-endian), or NULL.
 * Hardware layouts are the caller's to judge. */
const char *vkcu_layout_unsupported(const struct AVPixFmtDescriptor *d);

#ifdef __cplusplus
}
#endif

#endif
