/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How long the shared device's set-up took, step by step (vkdev.h:
 * vkcu_vkdev_times_get, vkcu_vkdev_timeline).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "vkdev_priv.h"

int vkcu_vkdev_times_get(int cuda_device, vkcu_vkdev_times *t)
{
    memset(t, 0, sizeof(*t));
    pthread_mutex_lock(&vkcu_vkdev_registry_lock);
    shared_device *sd = vkcu_vkdev_find(cuda_device);
    int ok = sd && sd->state == SD_READY;
    if (ok)
        *t = sd->times;
    if (ok && sd->probe && atomic_load(&sd->probe->context_done)) {
        t->cuda_context_ms = sd->probe->context_ms;
        t->t_cuda_context = sd->probe->t_context;
    }
    pthread_mutex_unlock(&vkcu_vkdev_registry_lock);
    return ok ? 0 : -1;
}

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
