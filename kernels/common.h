/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by gcc (CPU reference) and nvcc (CUDA kernels): the qualifier that
 * makes one per-pixel function compile for both, and small integer helpers.
 * Kernel math headers include this and nothing backend-specific.
 */
#ifndef VKCU_KERNELS_COMMON_H
#define VKCU_KERNELS_COMMON_H

#include <stdint.h>

#ifdef __CUDACC__
#define VKCU_HD __host__ __device__ __forceinline__
#else
#define VKCU_HD static inline
#endif

VKCU_HD int vkcu_clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }
VKCU_HD float vkcu_clampf(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }
VKCU_HD int vkcu_mini(int a, int b) { return a < b ? a : b; }
VKCU_HD int vkcu_maxi(int a, int b) { return a > b ? a : b; }

#endif
