/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The public regression calls (include/vkcu/regress.h): validation of a
 * comparison or a verify run at the boundary, then compare.c and
 * verify.c with jobs made from the context's settings. Messages go to
 * the context's log target, like a job's.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/error.h>

#include "compare.h"
#include "core/context.h"
#include "manifest.h"
#include "util/log.h"

void vkcu_default_compare_job(vkcu_compare_job *job)
{
    memset(job, 0, sizeof(*job));
    job->start_time = -1;
    job->duration = -1;
    job->start_frame = -1;
    job->frame_count = -1;
    job->max_diff = -1;
    job->min_psnr = -1;
    job->min_vmaf = -1;
}

void vkcu_default_verify_job(vkcu_verify_job *job)
{
    memset(job, 0, sizeof(*job));
    job->out = stdout;
    job->jobs = 1;
}

static int check_compare(const vkcu_compare_job *job, char *err, size_t errlen)
{
    int ret = VKCU_RESERVED_CHECK(vkcu_compare_job, job, err, errlen);
    if (ret < 0)
        return ret;
    if (!job->a || !*job->a || !job->b || !*job->b)
        return vkcu_invalid(err, errlen, "a comparison needs two inputs, A and B");
    if (job->max_diff < -1 || job->max_diff > 65535)
        return vkcu_invalid(err, errlen, "%s %d is out of range [0, 65535] (-1: not set)", VKCU_SETTING("max_diff"),
                            job->max_diff);
    if (!(job->min_psnr < 0 || job->min_psnr <= 1000))
        return vkcu_invalid(err, errlen, "%s %g dB is out of range [0, 1000] (negative: not set)",
                            VKCU_SETTING("min_psnr"), job->min_psnr);
    if (!(job->min_vmaf < 0 || job->min_vmaf <= 100))
        return vkcu_invalid(err, errlen, "%s %g is out of range [0, 100] (negative: not set)", VKCU_SETTING("min_vmaf"),
                            job->min_vmaf);
    if (job->align < VKCU_ALIGN_START || job->align > VKCU_ALIGN_INDEX)
        return vkcu_invalid(err, errlen, "%s %d is not start, pts or index", VKCU_SETTING("align"), (int)job->align);
    if (job->max_frames < 0)
        return vkcu_invalid(err, errlen, "%s %d is negative", VKCU_SETTING("max_frames"), job->max_frames);
    if (job->timing < VKCU_TIMING_FFMPEG || job->timing > VKCU_TIMING_DECODED)
        return vkcu_invalid(err, errlen, "%s %d is not ffmpeg or decoded", VKCU_SETTING("timing"), (int)job->timing);
    if (job->exclude_concealed < 0 || job->exclude_concealed > 1)
        return vkcu_invalid(err, errlen, "%s %d is not 0 or 1", VKCU_SETTING("exclude_concealed"),
                            job->exclude_concealed);
    for (int k = 0; k < 3; k++) {
        const char *c = k == 0 ? job->chain : k == 1 ? job->chain_a : job->chain_b;
        char why[512];
        if (c && *c && vkcu_chain_check(c, why, sizeof(why)) < 0)
            return vkcu_invalid(err, errlen, "%s", why);
    }
    return vkcu_check_trim(job->start_time, job->duration, job->start_frame, job->frame_count, err, errlen);
}

/* chain, then the side's own chain after it. */
static int side_chain(const char *chain, const char *side, char **owned, const char **out)
{
    *owned = NULL;
    *out = chain;
    if (!side || !*side)
        return 0;
    if (!chain || !*chain) {
        *out = side;
        return 0;
    }
    size_t n = strlen(chain) + strlen(side) + 2;
    if (!(*owned = malloc(n)))
        return AVERROR(ENOMEM);
    snprintf(*owned, n, "%s,%s", chain, side);
    *out = *owned;
    return 0;
}

