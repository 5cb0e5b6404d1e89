/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu public API: operator chains and the frame callback.
 *
 * A chain is text: operators separated by commas, each with optional
 * key=value pairs after '=' and separated by ':', applied in order, e.g.
 * "convert=format=yuv420p10:matrix=bt709,denoise=strength=2". The same
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
    int pix_fmt;          /* enum AVPixelFormat of the frames after the chain */
} vkcu_stream_info;

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
 * @param opaque the job's callback_opaque.
 * @param frame  a software frame (system memory) owned by the library and
 *               valid only during the call: keep it with av_frame_ref() or
 *               copy it; never free or modify it. Its colour tags and HDR
 *               side data describe the picture after the chain.
 * @return 0 to go on, or a negative error that ends the job with it.
 * @note Called on the thread that runs the job; frames are not delivered
 *       concurrently.
 */
typedef int (*vkcu_frame_callback)(void *opaque, const struct AVFrame *frame);

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
