/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Vulkan devices shared by every stream of the process, one per CUDA device
 * (matched by UUID, never by ordinal), and the spreading of decoders over
 * the decode queues.
 *
 * FFmpeg's Vulkan decoder (7.1 and 8.1) submits on queue `i % nb_queues` of the decode
 * family for its two execution contexts i = 0, 1, so every decoder lands on
 * decode queues 0 and 1 (docs/performance.md, "Processes spread over the
 * engines"). Each stream therefore gets its own
 * AVHWDeviceContext wrapping the shared VkDevice, with a `lane`: that
 * context's vkGetDeviceQueue and lock_queue map decode queue i to physical
 * queue (i + lane) % nb_queues, so N concurrent decoders spread evenly over
 * the queues (each queue serves two execution contexts). The mapping is done by a get_proc_addr wrapper per lane (the
 * Vulkan entry points carry no user pointer, so each lane has its own
 * trampolines) and by our lock_queue, which locks the physical queue through
 * the shared context, so all users of one queue share one mutex.
 * VKCU_DECODE_QUEUE_SPREAD=0 turns the spreading off (for measurements).
 *
 * Across processes: each process has its own VkDevice, and queue i of the
 * decode family is the same engine in every one of them, so processes that
 * all used queues 0 and 1 shared two engines. Before making the device, a
 * process therefore claims as many decode queues as it runs streams, and
 * its compute queues, on the least-claimed queues of the GPU (gpu/qclaim.c:
 * locks the kernel drops when the process ends), creates queues up to the
 * highest one claimed, and its lanes go round the queues it claimed. Where
 * claims cannot be taken it falls back to queues 0, 1, ... (a -v line).
 * A pinned decode queue (the decode_queue setting) is claimed and used by
 * every decoder of its jobs.
 *
 * The shared device is vkcu's own (gpu/vk.c: decode queues for the
 * streams the process expects, one compute queue, an encode queue when a
 * Vulkan encoder is wanted), made on the process's one Vulkan instance
 * (gpu/vkinstance.c, which probe and Vulkan encode use too), unless
 * VKCU_VULKAN_DEVICE=ffmpeg asks for FFmpeg's device creation, which is
 * also the fallback when ours fails. Set-up runs
 * on two threads beside the job's: CUDA's start and primary context on one,
 * the Vulkan instance and device on the other, so a job that calls
 * vkcu_vkdev_prepare before demuxing waits only for the longest of the three.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cuda_runtime_api.h>
#include <libavcodec/version.h>
#include <libavutil/avutil.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>

#include "vkdev.h"
#include "cuda_absent.h"
#include "enginestats.h"
#include "qclaim.h"
#include "vk.h"
#include "vkfn.h"
#include "vkinstance.h"
#include "util/log.h"
#include "util/thread.h"

#define MAX_DEVICES 16
#define MAX_LANES 16      /* trampoline sets: lanes of every GPU together */
#define MAX_LANE_QUEUES 16 /* decode queues a process uses on one GPU */

enum { ROLE_DECODE, ROLE_COMPUTE, NB_ROLES };
static const char *const role_names[NB_ROLES] = { "decode", "compute" };

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
    pthread_t cuda_thread;         /* CUDA's start and context (open_master) */
    int cuda_joinable;
    struct cuda_probe *probe;      /* what that thread fills; freed once it is joined */
    int open_ret;
    char open_err[512];
    vkcu_vkdev_times times;
    uint8_t uuid[16];              /* the GPU's (CUDA's and Vulkan's) */
    AVBufferRef *encoder;          /* a device made for encoding when the shared one has no encode queue */
    uint32_t encoder_op;
} shared_device;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t registry_cond = PTHREAD_COND_INITIALIZER;
static shared_device devices[MAX_DEVICES];

/* Process-wide: the real entry points (the same loader for every device). */
static PFN_vkGetInstanceProcAddr real_gipa;
static PFN_vkGetDeviceProcAddr real_gdpa;
static PFN_vkGetDeviceQueue real_gdq;
static int engine_stats; /* VKCU_ENGINE_STATS=1 (gpu/enginestats.h), read before the first device is made */

/* What each set of trampolines maps FFmpeg's decode queue index i to:
 * queue[i % nb] of family qf (nb 0: the slot is free). A slot is filled
 * once, under the registry lock, before any context using it exists, and
 * shared by every stream (of any GPU) that wants the same mapping. */
static struct lane_map {
    uint32_t qf, nb;
    uint32_t queue[MAX_LANE_QUEUES];
} lane_maps[MAX_LANES];

static uint32_t remap(int lane, uint32_t qf, uint32_t index)
{
    const struct lane_map *m = &lane_maps[lane];
    if (qf != m->qf || !m->nb)
        return index;
    return m->queue[index % m->nb];
}

#define LANE_FNS(k)                                                                                     \
    static VKAPI_ATTR void VKAPI_CALL gdq_##k(VkDevice d, uint32_t qf, uint32_t i, VkQueue *q)          \
    {                                                                                                   \
        uint32_t phys = remap(k, qf, i);                                                                \
        real_gdq(d, qf, phys, q);                                                                       \
        if (engine_stats)                                                                               \
            vkcu_engine_stats_queue(d, qf, phys, *q);                                                   \
    }                                                                                                   \
    static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL gdpa_##k(VkDevice d, const char *name)             \
    {                                                                                                   \
        if (!strcmp(name, "vkGetDeviceQueue"))                                                          \
            return (PFN_vkVoidFunction)gdq_##k;                                                         \
        PFN_vkVoidFunction timed = engine_stats ? vkcu_engine_stats_hook(name) : NULL;                  \
        return timed ? timed : real_gdpa(d, name);                                                      \
    }                                                                                                   \
    static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL gipa_##k(VkInstance inst, const char *name)        \
    {                                                                                                   \
        if (!strcmp(name, "vkGetDeviceProcAddr"))                                                       \
            return (PFN_vkVoidFunction)gdpa_##k;                                                        \
        if (!strcmp(name, "vkGetDeviceQueue"))                                                          \
            return (PFN_vkVoidFunction)gdq_##k;                                                         \
        PFN_vkVoidFunction timed = engine_stats ? vkcu_engine_stats_hook(name) : NULL;                  \
        return timed ? timed : real_gipa(inst, name);                                                   \
    }
LANE_FNS(0)
LANE_FNS(1)
LANE_FNS(2)
LANE_FNS(3)
LANE_FNS(4)
LANE_FNS(5)
LANE_FNS(6)
LANE_FNS(7)
LANE_FNS(8)
LANE_FNS(9)
LANE_FNS(10)
LANE_FNS(11)
LANE_FNS(12)
LANE_FNS(13)
LANE_FNS(14)
LANE_FNS(15)
static const PFN_vkGetInstanceProcAddr lane_gipa[MAX_LANES] = { gipa_0,  gipa_1,  gipa_2,  gipa_3,  gipa_4,  gipa_5,
                                                                gipa_6,  gipa_7,  gipa_8,  gipa_9,  gipa_10, gipa_11,
                                                                gipa_12, gipa_13, gipa_14, gipa_15 };

