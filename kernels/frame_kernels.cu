/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The GPU session's own kernels: reading a frame (interop arrays through
 * texture objects, or pitch-linear memory) into the planar host layout, and
 * the plane copy behind the `copy` operator.
 */
#include <cuda_runtime.h>

#include "frame_kernels.h"
#include "plane.cuh"

extern "C" {
#include <libavutil/pixdesc.h>
}

extern "C" void vkcu_plane_layout(int pix_fmt, int plane, int *bytes, int *comps, int *log2_w, int *log2_h)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get((enum AVPixelFormat)pix_fmt);
    int b = 1, c = 0;
    for (int i = 0; i < d->nb_components; i++) {
        if (d->comp[i].plane != plane)
            continue;
        c++;
        b = d->comp[i].depth > 8 ? 2 : 1;
    }
    *bytes = b;
    *comps = c;
    *log2_w = (plane == 1 || plane == 2) ? d->log2_chroma_w : 0;
    *log2_h = (plane == 1 || plane == 2) ? d->log2_chroma_h : 0;
}

extern "C" int vkcu_nb_planes(int pix_fmt)
{
    return av_pix_fmt_count_planes((enum AVPixelFormat)pix_fmt);
}

/* The 4:2:0 layout semi_to_planar and to_semiplanar share: one thread per
 * chroma sample (*cx, *cy) and its 2x2 luma quad, whose samples it writes
 * as (v >> RSHIFT) << LSHIFT to the rows at dst + oy, ly bytes apart.
 * false (nothing written) for a thread past the chroma plane. */
template <typename T, int RSHIFT, int LSHIFT>
__device__ __forceinline__ bool luma_quad(vkcu_gpu_plane y, uint8_t *dst, size_t oy, int ly, int w, int h, int *cx_out,
                                          int *cy_out)
{
    int cx = blockIdx.x * blockDim.x + threadIdx.x;
    int cy = blockIdx.y * blockDim.y + threadIdx.y;
    int cw = (w + 1) >> 1, ch = (h + 1) >> 1;
    if (cx >= cw || cy >= ch)
        return false;
    for (int dy = 0; dy < 2; dy++) {
        int yy = 2 * cy + dy;
        if (yy >= h)
            break;
        T *row = (T *)(dst + oy + (size_t)yy * ly);
        for (int dx = 0; dx < 2; dx++) {
            int xx = 2 * cx + dx;
            if (xx < w)
                row[xx] = (T)((plane_load<T>(y, xx, yy) >> RSHIFT) << LSHIFT);
        }
    }
    *cx_out = cx;
    *cy_out = cy;
    return true;
}

/* NV12/P010 -> planar: one thread per chroma sample (a 2x2 luma quad). */
template <typename T, typename T2, int SHIFT>
__global__ void semi_to_planar(vkcu_gpu_plane y, vkcu_gpu_plane uv, uint8_t *dst, size_t oy, size_t ou, size_t ov,
                               int ly, int lc, int w, int h)
{
    int cx, cy;
    if (!luma_quad<T, SHIFT, 0>(y, dst, oy, ly, w, h, &cx, &cy))
        return;
    T2 c = plane_load<T2>(uv, cx, cy);
    ((T *)(dst + ou + (size_t)cy * lc))[cx] = (T)(c.x >> SHIFT);
    ((T *)(dst + ov + (size_t)cy * lc))[cx] = (T)(c.y >> SHIFT);
}

/* Any 4:2:0 frame of the ring -> the semi-planar layout of FFmpeg's NV12 /
 * P010 (the Vulkan encoder's input images): one thread per chroma sample
 * and its 2x2 luma quad, as semi_to_planar. Samples are written as
 * (v >> RSHIFT) << LSHIFT: P010 in, P010 out keeps only the 10 bits the
 * host download keeps; yuv420p10 (value in the low bits) moves up by 6. */
