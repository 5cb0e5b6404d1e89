/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Streaming BLAKE3 (the spec's incremental construction): a block is
 * compressed only when more input follows it, because the input's last
 * block carries CHUNK_END and, for a one-chunk input, ROOT; a chunk's
 * chaining value goes onto a stack of complete subtrees, merged into
 * parents while the number of chunks so far is even at that level, so the
 * stack never holds a subtree that could still be the root.
 */
#include <stdlib.h>
#include <string.h>

#include "blake3.h"
#include "kernels/blake3_math.h"

void vkcu_blake3_init(vkcu_blake3 *h)
{
    memset(h, 0, sizeof(*h));
    b3_iv_words(h->cv);
}

static void load_full_block(const uint8_t *p, uint32_t block[16])
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(block, p, 64);
#else
    b3_load_block(p, 64, block);
#endif
}

/* A complete chunk that is not the input's last, by its chaining value:
 * merged while the count of chunks so far has a trailing zero at that level. */
static void push_chunk(vkcu_blake3 *h, const uint32_t chunk_cv[8])
{
    uint32_t cv[8];
    memcpy(cv, chunk_cv, sizeof(cv));
    uint64_t total = ++h->chunk;
    while (!(total & 1)) {
        b3_parent(h->stack[--h->stack_len], cv, 0, cv);
        total >>= 1;
    }
    memcpy(h->stack[h->stack_len++], cv, sizeof(cv));
}

/* Compresses a full block that is known not to be the input's last. */
static void push_block(vkcu_blake3 *h, const uint8_t *p)
{
    uint32_t block[16];
    load_full_block(p, block);
    uint32_t flags = h->blocks == 0 ? B3_CHUNK_START : 0;
    if (h->blocks == B3_CHUNK_LEN / B3_BLOCK_LEN - 1)
        flags |= B3_CHUNK_END;
    b3_compress(h->cv, block, h->chunk, B3_BLOCK_LEN, flags, h->cv);
    if (++h->blocks < B3_CHUNK_LEN / B3_BLOCK_LEN)
        return;
    push_chunk(h, h->cv);
    b3_iv_words(h->cv);
    h->blocks = 0;
}

_Static_assert(VKCU_BLAKE3_STAGE == 8 * B3_CHUNK_LEN, "a stage is the eight-chunk path's step");

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define B3_LANES 8

/* Eight whole chunks at once, a chunk per 32-bit lane of AVX2 registers:
 * the same compression function as b3_compress (the same rounds and message
 * order), each lane's block words gathered from its own chunk. The chunks
 * start at p, 1 KiB apart, with indices counter..counter+7; out[k] is chunk
 * k's chaining value. Frame hashes are megabytes: eight chunks a step is
 * where BLAKE3's speed on a CPU comes from (its tree makes chunks
 * independent). */
#define B3V_ROTR16(x) _mm256_shuffle_epi8(x, rot16)
#define B3V_ROTR8(x) _mm256_shuffle_epi8(x, rot8)
#define B3V_ROTR(x, n) _mm256_or_si256(_mm256_srli_epi32(x, n), _mm256_slli_epi32(x, 32 - (n)))
#define B3V_G(v, a, b, c, d, x, y)                                          \
    do {                                                                    \
        v[a] = _mm256_add_epi32(_mm256_add_epi32(v[a], v[b]), x);           \
        v[d] = B3V_ROTR16(_mm256_xor_si256(v[d], v[a]));                    \
        v[c] = _mm256_add_epi32(v[c], v[d]);                                \
        v[b] = B3V_ROTR(_mm256_xor_si256(v[b], v[c]), 12);                  \
        v[a] = _mm256_add_epi32(_mm256_add_epi32(v[a], v[b]), y);           \
        v[d] = B3V_ROTR8(_mm256_xor_si256(v[d], v[a]));                     \
        v[c] = _mm256_add_epi32(v[c], v[d]);                                \
        v[b] = B3V_ROTR(_mm256_xor_si256(v[b], v[c]), 7);                   \
    } while (0)
