/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `vkcu verify` (vkcu_verify_run): loads the manifests, runs their cases
 * (on a pool of workers with --jobs, the results printed in manifest
 * order), prints one line per case and the totals, and writes the report
 * files. The files every run reads are gathered here for the rule that no
 * output replaces an input.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "manifest_priv.h"
#include "core/outfile.h"
#include "util/jobs.h"
#include "util/log.h"
#include "batch/preset.h"
#include "report.h"
#include "vmaf.h"

void vkcu_verify_params_default(vkcu_verify_params *p)
{
    memset(p, 0, sizeof(*p));
    p->backend_override = -1;
}

typedef struct file_id {
    dev_t dev;
    ino_t ino;
    char *path;
} file_id;

static int cmp_file_id(const void *a, const void *b)
{
    const file_id *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* The paths of v (n of them, malloc'ed) that exist, one per file: a big
 * suite names one clip in thousands of cases, and every output is checked
 * against each input by device and inode. A file that does not exist yet
 * cannot be written over. Frees what it drops; NULL-terminated. */
static int cmp_str(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    return x && y ? strcmp(x, y) : (x != NULL) - (y != NULL);
}

static char **distinct_files(char **v, int n)
{
    file_id *ids = malloc((size_t)(n ? n : 1) * sizeof(*ids));
    int k = 0;
    /* the same name once, before any stat */
    qsort(v, (size_t)n, sizeof(*v), cmp_str);
    for (int i = 1; i < n; i++)
        if (v[i] && v[i - 1] && !strcmp(v[i], v[i - 1])) {
            free(v[i - 1]);
            v[i - 1] = NULL;
        }
    if (!ids) {
        for (int i = 0; i < n; i++)
            free(v[i]);
        free(v);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (v[i] && stat(v[i], &st) == 0)
            ids[k++] = (file_id){ st.st_dev, st.st_ino, v[i] };
        else
            free(v[i]);
    }
    qsort(ids, (size_t)k, sizeof(*ids), cmp_file_id);
    int m = 0;
    for (int i = 0; i < k; i++) {
        if (m && !cmp_file_id(&ids[m - 1], &ids[i])) {
            free(ids[i].path);
            continue;
        }
        ids[m++] = ids[i];
    }
    for (int i = 0; i < m; i++)
        v[i] = ids[i].path;
    v[m] = NULL;
    free(ids);
    return v;
}

/* Every file a verify run reads (manifests, case inputs, references,
 * expected hashes files and presets), NULL-terminated, for the rule that
 * no output replaces an input. */
static char **verify_inputs(vkcu_manifest **ms, int nb)
{
    int n = 0;
    for (int k = 0; k < nb; k++)
        n += 1 + 4 * ms[k]->nb_cases;
    char **v = calloc((size_t)n + 1, sizeof(*v));
    if (!v)
        return NULL;
    n = 0;
    for (int k = 0; k < nb; k++) {
        char perr[600];
        v[n++] = strdup(ms[k]->path);
        for (int i = 0; i < ms[k]->nb_cases; i++) {
            const vkcu_manifest_case *c = &ms[k]->cases[i];
            if (c->input && (v[n] = vkcu_manifest_path(ms[k], c->input, perr, sizeof(perr))))
                n++;
            if (c->reference && (v[n] = vkcu_manifest_path(ms[k], c->reference, perr, sizeof(perr))))
                n++;
            if (c->hashes && (v[n] = vkcu_manifest_path(ms[k], c->hashes, perr, sizeof(perr))))
                n++;
            if (c->pipeline) {
                /* as case_job (verify_case.c) finds it: a file relative to the manifest, or a name in the
                 * presets folders */
                size_t len = strlen(c->pipeline);
                char where[4096 + 256];
                if (strchr(c->pipeline, '/') || (len > 5 && !strcmp(c->pipeline + len - 5, VKCU_PRESET_EXT)))
                    v[n] = vkcu_manifest_path(ms[k], c->pipeline, perr, sizeof(perr));
                else if (vkcu_preset_locate(c->pipeline, where, sizeof(where)) > 0)
                    v[n] = strdup(where);
                n += v[n] != NULL;
            }
        }
    }
    return distinct_files(v, n);
}

static void free_inputs(char **v)
{
    for (int i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* A case run by one of verify's workers (-j). */
typedef struct verify_task {
    vkcu_manifest *m;
    vkcu_manifest_case *c;
    case_result *cr;
    int ret, state; /* 0 waiting, 1 running, 2 done */
    char *err;      /* why ret < 0 (malloc'ed), or NULL: per case only when it failed, for big suites */
} verify_task;

/* ---- --update of a hashes file that several cases name ---- */

/* Which file a case's hashes name, by what it is rather than how it is
 * written: an existing file by device and inode, a new one by its folder's
 * device and inode and its name, a path whose folder is missing by itself. */
typedef struct sidecar_id {
    int kind; /* 0 an existing file, 1 a new file in an existing folder, 2 neither */
    dev_t dev;
    ino_t ino;
    const char *name; /* kind 1: the file's name in the folder; 2: the path */
    char *path;
    int task;
} sidecar_id;

/* 0 when x and y are the same file. */
static int cmp_sidecar_file(const sidecar_id *x, const sidecar_id *y)
{
    if (x->kind != y->kind)
        return x->kind - y->kind;
    if (x->kind < 2 && (x->dev != y->dev || x->ino != y->ino))
        return x->dev != y->dev ? (x->dev < y->dev ? -1 : 1) : (x->ino < y->ino ? -1 : 1);
    return x->kind ? strcmp(x->name, y->name) : 0;
}

/* By file, then in manifest order within a file. */
static int cmp_sidecar(const void *a, const void *b)
{
    const sidecar_id *x = a, *y = b;
    int c = cmp_sidecar_file(x, y);
    return c ? c : x->task - y->task;
}

static void sidecar_identify(sidecar_id *id)
{
    struct stat st;
    if (stat(id->path, &st) == 0) {
        *id = (sidecar_id){ 0, st.st_dev, st.st_ino, NULL, id->path, id->task };
        return;
    }
    char dir[4096];
    const char *slash = strrchr(id->path, '/'), *base = slash ? slash + 1 : id->path;
    snprintf(dir, sizeof(dir), "%.*s", slash ? (slash == id->path ? 1 : (int)(slash - id->path)) : 1,
             slash ? id->path : ".");
    if (stat(dir, &st) == 0)
        *id = (sidecar_id){ 1, st.st_dev, st.st_ino, base, id->path, id->task };
    else
        *id = (sidecar_id){ 2, 0, 0, id->path, id->path, id->task };
}

/* The hashes files of an --update run that holds its writes, and the
 * cases naming each. */
typedef struct held_files {
    int *task;  /* file f's cases are task[start[f]] .. task[start[f + 1] - 1], in manifest order */
    int *start;
    int nb;
} held_files;

static void held_files_free(held_files *hf)
{
    free(hf->task);
    free(hf->start);
    memset(hf, 0, sizeof(*hf));
}

/* --update: when two selected cases name one hashes file, the run holds
 * its writes (hold, on every case): the hashes files and rewritten
 * manifests are written when every case has run, and not at all when two
 * cases made different frames for one file. hf: every hashes file then,
 * with its cases. A run where no two cases share a file writes as it
 * goes, as before (hf->nb 0). */
static int find_held_files(verify_task *tasks, int n, held_files *hf)
{
    sidecar_id *ids = calloc((size_t)(n ? n : 1), sizeof(*ids));
    int k = 0, ret = 0, shared = 0;
    memset(hf, 0, sizeof(*hf));
    hf->task = malloc((size_t)(n ? n : 1) * sizeof(int));
    hf->start = malloc((size_t)(n + 1) * sizeof(int));
    if (!ids || !hf->task || !hf->start) {
        ret = AVERROR(ENOMEM);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        const vkcu_manifest_case *c = tasks[i].c;
        char perr[600];
        if (c->expect != VKCU_EXPECT_HASHES || !c->hashes)
            continue;
        if (!(ids[k].path = vkcu_manifest_path(tasks[i].m, c->hashes, perr, sizeof(perr))))
            continue; /* its case fails, writing nothing */
        ids[k].task = i;
        sidecar_identify(&ids[k]);
        k++;
    }
    qsort(ids, (size_t)k, sizeof(*ids), cmp_sidecar);
    for (int i = 0, j; i < k; i = j) {
        for (j = i + 1; j < k && !cmp_sidecar_file(&ids[i], &ids[j]); j++) {
        }
        shared |= j - i > 1;
        hf->start[hf->nb++] = i;
    }
    hf->start[hf->nb] = k;
    for (int i = 0; i < k; i++)
        hf->task[i] = ids[i].task;
    if (!shared)
        hf->nb = 0;
    for (int i = 0; shared && i < n; i++)
        tasks[i].cr->hold = 1;
done:
    for (int i = 0; ids && i < k; i++)
        free(ids[i].path);
    free(ids);
    if (ret < 0)
        held_files_free(hf);
    return ret;
}

/* The first case of held file f that made frames for it (NULL: none),
 * and whether any of them would write them (its expectation differed). */
static const case_result *held_file_first(const held_files *hf, const verify_task *tasks, int f, int *writes)
{
    const case_result *first = NULL;
    *writes = 0;
    for (int q = hf->start[f]; q < hf->start[f + 1]; q++) {
        const case_result *cr = tasks[hf->task[q]].cr;
        if (!cr->held)
            continue; /* did not run, or failed: it wants nothing written */
        first = first ? first : cr;
        *writes |= cr->status == CASE_UPDATED;
    }
    return first;
}

/* When every case of a holding run has run: refused, before anything is
 * written, when two cases made different frames for one file (a usage
 * error, as two inputs of a batch for one output) or when a manifest to
 * rewrite changed meanwhile; then each file that changes gets the one
 * content its cases made, and each manifest its new lines. */
static int write_held_files(const held_files *hf, const verify_task *tasks, vkcu_manifest **ms, int nb,
                            const vkcu_verify_params *p, char *err, size_t errlen)
{
    int writes, ret = 0;
    for (int f = 0; f < hf->nb; f++) {
        const case_result *first = held_file_first(hf, tasks, f, &writes);
        for (int q = hf->start[f]; writes && q < hf->start[f + 1]; q++) {
            const case_result *cr = tasks[hf->task[q]].cr;
            if (cr->held && (cr->held_len != first->held_len || memcmp(cr->held, first->held, cr->held_len))) {
                snprintf(err, errlen, "%s: cases '%s' (%s:%d) and '%s' (%s:%d) both take their expected hashes from "
                         "it, but their frames differ; nothing was written (give each case its own hashes file)",
                         first->held_file, first->c->name, first->m->path, first->c->line, cr->c->name, cr->m->path,
                         cr->c->line);
                return VKCU_ERR_USAGE;
            }
        }
    }
    for (int k = 0; k < nb; k++)
        if (ms[k]->unsaved && (ret = vkcu_manifest_unchanged(ms[k], err, errlen)) < 0)
            return ret;
    for (int f = 0; f < hf->nb && ret >= 0; f++) {
        const case_result *first = held_file_first(hf, tasks, f, &writes);
        ret = writes ? vkcu_verify_write_held(first, p, err, errlen) : 0;
    }
    for (int k = 0; k < nb && ret >= 0; k++)
        if (ms[k]->unsaved)
            ret = vkcu_manifest_save(ms[k], err, errlen);
    return ret;
}

/* vkcu_verify_run_case, keeping the message of a failure in t->err. */
static int run_task(verify_task *t, const vkcu_verify_params *p, int *dirty)
{
    char err[1024] = "";
    int ret = vkcu_verify_run_case(t->m, t->c, p, t->cr, dirty, err, sizeof(err));
    if (ret >= 0 && *dirty && t->cr->hold)
        t->m->unsaved = 1; /* saved when every case has run (write_held_files) */
    else if (ret >= 0 && *dirty)
        ret = vkcu_manifest_save(t->m, err, sizeof(err));
    if (ret < 0 && !(t->err = strdup(err)))
        ret = AVERROR(ENOMEM);
    return ret;
}

typedef struct verify_pool {
    verify_task *t;
    int n, next, stop;
    const vkcu_verify_params *p;
    pthread_mutex_t lock;
    pthread_cond_t done;
} verify_pool;

/* The pool's work (util/jobs.h): the next case, until the list is done or
 * the run stops; the caller prints the results in manifest order. */
static int verify_work(void *opaque, int worker)
{
    verify_pool *vp = opaque;
    (void)worker;
    pthread_mutex_lock(&vp->lock);
    if (vp->stop || vp->next >= vp->n) {
        pthread_mutex_unlock(&vp->lock);
        return 0;
    }
    verify_task *t = &vp->t[vp->next++];
    t->state = 1;
    pthread_mutex_unlock(&vp->lock);
    int dirty = 0; /* --update runs one case at a time: nothing to rewrite here */
    t->ret = run_task(t, vp->p, &dirty);
    pthread_mutex_lock(&vp->lock);
    t->state = 2;
    pthread_cond_broadcast(&vp->done);
    pthread_mutex_unlock(&vp->lock);
    return 1;
}

/* A case that needs VMAF in a build without it: VKCU_ERR_USAGE, said
 * before anything runs or is written; else 0. */
static int check_vmaf_cases(vkcu_manifest **ms, int nb, const vkcu_verify_params *p, char *err, size_t errlen)
{
    for (int k = 0; k < nb && !vkcu_vmaf_available(); k++)
        for (int i = 0; i < ms[k]->nb_cases; i++)
            if (!isnan(ms[k]->cases[i].min_vmaf) && vkcu_verify_wanted(p, ms[k]->cases[i].name)) {
                char what[600];
                snprintf(what, sizeof(what), "%s:%d: case '%s': min-vmaf", ms[k]->path, ms[k]->cases[i].line,
                         ms[k]->cases[i].name);
                vkcu_vmaf_missing(what, err, errlen);
                return VKCU_ERR_USAGE;
            }
    return 0;
}

/* An existing report file is refused before any case runs: <0 for the
 * first refused, else the last check's value. */
static int check_report_files(const vkcu_verify_params *p, char **inputs, char *err, size_t errlen)
{
    int ret = 0;
    if (p->junit && (ret = vkcu_outfile_check(p->junit, p->overwrite, (const char *const *)inputs, err, errlen)) < 0)
        return ret;
    if (p->summary &&
        (ret = vkcu_outfile_check(p->summary, p->overwrite, (const char *const *)inputs, err, errlen)) < 0)
        return ret;
    if (p->html && (ret = vkcu_outfile_check(p->html, p->overwrite, (const char *const *)inputs, err, errlen)) < 0)
        return ret;
    return ret;
}

/* The selected cases of every manifest, in manifest order, as tasks whose
 * results go into res; returns how many. */
static int select_cases(vkcu_manifest **ms, int nb, const vkcu_verify_params *p, verify_task *tasks,
                        case_result *res)
{
    int nb_res = 0;
    for (int k = 0; k < nb; k++)
        for (int i = 0; i < ms[k]->nb_cases; i++)
            if (vkcu_verify_wanted(p, ms[k]->cases[i].name)) {
                tasks[nb_res] = (verify_task){ .m = ms[k], .c = &ms[k]->cases[i], .cr = &res[nb_res] };
                nb_res++;
            }
    return nb_res;
}

/* Sets up the pool over the tasks and starts its workers for --jobs
 * (*workers stays NULL with one job, or when none could start). */
static void start_pool(verify_pool *pool, verify_task *tasks, int nb_res, const vkcu_verify_params *p,
                       vkcu_jobs **workers)
{
    /* --update rewrites manifests as it goes: one case at a time */
    int jobs = p->update || p->jobs < 1 ? 1 : p->jobs > 64 ? 64 : p->jobs;
    pool->t = tasks;
    pool->n = nb_res;
    pool->p = p;
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->done, NULL);
    /* Workers that cannot be started leave their cases to the others; with
     * none, the cases run here, one after the other. */
    if (jobs > 1) {
        vkcu_jobs_params wp = { .workers = jobs < nb_res ? jobs : nb_res, .work = verify_work, .opaque = pool };
        if (vkcu_jobs_start(workers, &wp) < 0)
            *workers = NULL;
    }
}

/* Stops the pool: no worker starts another case. */
static void stop_pool(verify_pool *pool)
{
    pthread_mutex_lock(&pool->lock);
    pool->stop = 1;
    pthread_mutex_unlock(&pool->lock);
}

/* Task t, done: waited for when the workers run the cases, else run here. */
static void finish_task(verify_task *t, const vkcu_verify_params *p, verify_pool *pool, vkcu_jobs *workers)
{
    if (workers) {
        pthread_mutex_lock(&pool->lock);
        while (t->state != 2 && !(pool->stop && t->state == 0))
            pthread_cond_wait(&pool->done, &pool->lock);
        pthread_mutex_unlock(&pool->lock);
    } else {
        int dirty = 0;
        t->ret = run_task(t, p, &dirty);
    }
}

/* A case's line on o as it ends. */
static void show_case(FILE *o, const verify_task *t, double *last_flush)
{
    const case_result *cr = t->cr;
    static const char *tags[] = { "PASS", "FAIL", "SKIP", "UPDATED" };
    fprintf(o, "%s %s: %s\n", tags[cr->status], t->c->name, cr->message);
    /* Lines show as cases end (a CI log), but a suite of 200k quick
     * cases is not 200k writes: at most ten flushes a second. */
    double now = vkcu_now();
    if (now - *last_flush >= 0.1) {
        fflush(o);
        *last_flush = now;
    }
}

/* The totals line. */
static void print_totals(FILE *o, int passed, int failed, int updated, int skipped, int not_run)
{
    fprintf(o, "%d passed, %d failed", passed, failed);
    if (updated)
        fprintf(o, ", %d updated", updated);
    if (skipped)
        fprintf(o, ", %d skipped", skipped);
    if (not_run)
        fprintf(o, ", %d not run (%s)", not_run, VKCU_SETTING_IS("fail_fast", "1"));
    fputc('\n', o);
}

/* Frees what a run kept of its cases (total of them). */
static void free_run(case_result *res, verify_task *tasks, int total, held_files *held)
{
    for (int i = 0; res && i < total; i++) {
        vkcu_compare_plot_free(&res[i].plot);
        free(res[i].marks);
        vkcu_verify_free_held(&res[i]);
    }
    held_files_free(held);
    free(res);
    for (int i = 0; tasks && i < total; i++)
        free(tasks[i].err);
    free(tasks);
}

int vkcu_verify_run(const char *const *paths, int nb, const vkcu_verify_params *p, char *err, size_t errlen)
{
    vkcu_manifest **ms = calloc((size_t)nb, sizeof(*ms));
    case_result *res = NULL;
    verify_task *tasks = NULL;
    int nb_res = 0, ret = 0, failed = 0, passed = 0, skipped = 0, updated = 0, not_run = 0;
    char **inputs = NULL;
    FILE *o = p->out;
    verify_pool pool = { 0 };
    held_files held = { 0 };
    vkcu_jobs *workers = NULL;
    if (!ms)
        return AVERROR(ENOMEM);
    int total = 0;
    for (int i = 0; i < nb; i++) {
        if ((ret = vkcu_manifest_load(paths[i], &ms[i], err, errlen)) < 0)
            goto done;
        total += ms[i]->nb_cases;
    }
    if ((ret = check_vmaf_cases(ms, nb, p, err, errlen)) < 0)
        goto done;
    res = calloc((size_t)(total ? total : 1), sizeof(*res));
    tasks = calloc((size_t)(total ? total : 1), sizeof(*tasks));
    if (!res || !tasks || ((p->junit || p->summary || p->html) && !(inputs = verify_inputs(ms, nb)))) {
        ret = AVERROR(ENOMEM);
        goto done;
    }
    if ((ret = check_report_files(p, inputs, err, errlen)) < 0)
        goto done;
    nb_res = select_cases(ms, nb, p, tasks, res);
    if (!nb_res) {
        snprintf(err, errlen, "no case matched %s in %s%s", VKCU_SETTING("cases"), paths[0], nb > 1 ? " ..." : "");
        ret = VKCU_ERR_USAGE;
        goto done;
    }
    if (p->update && (ret = find_held_files(tasks, nb_res, &held)) < 0)
        goto done;
    start_pool(&pool, tasks, nb_res, p, &workers);
    int shown = 0;
    double last_flush = 0;
    for (int i = 0; i < nb_res; i++) {
        verify_task *t = &tasks[i];
        finish_task(t, p, &pool, workers);
        if (t->ret < 0) {
            ret = t->ret;
            snprintf(err, errlen, "%s", t->err ? t->err : "out of memory");
            stop_pool(&pool);
            break;
        }
        case_result *cr = t->cr;
        if (o)
            show_case(o, t, &last_flush);
        shown++;
        passed += cr->status == CASE_PASS;
        failed += cr->status == CASE_FAIL;
        skipped += cr->status == CASE_SKIP;
        updated += cr->status == CASE_UPDATED;
        if (cr->status == CASE_FAIL && p->fail_fast) {
            stop_pool(&pool);
            break;
        }
    }
    /* cases after a --fail-fast stop are not reported, whether or not a
     * worker had started them: the output is the same for any -j */
    not_run = nb_res - shown;
    vkcu_jobs_join(&workers);
    if (ret < 0)
        goto done;
    if (p->update && tasks[0].cr->hold && (ret = write_held_files(&held, tasks, ms, nb, p, err, errlen)) < 0)
        goto done;
    if (o)
        print_totals(o, passed, failed, updated, skipped, not_run);
    if (p->junit && (ret = vkcu_verify_write_junit(p->junit, p->overwrite, (const char *const *)inputs, ms, nb, res,
                                                   shown, err, errlen)) < 0)
        goto done;
    if (p->summary &&
        (ret = vkcu_verify_write_summary(p->summary, p->overwrite, (const char *const *)inputs, res, shown, passed,
                                         failed, skipped, updated, not_run, err, errlen)) < 0)
        goto done;
    if (p->html && (ret = vkcu_verify_write_html(p->html, p->overwrite, (const char *const *)inputs, res, shown, passed,
                                                 failed, skipped, updated, not_run, err, errlen)) < 0)
        goto done;
    ret = failed ? VKCU_ERR_MISMATCH : 0;
done:
    free_inputs(inputs);
    if (workers) {
        stop_pool(&pool);
        vkcu_jobs_join(&workers);
    }
    if (pool.t) {
        pthread_mutex_destroy(&pool.lock);
        pthread_cond_destroy(&pool.done);
    }
    for (int i = 0; i < nb; i++)
        vkcu_manifest_free(&ms[i]);
    free(ms);
    free_run(res, tasks, total, &held);
    return ret;
}
