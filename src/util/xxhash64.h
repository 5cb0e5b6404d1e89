/* SPDX-License-Identifier: GPL-2.0-or-later */
/* XXH64 (Yann Collet's 64-bit hash), streaming form, for frame hashes. */
#ifndef VKCU_XXHASH64_H
#define VKCU_XXHASH64_H
#include <stddef.h>
#include <stdint.h>

typedef struct vkcu_xxh64_state {
    uint64_t total, v[4];
    uint8_t buf[32];
    size_t buffered;
    uint64_t seed;
} vkcu_xxh64_state;

void vkcu_xxh64_init(vkcu_xxh64_state *s, uint64_t seed);
void vkcu_xxh64_update(vkcu_xxh64_state *s, const uint8_t *data, size_t len);
uint64_t vkcu_xxh64_digest(const vkcu_xxh64_state *s);
#endif
