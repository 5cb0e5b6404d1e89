/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Why CUDA offers no device, said for people (see cuda_absent.h): shared by
 * `vkcu probe`, the session's open and the shared device's CUDA thread, so
 * that none of them calls into another's file for it. */
#include <dlfcn.h>
#include <stdio.h>
#include <cuda_runtime_api.h>

#include "cuda_absent.h"

const char *vkcu_cuda_absent_text(int ce, char *buf, size_t size)
{
    /* The static runtime loads the driver's libcuda.so.1 itself; without it
     * every call fails with "driver version is insufficient". */
    void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (driver)
        dlclose(driver);
    if (!driver && (ce == cudaErrorInsufficientDriver || ce == cudaErrorNoDevice || ce == cudaSuccess))
        snprintf(buf, size, "no CUDA device: no NVIDIA driver found (libcuda.so.1 is not installed)");
    else if (ce == cudaErrorInsufficientDriver) {
        int rt = 0, drv = 0;
        cudaRuntimeGetVersion(&rt);
        cudaDriverGetVersion(&drv);
        snprintf(buf, size, "no CUDA device: the NVIDIA driver supports CUDA %d.%d, older than the CUDA %d.%d vkcu "
                 "was built with (update the driver)", drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10);
    } else if (ce == cudaSuccess || ce == cudaErrorNoDevice)
        snprintf(buf, size, "no CUDA device: no NVIDIA GPU found (the driver is installed but sees no device)");
    else
        snprintf(buf, size, "no CUDA device (%s)", cudaGetErrorString((cudaError_t)ce));
    return buf;
}
