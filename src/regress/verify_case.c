/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One case of `vkcu verify`: the job made from the front end's settings
 * and the case's keys, run through the library (vkcu_job_run with the hash
 * sink for a hash case, vkcu_compare_run for a metric case), its result,
 * and --update's rewrite of the expectation.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "manifest_priv.h"
#include "core/outfile.h"
#include "util/log.h"
#include "util/xxhash64.h"
#include "batch/preset.h"
#include "report.h"

int vkcu_verify_wanted(const vkcu_verify_params *p, const char *name)
{
    if (!p->cases || !p->nb_cases)
        return 1;
    for (int i = 0; i < p->nb_cases; i++)
        if (!fnmatch(p->cases[i], name, 0))
            return 1;
    return 0;
}

static const char *backend_name(int b)
{
    return b == VKCU_BACKEND_CPU ? "cpu" : b == VKCU_BACKEND_GPU ? "gpu" : "auto";
}

/* The job every case starts from: the front end's options, then the case's
 * keys; a pipeline preset (loaded into *preset, which the job points into)
 * sets the chain and, for hash presets, the algorithm. */
static int case_job(const vkcu_manifest *m, const vkcu_manifest_case *c, const vkcu_verify_params *p,
                    vkcu_job_params *job, vkcu_preset *preset, int *backend, char *err, size_t errlen)
{
    if (p->base)
        *job = *p->base;
    else
        vkcu_job_params_default(job);
    job->progress = 0;
    job->job.start_time = c->start_time;
    job->job.duration = c->duration;
    job->job.start_frame = c->start_frame;
    job->job.frame_count = c->frame_count;
    *backend = p->backend_override >= 0 ? p->backend_override : c->backend;
    job->settings.backend = (enum vkcu_backend) * backend;
    job->job.chain = c->chain;
    job->job.max_frames = c->max_frames;
    job->job.strict = c->strict;
    job->job.timing = c->timing >= 0 ? (enum vkcu_timing)c->timing : p->timing;
    job->job.hash_algo = c->algo;
    if (c->pipeline) {
        /* A file (a '/' or ".pipe") is relative to the manifest; a name is searched as --pipeline does. */
        size_t n = strlen(c->pipeline);
        int is_file = strchr(c->pipeline, '/') || (n > 5 && !strcmp(c->pipeline + n - 5, VKCU_PRESET_EXT));
        char perr[600];
        char *where = is_file ? vkcu_manifest_path(m, c->pipeline, perr, sizeof(perr)) : strdup(c->pipeline);
        if (!where) {
            snprintf(err, errlen, "pipeline %s", perr);
            return VKCU_ERR_USAGE;
        }
        int ret = vkcu_preset_load(where, preset, err, errlen);
        free(where);
        if (ret < 0)
            return ret;
        vkcu_preset_apply_params(preset, job);
        if (!(preset->sink == VKCU_SINK_HASH && !c->algo_set))
            job->job.hash_algo = c->algo;
    }
    return 0;
}

int vkcu_verify_write_text(const char *path, const char *text, size_t len, int overwrite, const char *const *inputs,
                           char *err, size_t errlen)
{
    char tmp[4200];
    int ret = vkcu_outfile_begin(path, overwrite, inputs, tmp, sizeof(tmp), err, errlen);
    if (ret < 0)
        return VKCU_ERR_OUTPUT;
    FILE *f = vkcu_outfile_fopen(tmp, "w");
    if (f)
        fwrite(text, 1, len, f); /* a short write leaves the stream's error flag for the close */
    int ok = f && vkcu_outfile_fclose(f, tmp) == 0;
    if (!ok) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        vkcu_outfile_abort(tmp);
        return VKCU_ERR_OUTPUT;
    }
    ret = vkcu_outfile_commit(tmp, path, err, errlen);
    return ret < 0 ? VKCU_ERR_OUTPUT : 0;
}

/* `path` (from vkcu_manifest_path) relative to the manifest's folder, or
 * NULL when it does not start there. */
static const char *rel_to_folder(const vkcu_manifest *m, const char *path)
{
    size_t dn = strlen(m->dir);
    return !strchr(path, '/') && !strcmp(m->dir, ".") ? path
           : !strncmp(path, m->dir, dn) && path[dn] == '/' ? path + dn + 1 : NULL;
}

