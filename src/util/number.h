/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Numbers from text: the one parser per kind that every command-line
 * option, chain operator key, preset key and manifest key goes through, so
 * that each rejects the same things (empty text, blanks, trailing junk,
 * overflow, NaN and infinities, values outside the key's range) and each
 * error can name the accepted range.
 *
 * All functions return 0 with *out set, or -1 and leave *out alone.
 * They keep no state: thread-safe.
 */
#ifndef VKCU_NUMBER_H
#define VKCU_NUMBER_H

#include <stdint.h>

/* A decimal integer in [lo, hi]: optional '-', digits, nothing else. */
int vkcu_parse_int(const char *text, int64_t lo, int64_t hi, int64_t *out);

/* A finite decimal number in [lo, hi] ("12", "0.5", "1e3"). */
int vkcu_parse_number(const char *text, double lo, double hi, double *out);

/* Bitrates: "4M", "800k", "2500000" (bits per second), a whole number of
 * bits per second in [VKCU_BITRATE_MIN, VKCU_BITRATE_MAX]. */
#define VKCU_BITRATE_MIN 1000LL
#define VKCU_BITRATE_MAX 10000000000LL
int vkcu_parse_bitrate(const char *text, int64_t *out);

/* Encoder settings: one range for the command line and preset keys.
 * gop 0 is the encoder's own default (a preset can override a default
 * GOP back with it, as --gop 0 does). */
#define VKCU_CRF_MAX 63
#define VKCU_GOP_MAX 100000

#endif
