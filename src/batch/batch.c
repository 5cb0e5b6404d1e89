/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Batch runner behind vkcu_batch_run (include/vkcu/batch.h): folder
 * listing (sorted byte-wise so that every shard of a Slurm array sees the
 * same order), output mapping, N worker threads each running one job at a
 * time on the caller's context, the JSON-lines report, and the file and
 * progress callbacks. Memory per file is a few paths; everything heavy
 * lives in the jobs, of which at most `jobs` exist at once.
 *
 * Messages name settings and files, never a command-line option: a program
 * that wants its own words for a file's fate gets the reason codes through
 * the file callback (the CLI adds its option names there).
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <malloc.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <vkcu/batch.h>
#include "util/json.h"
#include "util/log.h"
#include "util/number.h"
#include "core/context.h"
#include "core/stage.h"
#include "util/xxhash64.h"
#include "gpu/device.h"

static const char *const status_names[] = { "done", "skipped", "failed", "interrupted", "planned" };

typedef struct batch_file {
    char *rel;               /* path relative to in_dir */
    char *out_rel;           /* output path relative to out_dir */
    const char *same_output; /* rel of an earlier file with the same output, or NULL */
} batch_file;

typedef struct file_list {
    batch_file *v;
    int n, cap;
} file_list;

typedef struct batch_run {
    const vkcu_batch_settings *p;
    vkcu_context *ctx;
    vkcu_batch_result *r;
    batch_file *files; /* this shard's files */
    int nb_files;
    FILE *report;
    char shard_text[32];
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int next;          /* next file to start */
    int running;
    int workers_left;
    int processed;     /* done + failed (for the ETA) */
    double start;
    int worst_error;   /* highest-priority error of a file, 0 when none failed */
} batch_run;

void vkcu_batch_default_settings(vkcu_batch_settings *s)
{
    memset(s, 0, sizeof(*s));
    vkcu_default_job(&s->job);
    s->extension = ".mkv";
    s->jobs = 1;
    s->shard_count = 1;
}

/* ---- listing ---- */

/* Message text (long paths are cut, not refused). */
static void text_cut(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void text_cut(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}


static int match_any(const char *const *globs, int n, const char *rel, const char *name)
{
    for (int i = 0; i < n; i++) {
        const char *g = globs[i];
        if (strchr(g, '/') ? fnmatch(g, rel, FNM_PATHNAME) == 0 : fnmatch(g, name, 0) == 0)
            return 1;
    }
    return 0;
}

static int list_add(file_list *l, const char *rel)
{
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 256;
        batch_file *v = realloc(l->v, (size_t)cap * sizeof(*v));
        if (!v)
            return AVERROR(ENOMEM);
        l->v = v;
        l->cap = cap;
    }
    memset(&l->v[l->n], 0, sizeof(l->v[l->n]));
    if (!(l->v[l->n].rel = strdup(rel)))
        return AVERROR(ENOMEM);
    l->n++;
    return 0;
}

typedef struct skip_inode {
    dev_t dev;
    ino_t ino;
    int set;
} skip_inode;

/* Walks dir (in_dir/rel). The output folder is not an input: `skip`
 * lists its inode. An existing report file that would be taken as an
 * input is not listed: its path goes to `report_hit` (the batch then
 * refuses to write the report over it). */
static int walk(const vkcu_batch_settings *p, const char *rel, const skip_inode *skip, int nb_skip,
                const skip_inode *report, char *report_hit, file_list *l, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s%s%s", p->in_dir, *rel ? "/" : "", rel);
    DIR *d = opendir(dir);
    if (!d) {
        text_cut(err, errlen, "%s: cannot read the folder: %s", dir, strerror(errno));
        return VKCU_ERR_INPUT;
    }
    int ret = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue; /* hidden, ".", "..", and vkcu's own temporary outputs */
        char sub[PATH_MAX], full[PATH_MAX + 1];
        if ((size_t)snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", e->d_name) >= sizeof(sub))
            continue;
        snprintf(full, sizeof(full), "%s/%s", p->in_dir, sub);
        struct stat st, lst;
        if (stat(full, &st) < 0 || lstat(full, &lst) < 0) {
            /* A dangling link is a file the user asked for: let the job report it. */
            if (!match_any(p->exclude, p->nb_exclude, sub, e->d_name) &&
                (!p->nb_include || match_any(p->include, p->nb_include, sub, e->d_name)) &&
                (ret = list_add(l, sub)) < 0)
                break;
            continue;
        }
        int skipped = 0;
        for (int i = 0; i < nb_skip; i++)
            if (skip[i].set && skip[i].dev == st.st_dev && skip[i].ino == st.st_ino)
                skipped = 1;
        if (skipped || match_any(p->exclude, p->nb_exclude, sub, e->d_name))
            continue;
        if (S_ISDIR(st.st_mode)) {
            /* Links to folders are not followed: they can loop. */
            if (p->recursive && !S_ISLNK(lst.st_mode) &&
                (ret = walk(p, sub, skip, nb_skip, report, report_hit, l, err, errlen)) < 0)
                break;
            continue;
        }
        if (p->nb_include && !match_any(p->include, p->nb_include, sub, e->d_name))
            continue;
        if (report->set && report->dev == st.st_dev && report->ino == st.st_ino) {
            snprintf(report_hit, PATH_MAX + 1, "%s", full);
            continue;
        }
        if ((ret = list_add(l, sub)) < 0)
            break;
    }
    closedir(d);
    return ret;
}

