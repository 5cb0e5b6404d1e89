/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu-prof: where a process's threads wait, measured from inside it
 * (issue 37: find what serialises streams in one process). Loaded with
 * LD_PRELOAD into any program (vkcu, bench_multistream); no debugger and no
 * perf are needed on the GPU machine.
 *
 * Three tables, each keyed by the call stack (16 frames, as module+offset):
 * - lock: a pthread_mutex_lock that found the mutex taken: how often, and
 *   how long the caller then waited. Every mutex of the process is seen:
 *   vkcu's, FFmpeg's (hwcontext, queue locks), the CUDA runtime's (linked
 *   statically, it still calls libc's pthread functions) and the driver's.
 * - cond: pthread_cond_wait / timedwait: how long threads sat in them (a
 *   thread waiting for work is there too: this table says where time goes,
 *   the lock table says what is fought over).
 * - sample: every thread's stack, VKCU_PROF_HZ times a second (default 200;
 *   0: none), taken by a signal the sampler thread sends to each thread in
 *   turn, with the thread's name (as it is at that moment): running or
 *   blocked, where it is.
 * The report is written at exit to VKCU_PROF_OUT (default: standard error),
 * addresses as module+offset; tools/prof/symbolize.py turns them into
 * function names and lines with the unstripped binaries of the same build.
 *
 * Async-signal safety: the signal handler only unwinds (glibc backtrace,
 * primed in the constructor so that libgcc's unwinder is loaded before the
 * first signal) and adds to the table under a spin flag; a thread already
 * inside the table (a lock record) is not sampled, so the handler never
 * spins on its own thread's flag.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define DEPTH 16
#define SLOTS 8192 /* entries of the table (power of two) */
#define NAMES 256  /* thread names remembered */

enum { KIND_LOCK, KIND_COND, KIND_SAMPLE };
static const char *const kind_names[] = { "lock", "cond", "sample" };

typedef struct entry {
    int used, kind, name, depth;
    void *pc[DEPTH];
    uint64_t count, ns;
} entry;

static entry table[SLOTS];
static atomic_flag table_busy = ATOMIC_FLAG_INIT;
static atomic_ullong dropped;
static char names[NAMES][16]; /* thread names, as prctl gives them */
static atomic_int nb_names;
/* This thread is inside the table (or about to be): the signal handler then
 * drops its sample instead of spinning on the lock the thread itself holds.
 * volatile sig_atomic_t with signal fences (table_enter/leave): a plain
 * flag's `1` before add() and `0` after it were one dead store to the
 * compiler, so a sample landing inside add() spun for ever (prof.sh hung
 * with 99% CPU). initial-exec: no lazy TLS allocation inside the handler. */
static __thread volatile sig_atomic_t in_table __attribute__((tls_model("initial-exec")));

static inline void table_enter(void)
{
    in_table = 1;
    atomic_signal_fence(memory_order_seq_cst);
}

static inline void table_leave(void)
{
    atomic_signal_fence(memory_order_seq_cst);
    in_table = 0;
}

static int (*real_lock)(pthread_mutex_t *);
static int (*real_trylock)(pthread_mutex_t *);
static int (*real_cond_wait)(pthread_cond_t *, pthread_mutex_t *);
static int (*real_cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
static int active, sig_no;
static atomic_int stopping;
static pthread_t sampler;
static int sampler_started;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The index of the calling thread's name as it is now (a thread may be
 * renamed after it starts); called with the table held. prctl is a plain
 * system call, so the signal handler may make it too. */
static int name_now(void)
{
    char n[16] = "";
    prctl(PR_GET_NAME, n, 0, 0, 0);
    int nb = atomic_load(&nb_names);
    for (int i = 0; i < nb; i++)
        if (!strncmp(names[i], n, sizeof(n)))
            return i;
    if (nb >= NAMES)
        return -1;
    memcpy(names[nb], n, sizeof(n));
    atomic_store(&nb_names, nb + 1);
    return nb;
}

static void add(int kind, void *const *pc, int depth, uint64_t ns)
{
    while (atomic_flag_test_and_set_explicit(&table_busy, memory_order_acquire))
        ;
    int name = name_now();
    uint64_t h = (uint64_t)kind * 0x9e3779b97f4a7c15ull ^ (uint64_t)(name + 1) * 0xc2b2ae3d27d4eb4full;
    for (int i = 0; i < depth; i++)
        h = (h ^ (uintptr_t)pc[i]) * 0x100000001b3ull;
    for (unsigned k = 0; k < SLOTS; k++) {
        entry *e = &table[(h + k) & (SLOTS - 1)];
        if (!e->used) {
            e->used = 1, e->kind = kind, e->name = name, e->depth = depth;
            memcpy(e->pc, pc, sizeof(void *) * (size_t)depth);
        } else if (e->kind != kind || e->name != name || e->depth != depth ||
                   memcmp(e->pc, pc, sizeof(void *) * (size_t)depth)) {
            continue;
        }
        e->count++;
        e->ns += ns;
        atomic_flag_clear_explicit(&table_busy, memory_order_release);
        return;
    }
    atomic_flag_clear_explicit(&table_busy, memory_order_release);
    atomic_fetch_add(&dropped, 1);
}

