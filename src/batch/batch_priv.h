/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of the batch runner share (include/vkcu/batch.h is its
 * face): the file list, the run's state, and the calls of each part.
 * batch.c checks the settings and runs the batch (or its dry run);
 * batch_list.c lists the input folder and maps outputs; batch_report.c
 * writes the JSON-lines report and the progress; batch_record.c keeps what
 * each output was made with (resume); batch_file.c runs one file. Internal
 * to src/batch/.
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
} slot_progress;

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
} batch_run;

typedef struct skip_inode {
    dev_t dev;
    ino_t ino;
    int set;
} skip_inode;

typedef struct publish_record {
    const char *settings;
    int written;
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
/* A worker of util/jobs.h: the batch's files, one after the other. */
int vkcu_batch_work(void *opaque, int slot);

#endif
