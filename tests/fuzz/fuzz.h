/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by the fuzz targets (tests/fuzz/README.md). Each target is one
 * LLVMFuzzerTestOneInput: built with libFuzzer by `make fuzz`, and with
 * replay.c's main() by `make` so that `make test` replays the regression
 * inputs and seed corpus without clang.
 *
 * A target fails (abort, which libFuzzer saves as a crash) on memory errors
 * and on broken promises a user would see: an unexpected error code, or an
 * error message that is empty, spans lines or does not name the input.
 */
#ifndef VKCU_FUZZ_H
#define VKCU_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/vkcu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                               \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
            abort();                                                        \
        }                                                                   \
    } while (0)

/* What every user-facing error message promises: one non-empty line that
 * starts with `prefix` (the file it is about; "" for none). */
static inline void fuzz_check_message(const char *err, const char *prefix)
{
    FUZZ_CHECK(err[0], "empty error message");
    FUZZ_CHECK(!strchr(err, '\n'), "message spans lines: %s", err);
    FUZZ_CHECK(!strncmp(err, prefix, strlen(prefix)), "message does not start with '%s': %s", prefix, err);
}

/* Logging off (vkcu's and FFmpeg's): messages cost time on every input,
 * and the targets check the messages they get back instead. */
static inline void fuzz_quiet(void)
{
    static int done;
    if (!done) {
        vkcu_set_log_level(VKCU_LOG_QUIET);
        done = 1;
    }
}

/* The input as a NUL-terminated string (inputs with a NUL are cut there,
 * as a C string from argv or a file read with fgets would be). */
static inline char *fuzz_strndup(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = 0;
    return s;
}

#endif
