/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Every file vkcu writes goes through here, so that one rule holds for all
 * of them (outputs, hash lists, reports, diff images, JUnit files, batch
 * records):
 *
 * - an existing file is refused unless the caller passes overwrite (-y);
 * - an input of the same job is never written over, even with -y. Inputs
 *   are compared by device and inode, so a hard link or a symbolic link to
 *   the input counts as the input; an input "-" is the file standard input
 *   is redirected from, and standard output redirected onto an input
 *   (`>> in.mkv`) is refused like a path naming it;
 * - a file appears only complete: it is written under a short hidden
 *   temporary name in the same folder, fsync'ed, moved into place, and the
 *   folder fsync'ed. Without -y the move never replaces anything
 *   (renameat2 RENAME_NOREPLACE, or link + unlink where the filesystem has
 *   no renameat2), so of two jobs racing for one name exactly one wins;
 *   with -y the move is one atomic rename();
 * - temporary names are `.vkcu-PID-N.part` plus the output's extension
 *   (capped), so that any valid output name (up to 255 bytes) has a valid
 *   temporary name, and muxers that look at the extension still see it;
 * - the temporaries of the process live in a fixed table that a signal
 *   handler can walk without a lock (vkcu_outfile_abort_all), and each
 *   temporary is flock'ed while it is written, so a later run can tell a
 *   dead process's leftover (pid gone, lock free) from a live one and
 *   remove it.
 *
 * "-" is standard output for every writer (vkcu_outfile_fopen opens it;
 * vkcu_outfile_not_terminal refuses binary data for a terminal); a file
 * literally named "-" is written as "./-" under the rule above. Files that
 * are not regular (devices, FIFOs) are written in place. A dangling
 * symbolic link is refused without overwrite (it is neither missing nor a
 * file, and the no-replace move would fail only after all the work).
 *
 * Confined writers (verify --update) write relative to a folder they hold
 * open (vkcu_outfile_write_at): the folder is resolved once, and a name
 * below it cannot be led out by a link swapped in while the job ran.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/file.h"
#include "util/filelock.h"
#include "util/log.h"
#include "outfile.h"
#include "util/xxhash64.h"

#define MAX_TEMPS 1024
#define MAX_INPUTS 8
#define EXT_MAX 16 /* longest extension kept on a temporary name, dot included */

/* One temporary (or batch claim) of this process. `state` is a seqlock:
 * bits 0-1 are FREE/FILLING/LIVE, the rest a generation bumped on every
 * claim, so that the signal handler can copy `path` without a lock and
 * notice when the slot changed under it. */
enum { SLOT_FREE = 0, SLOT_FILLING = 1, SLOT_LIVE = 2 };
typedef struct temp_slot {
    atomic_uint state;
    char path[PATH_MAX];
    /* Below: only touched by the owning thread between begin and commit. */
    int fd;                   /* open on the temporary, holding its flock; -1 for a reserved name */
    int dirfd;                /* path is relative to this folder (AT_FDCWD: to the working folder) */
    int overwrite;
    int nb_inputs;
    dev_t in_dev[MAX_INPUTS];
    ino_t in_ino[MAX_INPUTS];
} temp_slot;

static temp_slot slots[MAX_TEMPS];
static atomic_uint temp_counter;

static temp_slot *slot_claim(const char *path)
{
    for (int i = 0; i < MAX_TEMPS; i++) {
        unsigned s = atomic_load(&slots[i].state);
        if ((s & 3) != SLOT_FREE)
            continue;
        unsigned filling = ((s >> 2) + 1) << 2 | SLOT_FILLING;
        if (!atomic_compare_exchange_strong(&slots[i].state, &s, filling))
            continue;
        temp_slot *t = &slots[i];
        snprintf(t->path, sizeof(t->path), "%s", path);
        t->fd = -1;
        t->dirfd = AT_FDCWD;
        t->overwrite = 0;
        t->nb_inputs = 0;
        atomic_store(&t->state, (filling & ~3u) | SLOT_LIVE);
        return t;
    }
    return NULL;
}

static temp_slot *slot_find(const char *path)
{
    for (int i = 0; i < MAX_TEMPS; i++)
        if ((atomic_load(&slots[i].state) & 3) == SLOT_LIVE && !strcmp(slots[i].path, path))
            return &slots[i];
    return NULL;
}

