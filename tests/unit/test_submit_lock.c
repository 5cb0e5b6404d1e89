/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One lock over every queue's submissions (src/gpu/vkfn.c,
 * vkcu_vk_submit_lock_install; VKCU_VK_SUBMIT_LOCK=1). On a device context
 * whose queue lock is this test's own (it counts who is inside and checks
 * that each queue is locked and unlocked in pairs), four threads lock
 * queues of their own many times: once the lock is installed, no two are
 * ever inside at the same time, whatever the queue, and each call still
 * reaches the context's own lock with its queue. Installing twice wraps
 * once (a second wrap would lock its own mutex twice and hang); a context
 * whose own lock is another function, or that has none, is left as it is;
 * the variable's values. Nothing is timed: the overlap counted is a
 * property of the locking, and the threads yield inside it so that an
 * overlap would show.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>

#include "gpu/vkfn.h"
#include "test_util.h"

#if !defined(FF_API_VULKAN_SYNC_QUEUES) || FF_API_VULKAN_SYNC_QUEUES

#define THREADS 4
#define ROUNDS 2000

static atomic_int inside, most_inside, bad_pairs, calls;
static atomic_int held[THREADS];

static void own_lock(AVHWDeviceContext *ctx, uint32_t qf, uint32_t index)
{
    (void)ctx;
    atomic_fetch_add(&calls, 1);
    if (qf != 7 || index >= THREADS || atomic_exchange(&held[index], 1))
        atomic_fetch_add(&bad_pairs, 1);
    int now = atomic_fetch_add(&inside, 1) + 1;
    for (int m = atomic_load(&most_inside); now > m && !atomic_compare_exchange_weak(&most_inside, &m, now);)
        ;
    sched_yield(); /* what a submission would take: let another thread try to come in */
}

static void own_unlock(AVHWDeviceContext *ctx, uint32_t qf, uint32_t index)
{
    (void)ctx;
    atomic_fetch_sub(&inside, 1);
    if (qf != 7 || index >= THREADS || !atomic_exchange(&held[index], 0))
        atomic_fetch_add(&bad_pairs, 1);
}

static void other_lock(AVHWDeviceContext *ctx, uint32_t qf, uint32_t index)
{
    (void)ctx, (void)qf, (void)index;
}

typedef struct {
    AVHWDeviceContext *ctx;
    uint32_t queue;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    for (int i = 0; i < ROUNDS; i++) {
        vkcu_vk_queue_lock(w->ctx, 7, w->queue);
        vkcu_vk_queue_unlock(w->ctx, 7, w->queue);
    }
    return NULL;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
int main(void)
{
    unsetenv("VKCU_VK_SUBMIT_LOCK");
    CHECK(!vkcu_vk_submit_lock_wanted(), "the lock is wanted without VKCU_VK_SUBMIT_LOCK");
    setenv("VKCU_VK_SUBMIT_LOCK", "0", 1);
    CHECK(!vkcu_vk_submit_lock_wanted(), "VKCU_VK_SUBMIT_LOCK=0 wants the lock");
    setenv("VKCU_VK_SUBMIT_LOCK", "1", 1);
    CHECK(vkcu_vk_submit_lock_wanted(), "VKCU_VK_SUBMIT_LOCK=1 does not want the lock");

    /* Device contexts need no device for their queue lock: allocated, not initialised. */
    AVBufferRef *ref = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_VULKAN);
    AVBufferRef *other = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_VULKAN);
    AVBufferRef *none = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_VULKAN);
    if (!ref || !other || !none) {
        printf("FAIL out of memory\n");
        return 1;
    }
    AVHWDeviceContext *ctx = (AVHWDeviceContext *)ref->data;
    AVVulkanDeviceContext *hw = ctx->hwctx;
    hw->lock_queue = own_lock;
    hw->unlock_queue = own_unlock;

    CHECK(vkcu_vk_submit_lock_install(ctx) == 1, "the lock is not installed");
    CHECK(hw->lock_queue != own_lock && hw->unlock_queue != own_unlock, "the context's lock was not wrapped");
    CHECK(vkcu_vk_submit_lock_install(ctx) == 1, "a second install does not say the lock is in place");

    pthread_t th[THREADS];
    worker w[THREADS];
    int started = 0;
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){ .ctx = ctx, .queue = (uint32_t)i };
        started += pthread_create(&th[i], NULL, work, &w[i]) == 0;
    }
    CHECK(started == THREADS, "%d of %d threads started", started, THREADS);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    CHECK(atomic_load(&calls) == started * ROUNDS, "%d of %d locks reached the context's own lock",
          atomic_load(&calls), started * ROUNDS);
    CHECK(atomic_load(&bad_pairs) == 0, "%d locks or unlocks came with a wrong queue or out of pairs",
          atomic_load(&bad_pairs));
    CHECK(atomic_load(&most_inside) == 1, "%d threads were inside the lock at once, on queues of their own",
          atomic_load(&most_inside));

    AVVulkanDeviceContext *ohw = ((AVHWDeviceContext *)other->data)->hwctx;
    ohw->lock_queue = other_lock;
    ohw->unlock_queue = other_lock;
    CHECK(vkcu_vk_submit_lock_install((AVHWDeviceContext *)other->data) == 0 && ohw->lock_queue == other_lock,
          "a context with another own lock was wrapped around this one's");
    AVVulkanDeviceContext *nhw = ((AVHWDeviceContext *)none->data)->hwctx;
    CHECK(vkcu_vk_submit_lock_install((AVHWDeviceContext *)none->data) == 0 && !nhw->lock_queue,
          "a context without a queue lock was given one");

    av_buffer_unref(&ref);
    av_buffer_unref(&other);
    av_buffer_unref(&none);
    if (!tu_failures)
        printf("PASS submit lock: %d threads x %d locks on queues of their own, one inside at a time\n", THREADS,
               ROUNDS);
    return tu_failures ? 1 : 0;
}
#pragma GCC diagnostic pop

#else

int main(void)
{
    printf("this FFmpeg has no queue locks (internally synchronised queues): skipped\n");
    return 77;
}

#endif
