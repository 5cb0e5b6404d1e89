/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The session's CUDA side (session_priv.h): its device made current on the
 * job's thread, its stream and the pending entries' events. Done at the
 * first frame rather than in vkcu_gpu_open, so that the wait for the CUDA
 * context overlaps the decoder's start; push and pop read its result.
 */
#include "session_priv.h"
#include "util/log.h"

int vkcu_gpu_bind(vkcu_gpu *g, char *err, size_t errlen)
{
    int ret = 0;
    if (g->bound)
        return g->bind_ret;
    g->bound = 1;
    double t0 = vkcu_now();
    CU_CHECK(cudaSetDevice(g->cuda_device));
    CU_CHECK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    for (int i = 0; i < MAX_PENDING; i++)
        for (int k = 0; k < 3; k++)
            CU_CHECK(cudaEventCreate(&g->events[i][k]));
    LOGD("GPU set-up: CUDA context, stream and events %.0f ms at the first frame", (vkcu_now() - t0) * 1e3);
    return 0;
fail:
    g->bind_ret = ret;
    snprintf(g->bind_err, sizeof(g->bind_err), "%s", err);
    return ret;
}

