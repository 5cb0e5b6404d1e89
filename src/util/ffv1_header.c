/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * FFV1 global header fields (ffv1_header.h), after RFC 9043: the header is
 * range coded (section 3.8) with the default state transition table, and
 * its first symbols are the version, for version 3 and later the micro
 * version, then the coder type, all read with one context of 32 states.
 */
#include <string.h>

#include "ffv1_header.h"

typedef struct range_reader {
    const uint8_t *pos, *end;
    uint32_t low, range;
    uint8_t one[256], zero[256];
} range_reader;

/* The default state transition table (RFC 9043 section 3.8.2.4): each
 * state's successor after a 1 bit, built from the adaptation factor 0.05 in
 * 32-bit fixed point with states kept below 248; after a 0 bit the mirror. */
static void default_states(range_reader *r)
{
    const int64_t unit = (int64_t)1 << 32, factor = 214748364 /* 0.05 x 2^32, truncated */, top = 248;
    memset(r->one, 0, sizeof(r->one));
    memset(r->zero, 0, sizeof(r->zero));
    int64_t p = unit / 2;
    int prev = 0;
    for (int i = 0; i < 128; i++) {
        int p8 = (int)((256 * p + unit / 2) >> 32);
        if (p8 <= prev)
            p8 = prev + 1;
        if (prev && prev < 256 && p8 <= top)
            r->one[prev] = (uint8_t)p8;
        p += ((unit - p) * factor + unit / 2) >> 32;
        prev = p8;
    }
    for (int i = 256 - (int)top; i <= top; i++) {
        if (r->one[i])
            continue;
        p = ((int64_t)i * unit + 128) >> 8;
        p += ((unit - p) * factor + unit / 2) >> 32;
        int p8 = (int)((256 * p + unit / 2) >> 32);
        if (p8 <= i)
            p8 = i + 1;
        if (p8 > top)
            p8 = (int)top;
        r->one[i] = (uint8_t)p8;
    }
    for (int i = 1; i < 255; i++)
        r->zero[i] = (uint8_t)(256 - r->one[256 - i]);
}

static int bit(range_reader *r, uint8_t *state)
{
    uint32_t split = (r->range * *state) >> 8;
    int b;
    r->range -= split;
    if (r->low < r->range) {
        *state = r->zero[*state];
        b = 0;
    } else {
        r->low -= r->range;
        r->range = split;
        *state = r->one[*state];
        b = 1;
    }
    if (r->range < 0x100) { /* one byte more; past the end the stream reads as zeros */
        r->range <<= 8;
        r->low <<= 8;
        if (r->pos < r->end)
            r->low += *r->pos++;
    }
    return b;
}

/* An unsigned symbol (RFC 9043 section 3.8.1.2): a zero flag, an exponent in
 * unary, then the mantissa's bits under the top one; -1 when the exponent
 * runs past 31. */
static int64_t symbol(range_reader *r, uint8_t *st)
{
    if (bit(r, &st[0]))
        return 0;
    int e = 0;
    while (bit(r, &st[1 + (e < 9 ? e : 9)]))
        if (++e > 31)
            return -1;
    int64_t a = 1;
    for (int i = e - 1; i >= 0; i--)
        a = 2 * a + bit(r, &st[22 + (i < 9 ? i : 9)]);
    return a;
}

int vkcu_ffv1_header_read(const uint8_t *data, size_t size, int *version, int *coder)
{
    if (!data || size < 4)
        return -1;
    range_reader r = { .pos = data + 2, .end = data + size, .low = (uint32_t)data[0] << 8 | data[1], .range = 0xFF00 };
    if (r.low >= 0xFF00)
        return -1;
    default_states(&r);
    uint8_t st[32];
    memset(st, 128, sizeof(st));
    int64_t v = symbol(&r, st);
    if (v < 2 || v > 4)
        return -1;
    if (v > 2) {
        r.end -= 4; /* the header's CRC */
        if (symbol(&r, st) < 0)
            return -1;
    }
    int64_t c = symbol(&r, st);
    if (c < 0 || c > 2)
        return -1;
    *version = (int)v;
    *coder = (int)c;
    return 0;
}