/* A file below the manifest's folder (path from vkcu_manifest_path, checked
 * by vkcu_manifest_inside_folder), written relative to the folder held open
 * since the manifest was loaded; elsewhere (allow_outside) by its path. */
static int write_confined(const vkcu_manifest *m, int confined, const char *path, const char *text, size_t len,
                          const char *const *inputs, char *err, size_t errlen)
{
    const char *rel = rel_to_folder(m, path);
    if (!confined || m->dirfd < 0 || !rel)
        return vkcu_verify_write_text(path, text, len, 1, inputs, err, errlen);
    int ret = vkcu_outfile_write_at(m->dirfd, rel, path, text, len, 1, inputs, err, errlen);
    return ret < 0 ? VKCU_ERR_OUTPUT : 0;
}

/* The manifest file now, as load_lines (manifest.c) saw it at the load:
 * the file --update writes (below the folder held open), its size, time
 * and the hash of its bytes. -1 with errno when it cannot be read. */
static int manifest_state_now(const vkcu_manifest *m, vkcu_manifest_file_state *now)
{
    const char *rel = rel_to_folder(m, m->path);
    int fd = m->dirfd >= 0 && rel ? openat(m->dirfd, rel, O_RDONLY | O_CLOEXEC) : open(m->path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return -1;
    }
    vkcu_xxh64_state h;
    vkcu_xxh64_init(&h, 0);
    uint8_t buf[65536];
    long long size = 0;
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        vkcu_xxh64_update(&h, buf, (size_t)n);
        size += n;
    }
    close(fd);
    *now = (vkcu_manifest_file_state){ size, (long long)st.st_mtim.tv_sec, (long long)st.st_mtim.tv_nsec,
                                       vkcu_xxh64_digest(&h), 1 };
    return 0;
}

int vkcu_manifest_unchanged(const vkcu_manifest *m, char *err, size_t errlen)
{
    vkcu_manifest_file_state now;
    char what[160];
    if (!m->file.known)
        return 0;
    if (manifest_state_now(m, &now) < 0)
        snprintf(what, sizeof(what), "it cannot be read now: %s", strerror(errno));
    else if (now.size != m->file.size)
        snprintf(what, sizeof(what), "it had %lld bytes, now %lld", m->file.size, now.size);
    else if (now.mtime_sec != m->file.mtime_sec || now.mtime_nsec != m->file.mtime_nsec)
        snprintf(what, sizeof(what), "its modification time changed");
    else if (now.hash != m->file.hash)
        snprintf(what, sizeof(what), "its content changed");
    else
        return 0;
    snprintf(err, errlen, "%s: changed while the cases ran (%s); it was not rewritten, so that nothing written "
             "into it meanwhile is lost (run the update again)", m->path, what);
    return VKCU_ERR_OUTPUT;
}

/* Replaces a case's inline frame lines with the frame lines of `text`. */
static int update_inline(vkcu_manifest *m, vkcu_manifest_case *c, const char *text)
{
    int nb_new = 0;
    for (const char *p = text; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
        if ((*p != '#' || vkcu_manifest_is_concealed_mark(p)) && *p != '\n')
            nb_new++;
    int first = c->inline_first >= 0 ? c->inline_first : c->last_line + 1;
    int nb_old = c->inline_first >= 0 ? c->inline_last - c->inline_first + 1 : 0;
    int total = m->nb_lines - nb_old + nb_new;
    char **lines = calloc((size_t)(total ? total : 1), sizeof(*lines));
    if (!lines)
        return AVERROR(ENOMEM);
    int k = 0;
    for (int i = 0; i < first; i++)
        lines[k++] = m->lines[i];
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if ((*p != '#' || vkcu_manifest_is_concealed_mark(p)) && n)
            lines[k++] = strndup(p, n);
        p += n + (nl ? 1 : 0);
    }
    for (int i = first; i < first + nb_old; i++)
        free(m->lines[i]);
    for (int i = first + nb_old; i < m->nb_lines; i++)
        lines[k++] = m->lines[i];
    for (int i = 0; i < k; i++)
        if (!lines[i])
            return AVERROR(ENOMEM);
    free(m->lines);
    m->lines = lines;
    m->nb_lines = k;
    int shift = nb_new - nb_old;
    for (int i = 0; i < m->nb_cases; i++) {
        vkcu_manifest_case *o = &m->cases[i];
        if (o->line - 1 > first) {
            o->line += shift;
            o->last_line += shift;
            if (o->inline_first >= 0)
                o->inline_first += shift, o->inline_last += shift;
        }
    }
    c->inline_first = nb_new ? first : -1;
    c->inline_last = nb_new ? first + nb_new - 1 : -1;
    c->last_line = nb_new ? first + nb_new - 1 : c->last_line;
    return 0;
}

