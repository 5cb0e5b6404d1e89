/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Many streams on one GPU, in one process: N threads each run a job
 * (Vulkan decode -> interop ring -> CUDA chain, no host consumer) on the
 * same clip; prints the aggregate fps. Run by tools/bench.sh on the GPU.
 * Usage: bench_multistream CLIP STREAMS [CHAIN] [LOOPS] [RING]
 * CHAIN "none": decode only (frames dropped after the decoder, as
 * `vkcu --decode-only --null`). LOOPS: each stream runs its job that many
 * times in a row, so that a short clip makes a run long enough for
 * nvidia-smi's one-second samples. RING: interop ring slots (default 4).
 * Also prints the process's CPU time (user, system) over the timed part,
 * to tell a CPU-bound aggregate from an engine-bound one, the slowest and
 * fastest stream, and with VKCU_ENGINE_STATS=1 each queue's engine busy
 * time over the timed part (gpu/enginestats.h: the "engine:" lines).
 * VKCU_BENCH_PROCESSES=1: each stream in a process of its own instead (as
 * `vkcu batch --processes`; issue 37: one process's streams share a lock of
 * the GPU driver): the processes are forked before anything touches the
 * GPU, each warms up, then all start at once; the line adds up their
 * frames over the span from the first start to the last end, and their CPU
 * time. Exit 77 without a GPU.
 */
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu/vkdev.h"
#include "gpu/enginestats.h"
#include "gpu/gpu.h"
#include "core/vkcu.h"

typedef struct stream_job {
    vkcu_job_params p;
    vkcu_job_result r;
    int ret, loops;
    long long frames;
    double seconds;
} stream_job;

static double now(void);

static void *run(void *arg)
{
    stream_job *s = arg;
    double t0 = now();
    for (int i = 0; i < s->loops && s->ret >= 0; i++) {
        s->ret = vkcu_job_run(&s->p, &s->r);
        s->frames += s->r.frames_out;
    }
    s->seconds = now() - t0;
    return NULL;
}

static double cpu_seconds(int sys)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    const struct timeval *t = sys ? &ru.ru_stime : &ru.ru_utime;
    return t->tv_sec + t->tv_usec * 1e-6;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* What a stream's process sends back (processes mode). */
typedef struct proc_result {
    double start, end, cpu_user, cpu_sys;
    long long frames;
    int ret, path, readied;
    char error[600];
} proc_result;

static int run_streams(int argc, char **argv, int n, int ready_fd, int go_fd, proc_result *pr);

/* VKCU_BENCH_PROCESSES=1: n processes of one stream each. */
static int run_processes(int argc, char **argv, int n)
{
    int res[2], go[2];
    if (pipe(res) < 0 || pipe(go) < 0)
        return 1;
    pid_t *pids = calloc((size_t)n, sizeof(*pids));
    for (int i = 0; pids && i < n; i++) {
        pids[i] = fork();
        if (pids[i] < 0) {
            n = i; /* those started run */
            break;
        }
        if (pids[i] == 0) {
            close(res[0]);
            close(go[1]);
            proc_result pr;
            memset(&pr, 0, sizeof(pr));
            int rc = run_streams(argc, argv, 1, res[1], go[0], &pr);
            char c = 0;
            if (!pr.readied && write(res[1], &c, 1) != 1) /* the parent counts every process once */
                rc = 1;
            if (write(res[1], &pr, sizeof(pr)) != (ssize_t)sizeof(pr))
                rc = 1;
            _exit(rc);
        }
    }
    close(res[1]);
    close(go[0]);
    /* every process warmed up (one byte each; a process that fails says so with its result instead) */
    int ready = 0;
    char c;
    while (ready < n && read(res[0], &c, 1) == 1)
        ready++;
    close(go[1]); /* go */
    proc_result all[64];
    int got = 0, failed = 0, skipped = 0;
    while (got < n && read(res[0], &all[got], sizeof(all[got])) == (ssize_t)sizeof(all[got]))
        got++;
    for (int i = 0; i < n; i++) {
        int st = 0;
        waitpid(pids[i], &st, 0);
        skipped += WIFEXITED(st) && WEXITSTATUS(st) == 77;
    }
    free(pids);
    if (skipped) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    double t0 = 0, t1 = 0, us = 0, ss = 0, lo = 0, hi = 0;
    long long frames = 0;
    for (int i = 0; i < got; i++) {
        if (all[i].ret < 0) {
            fprintf(stderr, "stream %d: %s\n", i, all[i].error);
            failed++;
        }
        if (!i || all[i].start < t0)
            t0 = all[i].start;
        if (!i || all[i].end > t1)
            t1 = all[i].end;
        double el = all[i].end - all[i].start, f = el > 0 ? all[i].frames / el : 0;
        if (!i || f < lo)
            lo = f;
        if (!i || f > hi)
            hi = f;
        frames += all[i].frames;
        us += all[i].cpu_user;
        ss += all[i].cpu_sys;
    }
    failed += n - got;
    double el = t1 > t0 ? t1 - t0 : 1e-9;
    printf("streams=%d processes=%d frames=%lld seconds=%.3f aggregate_fps=%.1f path=%s failed=%d cpu_user_s=%.2f "
           "cpu_sys_s=%.2f cores=%.2f cpu_us_per_frame=%.1f stream_fps_min=%.1f stream_fps_max=%.1f\n",
           n, n, frames, el, frames / el, got ? vkcu_path_name((enum vkcu_path)all[0].path) : "none", failed, us, ss,
           (us + ss) / el, frames ? (us + ss) * 1e6 / frames : 0.0, lo, hi);
    return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s CLIP STREAMS [CHAIN|none] [LOOPS] [RING]\n", argv[0]);
        return 2;
    }
    int n = atoi(argv[2]);
    if (n < 1 || n > 64)
        return 2;
    const char *procs = getenv("VKCU_BENCH_PROCESSES");
    if (procs && !strcmp(procs, "1"))
        return run_processes(argc, argv, n);
    return run_streams(argc, argv, n, -1, -1, NULL);
}

