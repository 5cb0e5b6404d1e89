/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Measurement hooks for issue 36 (docs/performance.md, "Issue 36, step 4"):
 * entry points the lanes' trampolines (vkdev_lanes.c) hand FFmpeg in place
 * of the driver's, to tell apart the causes of the compute encoders' wrong
 * pictures on queues of their own. Off unless asked for; read once.
 *   VKCU_ENCODE_VIEWS=defer[:N]  vkDestroyImageView keeps each view until
 *                             N (default 65536) later ones were destroyed,
 *                             so that no view's handle (nor the driver's
 *                             slot for it) is reused soon, or in a run
 *   VKCU_ENCODE_GPU_SERIAL=1  every submission made through a lane waits on
 *                             the GPU for the one made before it (one
 *                             timeline for the process): the queues' work
 *                             runs one submission at a time
 *   VKCU_ENCODE_TRACE=FILE    the encode path's events, one line each with
 *                             the time (vkcu_vkdev_trace)
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/mem.h>

#include "vkdev_priv.h"
#include "util/clock.h"
#include "util/log.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int defer_views, gpu_serial; /* defer_views: the ring's size */
static PFN_vkDestroyImageView real_destroy_view;
static PFN_vkQueueSubmit2 real_submit2;

static void read_env(void)
{
    const char *v = getenv("VKCU_ENCODE_VIEWS"), *s = getenv("VKCU_ENCODE_GPU_SERIAL");
    if (v && !strncmp(v, "defer", 5) && (!v[5] || v[5] == ':'))
        defer_views = v[5] ? atoi(v + 6) : 65536;
    if (defer_views < 0 || defer_views > (1 << 20))
        defer_views = 65536;
    gpu_serial = s && !strcmp(s, "1");
    if (defer_views || gpu_serial)
        LOGV("GPU: measurement hooks:%s%.0d%s", defer_views ? " image views kept until this many later ones: " : "",
             defer_views, gpu_serial ? " submissions one at a time (VKCU_ENCODE_GPU_SERIAL=1)" : "");
}

typedef struct kept_view {
    VkDevice dev;
    VkImageView view;
    const VkAllocationCallbacks *alloc;
} kept_view;

static pthread_mutex_t view_lock = PTHREAD_MUTEX_INITIALIZER;
static kept_view *views; /* a ring of defer_views */
static size_t view_next;

static VKAPI_ATTR void VKAPI_CALL deferred_destroy_view(VkDevice dev, VkImageView view,
                                                         const VkAllocationCallbacks *alloc)
{
    if (view == VK_NULL_HANDLE)
        return;
    kept_view old = { 0 };
    pthread_mutex_lock(&view_lock);
    if (!views)
        views = av_calloc((size_t)defer_views, sizeof(*views));
    if (views) {
        kept_view *k = &views[view_next++ % (size_t)defer_views];
        old = *k;
        *k = (kept_view){ dev, view, alloc };
    } else {
        old = (kept_view){ dev, view, alloc }; /* no memory for the ring: destroyed now */
    }
    pthread_mutex_unlock(&view_lock);
    if (old.view != VK_NULL_HANDLE)
        real_destroy_view(old.dev, old.view, old.alloc);
}

static pthread_mutex_t chain_lock = PTHREAD_MUTEX_INITIALIZER;
static VkSemaphore chain; /* a timeline: submission k waits k, signals k + 1 */
static uint64_t chain_value;

