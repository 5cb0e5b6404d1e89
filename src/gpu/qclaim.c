/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Queue claims across processes (see qclaim.h for what and why).
 *
 * Files, in the claims folder (GPU = the UUID in 32 hex digits):
 *   GPU.lock                 flock'ed while a process counts and takes claims
 *   GPU.ROLE.fFAMILY.qQUEUE  one per queue; each claim is an exclusive OFD
 *                            lock on one byte of it (byte k: the k-th holder)
 * OFD locks (util/filelock.h) belong to the open file description, not
 * the process: two threads of one process holding claims through their own
 * descriptors count as two holders, a closed descriptor drops its claims,
 * and the kernel drops them all when the process ends however it ends. The
 * files stay (empty); only the locks say who holds what.
 *
 * Counting asks for a conflicting lock (F_OFD_GETLK) over a byte range, then
 * over what is left on either side of the lock it answered (it may answer
 * any lock in the range), so a count costs one call per run of locked bytes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/filelock.h"
#include "qclaim.h"

struct vkcu_qclaim {
    int fd[VKCU_QCLAIM_MAX_QUEUES]; /* the descriptor holding this claim set's locks on queue i, or -1 */
    uint32_t nb;
    uint32_t queue[VKCU_QCLAIM_MAX_CLAIMS];
};

typedef struct holder_bits {
    uint8_t b[VKCU_QCLAIM_MAX_HOLDERS / 8];
} holder_bits;

static int bit_get(const holder_bits *h, uint32_t i) { return h->b[i / 8] >> (i % 8) & 1; }
static void bit_set(holder_bits *h, uint32_t i) { h->b[i / 8] |= (uint8_t)(1u << (i % 8)); }

static void uuid_hex(const uint8_t uuid[16], char out[33])
{
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", uuid[i]);
}

static int role_ok(const char *role)
{
    if (!role || !*role || strlen(role) > 15)
        return 0;
    for (const char *p = role; *p; p++)
        if (*p < 'a' || *p > 'z')
            return 0;
    return 1;
}

