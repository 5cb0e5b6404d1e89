/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * BLAKE3 of a frame in device memory: the packed byte string of
 * docs/hash.md, as vkcu_cuda_to_planar writes it with packed rows, so that
 * only the 32-byte digest leaves the GPU. The arithmetic is
 * kernels/blake3_math.h, the CPU hasher's.
 *
 * Pass 1: one thread per 1 KiB chunk computes the chunk's chaining value
 * (chunks are independent: each starts from the IV with its own counter);
 * the block's threads then reduce their B3_GPU_CHUNKS_PER_BLOCK chunks in
 * shared memory, pairing neighbours level by level, to one subtree. Later
 * passes reduce B3_GPU_NODES_PER_BLOCK nodes per block the same way until a
 * single block remains, whose last parent (or the only chunk) is compressed
 * with ROOT: the digest. Groups are powers of two aligned to their size, so
 * each is a subtree of the spec's tree (tests/unit/test_blake3.c replays
 * this order on the CPU; test_blake3_gpu runs it here).
 */
#include <cuda_runtime.h>

#include "blake3_math.h"
#include "frame_kernels.h"

/* A chunk's chaining value (the digest's words when it is the whole input). */
__device__ static void chunk_cv(const uint8_t *data, size_t len, uint64_t c, int root, uint32_t cv[8])
{
    const uint8_t *p = data + c * B3_CHUNK_LEN;
    size_t left = len - c * B3_CHUNK_LEN;
    if (left < B3_CHUNK_LEN) {
        b3_chunk(p, (uint32_t)left, c, root, cv); /* the input's short last chunk: bytes */
        return;
    }
    /* A whole chunk: 16-byte loads (data is cudaMalloc'd, chunks 1 KiB apart). */
    const uint4 *q = (const uint4 *)p;
    b3_iv_words(cv);
#pragma unroll 1
    for (int b = 0; b < B3_CHUNK_LEN / B3_BLOCK_LEN; b++) {
        uint32_t m[16];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            uint4 x = __ldg(q + 4 * b + k);
            m[4 * k] = x.x, m[4 * k + 1] = x.y, m[4 * k + 2] = x.z, m[4 * k + 3] = x.w;
        }
        uint32_t flags = (b == 0 ? B3_CHUNK_START : 0) | (b == 15 ? B3_CHUNK_END | (root ? B3_ROOT : 0) : 0);
        b3_compress(cv, m, c, B3_BLOCK_LEN, flags, cv);
    }
}

/* Reduces nodes[0..n) (n the same in every thread) to nodes[0]; with root,
 * the last parent carries ROOT. */
__device__ static void reduce_shared(uint32_t (*nodes)[8], uint32_t n, int root)
{
    const uint32_t t = threadIdx.x;
    while (n > 1) {
        uint32_t half = n / 2, out[8];
        int have = 0;
        if (t < half) {
            b3_parent(nodes[2 * t], nodes[2 * t + 1], root && n == 2 ? B3_ROOT : 0, out);
            have = 1;
        } else if ((n & 1) && t == half) {
            for (int i = 0; i < 8; i++)
                out[i] = nodes[n - 1][i]; /* the odd last node moves up unchanged */
            have = 1;
        }
        __syncthreads();
        if (have)
            for (int i = 0; i < 8; i++)
                nodes[t][i] = out[i];
        __syncthreads();
        n = half + (n & 1);
    }
}

static __global__ void __launch_bounds__(B3_GPU_CHUNKS_PER_BLOCK)
b3_chunks_kernel(const uint8_t *data, size_t len, uint64_t nchunks, uint32_t *out)
{
    __shared__ uint32_t nodes[B3_GPU_CHUNKS_PER_BLOCK][8];
    uint64_t first = (uint64_t)blockIdx.x * B3_GPU_CHUNKS_PER_BLOCK;
    int root = gridDim.x == 1;
    if (first + threadIdx.x < nchunks) {
        uint32_t cv[8];
        chunk_cv(data, len, first + threadIdx.x, root && nchunks == 1, cv);
        for (int i = 0; i < 8; i++)
            nodes[threadIdx.x][i] = cv[i];
    }
    __syncthreads();
    uint64_t n = nchunks - first;
    reduce_shared(nodes, n < B3_GPU_CHUNKS_PER_BLOCK ? (uint32_t)n : B3_GPU_CHUNKS_PER_BLOCK, root);
    if (threadIdx.x < 8)
        out[8 * blockIdx.x + threadIdx.x] = nodes[0][threadIdx.x];
}

static __global__ void __launch_bounds__(B3_GPU_NODES_PER_BLOCK)
b3_parents_kernel(const uint32_t *in, uint64_t nin, uint32_t *out)
{
    __shared__ uint32_t nodes[B3_GPU_NODES_PER_BLOCK][8];
    uint64_t first = (uint64_t)blockIdx.x * B3_GPU_NODES_PER_BLOCK;
    if (first + threadIdx.x < nin)
        for (int i = 0; i < 8; i++)
            nodes[threadIdx.x][i] = in[8 * (first + threadIdx.x) + i];
    __syncthreads();
    uint64_t n = nin - first;
    reduce_shared(nodes, n < B3_GPU_NODES_PER_BLOCK ? (uint32_t)n : B3_GPU_NODES_PER_BLOCK, gridDim.x == 1);
    if (threadIdx.x < 8)
        out[8 * blockIdx.x + threadIdx.x] = nodes[0][threadIdx.x];
}

static uint64_t chunks_of(size_t len) { return len ? (len + B3_CHUNK_LEN - 1) / B3_CHUNK_LEN : 1; }
static uint64_t blocks_of(uint64_t n, uint64_t per) { return (n + per - 1) / per; }

extern "C" size_t vkcu_cuda_blake3_scratch(size_t len)
{
    uint64_t g = blocks_of(chunks_of(len), B3_GPU_CHUNKS_PER_BLOCK);
    return (size_t)(g + blocks_of(g, B3_GPU_NODES_PER_BLOCK)) * 32;
}

extern "C" int vkcu_cuda_blake3(const uint8_t *data, size_t len, void *scratch, uint8_t *digest, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    uint64_t nchunks = chunks_of(len);
    uint64_t grid = blocks_of(nchunks, B3_GPU_CHUNKS_PER_BLOCK);
    /* Ping-pong: a holds pass 1's nodes; each later pass needs fewer. */
    uint32_t *a = (uint32_t *)scratch, *b = a + 8 * grid;
    b3_chunks_kernel<<<(unsigned)grid, B3_GPU_CHUNKS_PER_BLOCK, 0, st>>>(data, len, nchunks,
                                                                       grid == 1 ? (uint32_t *)digest : a);
    for (uint64_t n = grid; n > 1;) {
        uint64_t g = blocks_of(n, B3_GPU_NODES_PER_BLOCK);
        b3_parents_kernel<<<(unsigned)g, B3_GPU_NODES_PER_BLOCK, 0, st>>>(a, n, g == 1 ? (uint32_t *)digest : b);
        uint32_t *t = a;
        a = b, b = t;
        n = g;
    }
    return cudaGetLastError();
}
