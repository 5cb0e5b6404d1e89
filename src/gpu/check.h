/* SPDX-License-Identifier: GPL-2.0-or-later */
/* VK_CHECK, beside kernels/check.h's CU_CHECK: the one convention for a
 * failed call (see there). Needs vkfn.h (vkcu_vk_result_str). */
#ifndef VKCU_GPU_CHECK_H
#define VKCU_GPU_CHECK_H

#include "kernels/check.h"
#include "util/error.h"

_Static_assert(VKCU_CHECK_ERR == VKCU_ERR_DEVICE, "kernels/check.h: VKCU_CHECK_ERR is VKCU_ERR_DEVICE");

#define VK_CHECK(call)                                                                                    \
    do {                                                                                                  \
        VkResult vk_res_ = (call);                                                                        \
        if (vk_res_ != VK_SUCCESS)                                                                        \
            VKCU_CALL_FAILED("Vulkan", #call, vkcu_vk_result_str(vk_res_));                               \
    } while (0)

#endif