static int queue_path(char *buf, size_t len, const char *dir, const char *hex, const char *role, uint32_t family,
                      uint32_t queue)
{
    int n = snprintf(buf, len, "%s/%s.%s.f%u.q%u", dir, hex, role, family, queue);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* Marks in *h the bytes of [0, VKCU_QCLAIM_MAX_HOLDERS) that another open
 * file description has locked; returns how many, or -1 (errno set). */
static int scan_holders(int fd, holder_bits *h)
{
    struct { off_t lo, hi; } ranges[VKCU_QCLAIM_MAX_HOLDERS + 1]; /* a stack of the ranges left to ask about */
    int nb_ranges = 0, held = 0;
    memset(h, 0, sizeof(*h));
    ranges[nb_ranges].lo = 0;
    ranges[nb_ranges++].hi = VKCU_QCLAIM_MAX_HOLDERS;
    while (nb_ranges > 0) {
        off_t lo = ranges[nb_ranges - 1].lo, hi = ranges[nb_ranges - 1].hi;
        nb_ranges--;
        if (lo >= hi)
            continue;
        off_t start, len;
        int found = vkcu_file_lock_find(fd, lo, hi, &start, &len);
        if (found < 0)
            return -1;
        if (!found)
            continue;
        off_t a = start < lo ? lo : start;
        off_t b = len == 0 || start + len > hi ? hi : start + len;
        if (b <= a) /* cannot happen (the lock overlaps the range): stop rather than loop */
            continue;
        for (off_t s = a; s < b; s++)
            if (!bit_get(h, (uint32_t)s)) {
                bit_set(h, (uint32_t)s);
                held++;
            }
        /* Each split leaves two ranges with fewer locked runs than the one
         * taken, so at most one entry per run is ever waiting. */
        if (nb_ranges + 2 > (int)(sizeof(ranges) / sizeof(ranges[0])))
            return held;
        ranges[nb_ranges].lo = lo;
        ranges[nb_ranges++].hi = a;
        ranges[nb_ranges].lo = b;
        ranges[nb_ranges++].hi = hi;
    }
    return held;
}

/* Checks that dir is a folder this user may write into; makes it when
 * missing (mode 0700). A folder in a place every user writes to (/dev/shm)
 * must be ours, not a link another user placed there. */
static int prepare_dir(const char *dir, int must_own, char *why, size_t whylen)
{
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
        snprintf(why, whylen, "cannot make the queue claims folder %s: %s", dir, strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
        snprintf(why, whylen, "the queue claims folder %s is not a folder", dir);
        return -1;
    }
    if (must_own && st.st_uid != geteuid()) {
        snprintf(why, whylen, "the queue claims folder %s belongs to another user", dir);
        return -1;
    }
    if (access(dir, W_OK | X_OK) < 0) {
        snprintf(why, whylen, "the queue claims folder %s is not writable: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

int vkcu_qclaim_dir(char *dir, size_t len, int make, char *why, size_t whylen)
{
    const char *e = getenv("VKCU_QUEUE_CLAIMS");
    int must_own = 0, n;
    struct stat st;
    if (e && !strcmp(e, "off")) {
        snprintf(why, whylen, "queue claims are off (VKCU_QUEUE_CLAIMS=off)");
        return -1;
    }
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    if (e && *e)
        n = snprintf(dir, len, "%s", e);
    else if (xdg && *xdg == '/')
        n = snprintf(dir, len, "%s/vkcu-queues", xdg);
    else if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode)) {
        n = snprintf(dir, len, "/dev/shm/vkcu-queues-%u", (unsigned)geteuid());
        must_own = 1;
    } else {
        snprintf(why, whylen, "no folder for queue claims (XDG_RUNTIME_DIR is not set and there is no /dev/shm)");
        return -1;
    }
    if (n <= 0 || (size_t)n >= len) {
        snprintf(why, whylen, "the queue claims folder's name is too long");
        return -1;
    }
    return make ? prepare_dir(dir, must_own, why, whylen) : 0;
}

uint32_t vkcu_qclaim_count(const vkcu_qclaim *c) { return c ? c->nb : 0; }
uint32_t vkcu_qclaim_queue(const vkcu_qclaim *c, uint32_t i) { return c && i < c->nb ? c->queue[i] : 0; }

void vkcu_qclaim_release(vkcu_qclaim **pc)
{
    vkcu_qclaim *c = pc ? *pc : NULL;
    if (!c)
        return;
    for (int i = 0; i < VKCU_QCLAIM_MAX_QUEUES; i++)
        if (c->fd[i] >= 0)
            close(c->fd[i]);
    free(c);
    *pc = NULL;
}

int vkcu_qclaim_take(const char *dir, const uint8_t uuid[16], const char *role, uint32_t family, uint32_t nb_queues,
                     uint32_t want, int pin, vkcu_qclaim **out, char *why, size_t whylen)
{
    *out = NULL;
    if (!dir || !uuid || !role_ok(role) || nb_queues < 1 || nb_queues > VKCU_QCLAIM_MAX_QUEUES || want < 1 ||
        want > VKCU_QCLAIM_MAX_CLAIMS || pin >= (int)nb_queues) {
        snprintf(why, whylen, "internal: bad queue claim (role %s, %u queues, %u claims, pin %d)", role ? role : "?",
                 nb_queues, want, pin);
        return -1;
    }
    char hex[33], path[4096];
    uuid_hex(uuid, hex);
    vkcu_qclaim *c = calloc(1, sizeof(*c));
    holder_bits *others = calloc(nb_queues, sizeof(*others)), *own = calloc(nb_queues, sizeof(*own));
    uint32_t *count = calloc(nb_queues, sizeof(*count));
    int lock_fd = -1, ret = -1;
    if (!c || !others || !own || !count) {
        snprintf(why, whylen, "out of memory");
        goto done;
    }
    for (int i = 0; i < VKCU_QCLAIM_MAX_QUEUES; i++)
        c->fd[i] = -1;
    if (snprintf(path, sizeof(path), "%s/%s.lock", dir, hex) >= (int)sizeof(path) ||
        (lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0) {
        snprintf(why, whylen, "cannot open %s: %s", path, strerror(errno));
        goto done;
    }
    if (vkcu_file_lock(lock_fd, 1) < 0) {
        snprintf(why, whylen, "cannot lock %s: %s", path, strerror(errno));
        goto done;
    }
    for (uint32_t q = 0; q < nb_queues; q++) {
        if (queue_path(path, sizeof(path), dir, hex, role, family, q) < 0 ||
            (c->fd[q] = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0) {
            snprintf(why, whylen, "cannot open %s: %s", path, strerror(errno));
            goto done;
        }
        int held = scan_holders(c->fd[q], &others[q]);
        if (held < 0) {
            snprintf(why, whylen, "cannot read the locks of %s: %s", path, strerror(errno));
            goto done;
        }
        count[q] = (uint32_t)held;
    }
    for (uint32_t k = 0; k < want; k++) {
        uint32_t q = 0;
        if (pin >= 0)
            q = (uint32_t)pin;
        else
            for (uint32_t i = 1; i < nb_queues; i++)
                if (count[i] < count[q])
                    q = i;
        uint32_t s = 0;
        for (;; s++) {
            if (s >= VKCU_QCLAIM_MAX_HOLDERS) {
                snprintf(why, whylen, "queue %u of family %u has %d claims already", q, family, VKCU_QCLAIM_MAX_HOLDERS);
                goto done;
            }
            if (bit_get(&others[q], s) || bit_get(&own[q], s))
                continue;
            if (vkcu_file_lock_byte(c->fd[q], s) == 0)
                break;
            if (errno != EAGAIN && errno != EACCES) {
                snprintf(why, whylen, "cannot lock a byte of the queue claim file of queue %u: %s", q, strerror(errno));
                goto done;
            }
            bit_set(&others[q], s); /* taken meanwhile by a process that did not wait for the GPU's lock */
        }
        bit_set(&own[q], s);
        count[q]++;
        c->queue[c->nb++] = q;
    }
    for (uint32_t q = 0; q < nb_queues; q++) {
        int mine = 0;
        for (uint32_t k = 0; k < c->nb; k++)
            mine |= c->queue[k] == q;
        if (!mine) {
            close(c->fd[q]);
            c->fd[q] = -1;
        }
    }
    *out = c;
    c = NULL;
    ret = 0;
done:
    if (lock_fd >= 0)
        close(lock_fd); /* drops the flock too */
    vkcu_qclaim_release(&c);
    free(others);
    free(own);
    free(count);
    return ret;
}

/* Claims on one queue file; 0 when it does not exist, -1 on error. */
static int claims_on(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno == ENOENT ? 0 : -1;
    holder_bits h;
    int n = scan_holders(fd, &h);
    close(fd);
    return n;
}

int vkcu_qclaim_counts(const char *dir, const uint8_t uuid[16], const char *role, uint32_t family, uint32_t nb_queues,
                       uint32_t *counts)
{
    char hex[33], path[4096];
    if (!role_ok(role) || nb_queues > VKCU_QCLAIM_MAX_QUEUES)
        return -1;
    uuid_hex(uuid, hex);
    for (uint32_t q = 0; q < nb_queues; q++) {
        int n = queue_path(path, sizeof(path), dir, hex, role, family, q) < 0 ? -1 : claims_on(path);
        if (n < 0)
            return -1;
        counts[q] = (uint32_t)n;
    }
    return 0;
}

typedef struct listed {
    char gpu[33], role[16];
    uint32_t family, queue, claims;
} listed;

static int listed_cmp(const void *a, const void *b)
{
    const listed *x = a, *y = b;
    int c = strcmp(x->gpu, y->gpu);
    if (!c)
        c = strcmp(x->role, y->role);
    if (!c)
        c = x->family < y->family ? -1 : x->family > y->family;
    if (!c)
        c = x->queue < y->queue ? -1 : x->queue > y->queue;
    return c;
}

int vkcu_qclaim_list(const char *dir, vkcu_qclaim_list_cb cb, void *opaque)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    listed *all = NULL;
    int nb = 0, cap = 0, ret = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        listed l;
        char tail;
        if (sscanf(e->d_name, "%32[0-9a-f].%15[a-z].f%u.q%u%c", l.gpu, l.role, &l.family, &l.queue, &tail) != 4 ||
            strlen(l.gpu) != 32)
            continue;
        char path[4096];
        if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
            continue;
        int n = claims_on(path);
        if (n <= 0)
            continue;
        l.claims = (uint32_t)n;
        if (nb == cap) {
            cap = cap ? 2 * cap : 16;
            listed *grown = realloc(all, (size_t)cap * sizeof(*all));
            if (!grown) {
                ret = -1;
                break;
            }
            all = grown;
        }
        all[nb++] = l;
    }
    closedir(d);
    if (ret == 0) {
        if (nb)
            qsort(all, (size_t)nb, sizeof(*all), listed_cmp);
        for (int i = 0; i < nb; i++)
            cb(opaque, all[i].gpu, all[i].role, all[i].family, all[i].queue, all[i].claims);
        ret = nb;
    }
    free(all);
    return ret;
}
