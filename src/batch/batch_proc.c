/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A batch's streams in worker processes (vkcu_batch_settings.worker_command;
 * batch_priv.h). Why: the streams of one process share a lock inside the
 * GPU driver, and those of several processes do not (docs/performance.md,
 * issue 37).
 *
 * Each slot thread of the batch starts a worker process with its first
 * file: the worker command, with VKCU_BATCH_WORKER=FD:SLOT:SLOTS in its
 * environment and one end of a socket pair (SOCK_SEQPACKET: one message a
 * send, never split) at FD. There vkcu_batch_run lists the same folder
 * and, instead of running the batch, serves it: it says HELLO with the
 * hash of its list, then runs each file the batch sends (RUN), sending its
 * messages (LOG), its progress (PROGRESS) and its outcome (OUTCOME, the
 * whole file_outcome). The batch records the outcome as if the file had run
 * on its own thread, so the report, the callbacks and the summary are the
 * same. STOP interrupts the running file; a closed socket ends the worker
 * (and, as a closed socket means the batch is gone, stops its file).
 *
 * A worker that dies (killed, crashed) fails its file with one line, its
 * temporaries (named with its pid) are removed, and the slot's next file
 * starts a new worker. A worker that cannot start, or dies before its
 * HELLO, leaves its slot running files on the slot's thread, with a
 * warning. A worker gets SIGTERM when the batch's process dies
 * (PR_SET_PDEATHSIG), and cleans up as on Ctrl-C.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <libavutil/error.h>

#include "util/clock.h"
#include "util/log.h"
#include "core/outfile.h"
#include "batch_priv.h"

extern char **environ;

#define WORKER_ENV "VKCU_BATCH_WORKER"
/* How long a worker may take to list the folder and say HELLO. */
#define HELLO_SECONDS 600.0

enum msg_type { MSG_HELLO = 1, MSG_RUN, MSG_STOP, MSG_PROGRESS, MSG_LOG, MSG_OUTCOME };

typedef struct msg_head {
    int32_t type;
    int32_t index;     /* RUN, OUTCOME: the file; HELLO: the file count */
    int32_t level;     /* LOG */
    int32_t pad;
    uint64_t hash;     /* HELLO: vkcu_batch_list_hash */
    int64_t frames, expected; /* PROGRESS */
} msg_head;

typedef struct msg {
    msg_head h;
    union {
        char text[2048];   /* LOG */
        file_outcome outcome;
    } u;
} msg;

uint64_t vkcu_batch_list_hash(const batch_file *files, int n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (int k = 0; k < n; k++) {
        const batch_file *f = &files[k];
        const char *parts[3] = { f->rel, f->out_rel, f->same_output ? f->same_output : "" };
        for (int i = 0; i < 3; i++)
            for (const unsigned char *c = (const unsigned char *)parts[i];; c++) {
                h = (h ^ *c) * 1099511628211ull;
                if (!*c)
                    break;
            }
        h = (h ^ (uint64_t)f->not_media) * 1099511628211ull;
    }
    return h;
}

static int send_msg(int fd, const void *m, size_t len)
{
    ssize_t n;
    do
        n = send(fd, m, len, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)len ? 0 : -1;
}

static int send_head(int fd, int type, int index)
{
    msg_head h = { .type = type, .index = index };
    return send_msg(fd, &h, sizeof(h));
}

/* ---- the worker's side ---- */

int vkcu_batch_worker_env(int *channel, int *slot, int *nb_slots)
{
    const char *e = getenv(WORKER_ENV);
    int fd, s, n;
    struct stat st;
    if (!e || sscanf(e, "%d:%d:%d", &fd, &s, &n) != 3 || fd < 0 || n < 1 || s < 0 || s >= n)
        return 0;
    /* only the socket the batch gave it: an environment inherited by something else names none */
    if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
        return 0;
    *channel = fd;
    *slot = s;
    *nb_slots = n;
    return 1;
}

/* A job's progress counts, sent from a worker process (slot_progress.forward). */
static void send_progress(int channel, int64_t frames, int64_t expected)
{
    msg_head h = { .type = MSG_PROGRESS, .frames = frames, .expected = expected };
    send_msg(channel, &h, sizeof(h));
}

typedef struct serve_state {
    int fd;
    atomic_int stop;   /* the batch asked to stop, or went away */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int next;          /* the file the batch sent, -1: none yet */
    int closed;        /* the batch closed the socket */
} serve_state;

