/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Queue claims across processes (src/gpu/qclaim.c), without a GPU: made-up
 * GPUs and queue counts in a scratch folder. Checks that claim sets spread
 * over the least-claimed queues (within a process and across forked
 * processes started at the same moment), that a pin takes its queue, that
 * a process killed with SIGKILL leaves no claim behind and its queue is the
 * next one taken, and that the folder's choice and its failures are the
 * documented ones. Nothing is timed: processes meet through pipes.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu/qclaim.h"
#include "test_util.h"

static char dir[256];

static void gpu(uint8_t uuid[16], uint8_t id)
{
    memset(uuid, 0xa0, 16);
    uuid[15] = id;
}

/* One claim set of `want` claims; the queues it took, as "0 1 2". */
static vkcu_qclaim *take(const uint8_t *uuid, uint32_t nq, uint32_t want, int pin, char *queues, size_t len)
{
    vkcu_qclaim *c = NULL;
    char why[512] = "";
    int r = vkcu_qclaim_take(dir, uuid, "decode", 3, nq, want, pin, &c, why, sizeof(why));
    CHECK(r == 0 && c, "take %u of %u queues (pin %d): %d %s", want, nq, pin, r, why);
    queues[0] = 0;
    for (uint32_t i = 0; c && i < vkcu_qclaim_count(c); i++)
        snprintf(queues + strlen(queues), len - strlen(queues), "%s%u", i ? " " : "", vkcu_qclaim_queue(c, i));
    return c;
}

static void counts_text(const uint8_t *uuid, uint32_t nq, char *out, size_t len)
{
    uint32_t n[VKCU_QCLAIM_MAX_QUEUES];
    out[0] = 0;
    if (vkcu_qclaim_counts(dir, uuid, "decode", 3, nq, n) < 0) {
        snprintf(out, len, "error");
        return;
    }
    for (uint32_t i = 0; i < nq; i++)
        snprintf(out + strlen(out), len - strlen(out), "%s%u", i ? " " : "", n[i]);
}

static void in_process(void)
{
    uint8_t a[16];
    gpu(a, 1);
    char q[256], n[256];
    vkcu_qclaim *set[8];
    /* Seven one-claim sets (as seven one-stream processes): one per queue, in order. */
    for (int i = 0; i < 7; i++) {
        set[i] = take(a, 7, 1, -1, q, sizeof(q));
        char want[8];
        snprintf(want, sizeof(want), "%d", i);
        CHECK(!strcmp(q, want), "set %d took queue %s, expected %s", i, q, want);
    }
    counts_text(a, 7, n, sizeof(n));
    CHECK(!strcmp(n, "1 1 1 1 1 1 1"), "counts after 7 sets: %s", n);
    set[7] = take(a, 7, 1, -1, q, sizeof(q));
    CHECK(!strcmp(q, "0"), "the 8th set took %s, expected 0 (all tied, lowest index)", q);
    /* Released: its queue is the least claimed again. */
    vkcu_qclaim_release(&set[3]);
    CHECK(set[3] == NULL, "release clears the pointer");
    counts_text(a, 7, n, sizeof(n));
    CHECK(!strcmp(n, "2 1 1 0 1 1 1"), "counts after releasing queue 3: %s", n);
    set[3] = take(a, 7, 1, -1, q, sizeof(q));
    CHECK(!strcmp(q, "3"), "after a release the next set took %s, expected 3", q);
    /* A set of several claims counts its own: 14 claims on 7 queues are two on each. */
    uint8_t b[16];
    gpu(b, 2);
    vkcu_qclaim *big = take(b, 7, 14, -1, q, sizeof(q));
    CHECK(!strcmp(q, "0 1 2 3 4 5 6 0 1 2 3 4 5 6"), "14 claims on 7 queues: %s", q);
    counts_text(b, 7, n, sizeof(n));
    CHECK(!strcmp(n, "2 2 2 2 2 2 2"), "counts of the 14-claim set: %s", n);
    /* 3 claims beside it go to queues 0 1 2 (then three each there). */
    vkcu_qclaim *three = take(b, 7, 3, -1, q, sizeof(q));
    CHECK(!strcmp(q, "0 1 2"), "3 claims beside 14: %s", q);
    /* A pin takes its queue whatever the counts. */
    vkcu_qclaim *pinned = take(b, 7, 2, 6, q, sizeof(q));
    CHECK(!strcmp(q, "6 6"), "pinned to 6: %s", q);
    counts_text(b, 7, n, sizeof(n));
    CHECK(!strcmp(n, "3 3 3 2 2 2 4"), "counts with the pin: %s", n);
    vkcu_qclaim_release(&big);
    vkcu_qclaim_release(&three);
    vkcu_qclaim_release(&pinned);
    counts_text(b, 7, n, sizeof(n));
    CHECK(!strcmp(n, "0 0 0 0 0 0 0"), "counts after every release: %s", n);
    /* Another family of the same GPU is counted apart. */
    vkcu_qclaim *other = NULL;
    char why[256];
    CHECK(vkcu_qclaim_take(dir, a, "compute", 2, 8, 1, -1, &other, why, sizeof(why)) == 0 && vkcu_qclaim_count(other) == 1 &&
              vkcu_qclaim_queue(other, 0) == 0,
          "compute family: %s", why);
    /* Wrong arguments are refused, with a reason. */
    vkcu_qclaim *bad = NULL;
    why[0] = 0;
    CHECK(vkcu_qclaim_take(dir, a, "decode", 3, 7, 1, 7, &bad, why, sizeof(why)) < 0 && !bad && why[0],
          "pin 7 of 7 queues accepted");
    CHECK(vkcu_qclaim_take(dir, a, "decode", 3, 0, 1, -1, &bad, why, sizeof(why)) < 0 && !bad, "0 queues accepted");
    CHECK(vkcu_qclaim_take(dir, a, "Decode/", 3, 7, 1, -1, &bad, why, sizeof(why)) < 0 && !bad, "a bad role accepted");
    vkcu_qclaim_release(&other);
    for (int i = 0; i < 8; i++)
        vkcu_qclaim_release(&set[i]);
    vkcu_qclaim_release(NULL);
}

