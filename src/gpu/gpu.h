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

#include "ops/op.h"
#include "core/vkcu.h"

typedef struct vkcu_gpu vkcu_gpu;

/* Starts making CUDA device `device`'s Vulkan device and CUDA context on
 * background threads, so that the caller's demuxing overlaps them; returns
 * at once (nothing without an NVIDIA driver). Pair with
 * vkcu_gpu_prepare_wait before the job returns. */
void vkcu_gpu_prepare(int device);
void vkcu_gpu_prepare_wait(int device);
/* Opens the device pair (p->device is the CUDA ordinal). VKCU_ERR_DEVICE
 * with a one-line reason when there is no usable GPU. */
int vkcu_gpu_open(const vkcu_job_params *p, vkcu_gpu **out, char *err, size_t errlen);
/* The Vulkan AVHWDeviceContext for the decoder (owned by the session). */
AVBufferRef *vkcu_gpu_vulkan_device(vkcu_gpu *g);
/* Sets the chain run on the CUDA stream (after vkcu_chain_init). */
void vkcu_gpu_set_chain(vkcu_gpu *g, vkcu_chain *chain);
/* frame: takes ownership (unreferenced inside); NULL flushes the chain. */
int vkcu_gpu_push(vkcu_gpu *g, AVFrame *frame, char *err, size_t errlen);
/* 0 with a host frame, AVERROR(EAGAIN) when none is (ready and) pending. */
int vkcu_gpu_pop(vkcu_gpu *g, AVFrame *out, int wait, char *err, size_t errlen);
/* Frames pushed whose host copy has not been popped yet. */
int vkcu_gpu_pending(const vkcu_gpu *g);
/* Whether push() would have to wait for a free slot. */
int vkcu_gpu_full(const vkcu_gpu *g);
void vkcu_gpu_stats(const vkcu_gpu *g, vkcu_job_result *r);
void vkcu_gpu_close(vkcu_gpu **g);

/* The planar layout GPU frames are downloaded and hashed in
 * (NV12 -> yuv420p, P010 -> yuv420p10le, others unchanged). */
enum AVPixelFormat vkcu_gpu_host_format(enum AVPixelFormat device_fmt);

/* Whether this binary can reach a CUDA device at all (no driver: 0). */
int vkcu_gpu_available(void);

#endif
