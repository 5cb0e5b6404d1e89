/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The one convention for a failed call, in C and in CUDA C++ (after
 * libplacebo's VK()). A function that uses CU_CHECK (here) or VK_CHECK
 * (src/gpu/check.h) has `char *err, size_t errlen` (or locals of those
 * names), an `int ret` and a `fail:` label that releases what it holds and
 * returns ret (a function that returns a handle notes ret where its caller
 * finds it). A failed call writes its one-line reason into err,
 * "CUDA: <call> failed: <reason> (file:line)", sets ret to VKCU_CHECK_ERR
 * and goes to fail. A failure worth its own words (a lost device, a format
 * the driver refuses) is tested by hand and says so instead.
 *
 * FFmpeg's calls have no macro: `if ((ret = call) < 0) goto fail;` keeps
 * the AVERROR, which the caller turns into its line with the file's name.
 * tools/check-layers.py refuses any other macro that jumps to a label. */
#ifndef VKCU_KERNELS_CHECK_H
#define VKCU_KERNELS_CHECK_H

#include <stdio.h>

/* VKCU_ERR_DEVICE (include/vkcu/common.h), which kernels/ does not
 * include: src/gpu/check.h asserts that the two are equal. */
#define VKCU_CHECK_ERR (-0x56430004)

#define VKCU_CALL_FAILED(api, call, why)                                                                  \
    do {                                                                                                  \
        snprintf(err, errlen, "%s: %s failed: %s (%s:%d)", api, call, why, __FILE__, __LINE__);           \
        ret = VKCU_CHECK_ERR;                                                                             \
        goto fail;                                                                                        \
    } while (0)

/* Needs cuda_runtime_api.h. */
#define CU_CHECK(call)                                                                                    \
    do {                                                                                                  \
        cudaError_t cu_res_ = (call);                                                                     \
        if (cu_res_ != cudaSuccess)                                                                       \
            VKCU_CALL_FAILED("CUDA", #call, cudaGetErrorString(cu_res_));                                 \
    } while (0)

#endif
