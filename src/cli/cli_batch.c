/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The `batch` and `pipelines` verbs. Argument parsing, and the batch as a
 * client of the public API (vkcu_batch_run, include/vkcu/batch.h): its
 * progress line, its dry-run plan, and the option names in the hints of
 * the failures that the library reports by reason.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* ---- vkcu pipelines ---- */

static void print_preset(const vkcu_preset *ps, FILE *out)
{
    fprintf(out, "%s: %s\n  file: %s\n  chain: %s\n", ps->name, ps->description, ps->path,
            ps->chain[0] ? ps->chain : "(none)");
    if (ps->sink == VKCU_SINK_HASH) {
        fprintf(out, "  output: hash %s, %s\n", vkcu_hash_algo_id(ps->hash_algo),
                vkcu_hash_format_name(ps->hash_format));
    } else {
        fprintf(out, "  output: encode with %s", ps->encoder[0] ? ps->encoder : "the container's default encoder");
        if (ps->gpu_encoder[0])
            fprintf(out, " (%s on the GPU backend where it can take the frames)", ps->gpu_encoder);
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

typedef struct listing {
    int show_paths, bad;
} listing;

/* Each preset, loaded to print its description (a broken one is named). */
static int list_one(void *opaque, const char *name, const char *path)
{
    listing *l = opaque;
    vkcu_preset ps;
    char err[1024];
    (void)name;
    if (vkcu_preset_load(path, &ps, err, sizeof(err)) < 0) {
        fprintf(stderr, "vkcu: error: %s\n", err);
        l->bad++;
        return 0;
    }
    if (l->show_paths)
        printf("%-18s %s\n%-18s   %s\n", ps.name, ps.description, "", ps.path);
    else
        printf("%-18s %s\n", ps.name, ps.description);
    return 0;
}

static int list_pipelines(int show_paths)
{
    listing l = { .show_paths = show_paths };
    char err[1024];
    int ret = vkcu_presets_list(list_one, &l, err, sizeof(err));
    if (ret == VKCU_ERR_INPUT) {
        fprintf(stderr, "vkcu: error: %s\n", err);
        return VKCU_EXIT_INPUT;
    }
    if (ret < 0)
        return VKCU_EXIT_FAIL;
    list_operators(stdout);
    return l.bad ? VKCU_EXIT_USAGE : 0;
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

static int cli_main_pipelines(int argc, char **argv)
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

/* Parses "all" or "0,1,3" into ordinals. "all" gives every CUDA device
 * (none without a GPU). Returns the count, or -1 with a message in err. */
static int parse_devices(const char *text, int *devices, int max, char *err, size_t errlen)
{
    if (!strcmp(text, "all")) {
        int n = vkcu_cuda_device_count();
        if (n > max)
            n = max;
        for (int i = 0; i < n; i++)
            devices[i] = i;
        return n;
    }
    int n = 0;
    const char *s = text;
    for (;;) {
        char item[32];
        size_t len = strcspn(s, ",");
        const char *end = s + len;
        int64_t x = -1;
        if (len < sizeof(item)) {
            memcpy(item, s, len);
            item[len] = 0;
        }
        if (len >= sizeof(item) || vkcu_parse_int(item, 0, 63, &x) < 0) {
            snprintf(err, errlen, "--devices: '%s' is not 'all' or a list of CUDA ordinals in [0, 63] such as 0,1,2",
                     text);
            return -1;
        }
        for (int i = 0; i < n; i++)
            if (devices[i] == (int)x) {
                snprintf(err, errlen, "--devices: device %d is listed twice in '%s'", (int)x, text);
                return -1;
            }
        if (n == max) {
            snprintf(err, errlen, "--devices: more than %d devices in '%s'", max, text);
            return -1;
        }
        devices[n++] = (int)x;
        if (!*end)
            return n;
        s = end + 1;
    }
}

static int env_int(const char *name, long *out, char *err, size_t errlen)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    int64_t x;
    if (vkcu_parse_int(v, 0, INT_MAX, &x) < 0) {
        snprintf(err, errlen, "%s='%s' is not an integer in [0, %d]", name, v, INT_MAX);
        return -1;
    }
    *out = (long)x;
    return 1;
}

/* The shard from the environment when --shard is not given:
 * SLURM_ARRAY_TASK_ID (minus SLURM_ARRAY_TASK_MIN, divided by
 * SLURM_ARRAY_TASK_STEP) of SLURM_ARRAY_TASK_COUNT, else Kubernetes'
 * JOB_COMPLETION_INDEX of `count_hint` (--shard-count) or
 * $VKCU_SHARD_COUNT. Returns 1 with index and count set, 0 when the
 * environment names no shard, -1 with a message in err when it is
 * inconsistent. `source` names the variables used. */
static int shard_from_env(int count_hint, int *index, int *count, char *source, size_t sourcelen, char *err,
                          size_t errlen)
{
    long id = 0, n = 0, min = 0, step = 1;
    int has_id = env_int("SLURM_ARRAY_TASK_ID", &id, err, errlen);
    if (has_id < 0)
        return -1;
    if (has_id) {
        int has_n = env_int("SLURM_ARRAY_TASK_COUNT", &n, err, errlen);
        if (has_n < 0 || env_int("SLURM_ARRAY_TASK_MIN", &min, err, errlen) < 0 ||
            env_int("SLURM_ARRAY_TASK_STEP", &step, err, errlen) < 0)
            return -1;
        if (!has_n || n < 1) {
            snprintf(err, errlen, "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not (use --shard i/N)");
            return -1;
        }
        if (step < 1)
            step = 1;
        long k = (id - min) / step;
        if (id < min || (id - min) % step || k >= n) {
            snprintf(err, errlen, "SLURM_ARRAY_TASK_ID=%ld does not fit an array of %ld tasks from %ld step %ld "
                     "(use --shard i/N)", id, n, min, step);
            return -1;
        }
        *index = (int)k;
        *count = (int)n;
        snprintf(source, sourcelen, "SLURM_ARRAY_TASK_ID=%ld of SLURM_ARRAY_TASK_COUNT=%ld", id, n);
        return 1;
    }
    long k8s = 0;
    int has_k8s = env_int("JOB_COMPLETION_INDEX", &k8s, err, errlen);
    if (has_k8s < 0)
        return -1;
    if (!has_k8s)
        return 0;
    const char *count_src = "--shard-count";
    n = count_hint;
    if (n <= 0) {
        int has_n = env_int("VKCU_SHARD_COUNT", &n, err, errlen);
        if (has_n < 0)
            return -1;
        if (!has_n || n < 1) {
            snprintf(err, errlen, "JOB_COMPLETION_INDEX is set: give the number of shards with --shard-count N "
                     "or VKCU_SHARD_COUNT (the Job's completions)");
            return -1;
        }
        count_src = "VKCU_SHARD_COUNT";
    }
    if (k8s >= n) {
        snprintf(err, errlen, "JOB_COMPLETION_INDEX=%ld is not below the shard count %ld (%s)", k8s, n, count_src);
        return -1;
    }
    *index = (int)k8s;
    *count = (int)n;
    snprintf(source, sourcelen, "JOB_COMPLETION_INDEX=%ld of %s=%ld", k8s, count_src, n);
    return 1;
}

/* A file name as a shell word that gives back exactly its bytes: as it is
 * when it holds only characters no shell treats specially; in single
 * quotes otherwise (a quote itself as '\''); and when it holds control
 * characters (a newline, say), as bash's $'...' with \n, \t and \xHH,
 * so that each file stays on one line of the listing. */
static void shell_word(FILE *f, const char *s)
{
    int plain = *s != 0, control = 0;
    for (const unsigned char *u = (const unsigned char *)s; *u; u++) {
        if (*u < 0x20 || *u == 0x7f)
            control = 1;
        if (!((*u >= 'a' && *u <= 'z') || (*u >= 'A' && *u <= 'Z') || (*u >= '0' && *u <= '9') ||
              strchr("_-./+,:=@%", *u)))
            plain = 0;
    }
    if (plain) {
        fputs(s, f);
    } else if (!control) {
        fputc('\'', f);
        for (const char *c = s; *c; c++)
            if (*c == '\'')
                fputs("'\\''", f);
            else
                fputc(*c, f);
        fputc('\'', f);
    } else {
        fputs("$'", f);
        for (const unsigned char *u = (const unsigned char *)s; *u; u++) {
            if (*u == '\n')
                fputs("\\n", f);
            else if (*u == '\t')
                fputs("\\t", f);
            else if (*u == '\'' || *u == '\\')
                fprintf(f, "\\%c", *u);
            else if (*u < 0x20 || *u == 0x7f)
                fprintf(f, "\\x%02x", *u);
            else
                fputc(*u, f);
        }
        fputc('\'', f);
    }
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

typedef struct batch_args {
    vkcu_batch_settings bs;        /* all but the job, which job.c fills into `job` */
    cli_job job;
    const char *dirs[2];
    const char **include, **exclude;
    const char *devices, *shard, *container;
    long shard_count;
    int processes;
} batch_args;

static int batch_apply(void *ctx, const cli_option *o, const char *arg, const cli_value *v)
{
    batch_args *a = ctx;
    vkcu_batch_settings *bs = &a->bs;
    if (!o) {
        if (a->dirs[1])
            return cli_usage_error("batch: more than two folders ('%s'); usage: vkcu batch IN_DIR OUT_DIR [options]",
                                   arg);
        a->dirs[a->dirs[0] ? 1 : 0] = arg;
        return 0;
    }
    switch (o->id) {
    case OPT_RECURSIVE: bs->recursive = 1; break;
    case OPT_RESUME: bs->resume = 1; break;
    case OPT_OVERWRITE: bs->overwrite = 1; break;
    case OPT_DRY_RUN: bs->dry_run = 1; break;
    case OPT_ALL_FILES: bs->all_files = 1; break;
    case OPT_PROCESSES: a->processes = 1; break;
    case OPT_JOBS: bs->jobs = (int)v->i; break;
    case OPT_INCLUDE: a->include[bs->nb_include++] = arg; break;
    case OPT_EXCLUDE: a->exclude[bs->nb_exclude++] = arg; break;
    case OPT_REPORT: bs->report_path = arg; break;
    case OPT_DEVICES: a->devices = arg; break;
    case OPT_SHARD:
        a->shard = arg;
        if (parse_shard(arg, &bs->shard_index, &bs->shard_count) < 0)
            return cli_usage_error("--shard: '%s' is not i/N with N in [1, 1000000] and 0 <= i < N (e.g. 0/4)", arg);
        break;
    case OPT_SHARD_COUNT: a->shard_count = (long)v->i; break;
    case OPT_CONTAINER: a->container = arg; break;
    default: return cli_job_apply(&a->job, CLI_BATCH, o, arg, v);
    }
    return 0;
}

/* The terminal's batch progress line, and the messages printed over it. */
static pthread_mutex_t batch_term_lock = PTHREAD_MUTEX_INITIALIZER;
static int batch_line_shown;

static void batch_log(void *opaque, enum vkcu_log_level level, const char *message)
{
    pthread_mutex_lock(&batch_term_lock);
    if (batch_line_shown)
        fputs("\r\033[K", stderr); /* the progress line is redrawn on the next tick */
    cli_log(opaque, level, message);
    pthread_mutex_unlock(&batch_term_lock);
}

static void batch_progress(void *opaque, const vkcu_batch_progress *pr)
{
    char eta[32] = "--:--";
    (void)opaque;
    if (pr->final) {
        snprintf(eta, sizeof(eta), "0:00");
    } else if (pr->eta >= 0) {
        int secs = (int)pr->eta;
        snprintf(eta, sizeof(eta), "%d:%02d", secs / 60, secs % 60);
    }
    pthread_mutex_lock(&batch_term_lock);
    fprintf(stderr, "\rbatch: %d/%d files (%d running, %d failed), %lld frames, %.1f fps, ETA %s   ", pr->finished,
            pr->total, pr->running, pr->failed, (long long)(pr->frames + pr->frames_running), pr->fps, eta);
    if (pr->final)
        fputc('\n', stderr);
    fflush(stderr);
    batch_line_shown = 1;
    pthread_mutex_unlock(&batch_term_lock);
}

/* The dry run's plan on standard output, one file a line:
 * "VERDICT IN to OUT  # why", every word a shell word (an arrow would be a
 * redirection), so that a script can read the listing back with the shell,
 * whatever the names hold. */
static void plan_line(const vkcu_batch_file *f)
{
    const char *verdict = f->status == VKCU_BATCH_PLANNED ? "process " : f->status == VKCU_BATCH_SKIPPED ? "skip    "
                                                                                                        : "fail    ";
    printf("%s ", verdict);
    shell_word(stdout, f->file);
    fputs(" to ", stdout);
    shell_word(stdout, f->output);
    switch (f->reason) {
    case VKCU_BATCH_REASON_SAME_OUTPUT:
        fputs("  # same output as another input: ", stdout);
        shell_word(stdout, f->detail);
        break;
    case VKCU_BATCH_REASON_UP_TO_DATE: fputs("  # exists, made with the same settings", stdout); break;
    case VKCU_BATCH_REASON_EXISTS_CHANGED: {
        char note[1200];
        snprintf(note, sizeof(note), "exists, but %s (use -y with --resume to redo it)", f->detail);
        printf("  # %s", note);
        break;
    }
    case VKCU_BATCH_REASON_EXISTS: fputs("  # exists (use --resume or -y)", stdout); break;
    case VKCU_BATCH_REASON_NOT_MEDIA: printf("  # %s (--all-files takes it)", f->detail); break;
    case VKCU_BATCH_REASON_JOB: { /* the job's message, less its input's name (which may hold a newline) */
        size_t n = strlen(f->input);
        if (!strncmp(f->message, f->input, n) && f->message[n] == ':')
            printf("  # %s", f->message + n + 2);
        break;
    }
    default: break;
    }
    fputc('\n', stdout);
}

/* What the file callback needs of the command line. */
typedef struct batch_run {
    const vkcu_batch_settings *bs;
    enum vkcu_log_level log_level;
} batch_run;

/* Each file's fate; a failure the library describes by setting is said
 * here with the options that change it. */
static int batch_file_done(void *opaque, const vkcu_batch_file *f)
{
    const batch_run *run = opaque;
    char line[1536];
    if (run->bs->dry_run) {
        plan_line(f);
        return 1;
    }
    if (f->status != VKCU_BATCH_FAILED)
        return 0;
    switch (f->reason) {
    case VKCU_BATCH_REASON_SAME_OUTPUT:
        snprintf(line, sizeof(line), "%s: its output %s is also the output of %s (rename one of them, or leave one "
                 "out with --exclude)", f->input, f->output, f->detail);
        break;
    case VKCU_BATCH_REASON_EXISTS_CHANGED:
        snprintf(line, sizeof(line), "%s: exists, but %s; use -y with --resume to redo it", f->output, f->detail);
        break;
    case VKCU_BATCH_REASON_EXISTS:
        snprintf(line, sizeof(line), "%s: already exists (use --resume to skip finished files, or -y to replace them)",
                 f->output);
        break;
    default: return 0;
    }
    if (run->log_level >= VKCU_LOG_ERROR)
        batch_log(NULL, VKCU_LOG_ERROR, line);
    return 1;
}

/* The outputs' kind: the pipeline's sink and extension, or the extension
 * --container names (into ext, extlen bytes). -1: a usage error, said. */
static int batch_output_kind(cli_job *p, vkcu_batch_settings *bs, const char *container, char *ext, size_t extlen)
{
    const vkcu_preset *preset = cli_job_preset();
    if (preset) {
        bs->pipeline = preset->name;
        p->j.sink = preset->sink;
        bs->extension = vkcu_preset_extension(preset);
    }
    if (container) {
        const char *e = *container == '.' ? container + 1 : container;
        if (!*e || strlen(e) > 16 || strchr(e, '/')) {
            cli_usage_error("--container: '%s' is not a file extension (mkv, mp4, nut, ...)", container);
            return -1;
        }
        snprintf(ext, extlen, ".%s", e);
        bs->extension = ext;
    }
    return 0;
}

/* The shard: --shard's, checked against --shard-count, or the
 * environment's. -1: a usage error, said. */
static int batch_shard(cli_job *p, vkcu_batch_settings *bs, const char *shard, long shard_count)
{
    char err[1024], source[160];
    if (!shard) {
        int got = shard_from_env((int)shard_count, &bs->shard_index, &bs->shard_count, source, sizeof(source), err,
                                 sizeof(err));
        if (got < 0) {
            cli_usage_error("batch: %s", err);
            return -1;
        }
        if (got > 0)
            cli_note(p, VKCU_LOG_VERBOSE, "batch: shard %d/%d from %s", bs->shard_index, bs->shard_count, source);
    } else if (shard_count && shard_count != bs->shard_count) {
        cli_usage_error("--shard %s and --shard-count %ld disagree", shard, shard_count);
        return -1;
    }
    return 0;
}

/* --devices: the ordinals, checked against this machine's CUDA devices
 * (none for the CPU backend, or for auto where there is none). -1: a usage
 * error, said. */
static int batch_devices(cli_job *p, vkcu_batch_settings *bs, const char *devices)
{
    char err[1024];
    int n = parse_devices(devices, bs->devices, VKCU_BATCH_MAX_DEVICES, err, sizeof(err));
    if (n < 0) {
        cli_usage_error("%s", err);
        return -1;
    }
    if (p->s.backend == VKCU_BACKEND_CPU) {
        n = 0; /* the CPU backend has no devices to spread over */
    } else {
        /* Validate the ordinals against this machine. */
        int avail = vkcu_cuda_device_count();
        if (avail == 0 && p->s.backend == VKCU_BACKEND_AUTO) {
            cli_note(p, VKCU_LOG_VERBOSE, "--devices %s: no CUDA device here; backend auto runs on the CPU",
                     devices);
            n = 0;
        } else {
            for (int k = 0; k < n; k++)
                if (avail > 0 && bs->devices[k] >= avail) {
                    cli_usage_error("--devices: there is no CUDA device %d (this machine has %d)", bs->devices[k],
                                    avail);
                    return -1;
                }
        }
    }
    bs->nb_devices = n;
    return 0;
}

/* The batch's last lines on standard error (a dry run's count, or the
 * summary) and its exit code. */
static int batch_report(const vkcu_batch_settings *bs, const vkcu_batch_result *r, int err_code)
{
    if (bs->dry_run && (err_code >= 0 || r->total > 0)) { /* a plan with failures exits as the run would */
        fflush(stdout);
        fprintf(stderr, "batch: dry run: %d to process, %d to skip, %d would fail (shard %d/%d, %d files)\n",
                r->planned, r->skipped, r->failed, bs->shard_index, bs->shard_count, r->total);
    }
    if (bs->dry_run || (err_code < 0 && r->total == 0)) {
        /* A dry run prints its plan; a batch that could not start has no summary. */
        return cli_exit_code(err_code < 0 ? err_code : 0);
    }
    fprintf(stderr, "batch: %d done, %d skipped, %d failed", r->done, r->skipped, r->failed);
    if (r->interrupted || r->not_started)
        fprintf(stderr, ", %d interrupted, %d not started", r->interrupted, r->not_started);
    fprintf(stderr, " (%d files", r->total);
    if (bs->shard_count > 1)
        fprintf(stderr, " in shard %d/%d", bs->shard_index, bs->shard_count);
    fprintf(stderr, ", %lld frames, %.1f s", (long long)r->frames, r->seconds);
    if (r->processes)
        fprintf(stderr, ", %d worker process%s", r->processes, r->processes > 1 ? "es" : "");
    fprintf(stderr, ")\n");
    return cli_exit_code(err_code < 0 ? err_code : 0);
}

static int cli_main_batch(int argc, char **argv)
{
    batch_args a = { .dirs = { NULL, NULL } };
    vkcu_default_batch_settings(&a.bs);
    cli_job_default(&a.job);
    a.job.j.sink = VKCU_SINK_ENCODE;
    const char **dirs = a.dirs;
    const char **include = a.include = calloc((size_t)argc, sizeof(char *));
    const char **exclude = a.exclude = calloc((size_t)argc, sizeof(char *));
    vkcu_context *ctx = NULL;
    int ret = VKCU_EXIT_USAGE;
    if (!include || !exclude)
        goto done;
    ret = cli_parse(CLI_BATCH, argc, argv, batch_apply, &a);
    if (ret >= 0)
        goto done;
    ret = VKCU_EXIT_USAGE;
    vkcu_batch_settings bs = a.bs;
    cli_job *p = &a.job;
    const char *devices = a.devices, *shard = a.shard, *container = a.container;
    long shard_count = a.shard_count;
    if (!dirs[1]) {
        cli_usage_error("batch: %s; usage: vkcu batch IN_DIR OUT_DIR [options]",
                        dirs[0] ? "no output folder" : "no input and output folders");
        goto done;
    }
    bs.in_dir = dirs[0];
    bs.out_dir = dirs[1];
    bs.include = include;
    bs.exclude = exclude;
    /* One progress line for the batch, not one per file. */
    int progress = p->progress && isatty(STDERR_FILENO) && p->s.log_level >= VKCU_LOG_INFO;
    p->progress = 0;
    char ext[32];
    if (batch_output_kind(p, &bs, container, ext, sizeof(ext)) < 0)
        goto done;
    if (batch_shard(p, &bs, shard, shard_count) < 0)
        goto done;
    if (devices && batch_devices(p, &bs, devices) < 0)
        goto done;

    bs.job = p->j;
    batch_run run = { &bs, p->s.log_level };
    bs.file_callback = batch_file_done;
    bs.file_opaque = &run;
    if (progress)
        bs.progress_callback = batch_progress;
    ret = cli_open_context_log(p, batch_log, &ctx);
    if (ret < 0) {
        ret = cli_exit_code(ret);
        goto done;
    }
    cli_install_signals();
    /* --processes: each worker process runs this same command line (vkcu_batch_run knows it is one). */
    const char **command = a.processes ? calloc((size_t)argc + 2, sizeof(char *)) : NULL;
    if (command) {
        command[0] = "/proc/self/exe";
        for (int i = 0; i < argc; i++)
            command[i + 1] = argv[i];
        bs.worker_command = command;
    }
    vkcu_batch_result r;
    int err_code = vkcu_batch_run(ctx, &bs, &r);
    /* A worker process says nothing: the batch that started it reports. */
    ret = r.worker ? cli_exit_code(err_code) : batch_report(&bs, &r, err_code);
    free(command);
done:
    vkcu_close(&ctx);
    free(include);
    free(exclude);
    return ret;
}

const cli_verb_main cli_batch_verbs[CLI_NB_VERBS] = {
    [CLI_BATCH] = cli_main_batch,
    [CLI_PIPELINES] = cli_main_pipelines,
};