typedef struct lane_ctx {
    AVBufferRef *master;
    int lane;
} lane_ctx;

static void lane_lock(AVHWDeviceContext *ctx, uint32_t qf, uint32_t index)
{
    lane_ctx *l = ctx->user_opaque;
    AVHWDeviceContext *m = (AVHWDeviceContext *)l->master->data;
    if (!engine_stats) {
        vkcu_vk_queue_lock(m, qf, remap(l->lane, qf, index));
        return;
    }
    double t0 = vkcu_now();
    vkcu_vk_queue_lock(m, qf, remap(l->lane, qf, index));
    vkcu_engine_stats_lock_wait(vkcu_now() - t0);
}

static void lane_unlock(AVHWDeviceContext *ctx, uint32_t qf, uint32_t index)
{
    lane_ctx *l = ctx->user_opaque;
    vkcu_vk_queue_unlock((AVHWDeviceContext *)l->master->data, qf, remap(l->lane, qf, index));
}

static void lane_free(AVHWDeviceContext *ctx)
{
    lane_ctx *l = ctx->user_opaque;
    if (l) {
        av_buffer_unref(&l->master);
        av_free(l);
    }
    ctx->user_opaque = NULL;
}

/* ---- CUDA side of the set-up, on its own thread ---- */

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

static void probe_publish(cuda_probe *c)
{
    pthread_mutex_lock(&c->lock);
    atomic_store(&c->done, 1);
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

/* Waits for the UUID only, not the CUDA context that follows it. */
static void probe_wait(cuda_probe *c)
{
    pthread_mutex_lock(&c->lock);
    while (!atomic_load(&c->done))
        pthread_cond_wait(&c->cond, &c->lock);
    pthread_mutex_unlock(&c->lock);
}

/* The runtime's start, the device's UUID, then its primary context: the
 * job thread's own CUDA calls later find them made. */
static void *cuda_probe_main(void *arg)
{
    cuda_probe *c = arg;
    double t0 = c->t_start = vkcu_now();
    int n = 0;
    struct cudaDeviceProp prop;
    cudaError_t ce = cudaGetDeviceCount(&n);
    if (ce != cudaSuccess || n == 0)
        vkcu_cuda_absent_text(ce, c->err, sizeof(c->err));
    else if (c->device < 0 || c->device >= n)
        {
        char ordinal[16];
        snprintf(ordinal, sizeof(ordinal), "%d", c->device);
        snprintf(c->err, sizeof(c->err), "%s: there are %d CUDA device(s) (0..%d)", VKCU_SETTING_IS("device", ordinal), n, n - 1);
    }
    else if ((ce = cudaGetDeviceProperties(&prop, c->device)) != cudaSuccess)
        snprintf(c->err, sizeof(c->err), "CUDA device %d: %s", c->device, cudaGetErrorString(ce));
    if (c->err[0]) {
        c->ret = VKCU_ERR_DEVICE;
        c->t_uuid = vkcu_now();
        c->ms = (c->t_uuid - t0) * 1e3;
        probe_publish(c);
        atomic_store(&c->context_done, 1);
        return NULL;
    }
    memcpy(c->uuid, prop.uuid.bytes, 16);
    snprintf(c->name, sizeof(c->name), "%s", prop.name);
    double t1 = c->t_uuid = vkcu_now();
    c->ms = (t1 - t0) * 1e3;
    probe_publish(c);
    /* A failure here shows again, with its message, in the session's own calls. */
    if (cudaSetDevice(c->device) == cudaSuccess)
        cudaFree(NULL);
    c->t_context = vkcu_now();
    c->context_ms = (c->t_context - t1) * 1e3;
    atomic_store(&c->context_done, 1);
    return NULL;
}

/* ---- the Vulkan device ---- */

/* Index (in vkEnumeratePhysicalDevices order) of the device whose UUID is
 * `uuid`: FFmpeg's instance sees the devices in the same order as ours
 * (same loader, same drivers), and open_master checks the UUID again. */
static int vulkan_index_for_uuid(const uint8_t uuid[16], char *err, size_t errlen)
{
    const vkcu_vk_instance *vi = vkcu_vk_instance_get(NULL, err, errlen);
    if (!vi)
        return -1;
    int found = vkcu_vk_find_uuid(vi, uuid);
    if (found < 0)
        snprintf(err, errlen, "no Vulkan device has the UUID of CUDA device (is the NVIDIA Vulkan driver installed?)");
    return found;
}

/* FFmpeg's own device creation (every queue of every family it picks): the
 * fallback, and VKCU_VULKAN_DEVICE=ffmpeg for measurements. */
static int ffmpeg_master(const cuda_probe *c, AVBufferRef **out, vkcu_vkdev_times *t, char *err, size_t errlen)
{
    int vk_index = vulkan_index_for_uuid(c->uuid, err, errlen);
    if (vk_index < 0)
        return VKCU_ERR_DEVICE;
    const vkcu_vk_instance *vi = vkcu_vk_instance_get(NULL, err, errlen);
    t->t_instance0 = vi->t_start;
    t->t_instance1 = vi->t_created;
    t->t_enumerated = vi->t_enumerated;
    t->instance_ms = (vi->t_enumerated - vi->t_start) * 1e3;
    char idx[16];
    snprintf(idx, sizeof(idx), "%d", vk_index);
    t->t_device0 = vkcu_now();
    int ret = av_hwdevice_ctx_create(out, AV_HWDEVICE_TYPE_VULKAN, idx, NULL, 0);
    t->t_hwctx1 = vkcu_now();
    t->device_ms = (t->t_hwctx1 - t->t_device0) * 1e3;
    if (ret < 0) {
        snprintf(err, errlen, "cannot create Vulkan device %d for FFmpeg: %s", vk_index, av_err2str(ret));
        return VKCU_ERR_DEVICE;
    }
    return 0;
}

/* The number of compute queues: one unless VKCU_VK_COMPUTE_QUEUES says
 * otherwise (each stream's handoff takes queue `n - 1 - lane % n`). */
static uint32_t compute_queues_wanted(void)
{
    const char *e = getenv("VKCU_VK_COMPUTE_QUEUES");
    int n = e ? atoi(e) : 1;
    return n < 1 ? 1 : n > 64 ? 64 : (uint32_t)n;
}

/* What the process said it will run (vkcu_vkdev_expect): the most of each. */
static atomic_uint expect_streams;
static atomic_uint expect_encode;

void vkcu_vkdev_expect(unsigned streams, uint32_t encode_op)
{
    unsigned cur = atomic_load(&expect_streams);
    while (streams > cur && !atomic_compare_exchange_weak(&expect_streams, &cur, streams))
        ;
    atomic_fetch_or(&expect_encode, encode_op);
}

/* Decode queues: each costs vkCreateDevice about as much as the next (on
 * the H200 every queue of every family took 563-657 ms, one decode and one
 * compute queue 82-98 ms), so as many as the streams the process expects,
 * and at least two: FFmpeg's decoder submits its two execution contexts on
 * queues 0 and 1 (i % queues), and a single stream keeps the two queues it
 * had when the device had every one. VKCU_VK_DECODE_QUEUES=N overrides it
 * (measurements). */
static uint32_t decode_queues_wanted(void)
{
    const char *e = getenv("VKCU_VK_DECODE_QUEUES");
    int n = e ? atoi(e) : (int)atomic_load(&expect_streams);
    if (!e && n < 2)
        n = 2;
    return n < 1 ? 1 : n > MAX_LANE_QUEUES ? MAX_LANE_QUEUES : (uint32_t)n;
}

/* Decode claims: one per stream the process expects (VKCU_VK_DECODE_QUEUES
 * when set), so that other processes see how loaded each queue is. */
static uint32_t decode_claims_wanted(void)
{
    const char *e = getenv("VKCU_VK_DECODE_QUEUES");
    int n = e ? atoi(e) : (int)atomic_load(&expect_streams);
    return n < 1 ? 1 : n > VKCU_QCLAIM_MAX_CLAIMS ? VKCU_QCLAIM_MAX_CLAIMS : (uint32_t)n;
}

/* The decode queue the process's jobs pin (the decode_queue setting), for
 * the device's creation; -1: none. The first one said wins. */
static atomic_int expect_pin = -1;

void vkcu_vkdev_expect_decode_queue(int queue)
{
    int none = -1;
    if (queue >= 0)
        atomic_compare_exchange_strong(&expect_pin, &none, queue);
}

/* Fills qc with the queues of one role this process uses on the GPU
 * `uuid`, in family `family` of `have` queues: `claims` claims on the
 * least-claimed queues (all on `pin` when pin >= 0), or, where claims
 * cannot be taken, queues 0..fallback-1 (or the pin). Returns how many
 * queues the device needs in that family: the highest chosen + 1. */
static uint32_t choose_queues(queue_choice *qc, int role, const uint8_t uuid[16], uint32_t family, uint32_t have,
                              uint32_t claims, uint32_t fallback, int pin)
{
    memset(qc, 0, sizeof(*qc));
    qc->family = family;
    qc->have = have;
    if (have > MAX_LANE_QUEUES)
        have = MAX_LANE_QUEUES;
    if (have < 1)
        return 0;
    if (pin >= (int)have)
        pin = -1; /* the job that pinned it says why it cannot run (vkcu_vkdev_acquire) */
    char dir[512], why[512] = "";
    if (vkcu_qclaim_dir(dir, sizeof(dir), 1, why, sizeof(why)) == 0 &&
        vkcu_qclaim_take(dir, uuid, role_names[role], family, have, claims, pin, &qc->claim, why, sizeof(why)) == 0) {
        char list[128] = "";
        for (uint32_t k = 0; k < vkcu_qclaim_count(qc->claim); k++) {
            uint32_t q = vkcu_qclaim_queue(qc->claim, k), seen = 0;
            for (uint32_t i = 0; i < qc->nb; i++)
                seen |= qc->queue[i] == q;
            if (!seen && qc->nb < MAX_LANE_QUEUES) {
                qc->queue[qc->nb++] = q;
                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%u", qc->nb > 1 ? " " : "", q);
            }
        }
        LOGV("GPU: %s queue%s %s of family %u (%u claim%s in %s: the least-claimed queues of this GPU%s)",
             role_names[role], qc->nb > 1 ? "s" : "", list, family, vkcu_qclaim_count(qc->claim),
             vkcu_qclaim_count(qc->claim) > 1 ? "s" : "", dir, pin >= 0 ? "; pinned" : "");
    } else {
        if (pin >= 0)
            qc->queue[qc->nb++] = (uint32_t)pin;
        else
            for (uint32_t q = 0; q < fallback && q < have; q++)
                qc->queue[qc->nb++] = q;
        LOGV("GPU: no %s queue claims (%s): %s queues from 0, whatever other processes use", role_names[role], why,
             role_names[role]);
    }
    uint32_t top = 0;
    for (uint32_t i = 0; i < qc->nb; i++)
        if (qc->queue[i] + 1 > top)
            top = qc->queue[i] + 1;
    return top;
}

static void release_choice(queue_choice qc[NB_ROLES])
{
    for (int r = 0; r < NB_ROLES; r++) {
        vkcu_qclaim_release(&qc[r].claim);
        qc[r].nb = 0;
    }
}

/* FFmpeg's device has every queue: the choice only picks among them. */
static void choose_in_device(queue_choice qc[NB_ROLES], const AVVulkanDeviceContext *hw, const uint8_t uuid[16])
{
    int dec = -1, comp = -1;
    for (int i = 0; i < hw->nb_qf; i++) {
        if (dec < 0 && (hw->qf[i].flags & VK_QUEUE_VIDEO_DECODE_BIT_KHR))
            dec = i;
        if (comp < 0 && (hw->qf[i].flags & VK_QUEUE_COMPUTE_BIT))
            comp = i;
    }
    if (dec >= 0)
        choose_queues(&qc[ROLE_DECODE], ROLE_DECODE, uuid, (uint32_t)hw->qf[dec].idx, (uint32_t)hw->qf[dec].num,
                      decode_claims_wanted(), decode_queues_wanted(), atomic_load(&expect_pin));
    if (comp >= 0)
        choose_queues(&qc[ROLE_COMPUTE], ROLE_COMPUTE, uuid, (uint32_t)hw->qf[comp].idx, (uint32_t)hw->qf[comp].num,
                      compute_queues_wanted(), compute_queues_wanted(), -1);
}

/* VKCU_VK_EXTRA_EXTS=A,B: more device extensions for our device (for
 * experiments, and for the fallback test: one the driver lacks). The names
 * live for the process, as FFmpeg keeps pointers to them. */
static char extra_exts_buf[512];
static const char *extra_exts[8];
static int nb_extra_exts;
static pthread_once_t extra_exts_once = PTHREAD_ONCE_INIT;

static void parse_extra_exts(void)
{
    const char *e = getenv("VKCU_VK_EXTRA_EXTS");
    if (!e)
        return;
    snprintf(extra_exts_buf, sizeof(extra_exts_buf), "%s", e);
    char *save = NULL;
    for (char *tok = strtok_r(extra_exts_buf, ",", &save); tok && nb_extra_exts < 8; tok = strtok_r(NULL, ",", &save))
        extra_exts[nb_extra_exts++] = tok;
}

static void add_extra_exts(vkcu_vk_plan *plan)
{
    pthread_once(&extra_exts_once, parse_extra_exts);
    for (int i = 0; i < nb_extra_exts && plan->nb_exts < VKCU_VK_MAX_EXTS; i++)
        plan->exts[plan->nb_exts++] = extra_exts[i];
}

/* Our device on the GPU whose UUID CUDA reports. While CUDA is still
 * starting, a machine whose Vulkan instance sees exactly one NVIDIA device
 * gets its device at once for CUDA device 0 (CUDA runs on NVIDIA GPUs
 * only), checked against CUDA's UUID afterwards (and made again on the
 * right GPU if it was not it). Only the chosen device's queue families and
 * extensions are read. */
static int own_master(cuda_probe *c, int speculate, AVBufferRef **out, vkcu_vkdev_times *t, queue_choice qc[NB_ROLES],
                      char *err, size_t errlen)
{
    const vkcu_vk_instance *vi = vkcu_vk_instance_get(NULL, err, errlen);
    if (!vi)
        return VKCU_ERR_DEVICE;
    t->t_instance0 = vi->t_start;
    t->t_instance1 = vi->t_created;
    t->t_enumerated = vi->t_enumerated;
    t->instance_ms = (vi->t_enumerated - vi->t_start) * 1e3;
    int nvidia = 0, last_nvidia = -1;
    for (int i = 0; i < vi->nb_devs; i++)
        if (vi->devs[i].vendor_id == VKCU_VK_NVIDIA_VENDOR) {
            nvidia++;
            last_nvidia = i;
        }
    int pick = -1;
    if (speculate && nvidia == 1 && c->device == 0 && !atomic_load(&c->done)) {
        pick = last_nvidia;
        t->speculative = 1;
    } else {
        probe_wait(c);
        if (c->ret < 0) {
            snprintf(err, errlen, "%s", c->err);
            return c->ret;
        }
        if ((pick = vkcu_vk_find_uuid(vi, c->uuid)) < 0) {
            snprintf(err, errlen, "no Vulkan device has the UUID of CUDA device %d (%s): is the NVIDIA Vulkan driver "
                     "installed?", c->device, c->name);
            return VKCU_ERR_DEVICE;
        }
    }
    const vkcu_vk_physdev *d = &vi->devs[pick];
    t->t_caps0 = vkcu_now();
    const vkcu_vk_caps *caps = vkcu_vk_caps_get(vi, pick);
    t->t_caps1 = vkcu_now();
    if (!caps)
        return AVERROR(ENOMEM);
    vkcu_vk_plan plan;
    char why[256];
    vkcu_vk_plan_want want = { .flags = VKCU_PLAN_INTEROP, .compute = compute_queues_wanted(),
                               .decode = decode_queues_wanted(), .encode = atomic_load(&expect_encode) };
    int r = vkcu_vk_plan_device(caps->qf, caps->nqf, caps->exts, caps->nb_exts, &want, &plan, why, sizeof(why));
    if (r < 0 && want.encode) { /* the encode sink says why, at its start; decoding goes on */
        LOGV("GPU: Vulkan device %s: %s; the shared device is made without an encode queue", d->name, why);
        want.encode = 0;
        r = vkcu_vk_plan_device(caps->qf, caps->nqf, caps->exts, caps->nb_exts, &want, &plan, why, sizeof(why));
    }
    if (r < 0) {
        snprintf(err, errlen, "Vulkan device %s: %s", d->name, why);
        return VKCU_ERR_DEVICE;
    }
    add_extra_exts(&plan);
    /* Queues up to the highest one this process claims (vkCreateDevice makes queues 0..n-1 of a family). */
    if (plan.decode_family >= 0)
        plan.nb_decode = choose_queues(&qc[ROLE_DECODE], ROLE_DECODE, d->uuid, (uint32_t)plan.decode_family,
                                       caps->qf[plan.decode_family].count, decode_claims_wanted(),
                                       plan.nb_decode, atomic_load(&expect_pin));
    uint32_t nb_compute = choose_queues(&qc[ROLE_COMPUTE], ROLE_COMPUTE, d->uuid, (uint32_t)plan.compute_family,
                                        caps->qf[plan.compute_family].count, compute_queues_wanted(), plan.nb_compute, -1);
    if (nb_compute)
        plan.nb_compute = nb_compute;
    vkcu_vk_device_stamps st;
    int ret = vkcu_vk_device_create(vi, pick, &plan, out, &st, err, errlen);
    t->t_device0 = st.start;
    t->t_device1 = st.created;
    t->t_hwctx1 = st.initialised;
    t->device_ms = (st.initialised - st.start) * 1e3;
    if (ret < 0) {
        release_choice(qc);
        return VKCU_ERR_DEVICE;
    }
    t->nb_decode = plan.decode_family >= 0 ? plan.nb_decode : 0;
    t->nb_compute = plan.nb_compute;
    t->nb_encode = plan.encode_family >= 0;
    if (!t->speculative)
        return 0;
    probe_wait(c);
    if (c->ret < 0) {
        snprintf(err, errlen, "%s", c->err);
        av_buffer_unref(out);
        release_choice(qc);
        return c->ret;
    }
    if (!memcmp(d->uuid, c->uuid, 16))
        return 0;
    LOGV("GPU: CUDA device %d is not Vulkan device %s; opening the one with its UUID", c->device, d->name);
    av_buffer_unref(out);
    release_choice(qc);
    *t = (vkcu_vkdev_times){ 0 };
    return own_master(c, 0, out, t, qc, err, errlen);
}

static int has_ext(const AVVulkanDeviceContext *hw, const char *name)
{
    for (int i = 0; i < hw->nb_enabled_dev_extensions; i++)
        if (!strcmp(hw->enabled_dev_extensions[i], name))
            return 1;
    return 0;
}

/* Creates the shared device for a CUDA ordinal (on the opener's thread,
 * registry unlocked): CUDA's start on a second thread, beside the Vulkan
 * instance and device. That thread goes on to make the CUDA context after
 * the UUID is known; sd keeps it (cuda_thread) until vkcu_vkdev_prepare_wait. */
static int open_master(shared_device *sd, int cuda_device, char *err, size_t errlen)
{
    double t0 = vkcu_now();
    cuda_probe *c = av_mallocz(sizeof(*c));
    if (!c)
        return AVERROR(ENOMEM);
    c->device = cuda_device;
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
    /* VKCU_SETUP_SERIAL=1: CUDA's start and context first, on this thread,
     * then the Vulkan steps (tools/setup-profile.sh: each step timed
     * without the other running beside it, to see whether they contend). */
    const char *serial = getenv("VKCU_SETUP_SERIAL");
    pthread_t cuda_thread;
    int cuda_running = !(serial && !strcmp(serial, "1")) && vkcu_thread_create(&cuda_thread, cuda_probe_main, c) == 0;
    if (!cuda_running)
        cuda_probe_main(c);
    vkcu_vkdev_times t = { 0 };
    AVBufferRef *master = NULL;
    queue_choice qc[NB_ROLES];
    memset(qc, 0, sizeof(qc));
    const char *mode = getenv("VKCU_VULKAN_DEVICE");
    int ret;
    if (mode && strcmp(mode, "ffmpeg") && strcmp(mode, "vkcu") && strcmp(mode, "auto")) {
        LOGW("VKCU_VULKAN_DEVICE=%s is not vkcu (our device only), ffmpeg (FFmpeg's) or auto (ours, else "
             "FFmpeg's): using auto", mode);
        mode = NULL;
    }
    if (!mode || strcmp(mode, "ffmpeg")) {
        ret = own_master(c, 1, &master, &t, qc, err, errlen);
        t.own = ret >= 0;
        if (ret < 0 && atomic_load(&c->done) && c->ret < 0)
            goto done; /* no CUDA device: FFmpeg's device would not help */
        if (ret < 0 && mode && !strcmp(mode, "vkcu")) {
            char why[256];
            snprintf(why, sizeof(why), "%.255s", err);
            snprintf(err, errlen, "vkcu's own Vulkan device: %s (VKCU_VULKAN_DEVICE=vkcu: no fallback to FFmpeg's)", why);
            goto done;
        }
        if (ret < 0) {
            LOGW("GPU: vkcu's own Vulkan device failed (%s); using FFmpeg's device creation instead (slower set-up; "
                 "VKCU_VULKAN_DEVICE=ffmpeg skips the attempt)", err);
            err[0] = 0;
        }
    }
    probe_wait(c);
    if (c->ret < 0) {
        snprintf(err, errlen, "%s", c->err);
        ret = c->ret;
        goto done;
    }
    if (!master) {
        t = (vkcu_vkdev_times){ 0 };
        ret = ffmpeg_master(c, &master, &t, err, errlen);
        if (ret < 0)
            goto done;
    }
    AVVulkanDeviceContext *hw = ((AVHWDeviceContext *)master->data)->hwctx;
    /* Never trust the ordinal: check that the device is the CUDA device. */
    PFN_vkGetPhysicalDeviceProperties2 gpp2 =
        (PFN_vkGetPhysicalDeviceProperties2)hw->get_proc_addr(hw->inst, "vkGetPhysicalDeviceProperties2");
    VkPhysicalDeviceIDProperties id = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES };
    VkPhysicalDeviceProperties2 pr = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &id };
    gpp2(hw->phys_dev, &pr);
    if (memcmp(id.deviceUUID, c->uuid, 16)) {
        snprintf(err, errlen, "the Vulkan device opened (%s) is not CUDA device %d", pr.properties.deviceName,
                 cuda_device);
        ret = VKCU_ERR_DEVICE;
        goto done;
    }
    if (!has_ext(hw, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME) || !has_ext(hw, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME)) {
        snprintf(err, errlen, "Vulkan device %s lacks external memory/semaphore FD support", pr.properties.deviceName);
        ret = VKCU_ERR_DEVICE;
        goto done;
    }
    if (!t.own)
        choose_in_device(qc, hw, c->uuid);
    sd->master = master;
    memcpy(sd->uuid, c->uuid, 16);
    memcpy(sd->choice, qc, sizeof(qc));
    memset(qc, 0, sizeof(qc)); /* sd holds the claims now, for the process's life */
    master = NULL;
    for (int i = 0; i < hw->nb_qf; i++)
        if (hw->qf[i].flags & VK_QUEUE_VIDEO_DECODE_BIT_KHR) {
            sd->decode_qf = hw->qf[i].idx;
            sd->nb_decode = hw->qf[i].num;
            break;
        }
    t.cuda_ms = c->ms;
    t.t_cuda0 = c->t_start;
    t.t_cuda_uuid = c->t_uuid;
    t.total_ms = (vkcu_now() - t0) * 1e3;
    sd->times = t;
    pthread_mutex_lock(&registry_lock);
    if (!real_gipa) {
        real_gipa = hw->get_proc_addr;
        real_gdpa = (PFN_vkGetDeviceProcAddr)real_gipa(hw->inst, "vkGetDeviceProcAddr");
        real_gdq = (PFN_vkGetDeviceQueue)real_gdpa(hw->act_dev, "vkGetDeviceQueue");
        engine_stats = vkcu_engine_stats_on(); /* before any stream's context exists */
    }
    pthread_mutex_unlock(&registry_lock);
    if (engine_stats)
        vkcu_engine_stats_device(hw->inst, hw->phys_dev, hw->act_dev, hw->get_proc_addr, sd->decode_qf,
                                 sd->choice[ROLE_COMPUTE].nb ? sd->choice[ROLE_COMPUTE].family : UINT32_MAX);
    LOGV("GPU: CUDA device %d (%s) = Vulkan device %s (%s device%s); %u decode queues in family %u", cuda_device,
         c->name, pr.properties.deviceName, t.own ? "vkcu's" : "FFmpeg's", t.speculative ? ", opened before CUDA answered" : "",
         sd->nb_decode, sd->decode_qf);
    LOGD("GPU set-up: Vulkan instance %.0f ms and device %.0f ms beside CUDA's start %.0f ms; %.0f ms in all (the "
         "CUDA context goes on being made)", t.instance_ms, t.device_ms, t.cuda_ms, t.total_ms);
    ret = 0;
