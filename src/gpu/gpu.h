/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * GPU session: one Vulkan device matched to one CUDA device by UUID, the
 * interop ring between them, and the CUDA side of an operator chain.
 *
 * push() takes a decoded frame (a Vulkan frame from the hwaccel, or a
 * software frame when the stream fell back to software decode), copies it
 * on the GPU into the next interop slot (or uploads it), runs the chain on
 * the CUDA stream and starts the asynchronous download into pinned memory.
 * The CPU does not wait in push(). pop() returns finished host frames in
 * order and blocks only when asked to (ring full, or draining).
 */
#ifndef VKCU_GPU_H
#define VKCU_GPU_H

#include <libavutil/buffer.h>
#include <libavutil/frame.h>

#include <stdint.h>

#include <vkcu/job.h>

#include "ops/op.h"
#include "util/hash_algo.h"

typedef struct vkcu_gpu vkcu_gpu;

/* What a session needs to know of its job; the job (core/) fills it in. */
/* The interop ring's capacity (its slot array); vkcu_gpu_open refuses more. */
#define VKCU_GPU_MAX_SLOTS 16

typedef struct vkcu_gpu_config {
    int device;            /* CUDA device ordinal */
    int ring_size;         /* interop slots (frames in flight), 1..VKCU_GPU_MAX_SLOTS (the job checks the range users get) */
    int timeline_handoff;  /* 1: one exported timeline semaphore of vkcu's instead of the slots' binary ones */
    int stall_timeout_ms;  /* how long a slot's fence may take before the device counts as stalled */
    int frames_wanted;     /* 0: nothing leaves the GPU (null sink) */
    int vulkan_download;   /* 1: frames leave through the output ring, read back by Vulkan (docs/gpu-rings.md) */
    int decode_queue_pin;  /* N > 0: the decoder submits on Vulkan decode queue N - 1; 0: on those the process claimed */
    /* Called once the chain's output is known, with the planar layout its
     * frames would be downloaded in: 1 when the consumer takes BLAKE3
     * digests computed on the GPU (vkcu_frame_digest) instead of frames.
     * NULL: always frames. */
    int (*digest_instead)(void *opaque, enum AVPixelFormat host_fmt);
    void *opaque;
    /* >0: frames stay in CUDA device memory (devframes.c): the chain's
     * output is written, in the planar host layout, into a buffer of a pool
     * of this many, and pop() hands that buffer over (vkcu_frame_cuda_device
     * says so); push() waits while all are out. 0: frames go to the host. */
    int cuda_pool;
} vkcu_gpu_config;


/* A frame whose pixels stayed on the GPU: the session hashed it there (the
 * byte string of docs/hash.md) and only the digest came back. Such a frame
 * has no data planes; its opaque_ref holds this struct. */
typedef struct vkcu_frame_digest {
    enum vkcu_hash_algo algo;
    int size;               /* bytes hashed */
    uint8_t digest[32];
} vkcu_frame_digest;
/* The digest a frame carries, or NULL for an ordinary frame. */
const vkcu_frame_digest *vkcu_frame_digest_get(const AVFrame *frame);

/* Starts making CUDA device `device`'s Vulkan device and CUDA context on
 * background threads, so that the caller's demuxing overlaps them; returns
 * at once (nothing without an NVIDIA driver). Pair with
 * vkcu_gpu_prepare_wait before the job returns. */
void vkcu_gpu_prepare(int device);
void vkcu_gpu_prepare_wait(int device);
/* Opens the device pair (c->device is the CUDA ordinal; c is copied).
 * VKCU_ERR_DEVICE with a one-line reason when there is no usable GPU. */
int vkcu_gpu_open(const vkcu_gpu_config *c, vkcu_gpu **out, char *err, size_t errlen);
/* The Vulkan AVHWDeviceContext for the decoder (owned by the session). */
AVBufferRef *vkcu_gpu_vulkan_device(vkcu_gpu *g);
/* The GPU's memory in bytes (the CUDA device's total). */
int64_t vkcu_gpu_memory(const vkcu_gpu *g);
/* Sets the chain run on the CUDA stream (after vkcu_chain_init). */
void vkcu_gpu_set_chain(vkcu_gpu *g, vkcu_chain *chain);
/* Zero-copy Vulkan encode (docs/gpu-rings.md): the chain's frames leave as
 * AV_PIX_FMT_VULKAN frames of `frames`, a Vulkan encoder's frames context
 * (hw_frames_ctx of h264_vulkan/hevc_vulkan, or of FFmpeg 8.1's compute
 * encoders ffv1_vulkan/prores_ks_vulkan), each filled on the GPU from a
 * slot of the output ring that the chain's last kernel wrote in the layout
 * of the images (NV12/P010, packed from any 4:2:0 output of that depth;
 * other formats, the chain's own planar layout); no host copy. Call after
 * vkcu_gpu_set_chain, before the first push. 0: taken (a reference is
 * kept); 1: not possible here, with the reason in `why` (frames then leave
 * as host frames, as without the call): the frames' images are on another
 * Vulkan device than the session's, of a format without a slot layout, or
 * cannot be written by a transfer. Taken frames whose images do not fit the
 * chain's output (another size; NV12/P010 for an output that is not 4:2:0
 * at their depth; another planar format) also leave as host frames (said at
 * verbose level). */
