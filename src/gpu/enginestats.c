/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Engine busy time per queue (see enginestats.h for what and why).
 *
 * How a submission is timed: the wrapper of vkQueueSubmit2 sends, in the
 * same batch, a command buffer that resets two timestamp queries and writes
 * the first (ALL_COMMANDS: once everything earlier on the queue is done),
 * then the caller's command buffers (FFmpeg's decode, vkcu's copy), then one
 * that writes the second. The batch's semaphore waits are widened to
 * ALL_COMMANDS so that the first timestamp also waits for them: the
 * interval is the time the queue worked on that submission, not the time
 * it waited for a frame it depends on. The batch also signals a timeline
 * semaphore of ours with the submission's number, so that a slot (its two
 * command buffers, recorded once, and its two queries) is reused only once
 * the GPU is done with it, 64 submissions later, and so that the wrapper
 * can tell whether the queue had anything left to do when the submission
 * came (idle at submit: the engine waited for us).
 *
 * Busy time of a queue is the union of its intervals (they come in
 * submission order; one that starts before the previous one ended counts
 * from that end). Busy against the host's wall time of the window gives
 * the share of the time that queue's engine worked for this process.
 *
 * The shared device lives as long as the process (gpu/vkdev.c never
 * destroys it); a device that goes away first is forgotten
 * (vkcu_engine_stats_forget), which destroys what the timing made on it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "enginestats.h"
#include "util/log.h"

#define SLOTS 64
#define MAX_DEVS 8
#define MAX_CBS 14
#define MAX_SEMS 63

/* The device functions the timing calls (the driver's, not the trampolines'). */
#define ENG_DEVICE_FNS(X)                                                                                   \
    X(vkCreateSemaphore) X(vkDestroySemaphore) X(vkCreateCommandPool) X(vkDestroyCommandPool)               \
    X(vkAllocateCommandBuffers) X(vkBeginCommandBuffer) X(vkEndCommandBuffer) X(vkCmdResetQueryPool)        \
    X(vkCmdWriteTimestamp2) X(vkCreateQueryPool) X(vkDestroyQueryPool) X(vkGetQueryPoolResults)             \
    X(vkQueueSubmit2) X(vkWaitSemaphores) X(vkGetSemaphoreCounterValue)

typedef struct eng_fns {
#define X(name) PFN_##name name;
    ENG_DEVICE_FNS(X)
#undef X
} eng_fns;

typedef struct eng_device {
    VkDevice dev;
    eng_fns fn;
    uint32_t decode_family, compute_family;
    uint32_t ts_bits[32];  /* timestampValidBits per family */
    double period_ns;      /* ns per timestamp tick */
} eng_device;

typedef struct eng_queue {
    VkQueue queue;
    eng_device *d;
    uint32_t family, index;
    int decode;
    pthread_mutex_t lock;
    int state;             /* 0: not set up yet, 1: timed, -1: passed through (set-up failed), -2: device gone */
    int timestamps;
    uint64_t mask;
    VkCommandPool pool;
    VkCommandBuffer begin[SLOTS], end[SLOTS];
    VkQueryPool queries;
    VkSemaphore sem;
    uint64_t seq;          /* submissions made (the semaphore's value once all are done) */
    uint64_t slot_seq[SLOTS]; /* the submission that used the slot last, 0: none pending */
    /* since the last reset */
    int64_t submissions, idle;
    uint64_t busy_ticks, first_tick, last_tick;
    int have_first;
} eng_queue;

static pthread_once_t on_once = PTHREAD_ONCE_INIT;
static int on;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static eng_device devs[MAX_DEVS];
static int nb_devs;
static eng_queue queues[VKCU_ENGINE_MAX_QUEUES]; /* table_lock guards the list; each queue's lock its fields */
static int nb_queues;
static PFN_vkQueueSubmit2 pass_submit2; /* the loader's: dispatches on any queue */
static _Atomic double window_start;
static _Atomic uint64_t lock_wait_ns;

static void read_env(void)
{
    const char *e = getenv("VKCU_ENGINE_STATS");
    on = e && !strcmp(e, "1");
}

int vkcu_engine_stats_on(void)
{
    pthread_once(&on_once, read_env);
    return on;
}

void vkcu_engine_stats_lock_wait(double seconds)
{
    if (seconds > 0)
        atomic_fetch_add(&lock_wait_ns, (uint64_t)(seconds * 1e9));
}

