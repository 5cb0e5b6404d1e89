/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu public API: numbers read from text as vkcu reads them. The command
 * line, presets (*.pipe), manifests and chain keys take every number
 * through these parsers, so each refuses the same things: empty text,
 * leading blanks or '+', trailing characters, overflow, NaN and
 * infinities, values outside the range asked for. A program that takes
 * vkcu's settings as text (its own options, a configuration file) reads
 * them with these to accept exactly what vkcu does.
 *
 * Every function returns 0 with *out set, or -EINVAL and leaves *out
 * alone. None keeps state: all are thread-safe.
 */
#ifndef VKCU_NUMBER_H
#define VKCU_NUMBER_H

#include <stdint.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The bitrates vkcu_parse_bitrate accepts, in bits per second. */
#define VKCU_BITRATE_MIN 1000LL
#define VKCU_BITRATE_MAX 10000000000LL

/**
 * Reads a decimal integer: an optional '-', then digits, nothing else.
 *
 * @param text the text; NULL and "" are refused.
 * @param lo   the smallest value accepted.
 * @param hi   the largest value accepted.
 * @param out  receives the value.
 * @return 0, or -EINVAL (not such an integer, or outside [lo, hi]).
 */
VKCU_API int vkcu_parse_int(const char *text, int64_t lo, int64_t hi, int64_t *out);

/**
 * Reads a finite decimal number ("12", "-0.5", "1e3").
 *
 * @return 0, or -EINVAL (not a finite number, or outside [lo, hi]).
 */
VKCU_API int vkcu_parse_number(const char *text, double lo, double hi, double *out);

/**
 * Reads a bitrate: a number of bits per second, optionally followed by k,
 * M or G (either case: thousands, millions, billions), as "4M", "800k",
 * "2.5M" or "2500000", rounded to a whole number.
 *
 * @return 0, or -EINVAL (not a bitrate, or outside
 *         [VKCU_BITRATE_MIN, VKCU_BITRATE_MAX]).
 */
VKCU_API int vkcu_parse_bitrate(const char *text, int64_t *out);

#ifdef __cplusplus
}
#endif
#endif
