/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu's error codes, exit codes and log levels: the vocabulary every layer
 * reports in, so it sits at the bottom (util/) where the logger and the
 * operators reach it without including the job's header.
 */
#ifndef VKCU_UTIL_ERROR_H
#define VKCU_UTIL_ERROR_H

/* Errors beyond AVERROR codes. Each maps to a documented exit code. */
#define VKCU_ERR_USAGE     (-0x56430001) /* bad option or argument */
#define VKCU_ERR_INPUT     (-0x56430002) /* input missing, empty, corrupt, unsupported */
#define VKCU_ERR_OUTPUT    (-0x56430003) /* output not writable, disk full */
#define VKCU_ERR_DEVICE    (-0x56430004) /* no usable GPU, device lost, stall */
#define VKCU_ERR_MISMATCH  (-0x56430005) /* compare/verify found a difference */
#define VKCU_ERR_INTERRUPT (-0x56430006) /* stopped by a signal */
#define VKCU_ERR_PIPE_CLOSED (-0x56430007) /* the reader of standard output has gone (| head): exit 0, quietly */

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

enum vkcu_log_level { VKCU_LOG_QUIET = -1, VKCU_LOG_ERROR = 0, VKCU_LOG_WARNING, VKCU_LOG_INFO, VKCU_LOG_VERBOSE, VKCU_LOG_DEBUG };

#endif
