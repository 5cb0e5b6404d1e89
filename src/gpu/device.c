/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Vulkan devices shared by every stream of the process, one per CUDA device
 * (matched by UUID, never by ordinal), and the spreading of decoders over
 * the decode queues.
 *
 * FFmpeg's Vulkan decoder (7.1 and 8.1) submits on queue `i % nb_queues` of the decode
 * family for its two execution contexts i = 0, 1, so every decoder lands on
 * decode queues 0 and 1 (DESIGN.md). Each stream therefore gets its own
 * AVHWDeviceContext wrapping the shared VkDevice, with a `lane`: that
 * context's vkGetDeviceQueue and lock_queue map decode queue i to physical
 * queue (i + lane) % nb_queues, so N concurrent decoders spread evenly over
 * the queues (each queue serves two execution contexts). The mapping is done by a get_proc_addr wrapper per lane (the
 * Vulkan entry points carry no user pointer, so each lane has its own
 * trampolines) and by our lock_queue, which locks the physical queue through
 * the shared context, so all users of one queue share one mutex.
 * VKCU_DECODE_QUEUE_SPREAD=0 turns the spreading off (for measurements).
 *
 * The shared device is vkcu's own (gpu/vkdev.c: decode queues for the
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
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>

#include "device.h"
#include "vkdev.h"
#include "vkfn.h"
#include "vkinstance.h"
#include "util/log.h"

#define MAX_DEVICES 16
#define MAX_LANES 8

enum { SD_FREE, SD_OPENING, SD_READY, SD_FAILED };

