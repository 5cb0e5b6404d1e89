/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Benchmark (not run by make test): BLAKE3 of one frame in device memory
 * (kernels/hash_kernels.cu, what `hash --algo blake3 --backend gpu` runs per
 * frame) against copying the same bytes to pinned host memory (what the
 * other algorithms need before the CPU hashes them), timed with CUDA events
 * over many iterations, for 1080p and 4K at 8 and 10 bits (4:2:0). Prints
 * microseconds per frame, GB/s and frames per second of each.
 * Usage: bench_blake3 [iterations]. Exit 77 without a CUDA device.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/frame_kernels.h"

#define CK(call)                                                                                     \
    do {                                                                                             \
        cudaError_t e_ = (call);                                                                     \
        if (e_ != cudaSuccess) {                                                                     \
            printf("FAIL %s: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__);      \
            return 1;                                                                                \
        }                                                                                            \
    } while (0)

int main(int argc, char **argv)
{
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
        printf("bench_blake3: no CUDA device: skipped\n");
        return 77;
    }
    int iters = argc > 1 ? atoi(argv[1]) : 200;
    if (iters < 1)
        iters = 1;
    static const struct { const char *name; size_t bytes; } cases[] = {
        { "1080p 8-bit", 1920 * 1080 * 3 / 2 }, { "1080p 10-bit", 1920 * 1080 * 3 },
        { "4K 8-bit", 3840 * 2160 * 3 / 2 },    { "4K 10-bit", 3840 * 2160 * 3 },
    };
    size_t max = cases[3].bytes;
    uint8_t *data, *digest, *host;
    void *scratch;
    CK(cudaMalloc((void **)&data, max));
    CK(cudaMemset(data, 0x5a, max));
    CK(cudaMalloc((void **)&digest, 32));
    CK(cudaMalloc(&scratch, vkcu_cuda_blake3_scratch(max)));
    CK(cudaHostAlloc((void **)&host, max, cudaHostAllocDefault));
    cudaStream_t st;
    cudaEvent_t a, b;
    CK(cudaStreamCreate(&st));
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    printf("%-13s %12s %10s %10s %14s %10s\n", "frame", "blake3 us", "GB/s", "fps", "copy to host us", "fps");
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        size_t n = cases[c].bytes;
        float ms_hash = 0, ms_copy = 0;
        CK((cudaError_t)vkcu_cuda_blake3(data, n, scratch, digest, st)); /* warm-up */
        CK(cudaEventRecord(a, st));
        for (int i = 0; i < iters; i++)
            CK((cudaError_t)vkcu_cuda_blake3(data, n, scratch, digest, st));
        CK(cudaEventRecord(b, st));
        CK(cudaEventSynchronize(b));
        CK(cudaEventElapsedTime(&ms_hash, a, b));
        CK(cudaEventRecord(a, st));
        for (int i = 0; i < iters; i++)
            CK(cudaMemcpyAsync(host, data, n, cudaMemcpyDeviceToHost, st));
        CK(cudaEventRecord(b, st));
        CK(cudaEventSynchronize(b));
        CK(cudaEventElapsedTime(&ms_copy, a, b));
        double us_h = 1000.0 * ms_hash / iters, us_c = 1000.0 * ms_copy / iters;
        printf("%-13s %12.1f %10.1f %10.0f %14.1f %10.0f\n", cases[c].name, us_h, n / us_h / 1000.0, 1e6 / us_h, us_c,
               1e6 / us_c);
    }
    cudaFreeHost(host);
    cudaFree(scratch);
    cudaFree(digest);
    cudaFree(data);
    return 0;
}