/* A child: waits for "go" (the parent closes the pipe), takes `want`
 * claims, writes the queues taken ("3 4\n") and then waits until the
 * parent closes `hold` (or kills it). */
static pid_t child(const uint8_t *uuid, uint32_t nq, uint32_t want, const int go_pipe[2], const int hold_pipe[2],
                   int *result)
{
    int go = go_pipe[0], hold = hold_pipe[0];
    int rp[2];
    if (pipe(rp) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(rp[0]);
        close(go_pipe[1]); /* else the reads below would never see the pipes' ends */
        close(hold_pipe[1]);
        char c;
        while (read(go, &c, 1) > 0)
            ;
        vkcu_qclaim *set = NULL;
        char why[200], line[256] = "";
        if (vkcu_qclaim_take(dir, uuid, "decode", 3, nq, want, -1, &set, why, sizeof(why)) < 0)
            snprintf(line, sizeof(line), "error %s", why);
        for (uint32_t i = 0; set && i < vkcu_qclaim_count(set); i++)
            snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s%u", i ? " " : "", vkcu_qclaim_queue(set, i));
        strcat(line, "\n");
        if (write(rp[1], line, strlen(line)) < 0)
            _exit(2);
        close(rp[1]);
        while (read(hold, &c, 1) > 0)
            ;
        vkcu_qclaim_release(&set);
        _exit(0);
    }
    close(rp[1]);
    *result = rp[0];
    return pid;
}

