/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Batch processing of a folder: list the input files (sorted, filtered,
 * sharded), map each to an output path, and run them as concurrent jobs
 * in this process (one thread per stream, each calling vkcu_job_run),
 * with one progress display, a JSON-lines report and a summary.
 *
 * A failing file never stops the others. Outputs appear only complete
 * (vkcu_job_run writes a temporary name and renames it), so an existing
 * output is a finished one: --resume skips it. docs/batch.md has the
 * user-facing description and the report format.
 */
#ifndef VKCU_BATCH_H
#define VKCU_BATCH_H

#include <stdint.h>
#include <stdio.h>

#include "core/vkcu.h"

#define VKCU_BATCH_MAX_DEVICES 64

typedef struct vkcu_batch_params {
    const char *in_dir;
    const char *out_dir;           /* created when missing (not with dry_run) */
    /* Template for every file; input, output, hash_out, device and
     * progress are set per file. sink is VKCU_SINK_ENCODE or _HASH. */
    vkcu_job_params job;
    const char *extension;         /* of the outputs, with the dot: ".mkv" */
    const char *pipeline;          /* name recorded in the report, may be NULL */
    int jobs;                      /* concurrent streams (worker threads), >= 1 */
    int recursive;                 /* descend into subfolders */
    /* Globs (fnmatch). A pattern without '/' matches the file's name, one
     * with '/' its path relative to in_dir. A file is taken when it
     * matches an include (or none is given) and no exclude. Excludes also
     * prune folders. Hidden entries (".name") are always skipped. */
    const char *const *include;
    int nb_include;
    const char *const *exclude;
    int nb_exclude;
    int resume;                    /* skip files whose output exists */
    int overwrite;                 /* replace existing outputs */
    const char *report_path;       /* JSON lines, NULL: none */
    int dry_run;                   /* print the plan to `listing`, write nothing */
    FILE *listing;
    int shard_index, shard_count;  /* take files k with k % count == index; count <= 1: all */
    /* Stream slot w runs on devices[w % nb_devices]; nb_devices 0: job.device. */
    int devices[VKCU_BATCH_MAX_DEVICES];
    int nb_devices;
    int progress;                  /* one progress line for the batch on stderr (terminal only) */
} vkcu_batch_params;

void vkcu_batch_params_default(vkcu_batch_params *p);

typedef struct vkcu_batch_result {
    int total;          /* files in this shard */
    int done, skipped, failed;
    int interrupted;    /* stopped mid-way by Ctrl-C (their outputs removed) */
    int not_started;    /* left when the batch was interrupted */
    int64_t frames;
    double seconds;
    int worst_error;    /* highest-priority job error, 0 when none failed */
} vkcu_batch_result;

/* Runs the batch. Returns 0 when no file failed; the highest-priority
 * error of the failed files (interrupt > device > output > usage > input
 * > other); or, before any file ran, an error with the reason in err
 * (input folder missing, output folder not creatable, report not
 * writable). Thread-safe for distinct params; uses vkcu_request_stop's
 * global flag to stop (Ctrl-C). */
int vkcu_batch_run(const vkcu_batch_params *p, vkcu_batch_result *r, char *err, size_t errlen);

/* Parses "all" or "0,1,3" into ordinals. "all" gives every CUDA device
 * (none without a GPU). Returns the count, or -1 with a message in err. */
int vkcu_batch_parse_devices(const char *text, int *devices, int max, char *err, size_t errlen);

/* The shard from the environment when --shard is not given:
 * SLURM_ARRAY_TASK_ID (minus SLURM_ARRAY_TASK_MIN, divided by
 * SLURM_ARRAY_TASK_STEP) of SLURM_ARRAY_TASK_COUNT, else Kubernetes'
 * JOB_COMPLETION_INDEX of `count_hint` (--shard-count) or
 * $VKCU_SHARD_COUNT. Returns 1 with index and count set, 0 when the
 * environment names no shard, -1 with a message in err when it is
 * inconsistent. `source` names the variables used. */
int vkcu_batch_shard_from_env(int count_hint, int *index, int *count, char *source, size_t sourcelen,
                              char *err, size_t errlen);

#endif