static VKAPI_ATTR VkResult VKAPI_CALL serial_submit2(VkQueue queue, uint32_t count, const VkSubmitInfo2 *submits,
                                                     VkFence fence)
{
    size_t nsem = 0; /* each submission's waits and signals, one more of each */
    for (uint32_t i = 0; i < count; i++)
        nsem += submits[i].waitSemaphoreInfoCount + submits[i].signalSemaphoreInfoCount + 2;
    VkSubmitInfo2 *s = av_calloc(count ? count : 1, sizeof(*s));
    VkSemaphoreSubmitInfo *sem = av_calloc(nsem ? nsem : 1, sizeof(*sem));
    if (!s || !sem || !chain) {
        av_free(s);
        av_free(sem);
        return real_submit2(queue, count, submits, fence);
    }
    pthread_mutex_lock(&chain_lock);
    VkSemaphoreSubmitInfo *p = sem;
    for (uint32_t i = 0; i < count; i++) {
        const VkSubmitInfo2 *o = &submits[i];
        uint32_t nw = o->waitSemaphoreInfoCount, ns = o->signalSemaphoreInfoCount;
        s[i] = *o;
        if (nw)
            memcpy(p, o->pWaitSemaphoreInfos, nw * sizeof(*p));
        p[nw] = vkcu_vk_sem(chain, chain_value, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
        s[i].pWaitSemaphoreInfos = p;
        s[i].waitSemaphoreInfoCount = nw + 1;
        p += nw + 1;
        if (ns)
            memcpy(p, o->pSignalSemaphoreInfos, ns * sizeof(*p));
        p[ns] = vkcu_vk_sem(chain, chain_value + 1, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT);
        s[i].pSignalSemaphoreInfos = p;
        s[i].signalSemaphoreInfoCount = ns + 1;
        p += ns + 1;
        chain_value++;
    }
    VkResult r = real_submit2(queue, count, s, fence);
    pthread_mutex_unlock(&chain_lock);
    av_free(s);
    av_free(sem);
    return r;
}

PFN_vkVoidFunction vkcu_vkdev_probe_hook(VkDevice dev, const char *name, PFN_vkGetDeviceProcAddr gdpa)
{
    pthread_once(&once, read_env);
    if (defer_views && !strcmp(name, "vkDestroyImageView")) {
        pthread_mutex_lock(&view_lock);
        if (!real_destroy_view && dev != VK_NULL_HANDLE)
            real_destroy_view = (PFN_vkDestroyImageView)gdpa(dev, name);
        int ok = real_destroy_view != NULL;
        pthread_mutex_unlock(&view_lock);
        return ok ? (PFN_vkVoidFunction)deferred_destroy_view : NULL;
    }
    if (gpu_serial && (!strcmp(name, "vkQueueSubmit2") || !strcmp(name, "vkQueueSubmit2KHR")) &&
        dev != VK_NULL_HANDLE) {
        pthread_mutex_lock(&chain_lock);
        if (!real_submit2)
            real_submit2 = (PFN_vkQueueSubmit2)gdpa(dev, "vkQueueSubmit2");
        if (!chain) {
            PFN_vkCreateSemaphore create = (PFN_vkCreateSemaphore)gdpa(dev, "vkCreateSemaphore");
            VkSemaphoreTypeCreateInfo type = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                               .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE };
            VkSemaphoreCreateInfo ci = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type };
            if (!create || create(dev, &ci, NULL, &chain) != VK_SUCCESS)
                chain = VK_NULL_HANDLE;
        }
        int ok = real_submit2 && chain;
        pthread_mutex_unlock(&chain_lock);
        return ok ? (PFN_vkVoidFunction)serial_submit2 : NULL;
    }
    return NULL;
}

/* VKCU_ENCODE_TRACE=FILE: one line per event, appended (a measurement). */
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *trace_file;
static atomic_int trace_state; /* 0 unread, 1 on, -1 off */

void vkcu_vkdev_trace(const char *fmt, ...)
{
    if (atomic_load(&trace_state) < 0)
        return;
    pthread_mutex_lock(&trace_lock);
    if (!atomic_load(&trace_state)) {
        const char *path = getenv("VKCU_ENCODE_TRACE");
        trace_file = path && *path ? fopen(path, "a") : NULL;
        atomic_store(&trace_state, trace_file ? 1 : -1);
    }
    if (trace_file) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(trace_file, "%.6f ", vkcu_now());
        vfprintf(trace_file, fmt, ap);
        fputc('\n', trace_file);
        fflush(trace_file);
        va_end(ap);
    }
    pthread_mutex_unlock(&trace_lock);
}