static void slot_release(temp_slot *t)
{
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
    unsigned s = atomic_load(&t->state);
    atomic_store(&t->state, s & ~3u);
}

/* Async-signal-safe: atomics, fstatat and unlinkat only. */
void vkcu_outfile_abort_all(void)
{
    for (int i = 0; i < MAX_TEMPS; i++) {
        char path[PATH_MAX];
        unsigned s1 = atomic_load(&slots[i].state);
        if ((s1 & 3) != SLOT_LIVE)
            continue;
        memcpy(path, slots[i].path, sizeof(path));
        path[sizeof(path) - 1] = 0;
        int dirfd = slots[i].dirfd;
        atomic_thread_fence(memory_order_seq_cst);
        if (atomic_load(&slots[i].state) != s1)
            continue; /* released or reused meanwhile: its owner has dealt with it */
        struct stat st;
        if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
            unlinkat(dirfd, path, 0);
    }
}

/* ---- the rule ---- */

static int is_stdout(const char *path)
{
    return !strcmp(path, "-");
}

static int is_in_place(const char *path, const struct stat *st, int exists)
{
    return is_stdout(path) || (exists && !S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode));
}

FILE *vkcu_outfile_fopen(const char *tmp, const char *mode)
{
    if (!is_stdout(tmp))
        return fopen(tmp, mode);
    /* Its own descriptor: the caller's fclose leaves the process's stdout open. */
    fflush(stdout);
    int fd = dup(STDOUT_FILENO);
    FILE *f = fd >= 0 ? fdopen(fd, mode) : NULL;
    if (!f && fd >= 0)
        close(fd);
    return f;
}

int vkcu_outfile_fclose(FILE *f, const char *tmp)
{
    errno = 0;
    int bad = fflush(f) != 0 || ferror(f);
    int e = errno, gone = bad && is_stdout(tmp) && vkcu_stream_reader_gone(f);
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (!bad || gone)
        return 0;
    errno = e ? e : EIO;
    return -1;
}

int vkcu_outfile_not_terminal(const char *path, const char *what, char *err, size_t errlen)
{
    if (!is_stdout(path) || !isatty(STDOUT_FILENO))
        return 0;
    snprintf(err, errlen, "%s: %s is binary and standard output is a terminal: redirect it to a file or a pipe "
             "(or name a file; a file called '-' is ./-)", what, path);
    return VKCU_ERR_USAGE;
}

static void split_dir(const char *path, char *dir, size_t dirlen, const char **base)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, dirlen, ".");
        *base = path;
    } else if (slash == path) {
        snprintf(dir, dirlen, "/");
        *base = slash + 1;
    } else {
        snprintf(dir, dirlen, "%.*s", (int)(slash - path), path);
        *base = slash + 1;
    }
}

/* The file an input is: "-" is standard input, which is a file that an
 * output can replace only when it is a regular one (`< in.mkv`); a pipe or
 * a terminal is no file of any output name. */
static int input_stat(const char *input, struct stat *st)
{
    if (strcmp(input, "-"))
        return stat(input, st);
    return fstat(STDIN_FILENO, st) == 0 && S_ISREG(st->st_mode) ? 0 : -1;
}

/* An input as messages name it. */
static const char *input_name(const char *input)
{
    return strcmp(input, "-") ? input : "standard input";
}

/* 1 when `st` is one of the inputs (the same file under any name, or
 * standard input redirected from it). The one test of every writer,
 * whatever it writes to: a path, standard output or a stream. */
static int is_an_input(const struct stat *st, const char *const *inputs, const char **which)
{
    for (int i = 0; inputs && inputs[i]; i++) {
        struct stat is;
        if (input_stat(inputs[i], &is) < 0)
            continue;
        if (is.st_dev == st->st_dev && is.st_ino == st->st_ino) {
            *which = inputs[i];
            return 1;
        }
    }
    return 0;
}

int vkcu_outfile_is_input(const char *path, const char *const *inputs, const char **which)
{
    struct stat st;
    if (!strcmp(path, "-") || stat(path, &st) < 0 || !is_an_input(&st, inputs, which))
        return 0;
    *which = input_name(*which);
    return 1;
}

