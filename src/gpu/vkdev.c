/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Vulkan devices shared by every stream of the process, one per CUDA device
 * (matched by UUID, never by ordinal), and the spreading of decoders over
 * the decode queues. Here: the registry of those devices (one slot per CUDA
 * device, made once, on the thread vkcu_vkdev_prepare starts or by the first
 * caller), which the other vkdev_*.c files reach through vkdev_priv.h:
 * vkdev_open.c makes a device, vkdev_cuda.c starts CUDA beside it,
 * vkdev_claims.c chooses its queues, vkdev_acquire.c hands each stream its
 * context and lane, vkdev_encode.c the encoders' devices, vkdev_times.c the
 * set-up times.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include <libavutil/mem.h>

#include "vkdev_priv.h"
#include "util/thread.h"

static pthread_cond_t registry_cond = PTHREAD_COND_INITIALIZER;
static shared_device devices[MAX_DEVICES];

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

shared_device *vkcu_vkdev_find(int cuda_device)
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
    int ret = vkcu_vkdev_open(sd, sd->cuda_device, err, sizeof(err));
    pthread_mutex_lock(&vkcu_vkdev_registry_lock);
    sd->open_ret = ret;
    snprintf(sd->open_err, sizeof(sd->open_err), "%s", err);
    sd->state = ret < 0 ? SD_FAILED : SD_READY;
    pthread_cond_broadcast(&registry_cond);
    pthread_mutex_unlock(&vkcu_vkdev_registry_lock);
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
    pthread_mutex_lock(&vkcu_vkdev_registry_lock);
    shared_device *sd = vkcu_vkdev_find(cuda_device);
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
    pthread_mutex_unlock(&vkcu_vkdev_registry_lock);
}

void vkcu_vkdev_prepare_wait(int cuda_device)
{
    pthread_mutex_lock(&vkcu_vkdev_registry_lock);
    shared_device *sd;
    while ((sd = vkcu_vkdev_find(cuda_device)) && sd->state == SD_OPENING)
        pthread_cond_wait(&registry_cond, &vkcu_vkdev_registry_lock);
    if (sd) {
        join_opener(sd);
        join_cuda(sd);
    }
    pthread_mutex_unlock(&vkcu_vkdev_registry_lock);
}

/* Registry locked: the ready shared device of the CUDA device, opened here
 * when nobody prepared it, waited for while another thread opens it. */
int vkcu_vkdev_ready(int cuda_device, shared_device **out, char *err, size_t errlen)
{
    shared_device *sd;
    for (;;) {
        sd = vkcu_vkdev_find(cuda_device);
        if (!sd) {
            if (!(sd = claim_slot(cuda_device))) {
                snprintf(err, errlen, "too many GPUs");
                return VKCU_ERR_DEVICE;
            }
            /* Nobody prepared it: open it here, other callers wait on the state. */
            pthread_mutex_unlock(&vkcu_vkdev_registry_lock);
            open_and_publish(sd);
            pthread_mutex_lock(&vkcu_vkdev_registry_lock);
            continue;
        }
        if (sd->state == SD_OPENING) {
            pthread_cond_wait(&registry_cond, &vkcu_vkdev_registry_lock);
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