done:
    release_choice(qc); /* what a failed attempt claimed */
    av_buffer_unref(&master);
    if (cuda_running) { /* the context keeps being made beside the job; joined by vkcu_vkdev_prepare_wait */
        sd->cuda_thread = cuda_thread;
        sd->cuda_joinable = 1;
    }
    sd->probe = c;
    return ret;
}

/* Registry locked. Waits for the CUDA thread to end (its context made). */
static void join_cuda(shared_device *sd)
{
    if (sd->cuda_joinable) {
        pthread_join(sd->cuda_thread, NULL);
        sd->cuda_joinable = 0;
    }
    if (sd->probe) {
        sd->times.cuda_context_ms = sd->probe->context_ms;
        sd->times.t_cuda_context = sd->probe->t_context;
        pthread_mutex_destroy(&sd->probe->lock);
        pthread_cond_destroy(&sd->probe->cond);
        av_freep(&sd->probe);
    }
}

/* ---- the registry ---- */

static shared_device *find_device(int cuda_device)
{
    for (int i = 0; i < MAX_DEVICES; i++)
        if (devices[i].state != SD_FREE && devices[i].cuda_device == cuda_device)
            return &devices[i];
    return NULL;
}

static shared_device *claim_slot(int cuda_device)
{
    for (int i = 0; i < MAX_DEVICES; i++)
        if (devices[i].state == SD_FREE) {
            shared_device *sd = &devices[i];
            sd->state = SD_OPENING;
            sd->cuda_device = cuda_device;
            sd->open_ret = 0;
            sd->open_err[0] = 0;
            sd->master = NULL;
            sd->next_lane = 0;
            sd->decode_qf = sd->nb_decode = 0;
            memset(sd->choice, 0, sizeof(sd->choice));
            sd->times = (vkcu_vkdev_times){ 0 };
            sd->probe = NULL;
            sd->cuda_joinable = 0;
            return sd;
        }
    return NULL;
}

