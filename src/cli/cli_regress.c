/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The regression verbs: `vkcu compare A B` and `vkcu verify MANIFEST`.
 * Arguments only; the work is in compare.c and manifest.c.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "regress/compare.h"
#include "util/log.h"
#include "regress/manifest.h"
#include "util/number.h"

/* ---- vkcu compare ---- */

typedef struct compare_args {
    vkcu_job_params job;
    vkcu_compare_params cp;
    const char *inputs[2];
    const char *chain_a, *chain_b;
    int nb_inputs;
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
    case OPT_MAX_DIFF: c->cp.max_diff = (int)v->i; break;
    case OPT_MIN_PSNR: c->cp.min_psnr = v->d; break;
    case OPT_MIN_VMAF: c->cp.min_vmaf = v->d; break;
    case OPT_DIFF_IMAGE: c->cp.diff_image = arg; break;
    case OPT_ALIGN: c->cp.align = aligns[v->i]; break;
    case OPT_CHAIN_A: c->chain_a = arg; break;
    case OPT_CHAIN_B: c->chain_b = arg; break;
    case OPT_CSV: c->cp.csv = arg; break;
    case OPT_JSON: c->cp.json = arg; break;
    case OPT_HTML_REPORT: c->cp.report_html = arg; break;
    case OPT_PER_FRAME: c->cp.per_frame = 1; break;
    case OPT_SCALE: c->cp.scale = 1; break;
    case OPT_VMAF: c->cp.vmaf = 1; break;
    case OPT_OVERWRITE: c->cp.overwrite = 1; break;
    default: return cli_job_apply(&c->job, CLI_COMPARE, o, arg, v);
    }
    return 0;
}

int cli_main_compare(int argc, char **argv)
{
    compare_args c = { .nb_inputs = 0 };
    vkcu_job_params_default(&c.job);
    c.job.progress = 0;
    c.job.sink = VKCU_SINK_HASH; /* frames are compared, not encoded: hash presets are fine here */
    vkcu_compare_params_default(&c.cp);
    int ret = cli_parse(CLI_COMPARE, argc, argv, compare_apply, &c);
    if (ret >= 0)
        return ret;
    vkcu_job_params job = c.job;
    vkcu_compare_params cp = c.cp;
    const char **inputs = c.inputs, *chain_a = c.chain_a, *chain_b = c.chain_b;
    int nb_inputs = c.nb_inputs;
    if (nb_inputs < 2)
        return cli_usage_error("compare: needs two inputs, A and B");
    /* One side's chain runs after the shared --chain. */
    vkcu_job_params job_a = job, job_b = job;
    char *chains[2] = { NULL, NULL };
    const char *extra[2] = { chain_a, chain_b };
    vkcu_job_params *sides[2] = { &job_a, &job_b };
    for (int k = 0; k < 2; k++) {
        if (!extra[k] || !*extra[k])
            continue;
        if (job.chain && *job.chain) {
            size_t n = strlen(job.chain) + strlen(extra[k]) + 2;
            chains[k] = malloc(n);
            if (!chains[k])
                return VKCU_EXIT_FAIL;
            snprintf(chains[k], n, "%s,%s", job.chain, extra[k]);
            sides[k]->chain = chains[k];
        } else {
            sides[k]->chain = extra[k];
        }
    }
    cp.a = inputs[0];
    cp.b = inputs[1];
    cp.job = &job_a;
    cp.job_b = &job_b;
    cp.report = stdout;
    cli_install_signals();
    vkcu_compare_result r;
    ret = vkcu_compare_run(&cp, &r);
    free(chains[0]);
    free(chains[1]);
    fflush(stdout);
    if (ret < 0 && ret != VKCU_ERR_MISMATCH) {
        fprintf(stderr, "vkcu: error: %s\n", r.error[0] ? r.error : "compare failed");
        return vkcu_exit_code(ret);
    }
    if (ret == VKCU_ERR_MISMATCH)
        fprintf(stderr, "vkcu: %s vs %s: %s\n", cp.a, cp.b, r.verdict);
    return ret < 0 ? VKCU_EXIT_MISMATCH : 0;
}

/* ---- vkcu verify ---- */

#define VERIFY_MAX 64

typedef struct verify_args {
    vkcu_job_params base;
    vkcu_verify_params vp;
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
    case OPT_JUNIT: a->vp.junit = arg; break;
    case OPT_SUMMARY: a->vp.summary = arg; break;
    case OPT_HTML: a->vp.html = arg; break;
    case OPT_TIMEOUT: a->vp.timeout = v->d; break;
    case OPT_JOBS: a->vp.jobs = (int)v->i; break;
    case OPT_FAIL_FAST: a->vp.fail_fast = 1; break;
    case OPT_UPDATE: a->vp.update = 1; break;
    case OPT_ALLOW_OUTSIDE: a->vp.allow_outside = 1; break;
    case OPT_OVERWRITE: a->vp.overwrite = 1; break;
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

int cli_main_verify(int argc, char **argv)
{
    verify_args a;
    memset(&a, 0, sizeof(a));
    vkcu_job_params_default(&a.base);
    a.base.progress = 0;
    vkcu_verify_params_default(&a.vp);
    int ret = cli_parse(CLI_VERIFY, argc, argv, verify_apply, &a);
    if (ret >= 0)
        return ret;
    vkcu_job_params base = a.base;
    vkcu_verify_params vp = a.vp;
    const char **manifests = a.manifests, **cases = a.cases;
    int nb_manifests = a.nb_manifests, nb_cases = a.nb_cases, backend_given = a.backend_given;
    if (!nb_manifests)
        return cli_usage_error("verify: no manifest given");
    vp.base = &base;
    vp.backend_override = backend_given ? (int)base.backend : -1;
    vp.cases = cases;
    vp.nb_cases = nb_cases;
    vp.out = stdout;
    cli_install_signals();
    char err[1024] = "";
    ret = vkcu_verify_run(manifests, nb_manifests, &vp, err, sizeof(err));
    fflush(stdout);
    if (ret < 0 && ret != VKCU_ERR_MISMATCH) {
        fprintf(stderr, "vkcu: error: %s\n", err[0] ? err : "verify failed");
        return vkcu_exit_code(ret);
    }
    return ret < 0 ? VKCU_EXIT_MISMATCH : 0;
}