template <typename T, typename T2, bool SEMI, int RSHIFT, int LSHIFT>
__global__ void to_semiplanar(vkcu_gpu_plane y, vkcu_gpu_plane u, vkcu_gpu_plane v, uint8_t *dst, size_t oy, size_t oc,
                              int ly, int lc, int w, int h)
{
    int cx, cy;
    if (!luma_quad<T, RSHIFT, LSHIFT>(y, dst, oy, ly, w, h, &cx, &cy))
        return;
    T cb, cr;
    if (SEMI) {
        T2 c = plane_load<T2>(u, cx, cy);
        cb = c.x, cr = c.y;
    } else {
        cb = plane_load<T>(u, cx, cy);
        cr = plane_load<T>(v, cx, cy);
    }
    T *crow = (T *)(dst + oc + (size_t)cy * lc);
    crow[2 * cx] = (T)((cb >> RSHIFT) << LSHIFT);
    crow[2 * cx + 1] = (T)((cr >> RSHIFT) << LSHIFT);
}

/* Any plane of 1-2 byte samples, copied row by row (element = bytes*comps). */
template <typename E>
__global__ void plane_copy(vkcu_gpu_plane src, uint8_t *dst, int linesize, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    ((E *)(dst + (size_t)y * linesize))[x] = plane_load<E>(src, x, y);
}

template <typename E>
__global__ void plane_copy_to(vkcu_gpu_plane src, vkcu_gpu_plane dst, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    plane_store<E>(dst, x, y, plane_load<E>(src, x, y));
}

static dim3 grid_for(int w, int h, dim3 block)
{
    return dim3((w + block.x - 1) / block.x, (h + block.y - 1) / block.y);
}

/* Element types by (bytes per sample, samples per pixel): a texture must be
 * read with the type of its channel format. */
