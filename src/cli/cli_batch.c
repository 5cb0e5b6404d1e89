/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The `batch` and `pipelines` verbs. Argument parsing only: presets are
 * loaded by preset.c, folders run by batch.c.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch.h"
#include "cli.h"
#include "regress/compare.h"
#include "util/log.h"
#include "util/number.h"
#include "batch/preset.h"

/* ---- vkcu pipelines ---- */

static void print_preset(const vkcu_preset *ps, FILE *out)
{
    fprintf(out, "%s: %s\n  file: %s\n  chain: %s\n", ps->name, ps->description, ps->path,
            ps->chain[0] ? ps->chain : "(none)");
    if (ps->sink == VKCU_SINK_HASH) {
        fprintf(out, "  output: hash %s, %s\n", vkcu_hash_algo_id(ps->hash_algo),
                vkcu_hash_format_id(ps->hash_format));
    } else {
        fprintf(out, "  output: encode with %s", ps->encoder[0] ? ps->encoder : "the container's default encoder");
        if (ps->crf >= 0)
            fprintf(out, ", crf %d", ps->crf);
        if (ps->encoder_preset[0])
            fprintf(out, ", preset %s", ps->encoder_preset);
        if (ps->bitrate)
            fprintf(out, ", %lld bit/s", (long long)ps->bitrate);
        if (ps->gop)
            fprintf(out, ", gop %d", ps->gop);
        if (ps->encoder_opts[0])
            fprintf(out, ", %s", ps->encoder_opts);
        fputc('\n', out);
    }
    fprintf(out, "  extension: %s\n", vkcu_preset_extension(ps));
}

static void list_operators(FILE *out)
{
    fprintf(out, "\nOperators (--chain 'name=key=value:key=value,name2=...', or one per 'op' line of a preset):\n");
    /* each operator's keys, defaults and accuracy, from the one registry */
    const char *name;
    for (int i = 0; (name = vkcu_operator_name(i)); i++)
        vkcu_operator_describe(name, out);
}

typedef struct listed {
    char name[128];
    char path[4096 + 256];
} listed;

static int cmp_listed(const void *a, const void *b)
{
    return strcmp(((const listed *)a)->name, ((const listed *)b)->name);
}

static int list_pipelines(int show_paths)
{
    char dirs[8][4096];
    int nd = vkcu_preset_dirs(dirs, 8);
    if (nd == 0) {
        fprintf(stderr, "vkcu: error: no pipelines folder found (install vkcu, or set VKCU_PIPELINES to a folder "
                        "of .pipe files)\n");
        return VKCU_EXIT_INPUT;
    }
    listed *v = NULL;
    int n = 0, cap = 0, bad = 0;
    for (int d = 0; d < nd; d++) {
        DIR *dir = opendir(dirs[d]);
        if (!dir)
            continue;
        struct dirent *e;
        while ((e = readdir(dir))) {
            size_t len = strlen(e->d_name), el = strlen(VKCU_PRESET_EXT);
            if (e->d_name[0] == '.' || len <= el || strcmp(e->d_name + len - el, VKCU_PRESET_EXT))
                continue;
            char name[128];
            snprintf(name, sizeof(name), "%.*s", (int)(len - el), e->d_name);
            int seen = 0;
            for (int i = 0; i < n; i++)
                seen |= !strcmp(v[i].name, name); /* an earlier folder shadows it */
            if (seen)
                continue;
            if (n == cap) {
                cap = cap ? cap * 2 : 32;
                listed *nv = realloc(v, (size_t)cap * sizeof(*v));
                if (!nv) {
                    closedir(dir);
                    free(v);
                    return VKCU_EXIT_FAIL;
                }
                v = nv;
            }
            snprintf(v[n].name, sizeof(v[n].name), "%s", name);
            snprintf(v[n].path, sizeof(v[n].path), "%.4000s/%.255s", dirs[d], e->d_name);
            n++;
        }
        closedir(dir);
    }
    qsort(v, (size_t)n, sizeof(*v), cmp_listed);
    for (int i = 0; i < n; i++) {
        vkcu_preset ps;
        char err[1024];
        if (vkcu_preset_load(v[i].path, &ps, err, sizeof(err)) < 0) {
            fprintf(stderr, "vkcu: error: %s\n", err);
            bad++;
            continue;
        }
        if (show_paths)
            printf("%-18s %s\n%-18s   %s\n", ps.name, ps.description, "", ps.path);
        else
            printf("%-18s %s\n", ps.name, ps.description);
    }
    free(v);
    list_operators(stdout);
    return bad ? VKCU_EXIT_USAGE : 0;
}

