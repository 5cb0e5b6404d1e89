/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The decode lanes: which queue of the shared device each stream's decoder
 * submits on.
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
 * The registry's lock is defined here, in the one vkdev_*.c file that calls
 * none of the others, so that each of them takes it without a loop of
 * calls between the files.
 */
#include <pthread.h>
#include <string.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>
#include <libavutil/mem.h>

#include "vkdev_priv.h"
#include "enginestats.h"
#include "vkfn.h"
#include "vkinstance.h"
#include "util/log.h"

pthread_mutex_t vkcu_vkdev_registry_lock = PTHREAD_MUTEX_INITIALIZER;

/* Process-wide: the real entry points (the same loader for every device). */
static PFN_vkGetInstanceProcAddr real_gipa;
static PFN_vkGetDeviceProcAddr real_gdpa;
PFN_vkGetDeviceQueue vkcu_vkdev_real_gdq;
static int engine_stats; /* VKCU_ENGINE_STATS=1 (gpu/enginestats.h), read before the first device is made */

int vkcu_vkdev_lanes_init(const AVVulkanDeviceContext *hw)
{
    pthread_mutex_lock(&vkcu_vkdev_registry_lock);
    if (!real_gipa) {
        real_gipa = hw->get_proc_addr;
        real_gdpa = (PFN_vkGetDeviceProcAddr)real_gipa(hw->inst, "vkGetDeviceProcAddr");
        vkcu_vkdev_real_gdq = (PFN_vkGetDeviceQueue)real_gdpa(hw->act_dev, "vkGetDeviceQueue");
        engine_stats = vkcu_engine_stats_on(); /* before any stream's context exists */
    }
    int on = engine_stats;
    pthread_mutex_unlock(&vkcu_vkdev_registry_lock);
    return on;
}

/* What each set of trampolines maps FFmpeg's decode queue index i to:
 * queue[i % nb] of family qf (nb 0: the slot is free). A slot is filled
 * once, under the registry lock, before any context using it exists, and
 * shared by every stream (of any GPU) that wants the same mapping. */
static struct lane_map lane_maps[MAX_LANES];

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
        vkcu_vkdev_real_gdq(d, qf, phys, q);                                                                       \
        if (engine_stats)                                                                               \
            vkcu_engine_stats_queue(d, qf, phys, *q);                                                   \
    }                                                                                                   \
    static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL gdpa_##k(VkDevice d, const char *name)             \
    {                                                                                                   \
        if (!strcmp(name, "vkGetDeviceQueue"))                                                          \
            return (PFN_vkVoidFunction)gdq_##k;                                                         \
        PFN_vkVoidFunction hook = vkcu_vkdev_probe_hook(d, name, real_gdpa);                            \
        if (hook)                                                                                       \
            return hook;                                                                                \
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
LANE_FNS(16)
LANE_FNS(17)
LANE_FNS(18)
LANE_FNS(19)
LANE_FNS(20)
LANE_FNS(21)
LANE_FNS(22)
LANE_FNS(23)
LANE_FNS(24)
LANE_FNS(25)
LANE_FNS(26)
LANE_FNS(27)
LANE_FNS(28)
LANE_FNS(29)
LANE_FNS(30)
LANE_FNS(31)
const PFN_vkGetInstanceProcAddr vkcu_vkdev_lane_gipa[MAX_LANES] = {
    gipa_0, gipa_1, gipa_2, gipa_3, gipa_4, gipa_5, gipa_6, gipa_7,
    gipa_8, gipa_9, gipa_10, gipa_11, gipa_12, gipa_13, gipa_14, gipa_15,
    gipa_16, gipa_17, gipa_18, gipa_19, gipa_20, gipa_21, gipa_22, gipa_23,
    gipa_24, gipa_25, gipa_26, gipa_27, gipa_28, gipa_29, gipa_30, gipa_31,
};

void vkcu_vkdev_lane_lock(AVHWDeviceContext *ctx, uint32_t qf, uint32_t index)
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

void vkcu_vkdev_lane_unlock(AVHWDeviceContext *ctx, uint32_t qf, uint32_t index)
{
    lane_ctx *l = ctx->user_opaque;
    vkcu_vk_queue_unlock((AVHWDeviceContext *)l->master->data, qf, remap(l->lane, qf, index));
}

void vkcu_vkdev_lane_free(AVHWDeviceContext *ctx)
{
    lane_ctx *l = ctx->user_opaque;
    if (l) {
        av_buffer_unref(&l->master);
        av_free(l->exts);
        av_free(l);
    }
    ctx->user_opaque = NULL;
}

/* Registry locked: the trampoline set whose map is *want, filled now when
 * no set has it yet; lane 0 is the identity (FFmpeg's own choice). */
int vkcu_vkdev_find_lane(const struct lane_map *want)
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
