/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu's error codes, exit codes and log levels: the vocabulary every layer
 * reports in, so it sits at the bottom (util/) where the logger and the
 * operators reach it without including the job's header.
 */
#ifndef VKCU_UTIL_ERROR_H
#define VKCU_UTIL_ERROR_H

#include <stddef.h>
/* The error codes (VKCU_ERR_*), the exit codes (enum vkcu_exit,
 * vkcu_exit_code, defined in error.c) and the log levels are the public
 * API's (vkcu/common.h): the bottom layer, below util/. */
#include <vkcu/common.h>

/* Text for a vkcu or AVERROR code, into buf; returns buf. */
const char *vkcu_err_str(int err, char *buf, size_t size);

#endif
