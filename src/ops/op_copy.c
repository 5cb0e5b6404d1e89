/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `copy`: passes frames through unchanged. On the GPU it copies every plane
 * into operator-owned device memory with a CUDA kernel, which makes it the
 * reference "decode + handoff + one CUDA kernel" chain for benchmarks.
 */
#include <cuda_runtime_api.h>

#include "kernels/frame_kernels.h"
#include "util/log.h"
#include "op.h"

typedef struct copy_priv {
    vkcu_gpu_frame out;
    uint8_t *mem[4];
} copy_priv;

static int copy_run_cpu(vkcu_op *op, const AVFrame *in, AVFrame *out)
{
    (void)op;
    if (!in)
        return AVERROR_EOF;
    int ret = av_frame_copy(out, in);
    if (ret < 0)
        return ret;
    return av_frame_copy_props(out, in);
}

static int copy_run_gpu(vkcu_op *op, const vkcu_gpu_frame *in, vkcu_gpu_frame *out, void *stream)
{
    copy_priv *c = op->priv;
    if (!in)
        return AVERROR_EOF;
    if (!c->mem[0]) {
        c->out = *in;
        for (int p = 0; p < in->nb_planes; p++) {
            int bytes, comps, lw, lh;
            vkcu_plane_layout(in->fmt.pix_fmt, p, &bytes, &comps, &lw, &lh);
            size_t pitch;
            if (cudaMallocPitch((void **)&c->mem[p], &pitch, (size_t)in->plane[p].width * bytes * comps,
                                in->plane[p].height) != cudaSuccess)
                return AVERROR(ENOMEM);
            c->out.plane[p] = (vkcu_gpu_plane){ .ptr = c->mem[p], .pitch = pitch, .width = in->plane[p].width,
                                                .height = in->plane[p].height };
        }
    }
    int e = vkcu_cuda_copy_frame(in, &c->out, stream);
    if (e) {
        LOGE("copy: CUDA kernel failed: %s", cudaGetErrorString((cudaError_t)e));
        return AVERROR_EXTERNAL;
    }
    *out = c->out;
    out->fmt = in->fmt;
    out->pts = in->pts;
    out->duration = in->duration;
    out->flags = in->flags; /* field order, for a deinterlace later in the chain */
    out->repeat_pict = in->repeat_pict;
    return 0;
}

static void copy_uninit(vkcu_op *op)
{
    copy_priv *c = op->priv;
    for (int p = 0; p < 4; p++)
        if (c->mem[p])
            cudaFree(c->mem[p]);
}

static const vkcu_op_key copy_keys[] = { { 0 } };

const vkcu_op_class vkcu_op_copy = {
    .name = "copy",
    .help = "pass frames through unchanged (on the GPU: one device copy kernel)",
    .accuracy = "exact: the frames' bytes, unchanged",
    .keys = copy_keys,
    .priv_size = sizeof(copy_priv),
    .per_frame = 1,
    .run_cpu = copy_run_cpu,
    .run_gpu = copy_run_gpu,
    .uninit = copy_uninit,
};
