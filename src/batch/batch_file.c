/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One file of a batch: its output folder made, its resume record checked,
 * its job run on a worker of util/jobs.h, its outcome logged, reported and
 * given to the file callback (batch_priv.h).
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/log.h"
#include "core/context.h"
#include "core/outfile.h"
#include "batch_priv.h"

/* Which failure decides the exit code: problems of the whole run first,
 * then a bad file. Lower is more important. */
int vkcu_batch_error_rank(int err)
{
    static const int order[] = { VKCU_ERR_INTERRUPT, VKCU_ERR_DEVICE, VKCU_ERR_OUTPUT, VKCU_ERR_USAGE, VKCU_ERR_INPUT };
    for (int i = 0; i < (int)(sizeof(order) / sizeof(order[0])); i++)
        if (order[i] == err)
            return i;
    return 5;
}

int vkcu_batch_mkdirs_for(const char *path, char *err, size_t errlen)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *s = buf + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        if (mkdir(buf, 0777) < 0 && errno != EEXIST) {
            text_cut(err, errlen, "%s: cannot create the output folder %s: %s", path, buf, strerror(errno));
            return VKCU_ERR_OUTPUT;
        }
        *s = '/';
    }
    return 0;
}

/* Error text of a file (long paths are cut, not refused). */
void vkcu_batch_job_error(vkcu_job_result *jr, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(jr->error, sizeof(jr->error), fmt, ap);
    va_end(ap);
}

