/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the vkdev_*.c files share about the shared devices (vkdev.h): the
 * registry's slots and its lock, and each file's calls into the others.
 */
#ifndef VKCU_GPU_VKDEV_PRIV_H
#define VKCU_GPU_VKDEV_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <libavutil/buffer.h>
#include <libavutil/hwcontext_vulkan.h>
#include <vkcu/common.h>

#include "qclaim.h"
#include "vk.h"
#include "vkdev.h"
#include "vkinstance.h"

#define MAX_DEVICES 16
#define MAX_LANES 32      /* trampoline sets: lanes of every GPU together (decode and compute) */
#define MAX_LANE_QUEUES 16 /* decode queues a process uses on one GPU */

enum { ROLE_DECODE, ROLE_COMPUTE, NB_ROLES };

/* The queues of one role a process uses on one GPU: those it claimed
 * (distinct, in the order taken), or 0, 1, ... without claims. */
typedef struct queue_choice {
    vkcu_qclaim *claim;             /* NULL: no claims held */
    uint32_t family, have;          /* the family and how many queues the GPU has in it */
    uint32_t queue[MAX_LANE_QUEUES];
    uint32_t nb;
} queue_choice;

enum { SD_FREE, SD_OPENING, SD_READY, SD_FAILED };

typedef struct shared_device {
    int state;                     /* SD_*; the fields below are the opener's until it leaves SD_OPENING */
    int cuda_device;
    AVBufferRef *master;           /* owns the VkDevice (ours or FFmpeg's) */
    uint32_t decode_qf, nb_decode; /* decode family and its queue count */
    queue_choice choice[NB_ROLES]; /* the queues this process took on this GPU */
    unsigned next_lane;
    pthread_t opener;              /* the thread vkcu_vkdev_prepare started */
    int opener_joinable;
    pthread_t cuda_thread;         /* CUDA's start and context (vkcu_vkdev_open) */
    int cuda_joinable;
    struct cuda_probe *probe;      /* what that thread fills; freed once it is joined */
    int open_ret;
    char open_err[512];
    vkcu_vkdev_times times;
    uint8_t uuid[16];              /* the GPU's (CUDA's and Vulkan's) */
    AVBufferRef *encoder;          /* a device made for encoding when the shared one has no encode queue */
    uint32_t encoder_op;
} shared_device;

struct cuda_probe {
    int device;
    int ret;                /* 0, or VKCU_ERR_DEVICE with err */
    char err[256];
    uint8_t uuid[16];
    char name[256];
    double ms, context_ms;
    double t_start, t_uuid, t_context; /* vkcu_now() stamps */
    atomic_int done;        /* the UUID (or the error) is known */
    atomic_int context_done;
    pthread_mutex_t lock;
    pthread_cond_t cond;
};
typedef struct cuda_probe cuda_probe;

/* A decode lane's map (vkdev_lanes.c): FFmpeg's decode queue index i goes
 * to queue[i % nb] of family qf. */
struct lane_map {
    uint32_t qf, nb;
    uint32_t queue[MAX_LANE_QUEUES];
};

/* A stream's context's user_opaque: the shared device it wraps, its lane. */
typedef struct lane_ctx {
    AVBufferRef *master;
    int lane;
    const char **exts;      /* the device's extensions less some (VKCU_LANE_EXPORT=0, VKCU_ENCODE_HOST_IMPORT=0), or NULL */
} lane_ctx;

/* The registry's lock (defined in vkdev_lanes.c): it guards vkdev.c's
 * slots and the lanes' maps. */
extern pthread_mutex_t vkcu_vkdev_registry_lock;

/* vkdev.c: the registry. */
/* Registry locked: the slot of that CUDA device in any state, or NULL. */
shared_device *vkcu_vkdev_find(int cuda_device);
/* Registry locked: the ready shared device of the CUDA device, opened here
 * when nobody prepared it, waited for while another thread opens it. */
int vkcu_vkdev_ready(int cuda_device, shared_device **out, char *err, size_t errlen);

/* vkdev_open.c: makes sd's device (registry unlocked). */
int vkcu_vkdev_open(shared_device *sd, int cuda_device, char *err, size_t errlen);

/* vkdev_cuda.c: the CUDA thread's body (arg: a cuda_probe), and the wait
 * for its UUID (or its error). */
void *vkcu_vkdev_cuda_main(void *arg);
void vkcu_vkdev_cuda_wait(cuda_probe *c);

/* vkdev_claims.c: what our device is planned with (the streams and encode
 * operation expected, the env knobs), the queues taken in it, or in
 * FFmpeg's device, and their release. */
void vkcu_vkdev_plan_want(vkcu_vk_plan_want *want);
void vkcu_vkdev_choose_in_plan(queue_choice qc[NB_ROLES], const uint8_t uuid[16], const vkcu_vk_caps *caps,
                               vkcu_vk_plan *plan);
void vkcu_vkdev_choose_in_device(queue_choice qc[NB_ROLES], const AVVulkanDeviceContext *hw, const uint8_t uuid[16]);
void vkcu_vkdev_release_choice(queue_choice qc[NB_ROLES]);

/* vkdev_lanes.c: takes the driver's entry points the lanes call from the
 * first device made (registry unlocked); returns whether VKCU_ENGINE_STATS
 * is on. */
int vkcu_vkdev_lanes_init(const AVVulkanDeviceContext *hw);
/* The driver's vkGetDeviceQueue (NULL before the first device is made), each
 * lane's vkGetInstanceProcAddr, and the lock_queue/unlock_queue/free of a
 * stream's context (user_opaque: its lane_ctx). */
extern PFN_vkGetDeviceQueue vkcu_vkdev_real_gdq;
extern const PFN_vkGetInstanceProcAddr vkcu_vkdev_lane_gipa[MAX_LANES];
void vkcu_vkdev_lane_lock(AVHWDeviceContext *ctx, uint32_t qf, uint32_t index);
void vkcu_vkdev_lane_unlock(AVHWDeviceContext *ctx, uint32_t qf, uint32_t index);
void vkcu_vkdev_lane_free(AVHWDeviceContext *ctx);
/* Registry locked: the lane whose map is *want (see there). */
int vkcu_vkdev_find_lane(const struct lane_map *want);

/* vkdev_probe.c: a measurement's entry point in place of the driver's
 * `name` (VKCU_ENCODE_VIEWS, VKCU_ENCODE_GPU_SERIAL), or NULL. */
PFN_vkVoidFunction vkcu_vkdev_probe_hook(VkDevice dev, const char *name, PFN_vkGetDeviceProcAddr gdpa);

#endif