int vkcu_outfile_check_fd(int fd, const char *what, const char *const *inputs, char *err, size_t errlen)
{
    struct stat st;
    const char *which;
    /* Only a regular file can be an input; a pipe or a terminal cannot. */
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !is_an_input(&st, inputs, &which))
        return 0;
    snprintf(err, errlen, "%s is the same file as %s, an input of this job; vkcu never writes over an input, even "
             "with %s (send %s to another file)", what, input_name(which), VKCU_SETTING_IS("overwrite", "1"), what);
    return VKCU_ERR_OUTPUT;
}

int vkcu_outfile_check(const char *path, int overwrite, const char *const *inputs, char *err, size_t errlen)
{
    struct stat st;
    if (is_stdout(path))
        return vkcu_outfile_check_fd(STDOUT_FILENO, "standard output", inputs, err, errlen);
    int exists = stat(path, &st) == 0;
    if (is_in_place(path, &st, exists))
        return 0;
    if (!*path) {
        snprintf(err, errlen, "the output name is empty");
        return VKCU_ERR_OUTPUT;
    }
    if (exists) {
        const char *which;
        if (S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "%s: is a folder; give a file name", path);
            return VKCU_ERR_OUTPUT;
        }
        if (is_an_input(&st, inputs, &which)) {
            if (!strcmp(which, path))
                snprintf(err, errlen, "%s: is an input of this job; vkcu never writes over an input, even with %s "
                         "(choose another output name)", path, VKCU_SETTING_IS("overwrite", "1"));
            else
                snprintf(err, errlen, "%s: is the same file as %s, an input of this job; vkcu never writes over an "
                         "input, even with %s (choose another output name)", path, input_name(which),
                         VKCU_SETTING_IS("overwrite", "1"));
            return VKCU_ERR_OUTPUT;
        }
        if (!overwrite) {
            snprintf(err, errlen, "%s: already exists (use %s to overwrite)", path, VKCU_SETTING_IS("overwrite", "1"));
            return VKCU_ERR_OUTPUT;
        }
    } else if (errno != ENOENT) {
        snprintf(err, errlen, "%s: cannot use as output: %s", path, strerror(errno));
        return VKCU_ERR_OUTPUT;
    } else if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && !overwrite) {
        char target[PATH_MAX];
        ssize_t n = readlink(path, target, sizeof(target) - 1);
        target[n > 0 ? n : 0] = 0;
        snprintf(err, errlen, "%s: is a symbolic link to %s, which does not exist; vkcu does not write through a "
                 "dangling link (remove it, name the target, or use %s to replace the link)", path,
                 n > 0 ? target : "a missing file", VKCU_SETTING_IS("overwrite", "1"));
        return VKCU_ERR_OUTPUT;
    }
    char dir[PATH_MAX];
    const char *base;
    split_dir(path, dir, sizeof(dir), &base);
    if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: output folder %s does not exist", path, dir);
        return VKCU_ERR_OUTPUT;
    }
    if (access(dir, W_OK) < 0) {
        snprintf(err, errlen, "%s: output folder %s is not writable%s", path, dir,
                 errno == EROFS ? " (read-only filesystem)" : "");
        return VKCU_ERR_OUTPUT;
    }
    if (!*base) {
        snprintf(err, errlen, "%s: is a folder name; give a file name", path);
        return VKCU_ERR_OUTPUT;
    }
    return 0;
}

/* Whether `name` is a file name the pattern prefix%[0N]dsuffix makes. */
static int fits_sequence(const char *name, const char *prefix, size_t plen, int width, const char *suffix)
{
    size_t n = strlen(name), slen = strlen(suffix);
    if (n < plen + slen + 1 || strncmp(name, prefix, plen) || strcmp(name + n - slen, suffix))
        return 0;
    size_t digits = n - plen - slen;
    for (size_t i = 0; i < digits; i++)
        if (name[plen + i] < '0' || name[plen + i] > '9')
            return 0;
    /* %03d writes at least three digits, and no leading zero beyond them. */
    return (int)digits >= width && ((int)digits == width || name[plen] != '0' || digits == 1);
}

