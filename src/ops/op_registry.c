/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The operator classes users can name in a chain. */
#include <stddef.h>
#include "op.h"

extern const vkcu_op_class vkcu_op_denoise;
extern const vkcu_op_class vkcu_op_convert, vkcu_op_tonemap;
extern const vkcu_op_class vkcu_op_deinterlace;

extern const vkcu_op_class vkcu_op_copy;
extern const vkcu_op_class vkcu_op_crop, vkcu_op_pad;
extern const vkcu_op_class vkcu_op_fps;
extern const vkcu_op_class vkcu_op_scale;

const vkcu_op_class *const vkcu_op_classes[] = {
    &vkcu_op_copy,
    &vkcu_op_denoise,
    &vkcu_op_convert,
    &vkcu_op_tonemap,
    &vkcu_op_crop,
    &vkcu_op_pad,
    &vkcu_op_fps,
    &vkcu_op_scale,
    &vkcu_op_deinterlace,
    NULL,
};
