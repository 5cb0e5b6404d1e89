/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The GPU session's own header, shared by the files that implement gpu.h:
 *   session.c   open, bind (CUDA side at the first frame), close
 *   import.c    one exportable Vulkan image or semaphore imported into CUDA
 *   ring.c      the input ring: slots of interop planes, software upload
 *   record.c    the per-frame interop protocol: the Vulkan copy's command
 *               buffer and submission, CUDA's wait on `ready`, its `done`
 *   bind.c      the CUDA side, on the job's thread (stream, events)
 *   handoff.c   the handoff thread and its input queue (push)
 *   chainrun.c  the chain on the CUDA stream, each output to the way out
 *   pending.c   the pending frames between the handoff thread and pop()
 *   exit.c      the way out, chosen per format among exit_*.c (exit.h),
 *               and pop()
 *   stats.c     --stats counters and timings
 * One struct, one lock: every file sees the whole session. Nothing outside
 * src/gpu/ includes this header.
 */
#ifndef VKCU_GPU_SESSION_PRIV_H
#define VKCU_GPU_SESSION_PRIV_H

#include <pthread.h>
#include <stdio.h>
#include <cuda_runtime_api.h>
#include <libavutil/frame.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>

#include "gpu.h"
#include "vkdev.h"
#include "check.h"
#include "outring_cuda.h"
#include "outring_vk.h"
#include "vkfn.h"
#include "ops/op.h"
#include "util/log.h"
#include "util/queue.h"

#define MAX_SLOTS VKCU_GPU_MAX_SLOTS
#define MAX_PENDING 64

typedef struct interop_plane {
    VkImage image;
    VkDeviceMemory memory;
    VkDeviceSize size;
    cudaExternalMemory_t ext;
    cudaMipmappedArray_t mipmap;
    cudaArray_t array;
    cudaTextureObject_t tex;
    cudaSurfaceObject_t surf;
    int width, height;
} interop_plane;

typedef struct frame_slot {
    interop_plane plane[4];
    int nb_planes;
    VkSemaphore ready, done;            /* binary: Vulkan -> CUDA, CUDA -> Vulkan */
    cudaExternalSemaphore_t cu_ready, cu_done;
    VkCommandBuffer cmd;
    VkFence fence;
    int submitted;                      /* fence pending */
    int used;                           /* a CUDA `done` signal is pending */
} frame_slot;

typedef struct pending_frame {
    AVBufferRef *host;                  /* the frame's buffer (the way out's: pinned, read back, or on the device) */
    cudaEvent_t ev_start, ev_ops, ev_end;
    int slot;                           /* -1: flushed from the chain */
    int64_t pts, duration;
    int flags, repeat_pict;             /* the interlace (and concealed) flags of the chain's output frame */
    enum AVPixelFormat host_fmt;        /* the frame's host layout: the session's when it was downloaded */
    int width, height;
    int vk_timed;
    int ticket;                         /* the output ring's readback (-1: a CUDA copy) */
    AVFrame *vkframe;                   /* zero-copy encode: the encoder's frame (else NULL) */
} pending_frame;

