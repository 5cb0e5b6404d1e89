/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of the batch runner share (include/vkcu/batch.h is its
 * face): the file list, the run's state, and the calls of each part.
 * batch.c checks the settings and runs the batch (or its dry run);
 * batch_list.c lists the input folder and maps outputs; batch_report.c
 * writes the JSON-lines report and the progress; batch_record.c keeps what
 * each output was made with (resume); batch_file.c runs one file;
 * batch_proc.c hands the files to the slots, on their threads or in worker
 * processes. Internal to src/batch/.
 */
#ifndef VKCU_BATCH_PRIV_H
#define VKCU_BATCH_PRIV_H

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include <vkcu/batch.h>
#include "core/vkcu.h"

typedef struct batch_file {
    char *rel;               /* path relative to in_dir */
    char *out_rel;           /* output path relative to out_dir */
    const char *same_output; /* rel of an earlier file with the same output, or NULL */
    int not_media;           /* 1: not a media file (skipped unless all_files); it claims no output */
    const char *probed;      /* not_media: the container its bytes are (a static name), or NULL: none */
} batch_file;

typedef struct file_list {
    batch_file *v;
    int n;
    int64_t room; /* util/array.h */
} file_list;

/* A worker slot's running file, for the progress reports: frames so far
 * and the frames its job expects (its own progress reports). */
typedef struct slot_progress {
    _Atomic int64_t frames, expected;
    vkcu_progress_callback user_cb; /* the context's own callback, still called */
    void *user_opaque;
    int channel;                    /* a worker process: its socket to the batch; else -1 */
    void (*forward)(int channel, int64_t frames, int64_t expected); /* a worker process: sends the counts */
} slot_progress;

/* One file's outcome: made where the file ran (this process, or a worker
 * process, which sends it whole) and recorded by the batch. */
typedef struct file_outcome {
    int status;         /* enum vkcu_batch_status */
    int reason;         /* enum vkcu_batch_reason */
    int ret;            /* 0, or the file's error */
    int ran;            /* 1: its job ran (jr holds its result) */
    int device;         /* the slot's device */
    vkcu_job_result jr;
    char detail[1200];  /* the reason's detail; for a skip, its note */
} file_outcome;

/* A worker process of a batch that runs its streams in processes
 * (batch_proc.c): one per slot, started when the slot takes its first
 * file, started again when it dies. */
typedef struct proc_worker {
    int pid;            /* 0: none running */
    int fd;             /* the socket to it; -1 when none */
    int in_process;     /* 1: no worker could start: the slot runs its files in this process */
    int stop_sent;
} proc_worker;

typedef struct batch_run {
    const vkcu_batch_settings *p;
    vkcu_context *ctx;
    vkcu_batch_result *r;
    batch_file *files; /* this shard's files */
    int nb_files;
    FILE *report;
    char report_tmp[PATH_MAX + 64]; /* the report is written here and renamed when the batch ends */
    int summary_written;
    char shard_text[32];
    pthread_mutex_t lock;
    int next;          /* next file to start */
    int running;
    int processed;     /* done + failed (for the ETA) */
    double start;
    int worst_error;   /* highest-priority error of a file, 0 when none failed */
    slot_progress *slots; /* one per worker */
    int nb_slots;
    proc_worker *procs;   /* worker processes, one per slot; NULL: the slots' files run on their threads */
    uint64_t list_hash;   /* of the shard's list: a worker process must have listed the same files */
    int channel;          /* in a worker process: its socket to the batch; else -1 */
    const char *test_kill; /* in a worker process, a test's: the file whose worker dies (batch_proc.c) */
} batch_run;

typedef struct skip_inode {
    dev_t dev;
    ino_t ino;
    int set;
} skip_inode;

typedef struct publish_record {
    const char *settings;
    int written;
    int test_kill; /* a test's: the process kills itself (SIGKILL) instead (batch_proc.c) */
} publish_record;

