/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Making a GPU's shared device (on the opener's thread, registry unlocked).
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
#include <libavutil/avutil.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>

#include "vkdev_priv.h"
#include "enginestats.h"
#include "vkfn.h"
#include "vkinstance.h"
#include "util/log.h"
#include "util/thread.h"

/* Index (in vkEnumeratePhysicalDevices order) of the device whose UUID is
 * `uuid`: FFmpeg's instance sees the devices in the same order as ours
 * (same loader, same drivers), and vkcu_vkdev_open checks the UUID again. */
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
        vkcu_vkdev_cuda_wait(c);
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
    vkcu_vk_plan_want want;
    vkcu_vkdev_plan_want(&want);
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
    vkcu_vkdev_choose_in_plan(qc, d->uuid, caps, &plan);
    vkcu_vk_device_stamps st;
    int ret = vkcu_vk_device_create(vi, pick, &plan, out, &st, err, errlen);
    t->t_device0 = st.start;
    t->t_device1 = st.created;
    t->t_hwctx1 = st.initialised;
    t->device_ms = (st.initialised - st.start) * 1e3;
    if (ret < 0) {
        vkcu_vkdev_release_choice(qc);
        return VKCU_ERR_DEVICE;
    }
    t->nb_decode = plan.decode_family >= 0 ? plan.nb_decode : 0;
    t->nb_compute = plan.nb_compute;
    t->nb_encode = plan.encode_family >= 0;
    if (!t->speculative)
        return 0;
    vkcu_vkdev_cuda_wait(c);
    if (c->ret < 0) {
        snprintf(err, errlen, "%s", c->err);
        av_buffer_unref(out);
        vkcu_vkdev_release_choice(qc);
        return c->ret;
    }
    if (!memcmp(d->uuid, c->uuid, 16))
        return 0;
    LOGV("GPU: CUDA device %d is not Vulkan device %s; opening the one with its UUID", c->device, d->name);
    av_buffer_unref(out);
    vkcu_vkdev_release_choice(qc);
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
int vkcu_vkdev_open(shared_device *sd, int cuda_device, char *err, size_t errlen)
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
    int cuda_running = !(serial && !strcmp(serial, "1")) && vkcu_thread_create(&cuda_thread, vkcu_vkdev_cuda_main, c) == 0;
    if (!cuda_running)
        vkcu_vkdev_cuda_main(c);
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
    vkcu_vkdev_cuda_wait(c);
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
        vkcu_vkdev_choose_in_device(qc, hw, c->uuid);
    if (vkcu_vk_submit_lock_wanted()) {
        AVHWDeviceContext *mc = (AVHWDeviceContext *)master->data;
        if (vkcu_vk_submit_lock_install(mc))
            LOGV("GPU: VKCU_VK_SUBMIT_LOCK=1: one lock over the submissions of every queue of the device");
        else
            LOGW("GPU: VKCU_VK_SUBMIT_LOCK=1: this FFmpeg has no queue locks to put it in; not applied");
    }
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
    if (vkcu_vkdev_lanes_init(hw))
        vkcu_engine_stats_device(hw->inst, hw->phys_dev, hw->act_dev, hw->get_proc_addr, sd->decode_qf,
                                 sd->choice[ROLE_COMPUTE].nb ? sd->choice[ROLE_COMPUTE].family : UINT32_MAX);
    LOGV("GPU: CUDA device %d (%s) = Vulkan device %s (%s device%s); %u decode queues in family %u", cuda_device,
         c->name, pr.properties.deviceName, t.own ? "vkcu's" : "FFmpeg's", t.speculative ? ", opened before CUDA answered" : "",
         sd->nb_decode, sd->decode_qf);
    LOGD("GPU set-up: Vulkan instance %.0f ms and device %.0f ms beside CUDA's start %.0f ms; %.0f ms in all (the "
         "CUDA context goes on being made)", t.instance_ms, t.device_ms, t.cuda_ms, t.total_ms);
    ret = 0;
done:
    vkcu_vkdev_release_choice(qc); /* what a failed attempt claimed */
    av_buffer_unref(&master);
    if (cuda_running) { /* the context keeps being made beside the job; joined by vkcu_vkdev_prepare_wait */
        sd->cuda_thread = cuda_thread;
        sd->cuda_joinable = 1;
    }
    sd->probe = c;
    return ret;
}