int vkcu_compare(vkcu_context *ctx, const vkcu_compare_job *job, vkcu_compare_result *result)
{
    if (!result)
        return AVERROR(EINVAL);
    memset(result, 0, sizeof(*result));
    if (!ctx || !job)
        return vkcu_invalid(result->error, sizeof(result->error), "no %s given", ctx ? "comparison" : "context");
    const vkcu_log_target *prev = vkcu_log_target_swap(vkcu_context_log(ctx));
    char *owned[2] = { NULL, NULL };
    int ret = check_compare(job, result->error, sizeof(result->error));
    if (ret < 0)
        goto end;
    /* Frames are compared, not encoded: each side is a hash-sink job. */
    vkcu_job_params side[2];
    for (int k = 0; k < 2; k++) {
        vkcu_job_params *p = &side[k];
        vkcu_context_job_params(ctx, p);
        p->job.sink = VKCU_SINK_HASH;
        p->progress = 0;
        p->job.start_time = job->start_time;
        p->job.duration = job->duration;
        p->job.start_frame = job->start_frame;
        p->job.frame_count = job->frame_count;
        p->job.max_frames = job->max_frames;
        p->job.strict = job->strict;
        p->job.pipeline_file = job->pipeline_file;
        if ((ret = side_chain(job->chain, k ? job->chain_b : job->chain_a, &owned[k], &p->job.chain)) < 0)
            goto end;
    }
    vkcu_compare_params cp;
    vkcu_compare_params_default(&cp);
    cp.a = job->a;
    cp.b = job->b;
    cp.job = &side[0];
    cp.job_b = &side[1];
    cp.max_diff = job->max_diff;
    cp.min_psnr = job->min_psnr < 0 ? NAN : job->min_psnr;
    cp.min_vmaf = job->min_vmaf < 0 ? NAN : job->min_vmaf;
    cp.vmaf = job->vmaf;
    cp.align = job->align;
    cp.scale = job->scale;
    cp.report = job->report;
    cp.per_frame = job->per_frame;
    cp.diff_image = job->diff_image;
    cp.csv = job->csv;
    cp.json = job->json;
    cp.report_html = job->report_html;
    cp.overwrite = job->overwrite;
    cp.timing = job->timing;
    cp.exclude_concealed = job->exclude_concealed;
    ret = vkcu_compare_run(&cp, result);
    if (ret < 0 && ret != VKCU_ERR_MISMATCH)
        LOGE("%s", result->error[0] ? result->error : "compare failed");
end:
    free(owned[0]);
    free(owned[1]);
    vkcu_log_target_swap(prev);
    return ret;
}

int vkcu_verify(vkcu_context *ctx, const vkcu_verify_job *job)
{
    if (!ctx || !job)
        return vkcu_invalid(NULL, 0, "no %s given", ctx ? "verify job" : "context");
    const vkcu_log_target *prev = vkcu_log_target_swap(vkcu_context_log(ctx));
    int ret = VKCU_RESERVED_CHECK(vkcu_verify_job, job, NULL, 0);
    char err[1024] = "";
    if (ret < 0) {
        /* refused and logged */
    } else if (!job->manifests || job->nb_manifests < 1 || job->nb_manifests > 64)
        ret = vkcu_invalid(NULL, 0, "%d manifests given: 1 to 64 are needed", job->manifests ? job->nb_manifests : 0);
    else if (job->jobs < 1 || job->jobs > 64)
        ret = vkcu_invalid(NULL, 0, "%s %d is out of range [1, 64] (cases at once)", VKCU_SETTING("jobs"), job->jobs);
    else if (!(job->timeout >= 0 && job->timeout <= 1e6))
        ret = vkcu_invalid(NULL, 0, "%s %g s is out of range [0, 1e6]", VKCU_SETTING("timeout"), job->timeout);
    else if (job->nb_cases < 0 || (job->nb_cases && !job->cases))
        ret = vkcu_invalid(NULL, 0, "%d case names given without a list", job->nb_cases);
    else if (!job->out)
        ret = vkcu_invalid(NULL, 0, "verify needs a stream for its lines");
    else if (job->timing < VKCU_TIMING_FFMPEG || job->timing > VKCU_TIMING_DECODED)
        ret = vkcu_invalid(NULL, 0, "%s %d is not ffmpeg or decoded", VKCU_SETTING("timing"), (int)job->timing);
    else {
        vkcu_job_params base;
        vkcu_context_job_params(ctx, &base);
        base.progress = 0;
        vkcu_verify_params vp;
        vkcu_verify_params_default(&vp);
        vp.base = &base;
        vp.backend_override = job->override_backend ? (int)base.settings.backend : -1;
        vp.update = job->update;
        vp.allow_outside = job->allow_outside;
        vp.junit = job->junit;
        vp.overwrite = job->overwrite;
        vp.cases = job->cases;
        vp.nb_cases = job->nb_cases;
        vp.out = job->out;
        vp.jobs = job->jobs;
        vp.timeout = job->timeout;
        vp.fail_fast = job->fail_fast;
        vp.summary = job->summary;
        vp.html = job->html;
        vp.timing = job->timing;
        vp.exclude_concealed = job->exclude_concealed;
        ret = vkcu_verify_run(job->manifests, job->nb_manifests, &vp, err, sizeof(err));
        if (ret < 0 && ret != VKCU_ERR_MISMATCH)
            LOGE("%s", err[0] ? err : "verify failed");
    }
    vkcu_log_target_swap(prev);
    return ret;
}
