/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Vulkan side of the output ring (CUDA -> Vulkan), free of CUDA so that
 * it runs on any Vulkan device (CI uses lavapipe).
 *
 * Slot s holds one output frame of the chain (vkcu_outring_layout), in the
 * planar host layout the GPU download writes (vkcu_cuda_to_planar: the
 * readback, and FFmpeg's compute encoders), or for a Vulkan Video encoder
 * in its semi-planar layout (vkcu_cuda_to_semiplanar): an exportable device-local
 * buffer on dedicated memory, which CUDA imports once as linear memory, and
 * two binary semaphores, exportable as opaque FDs and imported once:
 *   filled   CUDA signals it when the frame is in the slot; the Vulkan
 *            consumer's submission waits on it;
 *   drained  the consumer's submission signals it; CUDA waits on it before
 *            writing the slot again (not on the slot's first use).
 * The buffer is owned by VK_QUEUE_FAMILY_EXTERNAL between uses: each
 * consumer submission acquires it from there and releases it back.
 *
 * The readback consumer copies the slot into a host-visible buffer taken
 * from the ring's pool (one vkCmdCopyBuffer) and returns that buffer as an
 * AVBufferRef: the host frame for software encoders and hash sinks. Each
 * submission has a ticket (a command buffer and a fence, reused round
 * robin); vkcu_outring_wait blocks on the ticket's fence only.
 *
 * Thread-safety: one thread submits per ring; another may wait on a
 * ticket, up to VKCU_OUTRING_TICKETS - 1 submissions back (the submitter
 * reuses a ticket VKCU_OUTRING_TICKETS submissions later). Host buffers may
 * be released on any thread, also after vkcu_outring_free (each keeps the
 * Vulkan device alive).
 */
#ifndef VKCU_GPU_OUTRING_VK_H
#define VKCU_GPU_OUTRING_VK_H

#include <stddef.h>
#include <stdint.h>
#include <libavutil/buffer.h>
#include <libavutil/frame.h>

#include "vkfn.h"

#define VKCU_OUTRING_MAX_SLOTS 16
#define VKCU_OUTRING_TICKETS 64

typedef struct vkcu_outring_params {
    AVBufferRef *vk_device;          /* Vulkan AVHWDeviceContext; the ring keeps a reference */
    const vkcu_vkfn *vk;             /* device-level entry points of that device */
    uint32_t queue_family;           /* submissions go to this queue, locked through the */
    uint32_t queue_index;            /* context's lock_queue (FFmpeg may use it too) */
    int nb_slots;                    /* 1..VKCU_OUTRING_MAX_SLOTS */
    size_t frame_size;               /* bytes of one frame in the slot */
    int export_semaphores;           /* 1: filled/drained exportable as opaque FDs (the CUDA
                                      * handoff); 0: plain, for a signaller on this device */
} vkcu_outring_params;

typedef struct vkcu_outring_slot {
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDeviceSize alloc_size;         /* of the dedicated allocation (what an importer maps) */
    uint32_t memory_type;            /* its memory type (a Vulkan importer must use the same) */
    VkSemaphore filled, drained;
} vkcu_outring_slot;

typedef struct vkcu_outring vkcu_outring;

/* Makes every slot, the command pool and the host buffer pool. Returns 0,
 * or VKCU_ERR_DEVICE with a one-line reason in err. */
int vkcu_outring_create(const vkcu_outring_params *p, vkcu_outring **out, char *err, size_t errlen);
int vkcu_outring_nb_slots(const vkcu_outring *r);
/* The ring's Vulkan device (AVHWDeviceContext), its reference. */
AVBufferRef *vkcu_outring_device(const vkcu_outring *r);
const vkcu_outring_slot *vkcu_outring_slot_get(const vkcu_outring *r, int s);

/* New opaque FDs of slot s's memory and semaphores (semaphores only with
 * export_semaphores). The caller owns them and gives them away on a
 * successful import. */
int vkcu_outring_export_memory(vkcu_outring *r, int s, int *fd, char *err, size_t errlen);
int vkcu_outring_export_semaphores(vkcu_outring *r, int s, int *filled_fd, int *drained_fd, char *err,
                                   size_t errlen);

/* Submits the readback of slot s: waits `filled` (when wait_filled), copies
 * the slot into a host buffer, signals `drained` (when signal_drained).
 * *host receives the buffer (frame_size bytes; read it only after
 * vkcu_outring_wait on *ticket). Binary semaphore rule: the `filled` signal
 * must have been submitted (enqueued on CUDA's stream) before this call. */
int vkcu_outring_readback(vkcu_outring *r, int s, int wait_filled, int signal_drained, AVBufferRef **host,
                          int *ticket, char *err, size_t errlen);
/* Where a frame lies in a slot, plane by plane: plane p of `format` (FFmpeg's
 * plane order) at offset[p], its rows pitch[p] bytes apart, the planes one
 * after another. A pitch is a multiple of 64 bytes and of the plane's texel
 * (its bytes per pixel: the copy's row length counts texels). The layouts:
 * - planar (yuv420p, yuv422p10, yuv444p16, yuva444p10 ...): what the GPU
 *   download writes (vkcu_cuda_to_planar, the host layout of FFmpeg's
 *   planar formats, values in the low bits), read by the readback and by
 *   the compute encoders (ffv1_vulkan, prores_ks_vulkan) whose images hold
 *   those same bytes;
 * - semi-planar NV12 / P010 (vkcu_cuda_to_semiplanar): luma, then the
 *   interleaved CbCr rows, P010's 10-bit value in the high bits, for the
 *   Vulkan Video encoders;
 * - packed (rgba64 ...): one plane. */
typedef struct vkcu_slot_layout {
    int format;                /* enum AVPixelFormat */
    int width, height;
    int nb_planes;
    size_t offset[4];
    int pitch[4];
    int texel[4];              /* bytes per pixel of plane p */
    int plane_w[4], plane_h[4]; /* plane p in pixels */
    size_t size;               /* bytes of the whole frame */
} vkcu_slot_layout;

/* Fills *l for a w x h frame of `format` (a software format of at most four
 * planes). AVERROR(EINVAL) for hardware or bitstream formats and sizes
 * outside 1..32768. */
int vkcu_outring_layout(int format, int w, int h, vkcu_slot_layout *l);

/* The encode consumer's submission (zero-copy encode, every Vulkan
 * encoder: h264_vulkan / hevc_vulkan on a video encode queue, ffv1_vulkan /
 * prores_ks_vulkan on a compute queue): copies slot s, holding a frame laid
 * out as *l, into `dst`, a frame of a Vulkan frames context on the ring's
 * device whose sw_format and size are l's (an encoder's own frames: for the
 * video encoders images with the usage the encode profile asks for,
 * vkcu_outring_encode_format; for the compute encoders FFmpeg's default
 * usage, which has STORAGE). One vkCmdCopyBufferToImage per plane, into
 * the plane's image (one image per plane) or the plane's aspect (one
 * multi-planar image). FFmpeg's AVVkFrame contract: lock_frame around the
 * use; the submission waits each image's timeline at sem_value and signals
 * sem_value + 1; the new value, layout (`layout`: VIDEO_ENCODE_SRC_KHR for a
 * video encoder, GENERAL for the compute encoders, whose own barrier takes
 * it from there) and access are stored in the frame. Waits `filled`,
 * signals `drained`, as the readback does; *ticket as for the readback.
 * A frame of another format or size is refused before any submission. */
int vkcu_outring_to_frame(vkcu_outring *r, int s, AVFrame *dst, const vkcu_slot_layout *l, VkImageLayout layout,
                          int *ticket, char *err, size_t errlen);
/* The NV12 (depth16 0) / P010 (depth16 1) layout of vkcu_outring_layout as
 * two offsets and pitches (vkcu_cuda_to_semiplanar's arguments). Returns
 * the frame's size. */
size_t vkcu_outring_semiplanar_layout(int depth16, int w, int h, size_t offset[2], int pitch[2]);
/* What the encoder's input images must be on this device, asked of the
 * driver (vkGetPhysicalDeviceVideoFormatPropertiesKHR with the encode
 * profile of `encoder`, h264_vulkan (High) or hevc_vulkan (Main, Main 10),
 * 4:2:0 at `depth` bits, VIDEO_ENCODE_SRC usage): the semi-planar format
 * (NV12 or P010 layout), the usage and create flags the profile asks for
 * (TRANSFER_DST must be among them: the consumer writes with a transfer).
 * VKCU_ERR_DEVICE with the reason where the device cannot encode. */
int vkcu_outring_encode_format(const vkcu_vkfn *vk, AVBufferRef *vk_device, const char *encoder, int depth,
                               VkFormat *format, VkImageUsageFlags *usage, VkImageCreateFlags *flags, char *err,
                               size_t errlen);
/* Waits until the submission of `ticket` completed (its host buffer is
 * filled). timeout_ns 0: a poll, AVERROR(EAGAIN) while it runs.
 * VKCU_ERR_DEVICE on timeout or a lost device. */
int vkcu_outring_wait(vkcu_outring *r, int ticket, uint64_t timeout_ns, char *err, size_t errlen);
/* Submissions made and bytes read back so far. */
int64_t vkcu_outring_readbacks(const vkcu_outring *r);

/* One of FFmpeg's compute encoders this build has, and the shader
 * features the device lacks for it (vkshader.h; "" or NULL: none). */
typedef struct vkcu_outring_compute {
    const char *name;
    const char *missing;
} vkcu_outring_compute;

/* What a device offers the output ring, as one line for `vkcu probe`:
 * the ring itself (external memory and semaphore FDs), then which of
 * FFmpeg's Vulkan encoders can take its frames without the host (zero-copy
 * encode): the compute encoders of this build (none: "not in this build")
 * on a compute queue family where the device has the features they need;
 * the video encoders on a queue family with a video encode queue for H.264
 * or HEVC, with VK_KHR_video_encode_queue and the codec's encode extension.
 * Returns the video encode operations usable (0: none). Pure: no Vulkan
 * calls (qf and exts as vkcu_vk_queue_families and vkcu_vk_device_exts give
 * them). */
VkVideoCodecOperationFlagsKHR vkcu_outring_caps(const vkcu_vk_queue_family *qf, int nqf, const char *const *exts,
                                                int nexts, const vkcu_outring_compute *compute, int nb_compute,
                                                char *line, size_t len);

/* Waits for the ring's submissions, then frees everything but host buffers
 * still referenced. Accepts NULL; clears the pointer. Free CUDA's imports
 * of the slots before calling it. */
void vkcu_outring_free(vkcu_outring **r);

#endif
