/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * GPU resource accounting over a long run: the interop ring imports into
 * CUDA once per slot (memory per plane, two semaphores), never per frame, and
 * a job leaves no file descriptor, CUDA memory or semaphore behind.
 * With `vulkan`, the frames go to the host through the output ring
 * (--download vulkan): its slots are imported once too (memory, filled,
 * drained), and every frame is read back by one Vulkan transfer.
 * Usage: test_gpu_leaks CLIP [cuda|vulkan] (10,000 frames in `make
 * test-gpu`). Exit 77 without a GPU.
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <cuda_runtime_api.h>

#include "gpu/gpu.h"
#include "test_util.h"
#include "core/vkcu.h"

static int64_t host_frames;
static unsigned host_sum;

/* The host frames of --download vulkan: counted, and the last row of the
 * luma plane read (the mapping must hold the whole frame). */
static int on_frame(void *opaque, const AVFrame *f)
{
    (void)opaque;
    if (!f->data[0] || f->width <= 0 || f->height <= 0)
        return 0;
    const uint8_t *row = f->data[0] + (size_t)(f->height - 1) * f->linesize[0];
    for (int x = 0; x < f->width; x++)
        host_sum += row[x];
    host_frames++;
    return 0;
}

static int run(const char *clip, int ring, int vulkan, vkcu_job_result *r)
{
    vkcu_job_params p;
    vkcu_job_params_default(&p);
    p.input = clip;
    p.sink = vulkan ? VKCU_SINK_CALLBACK : VKCU_SINK_NULL;
    p.on_frame = on_frame;
    p.download = vulkan ? VKCU_DOWNLOAD_VULKAN : VKCU_DOWNLOAD_CUDA;
    p.backend = VKCU_BACKEND_GPU;
    p.progress = 0;
    p.ring_size = ring;
    p.chain = "copy";
    int ret = vkcu_job_run(&p, r);
    if (ret < 0)
        fprintf(stderr, "job failed: %s\n", r->error);
    return ret;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (argc > 2 && strcmp(argv[2], "cuda") && strcmp(argv[2], "vulkan"))) {
        fprintf(stderr, "usage: %s CLIP [cuda|vulkan]\n", argv[0]);
        return 2;
    }
    const int vulkan = argc > 2 && !strcmp(argv[2], "vulkan");
    if (!vkcu_gpu_available()) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    vkcu_set_log_level(VKCU_LOG_ERROR);
    vkcu_job_result r;
    /* A first short run initialises the CUDA runtime and driver state. */
    const int ring = 5;
    if (run(argv[1], ring, vulkan, &r) < 0)
        return 1;
    int fds0 = tu_proc_count("fd");
    size_t free0, total;
    cudaMemGetInfo(&free0, &total);
    if (run(argv[1], ring, vulkan, &r) < 0)
        return 1;
    int fds1 = tu_proc_count("fd");
    size_t free1;
    cudaMemGetInfo(&free1, &total);
    /* NV12: 2 planes + ready + done per slot; the output ring: memory + filled + drained per slot. */
    int64_t want_imports = (int64_t)ring * (2 + 2) + (vulkan ? (int64_t)ring * 3 : 0);
    int fail = 0;
    if (r.imports != want_imports) {
        printf("imports: %lld for %lld frames, expected %lld (ring %d x (2 planes + 2 semaphores)%s)\n",
               (long long)r.imports, (long long)r.frames_out, (long long)want_imports, ring,
               vulkan ? " + ring x (memory + 2 semaphores)" : "");
        fail = 1;
    }
    if (vulkan && (r.vk_readbacks != r.frames_out || host_frames != 2 * r.frames_out)) {
        printf("readbacks: %lld Vulkan readbacks and %lld host frames (two runs) for %lld frames a run\n",
               (long long)r.vk_readbacks, (long long)host_frames, (long long)r.frames_out);
        fail = 1;
    }
    if (r.dtod_copies != r.frames_out || r.htod_bytes != 0) {
        printf("copies: %lld on-GPU copies for %lld frames, %lld bytes uploaded (expected one copy a frame, none)\n",
               (long long)r.dtod_copies, (long long)r.frames_out, (long long)r.htod_bytes);
        fail = 1;
    }
    if (fds1 != fds0) {
        printf("file descriptors: %d before, %d after a %lld-frame run\n", fds0, fds1, (long long)r.frames_out);
        fail = 1;
    }
    long long leaked = (long long)free0 - (long long)free1;
    if (leaked > 4 << 20) {
        printf("CUDA memory: %lld bytes fewer free after the run\n", leaked);
        fail = 1;
    }
    printf("%lld frames%s: imports %lld (= ring %d x %d), fds %d -> %d, CUDA free %zu -> %zu\n",
           (long long)r.frames_out, vulkan ? " through the output ring" : "", (long long)r.imports, ring,
           vulkan ? 7 : 4, fds0, fds1, free0, free1);
    return fail;
}
