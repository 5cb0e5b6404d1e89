/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The output ring's CUDA side: each slot of a vkcu_outring (outring_vk.h)
 * imported once into CUDA (its memory as linear device memory, its
 * filled/drained semaphores), and the two calls around the kernel that
 * writes a frame into a slot. The slot protocol on CUDA's stream:
 *   begin: wait `drained` (from the slot's second use on), then the
 *          caller's kernel writes the frame at the slot's pointer;
 *   end:   signal `filled`. The Vulkan consumer is submitted after this
 *          call returns (a binary wait only after its signal).
 */
#ifndef VKCU_GPU_OUTRING_CUDA_H
#define VKCU_GPU_OUTRING_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#include "outring_vk.h"

typedef struct vkcu_outring_cuda_slot {
    cudaExternalMemory_t memory;
    uint8_t *ptr;                       /* the slot's buffer in CUDA's address space */
    cudaExternalSemaphore_t filled, drained;
    int used;                           /* a `drained` signal is pending */
} vkcu_outring_cuda_slot;

typedef struct vkcu_outring_cuda {
    vkcu_outring *ring;                 /* not owned */
    int nb_slots;
    vkcu_outring_cuda_slot slot[VKCU_OUTRING_MAX_SLOTS];
    int64_t imports;                    /* successful CUDA imports (memory and semaphores) */
    int64_t frames;                     /* frames begun: slot = frames % nb_slots */
} vkcu_outring_cuda;

/* Imports every slot of `ring` (the current CUDA device). On failure, what
 * was imported stays recorded for vkcu_outring_cuda_release. Returns 0 or
 * VKCU_ERR_DEVICE with err filled. */
int vkcu_outring_cuda_import(vkcu_outring_cuda *oc, vkcu_outring *ring, size_t frame_size, char *err, size_t errlen);
/* The next slot for a frame: *slot and its device pointer *dst, with the
 * wait on its `drained` queued on `stream` when the slot was used. */
int vkcu_outring_cuda_begin(vkcu_outring_cuda *oc, cudaStream_t stream, int *slot, uint8_t **dst, char *err,
                            size_t errlen);
/* Queues the slot's `filled` signal on `stream`. */
int vkcu_outring_cuda_end(vkcu_outring_cuda *oc, int slot, cudaStream_t stream, char *err, size_t errlen);
/* Frees CUDA's imports (before vkcu_outring_free). Accepts a zeroed struct. */
void vkcu_outring_cuda_release(vkcu_outring_cuda *oc);

#endif
