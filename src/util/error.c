/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Error codes as text, and as a process's exit status (error.h). */
#include <stdio.h>
#include <libavutil/error.h>

#include "error.h"

const char *vkcu_err_str(int err, char *buf, size_t size)
{
    switch (err) {
    case VKCU_ERR_USAGE: snprintf(buf, size, "invalid usage"); break;
    case VKCU_ERR_INPUT: snprintf(buf, size, "invalid input"); break;
    case VKCU_ERR_OUTPUT: snprintf(buf, size, "cannot write output"); break;
    case VKCU_ERR_DEVICE: snprintf(buf, size, "GPU device error"); break;
    case VKCU_ERR_MISMATCH: snprintf(buf, size, "mismatch"); break;
    case VKCU_ERR_INTERRUPT: snprintf(buf, size, "interrupted"); break;
    case VKCU_ERR_PIPE_CLOSED: snprintf(buf, size, "standard output closed by its reader"); break;
    default: av_strerror(err, buf, size); break;
    }
    return buf;
}

int vkcu_exit_code(int err)
{
    switch (err) {
    case 0: return VKCU_EXIT_OK;
    case VKCU_ERR_USAGE: return VKCU_EXIT_USAGE;
    case VKCU_ERR_INPUT: return VKCU_EXIT_INPUT;
    case VKCU_ERR_OUTPUT: return VKCU_EXIT_OUTPUT;
    case VKCU_ERR_DEVICE: return VKCU_EXIT_DEVICE;
    case VKCU_ERR_MISMATCH: return VKCU_EXIT_MISMATCH;
    case VKCU_ERR_INTERRUPT: return VKCU_EXIT_INTERRUPT;
    case VKCU_ERR_PIPE_CLOSED: return VKCU_EXIT_OK;
    default: return VKCU_EXIT_FAIL;
    }
}