typedef struct pipelines_args {
    const char **names;
    int nb_names, show_paths;
} pipelines_args;

static int pipelines_apply(void *ctx, const cli_option *o, const char *arg, const cli_value *v)
{
    pipelines_args *a = ctx;
    (void)v;
    if (!o)
        a->names[a->nb_names++] = arg;
    else if (o->id == OPT_PATHS)
        a->show_paths = 1;
    else
        return cli_apply_no_operands("pipelines", o, arg, v);
    return 0;
}

int cli_main_pipelines(int argc, char **argv)
{
    int bad = 0;
    pipelines_args a = { .names = calloc((size_t)argc, sizeof(*a.names)) };
    if (!a.names)
        return VKCU_EXIT_FAIL;
    int status = cli_parse(CLI_PIPELINES, argc, argv, pipelines_apply, &a);
    if (status >= 0) {
        free(a.names);
        return status;
    }
    const char **names = a.names;
    int nb_names = a.nb_names, show_paths = a.show_paths;
    if (!nb_names) {
        free(names);
        return list_pipelines(show_paths);
    }
    for (int i = 0; i < nb_names; i++) {
        vkcu_preset ps;
        char err[1024];
        int ret = vkcu_preset_load(names[i], &ps, err, sizeof(err));
        if (ret < 0 && !strchr(names[i], '/') && vkcu_operator_describe(names[i], stdout) == 0)
            continue; /* no preset by that name, but an operator */
        if (ret < 0) {
            fprintf(stderr, "vkcu: error: %s\n", err);
            bad = bad ? bad : vkcu_exit_code(ret);
            continue;
        }
        print_preset(&ps, stdout);
    }
    free(names);
    return bad;
}

/* ---- vkcu batch ---- */

/* "i/N": shard i (from 0) of N. */
static int parse_shard(const char *v, int *index, int *count)
{
    char first[32];
    const char *slash = strchr(v, '/');
    int64_t i, n;
    if (!slash || (size_t)(slash - v) >= sizeof(first))
        return -1;
    memcpy(first, v, (size_t)(slash - v));
    first[slash - v] = 0;
    if (vkcu_parse_int(slash + 1, 1, 1000000, &n) < 0 || vkcu_parse_int(first, 0, n - 1, &i) < 0)
        return -1;
    *index = (int)i;
    *count = (int)n;
    return 0;
}

typedef struct batch_args {
    vkcu_batch_params bp;
    const char *dirs[2];
    const char **include, **exclude;
    const char *devices, *shard, *container;
    long shard_count;
} batch_args;

static int batch_apply(void *ctx, const cli_option *o, const char *arg, const cli_value *v)
{
    batch_args *a = ctx;
    vkcu_batch_params *bp = &a->bp;
    if (!o) {
        if (a->dirs[1])
            return cli_usage_error("batch: more than two folders ('%s'); usage: vkcu batch IN_DIR OUT_DIR [options]",
                                   arg);
        a->dirs[a->dirs[0] ? 1 : 0] = arg;
        return 0;
    }
    switch (o->id) {
    case OPT_RECURSIVE: bp->recursive = 1; break;
    case OPT_RESUME: bp->resume = 1; break;
    case OPT_OVERWRITE: bp->overwrite = 1; break;
    case OPT_DRY_RUN: bp->dry_run = 1; break;
    case OPT_JOBS: bp->jobs = (int)v->i; break;
    case OPT_INCLUDE: a->include[bp->nb_include++] = arg; break;
    case OPT_EXCLUDE: a->exclude[bp->nb_exclude++] = arg; break;
    case OPT_REPORT: bp->report_path = arg; break;
    case OPT_DEVICES: a->devices = arg; break;
    case OPT_SHARD:
        a->shard = arg;
        if (parse_shard(arg, &bp->shard_index, &bp->shard_count) < 0)
            return cli_usage_error("--shard: '%s' is not i/N with N in [1, 1000000] and 0 <= i < N (e.g. 0/4)", arg);
        break;
    case OPT_SHARD_COUNT: a->shard_count = (long)v->i; break;
    case OPT_CONTAINER: a->container = arg; break;
    default: return cli_job_apply(&bp->job, CLI_BATCH, o, arg, v);
    }
    return 0;
}