/* Registry locked; the opener's result is in sd. */
static void join_opener(shared_device *sd)
{
    if (sd->opener_joinable) {
        pthread_join(sd->opener, NULL);
        sd->opener_joinable = 0;
    }
}

static void open_and_publish(shared_device *sd)
{
    char err[512] = "";
    int ret = open_master(sd, sd->cuda_device, err, sizeof(err));
    pthread_mutex_lock(&registry_lock);
    sd->open_ret = ret;
    snprintf(sd->open_err, sizeof(sd->open_err), "%s", err);
    sd->state = ret < 0 ? SD_FAILED : SD_READY;
    pthread_cond_broadcast(&registry_cond);
    pthread_mutex_unlock(&registry_lock);
}

static void *opener_main(void *arg)
{
    open_and_publish(arg);
    return NULL;
}

/* Whether an NVIDIA driver is here, without loading it: asking CUDA
 * (cudaDriverGetVersion) loads libcuda on the calling thread, before the
 * set-up threads start. Its control node (or WSL's GPU node) is there
 * whenever CUDA can run. */
static int nvidia_driver_present(void)
{
    return access("/dev/nvidiactl", F_OK) == 0 || access("/dev/dxg", F_OK) == 0;
}

void vkcu_vkdev_prepare(int cuda_device)
{
    /* No NVIDIA driver here: nothing to start (and no thread on CPU-only machines). */
    if (!nvidia_driver_present())
        return;
    pthread_mutex_lock(&registry_lock);
    shared_device *sd = find_device(cuda_device);
    if (sd && sd->state == SD_FAILED) { /* an earlier attempt failed: try again */
        join_opener(sd);
        join_cuda(sd);
        sd->state = SD_FREE;
        sd = NULL;
    }
    if (!sd && (sd = claim_slot(cuda_device))) {
        /* With the caller's log target (a job's: vkcu_vkdev_prepare_wait
         * joins it before the job returns), so that the device's verbose
         * lines (which queues, why no claims) reach the job's log level;
         * a plain thread logged them at the process's default (info), so
         * `-v` never showed them. */
        if (vkcu_thread_create(&sd->opener, opener_main, sd) == 0)
            sd->opener_joinable = 1;
        else
            sd->state = SD_FREE; /* acquire opens it on its own thread */
    }
    pthread_mutex_unlock(&registry_lock);
}

