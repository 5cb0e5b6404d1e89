/*
 * The process-wide Vulkan device per GPU, shared by every stream, and the
 * per-stream device contexts that spread decoders over the decode queues.
 */
#ifndef VKCU_GPU_DEVICE_H
#define VKCU_GPU_DEVICE_H

#include <stddef.h>
#include <libavutil/buffer.h>

/* A Vulkan AVHWDeviceContext for one stream on CUDA device `cuda_device`
 * (the Vulkan device with the same UUID, created on first use and kept for
 * the process). *lane says which decode queues the stream's decoder uses.
 * Release with av_buffer_unref. Thread-safe. */
int vkcu_vkdev_acquire(int cuda_device, AVBufferRef **out, int *lane, char *err, size_t errlen);

#endif