static void log_line(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void log_line(int level, const char *fmt, ...)
{
    if (level > vkcu_log_level())
        return;
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    vkcu_log(level, "%s", msg);
}

/* The file callback, and the library's own line for a failure that the
 * callback did not report. Under b->lock. */
void vkcu_batch_file_outcome(batch_run *b, const vkcu_batch_file *bf)
{
    const vkcu_batch_settings *p = b->p;
    int reported = p->file_callback ? p->file_callback(p->file_opaque, bf) : 0;
    if (!p->dry_run && !reported && (bf->status == VKCU_BATCH_FAILED || bf->status == VKCU_BATCH_INTERRUPTED))
        log_line(VKCU_LOG_ERROR, "%s", bf->message);
}

/* A job's progress report, on its thread: the slot's counts for the
 * batch's own reports. */
static void slot_progress_report(void *opaque, const vkcu_progress_info *info)
{
    slot_progress *sp = opaque;
    atomic_store(&sp->frames, info->frames);
    atomic_store(&sp->expected, info->expected);
    if (sp->forward)
        sp->forward(sp->channel, info->frames, info->expected);
    if (sp->user_cb)
        sp->user_cb(sp->user_opaque, info);
}

/* "not media", or "not media: srt, no video stream", "not media: png_pipe, a still image". */
void vkcu_batch_not_media_note(const batch_file *f, char *buf, size_t size)
{
    size_t len = f->probed ? strlen(f->probed) : 0;
    if (len > 5 && !strcmp(f->probed + len - 5, "_pipe"))
        snprintf(buf, size, "not media: %s, a still image", f->probed);
    else if (f->probed)
        snprintf(buf, size, "not media: %s, no video stream", f->probed);
    else
        snprintf(buf, size, "not media");
}

/* The batch's job for input `in` and output `out` on worker slot `slot`:
 * the slot's device, and the job's progress feeding the batch's. */
static void file_job(batch_run *b, int slot, const char *in, const char *out, vkcu_job_params *jp)
{
    const vkcu_batch_settings *p = b->p;
    vkcu_context_describe(b->ctx, &p->job, jp);
    int device = p->nb_devices ? p->devices[slot % p->nb_devices] : jp->settings.device;
    jp->job.input = in;
    jp->job.output = out;
    jp->settings.device = device;
    int nd = p->nb_devices ? p->nb_devices : 1;
    jp->gpu_share = (b->nb_slots + nd - 1) / nd;
    jp->job.overwrite = p->overwrite;
    jp->job.hash_out_name = out;
    /* The job's progress feeds the batch's (and still the context's callback, if any). */
    slot_progress *sp = &b->slots[slot];
    sp->user_cb = jp->progress ? jp->settings.progress_callback : NULL;
    sp->user_opaque = jp->settings.progress_opaque;
    jp->progress = 1;
    jp->settings.progress_callback = slot_progress_report;
    jp->settings.progress_opaque = sp;
}

/* Runs the file's job; its record is written just before the output takes
 * its place, and removed when it did not. */
static int run_job(vkcu_job_params *jp, const char *in, const char *out, const char *settings, int test_kill,
                   vkcu_job_result *jr)
{
    publish_record pr = { settings, 0, test_kill };
    jp->before_publish = vkcu_batch_publish_hook;
    jp->publish_opaque = &pr;
    int ret = jp->job.sink == VKCU_SINK_HASH ? vkcu_job_run_to_hash_file(jp, out, jr) : vkcu_job_run(jp, jr);
    if (ret < 0 && !jr->error[0]) {
        char buf[128];
        vkcu_batch_job_error(jr, "%s: %s", in, vkcu_err_str(ret, buf, sizeof(buf)));
    }
    if (ret < 0 && pr.written) {
        /* the output did not take its place: the record describes nothing */
        char name[PATH_MAX + 64];
        vkcu_batch_record_name(out, name, sizeof(name));
        unlink(name);
    }
    return ret;
}

void vkcu_batch_file_paths(const batch_run *b, int k, char *in, char *out)
{
    snprintf(in, PATH_MAX + 1, "%s/%s", b->p->in_dir, b->files[k].rel);
    snprintf(out, PATH_MAX + 1, "%s/%s", b->p->out_dir, b->files[k].out_rel);
}

/* File k of the shard on worker slot `slot`: skipped, refused or run, into
 * *o. About 90 lines: the chain of reasons not to run a file, each with its
 * own status, reason and message, reads best as one if-else chain. */
void vkcu_batch_file_run(batch_run *b, int k, int slot, file_outcome *o)
{
    const vkcu_batch_settings *p = b->p;
    const batch_file *f = &b->files[k];
    char in[PATH_MAX + 1], out[PATH_MAX + 1];
    vkcu_batch_file_paths(b, k, in, out);
    vkcu_job_params jp;
    file_job(b, slot, in, out, &jp);
    memset(o, 0, sizeof(*o));
    o->device = jp.settings.device;
    vkcu_job_result *jr = &o->jr;
    enum vkcu_batch_status st;
    enum vkcu_batch_reason reason = VKCU_BATCH_REASON_JOB;
    const char *detail = "";
    int ret = 0, claim = -1;
    long holder = 0;
    struct stat sb;
    char settings[8192], why[1024] = "", note[1200] = "";
    vkcu_batch_settings_text(&jp, in, settings, sizeof(settings));

    if (f->not_media) {
        vkcu_batch_not_media_note(f, note, sizeof(note));
        reason = VKCU_BATCH_REASON_NOT_MEDIA;
        st = VKCU_BATCH_SKIPPED;
        goto record;
    } else if (f->same_output) {
        vkcu_batch_job_error(jr, "%s: its output %s is also the output of %s (rename one of them, or leave one out "
                             "with an exclude pattern)", in, out, f->same_output);
        reason = VKCU_BATCH_REASON_SAME_OUTPUT;
        detail = f->same_output;
        ret = VKCU_ERR_USAGE;
    } else if ((ret = vkcu_batch_mkdirs_for(out, jr->error, sizeof(jr->error))) < 0) {
        /* reported below */
    } else if ((ret = (vkcu_outfile_clean_beside(out),
                       vkcu_outfile_claim(out, &claim, &holder, jr->error, sizeof(jr->error)))) == 0) {
        /* Another vkcu (a second batch over this folder, a Slurm task) works on it. */
        if (holder > 0)
            snprintf(note, sizeof(note), "another vkcu process (pid %ld) is working on it", holder);
        else
            snprintf(note, sizeof(note), "another vkcu process is working on it");
        reason = VKCU_BATCH_REASON_BUSY;
        st = VKCU_BATCH_SKIPPED;
        goto record;
    } else if (ret < 0) {
        /* reported below */
    } else if (stat(out, &sb) == 0 && p->resume && vkcu_batch_record_matches(out, settings, why, sizeof(why))) {
        snprintf(note, sizeof(note), "done earlier with the same settings");
        reason = VKCU_BATCH_REASON_UP_TO_DATE;
        st = VKCU_BATCH_SKIPPED;
        goto record;
    } else if (stat(out, &sb) == 0 && p->resume && !p->overwrite) {
        vkcu_batch_job_error(jr, "%s: exists, but %s; it is redone only when overwriting is allowed", out, why);
        reason = VKCU_BATCH_REASON_EXISTS_CHANGED;
        detail = why;
        ret = VKCU_ERR_OUTPUT;
    } else if (stat(out, &sb) == 0 && !p->overwrite) {
        vkcu_batch_job_error(jr, "%s: already exists (resuming skips finished files; overwriting replaces them)", out);
        reason = VKCU_BATCH_REASON_EXISTS;
        ret = VKCU_ERR_OUTPUT;
    } else {
        if (why[0])
            log_line(VKCU_LOG_INFO, "batch: %s: redone: %s", out, why);
        o->ran = 1;
        ret = run_job(&jp, in, out, settings, b->test_kill && !strcmp(b->test_kill, f->rel), jr);
    }
    st = ret >= 0 ? VKCU_BATCH_DONE : ret == VKCU_ERR_INTERRUPT ? VKCU_BATCH_INTERRUPTED : VKCU_BATCH_FAILED;
    if (st == VKCU_BATCH_DONE)
        reason = VKCU_BATCH_REASON_NONE;
record:
    vkcu_outfile_release(out, claim);
    o->status = st;
    o->reason = reason;
    o->ret = ret < 0 ? ret : 0;
    snprintf(o->detail, sizeof(o->detail), "%s", st == VKCU_BATCH_SKIPPED ? note : detail);
}

/* File k's outcome counted, logged, reported and given to the file
 * callback under b->lock. */
void vkcu_batch_file_record(batch_run *b, int k, int slot, const file_outcome *o)
{
    const batch_file *f = &b->files[k];
    char in[PATH_MAX + 1], out[PATH_MAX + 1];
    vkcu_batch_file_paths(b, k, in, out);
    enum vkcu_batch_status st = o->status;
    const vkcu_job_result *jr = &o->jr;
    int ret = o->ret;
    pthread_mutex_lock(&b->lock);
    vkcu_batch_result *r = b->r;
    int busy = o->reason == VKCU_BATCH_REASON_BUSY;
    int on_gpu = jr->path != VKCU_PATH_NONE && jr->path != VKCU_PATH_CPU;
    atomic_store(&b->slots[slot].frames, 0); /* counted below when written, else gone */
    atomic_store(&b->slots[slot].expected, 0);
    if (st == VKCU_BATCH_DONE) {
        r->done++;
        r->frames += jr->frames_out;
        b->processed++;
        log_line(VKCU_LOG_VERBOSE, "batch: %s -> %s: %lld frames, %.1f fps, path %s", f->rel, out,
                 (long long)jr->frames_out, jr->fps, vkcu_path_name(jr->path));
    } else if (st == VKCU_BATCH_SKIPPED) {
        r->skipped++;
        if (o->reason == VKCU_BATCH_REASON_NOT_MEDIA)
            log_line(VKCU_LOG_INFO, "batch: %s: skipped (%s)", f->rel, o->detail);
        else
            log_line(busy ? VKCU_LOG_INFO : VKCU_LOG_VERBOSE, "batch: %s: skipped: %s", f->rel, o->detail);
    } else {
        if (st == VKCU_BATCH_INTERRUPTED)
            r->interrupted++;
        else
            r->failed++;
        b->processed++;
    }
    vkcu_batch_file bf = { .index = k, .file = f->rel, .input = in, .output = out, .status = st,
                           .reason = (enum vkcu_batch_reason)o->reason, .detail = o->detail, .error = ret,
                           .message = ret < 0 ? jr->error : "", .job = o->ran ? jr : NULL,
                           .device = on_gpu ? o->device : -1 };
    vkcu_batch_file_outcome(b, &bf);
    if (ret < 0 && (!b->worst_error || vkcu_batch_error_rank(ret) < vkcu_batch_error_rank(b->worst_error)))
        b->worst_error = ret;
    int named = st == VKCU_BATCH_DONE ||
                (st == VKCU_BATCH_SKIPPED && !busy && o->reason != VKCU_BATCH_REASON_NOT_MEDIA);
    vkcu_batch_report_file(b, f, in, named ? out : NULL, st, st == VKCU_BATCH_SKIPPED ? NULL : jr, ret,
                           on_gpu ? o->device : -1, ret < 0 ? jr->error : NULL,
                           st == VKCU_BATCH_SKIPPED ? o->detail : NULL);
    pthread_mutex_unlock(&b->lock);
}
