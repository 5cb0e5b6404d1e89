/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * GPU resource accounting over a long run: the interop ring imports into
 * CUDA once per slot (memory per plane, two semaphores), never per frame, and
 * a job leaves no file descriptor, CUDA memory or semaphore behind.
 * With `vulkan`, the frames go to the host through the output ring
 * (--download vulkan): its slots are imported once too (memory, filled,
 * drained), and every frame is read back by one Vulkan transfer.
 * With `encode`, every frame goes through FFmpeg 8.1's ffv1_vulkan (chain
 * convert=format=yuv444p, FFV1 level 3) into a file, from the output ring
 * without the host: the ring's slots are imported once (7 per slot in
 * all), no frame is read back, the only bytes to the host are the packets
 * (dtoh_bytes = encoded_bytes), and file descriptors and the GPU's free
 * memory do not climb during the run (sampled by the progress callback
 * after the first 1,000 frames: the trend over the whole run against the
 * pool's own motion, climbs() below) and are
 * back where they were after it.
 * Usage: test_gpu_leaks CLIP [cuda|vulkan|encode] (10,000 frames in `make
 * test-gpu`). Exit 77 without a GPU (and with `encode`, without
 * ffv1_vulkan in this build).
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <cuda_runtime_api.h>

#include <libavcodec/avcodec.h>
#include <stdlib.h>
#include <unistd.h>

#include "gpu/gpu.h"
#include "test_util.h"
#include "core/vkcu.h"

/* Sampled during an encode run (progress callback, the job's thread): the
 * range over the run, and per thousand frames the most and fewest file
 * descriptors and the least and most free GPU memory seen. The encoder's
 * per-packet work (FFmpeg maps each packet's host memory into Vulkan and
 * drops the mapping when its transfer is reused) makes both move by frame,
 * by up to the size of that pool; a leak makes them climb. */
#define BUCKETS 64
static int fd_min = 1 << 30, fd_max = -1;
static long long mem_min = -1, mem_max = -1;
static int bucket_fd[BUCKETS], bucket_fd_low[BUCKETS];
static long long bucket_mem[BUCKETS], bucket_mem_high[BUCKETS];

static void on_progress(void *opaque, const vkcu_progress_info *info)
{
    (void)opaque;
    if (info->frames < 1000)
        return;
    int fds = tu_proc_count("fd");
    size_t fr, total;
    if (cudaMemGetInfo(&fr, &total) != cudaSuccess)
        return;
    fd_min = fds < fd_min ? fds : fd_min;
    fd_max = fds > fd_max ? fds : fd_max;
    mem_min = mem_min < 0 || (long long)fr < mem_min ? (long long)fr : mem_min;
    mem_max = (long long)fr > mem_max ? (long long)fr : mem_max;
    int b = (int)(info->frames / 1000);
    if (b < BUCKETS) {
        bucket_fd[b] = fds > bucket_fd[b] ? fds : bucket_fd[b];
        bucket_fd_low[b] = !bucket_fd_low[b] || fds < bucket_fd_low[b] ? fds : bucket_fd_low[b];
        bucket_mem[b] = !bucket_mem[b] || (long long)fr < bucket_mem[b] ? (long long)fr : bucket_mem[b];
        bucket_mem_high[b] = (long long)fr > bucket_mem_high[b] ? (long long)fr : bucket_mem_high[b];
    }
}

/* The least-squares line through the sampled thousands' values: its rise
 * from the first sampled thousand to the last. One high sample moves it
 * by a fraction of that sample (at most 4/10 of it over ten thousands), so
 * the rule below does not flip with one busy moment of the pool. */
static double trend_rise(const double *v, const int *at, int n)
{
    if (n < 2)
        return 0;
    double mx = 0, my = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++)
        mx += at[i], my += v[i];
    mx /= n, my /= n;
    for (int i = 0; i < n; i++)
        sxx += (at[i] - mx) * (at[i] - mx), sxy += (at[i] - mx) * (v[i] - my);
    return sxx > 0 ? sxy / sxx * (at[n - 1] - at[0]) : 0;
}

static double fd_rise, fd_pool, mem_fall, mem_pool;

/* 1 when the run climbs: the trend of the per-thousand most descriptors
 * rises over the run by more than the pool's own size (the widest motion
 * seen within one thousand frames, at least 8), or the trend of the least
 * free memory falls by more than its own motion (at least 64 MiB). A pool
 * that moves and comes back does neither; a leak of one descriptor in a
 * hundred frames passes the pool's 70 within 10,000 frames, and whatever a
 * run keeps is caught after it (descriptors and memory back where they
 * were). */
static int climbs(void)
{
    double fdv[BUCKETS], memv[BUCKETS];
    int at[BUCKETS], n = 0;
    fd_pool = 8, mem_pool = 64 << 20;
    for (int b = 1; b < BUCKETS; b++)
        if (bucket_fd[b]) {
            at[n] = b;
            fdv[n] = bucket_fd[b];
            memv[n] = (double)bucket_mem[b];
            n++;
            if (bucket_fd[b] - bucket_fd_low[b] > fd_pool)
                fd_pool = bucket_fd[b] - bucket_fd_low[b];
            if ((double)(bucket_mem_high[b] - bucket_mem[b]) > mem_pool)
                mem_pool = (double)(bucket_mem_high[b] - bucket_mem[b]);
        }
    fd_rise = trend_rise(fdv, at, n);
    mem_fall = -trend_rise(memv, at, n);
    return fd_rise > fd_pool || mem_fall > mem_pool;
}

