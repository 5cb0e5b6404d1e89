/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The regression verbs: `vkcu compare A B` and `vkcu verify MANIFEST`.
 * Arguments only; the work is the library's vkcu_compare and vkcu_verify
 * (vkcu/regress.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---- vkcu compare ---- */

typedef struct compare_args {
    cli_job job;
    vkcu_compare_job cj;
    const char *inputs[2];
    const char *chain_a, *chain_b;
    int nb_inputs;
    int quiet; /* -q: the verdict alone */
    int stats; /* --stats: where the pairs were measured */
} compare_args;

static int compare_apply(void *ctx, const cli_option *o, const char *arg, const cli_value *v)
{
    static const enum vkcu_compare_align aligns[] = { VKCU_ALIGN_START, VKCU_ALIGN_PTS, VKCU_ALIGN_INDEX };
    compare_args *c = ctx;
    if (!o) {
        if (c->nb_inputs == 2)
            return cli_usage_error("compare: more than two inputs ('%s')", arg);
        c->inputs[c->nb_inputs++] = arg;
        return 0;
    }
    switch (o->id) {
    case OPT_MAX_DIFF: c->cj.max_diff = (int)v->i; break;
    case OPT_MIN_PSNR: c->cj.min_psnr = v->d; break;
    case OPT_MIN_VMAF: c->cj.min_vmaf = v->d; break;
    case OPT_DIFF_IMAGE: c->cj.diff_image = arg; break;
    case OPT_ALIGN: c->cj.align = aligns[v->i]; break;
    case OPT_CHAIN_A: c->chain_a = arg; break;
    case OPT_CHAIN_B: c->chain_b = arg; break;
    case OPT_CSV: c->cj.csv = arg; break;
    case OPT_JSON: c->cj.json = arg; break;
    case OPT_HTML_REPORT: c->cj.report_html = arg; break;
    case OPT_PER_FRAME: c->cj.per_frame = 1; break;
    case OPT_SCALE: c->cj.scale = 1; break;
    case OPT_VMAF: c->cj.vmaf = 1; break;
    case OPT_OVERWRITE: c->cj.overwrite = 1; break;
    case OPT_QUIET:
        c->quiet = 1;
        return cli_job_apply(&c->job, CLI_COMPARE, o, arg, v);
    case OPT_TIMING: c->cj.timing = v->i ? VKCU_TIMING_DECODED : VKCU_TIMING_FFMPEG; break;
    case OPT_EXCLUDE_CONCEALED: c->cj.exclude_concealed = 1; break;
    case OPT_STATS: c->stats = 1; break;
    default: return cli_job_apply(&c->job, CLI_COMPARE, o, arg, v);
    }
    return 0;
}

static int cli_main_compare(int argc, char **argv)
{
    compare_args c = { .nb_inputs = 0 };
    cli_job_default(&c.job);
    vkcu_default_compare_job(&c.cj);
    int ret = cli_parse(CLI_COMPARE, argc, argv, compare_apply, &c);
    if (ret >= 0)
        return ret;
    if (c.nb_inputs < 2)
        return cli_usage_error("compare: needs two inputs, A and B");
    vkcu_compare_job *cj = &c.cj;
    cj->a = c.inputs[0];
    cj->b = c.inputs[1];
    cj->chain = c.job.j.chain; /* one side's chain runs after it */
    cj->chain_a = c.chain_a;
    cj->chain_b = c.chain_b;
    cj->start_time = c.job.j.start_time;
    cj->duration = c.job.j.duration;
    cj->start_frame = c.job.j.start_frame;
    cj->frame_count = c.job.j.frame_count;
    cj->max_frames = c.job.j.max_frames;
    cj->strict = c.job.j.strict;
    cj->pipeline_file = c.job.j.pipeline_file;
    /* A file written to standard output ("-") keeps it to itself. */
    cj->report = c.quiet ? NULL : stdout;
    const char *files[] = { cj->csv, cj->json, cj->report_html, cj->diff_image };
    for (int k = 0; k < 4; k++)
        if (files[k] && !strcmp(files[k], "-"))
            cj->report = c.quiet ? NULL : stderr;
    cli_install_signals();
    vkcu_context *ctx = NULL;
    vkcu_compare_result r;
    ret = cli_open_context(&c.job, &ctx);
    if (ret >= 0)
        ret = vkcu_compare(ctx, cj, &r);
    vkcu_close(&ctx);
    fflush(stdout);
    if (c.stats && (ret >= 0 || ret == VKCU_ERR_MISMATCH))
        fprintf(stderr, "stats: pairs=%lld measured_on_gpu=%lld frames_dtoh_bytes=%lld\n", (long long)r.paired,
                (long long)r.gpu_pairs, (long long)r.frames_dtoh_bytes);
    if (ret < 0 && ret != VKCU_ERR_MISMATCH)
        return cli_exit_code(ret); /* the library has said why */
    if (c.quiet)
        printf("%s\n", r.verdict); /* on standard output, where the report would have ended with it */
    else if (ret == VKCU_ERR_MISMATCH)
        fprintf(stderr, "vkcu: %s vs %s: %s\n", cj->a, cj->b, r.verdict);
    return ret < 0 ? VKCU_EXIT_MISMATCH : 0;
}

/* ---- vkcu verify ---- */

#define VERIFY_MAX 64

typedef struct verify_args {
    cli_job base;
    vkcu_verify_job vj;
    const char *manifests[VERIFY_MAX];
    const char *cases[VERIFY_MAX];
    int nb_manifests, nb_cases, backend_given;
} verify_args;

static int verify_apply(void *ctx, const cli_option *o, const char *arg, const cli_value *v)
{
    verify_args *a = ctx;
    if (!o) {
        if (a->nb_manifests == VERIFY_MAX)
            return cli_usage_error("verify: more than %d manifests", VERIFY_MAX);
        a->manifests[a->nb_manifests++] = arg;
        return 0;
    }
    switch (o->id) {
    case OPT_JUNIT: a->vj.junit = arg; break;
    case OPT_SUMMARY: a->vj.summary = arg; break;
    case OPT_HTML: a->vj.html = arg; break;
    case OPT_TIMEOUT: a->vj.timeout = v->d; break;
    case OPT_JOBS: a->vj.jobs = (int)v->i; break;
    case OPT_FAIL_FAST: a->vj.fail_fast = 1; break;
    case OPT_UPDATE: a->vj.update = 1; break;
    case OPT_ALLOW_OUTSIDE: a->vj.allow_outside = 1; break;
    case OPT_OVERWRITE: a->vj.overwrite = 1; break;
    case OPT_TIMING: a->vj.timing = v->i ? VKCU_TIMING_DECODED : VKCU_TIMING_FFMPEG; break;
    case OPT_EXCLUDE_CONCEALED: a->vj.exclude_concealed = 1; break;
    case OPT_CASE:
        if (a->nb_cases == VERIFY_MAX)
            return cli_usage_error("verify: more than %d --case options", VERIFY_MAX);
        a->cases[a->nb_cases++] = arg;
        break;
    case OPT_BACKEND:
        a->backend_given = 1;
        return cli_job_apply(&a->base, CLI_VERIFY, o, arg, v);
    default: return cli_job_apply(&a->base, CLI_VERIFY, o, arg, v);
    }
    return 0;
}

static int cli_main_verify(int argc, char **argv)
{
    verify_args a;
    memset(&a, 0, sizeof(a));
    cli_job_default(&a.base);
    vkcu_default_verify_job(&a.vj);
    int ret = cli_parse(CLI_VERIFY, argc, argv, verify_apply, &a);
    if (ret >= 0)
        return ret;
    if (!a.nb_manifests)
        return cli_usage_error("verify: no manifest given");
    vkcu_verify_job *vj = &a.vj;
    vj->manifests = a.manifests;
    vj->nb_manifests = a.nb_manifests;
    vj->override_backend = a.backend_given;
    vj->cases = a.cases;
    vj->nb_cases = a.nb_cases;
    vj->out = stdout;
    const char *files[] = { vj->junit, vj->summary, vj->html };
    for (int k = 0; k < 3; k++)
        if (files[k] && !strcmp(files[k], "-"))
            vj->out = stderr; /* that file has standard output to itself */
    cli_install_signals();
    vkcu_context *ctx = NULL;
    ret = cli_open_context(&a.base, &ctx);
    if (ret >= 0)
        ret = vkcu_verify(ctx, vj);
    vkcu_close(&ctx);
    fflush(stdout);
    if (ret < 0 && ret != VKCU_ERR_MISMATCH)
        return cli_exit_code(ret); /* the library has said why */
    return ret < 0 ? VKCU_EXIT_MISMATCH : 0;
}

const cli_verb_main cli_regress_verbs[CLI_NB_VERBS] = {
    [CLI_COMPARE] = cli_main_compare,
    [CLI_VERIFY] = cli_main_verify,
};