int vkcu_outfile_check_sequence(const char *pattern, int overwrite, const char *const *inputs, char *err,
                                size_t errlen)
{
    int ret = vkcu_outfile_check(pattern, 1, inputs, err, errlen); /* the folder is there and writable */
    if (ret < 0 || overwrite)
        return ret;
    char dir[PATH_MAX];
    const char *base;
    split_dir(pattern, dir, sizeof(dir), &base);
    const char *pc = strchr(base, '%');
    if (!pc)
        return 0;
    const char *q = pc + 1;
    int width = 0;
    while (*q >= '0' && *q <= '9')
        width = width * 10 + (*q++ - '0');
    if (*q != 'd' || strchr(q, '%'))
        return 0; /* not the one-number pattern this reads: each file's own check still holds */
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (fits_sequence(de->d_name, base, (size_t)(pc - base), width, q + 1)) {
            snprintf(err, errlen, "%s: %.*s%s already exists, a file of this sequence; nothing was written (use %s "
                     "to overwrite the sequence)", pattern, (int)(base - pattern), pattern, de->d_name,
                     VKCU_SETTING_IS("overwrite", "1"));
            closedir(d);
            return VKCU_ERR_OUTPUT;
        }
    closedir(d);
    return 0;
}

/* ---- leftovers of dead processes ---- */

/* Folders already cleaned by this process (a batch writes many files into
 * one folder; scanning it once is enough). */
#define MAX_CLEANED 1024
static pthread_mutex_t cleaned_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { dev_t dev; ino_t ino; } cleaned[MAX_CLEANED];
static int nb_cleaned;

/* The pid in a name vkcu gives its temporaries: ".vkcu-PID-N.part[.ext]",
 * or the longer ".NAME.vkcu-PID.part[.ext]" of earlier versions. 0 when
 * the name is neither. */
static long temp_name_pid(const char *name)
{
    const char *p = NULL;
    if (!strncmp(name, ".vkcu-", 6)) {
        p = name + 6;
    } else if (name[0] == '.') {
        for (const char *q = strstr(name, ".vkcu-"); q; q = strstr(q + 1, ".vkcu-"))
            p = q + 6;
    }
    if (!p || *p < '1' || *p > '9')
        return 0;
    char *end;
    long pid = strtol(p, &end, 10);
    if (pid <= 0 || pid > INT_MAX)
        return 0;
    if (*end == '-') { /* new form: a counter follows */
        const char *c = end + 1;
        if (*c < '0' || *c > '9')
            return 0;
        strtol(c, &end, 10);
    }
    return !strncmp(end, ".part", 5) && (end[5] == 0 || end[5] == '.') ? pid : 0;
}

/* A claim file of a batch: ".vkcu-" 16 hex digits ".claim". */
static int is_claim_name(const char *name)
{
    if (strncmp(name, ".vkcu-", 6) || strlen(name) != 6 + 16 + 6 || strcmp(name + 22, ".claim"))
        return 0;
    for (int i = 6; i < 22; i++)
        if (!strchr("0123456789abcdef", name[i]))
            return 0;
    return 1;
}

/* Removes `path` when nobody holds its lock. */
static int remove_if_unlocked(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    int removed = 0;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && vkcu_file_lock(fd, 0) == 0)
        removed = unlink(path) == 0;
    close(fd);
    return removed;
}

static void clean_folder(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
        return;
    pthread_mutex_lock(&cleaned_lock);
    for (int i = 0; i < nb_cleaned; i++)
        if (cleaned[i].dev == st.st_dev && cleaned[i].ino == st.st_ino) {
            pthread_mutex_unlock(&cleaned_lock);
            return;
        }
    if (nb_cleaned < MAX_CLEANED) {
        cleaned[nb_cleaned].dev = st.st_dev;
        cleaned[nb_cleaned].ino = st.st_ino;
        nb_cleaned++;
    }
    pthread_mutex_unlock(&cleaned_lock);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] != '.')
            continue;
        char full[PATH_MAX + 256];
        snprintf(full, sizeof(full), "%s/%s", dir, e->d_name);
        if (is_claim_name(e->d_name)) {
            /* A claim nobody holds is a dead batch's; removing it changes nothing else. */
            remove_if_unlocked(full);
            continue;
        }
        long pid = temp_name_pid(e->d_name);
        /* Only a process that no longer exists here, and whose file
         * nobody has locked (a writer on another host of a shared
         * filesystem holds its lock), left a stale temporary. */
        if (!pid || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        if (remove_if_unlocked(full))
            LOGW("%s: removed a partial output left by process %ld, which no longer runs", full, pid);
    }
    closedir(d);
}

void vkcu_outfile_clean_beside(const char *path)
{
    char dir[PATH_MAX];
    const char *base;
    split_dir(path, dir, sizeof(dir), &base);
    clean_folder(dir);
}