static void print_buckets(void)
{
    printf("per thousand frames (fds fewest..most / free MiB least..most):");
    for (int b = 1; b < BUCKETS; b++)
        if (bucket_fd[b])
            printf(" %d:%d..%d/%lld..%lld", b, bucket_fd_low[b], bucket_fd[b], bucket_mem[b] >> 20,
                   bucket_mem_high[b] >> 20);
    printf("\n");
}

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

static char out_path[256];

static int run(const char *clip, int ring, int vulkan, int encode, vkcu_job_result *r)
{
    vkcu_job_params p;
    vkcu_job_params_default(&p);
    p.job.input = clip;
    p.job.sink = encode ? VKCU_SINK_ENCODE : vulkan ? VKCU_SINK_CALLBACK : VKCU_SINK_NULL;
    p.on_frame = on_frame;
    p.settings.vulkan_download = vulkan;
    p.settings.backend = VKCU_BACKEND_GPU;
    p.progress = encode;
    p.settings.progress_callback = on_progress;
    p.settings.ring_size = ring;
    p.job.chain = encode ? "convert=format=yuv444p" : "copy";
    if (encode) {
        p.job.output = out_path;
        p.job.overwrite = 1;
        p.job.encoder = "ffv1_vulkan";
    }
    int ret = vkcu_job_run(&p, r);
    if (ret < 0)
        fprintf(stderr, "job failed: %s\n", r->error);
    return ret;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (argc > 2 && strcmp(argv[2], "cuda") && strcmp(argv[2], "vulkan") && strcmp(argv[2], "encode"))) {
        fprintf(stderr, "usage: %s CLIP [cuda|vulkan|encode]\n", argv[0]);
        return 2;
    }
    const int vulkan = argc > 2 && !strcmp(argv[2], "vulkan");
    const int encode = argc > 2 && !strcmp(argv[2], "encode");
    if (!vkcu_gpu_available()) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    if (encode && !avcodec_find_encoder_by_name("ffv1_vulkan")) {
        printf("no ffv1_vulkan in this build (FFmpeg %s): skipped\n", av_version_info());
        return 77;
    }
    char dir[] = "/tmp/vkcu-leaks-XXXXXX";
    if (encode && !mkdtemp(dir)) {
        printf("cannot make a temporary folder\n");
        return 1;
    }
    snprintf(out_path, sizeof(out_path), "%s/out.mkv", dir);
    vkcu_set_log_level(VKCU_LOG_ERROR);
    vkcu_job_result r;
    /* A first short run initialises the CUDA runtime and driver state. */
    const int ring = 5;
    if (run(argv[1], ring, vulkan, encode, &r) < 0)
        return 1;
    int fds0 = tu_proc_count("fd");
    size_t free0, total;
    cudaMemGetInfo(&free0, &total);
    fd_min = 1 << 30, fd_max = -1, mem_min = mem_max = -1; /* the second run's samples only */
    memset(bucket_fd, 0, sizeof(bucket_fd));
    memset(bucket_mem, 0, sizeof(bucket_mem));
    if (run(argv[1], ring, vulkan, encode, &r) < 0)
        return 1;
    int fds1 = tu_proc_count("fd");
    size_t free1;
    cudaMemGetInfo(&free1, &total);
    /* NV12: 2 planes + ready + done per slot; the output ring: memory + filled + drained per slot. */
    int64_t want_imports = (int64_t)ring * (2 + 2) + (vulkan || encode ? (int64_t)ring * 3 : 0);
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
    if (encode && (strcmp(r.encoder, "ffv1_vulkan") || r.vk_readbacks || r.encoded_bytes <= 0 ||
                   r.dtoh_bytes != r.encoded_bytes)) {
        printf("encode: encoder %s, %lld readbacks, %lld bytes to the host for %lld bytes of packets (want "
               "ffv1_vulkan, none, packets only)\n", r.encoder, (long long)r.vk_readbacks, (long long)r.dtoh_bytes,
               (long long)r.encoded_bytes);
        fail = 1;
    }
    /* During the run: sampled, and no climb from the first third of it to the last. */
    if (encode) {
        print_buckets();
        int climbed = fd_max >= 0 && climbs();
        printf("trend over the run: fds %+.1f (pool moves %.0f), free memory %+.1f MiB (pool moves %.1f MiB)\n",
               fd_rise, fd_pool, -mem_fall / (1 << 20), mem_pool / (1 << 20));
        if (fd_max < 0 || climbed) {
            printf("during the run: fds %d..%d, GPU free memory %lld..%lld (%s)\n", fd_min, fd_max, mem_min, mem_max,
                   fd_max < 0 ? "never sampled" : "climbing over the run by more than the pool moves");
            fail = 1;
        }
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
    printf("%lld frames%s: imports %lld (= ring %d x %d), fds %d -> %d, CUDA free %zu -> %zu%s", (long long)r.frames_out,
           encode ? " through ffv1_vulkan from the output ring" : vulkan ? " through the output ring" : "",
           (long long)r.imports, ring, vulkan || encode ? 7 : 4, fds0, fds1, free0, free1, encode ? "" : "\n");
    if (encode)
        printf("; during the run fds %d..%d, free %lld..%lld; %lld packet bytes = dtoh_bytes\n", fd_min, fd_max,
               mem_min, mem_max, (long long)r.encoded_bytes);
    if (encode) {
        unlink(out_path);
        rmdir(dir);
    }
    return fail;
}
