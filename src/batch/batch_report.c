/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The batch's report (JSON lines, one per file and a summary, written under
 * a temporary name and renamed when the batch ends) and its progress
 * callback; where the report may go (batch_priv.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libavutil/error.h>

#include "util/clock.h"
#include "util/json.h"
#include "util/log.h"
#include "core/outfile.h"
#include "batch_priv.h"

static const char *const status_names[] = { "done", "skipped", "failed", "interrupted", "planned" };

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

void vkcu_batch_report_file(batch_run *b, const batch_file *f, const char *in, const char *out,
                            enum vkcu_batch_status st, const vkcu_job_result *jr, int err, int device, const char *why,
                            const char *reason)
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
    /* what became of the decoded frames (docs/regression.md, real-world streams) */
    json_object_set_new(j, "concealed_frames", json_integer(jr ? (json_int_t)jr->frames_concealed : 0));
    json_object_set_new(j, "dropped_frames", json_integer(jr ? (json_int_t)jr->frames_dropped : 0));
    json_object_set_new(j, "duplicated_frames", json_integer(jr ? (json_int_t)jr->frames_duplicated : 0));
    json_object_set_new(j, "rescaled_frames", json_integer(jr ? (json_int_t)jr->frames_rescaled : 0));
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

void vkcu_batch_report_summary(batch_run *b, int ret)
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
    b->summary_written = 1;
}

/* ---- progress ---- */

/* Under b->lock. */
void vkcu_batch_progress_report(batch_run *b, int final)
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
    /* The running files' frames count as they go: a long file would
     * otherwise show no progress, and a falling rate, until it ends. */
    int64_t left = 0, expected = 0;
    int known = 0, unknown = 0;
    for (int i = 0; i < b->nb_slots; i++) {
        int64_t f = atomic_load(&b->slots[i].frames), e = atomic_load(&b->slots[i].expected);
        info.frames_running += f;
        if (e > 0) {
            left += e > f ? e - f : 0;
            expected += e;
            known++;
        } else if (f > 0) {
            unknown++;
        }
    }
    info.elapsed = el;
    info.fps = el > 0 ? (r->frames + info.frames_running) / el : 0.0;
    /* The frames still to come at the rate so far (all streams together):
     * the running files' remainders, and files to start as large as the
     * average of those done and running. */
    int waiting = info.total - info.finished - info.running;
    double per_file = r->done + known > 0 ? (double)(r->frames + expected) / (r->done + known) : -1;
    if (final)
        info.eta = 0.0;
    else if (per_file > 0 && info.fps > 0)
        info.eta = (left + (waiting + unknown) * per_file) / info.fps;
    else
        info.eta = b->processed > 0 && el > 0 ? el / b->processed * (info.total - info.finished) : -1.0;
    info.final = final;
    b->p->progress_callback(b->p->progress_opaque, &info);
}

/* Whether `path` is a report of vkcu batch: --resume rewrites its own
 * report without overwrite, never another file. */
static int is_batch_report(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[8192];
    int yes = 0;
    if (fgets(line, sizeof(line), f)) {
        json_t *j = json_loads(line, JSON_DECODE_ANY, NULL);
        yes = json_is_object(j) && json_is_string(json_object_get(j, "shard")) &&
              (json_object_get(j, "file") || json_object_get(j, "summary"));
        json_decref(j);
    }
    fclose(f);
    return yes;
}

/* The report's folder and name, resolved (the file need not exist). */
static int resolve_beside(const char *path, char *out, size_t len)
{
    char dir[PATH_MAX], real[PATH_MAX];
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    snprintf(dir, sizeof(dir), "%.*s", slash ? (slash == path ? 1 : (int)(slash - path)) : 1, slash ? path : ".");
    if (!realpath(dir, real))
        return -1;
    return (size_t)snprintf(out, len, "%s%s%s", real, strcmp(real, "/") ? "/" : "", base) < len ? 0 : -1;
}

/* rel (under root) when the resolved `path` lies below the folder `root`,
 * else NULL. Folders are compared by device and inode, not by name: a bind
 * mount of root (or a link the resolved path went through) is root. */
const char *vkcu_batch_below(const char *path, const char *root)
{
    struct stat rs, st;
    if (stat(root, &rs) < 0)
        return NULL;
    char prefix[PATH_MAX];
    size_t n = strlen(path);
    if (n >= sizeof(prefix))
        return NULL;
    memcpy(prefix, path, n + 1);
    /* Each folder above path, nearest first: "/a/b/c" tries /a/b, /a, then /. */
    for (char *slash = strrchr(prefix, '/'); slash; slash = strrchr(prefix, '/')) {
        size_t at = (size_t)(slash - prefix);
        *slash = 0;
        if (stat(at ? prefix : "/", &st) == 0 && st.st_dev == rs.st_dev && st.st_ino == rs.st_ino)
            return path + at + 1;
    }
    return NULL;
}