/* The worker's messages (its jobs' and FFmpeg's included) go to the batch. */
static void send_log(void *opaque, enum vkcu_log_level level, const char *message)
{
    serve_state *ss = opaque;
    struct {
        msg_head h;
        char text[sizeof(((msg *)0)->u.text)];
    } m;
    memset(&m.h, 0, sizeof(m.h));
    m.h.type = MSG_LOG;
    m.h.level = (int32_t)level;
    size_t len = strlen(message);
    if (len >= sizeof(m.text))
        len = sizeof(m.text) - 1;
    memcpy(m.text, message, len);
    m.text[len] = 0;
    send_msg(ss->fd, &m, sizeof(m.h) + len + 1);
}

/* Reads what the batch sends: files to run, a stop, the end. */
static void *serve_reader(void *arg)
{
    serve_state *ss = arg;
    for (;;) {
        msg_head h;
        ssize_t n = recv(ss->fd, &h, sizeof(h), 0);
        if (n < 0 && errno == EINTR)
            continue;
        pthread_mutex_lock(&ss->lock);
        if (n == (ssize_t)sizeof(h) && h.type == MSG_RUN) {
            ss->next = h.index;
        } else if (n == (ssize_t)sizeof(h) && h.type == MSG_STOP) {
            atomic_store(&ss->stop, 1);
        } else {
            /* closed (the batch ended or died) or garbled: stop the running file and end */
            atomic_store(&ss->stop, 1);
            ss->closed = 1;
        }
        pthread_cond_broadcast(&ss->cond);
        int closed = ss->closed;
        pthread_mutex_unlock(&ss->lock);
        if (closed)
            return NULL;
    }
}

int vkcu_batch_serve(batch_run *b, int slot)
{
    serve_state ss = { .fd = b->channel, .next = -1 };
    atomic_init(&ss.stop, 0);
    pthread_mutex_init(&ss.lock, NULL);
    pthread_cond_init(&ss.cond, NULL);
    const vkcu_log_target *ctx_target = vkcu_log_target_get();
    vkcu_log_target target = { send_log, &ss, ctx_target ? ctx_target->level : VKCU_LOG_INFO,
                               ctx_target ? ctx_target->setting_name : NULL, &ss.stop };
    const vkcu_log_target *prev = vkcu_log_target_swap(&target);
    msg m;
    memset(&m.h, 0, sizeof(m.h));
    m.h.type = MSG_HELLO;
    m.h.index = b->nb_files;
    m.h.hash = b->list_hash;
    pthread_t reader;
    int ret = 0;
    if (send_msg(ss.fd, &m, sizeof(m.h)) < 0 || pthread_create(&reader, NULL, serve_reader, &ss) != 0) {
        vkcu_log_target_swap(prev);
        pthread_cond_destroy(&ss.cond);
        pthread_mutex_destroy(&ss.lock);
        return AVERROR(EPIPE);
    }
    /* Test hook: the worker running the file NAME (relative to the input
     * folder) kills itself (SIGKILL) just before the output would take its
     * place: its temporary is whole, and left behind. */
    b->test_kill = getenv("VKCU_TEST_BATCH_WORKER_KILL");
    b->slots[slot].forward = send_progress;
    for (;;) {
        pthread_mutex_lock(&ss.lock);
        while (ss.next < 0 && !ss.closed)
            pthread_cond_wait(&ss.cond, &ss.lock);
        int k = ss.next, closed = ss.closed;
        ss.next = -1;
        pthread_mutex_unlock(&ss.lock);
        if (closed)
            break;
        if (k >= b->nb_files) {
            ret = AVERROR(EINVAL);
            break;
        }
        vkcu_batch_file_run(b, k, slot, &m.u.outcome);
        memset(&m.h, 0, sizeof(m.h));
        m.h.type = MSG_OUTCOME;
        m.h.index = k;
        if (send_msg(ss.fd, &m, sizeof(m)) < 0)
            break;
        malloc_trim(0);
    }
    shutdown(ss.fd, SHUT_RDWR);
    pthread_join(reader, NULL);
    vkcu_log_target_swap(prev);
    pthread_cond_destroy(&ss.cond);
    pthread_mutex_destroy(&ss.lock);
    return ret;
}

/* ---- the batch's side ---- */