void vkcu_engine_stats_device(VkInstance inst, VkPhysicalDevice pd, VkDevice dev, PFN_vkGetInstanceProcAddr gipa,
                              uint32_t decode_family, uint32_t compute_family)
{
    if (!vkcu_engine_stats_on())
        return;
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < nb_devs; i++)
        if (devs[i].dev == dev)
            goto done;
    if (!pass_submit2)
        pass_submit2 = (PFN_vkQueueSubmit2)gipa(inst, "vkQueueSubmit2");
    if (nb_devs == MAX_DEVS)
        goto done;
    eng_device *d = &devs[nb_devs];
    memset(d, 0, sizeof(*d));
    PFN_vkGetDeviceProcAddr gdpa = (PFN_vkGetDeviceProcAddr)gipa(inst, "vkGetDeviceProcAddr");
    PFN_vkGetPhysicalDeviceProperties2 props =
        (PFN_vkGetPhysicalDeviceProperties2)gipa(inst, "vkGetPhysicalDeviceProperties2");
    PFN_vkGetPhysicalDeviceQueueFamilyProperties2 families =
        (PFN_vkGetPhysicalDeviceQueueFamilyProperties2)gipa(inst, "vkGetPhysicalDeviceQueueFamilyProperties2");
    const char *missing = !gdpa ? "vkGetDeviceProcAddr" : !props ? "vkGetPhysicalDeviceProperties2"
                          : !families ? "vkGetPhysicalDeviceQueueFamilyProperties2" : NULL;
#define X(name) \
    if (!missing && !(d->fn.name = (PFN_##name)gdpa(dev, #name))) \
        missing = #name;
    ENG_DEVICE_FNS(X)
#undef X
    if (missing) {
        LOGW("engine statistics: the device lacks %s; no queue is timed", missing);
        goto done;
    }
    d->dev = dev;
    d->decode_family = decode_family;
    d->compute_family = compute_family;
    VkPhysicalDeviceProperties2 pr = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2 };
    props(pd, &pr);
    d->period_ns = pr.properties.limits.timestampPeriod;
    uint32_t n = 0;
    families(pd, &n, NULL);
    VkQueueFamilyProperties2 qfp[32];
    if (n > 32)
        n = 32;
    for (uint32_t i = 0; i < n; i++)
        qfp[i] = (VkQueueFamilyProperties2){ .sType = VK_STRUCTURE_TYPE_QUEUE_FAMILY_PROPERTIES_2 };
    families(pd, &n, qfp);
    for (uint32_t i = 0; i < n; i++)
        d->ts_bits[i] = qfp[i].queueFamilyProperties.timestampValidBits;
    LOGI("engine statistics on (VKCU_ENGINE_STATS=1): decode family %u (%u timestamp bits), compute family %u (%u "
         "bits), %.3f ns per tick", decode_family, decode_family < 32 ? d->ts_bits[decode_family] : 0, compute_family,
         compute_family < 32 ? d->ts_bits[compute_family] : 0, d->period_ns);
    nb_devs++;
done:
    pthread_mutex_unlock(&table_lock);
}

void vkcu_engine_stats_queue(VkDevice dev, uint32_t family, uint32_t index, VkQueue queue)
{
    if (!vkcu_engine_stats_on() || !queue)
        return;
    pthread_mutex_lock(&table_lock);
    int n = nb_queues;
    eng_device *d = NULL;
    for (int i = 0; i < nb_devs; i++)
        if (devs[i].dev == dev)
            d = &devs[i];
    int known = 0;
    for (int i = 0; i < n; i++)
        known |= queues[i].queue == queue;
    if (d && !known && n < VKCU_ENGINE_MAX_QUEUES && (family == d->decode_family || family == d->compute_family)) {
        eng_queue *q = &queues[n];
        memset(q, 0, sizeof(*q));
        q->queue = queue;
        q->d = d;
        q->family = family;
        q->index = index;
        q->decode = family == d->decode_family;
        pthread_mutex_init(&q->lock, NULL);
        nb_queues = n + 1;
    }
    pthread_mutex_unlock(&table_lock);
}

static eng_queue *find_queue(VkQueue queue)
{
    eng_queue *q = NULL;
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < nb_queues && !q; i++)
        if (queues[i].queue == queue)
            q = &queues[i];
    pthread_mutex_unlock(&table_lock);
    return q;
}

