/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The output-file rule (src/core/outfile.c) on a filesystem that refuses
 * renameat2: the kernel call is made to fail with EINVAL (a seccomp filter
 * in this process), as it does on filesystems without RENAME_NOREPLACE, so
 * publishing goes through link() + unlink(). The same checks run first
 * with renameat2 available. Exits 77 when seccomp cannot be used here.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <dirent.h>

#include "core/outfile.h"
#include "test_util.h"

static char dir[PATH_MAX];

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static int holds(const char *path, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    return !strcmp(buf, text);
}

static int temporaries(void)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strstr(e->d_name, ".part") != NULL;
    if (d)
        closedir(d);
    return n;
}

/* Writes `text` to `path` through begin/commit; returns commit's result. */
static int publish(const char *path, int overwrite, const char *const *inputs, const char *text, char *err,
                   size_t errlen)
{
    char tmp[PATH_MAX + 64];
    int ret = vkcu_outfile_begin(path, overwrite, inputs, tmp, sizeof(tmp), err, errlen);
    if (ret < 0)
        return ret;
    put(tmp, text);
    return vkcu_outfile_commit(tmp, path, err, errlen);
}

static void checks(const char *mode)
{
    char a[PATH_MAX + 300], b[PATH_MAX + 300], link_b[PATH_MAX + 300], lng[PATH_MAX + 300], err[1024];
    snprintf(a, sizeof(a), "%s/%s-a.txt", dir, mode);
    snprintf(b, sizeof(b), "%s/%s-b.txt", dir, mode);
    snprintf(link_b, sizeof(link_b), "%s/%s-hard.txt", dir, mode);

    CHECK(publish(a, 0, NULL, "one", err, sizeof(err)) == 0 && holds(a, "one"), "%s: publish a new file: %s", mode, err);
    CHECK(publish(a, 0, NULL, "two", err, sizeof(err)) == VKCU_ERR_OUTPUT && strstr(err, "already exists (use overwrite=1") &&
          holds(a, "one"), "%s: an existing file is refused without overwrite: %s", mode, err);

    /* A file that appears while the job runs is not replaced. */
    char tmp[PATH_MAX + 64];
    CHECK(vkcu_outfile_begin(b, 0, NULL, tmp, sizeof(tmp), err, sizeof(err)) == 0, "%s: begin: %s", mode, err);
    put(tmp, "mine");
    put(b, "theirs");
    CHECK(vkcu_outfile_commit(tmp, b, err, sizeof(err)) == VKCU_ERR_OUTPUT &&
          strstr(err, "another process wrote it while this job ran") && holds(b, "theirs"),
          "%s: a file that appeared meanwhile is kept: %s", mode, err);
    CHECK(access(tmp, F_OK) < 0, "%s: the refused temporary %s is removed", mode, tmp);

    /* -y replaces, but never an input, under any name. */
    CHECK(publish(b, 1, NULL, "new", err, sizeof(err)) == 0 && holds(b, "new"), "%s: overwrite: %s", mode, err);
    CHECK(link(b, link_b) == 0, "%s: link", mode);
    const char *inputs[] = { b, NULL };
    CHECK(publish(link_b, 1, inputs, "bad", err, sizeof(err)) == VKCU_ERR_OUTPUT &&
          strstr(err, "an input of this job") && holds(b, "new"), "%s: a hard link to the input is refused: %s", mode, err);

    /* The longest valid name. */
    int len = snprintf(lng, sizeof(lng), "%s/%s-", dir, mode);
    memset(lng + len, 'n', 255 - strlen(mode) - 1 - 4);
    strcpy(lng + len + 255 - strlen(mode) - 1 - 4, ".mkv");
    CHECK(publish(lng, 0, NULL, "long", err, sizeof(err)) == 0 && holds(lng, "long"), "%s: a 255-byte name: %s", mode, err);

    /* What a signal handler removes. */
    char t1[PATH_MAX + 64], t2[PATH_MAX + 64];
    snprintf(a, sizeof(a), "%s/%s-c.mkv", dir, mode);
    CHECK(vkcu_outfile_begin(a, 0, NULL, t1, sizeof(t1), err, sizeof(err)) == 0 &&
          vkcu_outfile_begin(a, 0, NULL, t2, sizeof(t2), err, sizeof(err)) == 0 && temporaries() == 2,
          "%s: two temporaries: %s", mode, err);
    vkcu_outfile_abort_all();
    CHECK(temporaries() == 0, "%s: abort_all removes every temporary (%d left)", mode, temporaries());
    vkcu_outfile_abort(t1);
    vkcu_outfile_abort(t2);
}

/* renameat2 fails with EINVAL from now on, as on filesystems without it. */
static int refuse_renameat2(void)
{
#if defined(__x86_64__) && defined(SYS_renameat2)
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_renameat2, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { .len = (unsigned short)(sizeof(filter) / sizeof(filter[0])), .filter = filter };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
        return -1;
    errno = 0;
    return syscall(SYS_renameat2, AT_FDCWD, "/nonexistent-a", AT_FDCWD, "/nonexistent-b", 1) < 0 && errno == EINVAL
               ? 0 : -1;
#else
    return -1;
#endif
}

int main(void)
{
    snprintf(dir, sizeof(dir), "%s/vkcu-outfile-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    checks("renameat2");
    int fallback = refuse_renameat2() == 0;
    if (fallback)
        checks("link");
    tu_remove_tree(dir);
    if (tu_failures) {
        fprintf(stderr, "%d check(s) failed\n", tu_failures);
        return 1;
    }
    if (!fallback) {
        printf("renameat2 path checked; seccomp is not available here, so the link()+unlink() fallback was not\n");
        return 77;
    }
    return 0;
}
