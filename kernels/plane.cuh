/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Device-side access to a vkcu_gpu_plane: reads go through the texture object
 * when the plane is a CUDA array (imported interop image), else through the
 * pitch-linear pointer; writes go to the surface or the pointer. The branch
 * is uniform across a launch, so it costs nothing measurable.
 */
#ifndef VKCU_PLANE_CUH
#define VKCU_PLANE_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include "frame.h"

template <typename T>
__device__ __forceinline__ T plane_load(const vkcu_gpu_plane &p, int x, int y)
{
    if (p.tex)
        return tex2D<T>((cudaTextureObject_t)p.tex, x, y);
    return *(const T *)(p.ptr + (size_t)y * p.pitch + (size_t)x * sizeof(T));
}

template <typename T>
__device__ __forceinline__ void plane_store(const vkcu_gpu_plane &p, int x, int y, T v)
{
    if (p.surf)
        surf2Dwrite<T>(v, (cudaSurfaceObject_t)p.surf, x * (int)sizeof(T), y);
    else
        *(T *)(p.ptr + (size_t)y * p.pitch + (size_t)x * sizeof(T)) = v;
}

#endif
