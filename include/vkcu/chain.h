/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu public API: operator chains and the frame callback.
 *
 * A chain is text: operators separated by commas, each with optional
 * key=value pairs after '=' and separated by ':', applied in order, e.g.
 * "convert=format=yuv420p10:matrix=bt709,denoise=strength=2". Values
 * without a key come first and take the operator's keys in their order, as
 * ffmpeg's filters do: "scale=1280:720" is "scale=w=1280:h=720". The same
 * chain gives the same bytes on the CPU and the GPU backend. The operators
 * and their keys are listed by vkcu_operator_name() and
 * vkcu_operator_describe(); a chain is checked, without opening any input
 * or device, by vkcu_chain_check().
 *
 * A job whose sink is VKCU_SINK_CALLBACK (job.h) hands every processed
 * frame to a vkcu_frame_callback instead of writing a file.
 */
#ifndef VKCU_CHAIN_H
#define VKCU_CHAIN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct AVFrame;

/* What a frame callback learns once, before the first frame. */
typedef struct vkcu_stream_info {
    int tb_num, tb_den;   /* time base of the frames' pts and duration */
    int fps_num, fps_den; /* nominal frame rate after the chain; 0/1 when unknown */
    int64_t start;        /* 0: frame times count from the input's start */
    int width, height;    /* size of the frames after the chain */
    const char *format;   /* their pixel format, named as FFmpeg names it: "yuv420p",
                           * "nv12", "yuv420p10le", "p010le", "rgb24", "gbrp" ...
                           * (a static string: valid after the call too) */
    int pix_fmt;          /* the same as FFmpeg 7.1's enum AVPixelFormat (libavutil 59):
                           * use format unless the program is built against that FFmpeg */
    uint64_t reserved[16]; /* zero (version.h: room to grow) */
} vkcu_stream_info;

/* One processed frame as the frame callback receives it: its planes in
 * system memory, tightly described so that a program needs no FFmpeg
 * header to read the pixels. Rows of plane p are row_bytes[p] bytes of
 * samples, linesize[p] bytes apart; samples of more than 8 bits take two
 * bytes, little-endian, as FFmpeg's "le" formats store them. */
typedef struct vkcu_picture {
    int width, height;            /* visible size in pixels */
    const char *format;           /* as vkcu_stream_info.format */
    int nb_planes;                /* planes in data[]: 1 (packed RGB), 2 (NV12, P010), 3 or 4 */
    const uint8_t *data[4];       /* first byte of each plane's first row; NULL past nb_planes */
    ptrdiff_t linesize[4];        /* bytes from one row to the next, at least row_bytes */
    int row_bytes[4];             /* bytes of one row's samples, padding excluded */
    int rows[4];                  /* rows of each plane (4:2:0 chroma: half the height, rounded up) */
    int64_t pts;                  /* presentation time in the stream's time base */
    int64_t duration;             /* in the same time base; 0 when unknown */
    int key_frame;                /* 1: the input coded it as a key frame */
    int interlaced;               /* 1: two fields (a deinterlacer was not in the chain) */
    int top_field_first;          /* with interlaced: 1 top field first, 0 bottom first */
    const struct AVFrame *avframe; /* the same frame as FFmpeg 7.1's AVFrame (libavutil 59), for
                                    * programs built against that FFmpeg (colour tags, side data);
                                    * meaningless with other FFmpeg headers */
    uint64_t reserved[16];        /* zero (version.h: room to grow) */
} vkcu_picture;

/**
 * Called once per job, before the first frame.
 *
 * @param opaque the job's callback_opaque.
 * @param info   the stream after the chain; valid only during the call.
 * @return 0 to go on, or a negative error that ends the job with it.
 * @note Called on the thread that runs the job.
 */
typedef int (*vkcu_open_callback)(void *opaque, const vkcu_stream_info *info);

/**
 * Called once per processed frame, in output order.
 *
 * @param opaque  the job's callback_opaque.
 * @param picture the frame, owned by the library and valid only during the
 *                call (planes included): copy what you keep; never modify
 *                it. Its planes are in system memory.
 * @return 0 to go on, or a negative error that ends the job with it.
 * @note Called on the thread that runs the job; frames are not delivered
 *       concurrently.
 */
typedef int (*vkcu_frame_callback)(void *opaque, const vkcu_picture *picture);

/**
 * Checks a chain's syntax, operator names, keys and values.
 *
 * @param chain  the chain text; NULL and "" are the empty chain (valid).
 * @param err    receives a one-line reason on failure (may be NULL).
 * @param errlen size of err.
 * @return 0 when the chain is valid; -EINVAL when it is not (err says which
 *         operator or key and why); -ENOMEM.
 * @note Thread-safe. Whether the chain accepts a particular input format is
 *       known only when a job runs it.
 */
VKCU_API int vkcu_chain_check(const char *chain, char *err, size_t errlen);

/**
 * Enumerates the operators.
 *
 * @param index 0, 1, 2 ...
 * @return the name of the index-th operator (a static string), or NULL
 *         past the last one.
 * @note Thread-safe.
 */
VKCU_API const char *vkcu_operator_name(int index);

/**
 * Enumerates an operator's keys, in their order (the order values without
 * a key take them).
 *
 * @param name  an operator name, as vkcu_operator_name() returns it.
 * @param index 0, 1, 2 ...
 * @return the index-th key's name (a static string), or NULL past the last
 *         one or for an unknown operator.
 * @note Thread-safe.
 */
VKCU_API const char *vkcu_operator_key(const char *name, int index);

/**
 * Writes an operator's description: what it does, each key with its type,
 * range and default, and its accuracy against the reference it follows.
 *
 * @param name an operator name, as vkcu_operator_name() returns it.
 * @param out  where the text goes (the caller's stream; not closed).
 * @return 0; -EINVAL when no operator has this name.
 * @note Thread-safe when distinct threads write to distinct streams.
 */
VKCU_API int vkcu_operator_describe(const char *name, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