void vkcu_vkdev_prepare_wait(int cuda_device)
{
    pthread_mutex_lock(&registry_lock);
    shared_device *sd;
    while ((sd = find_device(cuda_device)) && sd->state == SD_OPENING)
        pthread_cond_wait(&registry_cond, &registry_lock);
    if (sd) {
        join_opener(sd);
        join_cuda(sd);
    }
    pthread_mutex_unlock(&registry_lock);
}

int vkcu_vkdev_times_get(int cuda_device, vkcu_vkdev_times *t)
{
    memset(t, 0, sizeof(*t));
    pthread_mutex_lock(&registry_lock);
    shared_device *sd = find_device(cuda_device);
    int ok = sd && sd->state == SD_READY;
    if (ok)
        *t = sd->times;
    if (ok && sd->probe && atomic_load(&sd->probe->context_done)) {
        t->cuda_context_ms = sd->probe->context_ms;
        t->t_cuda_context = sd->probe->t_context;
    }
    pthread_mutex_unlock(&registry_lock);
    return ok ? 0 : -1;
}

/* Registry locked: the ready shared device of the CUDA device, opened here
 * when nobody prepared it, waited for while another thread opens it. */
static int ready_device(int cuda_device, shared_device **out, char *err, size_t errlen)
{
    shared_device *sd;
    for (;;) {
        sd = find_device(cuda_device);
        if (!sd) {
            if (!(sd = claim_slot(cuda_device))) {
                snprintf(err, errlen, "too many GPUs");
                return VKCU_ERR_DEVICE;
            }
            /* Nobody prepared it: open it here, other callers wait on the state. */
            pthread_mutex_unlock(&registry_lock);
            open_and_publish(sd);
            pthread_mutex_lock(&registry_lock);
            continue;
        }
        if (sd->state == SD_OPENING) {
            pthread_cond_wait(&registry_cond, &registry_lock);
            continue;
        }
        join_opener(sd);
        if (sd->state == SD_FAILED) {
            /* Reported to this caller; the next one tries again, as before. */
            snprintf(err, errlen, "%s", sd->open_err);
            int ret = sd->open_ret;
            join_cuda(sd);
            sd->state = SD_FREE;
            return ret;
        }
        *out = sd;
        return 0;
    }
}

