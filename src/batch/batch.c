/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Batch runner behind vkcu_batch_run (include/vkcu/batch.h): folder
 * listing (sorted byte-wise so that every shard of a Slurm array sees the
 * same order), output mapping, N worker threads (util/jobs.h) each
 * running one job at a time on the caller's context, the JSON-lines
 * report, and the file and progress callbacks. Memory per file is a few paths; everything heavy
 * lives in the jobs, of which at most `jobs` exist at once.
 *
 * Messages name settings and files, never a command-line option: a program
 * that wants its own words for a file's fate gets the reason codes through
 * the file callback (the CLI adds its option names there).
 *
 * This file checks the settings, runs the batch (or its dry run) and
 * frees it; the listing (batch_list.c), the report and progress
 * (batch_report.c), the records of what outputs were made with
 * (batch_record.c) and one file's run (batch_file.c) have their own files
 * (batch_priv.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libavutil/error.h>

#include "util/clock.h"
#include "util/jobs.h"
#include "util/log.h"
#include "util/number.h"
#include "core/context.h"
#include "core/demux.h"
#include "core/outfile.h"
#include "gpu/vkdev.h"
#include "batch_priv.h"

void vkcu_default_batch_settings(vkcu_batch_settings *s)
{
    memset(s, 0, sizeof(*s));
    vkcu_default_job(&s->job);
    s->extension = ".mkv";
    s->jobs = 1;
    s->shard_count = 1;
}

/* ---- the batch ---- */

/* Each file's fate without touching anything, in the order of the list. */
static void dry_run(batch_run *b)
{
    const vkcu_batch_settings *p = b->p;
    vkcu_batch_result *r = b->r;
    vkcu_job_params job;
    vkcu_context_describe(b->ctx, &p->job, &job);
    job.job.overwrite = p->overwrite;
    for (int k = 0; k < b->nb_files; k++) {
        const batch_file *f = &b->files[k];
        char out[PATH_MAX + 1], in[PATH_MAX + 1], settings[8192], differs[1024] = "";
        vkcu_job_result jr; /* only its error line */
        struct stat sb;
        vkcu_batch_file_paths(b, k, in, out);
        jr.error[0] = 0;
        job.job.input = in;
        job.job.output = out;
        vkcu_batch_file bf = { .index = k, .file = f->rel, .input = in, .output = out, .status = VKCU_BATCH_PLANNED,
                               .reason = VKCU_BATCH_REASON_NONE, .detail = "", .message = jr.error, .device = -1 };
        int exists = stat(out, &sb) == 0;
        char note[128];
        if (f->not_media) {
            vkcu_batch_not_media_note(f, note, sizeof(note));
            bf.status = VKCU_BATCH_SKIPPED;
            bf.reason = VKCU_BATCH_REASON_NOT_MEDIA;
            bf.detail = note;
        } else if (f->same_output) {
            bf.status = VKCU_BATCH_FAILED;
            bf.reason = VKCU_BATCH_REASON_SAME_OUTPUT;
            bf.detail = f->same_output;
            bf.error = VKCU_ERR_USAGE;
            vkcu_batch_job_error(&jr, "%s: its output %s is also the output of %s", in, out, f->same_output);
        } else if (exists && p->resume &&
                   (vkcu_batch_settings_text(&job, in, settings, sizeof(settings)),
                    vkcu_batch_record_matches(out, settings, differs, sizeof(differs)))) {
            bf.status = VKCU_BATCH_SKIPPED;
            bf.reason = VKCU_BATCH_REASON_UP_TO_DATE;
            bf.detail = "done earlier with the same settings";
        } else if (exists && p->resume && !p->overwrite) {
            bf.status = VKCU_BATCH_FAILED;
            bf.reason = VKCU_BATCH_REASON_EXISTS_CHANGED;
            bf.detail = differs;
            bf.error = VKCU_ERR_OUTPUT;
            vkcu_batch_job_error(&jr, "%s: exists, but %s", out, differs);
        } else if (exists && !p->overwrite) {
            bf.status = VKCU_BATCH_FAILED;
            bf.reason = VKCU_BATCH_REASON_EXISTS;
            bf.error = VKCU_ERR_OUTPUT;
            vkcu_batch_job_error(&jr, "%s: already exists", out);
        } else if ((bf.error = vkcu_demux_check(in, jr.error, sizeof(jr.error))) < 0) {
            /* the job's first checks: an empty file, a container FFmpeg cannot open */
            bf.status = VKCU_BATCH_FAILED;
            bf.reason = VKCU_BATCH_REASON_JOB;
        }
        r->planned += bf.status == VKCU_BATCH_PLANNED;
        r->skipped += bf.status == VKCU_BATCH_SKIPPED;
        r->failed += bf.status == VKCU_BATCH_FAILED;
        /* The plan's failures decide its return, as the real run's would. */
        if (bf.error < 0 &&
            (!b->worst_error || vkcu_batch_error_rank(bf.error) < vkcu_batch_error_rank(b->worst_error)))
            b->worst_error = bf.error;
        pthread_mutex_lock(&b->lock);
        vkcu_batch_file_outcome(b, &bf);
        pthread_mutex_unlock(&b->lock);
    }
}

/* Refuses an integer setting outside [lo, hi], naming it. */
#define RANGE(what, value, lo, hi) VKCU_RANGE("batch: " what, value, lo, hi)

static int check_globs(const char *what, const char *const *globs, int n, char *err, size_t errlen)
{
    if (n < 0)
        return vkcu_invalid(err, errlen, "batch: %s %d is negative", what, n);
    for (int i = 0; i < n; i++)
        if (!globs || !globs[i])
            return vkcu_invalid(err, errlen, "batch: %s %d of %d is missing (NULL)", what, i + 1, n);
    return 0;
}

static int check_batch(const vkcu_batch_settings *p, char *err, size_t errlen)
{
    int ret = VKCU_RESERVED_CHECK(vkcu_batch_settings, p, err, errlen);
    if (ret < 0)
        return ret;
    if (!p->in_dir || !*p->in_dir)
        return vkcu_invalid(err, errlen, "batch: no input folder given");
    if (!p->out_dir || !*p->out_dir)
        return vkcu_invalid(err, errlen, "batch: no output folder given");
    const char *e = p->extension;
    if (!e || e[0] != '.' || !e[1] || strlen(e) > 17 || strchr(e, '/'))
        return vkcu_invalid(err, errlen, "batch: the output extension '%s' is not a dot and 1 to 16 characters "
                            "without '/' (such as \".mkv\")", e ? e : "(none)");
    RANGE("job count", p->jobs, 1, VKCU_BATCH_MAX_JOBS);
    RANGE("recursive flag", p->recursive, 0, 1);
    RANGE("resume flag", p->resume, 0, 1);
    RANGE("overwrite flag", p->overwrite, 0, 1);
    RANGE("dry-run flag", p->dry_run, 0, 1);
    RANGE("all-files flag", p->all_files, 0, 1);
    RANGE("shard count", p->shard_count, 1, VKCU_BATCH_MAX_SHARDS);
    RANGE("shard index", p->shard_index, 0, p->shard_count - 1);
    ret = check_globs("include pattern count", p->include, p->nb_include, err, errlen);
    if (ret >= 0)
        ret = check_globs("exclude pattern count", p->exclude, p->nb_exclude, err, errlen);
    if (ret < 0)
        return ret;
    RANGE("device count", p->nb_devices, 0, VKCU_BATCH_MAX_DEVICES);
    for (int i = 0; i < p->nb_devices; i++) {
        RANGE("device ordinal", p->devices[i], 0, 63);
        for (int j = 0; j < i; j++)
            if (p->devices[j] == p->devices[i])
                return vkcu_invalid(err, errlen, "batch: device %d is listed twice", p->devices[i]);
    }
    if (p->job.sink != VKCU_SINK_ENCODE && p->job.sink != VKCU_SINK_HASH)
        return vkcu_invalid(err, errlen, "batch: the job's sink must be the encode or the hash sink (a batch writes "
                            "one output per file)");
    /* The per-file fields get stand-ins: the rest of the job is checked as vkcu_run would. */
    vkcu_job job = p->job;
    char outputs[PATH_MAX + 32];
    snprintf(outputs, sizeof(outputs), "%s/*%s", p->out_dir, p->extension); /* the container and encoder of every file */
    job.input = p->in_dir;
    job.output = outputs;
    job.hash_out = stdout;
    job.overwrite = p->overwrite;
    return vkcu_check_job(&job, err, errlen);
}

/* The input and output folders checked, the output folder made (unless a
 * dry run); *skip is the output folder and *report the report file, which
 * the walk does not take for inputs. */
static int check_folders(const vkcu_batch_settings *p, skip_inode *skip, skip_inode *report, char *err, size_t errlen)
{
    struct stat st;
    int ret;
    if (stat(p->in_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
        text_cut(err, errlen, "%s: %s (the batch's input folder)", p->in_dir,
                 stat(p->in_dir, &st) < 0 ? "no such folder" : "not a folder");
        return VKCU_ERR_INPUT;
    }
    if (stat(p->out_dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            text_cut(err, errlen, "%s: exists and is not a folder (the batch's output folder)", p->out_dir);
            return VKCU_ERR_OUTPUT;
        }
        /* The same folder under any name: a link, or a bind mount of it (whose real path differs). */
        struct stat in_st;
        if (stat(p->in_dir, &in_st) == 0 && in_st.st_dev == st.st_dev && in_st.st_ino == st.st_ino) {
            text_cut(err, errlen, "%s: the output folder is the input folder (outputs would replace or be taken "
                     "for inputs): choose another one", p->out_dir);
            return VKCU_ERR_USAGE;
        }
        *skip = (skip_inode){ st.st_dev, st.st_ino, 1 };
    } else if (!p->dry_run) {
        if ((ret = vkcu_batch_report_writable_first(p, err, errlen)) < 0)
            return ret;
        char probe[PATH_MAX + 2];
        snprintf(probe, sizeof(probe), "%s/", p->out_dir);
        if ((ret = vkcu_batch_mkdirs_for(probe, err, errlen)) < 0)
            return ret;
        if (stat(p->out_dir, &st) == 0)
            *skip = (skip_inode){ st.st_dev, st.st_ino, 1 };
    }
    /* A report on standard output redirected onto an input is the same file. */
    if (p->report_path && (!strcmp(p->report_path, "-") ? fstat(STDOUT_FILENO, &st) == 0 && S_ISREG(st.st_mode)
                                                        : stat(p->report_path, &st) == 0))
        *report = (skip_inode){ st.st_dev, st.st_ino, 1 };
    return 0;
}

/* The input folder listed, media files picked, the report opened, outputs
 * mapped, and this shard's files taken. */
static int list_files(batch_run *b, file_list *all, const skip_inode *skip, const skip_inode *report,
                      char *report_hit)
{
    const vkcu_batch_settings *p = b->p;
    vkcu_batch_result *r = b->r;
    char *err = r->error;
    size_t errlen = sizeof(r->error);
    int count = p->shard_count;
    int ret;
    if ((ret = vkcu_batch_walk(p, "", skip, 1, report, report_hit, all, err, errlen)) < 0)
        return ret;
    /* Media files only (unless all_files): decided on the whole list, so
     * every shard maps the same outputs. */
    for (int k = 0; !p->all_files && k < all->n; k++) {
        batch_file *f = &all->v[k];
        char full[PATH_MAX + 1];
        snprintf(full, sizeof(full), "%s/%s", p->in_dir, f->rel);
        f->not_media = !vkcu_batch_media_extension(f->rel) && !vkcu_batch_media_content(full, &f->probed);
    }
    if (p->report_path && !p->dry_run && b->channel < 0 &&
        (ret = vkcu_batch_report_open(b, report_hit, err, errlen)) < 0)
        return ret;
    if (all->n == 0) {
        text_cut(err, errlen, "%s: no input files (hidden files are skipped%s%s)", p->in_dir,
                 p->recursive ? "" : "; subfolders are taken only by a recursive batch",
                 p->nb_include || p->nb_exclude ? "; check the include and exclude patterns" : "");
        return VKCU_ERR_INPUT;
    }
    qsort(all->v, (size_t)all->n, sizeof(all->v[0]), vkcu_batch_cmp_rel);
    if ((ret = vkcu_batch_map_outputs(all, p->extension)) < 0)
        return ret;
    if (b->report && (ret = vkcu_batch_report_not_an_output(b, all, err, errlen)) < 0)
        return ret;
    /* This shard's files: every count-th of the sorted list. */
    b->files = malloc((size_t)all->n * sizeof(*b->files));
    if (!b->files)
        return AVERROR(ENOMEM);
    for (int k = 0; k < all->n; k++)
        if (k % count == p->shard_index)
            b->files[b->nb_files++] = all->v[k];
    r->total = b->nb_files;
    b->list_hash = vkcu_batch_list_hash(b->files, b->nb_files);
    return 0;
}

/* The shard's files on the workers; the calling thread reports progress
 * until they are done, then the summary. Returns the worst error. */
static int run_workers(batch_run *b)
{
    const vkcu_batch_settings *p = b->p;
    vkcu_batch_result *r = b->r;
    char *err = r->error;
    size_t errlen = sizeof(r->error);
    vkcu_jobs *workers = NULL;
    int ret;
    int jobs = p->jobs < b->nb_files ? p->jobs : (b->nb_files ? b->nb_files : 1);
    /* One decode queue per concurrent stream on each GPU's shared device. */
    vkcu_vkdev_expect((unsigned)jobs, 0);
    b->slots = calloc((size_t)jobs, sizeof(*b->slots));
    b->nb_slots = b->slots ? jobs : 0;
    if (!b->slots)
        return AVERROR(ENOMEM);
    for (int i = 0; i < jobs; i++)
        b->slots[i].channel = -1;
    if (p->worker_command) {
        /* Each slot's files in a worker process of its own, started with its first file. */
        b->procs = calloc((size_t)jobs, sizeof(*b->procs));
        if (!b->procs)
            return AVERROR(ENOMEM);
        for (int i = 0; i < jobs; i++)
            b->procs[i].fd = -1;
    }
    b->start = vkcu_now();
    /* The workers' messages (theirs and their jobs') go to the context's log
     * callback. Workers that cannot be started leave their files to the others. */
    vkcu_jobs_params wp = { .workers = jobs, .work = vkcu_batch_work, .opaque = b };
    if ((ret = vkcu_jobs_start(&workers, &wp)) < 0) {
        if (ret != AVERROR(ENOMEM)) {
            text_cut(err, errlen, "batch: cannot start worker threads");
            ret = AVERROR(EAGAIN);
        }
        return ret;
    }
    for (;;) {
        if (p->progress_callback) {
            pthread_mutex_lock(&b->lock);
            vkcu_batch_progress_report(b, 0);
            pthread_mutex_unlock(&b->lock);
        }
        if (vkcu_jobs_wait(workers, 0.25))
            break;
    }
    vkcu_jobs_join(&workers);
    r->seconds = vkcu_now() - b->start;
    r->not_started = r->total - r->done - r->skipped - r->failed - r->interrupted;
    /* Files not started mean the run was stopped: an interrupted run exits as
     * one, whatever failed before the stop. */
    if (r->not_started > 0 || (r->interrupted > 0 && vkcu_job_stop_requested()))
        b->worst_error = VKCU_ERR_INTERRUPT;
    if (p->progress_callback) {
        pthread_mutex_lock(&b->lock);
        vkcu_batch_progress_report(b, 1);
        pthread_mutex_unlock(&b->lock);
    }
    vkcu_batch_report_summary(b, b->worst_error);
    return b->worst_error;
}

/* The report published (or, where it could not be written whole, left as
 * it was); returns ret, or the report's error where ret had none. */
static int close_report(batch_run *b, int ret)
{
    const vkcu_batch_settings *p = b->p;
    char *err = b->r->error;
    size_t errlen = sizeof(b->r->error);
    /* Published only whole, summary included: a report that could not
     * be written (a full disk), or a batch that stopped before its
     * summary, leaves the earlier report (if any) as it was. */
    int bad = vkcu_outfile_fclose(b->report, b->report_tmp) != 0;
    char why[1024];
    if (!bad && b->summary_written) {
        if (vkcu_outfile_commit(b->report_tmp, p->report_path, why, sizeof(why)) < 0) {
            if (ret >= 0) {
                text_cut(err, errlen, "cannot write the report: %s", why);
                ret = VKCU_ERR_OUTPUT;
            } else {
                vkcu_log(VKCU_LOG_ERROR, "cannot write the report: %s", why);
            }
        }
    } else {
        vkcu_outfile_abort(b->report_tmp);
        if (bad) {
            char line[512];
            snprintf(line, sizeof(line), "%s: cannot write the report (disk full?); nothing was written in its "
                     "place", p->report_path);
            if (ret >= 0) {
                text_cut(err, errlen, "%s", line);
                ret = VKCU_ERR_OUTPUT;
            } else {
                vkcu_log(VKCU_LOG_ERROR, "%s", line);
            }
        }
    }
    return ret;
}

/* A worker process's part of another process's batch: the slot's files as
 * that batch sends them, on this thread (its log target sends messages
 * there: batch_proc.c). */
static int serve(batch_run *b, int slot, int nb_slots)
{
    b->slots = calloc((size_t)nb_slots, sizeof(*b->slots));
    b->nb_slots = b->slots ? nb_slots : 0;
    if (!b->slots)
        return AVERROR(ENOMEM);
    for (int i = 0; i < nb_slots; i++)
        b->slots[i].channel = i == slot ? b->channel : -1;
    vkcu_vkdev_expect(1, 0); /* one stream in this process */
    b->start = vkcu_now();
    return vkcu_batch_serve(b, slot);
}

/* Under the context's log target. A failure before any file ran leaves its
 * reason in r->error (logged by the caller). */
static int batch_run_files(vkcu_context *ctx, const vkcu_batch_settings *p, vkcu_batch_result *r, int channel,
                           int worker_slot, int nb_slots)
{
    batch_run b_ = { 0 }, *b = &b_;
    file_list all = { 0 };
    b->channel = channel;
    b->p = p;
    b->ctx = ctx;
    b->r = r;
    pthread_mutex_init(&b->lock, NULL);
    snprintf(b->shard_text, sizeof(b->shard_text), "%d/%d", p->shard_index, p->shard_count);
    skip_inode skip = { 0 }, report_inode = { 0 };
    char report_hit[PATH_MAX + 1] = "";
    int ret = check_folders(p, &skip, &report_inode, r->error, sizeof(r->error));
    if (ret >= 0)
        ret = list_files(b, &all, &skip, &report_inode, report_hit);
    if (ret >= 0 && p->dry_run) {
        dry_run(b);
        ret = b->worst_error;
    } else if (ret >= 0 && b->channel >= 0) {
        ret = serve(b, worker_slot, nb_slots);
    } else if (ret >= 0) {
        ret = run_workers(b);
    }
    if (b->report)
        ret = close_report(b, ret);
    free(b->slots);
    free(b->procs);
    free(b->files);
    vkcu_batch_list_free(&all);
    pthread_mutex_destroy(&b->lock);
    return ret;
}

int vkcu_batch_run(vkcu_context *ctx, const vkcu_batch_settings *s, vkcu_batch_result *result)
{
    if (!result)
        return AVERROR(EINVAL);
    memset(result, 0, sizeof(*result));
    if (!ctx)
        return vkcu_invalid(result->error, sizeof(result->error), "batch: no context given");
    const vkcu_log_target *prev = vkcu_log_target_swap(vkcu_context_log(ctx));
    int ret = s ? check_batch(s, result->error, sizeof(result->error))
                : vkcu_invalid(result->error, sizeof(result->error), "batch: no batch settings given");
    int channel = -1, slot = 0, nb_slots = 1;
    /* Started as a worker process of another process's batch (worker_command): serve it. */
    if (ret >= 0 && !s->dry_run && vkcu_batch_worker_env(&channel, &slot, &nb_slots))
        result->worker = 1;
    if (ret >= 0) {
        ret = batch_run_files(ctx, s, result, channel, slot, nb_slots);
        if (result->error[0])
            LOGE("%s", result->error);
    }
    vkcu_log_target_swap(prev);
    return ret;
}