int vkcu_gpu_encode_into(vkcu_gpu *g, AVBufferRef *frames, char *why, size_t whylen);
/* frame: takes ownership (unreferenced inside); NULL flushes the chain
 * (at the end, or before a format change; frames may follow). A frame of
 * another software format or visible size than the ring's makes the
 * session drain, then build the input ring, the download (and the output
 * ring) again for it, importing once per new slot, and set up the chain's
 * GPU side again (docs/gpu-rings.md, format changes). */
int vkcu_gpu_push(vkcu_gpu *g, AVFrame *frame, char *err, size_t errlen);
/* A format change mid-stream: the caller has flushed the chain (push NULL),
 * popped every frame and set the chain up again for the new format
 * (vkcu_chain_reinit, which frees the operators' GPU side): the next frame
 * pushed makes the rings and the chain's GPU side again, whatever its
 * format. */
void vkcu_gpu_chain_reinit(vkcu_gpu *g);
/* 0 with a host frame, AVERROR(EAGAIN) when none is (ready and) pending. */
int vkcu_gpu_pop(vkcu_gpu *g, AVFrame *out, int wait, char *err, size_t errlen);
/* Frames pushed whose host copy has not been popped yet. */
int vkcu_gpu_pending(const vkcu_gpu *g);
/* Whether push() would have to wait for a free slot. */
int vkcu_gpu_full(const vkcu_gpu *g);
/* What the session counted and timed, into the GPU fields of a job's
 * result (vkcu/job.h: imports ... setup_vk_device); its other fields are
 * left as they are. The one place these figures are copied: the job
 * (pipeline.c) and random access (reader_seek.c) take them from here. */
void vkcu_gpu_stats(const vkcu_gpu *g, vkcu_job_result *r);
void vkcu_gpu_close(vkcu_gpu **g);

/* The planar layout GPU frames are downloaded and hashed in
 * (NV12 -> yuv420p, P010 -> yuv420p10le, others unchanged). */
enum AVPixelFormat vkcu_gpu_host_format(enum AVPixelFormat device_fmt);

/* Whether this binary can reach a CUDA device at all (no driver: 0). */
int vkcu_gpu_available(void);

/* ---- frames in CUDA device memory (devframes.c) ---- */
/* Makes `device` the calling thread's current CUDA device and returns the
 * one that was (-1: none known); vkcu_cuda_leave puts it back. For calls
 * made on threads that are not the library's (a reader's caller, a
 * consumer releasing a frame), whose current device belongs to them. */
int vkcu_cuda_enter(int device);
void vkcu_cuda_leave(int saved, int device);
/* The CUDA device whose memory a frame's planes are in (a frame popped
 * from a session with cuda_pool, or a copy of one), or -1 for a host frame. */
int vkcu_frame_cuda_device(const AVFrame *frame);
/* A consumer is done with the frame's memory once the work it queued on
 * `stream` (cudaStream_t, DLPack's numbering: 1 legacy default, 2 per-thread
 * default; 0 and -1 taken as 1) so far has run: the buffer is reused or
 * freed only after that. Call before dropping the reference. Any thread;
 * the thread's current CUDA device is left as it was. */
void vkcu_frame_cuda_release_after(const AVFrame *frame, int64_t stream);
/* A copy of a CUDA frame in device memory of its own (not the pool's), the
 * same layout; complete when the call returns. Any thread. */
int vkcu_frame_cuda_copy(const AVFrame *src, AVFrame **copy, char *err, size_t errlen);
/* A host copy of a CUDA frame (same format, size and properties, in memory
 * of av_frame_get_buffer), complete when the call returns; its bytes are
 * added to *bytes (NULL: not counted). Any thread. */
int vkcu_frame_cuda_download(const AVFrame *src, AVFrame **host, int64_t *bytes, char *err, size_t errlen);
/* A CUDA frame of its own on `device` holding a copy of the host frame
 * `src` (planes one after the other, rows 256-byte aligned); complete when
 * the call returns. For tests and for host frames that must meet device
 * frames. Any thread. */
int vkcu_frame_cuda_upload(const AVFrame *src, int device, AVFrame **out, char *err, size_t errlen);

#endif