int cli_main_batch(int argc, char **argv)
{
    batch_args a = { .dirs = { NULL, NULL } };
    vkcu_batch_params *bpp = &a.bp;
    vkcu_batch_params_default(bpp);
    vkcu_job_params *p = &bpp->job;
    p->sink = VKCU_SINK_ENCODE;
    const char **dirs = a.dirs;
    const char **include = a.include = calloc((size_t)argc, sizeof(char *));
    const char **exclude = a.exclude = calloc((size_t)argc, sizeof(char *));
    int ret = VKCU_EXIT_USAGE;
    if (!include || !exclude)
        goto done;
    ret = cli_parse(CLI_BATCH, argc, argv, batch_apply, &a);
    if (ret >= 0)
        goto done;
    ret = VKCU_EXIT_USAGE;
    vkcu_batch_params bp = a.bp;
    p = &bp.job;
    const char *devices = a.devices, *shard = a.shard, *container = a.container;
    long shard_count = a.shard_count;
    if (!dirs[1]) {
        cli_usage_error("batch: %s; usage: vkcu batch IN_DIR OUT_DIR [options]",
                        dirs[0] ? "no output folder" : "no input and output folders");
        goto done;
    }
    bp.in_dir = dirs[0];
    bp.out_dir = dirs[1];
    bp.include = include;
    bp.exclude = exclude;
    bp.progress = p->progress;
    p->progress = 0;
    char ext[32];
    const vkcu_preset *preset = cli_job_preset();
    if (preset) {
        bp.pipeline = preset->name;
        p->sink = preset->sink;
        bp.extension = vkcu_preset_extension(preset);
    }
    if (container) {
        const char *e = *container == '.' ? container + 1 : container;
        if (!*e || strlen(e) > 16 || strchr(e, '/')) {
            cli_usage_error("--container: '%s' is not a file extension (mkv, mp4, nut, ...)", container);
            goto done;
        }
        snprintf(ext, sizeof(ext), ".%s", e);
        bp.extension = ext;
    }

    char err[1024], source[160];
    if (!shard) {
        int got = vkcu_batch_shard_from_env((int)shard_count, &bp.shard_index, &bp.shard_count, source,
                                            sizeof(source), err, sizeof(err));
        if (got < 0) {
            cli_usage_error("batch: %s", err);
            goto done;
        }
        if (got > 0)
            LOGV("batch: shard %d/%d from %s", bp.shard_index, bp.shard_count, source);
    } else if (shard_count && shard_count != bp.shard_count) {
        cli_usage_error("--shard %s and --shard-count %ld disagree", shard, shard_count);
        goto done;
    }

    if (devices) {
        int n = vkcu_batch_parse_devices(devices, bp.devices, VKCU_BATCH_MAX_DEVICES, err, sizeof(err));
        if (n < 0) {
            cli_usage_error("%s", err);
            goto done;
        }
        if (p->backend == VKCU_BACKEND_CPU) {
            n = 0; /* the CPU backend has no devices to spread over */
        } else {
            /* Validate the ordinals against this machine (after the list, in the same array). */
            int avail = vkcu_batch_parse_devices("all", bp.devices + n, VKCU_BATCH_MAX_DEVICES - n, err, sizeof(err));
            if (avail == 0 && p->backend == VKCU_BACKEND_AUTO) {
                LOGV("--devices %s: no CUDA device here; backend auto runs on the CPU", devices);
                n = 0;
            } else {
                for (int k = 0; k < n; k++)
                    if (avail > 0 && bp.devices[k] >= avail) {
                        cli_usage_error("--devices: there is no CUDA device %d (this machine has %d)", bp.devices[k],
                                        avail);
                        goto done;
                    }
            }
        }
        bp.nb_devices = n;
    }

    cli_install_signals();
    vkcu_batch_result r;
    err[0] = 0;
    int err_code = vkcu_batch_run(&bp, &r, err, sizeof(err));
    if (err[0])
        fprintf(stderr, "vkcu: error: %s\n", err);
    if (bp.dry_run || (err_code < 0 && r.total == 0)) {
        /* A dry run prints its own plan; a batch that could not start has no summary. */
        ret = vkcu_exit_code(err_code < 0 ? err_code : 0);
        goto done;
    }
    fprintf(stderr, "batch: %d done, %d skipped, %d failed", r.done, r.skipped, r.failed);
    if (r.interrupted || r.not_started)
        fprintf(stderr, ", %d interrupted, %d not started", r.interrupted, r.not_started);
    fprintf(stderr, " (%d files", r.total);
    if (bp.shard_count > 1)
        fprintf(stderr, " in shard %d/%d", bp.shard_index, bp.shard_count);
    fprintf(stderr, ", %lld frames, %.1f s)\n", (long long)r.frames, r.seconds);
    ret = vkcu_exit_code(err_code < 0 ? err_code : 0);
done:
    free(include);
    free(exclude);
    return ret;
}