struct vkcu_gpu {
    vkcu_gpu_config cfg;   /* the job's settings, copied at open */
    int cuda_device;
    int64_t memory;           /* the device's total memory, bytes */
    int lane;                           /* decode queue lane (gpu/vkdev_lanes.c) */
    vkcu_vkdev_times setup;             /* how the shared device was made */
    double setup_open_ms;               /* vkcu_gpu_open on the job's thread */
    int bound, bind_ret;                /* vkcu_gpu_bind ran; its result */
    char bind_err[512];
    cudaStream_t stream;
    AVBufferRef *vk_device;
    AVHWDeviceContext *dev;
    AVVulkanDeviceContext *hwctx;
    vkcu_vkfn vk;
    uint32_t qf, queue_index;
    VkQueue queue;
    VkCommandPool pool;
    VkQueryPool timestamps;
    float ts_period;
    int ts_valid;
    /* ring */
    int nb_slots;
    frame_slot slot[MAX_SLOTS];
    int ring_ready;
    int rebuild;                        /* vkcu_gpu_chain_reinit: the next frame makes the rings again (lock) */
    int64_t rebuilds;                   /* times the rings were made again for a new format */
    enum AVPixelFormat ring_fmt;        /* sw format of the frames in the ring */
    int ring_w, ring_h;
    int64_t frame_no;
    /* timeline variant */
    VkSemaphore timeline;
    cudaExternalSemaphore_t cu_timeline;
    uint64_t tl_frames;                 /* frames handed over on the timeline */
    /* The chain's output in the planar host layout (exit.c): what the ways
     * out write, and the frames pop() hands over are laid out as. */
    enum AVPixelFormat host_fmt;
    int host_linesize[4];
    size_t host_offset[4], host_size;
    /* The way out (exit.h), chosen at the first frame of each format. */
    const struct vkcu_gpu_exit_class *exit;
    void *exit_priv;
    /* Zero-copy encode (vkcu_gpu_encode_into): the encoder's frames context,
     * offered to the encode exit (which drops it for frames that do not fit). */
    AVBufferRef *enc_frames;
    vkcu_chain *chain;
    pending_frame pending[MAX_PENDING];
    int64_t pend_head, pend_tail;       /* pop side (caller), push side (handoff thread) */
    /* The handoff thread: Vulkan submissions and CUDA launches run beside
     * the decoder's thread, which only queues decoded frames. */
    pthread_t worker;
    int worker_running, quit, sync_ready;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    vkcu_queue *inq;                    /* handoff_item: decoded frames for the thread */
    int werr;
    char werrmsg[512];
    cudaEvent_t events[MAX_PENDING][3];
    /* stats */
    int64_t imports, dtod, htod_bytes, dtoh_bytes;
    int max_in_flight;
    double ms_copy, ms_ops, ms_download;
};

/* VK_CHECK and CU_CHECK: check.h */

/* bind.c */
/* The CUDA side on the calling thread (idempotent; the first result sticks). */
int vkcu_gpu_bind(vkcu_gpu *g, char *err, size_t errlen);

/* import.c: a successful import hands the FD to CUDA; a failed one closes it. */
int vkcu_gpu_import_plane(vkcu_gpu *g, interop_plane *pl, VkFormat format, int w, int h, int bytes, int comps,
                          char *err, size_t errlen);
int vkcu_gpu_import_semaphore(vkcu_gpu *g, VkSemaphore *sem, cudaExternalSemaphore_t *cu, int timeline,
                              char *err, size_t errlen);
/* Teardown in two halves: every CUDA object first, then the Vulkan ones. */
void vkcu_gpu_plane_free_cuda(interop_plane *pl);
void vkcu_gpu_plane_free_vk(vkcu_gpu *g, interop_plane *pl);

/* ring.c */
/* The input ring for frames of this software format and visible size. */
int vkcu_gpu_ring_create(vkcu_gpu *g, enum AVPixelFormat sw, int w, int h, char *err, size_t errlen);
/* The chain's view of slot `sl` holding `src` (timestamps, flags, colour). */
void vkcu_gpu_slot_frame(const vkcu_gpu *g, const frame_slot *sl, vkcu_gpu_frame *f, const AVFrame *src);
/* Software fallback: one upload of each plane into slot s's arrays. */
int vkcu_gpu_ring_upload(vkcu_gpu *g, int s, const AVFrame *frame, char *err, size_t errlen);
void vkcu_gpu_ring_free_cuda(vkcu_gpu *g);
void vkcu_gpu_ring_free_vk(vkcu_gpu *g);
/* A format change: the ring's CUDA side, then its Vulkan objects (command
 * buffers included), every slot cleared for vkcu_gpu_ring_create. The GPU
 * must be idle: no Vulkan copy or CUDA work on the slots in flight. */
void vkcu_gpu_ring_release(vkcu_gpu *g);

/* record.c */
/* Records and submits the Vulkan copy of a decoded frame into slot s. */
int vkcu_gpu_record_copy(vkcu_gpu *g, int s, AVFrame *frame, char *err, size_t errlen);
/* CUDA's side of the protocol: wait for slot s's copy; release slot s. */
int vkcu_gpu_wait_ready(vkcu_gpu *g, int s, char *err, size_t errlen);
int vkcu_gpu_signal_done(vkcu_gpu *g, int s, char *err, size_t errlen);