void vkcu_outfile_clean_process(const char *path, long pid)
{
    char dir[PATH_MAX];
    const char *base;
    split_dir(path, dir, sizeof(dir), &base);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] != '.' || (!is_claim_name(e->d_name) && temp_name_pid(e->d_name) != pid))
            continue;
        char full[PATH_MAX + 256];
        snprintf(full, sizeof(full), "%s/%s", dir, e->d_name);
        remove_if_unlocked(full);
    }
    closedir(d);
}

/* ---- write, then publish ---- */

static void slot_rule(temp_slot *t, int overwrite, const char *const *inputs)
{
    struct stat st;
    t->overwrite = overwrite;
    for (int i = 0; inputs && inputs[i] && t->nb_inputs < MAX_INPUTS; i++)
        if (input_stat(inputs[i], &st) == 0) {
            t->in_dev[t->nb_inputs] = st.st_dev;
            t->in_ino[t->nb_inputs] = st.st_ino;
            t->nb_inputs++;
        }
}

/* create: the temporary is made (empty, flock'ed); else only its name is
 * taken, for a file another library creates (an encoder's statistics). */
static int begin_temp(const char *path, int overwrite, const char *const *inputs, char *tmp, size_t tmplen,
                      char *err, size_t errlen, int create)
{
    struct stat st;
    int exists = stat(path, &st) == 0;
    int ret = vkcu_outfile_check(path, overwrite, inputs, err, errlen);
    if (ret < 0)
        return ret;
    if (is_in_place(path, &st, exists)) {
        /* Standard output, a device or a pipe: written in place, nothing to rename or remove. */
        snprintf(tmp, tmplen, "%s", path);
        return 0;
    }
    char dir[PATH_MAX];
    const char *base;
    split_dir(path, dir, sizeof(dir), &base);
    clean_folder(dir);
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base || strlen(dot) > EXT_MAX)
        dot = "";
    for (int attempt = 0; attempt < 100; attempt++) {
        unsigned n = atomic_fetch_add(&temp_counter, 1);
        char name[PATH_MAX];
        if ((size_t)snprintf(name, sizeof(name), "%s/.vkcu-%ld-%u.part%s", dir, (long)getpid(), n, dot) >= sizeof(name) ||
            strlen(name) >= tmplen) {
            snprintf(err, errlen, "%s: the path is too long", path);
            return VKCU_ERR_OUTPUT;
        }
        /* In the table before the file exists: a signal between the two
         * must not leave the file behind. */
        temp_slot *t = slot_claim(name);
        if (!t) {
            snprintf(err, errlen, "%s: more than %d outputs open at once", path, MAX_TEMPS);
            return VKCU_ERR_OUTPUT;
        }
        int fd = -1;
        if (create) {
            fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        } else if (lstat(name, &st) == 0 || errno != ENOENT) {
            errno = errno == ENOENT ? EEXIST : errno;
            fd = -1;
        } else {
            fd = -2; /* free name, nothing created */
        }
        if (fd == -1) {
            int e = errno;
            slot_release(t);
            if (e == EEXIST)
                continue; /* a leftover of an earlier process with our pid */
            snprintf(err, errlen, "%s: cannot create a file in %s: %s", path, dir, strerror(e));
            return VKCU_ERR_OUTPUT;
        }
        if (fd >= 0)
            vkcu_file_lock(fd, 0); /* proof of life for clean_folder in other processes */
        t->fd = fd >= 0 ? fd : -1;
        slot_rule(t, overwrite, inputs);
        snprintf(tmp, tmplen, "%s", name);
        return 0;
    }
    snprintf(err, errlen, "%s: cannot find a free temporary name in %s", path, dir);
    return VKCU_ERR_OUTPUT;
}

int vkcu_outfile_begin(const char *path, int overwrite, const char *const *inputs, char *tmp, size_t tmplen,
                       char *err, size_t errlen)
{
    return begin_temp(path, overwrite, inputs, tmp, tmplen, err, errlen, 1);
}

int vkcu_outfile_reserve(const char *path, int overwrite, const char *const *inputs, char *tmp, size_t tmplen,
                         char *err, size_t errlen)
{
    if (is_stdout(path)) {
        snprintf(err, errlen, "%s: names standard output, which cannot be renamed into place; name a file", path);
        return VKCU_ERR_USAGE;
    }
    return begin_temp(path, overwrite, inputs, tmp, tmplen, err, errlen, 0);
}

