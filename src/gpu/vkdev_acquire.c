/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A stream's Vulkan device context on the shared device, on its decode lane
 * (vkdev_lanes.c), and the compute queue its frames are handed over on.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <libavcodec/version.h>
#include <libavutil/avutil.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>

#include "vkdev_priv.h"
#include "enginestats.h"
#include "vkfn.h"
#include "vkinstance.h"
#include "util/log.h"

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

/* Registry locked: a device context of the shared device whose queues are
 * lane `lane`'s map (vkdev_lanes.c); decode_qf >= 0: FFmpeg's decoder is
 * told of at least vkcu_vkdev_decode_threads() queues in that family;
 * decode: the stream's context for a decoder (VKCU_LANE_EXPORT applies),
 * else a compute encoder's (VKCU_ENCODE_HOST_IMPORT applies). */
static int lane_context(shared_device *sd, int lane, int decode_qf, int decode, AVBufferRef **out, char *err,
                        size_t errlen)
{
    AVHWDeviceContext *m = (AVHWDeviceContext *)sd->master->data;
    AVBufferRef *ref = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_VULKAN);
    lane_ctx *l = av_mallocz(sizeof(*l));
    if (!ref || !l) {
        av_buffer_unref(&ref);
        av_free(l);
        return AVERROR(ENOMEM);
    }
    AVHWDeviceContext *dc = (AVHWDeviceContext *)ref->data;
    AVVulkanDeviceContext *hw = dc->hwctx;
    /* Same instance, device, features, extensions and queue families. */
    *hw = *(AVVulkanDeviceContext *)m->hwctx;
    int threads = vkcu_vkdev_decode_threads();
    for (int i = 0; threads > 1 && decode_qf >= 0 && i < hw->nb_qf; i++)
        if (hw->qf[i].idx == decode_qf && hw->qf[i].num < threads)
            hw->qf[i].num = threads; /* FFmpeg's indices past the made ones map onto the lane's queues too */
    hw->get_proc_addr = vkcu_vkdev_lane_gipa[lane];
    /* VKCU_LANE_EXPORT=0 (a measurement): the stream's context lists the
     * device's extensions less external memory, so that FFmpeg makes its
     * decoded images with memory that cannot be exported (they never are:
     * the handoff copies them into the CUDA-imported ring).
     * VKCU_ENCODE_HOST_IMPORT=0 (a measurement, issue 36): a compute
     * encoder's context lists them less VK_EXT_external_memory_host, so that
     * FFmpeg's encoders copy each packet out of a host-visible buffer with
     * the CPU instead of a transfer into the imported packet. */
    const char *exp = getenv(decode ? "VKCU_LANE_EXPORT" : "VKCU_ENCODE_HOST_IMPORT");
    if (exp && !strcmp(exp, "0") && (l->exts = av_calloc(hw->nb_enabled_dev_extensions + 1, sizeof(*l->exts)))) {
        int n = 0;
        for (int i = 0; i < hw->nb_enabled_dev_extensions; i++) {
            const char *x = hw->enabled_dev_extensions[i];
            if (decode ? strcmp(x, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME) &&
                             strcmp(x, VK_EXT_EXTERNAL_MEMORY_DMA_BUF_EXTENSION_NAME)
                       : strcmp(x, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME))
                l->exts[n++] = x;
        }
        hw->enabled_dev_extensions = l->exts;
        hw->nb_enabled_dev_extensions = n;
    }
    vkcu_vk_queue_lock_set(dc, vkcu_vkdev_lane_lock, vkcu_vkdev_lane_unlock);
    l->master = av_buffer_ref(sd->master);
    l->lane = lane;
    dc->user_opaque = l;
    dc->free = vkcu_vkdev_lane_free;
    if (!l->master) {
        av_buffer_unref(&ref);
        return AVERROR(ENOMEM);
    }
    int ret = av_hwdevice_ctx_init(ref);
    if (ret < 0) {
        snprintf(err, errlen, "cannot share the Vulkan device with FFmpeg: %s", av_err2str(ret));
        av_buffer_unref(&ref);
        return VKCU_ERR_DEVICE;
    }
    *out = ref;
    return 0;
}