/* VKCU_VK_DECODE_THREADS=N (a measurement knob, FFmpeg 8.1 and later:
 * docs/performance.md): the Vulkan decoder's frame threads. FFmpeg 8.1
 * gives a decoder min(2 x queues, 2 x threads) execution contexts (frames
 * in flight), so each lane then tells FFmpeg of at least N decode queues
 * (they all map onto the lane's own). FFmpeg 7.1's frame threads stall with
 * the Vulkan hwaccel (docs/architecture.md, "A job, stage by stage"): there
 * it stays 1. */
int vkcu_vkdev_decode_threads(void)
{
    const char *e = getenv("VKCU_VK_DECODE_THREADS");
    int n = e ? atoi(e) : 1;
    if (n > 1 && LIBAVCODEC_VERSION_MAJOR < 62) {
        static atomic_int warned;
        if (!atomic_exchange(&warned, 1))
            LOGW("VKCU_VK_DECODE_THREADS=%d ignored: FFmpeg %s's frame threads stall with the Vulkan hwaccel", n,
                 av_version_info());
        return 1;
    }
    return n < 1 ? 1 : n > MAX_LANE_QUEUES ? MAX_LANE_QUEUES : n;
}

/* VKCU_DECODE_QUEUES_PER_STREAM: 1 (default) keeps a decoder's two
 * execution contexts on its lane's queue; 2 (a measurement knob) spreads
 * them over its queue and the next claimed one. Spread, a 4K H.264 stream
 * of x264's ultrafast preset decoded its first GOP wrong (frames 0-249, up
 * to the next IDR picture) in 8 of 8 runs on one H100 when two decoders
 * shared two queues; with one queue each, 4 of 4 were right
 * (tools/prof/two-queue-which.sh; docs/performance.md). Why the spread
 * decodes wrong (FFmpeg's ordering of one video session's submissions on
 * two queues, or the driver) is not known. One queue each was also the
 * faster in engine-profile.sh's 7-stream rows. */
