/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Streaming BLAKE3 (the spec's incremental construction): a block is
 * compressed only when more input follows it, because the input's last
 * block carries CHUNK_END and, for a one-chunk input, ROOT; a chunk's
 * chaining value goes onto a stack of complete subtrees, merged into
 * parents while the number of chunks so far is even at that level, so the
 * stack never holds a subtree that could still be the root.
 */
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
    /* The chunk is complete and not the last: merge while the count of
     * chunks so far has a trailing zero at that level. */
    uint32_t cv[8];
    memcpy(cv, h->cv, sizeof(cv));
    uint64_t total = ++h->chunk;
    while (!(total & 1)) {
        b3_parent(h->stack[--h->stack_len], cv, 0, cv);
        total >>= 1;
    }
    memcpy(h->stack[h->stack_len++], cv, sizeof(cv));
    b3_iv_words(h->cv);
    h->blocks = 0;
}

void vkcu_blake3_update(vkcu_blake3 *h, const uint8_t *p, size_t n)
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
        if (!n)
            return;
        push_block(h, h->buf);
        h->buf_len = 0;
    }
    /* Whole blocks straight from the input, keeping the last one back. */
    while (n > B3_BLOCK_LEN) {
        push_block(h, p);
        p += B3_BLOCK_LEN, n -= B3_BLOCK_LEN;
    }
    memcpy(h->buf, p, n);
    h->buf_len = (uint32_t)n;
}

void vkcu_blake3_final(const vkcu_blake3 *h, uint8_t out[VKCU_BLAKE3_LEN])
{
    uint32_t block[16], cv[8];
    b3_load_block(h->buf, h->buf_len, block);
    uint32_t flags = (h->blocks == 0 ? B3_CHUNK_START : 0) | B3_CHUNK_END;
    b3_compress(h->cv, block, h->chunk, h->buf_len, flags | (h->stack_len ? 0 : B3_ROOT), cv);
    for (int i = h->stack_len - 1; i >= 0; i--)
        b3_parent(h->stack[i], cv, i == 0 ? B3_ROOT : 0, cv);
    b3_words_to_bytes(cv, out);
}
