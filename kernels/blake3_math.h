/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * BLAKE3 (O'Connor, Aumasson, Neves, Wilcox-O'Hearn: "BLAKE3, one function,
 * fast everywhere", 2020), the parts both backends share: the compression
 * function and the parent node. gcc compiles it for the CPU hasher
 * (src/util/blake3.c, streaming) and nvcc for the GPU one
 * (kernels/hash_kernels.cu, one thread per chunk, then a tree reduction),
 * so the two cannot disagree on the arithmetic.
 *
 * Only the plain hash mode with the default 32-byte output is used: the key
 * words are the IV (SHA-256's), and a digest is the first 8 words of the
 * root node's compression output (output block counter 0), little-endian.
 * The tree over 1 KiB chunks is the spec's: left subtrees are complete
 * binary trees of 2^k chunks, which is also what pairing adjacent nodes
 * level by level gives, an odd last node moving up unchanged.
 */
#ifndef VKCU_BLAKE3_MATH_H
#define VKCU_BLAKE3_MATH_H

#include "common.h"

#define B3_OUT_LEN 32
#define B3_BLOCK_LEN 64
#define B3_CHUNK_LEN 1024
/* The GPU hasher's grouping: a thread block hashes this many consecutive
 * chunks and reduces them to one subtree's chaining value; later passes
 * reduce this many nodes per block. Powers of two, so each group is an
 * aligned subtree of the spec's tree (tests/unit/test_blake3.c replays the
 * grouping on the CPU). */
#define B3_GPU_CHUNKS_PER_BLOCK 64
#define B3_GPU_NODES_PER_BLOCK 256

enum {
    B3_CHUNK_START = 1 << 0,
    B3_CHUNK_END = 1 << 1,
    B3_PARENT = 1 << 2,
    B3_ROOT = 1 << 3,
};

VKCU_HD uint32_t b3_iv(int i)
{
    /* SHA-256's initial hash value: the fractional parts of the square
     * roots of the first 8 primes. A switch, not a table, so nvcc keeps it
     * in immediates rather than in local memory. */
    switch (i) {
    case 0: return 0x6A09E667u;
    case 1: return 0xBB67AE85u;
    case 2: return 0x3C6EF372u;
    case 3: return 0xA54FF53Au;
    case 4: return 0x510E527Fu;
    case 5: return 0x9B05688Cu;
    case 6: return 0x1F83D9ABu;
    default: return 0x5BE0CD19u;
    }
}

VKCU_HD uint32_t b3_rotr(uint32_t x, int n) { return x >> n | x << (32 - n); }

/* The quarter-round on state words a, b, c, d with message words x, y. */
#define B3_G(v, a, b, c, d, x, y)                 \
    do {                                          \
        v[a] = v[a] + v[b] + (x);                 \
        v[d] = b3_rotr(v[d] ^ v[a], 16);          \
        v[c] = v[c] + v[d];                       \
        v[b] = b3_rotr(v[b] ^ v[c], 12);          \
        v[a] = v[a] + v[b] + (y);                 \
        v[d] = b3_rotr(v[d] ^ v[a], 8);           \
        v[c] = v[c] + v[d];                       \
        v[b] = b3_rotr(v[b] ^ v[c], 7);           \
    } while (0)

/* One round: the columns, then the diagonals, taking the message words in
 * the order s0..s15. */
#define B3_ROUND(v, m, s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15) \
    do {                                                                                    \
        B3_G(v, 0, 4, 8, 12, m[s0], m[s1]);                                                 \
        B3_G(v, 1, 5, 9, 13, m[s2], m[s3]);                                                 \
        B3_G(v, 2, 6, 10, 14, m[s4], m[s5]);                                                \
        B3_G(v, 3, 7, 11, 15, m[s6], m[s7]);                                                \
        B3_G(v, 0, 5, 10, 15, m[s8], m[s9]);                                                \
        B3_G(v, 1, 6, 11, 12, m[s10], m[s11]);                                              \
        B3_G(v, 2, 7, 8, 13, m[s12], m[s13]);                                               \
        B3_G(v, 3, 4, 9, 14, m[s14], m[s15]);                                               \
    } while (0)

/* The compression function, keeping the 8 words a chaining value or a
 * 32-byte digest needs: cv_out = first half of the output state. cv may
 * alias cv_out. The spec permutes the message words between rounds by
 * (2 6 3 10 7 0 4 13 1 11 12 5 9 14 15 8); round r here reads them through
 * that permutation applied r times, so every index is a constant and both
 * compilers keep the state in registers (a loop of rounds that moves the
 * words ran at 120 MB/s on the CPU, this at about 5 times that). */
VKCU_HD void b3_compress(const uint32_t cv[8], const uint32_t m[16], uint64_t counter, uint32_t block_len,
                         uint32_t flags, uint32_t cv_out[8])
{
    uint32_t v[16];
    for (int i = 0; i < 8; i++)
        v[i] = cv[i];
    for (int i = 0; i < 4; i++)
        v[8 + i] = b3_iv(i);
    v[12] = (uint32_t)counter;
    v[13] = (uint32_t)(counter >> 32);
    v[14] = block_len;
    v[15] = flags;
    B3_ROUND(v, m, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    B3_ROUND(v, m, 2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8);
    B3_ROUND(v, m, 3, 4, 10, 12, 13, 2, 7, 14, 6, 5, 9, 0, 11, 15, 8, 1);
    B3_ROUND(v, m, 10, 7, 12, 9, 14, 3, 13, 15, 4, 0, 11, 2, 5, 8, 1, 6);
    B3_ROUND(v, m, 12, 13, 9, 11, 15, 10, 14, 8, 7, 2, 5, 3, 0, 1, 6, 4);
    B3_ROUND(v, m, 9, 14, 11, 5, 8, 12, 15, 1, 13, 3, 0, 10, 2, 6, 4, 7);
    B3_ROUND(v, m, 11, 15, 5, 0, 1, 9, 8, 6, 14, 10, 2, 12, 3, 4, 7, 13);
    for (int i = 0; i < 8; i++)
        cv_out[i] = v[i] ^ v[i + 8];
}

VKCU_HD void b3_iv_words(uint32_t cv[8])
{
    for (int i = 0; i < 8; i++)
        cv[i] = b3_iv(i);
}

/* A parent node's chaining value (flags B3_ROOT at the root: then out is the
 * digest's words). out may alias left or right. */
VKCU_HD void b3_parent(const uint32_t left[8], const uint32_t right[8], uint32_t flags, uint32_t out[8])
{
    uint32_t block[16], key[8];
    for (int i = 0; i < 8; i++) {
        block[i] = left[i];
        block[8 + i] = right[i];
    }
    b3_iv_words(key);
    b3_compress(key, block, 0, B3_BLOCK_LEN, B3_PARENT | flags, out);
}

/* The block's 16 message words from up to 64 bytes, little-endian, zero
 * padded (a short last block). */
VKCU_HD void b3_load_block(const uint8_t *p, uint32_t n, uint32_t block[16])
{
    /* word by word: constant indices into block (registers on the GPU) */
    for (int i = 0; i < 16; i++) {
        uint32_t w = 0;
        for (int k = 0; k < 4; k++)
            if ((uint32_t)(4 * i + k) < n)
                w |= (uint32_t)p[4 * i + k] << (8 * k);
        block[i] = w;
    }
}

/* Chaining value of one whole chunk held in memory (1 to 1024 bytes; the
 * last chunk of an input may be short). root: this chunk is the whole
 * input, and out is the digest's words. */
VKCU_HD void b3_chunk(const uint8_t *p, uint32_t n, uint64_t chunk_index, int root, uint32_t out[8])
{
    uint32_t cv[8], block[16];
    b3_iv_words(cv);
    uint32_t nblocks = n ? (n + B3_BLOCK_LEN - 1) / B3_BLOCK_LEN : 1;
    for (uint32_t b = 0; b < nblocks; b++) {
        uint32_t len = b + 1 < nblocks ? B3_BLOCK_LEN : n - b * B3_BLOCK_LEN;
        uint32_t flags = (b == 0 ? B3_CHUNK_START : 0) | (b + 1 == nblocks ? B3_CHUNK_END | (root ? B3_ROOT : 0) : 0);
        b3_load_block(p + b * B3_BLOCK_LEN, len, block);
        b3_compress(cv, block, chunk_index, len, flags, cv);
    }
    for (int i = 0; i < 8; i++)
        out[i] = cv[i];
}

/* Digest words to bytes (little-endian). */
VKCU_HD void b3_words_to_bytes(const uint32_t w[8], uint8_t out[B3_OUT_LEN])
{
    for (int i = 0; i < 32; i++)
        out[i] = (uint8_t)(w[i >> 2] >> (8 * (i & 3)));
}

#endif