/* n streams on threads of this process; in processes mode (pr set) one,
 * after saying it is ready on ready_fd and waiting for go_fd to close. */
static int run_streams(int argc, char **argv, int n, int ready_fd, int go_fd, proc_result *pr)
{
    if (!vkcu_gpu_available()) {
        if (!pr)
            printf("no CUDA device: skipped\n");
        return 77;
    }
    vkcu_set_log_level(VKCU_LOG_ERROR);
    stream_job *s = calloc(n, sizeof(*s));
    pthread_t *t = calloc(n, sizeof(*t));
    if (!s || !t)
        return 1;
    /* n streams at once: one decode queue each on the shared device. */
    vkcu_vkdev_expect((unsigned)n, 0);
    /* Warm-up: create the shared device and CUDA context once. */
    vkcu_job_params w;
    vkcu_job_params_default(&w);
    w.job.input = argv[1];
    w.job.sink = VKCU_SINK_NULL;
    w.settings.backend = VKCU_BACKEND_GPU;
    w.progress = 0;
    w.job.max_frames = 5;
    vkcu_job_result wr;
    if (vkcu_job_run(&w, &wr) < 0) {
        fprintf(stderr, "warm-up failed: %s\n", wr.error);
        if (pr) {
            pr->ret = -1;
            snprintf(pr->error, sizeof(pr->error), "warm-up failed: %s", wr.error);
        }
        return 1;
    }
    const char *chain = argc > 3 ? argv[3] : "convert=format=yuv420p";
    int decode_only = !strcmp(chain, "none");
    for (int i = 0; i < n; i++) {
        vkcu_job_params_default(&s[i].p);
        s[i].p.job.input = argv[1];
        s[i].p.job.sink = VKCU_SINK_NULL;
        s[i].p.settings.backend = VKCU_BACKEND_GPU;
        s[i].p.progress = 0;
        s[i].p.job.decode_only = decode_only;
        s[i].p.job.chain = decode_only ? NULL : chain;
        s[i].loops = argc > 4 && atoi(argv[4]) > 0 ? atoi(argv[4]) : 1;
        if (argc > 5)
            s[i].p.settings.ring_size = atoi(argv[5]);
    }
    if (vkcu_engine_stats_on())
        vkcu_engine_stats_reset(); /* the timed part only, not the warm-up */
    if (pr) {
        char c = 1, d;
        pr->readied = 1;
        if (write(ready_fd, &c, 1) != 1 || read(go_fd, &d, 1) < 0)
            return 1;
    }
    double t0 = now(), u0 = cpu_seconds(0), s0 = cpu_seconds(1);
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, run, &s[i]);
    long long frames = 0;
    int failed = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(t[i], NULL);
        frames += s[i].frames;
        if (s[i].ret < 0) {
            fprintf(stderr, "stream %d: %s\n", i, s[i].r.error);
            failed++;
        }
    }
    double el = now() - t0, us = cpu_seconds(0) - u0, ss = cpu_seconds(1) - s0;
    if (pr) {
        *pr = (proc_result){ .start = t0, .end = t0 + el, .cpu_user = us, .cpu_sys = ss, .frames = frames,
                             .ret = s[0].ret, .path = (int)s[0].r.path, .readied = 1 };
        snprintf(pr->error, sizeof(pr->error), "%s", s[0].r.error);
        free(s);
        free(t);
        return failed ? 1 : 0;
    }
    double lo = 0, hi = 0;
    for (int i = 0; i < n; i++) {
        double f = s[i].seconds > 0 ? s[i].frames / s[i].seconds : 0;
        if (!i || f < lo)
            lo = f;
        if (!i || f > hi)
            hi = f;
    }
    printf("streams=%d frames=%lld seconds=%.3f aggregate_fps=%.1f path=%s failed=%d cpu_user_s=%.2f cpu_sys_s=%.2f "
           "cores=%.2f cpu_us_per_frame=%.1f stream_fps_min=%.1f stream_fps_max=%.1f\n",
           n, frames, el, frames / el, vkcu_path_name(s[0].r.path), failed, us, ss, (us + ss) / el,
           frames ? (us + ss) * 1e6 / frames : 0.0, lo, hi);
    if (vkcu_engine_stats_on()) {
        static char text[16384];
        vkcu_engine_stats st;
        vkcu_engine_stats_get(&st);
        vkcu_engine_stats_text(&st, text, sizeof(text));
        fputs(text, stdout);
    }
    free(s);
    free(t);
    return failed ? 1 : 0;
}