/* q locked: the command buffers, queries and semaphore, once. */
static int set_up(eng_queue *q)
{
    eng_device *d = q->d;
    const eng_fns *f = &d->fn;
    VkDevice dev = d->dev;
    uint32_t bits = q->family < 32 ? d->ts_bits[q->family] : 0;
    q->timestamps = bits > 0 && d->period_ns > 0;
    q->mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    VkSemaphoreTypeCreateInfo type = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                       .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE };
    VkSemaphoreCreateInfo sci = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &type };
    if (f->vkCreateSemaphore(dev, &sci, NULL, &q->sem) != VK_SUCCESS)
        return -1;
    if (!q->timestamps) {
        LOGW("engine statistics: queue family %u has no timestamps: its busy time is not measured", q->family);
        return 0;
    }
    VkCommandPoolCreateInfo pci = { .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = q->family };
    VkQueryPoolCreateInfo qci = { .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                  .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 2 * SLOTS };
    if (f->vkCreateCommandPool(dev, &pci, NULL, &q->pool) != VK_SUCCESS ||
        f->vkCreateQueryPool(dev, &qci, NULL, &q->queries) != VK_SUCCESS)
        return -1;
    VkCommandBuffer cbs[2 * SLOTS];
    VkCommandBufferAllocateInfo ai = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = q->pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 2 * SLOTS };
    if (f->vkAllocateCommandBuffers(dev, &ai, cbs) != VK_SUCCESS)
        return -1;
    VkCommandBufferBeginInfo bi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
    for (uint32_t k = 0; k < SLOTS; k++) {
        q->begin[k] = cbs[2 * k];
        q->end[k] = cbs[2 * k + 1];
        if (f->vkBeginCommandBuffer(q->begin[k], &bi) != VK_SUCCESS)
            return -1;
        f->vkCmdResetQueryPool(q->begin[k], q->queries, 2 * k, 2);
        f->vkCmdWriteTimestamp2(q->begin[k], VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, q->queries, 2 * k);
        if (f->vkEndCommandBuffer(q->begin[k]) != VK_SUCCESS || f->vkBeginCommandBuffer(q->end[k], &bi) != VK_SUCCESS)
            return -1;
        f->vkCmdWriteTimestamp2(q->end[k], VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, q->queries, 2 * k + 1);
        if (f->vkEndCommandBuffer(q->end[k]) != VK_SUCCESS)
            return -1;
    }
    return 0;
}

/* q locked: the times of the submission that used slot k, once the GPU is
 * done with it (waiting at most timeout_ns). 0, or -1 when it is not done. */
static int harvest(eng_queue *q, uint32_t k, uint64_t timeout_ns)
{
    uint64_t v = q->slot_seq[k];
    if (!v)
        return 0;
    eng_device *d = q->d;
    VkSemaphoreWaitInfo wi = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .semaphoreCount = 1,
                               .pSemaphores = &q->sem, .pValues = &v };
    if (d->fn.vkWaitSemaphores(d->dev, &wi, timeout_ns) != VK_SUCCESS)
        return -1;
    q->slot_seq[k] = 0;
    uint64_t t[2];
    if (!q->timestamps || d->fn.vkGetQueryPoolResults(d->dev, q->queries, 2 * k, 2, sizeof(t), t, sizeof(t[0]),
                                                      VK_QUERY_RESULT_64_BIT) != VK_SUCCESS)
        return 0;
    uint64_t b = t[0] & q->mask, e = t[1] & q->mask;
    if (e < b)
        return 0; /* the counter wrapped: one interval lost */
    if (!q->have_first || b < q->first_tick)
        q->first_tick = b;
    q->have_first = 1;
    if (b < q->last_tick)
        b = q->last_tick;
    if (e > b)
        q->busy_ticks += e - b;
    if (e > q->last_tick)
        q->last_tick = e;
    return 0;
}

/* q locked: every timed submission, in the order they were made. */
static void harvest_all(eng_queue *q)
{
    uint64_t from = q->seq > SLOTS ? q->seq - SLOTS + 1 : 1;
    for (uint64_t s = from; s <= q->seq; s++)
        if (q->slot_seq[s % SLOTS] == s && harvest(q, (uint32_t)(s % SLOTS), 1000000000ull) < 0)
            q->slot_seq[s % SLOTS] = 0; /* not done in a second: dropped from the figures */
}

