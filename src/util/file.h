/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one whole-file reader: hash lists (regress/hash_list.c) and pipeline
 * presets (batch/preset.c) both load their text through it. It reports
 * what went wrong as a status, and each caller words its own message, so
 * that each keeps its exit codes and wording.
 */
#ifndef VKCU_UTIL_FILE_H
#define VKCU_UTIL_FILE_H

#include <stddef.h>
#include <stdio.h>
#include <vkcu/job.h>

enum vkcu_read_status {
    VKCU_READ_OK = 0,
    VKCU_READ_OPEN,        /* cannot open: the errno in *os_err */
    VKCU_READ_NOT_REGULAR, /* VKCU_READ_REGULAR asked, and it is not a regular file */
    VKCU_READ_TOO_BIG,     /* more than max bytes */
    VKCU_READ_NOMEM,
    VKCU_READ_IO,          /* a read error (a folder, a device that fails) */
};

/* flags: only regular files (no pipes, devices or folders) */
#define VKCU_READ_REGULAR 1

/* Reads the whole file into *data (NUL-terminated, *len bytes before the
 * NUL; free() it). max: the most bytes accepted, 0 for no limit. Pipes and
 * FIFOs are read to their end unless VKCU_READ_REGULAR refuses them. On
 * any status but OK nothing is allocated. Thread-safe. */
enum vkcu_read_status vkcu_read_file(const char *path, size_t max, int flags, char **data, size_t *len, int *os_err);

/* vkcu_stream_reader_gone (file.c) is public (vkcu/job.h). */

#endif
