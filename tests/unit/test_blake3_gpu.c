/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The GPU BLAKE3 hasher (kernels/hash_kernels.cu) gives the CPU hasher's
 * digest (src/util/blake3.c, itself checked against b3sum in test_blake3) for
 * inputs of every shape the tree can take: under one block, one block, one
 * chunk and a byte either side, one thread block of chunks and either side,
 * the exact size one parent pass reduces, one byte more (two passes), and
 * 4K frames at 8 and 10 bits. Inputs are seeded pseudo-random bytes; each
 * size is hashed twice on the stream back to back (scratch reuse).
 * Exit: 0 pass, 1 fail, 77 without a CUDA device.
 */
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>

#include "util/blake3.h"
#include "kernels/blake3_math.h"
#include "kernels/frame_kernels.h"
#include "test_util.h"

#define CK(call)                                                                                       \
    do {                                                                                               \
        cudaError_t e_ = (call);                                                                       \
        if (e_ != cudaSuccess) {                                                                       \
            printf("FAIL %s: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__);        \
            return 1;                                                                                  \
        }                                                                                              \
    } while (0)

int main(void)
{
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev < 1) {
        printf("test_blake3_gpu: skipped: no CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 77;
    }
    const size_t group = (size_t)B3_CHUNK_LEN * B3_GPU_CHUNKS_PER_BLOCK;
    const size_t pass = group * B3_GPU_NODES_PER_BLOCK;
    const size_t sizes[] = { 1, 3, 63, 64, 65, 1023, 1024, 1025, 2048, 3000, group - 1, group, group + 1,
                             3 * group + 17, pass - 1, pass, pass + 1, pass + group * 5 + 1000,
                             3840 * 2160 * 3 / 2, 3840 * 2160 * 3, 1 * 1 * 3, 691200 };
    size_t max = 0;
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        max = sizes[i] > max ? sizes[i] : max;
    uint8_t *host = malloc(max);
    uint64_t seed = 0x5eed;
    for (size_t i = 0; i < max; i += 8) {
        uint64_t r = tu_rand(&seed);
        memcpy(host + i, &r, max - i < 8 ? max - i : 8);
    }
    uint8_t *data = NULL, *digest = NULL;
    void *scratch = NULL;
    CK(cudaMalloc((void **)&data, max));
    CK(cudaMalloc((void **)&digest, 2 * VKCU_BLAKE3_LEN));
    CK(cudaMalloc(&scratch, vkcu_cuda_blake3_scratch(max)));
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    int checked = 0;
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t n = sizes[i];
        /* A different start each time, so that no two sizes hash a prefix of the same bytes. */
        const uint8_t *src = host + (max - n) / 2;
        CK(cudaMemcpy(data, src, n, cudaMemcpyHostToDevice));
        CK((cudaError_t)vkcu_cuda_blake3(data, n, scratch, digest, st));
        CK((cudaError_t)vkcu_cuda_blake3(data, n, scratch, digest + VKCU_BLAKE3_LEN, st));
        uint8_t gpu[2 * VKCU_BLAKE3_LEN], cpu[VKCU_BLAKE3_LEN];
        CK(cudaMemcpyAsync(gpu, digest, sizeof(gpu), cudaMemcpyDeviceToHost, st));
        CK(cudaStreamSynchronize(st));
        vkcu_blake3 h;
        vkcu_blake3_init(&h);
        vkcu_blake3_update(&h, src, n);
        vkcu_blake3_final(&h, cpu);
        CHECK(!memcmp(gpu, cpu, sizeof(cpu)), "%zu bytes: the GPU digest differs from the CPU's", n);
        CHECK(!memcmp(gpu + VKCU_BLAKE3_LEN, cpu, sizeof(cpu)), "%zu bytes, second run: the GPU digest differs", n);
        checked++;
    }
    cudaStreamDestroy(st);
    cudaFree(data);
    cudaFree(digest);
    cudaFree(scratch);
    free(host);
    if (tu_failures)
        return 1;
    printf("PASS test_blake3_gpu: %d sizes (3 bytes to %zu, up to two parent passes), GPU = CPU\n", checked, max);
    return 0;
}