int vkcu_manifest_save(vkcu_manifest *m, char *err, size_t errlen)
{
    size_t len = 0;
    for (int i = 0; i < m->nb_lines; i++)
        len += strlen(m->lines[i]) + 1;
    char *text = malloc(len + 1), *p = text;
    if (!text)
        return AVERROR(ENOMEM);
    for (int i = 0; i < m->nb_lines; i++)
        p += sprintf(p, "%s\n", m->lines[i]);
    /* --update rewrites the manifest itself: the one input it may replace,
     * and only as it was read. */
    int ret = vkcu_manifest_unchanged(m, err, errlen);
    if (ret >= 0)
        ret = write_confined(m, 1, m->path, text, len, NULL, err, errlen);
    if (ret >= 0 && m->file.known) {
        /* What is there now is what this run wrote; the time is read back
         * (a write by someone else after the rename still differs in its
         * bytes from these). */
        const char *rel = rel_to_folder(m, m->path);
        struct stat st;
        vkcu_xxh64_state h;
        vkcu_xxh64_init(&h, 0);
        vkcu_xxh64_update(&h, (const uint8_t *)text, len);
        int ok = (m->dirfd >= 0 && rel ? fstatat(m->dirfd, rel, &st, 0) : stat(m->path, &st)) == 0;
        m->file = (vkcu_manifest_file_state){ (long long)len, ok ? (long long)st.st_mtim.tv_sec : -1,
                                              ok ? (long long)st.st_mtim.tv_nsec : -1, vkcu_xxh64_digest(&h), 1 };
    }
    free(text);
    return ret;
}

/* A hash case's expected frames into *want, from its hashes file (when it
 * names one) or its inline lines; *have_want: there are some. 1 when the
 * case failed here (cr says why), else 0 or an error. */
static int load_expected_hashes(const vkcu_manifest *m, const vkcu_manifest_case *c, const vkcu_verify_params *p,
                                const char *sidecar, const vkcu_hash_list *got, vkcu_hash_list *want, int *have_want,
                                case_result *cr)
{
    char perr[600];
    if (sidecar) {
        struct stat st;
        if (stat(sidecar, &st) < 0 && !p->update) {
            snprintf(cr->message, sizeof(cr->message), "no expected hashes: %s does not exist (record them: rerun "
                     "%s with %s)", sidecar, m->path, VKCU_SETTING_IS("update", "1"));
            cr->status = CASE_FAIL;
            return 1;
        }
        if (stat(sidecar, &st) == 0) {
            if (vkcu_hash_list_load(sidecar, want, perr, sizeof(perr)) < 0) {
                snprintf(cr->message, sizeof(cr->message), "expected hashes: %s", perr);
                cr->status = CASE_FAIL;
                return 1;
            }
            *have_want = 1;
        }
    } else if (c->inline_first >= 0) {
        size_t len = 0;
        for (int i = c->inline_first; i <= c->inline_last; i++)
            len += strlen(m->lines[i]) + 1;
        char *text = malloc(len + 1), *q = text;
        if (!text)
            return AVERROR(ENOMEM);
        for (int i = c->inline_first; i <= c->inline_last; i++)
            q += sprintf(q, "%s\n", m->lines[i]);
        char name[600];
        snprintf(name, sizeof(name), "%s (case %s)", m->path, c->name);
        int pr = vkcu_hash_list_parse(text, len, name, want, perr, sizeof(perr));
        free(text);
        if (pr < 0) {
            snprintf(cr->message, sizeof(cr->message), "%s", perr);
            cr->status = CASE_FAIL;
            return 1;
        }
        want->tb = got->tb;
        *have_want = 1;
    }
    return 0;
}

/* A hash case's verdict: the frames its job made (got; their text in *out)
 * against the expected ones, into cr. --update writes them (into the
 * hashes file, or the manifest's lines: *dirty); a held case keeps them
 * instead, taking *out and *sidecar, for verify.c to write. */