int vkcu_vkdev_acquire(int cuda_device, int decode_queue, AVBufferRef **out, int *lane_out, char *err, size_t errlen)
{
    int ret = 0;
    *out = NULL;
    pthread_mutex_lock(&vkcu_vkdev_registry_lock);
    shared_device *sd;
    if ((ret = vkcu_vkdev_ready(cuda_device, &sd, err, errlen)) < 0)
        goto done;
    if (vkcu_vkdev_real_gdq == NULL) {
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
    int lane = vkcu_vkdev_find_lane(&want);
    if (want.nb > 1)
        LOGV("GPU: stream %d of CUDA device %d decodes on queues %u and %u of family %u", stream, cuda_device,
             want.queue[0], want.queue[1], sd->decode_qf);
    else if (want.nb)
        LOGV("GPU: stream %d of CUDA device %d decodes on queue %u of family %u", stream, cuda_device, want.queue[0],
             sd->decode_qf);

    if ((ret = lane_context(sd, lane, want.nb ? (int)sd->decode_qf : -1, 1, out, err, errlen)) == 0)
        *lane_out = stream;
done:
    pthread_mutex_unlock(&vkcu_vkdev_registry_lock);
    return ret;
}

int vkcu_vkdev_decode_lanes(int cuda_device)
{
    int n = 0;
    pthread_mutex_lock(&vkcu_vkdev_registry_lock);
    shared_device *sd = vkcu_vkdev_find(cuda_device);
    if (sd && sd->state == SD_READY && sd->nb_decode)
        n = sd->choice[ROLE_DECODE].nb ? (int)sd->choice[ROLE_DECODE].nb : (int)sd->nb_decode;
    pthread_mutex_unlock(&vkcu_vkdev_registry_lock);
    return n;
}

uint32_t vkcu_vkdev_compute_queue(int cuda_device, int lane, uint32_t family, uint32_t num)
{
    if (num < 1)
        return 0;
    uint32_t q = num - 1 - (uint32_t)lane % num; /* from the last down: FFmpeg's own work starts at 0 */
    pthread_mutex_lock(&vkcu_vkdev_registry_lock);
    shared_device *sd = vkcu_vkdev_find(cuda_device);
    if (sd && sd->state == SD_READY) {
        const queue_choice *c = &sd->choice[ROLE_COMPUTE];
        if (c->nb && c->family == family && c->queue[(uint32_t)lane % c->nb] < num)
            q = c->queue[(uint32_t)lane % c->nb];
    }
    pthread_mutex_unlock(&vkcu_vkdev_registry_lock);
    return q;
}

/* Registry locked: how many queues of family `family` the shared device has. */
static uint32_t family_queues(const shared_device *sd, uint32_t family)
{
    const AVVulkanDeviceContext *hw = ((AVHWDeviceContext *)sd->master->data)->hwctx;
    for (int i = 0; i < hw->nb_qf; i++)
        if (hw->qf[i].idx == (int)family)
            return (uint32_t)hw->qf[i].num;
    return 0;
}

/* The compute queues compute encoder instances 1, 2, ... take in turn: the
 * process's claimed ones (queues from 0 without claims), less queue 0
 * (instance 0's: FFmpeg submits on queue 0 of the shared device itself)
 * and stream 0's handoff queue while others are left. */
static int instance_queues(const shared_device *sd, uint32_t *family, uint32_t q[MAX_LANE_QUEUES])
{
    const queue_choice *c = &sd->choice[ROLE_COMPUTE];
    uint32_t num = family_queues(sd, c->family);
    uint32_t handoff = num ? num - 1 : 0, list[MAX_LANE_QUEUES], nb = 0;
    if (c->nb && c->queue[0] < num)
        handoff = c->queue[0];
    for (uint32_t i = 0; i < (c->nb ? c->nb : num) && nb < MAX_LANE_QUEUES; i++) {
        uint32_t k = c->nb ? c->queue[i] : i;
        if (k && k < num)
            list[nb++] = k;
    }
    int n = 0;
    for (uint32_t i = 0; i < nb; i++)
        if (list[i] != handoff || nb == 1)
            q[n++] = list[i];
    *family = c->family;
    return n;
}

int vkcu_vkdev_acquire_compute_lane(int cuda_device, int instance, AVBufferRef **out, int *queue, char *err,
                                    size_t errlen)
{
    *out = NULL;
    *queue = 0;
    pthread_mutex_lock(&vkcu_vkdev_registry_lock);
    shared_device *sd;
    int ret = vkcu_vkdev_ready(cuda_device, &sd, err, errlen);
    if (ret < 0)
        goto done;
    uint32_t family, q[MAX_LANE_QUEUES];
    int n = instance > 0 ? instance_queues(sd, &family, q) : 0;
    const char *hi = getenv("VKCU_ENCODE_HOST_IMPORT");
    if (!n && hi && !strcmp(hi, "0")) { /* the shared device's queues, less host import (lane_context) */
        ret = lane_context(sd, 0, -1, 0, out, err, errlen);
        goto done;
    }
    if (!n) { /* one compute queue: the shared device itself */
        if (!(*out = av_buffer_ref(sd->master)))
            ret = AVERROR(ENOMEM);
        goto done;
    }
    struct lane_map want = { .qf = family, .nb = 1, .queue = { q[(instance - 1) % n] } };
    int lane = vkcu_vkdev_find_lane(&want);
    if (!lane) { /* every lane taken by another map: share queue 0 */
        if (!(*out = av_buffer_ref(sd->master)))
            ret = AVERROR(ENOMEM);
        goto done;
    }
    if ((ret = lane_context(sd, lane, -1, 0, out, err, errlen)) == 0)
        *queue = (int)want.queue[0];
done:
    pthread_mutex_unlock(&vkcu_vkdev_registry_lock);
    return ret;
}