static void read_line(int fd, char *buf, size_t len)
{
    size_t n = 0;
    char c;
    while (n + 1 < len && read(fd, &c, 1) == 1 && c != '\n')
        buf[n++] = c;
    buf[n] = 0;
    close(fd);
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* Collects "GPU role family q:n q:n" per (GPU, role, family), one per line. */
static void list_cb(void *opaque, const char *g, const char *role, uint32_t family, uint32_t queue, uint32_t claims)
{
    char *out = opaque, head[128];
    snprintf(head, sizeof(head), "%s %s %u", g, role, family);
    char *last = strrchr(out, '\n');
    const char *cur = last ? last + 1 : out;
    if (strncmp(cur, head, strlen(head)))
        snprintf(out + strlen(out), 1024 - strlen(out), "%s%s", out[0] ? "\n" : "", head);
    snprintf(out + strlen(out), 1024 - strlen(out), " %u:%u", queue, claims);
}

static void across_processes(void)
{
    uint8_t c[16];
    gpu(c, 3);
    int go[2], hold[2];
    if (pipe(go) < 0 || pipe(hold) < 0) {
        CHECK(0, "pipe");
        return;
    }
    /* Seven processes released at once: every queue taken exactly once. */
    pid_t pid[9];
    int res[9];
    char line[9][256];
    for (int i = 0; i < 7; i++)
        pid[i] = child(c, 7, 1, go, hold, &res[i]);
    close(go[0]);
    close(go[1]); /* go */
    int q[7];
    for (int i = 0; i < 7; i++) {
        read_line(res[i], line[i], sizeof(line[i]));
        q[i] = atoi(line[i]);
        CHECK(line[i][0] >= '0' && line[i][0] <= '9', "child %d: '%s'", i, line[i]);
    }
    qsort(q, 7, sizeof(q[0]), cmp_int);
    for (int i = 0; i < 7; i++)
        CHECK(q[i] == i, "7 processes at once took queues %d %d %d %d %d %d %d", q[0], q[1], q[2], q[3], q[4], q[5], q[6]);
    char n[256];
    counts_text(c, 7, n, sizeof(n));
    CHECK(!strcmp(n, "1 1 1 1 1 1 1"), "counts with 7 processes: %s", n);
    /* kill -9 the one on queue 4: its claim is gone once it is reaped. */
    int victim = -1;
    for (int i = 0; i < 7; i++)
        if (atoi(line[i]) == 4)
            victim = i;
    CHECK(victim >= 0, "no process on queue 4");
    if (victim >= 0) {
        kill(pid[victim], SIGKILL);
        int st;
        waitpid(pid[victim], &st, 0);
        CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the victim was not killed");
        counts_text(c, 7, n, sizeof(n));
        CHECK(!strcmp(n, "1 1 1 1 0 1 1"), "counts after kill -9 of queue 4's process: %s", n);
        /* The next process takes the dead one's queue; one with two claims then takes 0 and 1. */
        int go2[2];
        if (pipe(go2) == 0) {
            pid[7] = child(c, 7, 1, go2, hold, &res[7]);
            close(go2[0]);
            close(go2[1]);
            read_line(res[7], line[7], sizeof(line[7]));
            CHECK(!strcmp(line[7], "4"), "after the kill the next process took '%s', expected 4", line[7]);
        }
        if (pipe(go2) == 0) {
            pid[8] = child(c, 7, 2, go2, hold, &res[8]);
            close(go2[0]);
            close(go2[1]);
            read_line(res[8], line[8], sizeof(line[8]));
            CHECK(!strcmp(line[8], "0 1"), "a 2-claim process took '%s', expected '0 1'", line[8]);
        }
        pid[victim] = -1;
    }
    /* What vkcu probe lists: this GPU's seven queues, sorted. */
    char listing[1024] = "";
    int listed = vkcu_qclaim_list(dir, list_cb, listing);
    CHECK(listed >= 7 && strstr(listing, "a0a0a0a0a0a0a0a0a0a0a0a0a0a0a003 decode 3 0:2 1:2 2:1 3:1 4:1 5:1 6:1"),
          "listing (%d): %s", listed, listing);
    /* Everyone leaves: no claim is left. */
    close(hold[1]);
    for (int i = 0; i < 9; i++)
        if (pid[i] > 0)
            waitpid(pid[i], NULL, 0);
    close(hold[0]);
    counts_text(c, 7, n, sizeof(n));
    CHECK(!strcmp(n, "0 0 0 0 0 0 0"), "counts after all processes left: %s", n);
}

static void folders(const char *base)
{
    char d[512], why[512], expect[512];
    /* VKCU_QUEUE_CLAIMS names the folder, or turns claims off. */
    setenv("VKCU_QUEUE_CLAIMS", "off", 1);
    CHECK(vkcu_qclaim_dir(d, sizeof(d), 1, why, sizeof(why)) < 0 && strstr(why, "off"), "off: %s", why);
    /* XDG_RUNTIME_DIR/vkcu-queues: only named to read claims, made with mode 0700 to take them. */
    unsetenv("VKCU_QUEUE_CLAIMS");
    setenv("XDG_RUNTIME_DIR", base, 1);
    snprintf(expect, sizeof(expect), "%s/vkcu-queues", base);
    struct stat st;
    CHECK(vkcu_qclaim_dir(d, sizeof(d), 0, why, sizeof(why)) == 0 && !strcmp(d, expect) && stat(expect, &st) < 0,
          "reading claims made the folder %s", d);
    CHECK(vkcu_qclaim_dir(d, sizeof(d), 1, why, sizeof(why)) == 0 && !strcmp(d, expect), "XDG: %s (%s)", d, why);
    CHECK(stat(expect, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700, "the folder's mode %o",
          (unsigned)st.st_mode & 0777);
    /* A folder that cannot be made: refused with its name (then no claims). */
    char file[512];
    snprintf(file, sizeof(file), "%s/a-file", base);
    FILE *f = fopen(file, "w");
    if (f)
        fclose(f);
    snprintf(expect, sizeof(expect), "%s/a-file/claims", base);
    setenv("VKCU_QUEUE_CLAIMS", expect, 1);
    why[0] = 0;
    CHECK(vkcu_qclaim_dir(d, sizeof(d), 1, why, sizeof(why)) < 0 && strstr(why, expect), "unmakeable folder: %s", why);
    vkcu_qclaim *c = NULL;
    uint8_t u[16];
    gpu(u, 9);
    CHECK(vkcu_qclaim_take(expect, u, "decode", 3, 7, 1, -1, &c, why, sizeof(why)) < 0 && !c && strstr(why, "a-file"),
          "take in a missing folder: %s", why);
    /* Without XDG_RUNTIME_DIR: /dev/shm/vkcu-queues-UID where /dev/shm exists. */
    unsetenv("VKCU_QUEUE_CLAIMS");
    unsetenv("XDG_RUNTIME_DIR");
    if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0) {
        snprintf(expect, sizeof(expect), "/dev/shm/vkcu-queues-%u", (unsigned)geteuid());
        int existed = stat(expect, &st) == 0;
        int r = vkcu_qclaim_dir(d, sizeof(d), 1, why, sizeof(why));
        CHECK(r == 0 ? !strcmp(d, expect) : strstr(why, expect) != NULL, "/dev/shm: %d %s %s", r, d, why);
        if (r == 0 && !existed)
            rmdir(expect); /* the user's real folder: left as it was */
    }
}

/* `test_qclaim hold GPUHEX ROLE FAMILY QUEUES CLAIMS` (tests/cli/queue-claims.sh):
 * takes the claims in the folder vkcu would use, prints the queues taken
 * on one line, then holds them until standard input ends. */
static int hold(char **argv)
{
    uint8_t uuid[16];
    for (int i = 0; i < 16; i++) {
        unsigned b = 0;
        if (strlen(argv[2]) != 32 || sscanf(argv[2] + 2 * i, "%2x", &b) != 1)
            return 2;
        uuid[i] = (uint8_t)b;
    }
    char d[512], why[512];
    vkcu_qclaim *c = NULL;
    if (vkcu_qclaim_dir(d, sizeof(d), 1, why, sizeof(why)) < 0 ||
        vkcu_qclaim_take(d, uuid, argv[3], (uint32_t)atoi(argv[4]), (uint32_t)atoi(argv[5]), (uint32_t)atoi(argv[6]), -1,
                         &c, why, sizeof(why)) < 0) {
        printf("error %s\n", why);
        return 1;
    }
    for (uint32_t i = 0; i < vkcu_qclaim_count(c); i++)
        printf("%s%u", i ? " " : "", vkcu_qclaim_queue(c, i));
    printf("\n");
    fflush(stdout);
    while (getchar() != EOF)
        ;
    vkcu_qclaim_release(&c);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 7 && !strcmp(argv[1], "hold"))
        return hold(argv);
    char base[] = "/tmp/vkcu-qclaim-XXXXXX";
    if (!mkdtemp(base)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(dir, sizeof(dir), "%s/claims", base);
    setenv("VKCU_QUEUE_CLAIMS", dir, 1);
    char why[512], got[512];
    CHECK(vkcu_qclaim_dir(got, sizeof(got), 1, why, sizeof(why)) == 0 && !strcmp(got, dir), "VKCU_QUEUE_CLAIMS: %s %s", got,
          why);
    in_process();
    across_processes();
    folders(base);
    tu_remove_tree(base);
    if (tu_failures) {
        fprintf(stderr, "%d check(s) failed\n", tu_failures);
        return 1;
    }
    printf("queue claims: spread, pins, kill -9, folders: all checks passed\n");
    return 0;
}