static int hash_case_verdict(vkcu_manifest *m, vkcu_manifest_case *c, const vkcu_verify_params *p,
                             const vkcu_job_params *job, const char *input, char **sidecar, char **out, size_t outlen,
                             const vkcu_hash_list *got, const vkcu_hash_list *want, int have_want, const char *ran,
                             case_result *cr, int *dirty, char *err, size_t errlen)
{
    int ret = 0;
    hash_diff d = { 0 };
    const int exclude = c->exclude_concealed >= 0 ? c->exclude_concealed : p->exclude_concealed;
    char *marks = have_want && p->html ? malloc((size_t)got->nb + want->nb) : NULL;
    int nb_marks = have_want ? vkcu_manifest_diff_lists(got, want, exclude, &d, marks) : 0;
    int same = have_want && !d.changed && !d.missing && !d.extra;
    if (marks && !same && !p->update) {
        cr->marks = marks;
        cr->nb_marks = nb_marks;
    } else {
        free(marks);
    }
    if (same) {
        char concealed[128];
        vkcu_manifest_describe_concealed(&d, exclude, concealed, sizeof(concealed));
        snprintf(cr->message, sizeof(cr->message), "%d frames, %s hashes equal%s (%s)", got->nb,
                 vkcu_hash_algo_name(job->job.hash_algo), concealed, ran);
        cr->status = CASE_PASS;
    } else if (!p->update) {
        if (!have_want)
            snprintf(cr->message, sizeof(cr->message),
                     "no expected hashes (record them: rerun %s with %s)", m->path, VKCU_SETTING_IS("update", "1"));
        else {
            char what[700];
            vkcu_manifest_describe_diff(&d, exclude, got->nb, want->nb, what, sizeof(what));
            snprintf(cr->message, sizeof(cr->message), "%s (%s; if intended: rerun %s with %s)", what, ran,
                     m->path, VKCU_SETTING_IS("update", "1"));
        }
        cr->status = CASE_FAIL;
    } else {
        char what[700];
        if (!have_want)
            snprintf(what, sizeof(what), "recorded %d frames", got->nb);
        else
            vkcu_manifest_describe_diff(&d, exclude, got->nb, want->nb, what, sizeof(what));
        if (*sidecar && cr->hold) {
            /* verify.c writes it when every case has run (vkcu_verify_write_held) */
        } else if (*sidecar) {
            const char *inputs[] = { input, m->path, job->job.pipeline_file, NULL };
            /* --update: replacing is the point */
            ret = write_confined(m, !p->allow_outside, *sidecar, *out, outlen, inputs, err, errlen);
        } else {
            ret = update_inline(m, c, *out);
            *dirty = 1;
        }
        if (ret < 0)
            return ret;
        if (cr->hold)
            snprintf(cr->message, sizeof(cr->message), "%s; writes %s when every case has run", what,
                     *sidecar ? *sidecar : m->path);
        else
            snprintf(cr->message, sizeof(cr->message), "%s; wrote %s", what, *sidecar ? *sidecar : m->path);
        cr->status = CASE_UPDATED;
    }
    if (cr->hold && *sidecar && (cr->status == CASE_PASS || cr->status == CASE_UPDATED)) {
        /* The frames this case wants in its file, and what their write must not replace. */
        cr->held = *out;
        cr->held_len = outlen;
        cr->held_file = *sidecar;
        *out = *sidecar = NULL;
        if (!(cr->held_input = strdup(input)) ||
            (job->job.pipeline_file && !(cr->held_preset = strdup(job->job.pipeline_file))))
            ret = AVERROR(ENOMEM);
    }
    return ret;
}