template <template <typename> class K, typename... A>
static int dispatch_elem(int bytes, int comps, dim3 grid, dim3 block, cudaStream_t st, A... args)
{
    switch (bytes * 8 + comps) {
    case 9: K<uint8_t>::launch(grid, block, st, args...); break;
    case 10: K<uchar2>::launch(grid, block, st, args...); break;
    case 12: K<uchar4>::launch(grid, block, st, args...); break;
    case 17: K<uint16_t>::launch(grid, block, st, args...); break;
    case 18: K<ushort2>::launch(grid, block, st, args...); break;
    case 20: K<ushort4>::launch(grid, block, st, args...); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

template <typename E> struct copy_to_linear {
    static void launch(dim3 g, dim3 b, cudaStream_t st, vkcu_gpu_plane src, uint8_t *dst, int linesize)
    {
        plane_copy<E><<<g, b, 0, st>>>(src, dst, linesize, src.width, src.height);
    }
};
template <typename E> struct copy_to_plane {
    static void launch(dim3 g, dim3 b, cudaStream_t st, vkcu_gpu_plane src, vkcu_gpu_plane dst)
    {
        plane_copy_to<E><<<g, b, 0, st>>>(src, dst, src.width, src.height);
    }
};

static int launch_plane_copy(const vkcu_gpu_plane &src, uint8_t *dst, int linesize, int bytes, int comps,
                             cudaStream_t st)
{
    dim3 block(32, 8), grid = grid_for(src.width, src.height, block);
    if (comps == 3 && src.ptr) /* packed 24/48-bit RGB: bytes, row by row */
        return cudaMemcpy2DAsync(dst, linesize, src.ptr, src.pitch, (size_t)src.width * bytes * comps, src.height,
                                 cudaMemcpyDeviceToDevice, st);
    return dispatch_elem<copy_to_linear>(bytes, comps, grid, block, st, src, dst, linesize);
}

extern "C" int vkcu_cuda_to_planar(const vkcu_gpu_frame *in, int host_fmt, uint8_t *dst, const size_t offset[4],
                                   const int linesize[4], void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    int w = in->fmt.width, h = in->fmt.height;
    if (in->fmt.pix_fmt == AV_PIX_FMT_NV12 || in->fmt.pix_fmt == AV_PIX_FMT_P010) {
        dim3 block(32, 8), grid = grid_for((w + 1) >> 1, (h + 1) >> 1, block);
        if (in->fmt.pix_fmt == AV_PIX_FMT_NV12)
            semi_to_planar<uint8_t, uchar2, 0><<<grid, block, 0, st>>>(in->plane[0], in->plane[1], dst, offset[0], offset[1],
                                                                      offset[2], linesize[0], linesize[1], w, h);
        else
            semi_to_planar<uint16_t, ushort2, 6><<<grid, block, 0, st>>>(in->plane[0], in->plane[1], dst, offset[0],
                                                                        offset[1], offset[2], linesize[0], linesize[1], w, h);
        return cudaGetLastError();
    }
    if (host_fmt != in->fmt.pix_fmt)
        return cudaErrorInvalidValue;
    for (int p = 0; p < in->nb_planes; p++) {
        int bytes, comps, lw, lh;
        vkcu_plane_layout(in->fmt.pix_fmt, p, &bytes, &comps, &lw, &lh);
        int e = launch_plane_copy(in->plane[p], dst + offset[p], linesize[p], bytes, comps, st);
        if (e)
            return e;
    }
    return 0;
}

extern "C" int vkcu_cuda_to_semiplanar(const vkcu_gpu_frame *in, uint8_t *dst, const size_t offset[2],
                                       const int pitch[2], void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    int w = in->fmt.width, h = in->fmt.height;
    dim3 block(32, 8), grid = grid_for((w + 1) >> 1, (h + 1) >> 1, block);
    const vkcu_gpu_plane *p = in->plane;
    switch (in->fmt.pix_fmt) {
    case AV_PIX_FMT_NV12:
        to_semiplanar<uint8_t, uchar2, true, 0, 0><<<grid, block, 0, st>>>(p[0], p[1], p[1], dst, offset[0], offset[1],
                                                                            pitch[0], pitch[1], w, h);
        break;
    case AV_PIX_FMT_P010:
        to_semiplanar<uint16_t, ushort2, true, 6, 6><<<grid, block, 0, st>>>(p[0], p[1], p[1], dst, offset[0], offset[1],
                                                                              pitch[0], pitch[1], w, h);
        break;
    case AV_PIX_FMT_YUV420P:
        to_semiplanar<uint8_t, uchar2, false, 0, 0><<<grid, block, 0, st>>>(p[0], p[1], p[2], dst, offset[0], offset[1],
                                                                             pitch[0], pitch[1], w, h);
        break;
    case AV_PIX_FMT_YUV420P10:
        to_semiplanar<uint16_t, ushort2, false, 0, 6><<<grid, block, 0, st>>>(p[0], p[1], p[2], dst, offset[0], offset[1],
                                                                               pitch[0], pitch[1], w, h);
        break;
    default:
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

extern "C" int vkcu_cuda_copy_frame(const vkcu_gpu_frame *in, const vkcu_gpu_frame *out, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    for (int p = 0; p < in->nb_planes; p++) {
        int bytes, comps, lw, lh;
        vkcu_plane_layout(in->fmt.pix_fmt, p, &bytes, &comps, &lw, &lh);
        const vkcu_gpu_plane &s = in->plane[p];
        dim3 block(32, 8), grid = grid_for(s.width, s.height, block);
        int e = comps == 3 ? (int)cudaMemcpy2DAsync(out->plane[p].ptr, out->plane[p].pitch, s.ptr, s.pitch,
                                                    (size_t)s.width * bytes * 3, s.height, cudaMemcpyDeviceToDevice, st)
                           : dispatch_elem<copy_to_plane>(bytes, comps, grid, block, st, s, out->plane[p]);
        if (e)
            return e;
    }
    return 0;
}
