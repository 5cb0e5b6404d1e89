/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The CUDA side of a shared device's set-up, on its own thread (vkdev_open.c
 * starts it): the runtime's start, the device's UUID, then its primary
 * context.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <cuda_runtime_api.h>

#include "vkdev_priv.h"
#include "cuda_absent.h"
#include "vkinstance.h"
#include "util/log.h"

static void probe_publish(cuda_probe *c)
{
    pthread_mutex_lock(&c->lock);
    atomic_store(&c->done, 1);
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

/* Waits for the UUID only, not the CUDA context that follows it. */
void vkcu_vkdev_cuda_wait(cuda_probe *c)
{
    pthread_mutex_lock(&c->lock);
    while (!atomic_load(&c->done))
        pthread_cond_wait(&c->cond, &c->lock);
    pthread_mutex_unlock(&c->lock);
}

/* The runtime's start, the device's UUID, then its primary context: the
 * job thread's own CUDA calls later find them made. */
void *vkcu_vkdev_cuda_main(void *arg)
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