/* A hash case: the job's hash output against the expected frames. */
static int run_hash_case(vkcu_manifest *m, vkcu_manifest_case *c, const vkcu_verify_params *p, vkcu_job_params *job,
                         case_result *cr, int *dirty, char *err, size_t errlen)
{
    char perr[600];
    char *input = vkcu_manifest_path(m, c->input, perr, sizeof(perr));
    char *sidecar = NULL, *out = NULL;
    size_t outlen = 0;
    vkcu_hash_list got = { 0 }, want = { 0 };
    int ret = 0, have_want = 0;
    if (!input) {
        snprintf(cr->message, sizeof(cr->message), "input %s", perr);
        cr->status = CASE_FAIL;
        goto done;
    }
    if (c->hashes && !(sidecar = vkcu_manifest_path(m, c->hashes, perr, sizeof(perr)))) {
        snprintf(cr->message, sizeof(cr->message), "hashes %s", perr);
        cr->status = CASE_FAIL;
        goto done;
    }
    if (sidecar && !p->allow_outside && !vkcu_manifest_inside_folder(m, sidecar, perr, sizeof(perr))) {
        snprintf(cr->message, sizeof(cr->message), "hashes '%s' %s: it must stay inside the manifest's folder %s "
                 "(write it relative to the manifest, or use %s)", c->hashes, perr, m->dir,
                 VKCU_SETTING_IS("allow_outside", "1"));
        cr->status = CASE_FAIL;
        goto done;
    }
    FILE *mem = open_memstream(&out, &outlen);
    if (!mem) {
        ret = AVERROR(ENOMEM);
        goto done;
    }
    job->job.input = input;
    job->job.sink = VKCU_SINK_HASH;
    job->job.hash_out = mem;
    job->job.hash_format = VKCU_HASH_FORMAT_FRAMEMD5;
    vkcu_job_result res;
    int jr = vkcu_job_run(job, &res);
    fclose(mem);
    if (jr == VKCU_ERR_INTERRUPT) {
        ret = jr;
        snprintf(err, errlen, "%s", res.error);
        goto done;
    }
    if (jr < 0) {
        snprintf(cr->message, sizeof(cr->message), "%s", res.error[0] ? res.error : "the job failed");
        cr->status = CASE_FAIL;
        goto done;
    }
    int ran_on = res.path == VKCU_PATH_CPU ? VKCU_BACKEND_CPU : VKCU_BACKEND_GPU;
    if (c->backends_mask && !(c->backends_mask & (1 << ran_on))) {
        snprintf(cr->message, sizeof(cr->message), "ran on %s; the expectation holds on %s only", backend_name(ran_on),
                 backend_name(c->backends_mask & (1 << VKCU_BACKEND_CPU) ? VKCU_BACKEND_CPU : VKCU_BACKEND_GPU));
        cr->status = CASE_SKIP;
        goto done;
    }
    if (vkcu_hash_list_parse(out, outlen, input, &got, perr, sizeof(perr)) < 0) {
        snprintf(cr->message, sizeof(cr->message), "cannot read back the hashes: %s", perr);
        cr->status = CASE_FAIL;
        goto done;
    }
    int le = load_expected_hashes(m, c, p, sidecar, &got, &want, &have_want, cr);
    if (le < 0)
        ret = le;
    if (le)
        goto done;
    if (have_want && want.algo_known && want.algo != job->job.hash_algo) {
        snprintf(cr->message, sizeof(cr->message), "expected hashes are %s, the case asks for %s (set algo = %s)",
                 vkcu_hash_algo_name(want.algo), vkcu_hash_algo_name(job->job.hash_algo), vkcu_hash_algo_name(want.algo));
        cr->status = CASE_FAIL;
        goto done;
    }
    const char *ran = res.path == VKCU_PATH_CPU ? "cpu" : "gpu";
    ret = hash_case_verdict(m, c, p, job, input, &sidecar, &out, outlen, &got, &want, have_want, ran, cr, dirty, err,
                            errlen);
done:
    vkcu_hash_list_free(&got);
    vkcu_hash_list_free(&want);
    free(out);
    free(input);
    free(sidecar);
    return ret;
}