static int queues_per_stream(void)
{
    const char *e = getenv("VKCU_DECODE_QUEUES_PER_STREAM");
    return e && !strcmp(e, "2") ? 2 : 1;
}

/* Registry locked: the trampoline set whose map is *want, filled now when
 * no set has it yet; lane 0 is the identity (FFmpeg's own choice). */
static int find_lane(const struct lane_map *want)
{
    if (!want->nb)
        return 0;
    int free_lane = -1, same_home = -1;
    for (int i = 1; i < MAX_LANES; i++) {
        const struct lane_map *m = &lane_maps[i];
        if (!m->nb) {
            if (free_lane < 0)
                free_lane = i;
            continue;
        }
        if (m->qf == want->qf && m->nb == want->nb && !memcmp(m->queue, want->queue, want->nb * sizeof(want->queue[0])))
            return i;
        if (same_home < 0 && m->qf == want->qf && m->queue[0] == want->queue[0])
            same_home = i;
    }
    if (free_lane >= 0) {
        lane_maps[free_lane] = *want;
        return free_lane;
    }
    LOGV("GPU: every decode lane is taken; this decoder shares another's (queue %u)", want->queue[0]);
    return same_home >= 0 ? same_home : 0;
}

int vkcu_vkdev_acquire(int cuda_device, int decode_queue, AVBufferRef **out, int *lane_out, char *err, size_t errlen)
{
    int ret = 0;
    *out = NULL;
    pthread_mutex_lock(&registry_lock);
    shared_device *sd;
    if ((ret = ready_device(cuda_device, &sd, err, errlen)) < 0)
        goto done;
    if (real_gdq == NULL) {
        snprintf(err, errlen, "internal: no vkGetDeviceQueue");
        ret = AVERROR_BUG;
        goto done;
    }
    /* The decode queues FFmpeg's contexts land on, as a lane's map. */
    const char *spread = getenv("VKCU_DECODE_QUEUE_SPREAD");
    const queue_choice *choice = &sd->choice[ROLE_DECODE];
    struct lane_map want = { .qf = sd->decode_qf };
    int stream = (int)sd->next_lane; /* the stream's number on this device: its compute queue follows it */
    if (decode_queue >= 0) {
        if ((uint32_t)decode_queue >= sd->nb_decode) {
            char q[16];
            snprintf(q, sizeof(q), "%d", decode_queue);
            if (!sd->nb_decode)
                snprintf(err, errlen, "%s: the GPU has no video decode queue", VKCU_SETTING_IS("decode_queue", q));
            else if ((uint32_t)decode_queue >= choice->have || (uint32_t)decode_queue >= MAX_LANE_QUEUES)
                snprintf(err, errlen, "%s: the GPU's video decode family has %u queue%s (0..%u)",
                         VKCU_SETTING_IS("decode_queue", q), choice->have, choice->have == 1 ? "" : "s",
                         (choice->have < MAX_LANE_QUEUES ? choice->have : MAX_LANE_QUEUES) - 1);
            else
                snprintf(err, errlen, "%s: this process's Vulkan device was made with decode queues 0..%u (by an "
                         "earlier job that pinned none or another)", VKCU_SETTING_IS("decode_queue", q),
                         sd->nb_decode - 1);
            ret = VKCU_ERR_USAGE; /* the job fails on any backend (core/pipeline.c) */
            goto done;
        }
        want.nb = 1;
        want.queue[0] = (uint32_t)decode_queue;
        sd->next_lane++;
    } else if (!(spread && !strcmp(spread, "0")) && choice->nb) {
        unsigned l = sd->next_lane++ % choice->nb;
        want.queue[want.nb++] = choice->queue[l];
        if (queues_per_stream() == 2 && choice->nb > 1)
            want.queue[want.nb++] = choice->queue[(l + 1) % choice->nb];
    } else {
        sd->next_lane++; /* identity: FFmpeg's own queue choice */
    }
    int lane = find_lane(&want);
    if (want.nb > 1)
        LOGV("GPU: stream %d of CUDA device %d decodes on queues %u and %u of family %u", stream, cuda_device,
             want.queue[0], want.queue[1], sd->decode_qf);
    else if (want.nb)
        LOGV("GPU: stream %d of CUDA device %d decodes on queue %u of family %u", stream, cuda_device, want.queue[0],
             sd->decode_qf);

    AVHWDeviceContext *m = (AVHWDeviceContext *)sd->master->data;
    AVBufferRef *ref = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_VULKAN);
    lane_ctx *l = av_mallocz(sizeof(*l));
    if (!ref || !l) {
        av_buffer_unref(&ref);
        av_free(l);
        ret = AVERROR(ENOMEM);
        goto done;
    }
    AVHWDeviceContext *dc = (AVHWDeviceContext *)ref->data;
    AVVulkanDeviceContext *hw = dc->hwctx;
    /* Same instance, device, features, extensions and queue families. */
    *hw = *(AVVulkanDeviceContext *)m->hwctx;
    int threads = vkcu_vkdev_decode_threads();
    for (int i = 0; threads > 1 && want.nb && i < hw->nb_qf; i++)
        if (hw->qf[i].idx == (int)sd->decode_qf && hw->qf[i].num < threads)
            hw->qf[i].num = threads; /* FFmpeg's indices past the made ones map onto the lane's queues too */
    hw->get_proc_addr = lane_gipa[lane];
    vkcu_vk_queue_lock_set(dc, lane_lock, lane_unlock);
    l->master = av_buffer_ref(sd->master);
    l->lane = lane;
    dc->user_opaque = l;
    dc->free = lane_free;
    if (!l->master) {
        av_buffer_unref(&ref);
        ret = AVERROR(ENOMEM);
        goto done;
    }
    ret = av_hwdevice_ctx_init(ref);
    if (ret < 0) {
        snprintf(err, errlen, "cannot share the Vulkan device with FFmpeg: %s", av_err2str(ret));
        av_buffer_unref(&ref);
        ret = VKCU_ERR_DEVICE;
        goto done;
    }
    *out = ref;
    *lane_out = stream;
done:
    pthread_mutex_unlock(&registry_lock);
    return ret;
}

uint32_t vkcu_vkdev_compute_queue(int cuda_device, int lane, uint32_t family, uint32_t num)
{
    if (num < 1)
        return 0;
    uint32_t q = num - 1 - (uint32_t)lane % num; /* from the last down: FFmpeg's own work starts at 0 */
    pthread_mutex_lock(&registry_lock);
    shared_device *sd = find_device(cuda_device);
    if (sd && sd->state == SD_READY) {
        const queue_choice *c = &sd->choice[ROLE_COMPUTE];
        if (c->nb && c->family == family && c->queue[(uint32_t)lane % c->nb] < num)
            q = c->queue[(uint32_t)lane % c->nb];
    }
    pthread_mutex_unlock(&registry_lock);
    return q;
}

