/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu public API: batches. One call runs the same job over every file of
 * a folder: it lists the files (sorted byte-wise, filtered by globs, cut
 * into shards so that an array of machines shares a folder), maps each to
 * an output in another folder, and runs them as concurrent jobs on one
 * context, each on its own thread.
 *
 *     vkcu_batch_settings b;
 *     vkcu_default_batch_settings(&b);
 *     b.in_dir = "in";
 *     b.out_dir = "out";
 *     b.job.chain = "scale=h=720";        // the job every file gets
 *     b.file_callback = my_file;          // optional: one call per file
 *     vkcu_batch_result r;
 *     int ret = vkcu_batch_run(ctx, &b, &r);  // 0 when no file failed
 *
 * A failing file never stops the others. Outputs appear only complete (a
 * job writes a temporary name and renames it), so an existing output is a
 * finished one: `resume` skips it when a record beside it says it was made
 * from the same input with the same settings. docs/batch.md describes the
 * report's format.
 */
#ifndef VKCU_BATCH_H
#define VKCU_BATCH_H

#include <stdint.h>

#include "common.h"
#include "job.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most devices a batch spreads its streams over. */
#define VKCU_BATCH_MAX_DEVICES 64
/* The most concurrent streams of one batch. */
#define VKCU_BATCH_MAX_JOBS 256
/* The most shards a folder can be cut into. */
#define VKCU_BATCH_MAX_SHARDS 1000000

/* What became of one file. */
enum vkcu_batch_status {
    VKCU_BATCH_DONE = 0,    /* its output was written */
    VKCU_BATCH_SKIPPED,     /* left alone: see the reason */
    VKCU_BATCH_FAILED,      /* see error and message */
    VKCU_BATCH_INTERRUPTED, /* stopped by vkcu_request_stop(); its partial output was removed */
    VKCU_BATCH_PLANNED,     /* dry run: would be processed */
};

/* Why a file was skipped or failed, where a program may want to say it in
 * its own words (the CLI names its options there). */
enum vkcu_batch_reason {
    VKCU_BATCH_REASON_NONE = 0,
    VKCU_BATCH_REASON_JOB,            /* the job or its output failed: message says why */
    VKCU_BATCH_REASON_SAME_OUTPUT,    /* another input maps to the same output; detail: that input, relative */
    VKCU_BATCH_REASON_EXISTS,         /* the output exists and neither resume nor overwrite is set */
    VKCU_BATCH_REASON_EXISTS_CHANGED, /* resume is set but the output was made otherwise; detail: what differs */
    VKCU_BATCH_REASON_UP_TO_DATE,     /* resume: made earlier from this input with these settings (skipped) */
    VKCU_BATCH_REASON_BUSY,           /* another process holds the output (skipped); detail: who */
    VKCU_BATCH_REASON_NOT_MEDIA,      /* not a media file (skipped; see all_files); detail: "not media", or
                                       * "not media: srt, no video stream" for media without video */
};

/* One file's outcome, as the file callback receives it. */
typedef struct vkcu_batch_file {
    int index;                     /* position in this shard's sorted list, from 0 */
    const char *file;              /* the input, relative to in_dir */
    const char *input;             /* in_dir/file */
    const char *output;            /* the output path under out_dir */
    enum vkcu_batch_status status;
    enum vkcu_batch_reason reason; /* NONE when done or planned */
    const char *detail;            /* reason-specific text (see the reasons); "" when none */
    int error;                     /* 0, or the negative error of a failed or interrupted file */
    const char *message;           /* one line naming the file and what failed; "" when it did not fail */
    const vkcu_job_result *job;    /* the job's result; NULL when no job ran (skipped, refused, dry run) */
    int device;                    /* the CUDA ordinal its frames went through; -1 on the CPU or when no job ran */
    uint64_t reserved[16];         /* zero (version.h: room to grow) */
} vkcu_batch_file;