/* A metric case: the input (with the case's processing) against a reference. */
static int run_metric_case(vkcu_manifest *m, vkcu_manifest_case *c, const vkcu_verify_params *p, vkcu_job_params *job,
                           case_result *cr, char *err, size_t errlen)
{
    char perr[600];
    char *input = vkcu_manifest_path(m, c->input, perr, sizeof(perr)), *ref = NULL;
    if (!input || !(ref = vkcu_manifest_path(m, c->reference, perr, sizeof(perr)))) {
        snprintf(cr->message, sizeof(cr->message), "%s %s", input ? "reference" : "input", perr);
        cr->status = CASE_FAIL;
        free(input);
        return 0;
    }
    vkcu_job_params job_b = *job;
    job_b.job.chain = NULL; /* the reference is compared as it is */
    vkcu_compare_params cp;
    vkcu_compare_params_default(&cp);
    cp.a = input;
    cp.b = ref;
    cp.job = job;
    cp.job_b = &job_b;
    cp.max_diff = c->max_diff;
    cp.min_psnr = c->min_psnr;
    cp.min_vmaf = c->min_vmaf;
    cp.vmaf_ref_b = 1; /* the case's reference is VMAF's reference */
    cp.timing = job->job.timing;
    cp.exclude_concealed = c->exclude_concealed >= 0 ? c->exclude_concealed : p->exclude_concealed;
    if (p->html)
        cp.plot_out = &cr->plot;
    vkcu_compare_result r;
    int ret = vkcu_compare_run(&cp, &r);
    if (ret != VKCU_ERR_MISMATCH)
        vkcu_compare_plot_free(&cr->plot); /* a page shows the failing cases' plots */
    if (ret == VKCU_ERR_INTERRUPT) {
        snprintf(err, errlen, "%s", r.error);
    } else if (ret == 0) {
        cr->status = CASE_PASS;
        if (r.metrics && r.vmaf)
            snprintf(cr->message, sizeof(cr->message), "%s; VMAF mean %.2f (lowest %.2f), PSNR min %.2f dB, max diff %d",
                     r.verdict, r.vmaf_mean, r.vmaf_min, r.psnr_min, r.max_diff);
        else if (r.metrics)
            snprintf(cr->message, sizeof(cr->message), "%s; PSNR min %.2f dB, max diff %d", r.verdict, r.psnr_min,
                     r.max_diff);
        else
            snprintf(cr->message, sizeof(cr->message), "%s", r.verdict);
    } else {
        cr->status = CASE_FAIL;
        snprintf(cr->message, sizeof(cr->message), "%s", ret == VKCU_ERR_MISMATCH ? r.verdict : r.error);
        ret = 0;
    }
    free(input);
    free(ref);
    return ret == VKCU_ERR_INTERRUPT ? ret : 0;
}

int vkcu_verify_write_held(const case_result *cr, const vkcu_verify_params *p, char *err, size_t errlen)
{
    const char *inputs[] = { cr->held_input, cr->m->path, cr->held_preset, NULL };
    return write_confined(cr->m, !p->allow_outside, cr->held_file, cr->held, cr->held_len, inputs, err, errlen);
}

void vkcu_verify_free_held(case_result *cr)
{
    free(cr->held);
    free(cr->held_file);
    free(cr->held_input);
    free(cr->held_preset);
    cr->held = cr->held_file = cr->held_input = cr->held_preset = NULL;
}

int vkcu_verify_run_case(vkcu_manifest *m, vkcu_manifest_case *c, const vkcu_verify_params *p, case_result *cr,
                         int *dirty, char *err, size_t errlen)
{
    vkcu_job_params job;
    int backend;
    cr->c = c;
    cr->m = m;
    double t0 = vkcu_now();
    char jerr[1024] = "";
    /* Only a case with a pipeline needs one (a few KB: not for every case of a big suite). */
    vkcu_preset *preset = c->pipeline ? calloc(1, sizeof(*preset)) : NULL;
    if (c->pipeline && !preset)
        return AVERROR(ENOMEM);
    int ret = case_job(m, c, p, &job, preset, &backend, jerr, sizeof(jerr));
    double limit = c->timeout > 0 ? c->timeout : p->timeout;
    if (ret >= 0 && limit > 0)
        job.deadline = t0 + limit;
    if (ret < 0) {
        cr->status = CASE_FAIL;
        snprintf(cr->message, sizeof(cr->message), "%s", jerr);
        ret = 0;
    } else if (c->backends_mask && backend != VKCU_BACKEND_AUTO && !(c->backends_mask & (1 << backend))) {
        cr->status = CASE_SKIP;
        snprintf(cr->message, sizeof(cr->message), "the expectation holds on %s only, not on %s",
                 backend_name(c->backends_mask & (1 << VKCU_BACKEND_CPU) ? VKCU_BACKEND_CPU : VKCU_BACKEND_GPU),
                 backend_name(backend));
    } else if (c->expect == VKCU_EXPECT_METRICS) {
        ret = run_metric_case(m, c, p, &job, cr, err, errlen);
    } else {
        ret = run_hash_case(m, c, p, &job, cr, dirty, err, errlen);
    }
    free(preset);
    cr->seconds = vkcu_now() - t0;
    return ret;
}