/* "was killed by signal 9 (Killed)", "exited with status 3". */
static void describe_status(int status, char *buf, size_t len)
{
    if (WIFSIGNALED(status))
        snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status))
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
    else
        snprintf(buf, len, "ended");
}

/* The worker reaped (it closed its socket: it has ended or is ending). */
static int reap(proc_worker *w)
{
    int status = 0;
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    if (w->pid > 0)
        while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR) {
        }
    w->pid = 0;
    w->stop_sent = 0;
    return status;
}

/* The environment of a worker: ours, with the socket and the slot named. */
static char **worker_environ(int fd, int slot, int nb_slots, char *entry, size_t len)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 2, sizeof(*env));
    if (!env)
        return NULL;
    size_t j = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], WORKER_ENV "=", sizeof(WORKER_ENV)))
            env[j++] = environ[i];
    snprintf(entry, len, WORKER_ENV "=%d:%d:%d", fd, slot, nb_slots);
    env[j] = entry;
    return env;
}

/* Receives one message, waiting at most `seconds` (checking for a stop
 * every quarter second, which is sent on to the worker). 1: a message; 0:
 * none in time; -1: the worker closed its socket. */
static int receive(batch_run *b, proc_worker *w, msg *m, double seconds)
{
    double end = vkcu_now() + seconds;
    for (;;) {
        if (!w->stop_sent && vkcu_job_stop_requested()) {
            send_head(w->fd, MSG_STOP, 0);
            w->stop_sent = 1;
        }
        struct pollfd pf = { .fd = w->fd, .events = POLLIN };
        int r = poll(&pf, 1, 250);
        if (r < 0 && errno != EINTR)
            return -1;
        if (r > 0) {
            ssize_t n = recv(w->fd, m, sizeof(*m), 0);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < (ssize_t)sizeof(m->h))
                return -1;
            if (m->h.type == MSG_LOG) {
                m->u.text[sizeof(m->u.text) - 1] = 0;
                vkcu_log(m->h.level, "%s", m->u.text);
                continue;
            }
            if (m->h.type == MSG_PROGRESS) {
                slot_progress *sp = &b->slots[w - b->procs];
                atomic_store(&sp->frames, m->h.frames);
                atomic_store(&sp->expected, m->h.expected);
                continue;
            }
            return 1;
        }
        if (vkcu_now() >= end)
            return 0;
    }
}

/* Starts the slot's worker and waits for its HELLO; on failure the slot
 * runs its files in this process (said once). */
static void start_worker(batch_run *b, int slot)
{
    proc_worker *w = &b->procs[slot];
    const char *const *cmd = b->p->worker_command;
    const char *test_exec = getenv("VKCU_TEST_BATCH_WORKER_EXEC"); /* test hook: a program that is no worker */
    char why[256] = "", entry[64];
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        snprintf(why, sizeof(why), "no socket: %s", strerror(errno));
        goto fail;
    }
    char **env = worker_environ(sv[1], slot, b->nb_slots, entry, sizeof(entry));
    pid_t parent = getpid();
    pid_t pid = env ? fork() : -1;
    if (pid == 0) {
        /* the child: only async-signal-safe calls until exec */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(127);
        fcntl(sv[1], F_SETFD, 0);
        execve(test_exec ? test_exec : cmd[0], (char *const *)cmd, env);
        _exit(127);
    }
    int err = errno;
    free(env);
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        snprintf(why, sizeof(why), "cannot start a process: %s", strerror(err));
        goto fail;
    }
    w->pid = pid;
    w->fd = sv[0];
    pthread_mutex_lock(&b->lock);
    b->r->processes++;
    pthread_mutex_unlock(&b->lock);
    msg *m = malloc(sizeof(*m));
    int got = m ? receive(b, w, m, HELLO_SECONDS) : -1;
    if (got > 0 && m->h.type == MSG_HELLO && m->h.index == b->nb_files && m->h.hash == b->list_hash) {
        free(m);
        return;
    }
    if (got > 0)
        snprintf(why, sizeof(why), "it listed other files (did the input folder change?)");
    else if (got == 0)
        snprintf(why, sizeof(why), "it did not answer in %.0f s", HELLO_SECONDS);
    free(m);
    if (got >= 0)
        kill(w->pid, SIGKILL);
    char how[96];
    describe_status(reap(w), how, sizeof(how));
    if (!why[0])
        snprintf(why, sizeof(why), "it %s before it was ready", how);