/**
 * Receives each file's outcome, once per file, as it finishes (in a dry
 * run: what would happen to it).
 *
 * @param opaque the settings' file_opaque.
 * @param file   valid only during the call.
 * @return 0 to let the library send a failed file's message to the log
 *         callback at VKCU_LOG_ERROR; nonzero when the callback has
 *         reported the failure itself (say, in other words).
 * @note Calls of one batch never overlap (they hold the batch's lock), but
 *       come from its worker threads: keep them short, and do not call
 *       vkcu_batch_run from them.
 */
typedef int (*vkcu_batch_file_callback)(void *opaque, const vkcu_batch_file *file);

/* What the batch progress callback receives. */
typedef struct vkcu_batch_progress {
    int total;       /* files in this shard */
    int finished;    /* done + skipped + failed + interrupted */
    int running;     /* files being processed now */
    int failed;
    int64_t frames;  /* frames written by the files done so far */
    double elapsed;  /* seconds since the first file started */
    double fps;      /* (frames + frames_running) / elapsed */
    double eta;      /* seconds until the last file finishes, at the pace so far (the running files' frames to
                      * come, and files to start as large as the average); -1 when unknown */
    int final;       /* 1 on the last call, after every worker stopped */
    int64_t frames_running; /* frames the files still running have processed so far */
    uint64_t reserved[16]; /* zero (version.h: room to grow) */
} vkcu_batch_progress;

/**
 * Reports a batch's progress: on the thread that called vkcu_batch_run,
 * every quarter of a second and whenever a file finishes, and once more
 * with final = 1.
 *
 * @param opaque the settings' progress_opaque.
 * @param info   valid only during the call.
 * @note Calls hold the batch's lock, so they never overlap a file
 *       callback or a message of the batch itself.
 */
typedef void (*vkcu_batch_progress_callback)(void *opaque, const vkcu_batch_progress *info);

/* A batch: which files, where their outputs go, and the job each one gets.
 * Fill with vkcu_default_batch_settings() first; vkcu_batch_run() refuses
 * values outside the documented ranges with -EINVAL (never clamps).
 * Strings and arrays stay the caller's; they are read during the call only. */
typedef struct vkcu_batch_settings {
    const char *in_dir;            /* the input folder; required */
    const char *out_dir;           /* the output folder, created when missing (not in a dry run); required,
                                    * and not in_dir itself */
    /* The job of every file: sink VKCU_SINK_ENCODE (default) or VKCU_SINK_HASH.
     * input, output, hash_out, hash_out_name, hash_path and overwrite are set per file. */
    vkcu_job job;
    const char *extension;         /* of the outputs, with the dot, at most 16 characters after it and no
                                    * '/'; default ".mkv" */
    const char *pipeline;          /* a name for the report's summary; NULL: none */
    int jobs;                      /* files processed at once, 1..VKCU_BATCH_MAX_JOBS; default 1 */
    int recursive;                 /* 1: descend into subfolders (links to folders are not followed) */
    /* Globs (fnmatch). A pattern without '/' matches the file's name, one
     * with '/' its path relative to in_dir. A file is taken when it matches
     * an include (or none is given) and no exclude; excludes also prune
     * folders. Hidden entries (".name") are always skipped. */
    const char *const *include;
    int nb_include;                /* 0..; include may be NULL when 0 */
    const char *const *exclude;
    int nb_exclude;
    int resume;                    /* 1: skip files whose output was made with the same settings */
    int overwrite;                 /* 1: replace existing outputs (and the report) */
    const char *report_path;       /* JSON lines, one per file and a summary (docs/batch.md); NULL: none */
    int dry_run;                   /* 1: decide each file's fate and report it to the file callback; write nothing */
    int shard_index, shard_count;  /* take the files k of the sorted list with k % count == index;
                                    * count 1..VKCU_BATCH_MAX_SHARDS, index 0..count-1; default 0 of 1 */
    /* Stream slot w runs on devices[w % nb_devices]; nb_devices 0: the context's device.
     * Ordinals 0..63, each at most once. */
    int devices[VKCU_BATCH_MAX_DEVICES];
    int nb_devices;
    vkcu_batch_file_callback file_callback;         /* NULL: failures go to the log callback */
    void *file_opaque;
    vkcu_batch_progress_callback progress_callback; /* NULL: no progress reports */
    void *progress_opaque;
    /* 0 (default): media files only: a video container's extension (mkv, mp4, mov, ts, 264, ...), or bytes
     * FFmpeg recognizes as a container holding video (a still image is none); the others are skipped
     * (VKCU_BATCH_REASON_NOT_MEDIA), which is no failure, and claim no output name. 1: every file listed is
     * a job's input. */
    int all_files;
    /* Worker processes. NULL (default): the `jobs` streams run on threads of the calling process. Else each
     * stream slot runs its files in a worker process of its own: this command (argv[0] a path, the list
     * NULL-terminated), a program that calls vkcu_batch_run with these same settings (the vkcu command
     * passes its own command line). There vkcu_batch_run finds VKCU_BATCH_WORKER in its environment, takes
     * its files from this process and sends back each file's outcome, progress and messages; the report,
     * the callbacks and the summary stay here. A worker that dies fails its file (its partial output is
     * removed) and the next file starts a new one; a slot whose worker cannot start runs its files on its
     * thread, with a warning. Why: one process's Vulkan streams share a lock of the GPU driver, several
     * processes do not (docs/performance.md). Ignored in a dry run. */
    const char *const *worker_command;
    uint64_t reserved[31];         /* zero (version.h: room to grow) */
} vkcu_batch_settings;

