/*
 * The process-wide Vulkan device per GPU, shared by every stream, and the
 * per-stream device contexts that spread decoders over the decode queues.
 */
#ifndef VKCU_GPU_DEVICE_H
#define VKCU_GPU_DEVICE_H

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
    uint32_t nb_decode, nb_compute; /* queues created (own device) */
} vkcu_vkdev_times;

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
 * the process). *lane says which decode queues the stream's decoder uses.
 * Release with av_buffer_unref. Thread-safe. */
int vkcu_vkdev_acquire(int cuda_device, AVBufferRef **out, int *lane, char *err, size_t errlen);

/* The set-up times of the shared device; -1 when it is not made. */
int vkcu_vkdev_times_get(int cuda_device, vkcu_vkdev_times *t);

#endif
