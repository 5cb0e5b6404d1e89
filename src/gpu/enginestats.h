/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Engine busy time: with VKCU_ENGINE_STATS=1, every submission on the
 * process's decode and compute queues is timed on the GPU (a timestamp
 * before and after it, in the same vkQueueSubmit2), so that each queue's
 * busy time can be read against wall time: "the engines are full" against
 * "the engines wait for us" (issue 27.2; docs/performance.md). Off, nothing
 * of it runs: the trampolines of gpu/vkdev_acquire.c hand out the driver's own
 * functions.
 */
#ifndef VKCU_GPU_ENGINESTATS_H
#define VKCU_GPU_ENGINESTATS_H

#include <stddef.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

/* 1 when VKCU_ENGINE_STATS=1 (read once). Thread-safe. */
int vkcu_engine_stats_on(void);

/* For vkdev_acquire.c's get_proc_addr trampolines, when on: our wrapper for
 * vkQueueSubmit2(KHR), else NULL (hand out the driver's). */
PFN_vkVoidFunction vkcu_engine_stats_hook(const char *name);

/* A device whose queues may be timed: its decode and compute families
 * (UINT32_MAX: none). gipa is the loader's own vkGetInstanceProcAddr. */
void vkcu_engine_stats_device(VkInstance inst, VkPhysicalDevice pd, VkDevice dev, PFN_vkGetInstanceProcAddr gipa,
                              uint32_t decode_family, uint32_t compute_family);
/* A queue handed out by vkGetDeviceQueue (family, index on the device). */
void vkcu_engine_stats_queue(VkDevice dev, uint32_t family, uint32_t index, VkQueue queue);
/* Before a registered device is destroyed: waits for its timed submissions
 * and destroys what the timing made on it (the figures stay). */
void vkcu_engine_stats_forget(VkDevice dev);
/* Time a thread waited for a queue's lock (lock_queue), in seconds. */
void vkcu_engine_stats_lock_wait(double seconds);

/* One queue's figures since the last reset. */
typedef struct vkcu_engine_queue {
    int decode;              /* 1: decode family; 0: compute */
    uint32_t family, index;
    int timestamps;          /* 0: the family has no timestamps (busy unknown) */
    int64_t submissions;     /* timed submissions */
    double busy_s;           /* GPU time from each submission's start to its end, overlaps counted once */
    double gpu_first_s, gpu_last_s; /* GPU clock of the first start and the last end */
    int64_t idle_at_submit;  /* submissions that found everything earlier on the queue done */
} vkcu_engine_queue;

#define VKCU_ENGINE_MAX_QUEUES 48

typedef struct vkcu_engine_stats {
    double window_s;         /* host time since the reset (or the first timed submission) */
    int nb;
    vkcu_engine_queue q[VKCU_ENGINE_MAX_QUEUES];
    double lock_wait_s;      /* all threads' waits for queue locks */
} vkcu_engine_stats;

/* Waits (at most a second each) for the timed submissions still on the
 * GPU, then fills s (reset: and starts counting again from zero now). */
void vkcu_engine_stats_get(vkcu_engine_stats *s);
void vkcu_engine_stats_reset(void);

/* The figures as lines "engine: ..." (key=value fields), one per queue
 * and a summary, into buf; empty when off. tools/engine-profile.sh reads
 * them. */
void vkcu_engine_stats_text(const vkcu_engine_stats *s, char *buf, size_t len);

#endif