/* The stack above the interposed call (its own frame left out). */
__attribute__((noinline)) static int stack_of(void **pc)
{
    void *raw[DEPTH + 2];
    int n = backtrace(raw, DEPTH + 2);
    int skip = n > 2 ? 2 : n;
    memcpy(pc, raw + skip, sizeof(void *) * (size_t)(n - skip));
    return n - skip;
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
    if (!real_lock)
        real_lock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
    if (!active || in_table)
        return real_lock(m);
    if (!real_trylock)
        real_trylock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_trylock");
    int ret = real_trylock(m);
    if (ret != EBUSY)
        return ret; /* taken at once (0), or an error the lock would give too (EDEADLK, EINVAL...) */
    table_enter();
    void *pc[DEPTH];
    int depth = stack_of(pc);
    table_leave(); /* sampled while it waits: the samples show the wait too */
    uint64_t t0 = now_ns();
    ret = real_lock(m);
    uint64_t waited = now_ns() - t0;
    table_enter();
    add(KIND_LOCK, pc, depth, waited);
    table_leave();
    return ret;
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    if (!real_cond_wait)
        real_cond_wait = (int (*)(pthread_cond_t *, pthread_mutex_t *))dlvsym(RTLD_NEXT, "pthread_cond_wait",
                                                                             "GLIBC_2.3.2");
    if (!active || in_table)
        return real_cond_wait(c, m);
    table_enter();
    void *pc[DEPTH];
    int depth = stack_of(pc);
    table_leave();
    uint64_t t0 = now_ns();
    int ret = real_cond_wait(c, m);
    table_enter();
    add(KIND_COND, pc, depth, now_ns() - t0);
    table_leave();
    return ret;
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t)
{
    if (!real_cond_timedwait)
        real_cond_timedwait = (int (*)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *))dlvsym(
            RTLD_NEXT, "pthread_cond_timedwait", "GLIBC_2.3.2");
    if (!active || in_table)
        return real_cond_timedwait(c, m, t);
    table_enter();
    void *pc[DEPTH];
    int depth = stack_of(pc);
    table_leave();
    uint64_t t0 = now_ns();
    int ret = real_cond_timedwait(c, m, t);
    table_enter();
    add(KIND_COND, pc, depth, now_ns() - t0);
    table_leave();
    return ret;
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si, (void)uc;
    if (in_table)
        return;
    int saved = errno;
    table_enter();
    void *raw[DEPTH + 2];
    int n = backtrace(raw, DEPTH + 2);
    /* raw[0] is this handler, raw[1] the signal trampoline */
    int skip = n > 2 ? 2 : n;
    add(KIND_SAMPLE, raw + skip, n - skip, 0);
    table_leave();
    errno = saved;
}

static void *sampler_main(void *arg)
{
    (void)arg;
    table_enter(); /* the sampler itself is neither sampled nor counted */
    const char *e = getenv("VKCU_PROF_HZ");
    long hz = e ? strtol(e, NULL, 10) : 200;
    struct timespec gap = { 0, 1000000000L / (hz > 0 ? hz : 1) };
    pid_t self = (pid_t)syscall(SYS_gettid), pid = getpid();
    while (!atomic_load(&stopping)) {
        DIR *d = opendir("/proc/self/task");
        struct dirent *de;
        while (d && (de = readdir(d))) {
            pid_t tid = (pid_t)atoi(de->d_name);
            if (tid <= 0 || tid == self)
                continue;
            syscall(SYS_tgkill, pid, tid, sig_no);
        }
        if (d)
            closedir(d);
        nanosleep(&gap, NULL);
    }
    return NULL;
}

static void module_of(void *pc, char *out, size_t len)
{
    Dl_info di;
    if (dladdr(pc, &di) && di.dli_fname) {
        const char *base = strrchr(di.dli_fname, '/');
        snprintf(out, len, "%s+0x%lx", base ? base + 1 : di.dli_fname,
                 (unsigned long)((uintptr_t)pc - (uintptr_t)di.dli_fbase));
    } else {
        snprintf(out, len, "?+%p", pc);
    }
}

__attribute__((destructor)) static void report(void)
{
    if (!active)
        return;
    atomic_store(&stopping, 1);
    if (sampler_started)
        pthread_join(sampler, NULL);
    table_enter();
    active = 0;
    const char *path = getenv("VKCU_PROF_OUT");
    FILE *f = path && *path ? fopen(path, "w") : stderr;
    if (!f)
        f = stderr;
    while (atomic_flag_test_and_set_explicit(&table_busy, memory_order_acquire))
        ;
    fprintf(f, "# vkcu-prof 1: kind count ns thread frames (module+offset, innermost first)\n");
    fprintf(f, "# dropped %llu\n", (unsigned long long)atomic_load(&dropped));
    for (unsigned i = 0; i < SLOTS; i++) {
        entry *e = &table[i];
        if (!e->used)
            continue;
        fprintf(f, "%s %llu %llu %s", kind_names[e->kind], (unsigned long long)e->count,
                (unsigned long long)e->ns, e->name >= 0 && names[e->name][0] ? names[e->name] : "?");
        for (int k = 0; k < e->depth; k++) {
            char m[512];
            module_of(e->pc[k], m, sizeof(m));
            fprintf(f, " %s", m);
        }
        fputc('\n', f);
    }
    atomic_flag_clear_explicit(&table_busy, memory_order_release);
    if (f != stderr)
        fclose(f);
}

__attribute__((constructor)) static void start(void)
{
    const char *on = getenv("VKCU_PROF_OUT");
    if (!on)
        return; /* loaded, but not asked for: the process runs as without it */
    void *prime[2];
    backtrace(prime, 2); /* loads the unwinder now, not in the first signal */
    real_lock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
    real_trylock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_trylock");
    sig_no = SIGRTMIN + 7;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(sig_no, &sa, NULL);
    active = 1;
    const char *hz = getenv("VKCU_PROF_HZ");
    if (!(hz && atoi(hz) <= 0) && pthread_create(&sampler, NULL, sampler_main, NULL) == 0)
        sampler_started = 1;
}