static VKAPI_ATTR VkResult VKAPI_CALL timed_submit2(VkQueue queue, uint32_t count, const VkSubmitInfo2 *infos,
                                                    VkFence fence)
{
    eng_queue *q = find_queue(queue);
    PFN_vkQueueSubmit2 real = q ? q->d->fn.vkQueueSubmit2 : pass_submit2;
    const VkSubmitInfo2 *si = infos;
    if (!q || count != 1 || si->commandBufferInfoCount > MAX_CBS || si->waitSemaphoreInfoCount > MAX_SEMS ||
        si->signalSemaphoreInfoCount >= MAX_SEMS)
        return real(queue, count, infos, fence);
    if (atomic_load(&window_start) == 0) { /* the window opens at the first timed submission */
        double zero = 0;
        atomic_compare_exchange_strong(&window_start, &zero, vkcu_now());
    }
    pthread_mutex_lock(&q->lock);
    if (q->state == 0)
        q->state = set_up(q) < 0 ? -1 : 1;
    uint32_t k = (uint32_t)((q->seq + 1) % SLOTS);
    if (q->state < 0 || harvest(q, k, 10000000000ull) < 0) { /* a slot 64 submissions old still on the GPU: pass */
        pthread_mutex_unlock(&q->lock);
        return real(queue, count, infos, fence);
    }
    eng_device *d = q->d;
    uint64_t done = 0;
    if (d->fn.vkGetSemaphoreCounterValue(d->dev, q->sem, &done) == VK_SUCCESS && done >= q->seq)
        q->idle++;
    uint64_t seq = q->seq + 1;
    VkCommandBufferSubmitInfo cbs[MAX_CBS + 2];
    uint32_t ncb = 0;
    if (q->timestamps)
        cbs[ncb++] = (VkCommandBufferSubmitInfo){ .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
                                                  .commandBuffer = q->begin[k] };
    for (uint32_t i = 0; i < si->commandBufferInfoCount; i++)
        cbs[ncb++] = si->pCommandBufferInfos[i];
    if (q->timestamps)
        cbs[ncb++] = (VkCommandBufferSubmitInfo){ .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
                                                  .commandBuffer = q->end[k] };
    VkSemaphoreSubmitInfo waits[MAX_SEMS], sigs[MAX_SEMS + 1];
    for (uint32_t i = 0; i < si->waitSemaphoreInfoCount; i++) {
        waits[i] = si->pWaitSemaphoreInfos[i];
        waits[i].stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    }
    for (uint32_t i = 0; i < si->signalSemaphoreInfoCount; i++)
        sigs[i] = si->pSignalSemaphoreInfos[i];
    sigs[si->signalSemaphoreInfoCount] = (VkSemaphoreSubmitInfo){ .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                                                  .semaphore = q->sem, .value = seq,
                                                                  .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT };
    VkSubmitInfo2 mine = *si;
    mine.commandBufferInfoCount = ncb;
    mine.pCommandBufferInfos = cbs;
    mine.pWaitSemaphoreInfos = si->waitSemaphoreInfoCount ? waits : NULL;
    mine.signalSemaphoreInfoCount = si->signalSemaphoreInfoCount + 1;
    mine.pSignalSemaphoreInfos = sigs;
    VkResult r = real(queue, 1, &mine, fence);
    if (r == VK_SUCCESS) {
        q->seq = seq;
        q->slot_seq[k] = seq;
        q->submissions++;
    }
    pthread_mutex_unlock(&q->lock);
    return r;
}

void vkcu_engine_stats_forget(VkDevice dev)
{
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < nb_queues; i++) {
        eng_queue *q = &queues[i];
        if (!q->d || q->d->dev != dev)
            continue;
        pthread_mutex_lock(&q->lock);
        const eng_fns *f = &q->d->fn;
        if (q->state > 0)
            harvest_all(q);
        if (q->pool)
            f->vkDestroyCommandPool(dev, q->pool, NULL);
        if (q->queries)
            f->vkDestroyQueryPool(dev, q->queries, NULL);
        if (q->sem)
            f->vkDestroySemaphore(dev, q->sem, NULL);
        q->pool = VK_NULL_HANDLE;
        q->queries = VK_NULL_HANDLE;
        q->sem = VK_NULL_HANDLE;
        q->state = -2;
        q->queue = VK_NULL_HANDLE; /* its handle may come back for another device */
        pthread_mutex_unlock(&q->lock);
    }
    for (int i = 0; i < nb_devs; i++)
        if (devs[i].dev == dev)
            devs[i].dev = VK_NULL_HANDLE;
    pthread_mutex_unlock(&table_lock);
}

PFN_vkVoidFunction vkcu_engine_stats_hook(const char *name)
{
    if (!vkcu_engine_stats_on() || !pass_submit2) /* no device registered: nothing to time */
        return NULL;
    if (!strcmp(name, "vkQueueSubmit2") || !strcmp(name, "vkQueueSubmit2KHR"))
        return (PFN_vkVoidFunction)timed_submit2;
    return NULL;
}

