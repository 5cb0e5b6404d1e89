/*
 * The `batch` and `pipelines` verbs and the `--pipeline` job option.
 * Argument parsing only: presets are loaded by preset.c, folders run by
 * batch.c.
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
#include "ops/op.h"
#include "batch/preset.h"

/* The preset of this process's command line. Job params point into it,
 * so it lives as long as the process. */
static vkcu_preset cli_preset;
static int cli_preset_loaded;
static int cli_in_batch;

int cli_pipeline_option(vkcu_job_params *p, const char *arg)
{
    char err[1024];
    if (vkcu_preset_load(arg, &cli_preset, err, sizeof(err)) < 0) {
        fprintf(stderr, "vkcu: error: %s\n", err);
        return -1;
    }
    if (cli_preset.sink == VKCU_SINK_HASH && p->sink == VKCU_SINK_ENCODE && !cli_in_batch) {
        cli_usage_error("--pipeline %s writes frame hashes, not video: use 'vkcu hash INPUT --pipeline %s' "
                        "or 'vkcu batch IN_DIR OUT_DIR --pipeline %s'", arg, arg, arg);
        return -1;
    }
    vkcu_preset_apply(&cli_preset, p);
    cli_preset_loaded = 1;
    return 0;
}

/* ---- vkcu pipelines ---- */