/* Message text (long paths are cut, not refused). */
static inline void text_cut(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline void text_cut(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

/* ---- listing and media files (batch_list.c) ---- */

int vkcu_batch_match_any(const char *const *globs, int n, const char *rel, const char *name);
/* Walks dir (in_dir/rel). The output folder is not an input: `skip`
 * lists its inode. An existing report file that would be taken as an
 * input is not listed: its path goes to `report_hit` (the batch then
 * refuses to write the report over it). */
int vkcu_batch_walk(const vkcu_batch_settings *p, const char *rel, const skip_inode *skip, int nb_skip,
                    const skip_inode *report, char *report_hit, file_list *l, char *err, size_t errlen);
/* qsort order of the list: byte-wise by relative path. */
int vkcu_batch_cmp_rel(const void *a, const void *b);
/* Each file's output name; files that share one are marked. */
int vkcu_batch_map_outputs(file_list *l, const char *ext);
void vkcu_batch_list_free(file_list *l);
/* Whether a name has a video extension; whether a file's bytes are media
 * (*probed: the container found, or NULL). */
int vkcu_batch_media_extension(const char *name);
int vkcu_batch_media_content(const char *path, const char **probed);

/* ---- report and progress (batch_report.c) ---- */

void vkcu_batch_report_file(batch_run *b, const batch_file *f, const char *in, const char *out,
                            enum vkcu_batch_status st, const vkcu_job_result *jr, int err, int device, const char *why,
                            const char *reason);
void vkcu_batch_report_summary(batch_run *b, int ret);
/* Under b->lock. */
void vkcu_batch_progress_report(batch_run *b, int final);
int vkcu_batch_report_open(batch_run *b, const char *report_hit, char *err, size_t errlen);
int vkcu_batch_report_writable_first(const vkcu_batch_settings *p, char *err, size_t errlen);
int vkcu_batch_report_not_an_output(batch_run *b, const file_list *all, char *err, size_t errlen);
/* rel (under root) when the resolved `path` lies below the folder `root`,
 * else NULL. Folders are compared by device and inode, not by name: a bind
 * mount of root (or a link the resolved path went through) is root. */
const char *vkcu_batch_below(const char *path, const char *root);

/* ---- what an output was made with (batch_record.c) ---- */

/* Everything that decides an output's bytes, one "key=value" a line. */
void vkcu_batch_settings_text(const vkcu_job_params *p, const char *in, char *buf, size_t len);
void vkcu_batch_record_name(const char *out, char *name, size_t len);
/* 1 when out's record says it was made with settings_now; else 0 and why. */
int vkcu_batch_record_matches(const char *out, const char *settings_now, char *why, size_t whylen);
/* The job's hook just before its output is moved into place (opaque: a
 * publish_record). */
int vkcu_batch_publish_hook(void *opaque, const char *tmp, const char *path, char *err, size_t errlen);

/* ---- one file (batch_file.c) ---- */

int vkcu_batch_error_rank(int err);
int vkcu_batch_mkdirs_for(const char *path, char *err, size_t errlen);
void vkcu_batch_job_error(vkcu_job_result *jr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vkcu_batch_file_outcome(batch_run *b, const vkcu_batch_file *bf);
void vkcu_batch_not_media_note(const batch_file *f, char *buf, size_t size);
/* File k's input (in_dir/rel) and output (out_dir/out_rel), each into
 * PATH_MAX + 1 bytes. */
void vkcu_batch_file_paths(const batch_run *b, int k, char *in, char *out);
/* File k on slot `slot`, in this process: skipped, refused or run, into *o
 * (its output claimed and released around it). */
void vkcu_batch_file_run(batch_run *b, int k, int slot, file_outcome *o);
/* File k's outcome counted, logged, reported and given to the file
 * callback (takes b->lock). */
void vkcu_batch_file_record(batch_run *b, int k, int slot, const file_outcome *o);

/* ---- worker processes (batch_proc.c) ---- */

/* In a worker process (started by a batch with a worker command): 1 with
 * its socket, slot and the batch's slot count; 0 when this process is no
 * batch's worker. */
int vkcu_batch_worker_env(int *channel, int *slot, int *nb_slots);
/* The worker process's side: tells the batch it listed the same files,
 * then runs the files the batch sends until the batch closes the socket.
 * Returns 0, or an error when it could not serve. */
int vkcu_batch_serve(batch_run *b, int slot);
/* A worker of util/jobs.h: the batch's files, one after the other, on the
 * slot's thread or in the slot's worker process (b->procs). */
int vkcu_batch_work(void *opaque, int slot);
/* The hash of a shard's list (names, outputs, what was decided of each). */
uint64_t vkcu_batch_list_hash(const batch_file *files, int n);

#endif
