/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The ways out of the GPU session: where a frame leaving the chain goes.
 * One class each, in the shape of vkcu_sink_class (core/sink.h), one file
 * each; exit.c chooses one at the first frame (and again after a format
 * change: the frames' layout is known only then), trying them in the order
 * of this list, and runs the steps they share (the pending entry and its
 * events, publishing it to pop(), the frame's timestamps and flags):
 *   exit_digest.c    BLAKE3 of each frame on the GPU, 32 bytes to the host
 *                    (cfg.digest_instead says yes for the frames' layout)
 *   exit_none.c      nothing: the frames end on the GPU (the null sink)
 *   exit_encode.c    the output ring in the layout of a Vulkan encoder's
 *                    images, each frame copied into one of them on the GPU
 *                    (vkcu_gpu_encode_into; declines frames that do not fit)
 *   exit_devpool.c   a buffer of the session's device pool, handed over
 *                    itself: the frame stays in device memory (cfg.cuda_pool)
 *   exit_readback.c  the output ring, read back by Vulkan into host memory
 *                    (cfg.vulkan_download)
 *   exit_host.c      a device staging buffer per ring slot, copied by CUDA
 *                    into a pinned host buffer (everything else)
 * A new way out (GPU metrics, several encoder instances) is one more file
 * and one more line in exit.c's list.
 */
#ifndef VKCU_GPU_EXIT_H
#define VKCU_GPU_EXIT_H

#include "kernels/frame_kernels.h"
#include "session_priv.h"

typedef struct vkcu_gpu_exit_class {
    const char *name;
    const char *note;       /* appended to the ring's -v line at set-up ("" for most) */
    size_t priv_size;       /* its state, zeroed at each open (g->exit_priv) */
    int row_align;          /* what it needs of the host layout: the row pitch (64 for the host's consumers, 1: rows packed) */
    int frame_flags;        /* frame flags that are its own: its frames carry the chain's value of them */
    /* Whether it serves this session, given the layout the frames would
     * have on the host (planar: vkcu_gpu_host_format), before the layout
     * is fixed. NULL: always. */
    int (*wants)(const vkcu_gpu *g, enum AVPixelFormat host_fmt);
    /* Set-up for the chain's output (dev_out, w x h; the host layout is in
     * g->host_*): 0, 1 (declined for these frames: the next is tried), or
     * an error. On an error, close is called. */
    int (*open)(vkcu_gpu *g, void *priv, enum AVPixelFormat dev_out, int w, int h, char *err, size_t errlen);
    /* One output of the chain: its kernels on g->stream (the ops event is
     * recorded after them). slot: the input's ring slot, -1 when flushed. */
    int (*write)(vkcu_gpu *g, void *priv, int slot, const vkcu_gpu_frame *out, pending_frame *pf, char *err,
                 size_t errlen);
    /* After write: what takes the frame off the GPU (the end event is
     * recorded after it). NULL: nothing. */
    int (*send)(vkcu_gpu *g, void *priv, int slot, pending_frame *pf, char *err, size_t errlen);
    /* pop(), once the end event has passed: a wait of its own before the
     * frame is handed over. NULL: none. */
    int (*wait)(vkcu_gpu *g, void *priv, pending_frame *pf, int wait, char *err, size_t errlen);
    /* pop(): what it adds to the frame handed over (side data, a mark).
     * NULL: nothing. */
    int (*give)(vkcu_gpu *g, void *priv, const pending_frame *pf, AVFrame *out, char *err, size_t errlen);
    /* Frees what open made (a format change, the session's end; nothing is
     * pending): CUDA's side before the Vulkan objects it maps. */
    void (*close)(vkcu_gpu *g, void *priv);
    /* --stats: the Vulkan readbacks so far. NULL: none. */
    int64_t (*readbacks)(const vkcu_gpu *g, const void *priv);
} vkcu_gpu_exit_class;

extern const vkcu_gpu_exit_class vkcu_gpu_exit_digest, vkcu_gpu_exit_none, vkcu_gpu_exit_encode,
    vkcu_gpu_exit_devpool, vkcu_gpu_exit_readback, vkcu_gpu_exit_host;

/* The chain's output f written into the session's planar host layout
 * (g->host_*) at dst, on g->stream: a CUDA error, 0 on success. */
static inline int vkcu_gpu_exit_planar(vkcu_gpu *g, const vkcu_gpu_frame *f, uint8_t *dst)
{
    return vkcu_cuda_to_planar(f, g->host_fmt, dst, g->host_offset, g->host_linesize, g->stream);
}

/* A CUDA error of a kernel of the exit, in the words of the download. */
static inline int vkcu_gpu_exit_kernel_failed(int e, char *err, size_t errlen)
{
    snprintf(err, errlen, "CUDA: download kernel failed: %s", cudaGetErrorString((cudaError_t)e));
    return VKCU_ERR_DEVICE;
}

/* The output ring of slots of `size` bytes on the session's queue, imported
 * into CUDA (outring_vk.h, outring_cuda.h): the encode and readback exits'. */
static inline int vkcu_gpu_exit_outring(vkcu_gpu *g, size_t size, vkcu_outring **ring, vkcu_outring_cuda *cu, char *err,
                                        size_t errlen)
{
    vkcu_outring_params rp = { .vk_device = g->vk_device, .vk = &g->vk, .queue_family = g->qf,
                               .queue_index = g->queue_index, .nb_slots = g->nb_slots, .frame_size = size,
                               .export_semaphores = 1 };
    int ret = vkcu_outring_create(&rp, ring, err, errlen);
    if (ret == 0)
        ret = vkcu_outring_cuda_import(cu, *ring, size, err, errlen);
    g->imports += cu->imports;
    return ret;
}

#endif
