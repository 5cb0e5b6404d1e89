/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The process-wide Vulkan device per GPU, shared by every stream, and the
 * per-stream device contexts that spread decoders over the decode queues.
 */
#ifndef VKCU_GPU_VKDEV_H
#define VKCU_GPU_VKDEV_H

#include <stddef.h>
#include <stdint.h>
#include <libavutil/buffer.h>

/* How the shared device of a GPU was set up (milliseconds, each on its own
 * thread: the instance and device beside CUDA's start and context). */
typedef struct vkcu_vkdev_times {
    double instance_ms;     /* Vulkan instance and the physical devices' queries */
    double device_ms;       /* vkCreateDevice and FFmpeg's init of it */
    double cuda_ms;         /* CUDA runtime start up to the device's UUID */
    double cuda_context_ms; /* the CUDA primary context */
    double total_ms;        /* the whole of it, threads joined */
    int own;                /* 1: vkcu's device; 0: FFmpeg's (VKCU_VULKAN_DEVICE=ffmpeg or the fallback) */
    int speculative;        /* 1: made before CUDA reported its UUID (the only device that could be it) */
    uint32_t nb_decode, nb_compute, nb_encode; /* queues created (own device) */
    /* vkcu_now() stamps of each step, for the set-up timeline (0: not taken):
     * the instance (vkinstance.h: made once per process, possibly before
     * this device), this device's queue families and extensions, its
     * vkCreateDevice and FFmpeg's init, CUDA's start, UUID and context. */
    double t_instance0, t_instance1, t_enumerated, t_caps0, t_caps1, t_device0, t_device1, t_hwctx1;
    double t_cuda0, t_cuda_uuid, t_cuda_context;
} vkcu_vkdev_times;

/* What the process will run, said before its first job starts (later
 * calls only add): the streams at once (one decode queue each, at least
 * two) and a Vulkan Video encode codec operation
 * (VK_VIDEO_CODEC_OPERATION_ENCODE_*; 0 for none) that the shared device
 * should carry a queue for. A device already made keeps its queues.
 * Thread-safe. */
void vkcu_vkdev_expect(unsigned streams, uint32_t encode_op);

/* The decode queue the process's jobs pin (the decode_queue setting), said
 * before the device is made so that it has that queue and claims it
 * (gpu/qclaim.h); -1 does nothing, and the first queue said wins.
 * Thread-safe. */
void vkcu_vkdev_expect_decode_queue(int queue);

/* The compute queues the shared device should have (and the process
 * claim), said before it is made: Vulkan decoders in parallel make their
 * new frames ready on compute queues, which must not wait behind the
 * handoff's copies (core/pipeline_open.c). VKCU_VK_COMPUTE_QUEUES
 * overrides it. Thread-safe. */
void vkcu_vkdev_expect_compute(unsigned queues);

/* Starts creating the shared device of CUDA device `cuda_device` on a
 * background thread (CUDA's start on another), so that demuxing runs beside
 * it; returns at once. Does nothing without an NVIDIA driver or when the
 * device exists or is being made. Thread-safe. */
void vkcu_vkdev_prepare(int cuda_device);
/* Waits until no thread is making that device (before a job that prepared
 * it returns, whether or not it used it). Thread-safe. */
void vkcu_vkdev_prepare_wait(int cuda_device);

/* A Vulkan AVHWDeviceContext for one stream on CUDA device `cuda_device`
 * (the Vulkan device with the same UUID, created on first use and kept for
 * the process). Its decoder submits on the next queue(s) of those the
 * process claimed, or on decode_queue when that is >= 0 (VKCU_ERR_USAGE
 * naming the setting when the device has no such queue). *lane: the
 * stream's number on the device (vkcu_vkdev_compute_queue). Release with
 * av_buffer_unref. Thread-safe. */
int vkcu_vkdev_acquire(int cuda_device, int decode_queue, AVBufferRef **out, int *lane, char *err, size_t errlen);

/* The decode queues this process claimed on CUDA device cuda_device's
 * shared device (the lanes vkcu_vkdev_acquire hands out in turn); 0 when
 * the device is not made or cannot decode. Thread-safe. */
int vkcu_vkdev_decode_lanes(int cuda_device);

/* The Vulkan decoder's frame threads: 1, or VKCU_VK_DECODE_THREADS with
 * FFmpeg 8.1 and later (a measurement knob). Thread-safe. */
int vkcu_vkdev_decode_threads(void);

/* The queue of compute family `family` (which has `num` queues in the
 * device context) that stream `lane` hands frames over on: the next of the
 * compute queues the process claimed, else the num-1-lane % num th. */
uint32_t vkcu_vkdev_compute_queue(int cuda_device, int lane, uint32_t family, uint32_t num);

/* The set-up times of the shared device; -1 when it is not made. */
int vkcu_vkdev_times_get(int cuda_device, vkcu_vkdev_times *t);

/* The shared device's set-up steps as "name=start-end" pairs in
 * milliseconds from `t0` (a vkcu_now() stamp: the job's start), space
 * separated, into buf; empty when the device was not made. */
void vkcu_vkdev_timeline(int cuda_device, double t0, char *buf, size_t len);

/* A Vulkan AVHWDeviceContext that can run FFmpeg's Vulkan Video encoder for
 * `encode_op` (VK_VIDEO_CODEC_OPERATION_ENCODE_H264/H265_BIT_KHR):
 * - cuda_device >= 0: on the GPU of that CUDA device (UUID-matched): the
 *   shared device itself when it was made with an encode queue (see
 *   vkcu_vkdev_expect), else one device made on the same physical device
 *   with a compute and an encode queue (kept for the process);
 * - cuda_device < 0 (no CUDA: the CPU backend): the first device of the
 *   process's Vulkan instance with such a queue (kept for the process).
 * VKCU_ERR_DEVICE with a one-line reason naming the device(s) seen when
 * there is none. Release with av_buffer_unref. Thread-safe. */
int vkcu_vkdev_acquire_encode(int cuda_device, uint32_t encode_op, AVBufferRef **out, char *err, size_t errlen);

/* The shared device for compute encoder instance `instance` (0, 1, ...) of
 * FFmpeg's compute encoders (ffv1_vulkan, prores_ks_vulkan; the caller
 * checks the features, vkshader.h): instance 0 gets the shared device
 * itself, the VkDevice the GPU session decodes and hands frames on (FFmpeg
 * submits on its compute queue 0); each other instance a context whose
 * compute queues all map to one queue of its own, the next of those the
 * process claimed beside queue 0 and the handoff's (so instances run side
 * by side, not one after another on one queue: FFmpeg's barriers order a
 * whole queue). *queue: that queue (0: the shared device's own, when it
 * has no other). VKCU_ENCODE_HOST_IMPORT=0 (a measurement) gives every
 * instance a context without VK_EXT_external_memory_host. Release with
 * av_buffer_unref. Thread-safe. */
int vkcu_vkdev_acquire_compute_lane(int cuda_device, int instance, AVBufferRef **out, int *queue, char *err,
                                    size_t errlen);

/* VKCU_ENCODE_TRACE=FILE (a measurement, issue 36): appends the time and
 * the printf-formatted line to FILE; nothing without it. Thread-safe. */
void vkcu_vkdev_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