typedef struct shared_device {
    int state;                     /* SD_*; the fields below are the opener's until it leaves SD_OPENING */
    int cuda_device;
    AVBufferRef *master;           /* owns the VkDevice (ours or FFmpeg's) */
    uint32_t decode_qf, nb_decode; /* decode family and its queue count */
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
static uint32_t lane_decode_qf[MAX_LANES], lane_nb_decode[MAX_LANES];

static uint32_t remap(int lane, uint32_t qf, uint32_t index)
{
    if (qf != lane_decode_qf[lane] || !lane_nb_decode[lane])
        return index;
    return (index + (uint32_t)lane) % lane_nb_decode[lane];
}

#define LANE_FNS(k)                                                                                     \
    static VKAPI_ATTR void VKAPI_CALL gdq_##k(VkDevice d, uint32_t qf, uint32_t i, VkQueue *q)          \
    {                                                                                                   \
        real_gdq(d, qf, remap(k, qf, i), q);                                                            \
    }                                                                                                   \
    static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL gdpa_##k(VkDevice d, const char *name)             \
    {                                                                                                   \
        if (!strcmp(name, "vkGetDeviceQueue"))                                                          \
            return (PFN_vkVoidFunction)gdq_##k;                                                         \
        return real_gdpa(d, name);                                                                      \
    }                                                                                                   \
    static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL gipa_##k(VkInstance inst, const char *name)        \
    {                                                                                                   \
        if (!strcmp(name, "vkGetDeviceProcAddr"))                                                       \
            return (PFN_vkVoidFunction)gdpa_##k;                                                        \
        if (!strcmp(name, "vkGetDeviceQueue"))                                                          \
            return (PFN_vkVoidFunction)gdq_##k;                                                         \
        return real_gipa(inst, name);                                                                   \
    }
LANE_FNS(0)
LANE_FNS(1)
LANE_FNS(2)
LANE_FNS(3)
LANE_FNS(4)
LANE_FNS(5)
LANE_FNS(6)
LANE_FNS(7)
static const PFN_vkGetInstanceProcAddr lane_gipa[MAX_LANES] = { gipa_0, gipa_1, gipa_2, gipa_3,
                                                                gipa_4, gipa_5, gipa_6, gipa_7 };

typedef struct lane_ctx {
    AVBufferRef *master;
    int lane;
} lane_ctx;

static void lane_lock(AVHWDeviceContext *ctx, uint32_t qf, uint32_t index)
{
    lane_ctx *l = ctx->user_opaque;
    vkcu_vk_queue_lock((AVHWDeviceContext *)l->master->data, qf, remap(l->lane, qf, index));
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
        snprintf(c->err, sizeof(c->err), "no CUDA device (%s)", ce != cudaSuccess ? cudaGetErrorString(ce) : "none found");
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
    return n < 1 ? 1 : n > MAX_LANES ? MAX_LANES : (uint32_t)n;
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
static int own_master(cuda_probe *c, int speculate, AVBufferRef **out, vkcu_vkdev_times *t, char *err, size_t errlen)
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
    vkcu_vk_device_stamps st;
    int ret = vkcu_vk_device_create(vi, pick, &plan, out, &st, err, errlen);
    t->t_device0 = st.start;
    t->t_device1 = st.created;
    t->t_hwctx1 = st.initialised;
    t->device_ms = (st.initialised - st.start) * 1e3;
    if (ret < 0)
        return VKCU_ERR_DEVICE;
    t->nb_decode = plan.decode_family >= 0 ? plan.nb_decode : 0;
    t->nb_compute = plan.nb_compute;
    t->nb_encode = plan.encode_family >= 0;
    if (!t->speculative)
        return 0;
    probe_wait(c);
    if (c->ret < 0) {
        snprintf(err, errlen, "%s", c->err);
        av_buffer_unref(out);
        return c->ret;
    }
    if (!memcmp(d->uuid, c->uuid, 16))
        return 0;
    LOGV("GPU: CUDA device %d is not Vulkan device %s; opening the one with its UUID", c->device, d->name);
    av_buffer_unref(out);
    *t = (vkcu_vkdev_times){ 0 };
    return own_master(c, 0, out, t, err, errlen);
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
    int cuda_running = !(serial && !strcmp(serial, "1")) && pthread_create(&cuda_thread, NULL, cuda_probe_main, c) == 0;
    if (!cuda_running)
        cuda_probe_main(c);
    vkcu_vkdev_times t = { 0 };
    AVBufferRef *master = NULL;
    const char *mode = getenv("VKCU_VULKAN_DEVICE");
    int ret;
    if (mode && strcmp(mode, "ffmpeg") && strcmp(mode, "vkcu") && strcmp(mode, "auto")) {
        LOGW("VKCU_VULKAN_DEVICE=%s is not vkcu (our device only), ffmpeg (FFmpeg's) or auto (ours, else "
             "FFmpeg's): using auto", mode);
        mode = NULL;
    }
    if (!mode || strcmp(mode, "ffmpeg")) {
        ret = own_master(c, 1, &master, &t, err, errlen);
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
    sd->master = master;
    memcpy(sd->uuid, c->uuid, 16);
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
    }
    pthread_mutex_unlock(&registry_lock);
    LOGV("GPU: CUDA device %d (%s) = Vulkan device %s (%s device%s); %u decode queues in family %u", cuda_device,
         c->name, pr.properties.deviceName, t.own ? "vkcu's" : "FFmpeg's", t.speculative ? ", opened before CUDA answered" : "",
         sd->nb_decode, sd->decode_qf);
    LOGD("GPU set-up: Vulkan instance %.0f ms and device %.0f ms beside CUDA's start %.0f ms; %.0f ms in all (the "
         "CUDA context goes on being made)", t.instance_ms, t.device_ms, t.cuda_ms, t.total_ms);
    ret = 0;
done:
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
        if (pthread_create(&sd->opener, NULL, opener_main, sd) == 0)
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

int vkcu_vkdev_acquire(int cuda_device, AVBufferRef **out, int *lane_out, char *err, size_t errlen)
{
    int ret = 0;
    *out = NULL;
    pthread_mutex_lock(&registry_lock);
    shared_device *sd;
    if ((ret = ready_device(cuda_device, &sd, err, errlen)) < 0)
        goto done;
    const char *spread = getenv("VKCU_DECODE_QUEUE_SPREAD");
    int lanes = sd->nb_decode > 1 ? (int)sd->nb_decode : 1;
    if (lanes > MAX_LANES)
        lanes = MAX_LANES;
    int lane = spread && !strcmp(spread, "0") ? 0 : (int)(sd->next_lane++ % (unsigned)lanes);
    if (real_gdq == NULL || (int)sizeof(lane_gipa) / (int)sizeof(lane_gipa[0]) <= lane) {
        snprintf(err, errlen, "internal: no queue lane");
        ret = AVERROR_BUG;
        goto done;
    }
    lane_decode_qf[lane] = sd->decode_qf;
    lane_nb_decode[lane] = sd->nb_decode;

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
    *lane_out = lane;
done:
    pthread_mutex_unlock(&registry_lock);
    return ret;
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
