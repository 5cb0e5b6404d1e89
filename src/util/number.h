/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Numbers from text: the one parser per kind that every command-line
 * option, chain operator key, preset key and manifest key goes through, so
 * that each rejects the same things (empty text, blanks, trailing junk,
 * overflow, NaN and infinities, values outside the key's range) and each
 * error can name the accepted range.
 *
 * The parsers and the bitrate range are public (vkcu/number.h), and so are
 * the encoder settings' ranges (VKCU_CRF_MAX, VKCU_GOP_MAX: vkcu/job.h).
 */
#ifndef VKCU_UTIL_NUMBER_H
#define VKCU_UTIL_NUMBER_H

#include <vkcu/job.h>
#include <vkcu/number.h>

#endif