fail:
    w->in_process = 1;
    LOGW("batch: the worker process of stream %d could not start (%s%s%s): its files run in this process", slot,
         why, test_exec ? "; program " : "", test_exec ? test_exec : "");
}

/* File k on slot `slot` in the slot's worker process (started when none
 * runs). 0: no worker can take it, the caller runs it here. */
static int proc_file(batch_run *b, int k, int slot)
{
    proc_worker *w = &b->procs[slot];
    msg *m = malloc(sizeof(*m)); /* NULL: the file runs here */
    if (m && !w->in_process && w->pid <= 0)
        start_worker(b, slot);
    /* A worker that ended between files (killed while it waited) cannot take
     * this one: a new one can. */
    if (m && !w->in_process && send_head(w->fd, MSG_RUN, k) < 0) {
        reap(w);
        start_worker(b, slot);
        if (!w->in_process && send_head(w->fd, MSG_RUN, k) < 0) {
            kill(w->pid, SIGKILL);
            reap(w);
            w->in_process = 1;
        }
    }
    if (!m || w->in_process) {
        free(m);
        return 0;
    }
    while (receive(b, w, m, 1e9) > 0) {
        if (m->h.type == MSG_OUTCOME && m->h.index == k) {
            file_outcome *o = &m->u.outcome;
            o->jr.error[sizeof(o->jr.error) - 1] = 0;
            o->detail[sizeof(o->detail) - 1] = 0;
            vkcu_batch_file_record(b, k, slot, o);
            free(m);
            return 1;
        }
    }
    /* The worker died with the file: the file fails, its partial output goes. */
    long pid = w->pid;
    char how[96], in[PATH_MAX + 1], out[PATH_MAX + 1];
    describe_status(reap(w), how, sizeof(how));
    vkcu_batch_file_paths(b, k, in, out);
    vkcu_outfile_clean_process(out, pid);
    struct stat st;
    if (stat(out, &st) < 0) {
        /* a record written just before it died describes nothing */
        char record[PATH_MAX + 64];
        vkcu_batch_record_name(out, record, sizeof(record));
        unlink(record);
    }
    file_outcome dead = { .status = VKCU_BATCH_FAILED, .reason = VKCU_BATCH_REASON_JOB, .ret = AVERROR(ECHILD),
                          .device = -1 };
    if (vkcu_job_stop_requested()) {
        dead.status = VKCU_BATCH_INTERRUPTED;
        dead.ret = VKCU_ERR_INTERRUPT;
    }
    vkcu_batch_job_error(&dead.jr, "%s: the worker process running it (pid %ld) %s; nothing was written in its "
                         "place (run the file alone to see why)", in, pid, how);
    vkcu_batch_file_record(b, k, slot, &dead);
    free(m);
    return 1;
}

/* The slot's worker process told to end, and reaped: on the slot's thread
 * (a worker gets SIGTERM when the thread that started it ends). */
static void proc_end(batch_run *b, int slot)
{
    proc_worker *w = &b->procs[slot];
    if (w->pid <= 0)
        return;
    /* A closed socket ends it: it is between files. */
    shutdown(w->fd, SHUT_RDWR);
    int status = reap(w);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char how[96];
        describe_status(status, how, sizeof(how));
        LOGW("batch: the worker process of stream %d %s after its last file", slot, how);
    }
}

/* The pool's work (util/jobs.h): the next file on worker slot `slot`, until
 * the list is done or a stop is asked for. */
int vkcu_batch_work(void *opaque, int slot)
{
    batch_run *b = opaque;
    pthread_mutex_lock(&b->lock);
    if (vkcu_job_stop_requested() || b->next >= b->nb_files) {
        pthread_mutex_unlock(&b->lock);
        if (b->procs)
            proc_end(b, slot);
        return 0;
    }
    int k = b->next++;
    b->running++;
    pthread_mutex_unlock(&b->lock);
    if (!b->procs || !proc_file(b, k, slot)) {
        file_outcome o;
        vkcu_batch_file_run(b, k, slot, &o);
        vkcu_batch_file_record(b, k, slot, &o);
    }
    /* A job frees its decoder and buffers at the end; hand the freed
     * pages back so that host RSS stays flat over thousands of files
     * instead of creeping with per-thread heap fragmentation. */
    malloc_trim(0);
    pthread_mutex_lock(&b->lock);
    b->running--;
    pthread_mutex_unlock(&b->lock);
    return 1;
}

