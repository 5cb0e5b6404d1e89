/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * --stats: what the session counted (imports, copies, bytes each way, the
 * deepest pipeline) and timed (the Vulkan copy by queue timestamps, the
 * chain and the download by CUDA events), and how the set-up went.
 */
#include <string.h>
#include "exit.h"

void vkcu_gpu_stats_frame(vkcu_gpu *g, const pending_frame *pf)
{
    float ms = 0;
    if (cudaEventElapsedTime(&ms, pf->ev_start, pf->ev_ops) == cudaSuccess)
        g->ms_ops += ms;
    if (cudaEventElapsedTime(&ms, pf->ev_ops, pf->ev_end) == cudaSuccess)
        g->ms_download += ms;
    if (pf->vk_timed && pf->slot >= 0) {
        uint64_t ts[2];
        if (g->vk.vkGetQueryPoolResults(g->hwctx->act_dev, g->timestamps, 2 * pf->slot, 2, sizeof(ts), ts,
                                        sizeof(uint64_t), VK_QUERY_RESULT_64_BIT) == VK_SUCCESS)
            g->ms_copy += (double)(ts[1] - ts[0]) * g->ts_period * 1e-6;
    }
}

void vkcu_gpu_stats(const vkcu_gpu *g, vkcu_job_result *r)
{
    r->imports = g->imports;
    r->dtod_copies = g->dtod;
    r->htod_bytes = g->htod_bytes;
    r->dtoh_bytes = g->dtoh_bytes;
    r->vk_readbacks = g->exit && g->exit->readbacks ? g->exit->readbacks(g, g->exit_priv) : 0;
    r->max_in_flight = g->max_in_flight;
    r->gpu_ms_copy = g->ms_copy;
    r->gpu_ms_ops = g->ms_ops;
    r->gpu_ms_download = g->ms_download;
    vkcu_vkdev_times t;
    if (vkcu_vkdev_times_get(g->cuda_device, &t) < 0) /* by now with the CUDA context's time */
        t = g->setup;
    r->setup_ms_vk_instance = t.instance_ms;
    r->setup_ms_vk_device = t.device_ms;
    r->setup_ms_cuda = t.cuda_ms + t.cuda_context_ms;
    r->setup_ms_gpu_open = g->setup_open_ms;
    if (t.own)
        snprintf(r->setup_vk_device, sizeof(r->setup_vk_device), "vkcu (%u decode + %u compute queues%s)",
                 t.nb_decode, t.nb_compute, t.speculative ? ", before CUDA's UUID" : "");
    else
        snprintf(r->setup_vk_device, sizeof(r->setup_vk_device), "ffmpeg");
}