/* The report, under a temporary name until the batch ends. Refused: an
 * existing file without overwrite (with resume, an earlier report of vkcu
 * batch is rewritten), an input, and a new file inside the input folder
 * that the next run would take for an input. */
int vkcu_batch_report_open(batch_run *b, const char *report_hit, char *err, size_t errlen)
{
    const vkcu_batch_settings *p = b->p;
    char why[1024], where[PATH_MAX];
    struct stat st;
    /* Every file the batch reads that the report could name: the preset,
     * and the input the listing found under the report's name (no hole
     * in the list: a NULL ends it). */
    const char *inputs[3] = { NULL };
    int nb_inputs = 0;
    if (p->job.pipeline_file)
        inputs[nb_inputs++] = p->job.pipeline_file;
    if (report_hit[0])
        inputs[nb_inputs++] = report_hit;
    int exists = strcmp(p->report_path, "-") && stat(p->report_path, &st) == 0;
    int overwrite = p->overwrite || (p->resume && exists && S_ISREG(st.st_mode) && is_batch_report(p->report_path));
    if (vkcu_outfile_check(p->report_path, overwrite, inputs, why, sizeof(why)) < 0) {
        text_cut(err, errlen, "cannot write the report: %s", why);
        return VKCU_ERR_OUTPUT;
    }
    const char *rel;
    if (strcmp(p->report_path, "-") && resolve_beside(p->report_path, where, sizeof(where)) == 0 &&
        (rel = vkcu_batch_below(where, p->in_dir))) {
        /* Taken by the next run as vkcu_batch_walk() would take it: not hidden, in reach, matching the patterns. */
        const char *name = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
        int hidden = rel[0] == '.' || strstr(rel, "/.");
        if (!hidden && (p->recursive || !strchr(rel, '/')) &&
            !vkcu_batch_match_any(p->exclude, p->nb_exclude, rel, name) &&
            (!p->nb_include || vkcu_batch_match_any(p->include, p->nb_include, rel, name))) {
            text_cut(err, errlen, "cannot write the report: %s: is inside the input folder %s, where the next run "
                     "would take it for an input (write it outside, or exclude it)", p->report_path, p->in_dir);
            return VKCU_ERR_OUTPUT;
        }
    }
    if (vkcu_outfile_begin(p->report_path, overwrite, inputs, b->report_tmp, sizeof(b->report_tmp), why,
                           sizeof(why)) < 0) {
        text_cut(err, errlen, "cannot write the report: %s", why);
        return VKCU_ERR_OUTPUT;
    }
    if (!(b->report = vkcu_outfile_fopen(b->report_tmp, "w"))) {
        text_cut(err, errlen, "cannot write the report: %s: %s", p->report_path, strerror(errno));
        vkcu_outfile_abort(b->report_tmp);
        return VKCU_ERR_OUTPUT;
    }
    return 0;
}

/* Before the output folder is made: a report that cannot be written (its
 * folder missing or read-only, the file there without overwrite) stops the
 * batch with nothing made. A report in the output folder about to be made
 * waits for report_open, which checks everything once the inputs are known. */
int vkcu_batch_report_writable_first(const vkcu_batch_settings *p, char *err, size_t errlen)
{
    char why[1024];
    if (!p->report_path || !strcmp(p->report_path, "-"))
        return 0;
    const char *slash = strrchr(p->report_path, '/');
    size_t dl = slash ? (size_t)(slash - p->report_path) : 0, ol = strlen(p->out_dir);
    while (ol > 1 && p->out_dir[ol - 1] == '/')
        ol--;
    while (dl > 1 && p->report_path[dl - 1] == '/')
        dl--;
    if (slash && dl == ol && !strncmp(p->report_path, p->out_dir, ol))
        return 0;
    if (vkcu_outfile_check(p->report_path, p->overwrite || p->resume, NULL, why, sizeof(why)) < 0) {
        text_cut(err, errlen, "cannot write the report: %s", why);
        return VKCU_ERR_OUTPUT;
    }
    return 0;
}

/* Refuses a report that is one of the batch's outputs. */
int vkcu_batch_report_not_an_output(batch_run *b, const file_list *all, char *err, size_t errlen)
{
    const vkcu_batch_settings *p = b->p;
    char where[PATH_MAX];
    const char *rel;
    if (!strcmp(p->report_path, "-") || resolve_beside(p->report_path, where, sizeof(where)) < 0 ||
        !(rel = vkcu_batch_below(where, p->out_dir)))
        return 0;
    for (int i = 0; i < all->n; i++)
        if (!strcmp(all->v[i].out_rel, rel)) {
            text_cut(err, errlen, "cannot write the report: %s: is also the output of %s/%s (name the report "
                     "outside the outputs)", p->report_path, p->in_dir, all->v[i].rel);
            return VKCU_ERR_OUTPUT;
        }
    return 0;
}

