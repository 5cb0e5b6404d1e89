/* SPDX-License-Identifier: GPL-2.0-or-later */
/* BLAKE3's plain hash with its standard 32-byte digest, streaming form, for
 * frame hashes on the CPU. The math is kernels/blake3_math.h, shared with
 * the GPU hasher. */
#ifndef VKCU_BLAKE3_H
#define VKCU_BLAKE3_H
#include <stddef.h>
#include <stdint.h>

#define VKCU_BLAKE3_LEN 32
#define VKCU_BLAKE3_STAGE 8192 /* eight 1 KiB chunks: the AVX2 path's step */

typedef struct vkcu_blake3 {
    uint32_t cv[8];          /* the current chunk's chaining value so far */
    uint64_t chunk;          /* its index */
    uint32_t blocks;         /* its blocks compressed */
    uint32_t buf_len;
    uint8_t buf[64];         /* the last block seen; compressed once more input shows it is not the last */
    uint32_t stack[54][8];   /* chaining values of complete subtrees, left to right (2^54 chunks) */
    int stack_len;
    uint32_t stage_len;
    uint8_t stage[VKCU_BLAKE3_STAGE]; /* input gathered for the eight-chunk path (blake3.c) */
} vkcu_blake3;

void vkcu_blake3_init(vkcu_blake3 *h);
void vkcu_blake3_update(vkcu_blake3 *h, const uint8_t *data, size_t len);
/* The digest of everything fed so far; h may be fed further afterwards. */
void vkcu_blake3_final(const vkcu_blake3 *h, uint8_t out[VKCU_BLAKE3_LEN]);
#endif