/* ---- Vulkan Video encode ---- */

static int has_encode(const AVVulkanDeviceContext *hw, uint32_t op)
{
    for (int i = 0; i < hw->nb_qf; i++)
        if ((hw->qf[i].flags & VK_QUEUE_VIDEO_ENCODE_BIT_KHR) && (hw->qf[i].video_caps & op))
            return 1;
    return 0;
}

static const char *op_name(uint32_t op)
{
    return op == VK_VIDEO_CODEC_OPERATION_ENCODE_H265_BIT_KHR ? "HEVC" : "H.264";
}

/* A compute and an encode queue on vi->devs[index], or -1 with why. */
static int make_encoder(const vkcu_vk_instance *vi, int index, uint32_t op, AVBufferRef **out, char *why, size_t len)
{
    const vkcu_vk_caps *caps = vkcu_vk_caps_get(vi, index);
    if (!caps)
        return AVERROR(ENOMEM);
    vkcu_vk_plan plan;
    vkcu_vk_plan_want want = { .compute = 1, .encode = op };
    if (vkcu_vk_plan_device(caps->qf, caps->nqf, caps->exts, caps->nb_exts, &want, &plan, why, len) < 0)
        return -1;
    return vkcu_vk_device_create(vi, index, &plan, out, NULL, why, len) < 0 ? VKCU_ERR_DEVICE : 0;
}

/* Encode devices of the CPU backend, one per codec operation. */
static AVBufferRef *cpu_encoder[2];

int vkcu_vkdev_acquire_encode(int cuda_device, uint32_t encode_op, AVBufferRef **out, char *err, size_t errlen)
{
    *out = NULL;
    char why[512] = "";
    int ret = 0;
    if (encode_op != VK_VIDEO_CODEC_OPERATION_ENCODE_H264_BIT_KHR &&
        encode_op != VK_VIDEO_CODEC_OPERATION_ENCODE_H265_BIT_KHR) {
        snprintf(err, errlen, "internal: no Vulkan encode operation %#x", (unsigned)encode_op);
        return AVERROR_BUG;
    }
    const vkcu_vk_instance *vi = vkcu_vk_instance_get(NULL, why, sizeof(why));
    pthread_mutex_lock(&registry_lock);
    if (cuda_device >= 0) {
        shared_device *sd;
        if ((ret = ready_device(cuda_device, &sd, err, errlen)) < 0)
            goto done;
        AVHWDeviceContext *m = (AVHWDeviceContext *)sd->master->data;
        if (has_encode(m->hwctx, encode_op)) {
            *out = av_buffer_ref(sd->master);
        } else if (sd->encoder && sd->encoder_op == encode_op) {
            *out = av_buffer_ref(sd->encoder);
        } else {
            int index = vi ? vkcu_vk_find_uuid(vi, sd->uuid) : -1;
            const char *name = index >= 0 ? vi->devs[index].name : "the CUDA device's GPU";
            if (index < 0 || (ret = make_encoder(vi, index, encode_op, &sd->encoder, why, sizeof(why))) < 0) {
                snprintf(err, errlen, "no Vulkan video encode queue for %s on %s%s%s", op_name(encode_op), name,
                         why[0] && !strstr(why, "no Vulkan video encode queue") ? ": " : "",
                         why[0] && !strstr(why, "no Vulkan video encode queue") ? why : "");
                ret = VKCU_ERR_DEVICE;
                goto done;
            }
            sd->encoder_op = encode_op;
            *out = av_buffer_ref(sd->encoder);
        }
    } else {
        AVBufferRef **slot = &cpu_encoder[encode_op == VK_VIDEO_CODEC_OPERATION_ENCODE_H265_BIT_KHR];
        if (!*slot) {
            if (!vi) {
                snprintf(err, errlen, "%s", why);
                ret = VKCU_ERR_DEVICE;
                goto done;
            }
            char names[512] = "";
            for (int i = 0; i < vi->nb_devs && !*slot; i++) {
                char dev_why[256] = "";
                snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", names[0] ? ", " : "",
                         vi->devs[i].name);
                if (make_encoder(vi, i, encode_op, slot, dev_why, sizeof(dev_why)) < 0)
                    LOGV("Vulkan device %s: %s", vi->devs[i].name, dev_why);
            }
            if (!*slot) {
                if (!vi->nb_devs)
                    snprintf(err, errlen, "no Vulkan device on this machine");
                else
                    snprintf(err, errlen, "no Vulkan video encode queue for %s on %s", op_name(encode_op), names);
                ret = VKCU_ERR_DEVICE;
                goto done;
            }
        }
        *out = av_buffer_ref(*slot);
    }
    if (!*out)
        ret = AVERROR(ENOMEM);
done:
    pthread_mutex_unlock(&registry_lock);
    return ret;
}

/* ---- FFmpeg's compute encoders (ffv1_vulkan, prores_ks_vulkan) ---- */

int vkcu_vkdev_acquire_compute(int cuda_device, AVBufferRef **out, char *err, size_t errlen)
{
    *out = NULL;
    pthread_mutex_lock(&registry_lock);
    shared_device *sd;
    int ret = ready_device(cuda_device, &sd, err, errlen);
    if (ret == 0 && !(*out = av_buffer_ref(sd->master)))
        ret = AVERROR(ENOMEM);
    pthread_mutex_unlock(&registry_lock);
    return ret;
}

/* ---- the set-up timeline ---- */

void vkcu_vkdev_timeline(int cuda_device, double t0, char *buf, size_t len)
{
    vkcu_vkdev_times t;
    buf[0] = 0;
    if (vkcu_vkdev_times_get(cuda_device, &t) < 0)
        return;
    const struct { const char *name; double a, b; } steps[] = {
        { "vk_instance", t.t_instance0, t.t_instance1 },   { "vk_enumerate", t.t_instance1, t.t_enumerated },
        { "vk_caps", t.t_caps0, t.t_caps1 },               { "vk_device", t.t_device0, t.t_device1 ? t.t_device1 : t.t_hwctx1 },
        { "vk_hwctx", t.t_device1, t.t_device1 ? t.t_hwctx1 : 0 }, { "cuda_init", t.t_cuda0, t.t_cuda_uuid },
        { "cuda_context", t.t_cuda_uuid, t.t_cuda_context },
    };
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        size_t used = strlen(buf);
        if (steps[i].a > 0 && steps[i].b > 0 && used < len)
            snprintf(buf + used, len - used, "%s%s=%.0f-%.0f", used ? " " : "", steps[i].name,
                     (steps[i].a - t0) * 1e3, (steps[i].b - t0) * 1e3);
    }
}