/* handoff.c */
int vkcu_gpu_handoff_start(vkcu_gpu *g, char *err, size_t errlen);
/* Stops the thread; queued frames are released unprocessed. */
void vkcu_gpu_handoff_stop(vkcu_gpu *g);

/* pending.c */
/* Frames queued for, being handled by, or finished by the handoff thread (lock held). */
int vkcu_gpu_in_flight(const vkcu_gpu *g);
/* Waits for a free pending entry (AVERROR_EXIT when the session closes). */
int vkcu_gpu_reserve_pending(vkcu_gpu *g, char *err, size_t errlen);
/* The entry the next output takes, its events assigned (after the reserve). */
pending_frame *vkcu_gpu_pending_next(vkcu_gpu *g);
/* The entry at the tail is filled: pop() may take it. */
void vkcu_gpu_pending_publish(vkcu_gpu *g);
/* The entry at the head, waiting for one if `wait` (EAGAIN when there is
 * none to wait for; the handoff thread's error). */
int vkcu_gpu_pending_wait(vkcu_gpu *g, int wait, pending_frame **out, char *err, size_t errlen);
/* The entry at the head is handed over. */
void vkcu_gpu_pending_done(vkcu_gpu *g);

/* chainrun.c */
/* Checks every operator has a GPU side and sets it up (first frame). */
int vkcu_gpu_chain_init(vkcu_gpu *g, char *err, size_t errlen);
/* Runs `in` (NULL: flush) through the chain; slot: in's ring slot, -1 when flushing. */
int vkcu_gpu_chain_run(vkcu_gpu *g, int slot, vkcu_gpu_frame *in, char *err, size_t errlen);

/* exit.c */
/* The host layout of the chain's output and the way out for it (first
 * frame, after the ring). */
int vkcu_gpu_exit_open(vkcu_gpu *g, char *err, size_t errlen);
/* One output of the chain through the way out, published to pop(). slot:
 * the input's ring slot (-1: flushed). */
int vkcu_gpu_exit_frame(vkcu_gpu *g, int slot, const vkcu_gpu_frame *out, char *err, size_t errlen);
/* What the way out made for the current format, freed for a format change
 * (CUDA's imports before the Vulkan objects; the encoder's frames context
 * stays). Nothing may be pending (every frame popped). */
void vkcu_gpu_exit_release(vkcu_gpu *g);
/* The session's end: the above, the pending entries, the encoder's frames. */
void vkcu_gpu_exit_free(vkcu_gpu *g);
/* What the way out adds to the ring's -v line. */
const char *vkcu_gpu_exit_note(const vkcu_gpu *g);

/* devframes.c: a bounded pool of device buffers of one size. */
typedef struct vkcu_devpool vkcu_devpool;
/* count buffers of `size` bytes on CUDA device `device`, made as they are
 * first needed; their reuse is ordered on `stream` (the session's). */
int vkcu_devpool_create(int device, cudaStream_t stream, size_t size, int count, vkcu_devpool **out, char *err,
                        size_t errlen);
/* A free buffer, or NULL when none is back within timeout_ms (or CUDA
 * cannot allocate one: then *failed is set). Work queued on the pool's
 * stream after the call runs after every consumer's use of the buffer. */
AVBufferRef *vkcu_devpool_get(vkcu_devpool *p, int timeout_ms, int *failed);
/* Marks a frame whose buf[0] came from vkcu_devpool_get (before it leaves). */
int vkcu_devpool_mark(vkcu_devpool *p, AVFrame *frame);
/* The session's end: later waits no longer touch its stream; buffers that
 * come back are freed, and the pool with the last of them. *p is cleared. */
void vkcu_devpool_close(vkcu_devpool **p);

/* stats.c */
/* Adds a popped frame's GPU timings to the --stats totals. */
void vkcu_gpu_stats_frame(vkcu_gpu *g, const pending_frame *pf);

#endif