#define B3V_ROUND(v, m, s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15) \
    do {                                                                                     \
        B3V_G(v, 0, 4, 8, 12, m[s0], m[s1]);                                                 \
        B3V_G(v, 1, 5, 9, 13, m[s2], m[s3]);                                                 \
        B3V_G(v, 2, 6, 10, 14, m[s4], m[s5]);                                                \
        B3V_G(v, 3, 7, 11, 15, m[s6], m[s7]);                                                \
        B3V_G(v, 0, 5, 10, 15, m[s8], m[s9]);                                                \
        B3V_G(v, 1, 6, 11, 12, m[s10], m[s11]);                                              \
        B3V_G(v, 2, 7, 8, 13, m[s12], m[s13]);                                               \
        B3V_G(v, 3, 4, 9, 14, m[s14], m[s15]);                                               \
    } while (0)

__attribute__((target("avx2"))) static void chunks8_avx2(const uint8_t *p, uint64_t counter, uint32_t out[B3_LANES][8])
{
    const __m256i rot16 = _mm256_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4,
                                           5, 10, 11, 8, 9, 14, 15, 12, 13);
    const __m256i rot8 = _mm256_setr_epi8(1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12, 1, 2, 3, 0, 5, 6, 7,
                                          4, 9, 10, 11, 8, 13, 14, 15, 12);
    const __m256i lane = _mm256_setr_epi32(0, B3_CHUNK_LEN, 2 * B3_CHUNK_LEN, 3 * B3_CHUNK_LEN, 4 * B3_CHUNK_LEN,
                                           5 * B3_CHUNK_LEN, 6 * B3_CHUNK_LEN, 7 * B3_CHUNK_LEN);
    uint32_t lo[B3_LANES], hi[B3_LANES];
    for (int k = 0; k < B3_LANES; k++) {
        lo[k] = (uint32_t)(counter + (uint64_t)k);
        hi[k] = (uint32_t)((counter + (uint64_t)k) >> 32);
    }
    const __m256i ctr_lo = _mm256_loadu_si256((const __m256i *)lo), ctr_hi = _mm256_loadu_si256((const __m256i *)hi);
    __m256i cv[8], v[16], m[16];
    for (int i = 0; i < 8; i++)
        cv[i] = _mm256_set1_epi32((int)b3_iv(i));
    for (int b = 0; b < B3_CHUNK_LEN / B3_BLOCK_LEN; b++) {
        const uint8_t *blk = p + b * B3_BLOCK_LEN;
        for (int j = 0; j < 16; j++) /* little-endian words, as load_full_block reads them */
            m[j] = _mm256_i32gather_epi32((const int *)(const void *)(blk + 4 * j), lane, 1);
        uint32_t flags = (b == 0 ? B3_CHUNK_START : 0) | (b == B3_CHUNK_LEN / B3_BLOCK_LEN - 1 ? B3_CHUNK_END : 0);
        for (int i = 0; i < 8; i++)
            v[i] = cv[i];
        for (int i = 0; i < 4; i++)
            v[8 + i] = _mm256_set1_epi32((int)b3_iv(i));
        v[12] = ctr_lo;
        v[13] = ctr_hi;
        v[14] = _mm256_set1_epi32(B3_BLOCK_LEN);
        v[15] = _mm256_set1_epi32((int)flags);
        B3V_ROUND(v, m, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        B3V_ROUND(v, m, 2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8);
        B3V_ROUND(v, m, 3, 4, 10, 12, 13, 2, 7, 14, 6, 5, 9, 0, 11, 15, 8, 1);
        B3V_ROUND(v, m, 10, 7, 12, 9, 14, 3, 13, 15, 4, 0, 11, 2, 5, 8, 1, 6);
        B3V_ROUND(v, m, 12, 13, 9, 11, 15, 10, 14, 8, 7, 2, 5, 3, 0, 1, 6, 4);
        B3V_ROUND(v, m, 9, 14, 11, 5, 8, 12, 15, 1, 13, 3, 0, 10, 2, 6, 4, 7);
        B3V_ROUND(v, m, 11, 15, 5, 0, 1, 9, 8, 6, 14, 10, 2, 12, 3, 4, 7, 13);
        for (int i = 0; i < 8; i++)
            cv[i] = _mm256_xor_si256(v[i], v[i + 8]);
    }
    for (int i = 0; i < 8; i++) {
        uint32_t w[B3_LANES];
        _mm256_storeu_si256((__m256i *)w, cv[i]);
        for (int k = 0; k < B3_LANES; k++)
            out[k][i] = w[k];
    }
}

/* Whether the eight-chunk path runs: AVX2, and not VKCU_BLAKE3_PORTABLE=1
 * (tests compare the two). Read once. */