static int cmp_rel(const void *a, const void *b)
{
    return strcmp(((const batch_file *)a)->rel, ((const batch_file *)b)->rel);
}

static const file_list *sort_list; /* qsort has no context argument: set under sort_lock */
static pthread_mutex_t sort_lock = PTHREAD_MUTEX_INITIALIZER;

static int cmp_out(const void *a, const void *b)
{
    const batch_file *fa = &sort_list->v[*(const int *)a], *fb = &sort_list->v[*(const int *)b];
    int c = strcmp(fa->out_rel, fb->out_rel);
    return c ? c : (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* Output names, and which files would write the same output (a.mp4 and
 * a.mov both become a.mkv): the first in sorted order keeps it. Done on
 * the whole list so every shard decides the same way. */
static int map_outputs(file_list *l, const char *ext)
{
    for (int i = 0; i < l->n; i++) {
        const char *rel = l->v[i].rel;
        const char *slash = strrchr(rel, '/');
        const char *dot = strrchr(slash ? slash + 1 : rel, '.');
        size_t stem = dot && dot != (slash ? slash + 1 : rel) ? (size_t)(dot - rel) : strlen(rel);
        size_t size = stem + strlen(ext) + 1;
        if (!(l->v[i].out_rel = malloc(size)))
            return AVERROR(ENOMEM);
        snprintf(l->v[i].out_rel, size, "%.*s%s", (int)stem, rel, ext);
    }
    int *order = malloc((size_t)(l->n ? l->n : 1) * sizeof(int));
    if (!order)
        return AVERROR(ENOMEM);
    for (int i = 0; i < l->n; i++)
        order[i] = i;
    pthread_mutex_lock(&sort_lock);
    sort_list = l;
    qsort(order, (size_t)l->n, sizeof(int), cmp_out);
    sort_list = NULL;
    pthread_mutex_unlock(&sort_lock);
    for (int i = 1; i < l->n; i++)
        if (!strcmp(l->v[order[i]].out_rel, l->v[order[i - 1]].out_rel))
            l->v[order[i]].same_output = l->v[order[i - 1]].same_output ? l->v[order[i - 1]].same_output
                                                                      : l->v[order[i - 1]].rel;
    free(order);
    return 0;
}

static void list_free(file_list *l)
{
    for (int i = 0; i < l->n; i++) {
        free(l->v[i].rel);
        free(l->v[i].out_rel);
    }
    free(l->v);
    memset(l, 0, sizeof(*l));
}

/* ---- report ---- */

/* Report lines are written by jansson (src/util/json.h): file names as bytes,
 * stray bytes as \udcXX (docs/batch.md, "File names in the report"), so
 * that os.fsencode(json.loads(line)["file"]) is the name on disk. */
static void report_line(batch_run *b, json_t *j)
{
    if (vkcu_json_write_line(b->report, j, 0) < 0)
        LOGW("batch: cannot write a report line (out of memory or output error)");
    fflush(b->report);
}

static void report_file(batch_run *b, const batch_file *f, const char *in, const char *out, enum vkcu_batch_status st,
                        const vkcu_job_result *jr, int err, int device, const char *why, const char *reason)
{
    if (!b->report)
        return;
    json_t *j = json_object();
    if (!j)
        return;
    vkcu_json_set_bytes(j, "file", f->rel);
    vkcu_json_set_bytes(j, "input", in);
    vkcu_json_set_bytes(j, "output", out);
    json_object_set_new(j, "status", json_string(status_names[st]));
    json_object_set_new(j, "frames", json_integer(jr ? (json_int_t)jr->frames_out : 0));
    json_object_set_new(j, "corrupt_frames", json_integer(jr ? (json_int_t)jr->frames_corrupt : 0));
    vkcu_json_set_fixed(j, "seconds", jr ? jr->seconds : 0.0, 3);
    vkcu_json_set_fixed(j, "fps", jr ? jr->fps : 0.0, 2);
    vkcu_json_set_bytes(j, "path", jr && jr->path != VKCU_PATH_NONE ? vkcu_path_name(jr->path) : NULL);
    vkcu_json_set_bytes(j, "encoder", jr && jr->encoder[0] ? jr->encoder : NULL);
    json_object_set_new(j, "device", device >= 0 ? json_integer(device) : json_null());
    json_object_set_new(j, "exit_code", json_integer(err ? vkcu_exit_code(err) : 0));
    vkcu_json_set_bytes(j, "error", why);
    vkcu_json_set_bytes(j, "reason", reason);
    json_object_set_new(j, "shard", json_string(b->shard_text));
    report_line(b, j);
}

static void report_summary(batch_run *b, int ret)
{
    const vkcu_batch_result *r = b->r;
    if (!b->report)
        return;
    json_t *j = json_object();
    if (!j)
        return;
    json_object_set_new(j, "summary", json_true());
    vkcu_json_set_bytes(j, "in_dir", b->p->in_dir);
    vkcu_json_set_bytes(j, "out_dir", b->p->out_dir);
    vkcu_json_set_bytes(j, "pipeline", b->p->pipeline);
    json_object_set_new(j, "shard", json_string(b->shard_text));
    json_object_set_new(j, "files", json_integer(r->total));
    json_object_set_new(j, "done", json_integer(r->done));
    json_object_set_new(j, "skipped", json_integer(r->skipped));
    json_object_set_new(j, "failed", json_integer(r->failed));
    json_object_set_new(j, "interrupted", json_integer(r->interrupted));
    json_object_set_new(j, "not_started", json_integer(r->not_started));
    json_object_set_new(j, "frames", json_integer((json_int_t)r->frames));
    vkcu_json_set_fixed(j, "seconds", r->seconds, 3);
    vkcu_json_set_fixed(j, "fps", r->seconds > 0 ? r->frames / r->seconds : 0.0, 2);
    json_object_set_new(j, "exit_code", json_integer(vkcu_exit_code(ret)));
    report_line(b, j);
}

/* ---- progress ---- */

/* Under b->lock. */
static void progress_report(batch_run *b, int final)
{
    const vkcu_batch_result *r = b->r;
    vkcu_batch_progress info;
    memset(&info, 0, sizeof(info));
    double el = vkcu_now() - b->start;
    info.total = r->total;
    info.finished = r->done + r->skipped + r->failed + r->interrupted;
    info.running = b->running;
    info.failed = r->failed;
    info.frames = r->frames;
    info.elapsed = el;
    info.fps = el > 0 ? r->frames / el : 0.0;
    /* Files finish at the rate seen so far (all streams together). */
    info.eta = final ? 0.0 : b->processed > 0 && el > 0 ? el / b->processed * (info.total - info.finished) : -1.0;
    info.final = final;
    b->p->progress_callback(b->p->progress_opaque, &info);
}

/* ---- one file ---- */

/* Which failure decides the exit code: problems of the whole run first,
 * then a bad file. Lower is more important. */
static int error_rank(int err)
{
    static const int order[] = { VKCU_ERR_INTERRUPT, VKCU_ERR_DEVICE, VKCU_ERR_OUTPUT, VKCU_ERR_USAGE, VKCU_ERR_INPUT };
    for (int i = 0; i < (int)(sizeof(order) / sizeof(order[0])); i++)
        if (order[i] == err)
            return i;
    return 5;
}

static int mkdirs_for(const char *path, char *err, size_t errlen)
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
static void job_error(vkcu_job_result *jr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void job_error(vkcu_job_result *jr, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(jr->error, sizeof(jr->error), fmt, ap);
    va_end(ap);
}

/* Hash outputs: the job writes to a FILE the batch owns, so the batch
 * does the temporary name and the rename itself. */
static int run_hash_job(vkcu_job_params *jp, const char *out, vkcu_job_result *jr)
{
    char tmp[PATH_MAX + 64];
    const char *inputs[] = { jp->input, NULL };
    int ret = vkcu_outfile_begin(out, jp->overwrite, inputs, tmp, sizeof(tmp), jr->error, sizeof(jr->error));
    if (ret < 0)
        return ret;
    FILE *f = fopen(tmp, "w");
    if (!f) {
        job_error(jr, "%s: cannot create: %s", out, strerror(errno));
        vkcu_outfile_abort(tmp);
        return VKCU_ERR_OUTPUT;
    }
    jp->hash_out = f;
    ret = vkcu_job_run(jp, jr);
    if (fclose(f) != 0 && ret >= 0) {
        job_error(jr, "%s: write error (disk full?)", out);
        ret = VKCU_ERR_OUTPUT;
    }
    if (ret >= 0)
        ret = vkcu_outfile_commit(tmp, out, jr->error, sizeof(jr->error));
    else
        vkcu_outfile_abort(tmp);
    return ret;
}

/* ---- what an output was made with ---- */

/* Everything that decides an output's bytes, one "key=value" a line: the
 * input (size and modification time), the chain, the encoder and its
 * options, the trim, the hash settings. Not the backend or device: the
 * GPU and CPU paths are meant to give the same frames, and a resumed run
 * on other hardware should not redo finished work. */
static void settings_text(const vkcu_job_params *p, const char *in, char *buf, size_t len)
{
    struct stat st;
    long long size = -1, mtime = -1;
    if (stat(in, &st) == 0) {
        size = (long long)st.st_size;
        mtime = (long long)st.st_mtime;
    }
    snprintf(buf, len,
             "input-size=%lld\ninput-mtime=%lld\nsink=%s\nchain=%s\nencoder=%s\ncrf=%d\nbitrate=%lld\npreset=%s\n"
             "gop=%d\nencoder-opt=%s\nstart=%.6f/%lld\nduration=%.6f/%lld\nframes=%d\nhash=%d/%d\n",
             size, mtime, p->sink == VKCU_SINK_HASH ? "hash" : "encode", p->chain ? p->chain : "",
             p->encoder && strcmp(p->encoder, "auto") ? p->encoder : "", p->crf, (long long)p->bitrate,
             p->preset ? p->preset : "", p->gop, p->encoder_opts ? p->encoder_opts : "", p->start_time,
             (long long)p->start_frame, p->duration, (long long)p->frame_count, p->max_frames,
             p->sink == VKCU_SINK_HASH ? (int)p->hash_algo : -1, p->sink == VKCU_SINK_HASH ? (int)p->hash_format : -1);
    /* Only when set, so that records made before the key existed still match. */
    size_t used = strlen(buf);
    if (p->gpu_encoder && *p->gpu_encoder && used < len)
        snprintf(buf + used, len - used, "gpu-encoder=%s\n", p->gpu_encoder);
}

/* The record beside an output: ".vkcu-HASH.settings" (short, whatever the
 * output's name), holding the output's name, size and time, then the
 * settings. */
static void record_name(const char *out, char *name, size_t len)
{
    const char *slash = strrchr(out, '/');
    const char *base = slash ? slash + 1 : out;
    vkcu_xxh64_state h;
    vkcu_xxh64_init(&h, 0);
    vkcu_xxh64_update(&h, (const uint8_t *)base, strlen(base));
    snprintf(name, len, "%.*s.vkcu-%016llx.settings", slash ? (int)(slash - out + 1) : 0, out,
             (unsigned long long)vkcu_xxh64_digest(&h));
}

static void record_head(const char *out, char *buf, size_t len)
{
    struct stat st;
    const char *slash = strrchr(out, '/');
    if (stat(out, &st) < 0)
        memset(&st, 0, sizeof(st));
    snprintf(buf, len, "vkcu settings 1\noutput=%s\noutput-size=%lld\noutput-mtime=%lld\n", slash ? slash + 1 : out,
             (long long)st.st_size, (long long)st.st_mtime);
}

static int write_record(const char *out, const char *settings, char *err, size_t errlen)
{
    char name[PATH_MAX + 64], tmp[PATH_MAX + 64], head[PATH_MAX + 128];
    record_name(out, name, sizeof(name));
    record_head(out, head, sizeof(head));
    int ret = vkcu_outfile_begin(name, 1, NULL, tmp, sizeof(tmp), err, errlen);
    if (ret < 0)
        return ret;
    FILE *f = fopen(tmp, "w");
    int ok = f && fputs(head, f) >= 0 && fputs(settings, f) >= 0;
    if (f && fclose(f) != 0)
        ok = 0;
    if (!ok) {
        text_cut(err, errlen, "%s: cannot write %s: %s", out, name, strerror(errno));
        vkcu_outfile_abort(tmp);
        return VKCU_ERR_OUTPUT;
    }
    return vkcu_outfile_commit(tmp, name, err, errlen);
}

/* 1 when `out` was made with `settings` (and is unchanged since), else 0
 * with what differs in `why`. */
static int record_matches(const char *out, const char *settings, char *why, size_t whylen)
{
    char name[PATH_MAX + 64], head[PATH_MAX + 128], text[8192];
    record_name(out, name, sizeof(name));
    FILE *f = fopen(name, "r");
    if (!f) {
        snprintf(why, whylen, "no record of the settings it was made with (an older vkcu, or not by vkcu batch)");
        return 0;
    }
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = 0;
    record_head(out, head, sizeof(head));
    size_t hl = strlen(head);
    if (strncmp(text, head, hl)) {
        text_cut(why, whylen, "it changed after vkcu made it, or its record %s belongs to another file", name);
        return 0;
    }
    if (!strcmp(text + hl, settings))
        return 1;
    /* Name the first setting that differs. */
    const char *a = text + hl, *b = settings;
    while (*a && *b) {
        const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
        if (!ea || !eb)
            break;
        if (ea - a != eb - b || strncmp(a, b, (size_t)(ea - a))) {
            const char *eq = memchr(b, '=', (size_t)(eb - b));
            int kl = eq ? (int)(eq - b) : (int)(eb - b);
            const char *wa = memchr(a, '=', (size_t)(ea - a));
            snprintf(why, whylen, "it was made with other settings (%.*s was '%.*s', now '%.*s')", kl, b,
                     wa ? (int)(ea - wa - 1) : 0, wa ? wa + 1 : "", eq ? (int)(eb - eq - 1) : 0, eq ? eq + 1 : "");
            return 0;
        }
        a = ea + 1;
        b = eb + 1;
    }
    snprintf(why, whylen, "it was made with other settings");
    return 0;
}

/* Under b->lock, so that the batch's messages and its callbacks never overlap. */
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
static void file_outcome(batch_run *b, const vkcu_batch_file *bf)
{
    const vkcu_batch_settings *p = b->p;
    int reported = p->file_callback ? p->file_callback(p->file_opaque, bf) : 0;
    if (!p->dry_run && !reported && (bf->status == VKCU_BATCH_FAILED || bf->status == VKCU_BATCH_INTERRUPTED))
        log_line(VKCU_LOG_ERROR, "%s", bf->message);
}

static void process_file(batch_run *b, int k, int slot)
{
    const vkcu_batch_settings *p = b->p;
    const batch_file *f = &b->files[k];
    char in[PATH_MAX + 1], out[PATH_MAX + 1];
    snprintf(in, sizeof(in), "%s/%s", p->in_dir, f->rel);
    snprintf(out, sizeof(out), "%s/%s", p->out_dir, f->out_rel);
    vkcu_job_params jp;
    vkcu_context_describe(b->ctx, &p->job, &jp);
    int device = p->nb_devices ? p->devices[slot % p->nb_devices] : jp.device;
    vkcu_job_result jr;
    memset(&jr, 0, sizeof(jr));
    enum vkcu_batch_status st;
    enum vkcu_batch_reason reason = VKCU_BATCH_REASON_JOB;
    const char *detail = "";
    int ret = 0, claim = -1, ran = 0;
    long holder = 0;
    struct stat sb;
    char settings[8192], why[1024] = "", note[1200] = "";
    jp.input = in;
    jp.output = out;
    jp.device = device;
    jp.overwrite = p->overwrite;
    jp.hash_out_name = out;
    settings_text(&jp, in, settings, sizeof(settings));

    if (f->same_output) {
        job_error(&jr, "%s: its output %s is also the output of %s (rename one of them, or leave one out "
                  "with an exclude pattern)", in, out, f->same_output);
        reason = VKCU_BATCH_REASON_SAME_OUTPUT;
        detail = f->same_output;
        ret = VKCU_ERR_USAGE;
    } else if ((ret = mkdirs_for(out, jr.error, sizeof(jr.error))) < 0) {
        /* reported below */
    } else if ((ret = (vkcu_outfile_clean_beside(out),
                       vkcu_outfile_claim(out, &claim, &holder, jr.error, sizeof(jr.error)))) == 0) {
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
    } else if (stat(out, &sb) == 0 && p->resume && record_matches(out, settings, why, sizeof(why))) {
        snprintf(note, sizeof(note), "done earlier with the same settings");
        reason = VKCU_BATCH_REASON_UP_TO_DATE;
        st = VKCU_BATCH_SKIPPED;
        goto record;
    } else if (stat(out, &sb) == 0 && p->resume && !p->overwrite) {
        job_error(&jr, "%s: exists, but %s; it is redone only when overwriting is allowed", out, why);
        reason = VKCU_BATCH_REASON_EXISTS_CHANGED;
        detail = why;
        ret = VKCU_ERR_OUTPUT;
    } else if (stat(out, &sb) == 0 && !p->overwrite) {
        job_error(&jr, "%s: already exists (resuming skips finished files; overwriting replaces them)", out);
        reason = VKCU_BATCH_REASON_EXISTS;
        ret = VKCU_ERR_OUTPUT;
    } else {
        if (why[0])
            log_line(VKCU_LOG_INFO, "batch: %s: redone: %s", out, why);
        ran = 1;
        ret = jp.sink == VKCU_SINK_HASH ? run_hash_job(&jp, out, &jr) : vkcu_job_run(&jp, &jr);
        if (ret < 0 && !jr.error[0]) {
            char buf[128];
            job_error(&jr, "%s: %s", in, vkcu_err_str(ret, buf, sizeof(buf)));
        }
        if (ret >= 0)
            ret = write_record(out, settings, jr.error, sizeof(jr.error));
    }
    st = ret >= 0 ? VKCU_BATCH_DONE : ret == VKCU_ERR_INTERRUPT ? VKCU_BATCH_INTERRUPTED : VKCU_BATCH_FAILED;
    if (st == VKCU_BATCH_DONE)
        reason = VKCU_BATCH_REASON_NONE;
record:
    vkcu_outfile_release(out, claim);
    pthread_mutex_lock(&b->lock);
    vkcu_batch_result *r = b->r;
    int busy = reason == VKCU_BATCH_REASON_BUSY;
    int on_gpu = jr.path != VKCU_PATH_NONE && jr.path != VKCU_PATH_CPU;
    if (st == VKCU_BATCH_DONE) {
        r->done++;
        r->frames += jr.frames_out;
        b->processed++;
        log_line(VKCU_LOG_VERBOSE, "batch: %s -> %s: %lld frames, %.1f fps, path %s", f->rel, out,
                 (long long)jr.frames_out, jr.fps, vkcu_path_name(jr.path));
    } else if (st == VKCU_BATCH_SKIPPED) {
        r->skipped++;
        detail = note;
        log_line(busy ? VKCU_LOG_INFO : VKCU_LOG_VERBOSE, "batch: %s: skipped: %s", f->rel, note);
    } else {
        if (st == VKCU_BATCH_INTERRUPTED)
            r->interrupted++;
        else
            r->failed++;
        b->processed++;
    }
    vkcu_batch_file bf = { .index = k, .file = f->rel, .input = in, .output = out, .status = st,
                           .reason = reason, .detail = detail, .error = ret < 0 ? ret : 0,
                           .message = ret < 0 ? jr.error : "", .job = ran ? &jr : NULL,
                           .device = on_gpu ? device : -1 };
    file_outcome(b, &bf);
    if (ret < 0 && (!b->worst_error || error_rank(ret) < error_rank(b->worst_error)))
        b->worst_error = ret;
    report_file(b, f, in, st == VKCU_BATCH_DONE || (st == VKCU_BATCH_SKIPPED && !busy) ? out : NULL, st,
                st == VKCU_BATCH_SKIPPED ? NULL : &jr, ret < 0 ? ret : 0, on_gpu ? device : -1,
                ret < 0 ? jr.error : NULL, st == VKCU_BATCH_SKIPPED ? note : NULL);
    pthread_mutex_unlock(&b->lock);
}

static void *worker_main(void *arg)
{
    batch_run *b = ((void **)arg)[0];
    int slot = (int)(intptr_t)((void **)arg)[1];
    for (;;) {
        pthread_mutex_lock(&b->lock);
        if (vkcu_stop_requested() || b->next >= b->nb_files) {
            if (--b->workers_left == 0)
                pthread_cond_broadcast(&b->changed);
            pthread_mutex_unlock(&b->lock);
            return NULL;
        }
        int k = b->next++;
        b->running++;
        pthread_mutex_unlock(&b->lock);
        process_file(b, k, slot);
        /* A job frees its decoder and buffers at the end; hand the freed
         * pages back so that host RSS stays flat over thousands of files
         * instead of creeping with per-thread heap fragmentation. */
        malloc_trim(0);
        pthread_mutex_lock(&b->lock);
        b->running--;
        pthread_cond_broadcast(&b->changed);
        pthread_mutex_unlock(&b->lock);
    }
}

/* ---- the batch ---- */

/* Each file's fate without touching anything, in the order of the list. */
static void dry_run(batch_run *b)
{
    const vkcu_batch_settings *p = b->p;
    vkcu_batch_result *r = b->r;
    vkcu_job_params job;
    vkcu_context_describe(b->ctx, &p->job, &job);
    job.overwrite = p->overwrite;
    for (int k = 0; k < b->nb_files; k++) {
        const batch_file *f = &b->files[k];
        char out[PATH_MAX + 1], in[PATH_MAX + 1], settings[8192], differs[1024] = "";
        vkcu_job_result jr; /* only its error line */
        struct stat sb;
        snprintf(out, sizeof(out), "%s/%s", p->out_dir, f->out_rel);
        snprintf(in, sizeof(in), "%s/%s", p->in_dir, f->rel);
        jr.error[0] = 0;
        job.input = in;
        job.output = out;
        vkcu_batch_file bf = { .index = k, .file = f->rel, .input = in, .output = out, .status = VKCU_BATCH_PLANNED,
                               .reason = VKCU_BATCH_REASON_NONE, .detail = "", .message = jr.error, .device = -1 };
        int exists = stat(out, &sb) == 0;
        if (f->same_output) {
            bf.status = VKCU_BATCH_FAILED;
            bf.reason = VKCU_BATCH_REASON_SAME_OUTPUT;
            bf.detail = f->same_output;
            bf.error = VKCU_ERR_USAGE;
            job_error(&jr, "%s: its output %s is also the output of %s", in, out, f->same_output);
        } else if (exists && p->resume &&
                   (settings_text(&job, in, settings, sizeof(settings)),
                    record_matches(out, settings, differs, sizeof(differs)))) {
            bf.status = VKCU_BATCH_SKIPPED;
            bf.reason = VKCU_BATCH_REASON_UP_TO_DATE;
            bf.detail = "done earlier with the same settings";
        } else if (exists && p->resume && !p->overwrite) {
            bf.status = VKCU_BATCH_FAILED;
            bf.reason = VKCU_BATCH_REASON_EXISTS_CHANGED;
            bf.detail = differs;
            bf.error = VKCU_ERR_OUTPUT;
            job_error(&jr, "%s: exists, but %s", out, differs);
        } else if (exists && !p->overwrite) {
            bf.status = VKCU_BATCH_FAILED;
            bf.reason = VKCU_BATCH_REASON_EXISTS;
            bf.error = VKCU_ERR_OUTPUT;
            job_error(&jr, "%s: already exists", out);
        }
        r->planned += bf.status == VKCU_BATCH_PLANNED;
        r->skipped += bf.status == VKCU_BATCH_SKIPPED;
        r->failed += bf.status == VKCU_BATCH_FAILED;
        pthread_mutex_lock(&b->lock);
        file_outcome(b, &bf);
        pthread_mutex_unlock(&b->lock);
    }
}

/* Refuses an integer setting outside [lo, hi], naming it. */
#define RANGE(what, value, lo, hi)                                                                   \
    do {                                                                                             \
        if ((long long)(value) < (long long)(lo) || (long long)(value) > (long long)(hi))            \
            return vkcu_invalid(err, errlen, "batch: %s %lld is out of range [%lld, %lld]", what,    \
                                (long long)(value), (long long)(lo), (long long)(hi));               \
    } while (0)

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
    RANGE("shard count", p->shard_count, 1, VKCU_BATCH_MAX_SHARDS);
    RANGE("shard index", p->shard_index, 0, p->shard_count - 1);
    int ret = check_globs("include pattern count", p->include, p->nb_include, err, errlen);
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
    job.input = p->in_dir;
    job.output = p->out_dir;
    job.hash_out = stdout;
    job.overwrite = p->overwrite;
    return vkcu_check_job(&job, err, errlen);
}

/* Under the context's log target. A failure before any file ran leaves its
 * reason in r->error (logged by the caller). */
static int batch_run_files(vkcu_context *ctx, const vkcu_batch_settings *p, vkcu_batch_result *r)
{
    batch_run b_ = { 0 }, *b = &b_;
    file_list all = { 0 };
    pthread_t *threads = NULL;
    void **args = NULL;
    int ret = 0, started = 0;
    char *err = r->error;
    size_t errlen = sizeof(r->error);
    struct stat st;
    b->p = p;
    b->ctx = ctx;
    b->r = r;
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->changed, NULL);
    int count = p->shard_count;
    snprintf(b->shard_text, sizeof(b->shard_text), "%d/%d", p->shard_index, count);

    if (stat(p->in_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
        text_cut(err, errlen, "%s: %s (the batch's input folder)", p->in_dir,
                 stat(p->in_dir, &st) < 0 ? "no such folder" : "not a folder");
        ret = VKCU_ERR_INPUT;
        goto fail;
    }
    skip_inode skip[1] = { { 0 } }, report_inode = { 0 };
    char report_hit[PATH_MAX + 1] = "";
    char in_real[PATH_MAX], out_real[PATH_MAX];
    if (stat(p->out_dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            text_cut(err, errlen, "%s: exists and is not a folder (the batch's output folder)", p->out_dir);
            ret = VKCU_ERR_OUTPUT;
            goto fail;
        }
        if (realpath(p->in_dir, in_real) && realpath(p->out_dir, out_real) && !strcmp(in_real, out_real)) {
            text_cut(err, errlen, "%s: the output folder is the input folder (outputs would replace or be taken "
                     "for inputs): choose another one", p->out_dir);
            ret = VKCU_ERR_USAGE;
            goto fail;
        }
        skip[0] = (skip_inode){ st.st_dev, st.st_ino, 1 };
    } else if (!p->dry_run) {
        char probe[PATH_MAX + 2];
        snprintf(probe, sizeof(probe), "%s/", p->out_dir);
        if ((ret = mkdirs_for(probe, err, errlen)) < 0)
            goto fail;
        if (stat(p->out_dir, &st) == 0)
            skip[0] = (skip_inode){ st.st_dev, st.st_ino, 1 };
    }
    if (p->report_path && stat(p->report_path, &st) == 0)
        report_inode = (skip_inode){ st.st_dev, st.st_ino, 1 };

    if ((ret = walk(p, "", skip, 1, &report_inode, report_hit, &all, err, errlen)) < 0)
        goto fail;
    if (p->report_path && !p->dry_run) {
        char why[1024];
        const char *inputs[] = { report_hit[0] ? report_hit : NULL, NULL };
        b->report = vkcu_outfile_create(p->report_path, p->overwrite, inputs, why, sizeof(why));
        if (!b->report) {
            text_cut(err, errlen, "cannot write the report: %s", why);
            ret = VKCU_ERR_OUTPUT;
            goto fail;
        }
    }
    if (all.n == 0) {
        text_cut(err, errlen, "%s: no input files (hidden files are skipped%s%s)", p->in_dir,
                 p->recursive ? "" : "; subfolders are taken only by a recursive batch",
                 p->nb_include || p->nb_exclude ? "; check the include and exclude patterns" : "");
        ret = VKCU_ERR_INPUT;
        goto fail;
    }
    qsort(all.v, (size_t)all.n, sizeof(all.v[0]), cmp_rel);
    if ((ret = map_outputs(&all, p->extension)) < 0)
        goto fail;
    /* This shard's files: every count-th of the sorted list. */
    b->files = malloc((size_t)all.n * sizeof(*b->files));
    if (!b->files) {
        ret = AVERROR(ENOMEM);
        goto fail;
    }
    for (int k = 0; k < all.n; k++)
        if (k % count == p->shard_index)
            b->files[b->nb_files++] = all.v[k];
    r->total = b->nb_files;

    if (p->dry_run) {
        dry_run(b);
        ret = 0;
        goto fail;
    }

    int jobs = p->jobs < b->nb_files ? p->jobs : (b->nb_files ? b->nb_files : 1);
    /* One decode queue per concurrent stream on each GPU's shared device. */
    vkcu_vkdev_expect((unsigned)jobs, 0);
    threads = calloc((size_t)jobs, sizeof(*threads));
    args = calloc((size_t)jobs * 2, sizeof(*args));
    if (!threads || !args) {
        ret = AVERROR(ENOMEM);
        goto fail;
    }
    b->start = vkcu_now();
    b->workers_left = jobs;
    for (int w = 0; w < jobs; w++) {
        args[2 * w] = b;
        args[2 * w + 1] = (void *)(intptr_t)w;
        /* The workers' messages (theirs and their jobs') go to the context's log callback. */
        if (vkcu_thread_create(&threads[w], worker_main, &args[2 * w]) != 0) {
            pthread_mutex_lock(&b->lock);
            b->workers_left -= jobs - w;
            pthread_mutex_unlock(&b->lock);
            if (w == 0) {
                text_cut(err, errlen, "batch: cannot start worker threads");
                ret = AVERROR(EAGAIN);
                goto fail;
            }
            break;
        }
        started++;
    }
    pthread_mutex_lock(&b->lock);
    while (b->workers_left > 0) {
        if (p->progress_callback)
            progress_report(b, 0);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 250 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&b->changed, &b->lock, &ts);
    }
    pthread_mutex_unlock(&b->lock);
    for (int w = 0; w < started; w++)
        pthread_join(threads[w], NULL);
    r->seconds = vkcu_now() - b->start;
    r->not_started = r->total - r->done - r->skipped - r->failed - r->interrupted;
    if (r->not_started > 0 && !b->worst_error)
        b->worst_error = VKCU_ERR_INTERRUPT;
    if (p->progress_callback) {
        pthread_mutex_lock(&b->lock);
        progress_report(b, 1);
        pthread_mutex_unlock(&b->lock);
    }
    ret = b->worst_error;
    report_summary(b, ret);
fail:
    if (b->report) {
        /* A report that could not be written whole is removed rather than
         * left cut mid-line (if it is still the file this run created). */
        struct stat mine, now;
        int have = fstat(fileno(b->report), &mine) == 0 && S_ISREG(mine.st_mode);
        int bad = fflush(b->report) != 0 || ferror(b->report) || (have && fsync(fileno(b->report)) < 0);
        bad |= fclose(b->report) != 0;
        if (bad) {
            if (have && stat(p->report_path, &now) == 0 && now.st_dev == mine.st_dev && now.st_ino == mine.st_ino)
                unlink(p->report_path);
            char line[512];
            snprintf(line, sizeof(line), "%s: cannot write the report (disk full?); the incomplete report was removed",
                     p->report_path);
            if (ret >= 0) {
                text_cut(err, errlen, "%s", line);
                ret = VKCU_ERR_OUTPUT;
            } else {
                vkcu_log(VKCU_LOG_ERROR, "%s", line);
            }
        }
    }
    free(threads);
    free(args);
    free(b->files);
    list_free(&all);
    pthread_cond_destroy(&b->changed);
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
    if (ret >= 0) {
        ret = batch_run_files(ctx, s, result);
        if (result->error[0])
            LOGE("%s", result->error);
    }
    vkcu_log_target_swap(prev);
    return ret;
}
