/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Frame metrics on the GPU (metrics.h): the kernels of kernels/metrics.cu
 * queued per component on a stream of the object's own, one device-to-host
 * copy of the per-component results into pinned memory, and one wait. The
 * frames come from a session's device pool, whose pop() already waited for
 * the kernel that wrote them, so nothing else orders this stream after it;
 * vkcu_frame_cuda_release_after then orders the pool's next write into
 * their buffers after these reads.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include <libavutil/pixdesc.h>

#include "kernels/metrics_kernels.h"
#include "metrics.h"
#include "session_priv.h" /* CU_CHECK, the GPU files' one way to fail on a CUDA error */

struct vkcu_gpu_metrics {
    int device;
    cudaStream_t stream;
    void *scratch;               /* device: one component's windows and rows at a time */
    size_t scratch_size;
    vkcu_metrics_result *dev;    /* device: one result per component */
    vkcu_metrics_result *host;   /* pinned */
    int64_t pairs;
};

void vkcu_gpu_metrics_close(vkcu_gpu_metrics **pg)
{
    vkcu_gpu_metrics *g = *pg;
    if (!g)
        return;
    int old = vkcu_cuda_enter(g->device);
    if (g->stream)
        cudaStreamSynchronize(g->stream);
    cudaFree(g->scratch);
    cudaFree(g->dev);
    cudaFreeHost(g->host);
    if (g->stream)
        cudaStreamDestroy(g->stream);
    vkcu_cuda_leave(old, g->device);
    free(g);
    *pg = NULL;
}

int vkcu_gpu_metrics_open(int device, vkcu_gpu_metrics **out, char *err, size_t errlen)
{
    int ret = 0;
    vkcu_gpu_metrics *g = calloc(1, sizeof(*g));
    *out = NULL;
    if (!g) {
        snprintf(err, errlen, "out of memory");
        return AVERROR(ENOMEM);
    }
    g->device = device;
    int old = vkcu_cuda_enter(device);
    CU_CHECK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    CU_CHECK(cudaMalloc((void **)&g->dev, 4 * sizeof(*g->dev)));
    CU_CHECK(cudaMallocHost((void **)&g->host, 4 * sizeof(*g->host)));
    vkcu_cuda_leave(old, device);
    *out = g;
    return 0;
fail:
    vkcu_cuda_leave(old, device);
    vkcu_gpu_metrics_close(&g);
    return ret;
}

int64_t vkcu_gpu_metrics_pairs(const vkcu_gpu_metrics *g)
{
    return g ? g->pairs : 0;
}

/* Each component in a plane of its own, samples in the low bits of 1 or 2
 * little-endian bytes (the planar layouts a device pool holds). */
static int planar_layout(const AVFrame *f)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    if (!d || (d->flags & (AV_PIX_FMT_FLAG_FLOAT | AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_BITSTREAM |
                           AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BE)) || d->nb_components > 4)
        return 0;
    unsigned planes = 0;
    for (int i = 0; i < d->nb_components; i++) {
        const AVComponentDescriptor *c = &d->comp[i];
        int bytes = c->depth > 8 ? 2 : 1;
        if (c->depth != d->comp[0].depth || c->depth > 16 || c->step != bytes || c->shift || c->offset ||
            (planes & (1u << c->plane)) || !f->data[c->plane])
            return 0;
        planes |= 1u << c->plane;
    }
    return 1;
}

/* Component i's size in samples. */
static void comp_size(const AVPixFmtDescriptor *d, const AVFrame *f, int i, int *w, int *h)
{
    int sub = d->nb_components >= 3 && !(d->flags & AV_PIX_FMT_FLAG_RGB) && (i == 1 || i == 2);
    *w = sub ? AV_CEIL_RSHIFT(f->width, d->log2_chroma_w) : f->width;
    *h = sub ? AV_CEIL_RSHIFT(f->height, d->log2_chroma_h) : f->height;
}

int vkcu_gpu_metrics_takes(const vkcu_gpu_metrics *g, const AVFrame *a, const AVFrame *b)
{
    return g && vkcu_frame_cuda_device(a) == g->device && vkcu_frame_cuda_device(b) == g->device &&
           a->format == b->format && a->width == b->width && a->height == b->height && planar_layout(a) &&
           planar_layout(b);
}

int vkcu_gpu_metrics_run(vkcu_gpu_metrics *g, const AVFrame *a, const AVFrame *b, vkcu_plane_stats *st, char *err,
                         size_t errlen)
{
    int ret = 0;
    if (!vkcu_gpu_metrics_takes(g, a, b)) {
        snprintf(err, errlen, "internal: frames the GPU metrics do not take");
        return AVERROR_BUG;
    }
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(a->format);
    int old = vkcu_cuda_enter(g->device);
    int nb = d->nb_components, peak = (1 << d->comp[0].depth) - 1;
    size_t need = 8;
    for (int i = 0; i < nb; i++) {
        int w, h;
        comp_size(d, a, i, &w, &h);
        size_t s = vkcu_cuda_metrics_scratch(w, h);
        need = s > need ? s : need;
    }
    if (need > g->scratch_size) {
        /* Components run one after the other on the stream: one scratch serves them all. */
        CU_CHECK(cudaStreamSynchronize(g->stream));
        cudaFree(g->scratch);
        g->scratch = NULL;
        g->scratch_size = 0;
        CU_CHECK(cudaMalloc(&g->scratch, need));
        g->scratch_size = need;
    }
    for (int i = 0; i < nb; i++) {
        const AVComponentDescriptor *c = &d->comp[i];
        vkcu_metrics_plane p = {
            .a = a->data[c->plane], .b = b->data[c->plane],
            .pitch_a = (size_t)a->linesize[c->plane], .pitch_b = (size_t)b->linesize[c->plane],
            .wide = c->depth > 8, .c1 = vkcu_ssim_c1(peak), .c2 = vkcu_ssim_c2(peak),
        };
        comp_size(d, a, i, &p.w, &p.h);
        CU_CHECK((cudaError_t)vkcu_cuda_plane_metrics(&p, g->scratch, &g->dev[i], g->stream));
    }
    CU_CHECK(cudaMemcpyAsync(g->host, g->dev, (size_t)nb * sizeof(*g->host), cudaMemcpyDeviceToHost, g->stream));
    CU_CHECK(cudaStreamSynchronize(g->stream));
    for (int i = 0; i < nb; i++) {
        int w, h;
        comp_size(d, a, i, &w, &h);
        int wx = vkcu_ssim_windows_x(w), wy = vkcu_ssim_windows_y(h);
        int64_t place = vkcu_diff_key_place(g->host[i].diff_key);
        st[i].sse = g->host[i].sse;
        st[i].max_diff = vkcu_diff_key_value(g->host[i].diff_key);
        st[i].max_x = (int)(place % w);
        st[i].max_y = (int)(place / w);
        st[i].ssim_sum = wx >= 1 && wy >= 1 ? g->host[i].ssim_sum : 0;
        st[i].ssim_windows = wx >= 1 && wy >= 1 ? (int64_t)wx * wy : 0;
    }
    /* Our reads are done (the wait above); the pool may write these buffers again. */
    vkcu_frame_cuda_release_after(a, (int64_t)(intptr_t)g->stream);
    vkcu_frame_cuda_release_after(b, (int64_t)(intptr_t)g->stream);
    g->pairs++;
    vkcu_cuda_leave(old, g->device);
    return 0;
fail:
    vkcu_cuda_leave(old, g->device);
    return ret;
}