static void print_preset(const vkcu_preset *ps, FILE *out)
{
    fprintf(out, "%s: %s\n  file: %s\n  chain: %s\n", ps->name, ps->description, ps->path,
            ps->chain[0] ? ps->chain : "(none)");
    if (ps->sink == VKCU_SINK_HASH) {
        fprintf(out, "  output: hash %s, %s\n", vkcu_hash_algo_id(ps->hash_algo),
                ps->hash_format == VKCU_HASH_FORMAT_JSON ? "json" : "framemd5");
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

/* An operator's keys, defaults and accuracy: what `--chain` and a
 * preset's `op` lines accept (the registry is the one list). */
static void print_operator(const vkcu_op_class *cls, FILE *out)
{
    static const char *const types[] = { "int", "number", "choice", "text" };
    fprintf(out, "  %-10s %s\n", cls->name, cls->help);
    fprintf(out, "  %-10s accuracy: %s\n", "", cls->accuracy ? cls->accuracy : "(not stated)");
    for (int i = 0; cls->keys && cls->keys[i].name; i++) {
        const vkcu_op_key *k = &cls->keys[i];
        char what[160];
        if (k->type == VKCU_KEY_ENUM)
            snprintf(what, sizeof(what), "%s", k->choices);
        else if (k->type == VKCU_KEY_INT || k->type == VKCU_KEY_FLOAT)
            snprintf(what, sizeof(what), "%s %g..%g", types[k->type], k->min, k->max);
        else
            snprintf(what, sizeof(what), "%s", types[k->type]);
        /* keys without a default say in their help what they follow (the input, the stream) */
        fprintf(out, "  %-10s   %s (%s%s%s): %s\n", "", k->name, what, k->def ? ", default " : "", k->def ? k->def : "",
                k->help);
    }
}

static void list_operators(FILE *out)
{
    fprintf(out, "\nOperators (--chain 'name=key=value:key=value,name2=...', or one per 'op' line of a preset):\n");
    for (int i = 0; vkcu_op_classes[i]; i++)
        print_operator(vkcu_op_classes[i], out);
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

int cli_main_pipelines(int argc, char **argv)
{
    int show_paths = 0, nb_names = 0, bad = 0, opts_done = 0;
    const char **names = calloc((size_t)argc, sizeof(*names));
    if (!names)
        return VKCU_EXIT_FAIL;
    for (int i = 1; i < argc; i++) {
        int operand = cli_operand(argv[i], &opts_done);
        if (operand < 0)
            continue;
        if (operand) {
            names[nb_names++] = argv[i];
            continue;
        }
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            free(names);
            printf("Usage: vkcu pipelines [--paths] [NAME|FILE ...]\n\n"
                   "Without arguments, lists the pipeline presets with one-line descriptions,\n"
                   "then the operators with their keys, defaults and accuracy.\n"
                   "With names or files (a path with a '/' or ending in .pipe), checks each one\n"
                   "strictly and shows what it sets (chain, output, encoder, extension); the\n"
                   "name of an operator (crop, pad, ...) shows that operator's keys.\n\n"
                   "Presets are searched in $VKCU_PIPELINES (':'-separated folders), then\n"
                   "pipelines/ of the source tree, then PREFIX/share/vkcu/pipelines; the first\n"
                   "folder holding a name wins. The format: docs/pipelines.md.\n\n"
                   "  --paths   also show each preset's file\n");
            return 0;
        }
        if (!strcmp(argv[i], "--paths")) {
            show_paths = 1;
            continue;
        }
        free(names);
        return cli_usage_error("pipelines: unknown option '%s' (a file whose name starts with '-' goes after '--')",
                               argv[i]);
    }
    if (!nb_names) {
        free(names);
        return list_pipelines(show_paths);
    }
    for (int i = 0; i < nb_names; i++) {
        vkcu_preset ps;
        char err[1024];
        int ret = vkcu_preset_load(names[i], &ps, err, sizeof(err));
        const vkcu_op_class *op = ret < 0 && !strchr(names[i], '/') ? vkcu_op_find(names[i]) : NULL;
        if (op) { /* no preset by that name, but an operator */
            print_operator(op, stdout);
            continue;
        }
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

static void batch_help(FILE *out)
{
    fputs("Usage: vkcu batch IN_DIR OUT_DIR [options]\n\n"
          "Processes every file of IN_DIR into OUT_DIR (same relative path, the\n"
          "extension the pipeline implies, else .mkv), several streams at once.\n"
          "A failing file never stops the others; outputs appear only when complete.\n\n"
          "  --pipeline NAME|FILE     preset (vkcu pipelines lists them); later options override it\n"
          "  -j, --jobs N             concurrent streams in this process (default 1)\n"
          "  -r, --recursive          descend into subfolders\n"
          "  --include GLOB           only files matching GLOB (repeatable; no '/': the name,\n"
          "                           with '/': the path below IN_DIR)\n"
          "  --exclude GLOB           leave out matching files and folders (repeatable)\n"
          "  --resume                 skip files whose output exists (it is complete)\n"
          "  -y                       replace existing outputs (default: such a file fails)\n"
          "  --report FILE            JSON lines: one per file, then a summary line\n"
          "  --dry-run                print what would be done; write nothing\n"
          "  --devices all|0,1,...    stream slot w runs on CUDA device w % count (GPU backend)\n"
          "  --shard i/N              take files i, i+N, i+2N, ... of the sorted list (i from 0);\n"
          "                           default: SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT, or\n"
          "                           JOB_COMPLETION_INDEX with --shard-count N or VKCU_SHARD_COUNT\n"
          "  --shard-count N          shard count for Kubernetes indexed Jobs\n"
          "  --container EXT          output extension (mkv, mp4, nut, ...), overrides the pipeline's\n"
          "  --encoder, --crf, --bitrate, --preset, --gop, --encoder-opt   as for a single file\n\n"
          "Progress (files, frames, fps, ETA) shows on a terminal; -q hides it. The summary\n"
          "line 'batch: N done, N skipped, N failed' ends every run. Exit code: 0 when no\n"
          "file failed, else the most serious failure's (130 > 5 > 4 > 2 > 3 > 1).\n\n",
          out);
    cli_job_options_help(out);
}

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

int cli_main_batch(int argc, char **argv)
{
    vkcu_batch_params bp;
    vkcu_batch_params_default(&bp);
    vkcu_job_params *p = &bp.job;
    p->sink = VKCU_SINK_ENCODE;
    cli_in_batch = 1;
    const char *dirs[2] = { NULL, NULL };
    const char **include = calloc((size_t)argc, sizeof(char *));
    const char **exclude = calloc((size_t)argc, sizeof(char *));
    const char *devices = NULL, *shard = NULL, *container = NULL;
    long shard_count = 0, x;
    int ret = VKCU_EXIT_USAGE, opts_done = 0;
    if (!include || !exclude)
        goto done;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int operand = cli_operand(a, &opts_done);
        if (operand < 0)
            continue;
        int n = operand ? 0 : cli_job_option(p, argc, argv, i);
        if (n < 0)
            goto done;
        if (n > 0) {
            i += n - 1;
            continue;
        }
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (operand) {
            if (dirs[1]) {
                cli_usage_error("batch: more than two folders ('%s'); usage: vkcu batch IN_DIR OUT_DIR [options]", a);
                goto done;
            }
            dirs[dirs[0] ? 1 : 0] = a;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            batch_help(stdout);
            ret = 0;
            goto done;
        } else if (!strcmp(a, "-r") || !strcmp(a, "--recursive")) {
            bp.recursive = 1;
        } else if (!strcmp(a, "--resume")) {
            bp.resume = 1;
        } else if (!strcmp(a, "-y")) {
            bp.overwrite = 1;
        } else if (!strcmp(a, "--dry-run")) {
            bp.dry_run = 1;
        } else if ((n = cli_encode_option(p, argc, argv, i))) {
            if (n < 0)
                goto done;
            i += n - 1;
        } else if (!strcmp(a, "-j") || !strcmp(a, "--jobs") || !strcmp(a, "--include") || !strcmp(a, "--exclude") ||
                   !strcmp(a, "--report") || !strcmp(a, "--devices") || !strcmp(a, "--shard") ||
                   !strcmp(a, "--shard-count") || !strcmp(a, "--container")) {
            if (!v) {
                cli_usage_error("%s needs a value", a);
                goto done;
            }
            i++;
            if (!strcmp(a, "-j") || !strcmp(a, "--jobs")) {
                if (cli_parse_int(a, v, 1, 256, &x) < 0)
                    goto done;
                bp.jobs = (int)x;
            } else if (!strcmp(a, "--include")) {
                include[bp.nb_include++] = v;
            } else if (!strcmp(a, "--exclude")) {
                exclude[bp.nb_exclude++] = v;
            } else if (!strcmp(a, "--report")) {
                bp.report_path = v;
            } else if (!strcmp(a, "--devices")) {
                devices = v;
            } else if (!strcmp(a, "--shard")) {
                shard = v;
                if (parse_shard(v, &bp.shard_index, &bp.shard_count) < 0) {
                    cli_usage_error("--shard: '%s' is not i/N with N in [1, 1000000] and 0 <= i < N (e.g. 0/4)", v);
                    goto done;
                }
            } else if (!strcmp(a, "--shard-count")) {
                if (cli_parse_int(a, v, 1, 1000000, &shard_count) < 0)
                    goto done;
            } else {
                container = v;
            }
        } else {
            cli_usage_error("batch: unknown option '%s' (a folder whose name starts with '-' goes after '--')", a);
            goto done;
        }
    }
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
    if (cli_preset_loaded) {
        bp.pipeline = cli_preset.name;
        p->sink = cli_preset.sink;
        bp.extension = vkcu_preset_extension(&cli_preset);
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