static int lanes8(void)
{
    static int have = -1;
    if (have < 0) {
        const char *e = getenv("VKCU_BLAKE3_PORTABLE");
        have = !(e && !strcmp(e, "1")) && __builtin_cpu_supports("avx2");
    }
    return have;
}
#else
#define B3_LANES 8
static int lanes8(void) { return 0; }
static void chunks8_avx2(const uint8_t *p, uint64_t counter, uint32_t out[B3_LANES][8])
{
    (void)p, (void)counter, (void)out;
}
#endif

/* Feeds n bytes; more: input follows them (so a last whole block need not
 * be kept back). */
static void feed(vkcu_blake3 *h, const uint8_t *p, size_t n, int more)
{
    if (!n)
        return;
    if (h->buf_len == B3_BLOCK_LEN) {
        push_block(h, h->buf);
        h->buf_len = 0;
    }
    if (h->buf_len) {
        size_t take = B3_BLOCK_LEN - h->buf_len < n ? B3_BLOCK_LEN - h->buf_len : n;
        memcpy(h->buf + h->buf_len, p, take);
        h->buf_len += (uint32_t)take;
        p += take, n -= take;
        if (!n && !(more && h->buf_len == B3_BLOCK_LEN))
            return;
        push_block(h, h->buf);
        h->buf_len = 0;
    }
    /* Whole blocks straight from the input, keeping the last one back
     * unless more follows; eight whole chunks at a time where they are not
     * the input's last. */
    while (more ? n >= B3_BLOCK_LEN : n > B3_BLOCK_LEN) {
        if (h->blocks == 0 && (more ? n >= VKCU_BLAKE3_STAGE : n > VKCU_BLAKE3_STAGE) && lanes8()) {
            uint32_t cv[B3_LANES][8];
            chunks8_avx2(p, h->chunk, cv);
            for (int k = 0; k < B3_LANES; k++)
                push_chunk(h, cv[k]);
            p += VKCU_BLAKE3_STAGE, n -= VKCU_BLAKE3_STAGE;
            continue;
        }
        push_block(h, p);
        p += B3_BLOCK_LEN, n -= B3_BLOCK_LEN;
    }
    memcpy(h->buf, p, n);
    h->buf_len = (uint32_t)n;
}

/* With the eight-chunk path, input is gathered into whole stages of eight
 * chunks (a frame is fed a row at a time), so that every stage starts a
 * chunk; without it, it goes straight on. */
void vkcu_blake3_update(vkcu_blake3 *h, const uint8_t *p, size_t n)
{
    if (!lanes8()) {
        feed(h, p, n, 0);
        return;
    }
    while (n) {
        if (h->stage_len == VKCU_BLAKE3_STAGE) { /* full, and more follows */
            feed(h, h->stage, VKCU_BLAKE3_STAGE, 1);
            h->stage_len = 0;
        }
        if (h->stage_len == 0 && n > VKCU_BLAKE3_STAGE) {
            size_t whole = (n - 1) / VKCU_BLAKE3_STAGE * VKCU_BLAKE3_STAGE;
            feed(h, p, whole, 1);
            p += whole, n -= whole;
            continue;
        }
        size_t take = VKCU_BLAKE3_STAGE - h->stage_len < n ? VKCU_BLAKE3_STAGE - h->stage_len : n;
        memcpy(h->stage + h->stage_len, p, take);
        h->stage_len += (uint32_t)take;
        p += take, n -= take;
    }
}

static void final_fed(const vkcu_blake3 *h, uint8_t out[VKCU_BLAKE3_LEN])
{
    uint32_t block[16], cv[8];
    b3_load_block(h->buf, h->buf_len, block);
    uint32_t flags = (h->blocks == 0 ? B3_CHUNK_START : 0) | B3_CHUNK_END;
    b3_compress(h->cv, block, h->chunk, h->buf_len, flags | (h->stack_len ? 0 : B3_ROOT), cv);
    for (int i = h->stack_len - 1; i >= 0; i--)
        b3_parent(h->stack[i], cv, i == 0 ? B3_ROOT : 0, cv);
    b3_words_to_bytes(cv, out);
}

void vkcu_blake3_final(const vkcu_blake3 *h, uint8_t out[VKCU_BLAKE3_LEN])
{
    if (!h->stage_len) {
        final_fed(h, out);
        return;
    }
    vkcu_blake3 c = *h; /* h may be fed further */
    feed(&c, c.stage, c.stage_len, 0);
    final_fed(&c, out);
}
