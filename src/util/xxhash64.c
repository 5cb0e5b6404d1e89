/* SPDX-License-Identifier: GPL-2.0-or-later */
/* XXH64, written from the algorithm's public specification. */
#include <string.h>
#include "xxhash64.h"

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL
#define P5 0x27D4EB2F165667C5ULL

static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; } /* little-endian hosts */
static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t round1(uint64_t acc, uint64_t in) { acc += in * P2; acc = rotl(acc, 31); return acc * P1; }
static uint64_t merge(uint64_t acc, uint64_t v) { acc ^= round1(0, v); return acc * P1 + P4; }

void vkcu_xxh64_init(vkcu_xxh64_state *s, uint64_t seed)
{
    memset(s, 0, sizeof(*s));
    s->seed = seed;
    s->v[0] = seed + P1 + P2;
    s->v[1] = seed + P2;
    s->v[2] = seed;
    s->v[3] = seed - P1;
}

void vkcu_xxh64_update(vkcu_xxh64_state *s, const uint8_t *p, size_t len)
{
    s->total += len;
    if (s->buffered + len < 32) {
        memcpy(s->buf + s->buffered, p, len);
        s->buffered += len;
        return;
    }
    if (s->buffered) {
        size_t fill = 32 - s->buffered;
        memcpy(s->buf + s->buffered, p, fill);
        for (int i = 0; i < 4; i++)
            s->v[i] = round1(s->v[i], rd64(s->buf + 8 * i));
        p += fill;
        len -= fill;
        s->buffered = 0;
    }
    while (len >= 32) {
        for (int i = 0; i < 4; i++)
            s->v[i] = round1(s->v[i], rd64(p + 8 * i));
        p += 32;
        len -= 32;
    }
    memcpy(s->buf, p, len);
    s->buffered = len;
}

uint64_t vkcu_xxh64_digest(const vkcu_xxh64_state *s)
{
    uint64_t h;
    if (s->total >= 32) {
        h = rotl(s->v[0], 1) + rotl(s->v[1], 7) + rotl(s->v[2], 12) + rotl(s->v[3], 18);
        for (int i = 0; i < 4; i++)
            h = merge(h, s->v[i]);
    } else {
        h = s->seed + P5;
    }
    h += s->total;
    const uint8_t *p = s->buf;
    size_t len = s->buffered;
    while (len >= 8) {
        h ^= round1(0, rd64(p));
        h = rotl(h, 27) * P1 + P4;
        p += 8;
        len -= 8;
    }
    if (len >= 4) {
        h ^= (uint64_t)rd32(p) * P1;
        h = rotl(h, 23) * P2 + P3;
        p += 4;
        len -= 4;
    }
    while (len--) {
        h ^= (*p++) * P5;
        h = rotl(h, 11) * P1;
    }
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}
