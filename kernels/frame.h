/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The frame descriptions that host code and CUDA kernels share: a picture
 * format and the planes of a frame in GPU memory. They live here, and not
 * with the operators in src/ops/, because kernels/ is the bottom layer:
 * device code includes nothing from src/.
 */
#ifndef VKCU_KERNELS_FRAME_H
#define VKCU_KERNELS_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <libavutil/pixfmt.h>
#include <libavutil/rational.h>
#include <libavutil/mastering_display_metadata.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A picture format: sample layout plus its colour description. */
typedef struct vkcu_video_format {
    enum AVPixelFormat pix_fmt; /* software layout (NV12, P010, yuv420p, ...) */
    int width, height;          /* visible size */
    enum AVColorSpace matrix;
    enum AVColorRange range;
    enum AVColorPrimaries primaries;
    enum AVColorTransferCharacteristic transfer;
    enum AVChromaLocation chroma_loc;
    AVRational sar;             /* sample aspect ratio of the decoded frames (0/1: unknown) */
    AVRational time_base;       /* unit of the frames' pts and duration (0/1: unknown) */
    AVRational frame_rate;      /* nominal frame rate, what the sink encodes at (0/1: unknown) */
    /* From the first frame's flags: AV_FIELD_TT / AV_FIELD_BB (interlaced,
     * top / bottom field first) or AV_FIELD_PROGRESSIVE; UNKNOWN when not
     * filled from a frame. The encoder signals it as ffmpeg does. */
    int field_order;            /* enum AVFieldOrder (libavcodec, which this header does not include) */
    int has_mastering;
    AVMasteringDisplayMetadata mastering;
    int has_cll;
    AVContentLightMetadata cll;
} vkcu_video_format;

/* One plane of a frame in GPU memory. Either `tex`/`surf` (a CUDA array,
 * e.g. an imported interop image) or `ptr`/`pitch` (pitch-linear device
 * memory) is set. Samples are 8-bit or 16-bit; 2-component planes are
 * interleaved (NV12/P010 chroma). */
typedef struct vkcu_gpu_plane {
    unsigned long long tex;  /* cudaTextureObject_t (element reads, unnormalised coords), 0 if none */
    unsigned long long surf; /* cudaSurfaceObject_t, 0 if none */
    uint8_t *ptr;
    size_t pitch;
    int width, height;       /* in samples of this plane */
} vkcu_gpu_plane;

typedef struct vkcu_gpu_frame {
    vkcu_video_format fmt;
    int nb_planes;
    vkcu_gpu_plane plane[4];
    int64_t pts, duration;
    int flags;        /* the decoded frame's AV_FRAME_FLAG_* (interlaced, field order) */
    int repeat_pict;  /* as AVFrame.repeat_pict */
} vkcu_gpu_frame;

#ifdef __cplusplus
}
#endif

#endif