int vkcu_outfile_reserve_as(const char *tmp, const char *path, int overwrite, const char *const *inputs, char *err,
                            size_t errlen)
{
    if (path) {
        int ret = vkcu_outfile_check(path, overwrite, inputs, err, errlen);
        if (ret < 0)
            return ret;
    }
    if (strlen(tmp) >= PATH_MAX) {
        snprintf(err, errlen, "%s: the path is too long", path ? path : tmp);
        return VKCU_ERR_OUTPUT;
    }
    temp_slot *t = slot_claim(tmp);
    if (!t) {
        snprintf(err, errlen, "%s: more than %d outputs open at once", path ? path : tmp, MAX_TEMPS);
        return VKCU_ERR_OUTPUT;
    }
    slot_rule(t, overwrite, inputs);
    return 0;
}

static int rename_noreplace(const char *from, const char *to)
{
#ifdef SYS_renameat2
    if (syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, 1 /* RENAME_NOREPLACE */) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
#endif
    /* link() fails when `to` exists, which is the guarantee we need. */
    if (link(from, to) == 0) {
        unlink(from);
        return 0;
    }
    return -1;
}

static void sync_folder(const char *path)
{
    char dir[PATH_MAX];
    const char *base;
    split_dir(path, dir, sizeof(dir), &base);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd); /* some filesystems refuse fsync on folders; the data is synced already */
        close(fd);
    }
}

int vkcu_outfile_commit(const char *tmp, const char *path, char *err, size_t errlen)
{
    if (!strcmp(tmp, path))
        return 0;
    temp_slot *t = slot_find(tmp);
    if (!t) {
        snprintf(err, errlen, "%s: its temporary file is gone (removed by a signal?)", path);
        return VKCU_ERR_OUTPUT;
    }
    int ret = 0, fd = t->fd >= 0 ? t->fd : open(tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: its temporary file %s is gone: %s", path, tmp, strerror(errno));
        ret = VKCU_ERR_OUTPUT;
    } else if (fsync(fd) < 0) {
        snprintf(err, errlen, "%s: cannot write the output to disk: %s", path, strerror(errno));
        ret = VKCU_ERR_OUTPUT;
    }
    if (fd >= 0 && fd != t->fd)
        close(fd);
    if (ret < 0) {
        /* the temporary is removed below */
    } else if (t->overwrite) {
        /* The input check once more: the name may have become a link to an
         * input while the job ran. */
        struct stat st;
        int is_input = 0;
        if (stat(path, &st) == 0)
            for (int i = 0; i < t->nb_inputs; i++)
                is_input |= st.st_dev == t->in_dev[i] && st.st_ino == t->in_ino[i];
        if (is_input) {
            snprintf(err, errlen, "%s: is now an input of this job; vkcu never writes over an input", path);
            ret = VKCU_ERR_OUTPUT;
        } else if (rename(tmp, path) < 0) {
            snprintf(err, errlen, "%s: cannot move the finished output into place: %s", path, strerror(errno));
            ret = VKCU_ERR_OUTPUT;
        }
    } else if (rename_noreplace(tmp, path) < 0) {
        if (errno == EEXIST)
            snprintf(err, errlen, "%s: already exists: another process wrote it while this job ran; nothing was "
                     "replaced (use %s to overwrite)", path, VKCU_SETTING_IS("overwrite", "1"));
        else
            snprintf(err, errlen, "%s: cannot move the finished output into place: %s", path, strerror(errno));
        ret = VKCU_ERR_OUTPUT;
    }
    if (ret < 0)
        unlink(tmp);
    else
        sync_folder(path);
    /* Released only now: until the rename, a signal must still remove it. */
    slot_release(t);
    return ret;
}