static void collect(vkcu_engine_stats *s, int reset)
{
    memset(s, 0, sizeof(*s));
    double now = vkcu_now(), start = atomic_load(&window_start);
    s->window_s = start > 0 ? now - start : 0;
    pthread_mutex_lock(&table_lock);
    int n = nb_queues;
    pthread_mutex_unlock(&table_lock);
    for (int i = 0; i < n; i++) {
        eng_queue *q = &queues[i];
        pthread_mutex_lock(&q->lock);
        if (q->state > 0)
            harvest_all(q);
        vkcu_engine_queue *o = &s->q[s->nb++];
        double p = q->d->period_ns * 1e-9;
        *o = (vkcu_engine_queue){ .decode = q->decode, .family = q->family, .index = q->index,
                                  .timestamps = q->timestamps, .submissions = q->submissions,
                                  .busy_s = (double)q->busy_ticks * p, .gpu_first_s = (double)q->first_tick * p,
                                  .gpu_last_s = (double)q->last_tick * p, .idle_at_submit = q->idle };
        if (reset) {
            q->submissions = q->idle = 0;
            q->busy_ticks = 0;
            q->have_first = 0;
            q->first_tick = 0;
            /* last_tick stays: the next interval counts from the last one's end */
        }
        pthread_mutex_unlock(&q->lock);
    }
    s->lock_wait_s = (double)atomic_load(&lock_wait_ns) * 1e-9;
    if (reset) {
        atomic_store(&lock_wait_ns, 0);
        atomic_store(&window_start, vkcu_now());
    }
}

void vkcu_engine_stats_get(vkcu_engine_stats *s) { collect(s, 0); }

void vkcu_engine_stats_reset(void)
{
    vkcu_engine_stats s;
    collect(&s, 1);
}

void vkcu_engine_stats_text(const vkcu_engine_stats *s, char *buf, size_t len)
{
    buf[0] = 0;
    if (!vkcu_engine_stats_on() || len == 0 || s->nb == 0)
        return;
    size_t used = 0;
    double dec_busy = 0, comp_busy = 0, gpu0 = 0, gpu1 = 0;
    int64_t dec_subs = 0, dec_idle = 0;
    int ndec = 0, have_gpu = 0;
    for (int i = 0; i < s->nb; i++) {
        const vkcu_engine_queue *q = &s->q[i];
        if (!q->submissions)
            continue;
        if (used < len)
            used += (size_t)snprintf(buf + used, len - used,
                                     "engine: queue=%s.%u.%u submissions=%lld busy_s=%.4f busy_pct=%.1f "
                                     "ms_per_submission=%.4f idle_at_submit_pct=%.1f%s\n",
                                     q->decode ? "decode" : "compute", q->family, q->index, (long long)q->submissions,
                                     q->busy_s, s->window_s > 0 ? 100 * q->busy_s / s->window_s : 0,
                                     q->submissions ? 1e3 * q->busy_s / (double)q->submissions : 0,
                                     100.0 * (double)q->idle_at_submit / (double)q->submissions,
                                     q->timestamps ? "" : " timestamps=none");
        if (q->decode) {
            ndec++;
            dec_busy += q->busy_s;
            dec_subs += q->submissions;
            dec_idle += q->idle_at_submit;
            if (q->timestamps && (!have_gpu || q->gpu_first_s < gpu0))
                gpu0 = q->gpu_first_s;
            if (q->timestamps && (!have_gpu || q->gpu_last_s > gpu1))
                gpu1 = q->gpu_last_s;
            have_gpu |= q->timestamps;
        } else {
            comp_busy += q->busy_s;
        }
    }
    if (used < len)
        snprintf(buf + used, len - used,
                 "engine: summary window_s=%.4f decode_queues=%d decode_submissions=%lld decode_busy_s=%.4f "
                 "decode_busy_pct_of_queues=%.1f decode_idle_at_submit_pct=%.1f decode_gpu_span_s=%.4f "
                 "compute_busy_s=%.4f queue_lock_wait_s=%.4f\n",
                 s->window_s, ndec, (long long)dec_subs, dec_busy,
                 s->window_s > 0 && ndec ? 100 * dec_busy / (s->window_s * ndec) : 0,
                 dec_subs ? 100.0 * (double)dec_idle / (double)dec_subs : 0, have_gpu ? gpu1 - gpu0 : 0, comp_busy,
                 s->lock_wait_s);
}