/**
 * Fills batch settings with the defaults given beside each field (the job
 * as vkcu_default_job() leaves it).
 *
 * @param s the caller's struct; every field is written.
 * @note Thread-safe.
 */
VKCU_API void vkcu_default_batch_settings(vkcu_batch_settings *s);

/* What a batch did. */
typedef struct vkcu_batch_result {
    int total;        /* files in this shard */
    int done, skipped, failed;
    int interrupted;  /* stopped mid-way by vkcu_request_stop() (their outputs removed) */
    int not_started;  /* left when the batch was interrupted */
    int planned;      /* dry run: files that would be processed (skipped and failed count those that would be) */
    int64_t frames;   /* frames written */
    double seconds;   /* wall time of the files' processing */
    char error[512];  /* when the batch could not start: one line saying why; else "" */
    int worker;       /* 1: this process served as a worker process of another's batch (worker_command): the
                       * counts are that batch's to report, and this process has nothing to say */
    int processes;    /* worker processes started (0: the files ran on threads of this process) */
    uint64_t reserved[31]; /* zero (version.h: room to grow) */
} vkcu_batch_result;

/**
 * Runs a batch to completion.
 *
 * @param ctx    an open context: its settings (backend, device, ring ...)
 *               apply to every file, and its log callback gets the batch's
 *               messages (a file's failure, unless the file callback
 *               reports it; whatever the jobs log).
 * @param s      the batch; read during the call only.
 * @param result receives what the batch did, also on failure. Must not be
 *               NULL.
 * @return 0 when no file failed (a dry run: when the plan holds no
 *         failure; else the error the real run would return for the
 *         planned failures, as below);
 *         -EINVAL when a setting or the job is out of range (nothing was
 *         listed; the message names the field);
 *         before any file ran, VKCU_ERR_INPUT (the input folder is missing
 *         or holds no file to take), VKCU_ERR_OUTPUT (the output folder or
 *         the report cannot be written), VKCU_ERR_USAGE (the output folder
 *         is the input folder), with result->error set;
 *         else the most telling error of the failed files: interrupt, then
 *         device, output, usage (two inputs, one output), input, other.
 * @note Thread-safe for distinct settings, results and output folders. A
 *       vkcu_request_stop() stops starting files and interrupts the running
 *       ones.
 */
VKCU_API int vkcu_batch_run(vkcu_context *ctx, const vkcu_batch_settings *s, vkcu_batch_result *result);

#ifdef __cplusplus
}
#endif
#endif
