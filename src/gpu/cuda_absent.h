/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The one line vkcu says when CUDA offers no device (probe, the session and
 * the shared device say it alike). */
#ifndef VKCU_GPU_CUDA_ABSENT_H
#define VKCU_GPU_CUDA_ABSENT_H

#include <stddef.h>

/* Why CUDA offers no device, for people: cudaGetDeviceCount's error `ce`
 * (0 with n == 0: no device) said as what to check: "no CUDA device: no
 * NVIDIA driver found (libcuda.so.1 ...)" where the runtime's "CUDA driver
 * version is insufficient" only means that the driver is missing. Returns
 * buf. */
const char *vkcu_cuda_absent_text(int ce, char *buf, size_t size);

#endif