void vkcu_outfile_abort(const char *tmp)
{
    struct stat st;
    if (!tmp || !*tmp)
        return;
    temp_slot *t = slot_find(tmp);
    if (!t)
        return; /* written in place, or not ours */
    if (fstatat(t->dirfd, tmp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
        unlinkat(t->dirfd, tmp, 0);
    slot_release(t);
}

/* ---- confined writers: relative to a folder held open ---- */

/* The folder of `rel` (its part before the last '/'), resolved below
 * rootfd and never above it: openat2's RESOLVE_BENEATH follows links only
 * while they stay inside; without openat2, each component is opened
 * without following links. An O_PATH descriptor, or -1 with errno
 * (EXDEV: it leads outside). */
static int open_beneath(int rootfd, const char *dir)
{
#ifdef SYS_openat2
    struct {
        uint64_t flags, mode, resolve;
    } how = { O_PATH | O_DIRECTORY | O_CLOEXEC, 0, 0x08 /* RESOLVE_BENEATH */ };
    int fd = (int)syscall(SYS_openat2, rootfd, *dir ? dir : ".", &how, sizeof(how));
    if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
        return fd;
#endif
    int fd_cur = openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    for (const char *c = dir; fd_cur >= 0 && *c;) {
        size_t n = strcspn(c, "/");
        char part[NAME_MAX + 1];
        if (n > NAME_MAX || (n == 2 && !strncmp(c, "..", 2))) {
            close(fd_cur);
            errno = n > NAME_MAX ? ENAMETOOLONG : EXDEV;
            return -1;
        }
        if (n && !(n == 1 && *c == '.')) {
            memcpy(part, c, n);
            part[n] = 0;
            int next = openat(fd_cur, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            int e = errno;
            close(fd_cur);
            fd_cur = next;
            errno = e == ELOOP || e == ENOTDIR ? EXDEV : e;
        }
        c += n + (c[n] == '/');
    }
    return fd_cur;
}

static int renameat_noreplace(int dfd, const char *from, const char *to)
{
#ifdef SYS_renameat2
    if (syscall(SYS_renameat2, dfd, from, dfd, to, 1 /* RENAME_NOREPLACE */) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
#endif
    if (linkat(dfd, from, dfd, to, 0) == 0) {
        unlinkat(dfd, from, 0);
        return 0;
    }
    return -1;
}

int vkcu_outfile_write_at(int rootfd, const char *rel, const char *shown, const void *data, size_t len, int overwrite,
                          const char *const *inputs, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(rel, '/'), *base = slash ? slash + 1 : rel;
    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - rel) : 0, rel);
    if (!*base) {
        snprintf(err, errlen, "%s: is a folder name; give a file name", shown);
        return VKCU_ERR_OUTPUT;
    }
    int dfd = open_beneath(rootfd, dir);
    if (dfd < 0) {
        if (errno == EXDEV)
            snprintf(err, errlen, "%s: its folder now leads outside the folder it must stay in (a link changed "
                     "while the job ran?); nothing was written", shown);
        else
            snprintf(err, errlen, "%s: output folder %s: %s", shown, *dir ? dir : ".",
                     errno == ENOENT ? "does not exist" : strerror(errno));
        return VKCU_ERR_OUTPUT;
    }
    struct stat st;
    int ret = 0;
    if (fstatat(dfd, base, &st, 0) == 0) {
        const char *which;
        if (S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "%s: is a folder; give a file name", shown);
            ret = VKCU_ERR_OUTPUT;
        } else if (is_an_input(&st, inputs, &which)) {
            snprintf(err, errlen, "%s: is the same file as %s, an input of this job; vkcu never writes over an "
                     "input, even with %s", shown, input_name(which), VKCU_SETTING_IS("overwrite", "1"));
            ret = VKCU_ERR_OUTPUT;
        } else if (!overwrite) {
            snprintf(err, errlen, "%s: already exists (use %s to overwrite)", shown, VKCU_SETTING_IS("overwrite", "1"));
            ret = VKCU_ERR_OUTPUT;
        }
    }
    if (ret < 0) {
        close(dfd);
        return ret;
    }
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base || strlen(dot) > EXT_MAX)
        dot = "";
    char name[64];
    temp_slot *t = NULL;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        snprintf(name, sizeof(name), ".vkcu-%ld-%u.part%s", (long)getpid(), atomic_fetch_add(&temp_counter, 1), dot);
        if (!(t = slot_claim(name))) {
            snprintf(err, errlen, "%s: more than %d outputs open at once", shown, MAX_TEMPS);
            close(dfd);
            return VKCU_ERR_OUTPUT;
        }
        t->dirfd = dfd; /* the signal handler removes it relative to the same folder */
        fd = openat(dfd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0) {
            int e = errno;
            slot_release(t);
            t = NULL;
            if (e != EEXIST) {
                snprintf(err, errlen, "%s: cannot create a file in its folder: %s", shown, strerror(e));
                close(dfd);
                return VKCU_ERR_OUTPUT;
            }
        }
    }
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot find a free temporary name in its folder", shown);
        close(dfd);
        return VKCU_ERR_OUTPUT;
    }
    t->fd = fd;
    slot_rule(t, overwrite, inputs);
    const char *p = data;
    for (size_t left = len; left && ret >= 0;) {
        ssize_t n = write(fd, p, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            snprintf(err, errlen, "%s: cannot write: %s%s", shown, strerror(n < 0 ? errno : EIO),
                     n < 0 && errno == ENOSPC ? " (disk full)" : "");
            ret = VKCU_ERR_OUTPUT;
            break;
        }
        p += n;
        left -= (size_t)n;
    }
    if (ret >= 0 && fsync(fd) < 0) {
        snprintf(err, errlen, "%s: cannot write the output to disk: %s", shown, strerror(errno));
        ret = VKCU_ERR_OUTPUT;
    }
    if (ret >= 0 && overwrite) {
        int is_input = 0;
        if (fstatat(dfd, base, &st, 0) == 0)
            for (int i = 0; i < t->nb_inputs; i++)
                is_input |= st.st_dev == t->in_dev[i] && st.st_ino == t->in_ino[i];
        if (is_input) {
            snprintf(err, errlen, "%s: is now an input of this job; vkcu never writes over an input", shown);
            ret = VKCU_ERR_OUTPUT;
        } else if (renameat(dfd, name, dfd, base) < 0) {
            snprintf(err, errlen, "%s: cannot move the finished file into place: %s", shown, strerror(errno));
            ret = VKCU_ERR_OUTPUT;
        }
    } else if (ret >= 0 && renameat_noreplace(dfd, name, base) < 0) {
        snprintf(err, errlen, errno == EEXIST ? "%s: already exists: another process wrote it meanwhile; nothing "
                 "was replaced" : "%s: cannot move the finished file into place", shown);
        ret = VKCU_ERR_OUTPUT;
    }
    if (ret < 0) {
        unlinkat(dfd, name, 0);
    } else {
        int sfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (sfd >= 0) {
            fsync(sfd);
            close(sfd);
        }
    }
    slot_release(t); /* closes fd */
    close(dfd);
    return ret;
}

