/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sinks, the last stage of a job: the class a sink implements and the
 * four the job picks from (sink_encode.c, sink_hash.c, sink_callback.c,
 * sink_null.c), with the frame hash definition the hash sink writes.
 */
#ifndef VKCU_CORE_SINK_H
#define VKCU_CORE_SINK_H

#include <stddef.h>
#include <libavcodec/avcodec.h>

#include "kernels/frame.h"
#include "demux.h"
#include "vkcu.h"

typedef struct vkcu_sink vkcu_sink;
typedef struct vkcu_sink_class {
    const char *name;
    size_t priv_size;
    /* fmt: format of the frames that will arrive; tb: their time base. */
    int (*open)(vkcu_sink *s, const vkcu_video_format *fmt, AVRational tb);
    int (*write_frame)(vkcu_sink *s, AVFrame *frame);
    /* Non-video packets of the input (stream copy); may be NULL. */
    int (*write_packet)(vkcu_sink *s, AVPacket *pkt);
    /* ok = 0: the job failed; discard partial output. */
    int (*close)(vkcu_sink *s, int ok);
} vkcu_sink_class;

struct vkcu_sink {
    const vkcu_sink_class *cls;
    void *priv;
    const vkcu_job_params *params;
    vkcu_job_result *result;  /* sinks may add their statistics at close */
    vkcu_demux *demux;
    char *err;
    size_t errlen;
    int opened;
    /* Set by open where the sink also takes AV_PIX_FMT_VULKAN frames of this
     * frames context (the Vulkan encoder's; the sink's reference, valid
     * until close): the GPU session may hand it frames filled on the GPU. */
    AVBufferRef *gpu_frames;
};

extern const vkcu_sink_class vkcu_sink_hash, vkcu_sink_encode, vkcu_sink_null, vkcu_sink_callback;

/* The frame hash definition (docs/hash.md): planes in order, each row's
 * visible samples packed without padding, 16-bit samples little-endian. */
int vkcu_frame_hash(const AVFrame *frame, enum vkcu_hash_algo algo, char *hex, size_t hexlen, int *size);

/* Whether the GPU session hands this job's hash sink digests
 * (vkcu_frame_digest, gpu/gpu.h) instead of frames, given the planar layout
 * `host_fmt` frames would be downloaded in:
 * per-frame BLAKE3 lines (not --whole, not framecrc) of a layout hashed as
 * stored (semi-planar layouts are rearranged on the CPU, so they download). */
int vkcu_hash_on_gpu(const vkcu_job_params *p, enum AVPixelFormat host_fmt);

/* The instances a GPU compute encoder named `encoder` runs for this job
 * (the encode_workers setting, or a default), 1 for any other encoder. */
int vkcu_compute_instances(const vkcu_job_params *p, const char *encoder);

/* Whether the instances of GPU compute encoder `encoder` beside the first
 * each take a compute queue of their own (sink_encode_gop.c): only with
 * VKCU_ENCODE_INSTANCE_QUEUES=all or VKCU_VK_SUBMIT_LOCK=1 (measurements:
 * not always exact without the lock). */
int vkcu_compute_instance_queues(const char *encoder);

/* The instances of `encoder` that take a compute queue each (with the
 * first's): vkcu_compute_instances where vkcu_compute_instance_queues, else 1. */
int vkcu_compute_instance_lanes(const vkcu_job_params *p, const char *encoder);

#endif
