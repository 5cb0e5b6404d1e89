/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Strict number parsing (number.h). strtol/strtod alone accept leading
 * blanks, "nan", "inf" and out-of-range values (clamped, with only errno
 * to tell); a value cast from such a double to an integer is undefined
 * behaviour. Everything numeric a user types comes through here.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "number.h"

/* strtoX skip leading blanks and take a '+'; we accept neither. */
static int starts_well(const char *text)
{
    return text && *text && !isspace((unsigned char)*text) && *text != '+';
}

int vkcu_parse_int(const char *text, int64_t lo, int64_t hi, int64_t *out)
{
    if (!starts_well(text))
        return -EINVAL;
    char *end;
    errno = 0;
    long long x = strtoll(text, &end, 10);
    if (*end || errno || x < lo || x > hi)
        return -EINVAL;
    *out = x;
    return 0;
}

int vkcu_parse_number(const char *text, double lo, double hi, double *out)
{
    if (!starts_well(text))
        return -EINVAL;
    char *end;
    /* Overflow gives an infinity, caught here; underflow ("1e-400") is a fine zero. */
    double x = strtod(text, &end);
    if (*end || !isfinite(x) || !(x >= lo && x <= hi))
        return -EINVAL;
    *out = x;
    return 0;
}

int vkcu_parse_bitrate(const char *text, int64_t *out)
{
    if (!starts_well(text))
        return -EINVAL;
    char *end;
    double x = strtod(text, &end);
    if (end == text || !isfinite(x))
        return -EINVAL;
    if (*end == 'k' || *end == 'K')
        x *= 1e3, end++;
    else if (*end == 'M' || *end == 'm')
        x *= 1e6, end++;
    else if (*end == 'G' || *end == 'g')
        x *= 1e9, end++;
    /* The range check comes before the cast: it is what makes the cast defined. */
    if (*end || !(x >= (double)VKCU_BITRATE_MIN && x <= (double)VKCU_BITRATE_MAX))
        return -EINVAL;
    *out = llround(x);
    return 0;
}