/* ---- batch claims ---- */

static void claim_name(const char *path, char *name, size_t len)
{
    char dir[PATH_MAX];
    const char *base;
    split_dir(path, dir, sizeof(dir), &base);
    vkcu_xxh64_state h;
    vkcu_xxh64_init(&h, 0);
    vkcu_xxh64_update(&h, (const uint8_t *)base, strlen(base));
    snprintf(name, len, "%s/.vkcu-%016llx.claim", dir, (unsigned long long)vkcu_xxh64_digest(&h));
}

int vkcu_outfile_claim(const char *path, int *fd_out, long *holder, char *err, size_t errlen)
{
    char name[PATH_MAX + 32];
    claim_name(path, name, sizeof(name));
    *fd_out = -1;
    *holder = 0;
    for (int attempt = 0; attempt < 100; attempt++) {
        int fd = open(name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (fd < 0) {
            snprintf(err, errlen, "%s: cannot create the claim file %s: %s", path, name, strerror(errno));
            return VKCU_ERR_OUTPUT;
        }
        if (vkcu_file_lock(fd, 0) < 0) {
            char buf[32] = "";
            ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
            if (n > 0)
                *holder = strtol(buf, NULL, 10);
            close(fd);
            return 0;
        }
        /* The file we locked must still be the one under the name: its
         * previous holder may have removed it between our open and flock. */
        struct stat a, b;
        if (fstat(fd, &a) < 0 || stat(name, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
            close(fd);
            continue;
        }
        char buf[32];
        int n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
        if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)n, 0) != n) {
            /* The pid only makes another process's message nicer. */
        }
        temp_slot *t = slot_claim(name);
        if (t)
            t->fd = fd;
        *fd_out = fd;
        return 1;
    }
    snprintf(err, errlen, "%s: cannot claim it (%s keeps changing)", path, name);
    return VKCU_ERR_OUTPUT;
}

void vkcu_outfile_release(const char *path, int fd)
{
    if (fd < 0)
        return;
    char name[PATH_MAX + 32];
    claim_name(path, name, sizeof(name));
    /* Removed while still locked, then unlocked by closing. */
    unlink(name);
    temp_slot *t = slot_find(name);
    if (t && t->fd == fd)
        slot_release(t);
    else
        close(fd);
}
