/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu's error codes, exit codes and log levels: the vocabulary every layer
 * reports in, so it sits at the bottom (util/) where the logger and the
 * operators reach it without including the job's header.
 */
#ifndef VKCU_UTIL_ERROR_H
#define VKCU_UTIL_ERROR_H

/* The error codes (VKCU_ERR_*) and log levels are the public API's
 * (vkcu/common.h): the bottom layer, below util/. */
#include <stddef.h>
#include <vkcu/common.h>

/* Process exit codes (README and --help list them). */
enum vkcu_exit {
    VKCU_EXIT_OK = 0,
    VKCU_EXIT_FAIL = 1,      /* anything else */
    VKCU_EXIT_USAGE = 2,
    VKCU_EXIT_INPUT = 3,
    VKCU_EXIT_OUTPUT = 4,
    VKCU_EXIT_DEVICE = 5,
    VKCU_EXIT_MISMATCH = 6,
    VKCU_EXIT_INTERRUPT = 130,
};

/* Text for a vkcu or AVERROR code, into buf; returns buf. */
const char *vkcu_err_str(int err, char *buf, size_t size);
/* Maps 0 or a negative error to a process exit code. */
int vkcu_exit_code(int err);

#endif
