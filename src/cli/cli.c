/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu command line: `vkcu [options] INPUT -o OUTPUT` and the verbs.
 * Parses arguments and calls the library; nothing else lives here.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static void print_stats(const cli_job *p, const vkcu_job_result *r, FILE *out)
{
    fprintf(out, "stats: path=%s frames_in=%lld frames_out=%lld corrupt=%lld time=%.3fs fps=%.1f fps_steady=%.1f\n",
            vkcu_path_name(r->path), (long long)r->frames_in, (long long)r->frames_out, (long long)r->frames_corrupt,
            r->seconds, r->fps, r->fps_steady);
    fprintf(out, "stats: frames: decoded=%lld dropped=%lld duplicated=%lld rescaled=%lld concealed=%lld "
            "format_changes=%lld\n", (long long)r->frames_in, (long long)r->frames_dropped,
            (long long)r->frames_duplicated, (long long)r->frames_rescaled, (long long)r->frames_concealed,
            (long long)r->format_changes);
    fprintf(out, "stats: setup=%.3fs (job start to first decoded frame)\n", r->setup_seconds);
    if (r->setup_vk_device[0])
        fprintf(out, "stats: setup ms: vk_instance=%.0f vk_device=%.0f cuda=%.0f (on their own threads, beside) "
                "demux=%.0f gpu_open=%.0f decoder=%.0f first_frame=%.0f; Vulkan device: %s\n",
                r->setup_ms_vk_instance, r->setup_ms_vk_device, r->setup_ms_cuda, r->setup_ms_demux,
                r->setup_ms_gpu_open, r->setup_ms_decoder, r->setup_ms_first_frame, r->setup_vk_device);
    if (r->setup_timeline[0])
        fprintf(out, "stats: setup timeline ms from job start: %s\n", r->setup_timeline);
    if (r->path != VKCU_PATH_NONE && r->path != VKCU_PATH_CPU) {
        double n = r->frames_out > 0 ? (double)r->frames_out : 1;
        fprintf(out, "stats: gpu ms/frame: vk_copy=%.4f cuda_ops=%.4f download=%.4f; max_in_flight=%d\n",
                r->gpu_ms_copy / n, r->gpu_ms_ops / n, r->gpu_ms_download / n, r->max_in_flight);
        fprintf(out, "stats: imports=%lld dtod_copies=%lld htod_bytes=%lld dtoh_bytes=%lld vk_readbacks=%lld\n",
                (long long)r->imports, (long long)r->dtod_copies, (long long)r->htod_bytes, (long long)r->dtoh_bytes,
                (long long)r->vk_readbacks);
    }
    if (p->j.sink == VKCU_SINK_ENCODE && r->frames_out > 0) {
        double n = (double)r->frames_out;
        fprintf(out, "stats: encoder=%s encoded_bytes=%lld; encoder thread ms/frame: encode=%.3f mux=%.3f idle=%.3f\n",
                r->encoder[0] ? r->encoder : "none", (long long)r->encoded_bytes, r->enc_ms_encode / n,
                r->enc_ms_mux / n, r->enc_ms_idle / n);
        if (r->encode_instances > 1)
            fprintf(out, "stats: encoders at once: %d; their summed encode time %.3f s against %.3f s of wall time "
                    "(%.0f%% of %d x wall)\n", r->encode_instances, r->enc_ms_encode / 1000, r->seconds,
                    r->seconds > 0 ? 100 * r->enc_ms_encode / 1000 / (r->seconds * r->encode_instances) : 0.0,
                    r->encode_instances);
        if (r->gpu_encode_frames > 0)
            fprintf(out, "stats: encoder gpu ms/frame: busy=%.4f over %lld frames (timestamps around its submissions): "
                    "alone it would run at %.1f fps\n", r->gpu_ms_encode / (double)r->gpu_encode_frames,
                    (long long)r->gpu_encode_frames,
                    r->gpu_ms_encode > 0 ? 1000.0 * (double)r->gpu_encode_frames / r->gpu_ms_encode : 0.0);
    }
    if (r->frames_out > 0)
        fprintf(out, "stats: host cpu ms/frame=%.3f (process user+system %.3fs)\n",
                r->cpu_seconds * 1000 / (double)r->frames_out, r->cpu_seconds);
}

/* logged: the library has sent the error to the log callback already. */
static int report(const cli_job *p, const vkcu_job_result *r, int ret, int logged)
{
    cli_progress_break_line();
    if (p->stats)
        print_stats(p, r, stderr);
    if (ret == VKCU_ERR_PIPE_CLOSED)
        return 0; /* the reader has what it wanted (| head): nothing to report */
    if (ret < 0) {
        if (!logged)
            fprintf(stderr, "vkcu: error: %s\n", r->error[0] ? r->error : "failed");
        return cli_exit_code(ret);
    }
    return 0;
}

/* ---- vkcu [options] INPUT -o OUTPUT ---- */

typedef struct transcode_args {
    cli_job p;
    const char *input;
    int no_overwrite;
} transcode_args;

/* --generate: the man pages and the completion script, from the table
 * (the Makefile's man and completion targets). */
static int generate(const char *what)
{
    if (!strcmp(what, "completion")) {
        const char *ops[64];
        int n = 0;
        for (const char *name; n < 63 && (name = vkcu_operator_name(n));)
            ops[n++] = name;
        ops[n] = NULL;
        cli_print_completion(ops, stdout);
        return CLI_STOP;
    }
    if (!strcmp(what, "verbs")) {
        for (int v = 1; v < CLI_NB_VERBS; v++)
            printf("%s\n", cli_verb_docs[v].name);
        return CLI_STOP;
    }
    if (!strcmp(what, "man")) {
        cli_print_man(CLI_TRANSCODE, vkcu_version(), stdout);
        return CLI_STOP;
    }
    if (!strncmp(what, "man:", 4) && cli_verb_by_name(what + 4) != CLI_NB_VERBS) {
        cli_print_man(cli_verb_by_name(what + 4), vkcu_version(), stdout);
        return CLI_STOP;
    }
    return cli_usage_error("--generate: '%s' is not man, man:VERB, completion or verbs", what);
}

static int transcode_apply(void *ctx, const cli_option *o, const char *arg, const cli_value *v)
{
    transcode_args *t = ctx;
    if (!o) {
        /* "vkcu in.mp4 out.mkv": an output written as ffmpeg's last operand */
        if (t->input && access(arg, F_OK) != 0 && vkcu_container_of(arg))
            return cli_usage_error("'%s' does not exist, and it is not an input: did you mean: vkcu %s -o %s", arg,
                                   t->input, arg);
        if (t->input)
            return cli_usage_error("more than one input ('%s' and '%s'); use 'vkcu batch' for many files", t->input,
                                   arg);
        t->input = arg;
        return 0;
    }
    switch (o->id) {
    case OPT_VERSION: return cli_print_version(vkcu_version()) ? VKCU_EXIT_FAIL : CLI_STOP;
    case OPT_GENERATE: return generate(arg);
    case OPT_OUTPUT: t->p.j.output = arg; return 0;
    case OPT_FORMAT: t->p.j.output_format = arg; return 0;
    case OPT_OVERWRITE: t->p.j.overwrite = 1; return 0;
    case OPT_NO_OVERWRITE: t->no_overwrite = 1; return 0;
    case OPT_KEEP_PARTIAL: t->p.j.keep_partial = 1; return 0;
    case OPT_NULL: t->p.j.sink = VKCU_SINK_NULL; return 0; /* process, write nothing (benchmarks) */
    case OPT_DECODE_ONLY:
        t->p.j.sink = VKCU_SINK_NULL;
        t->p.j.decode_only = 1;
        return 0;
    default: return cli_job_apply(&t->p, CLI_TRANSCODE, o, arg, v);
    }
}

static int cli_main_transcode(int argc, char **argv)
{
    transcode_args t = { .input = NULL };
    cli_job_default(&t.p);
    t.p.j.sink = VKCU_SINK_ENCODE;
    int ret = cli_parse(CLI_TRANSCODE, argc, argv, transcode_apply, &t);
    if (ret >= 0)
        return ret;
    cli_job *p = &t.p;
    if (!t.input)
        return cli_usage_error("no input file");
    /* "vkcu nope": a word that names no file is more likely a verb than an
     * input (a path has a '/' or an extension). */
    if (!p->j.output && p->j.sink != VKCU_SINK_NULL && strcmp(t.input, "-") && !strpbrk(t.input, "./") &&
        access(t.input, F_OK) != 0)
        return cli_usage_error("'%s' is neither a file nor a verb: 'vkcu help' lists the verbs", t.input);
    if (!p->j.output && p->j.sink != VKCU_SINK_NULL)
        return cli_usage_error("no output: add -o OUTPUT");
    /* As gzip and zstd: compressed video is no text for a terminal. */
    if (p->j.output && !strcmp(p->j.output, "-") && p->j.sink == VKCU_SINK_ENCODE && isatty(STDOUT_FILENO))
        return cli_usage_error("-o -: standard output is a terminal, and video is not text: redirect it to a file "
                               "(> out.nut) or pipe it (| ffplay -)");
    /* As ffmpeg: the pair is refused, whatever their order. */
    if (t.no_overwrite && p->j.overwrite)
        return cli_usage_error("-y and -n contradict each other (-y replaces an existing output, -n never does): "
                               "give one of them");
    p->j.input = t.input;
    cli_install_signals();
    vkcu_job_result r;
    ret = cli_run_job(p, &r);
    if (ret >= 0 && p->s.log_level >= VKCU_LOG_INFO)
        fprintf(stderr, "vkcu: %s -> %s: %lld frames in %.2f s (%.1f fps), path %s\n", t.input,
                p->j.output ? p->j.output : p->j.decode_only ? "decoded, nothing written" : "processed, nothing written",
                (long long)r.frames_out, r.seconds, r.fps, vkcu_path_name(r.path));
    return report(p, &r, ret, 1);
}

/* ---- vkcu hash ---- */

typedef struct hash_args {
    cli_job p;
    const char *input, *outpath;
    int overwrite, whole, format_set;
} hash_args;

static int hash_apply(void *ctx, const cli_option *o, const char *arg, const cli_value *v)
{
    /* in the order of the option's choices: both come from VKCU_HASH_FORMATS_NAMED (vkcu/hash.h) */
#define FMT(e, id, ext) e,
    static const enum vkcu_hash_format formats[] = { VKCU_HASH_FORMATS_NAMED(FMT, FMT, FMT) };
#undef FMT
    hash_args *h = ctx;
    if (!o) {
        if (h->input)
            return cli_usage_error("hash: more than one input");
        h->input = arg;
        return 0;
    }
    switch (o->id) {
    case OPT_OUTPUT: h->outpath = arg; return 0;
    case OPT_OVERWRITE: h->overwrite = 1; return 0;
    case OPT_WHOLE: h->whole = 1; return 0;
    case OPT_ALGO:
        if (vkcu_hash_algo_parse(arg, &h->p.j.hash_algo) < 0) /* the table's choices are VKCU_HASH_ALGOS */
            return cli_usage_error("--algo: '%s' is not " VKCU_HASH_ALGOS, arg);
        return 0;
    case OPT_HASH_FORMAT:
        h->p.j.hash_format = formats[v->i];
        h->format_set = 1;
        return 0;
    case OPT_TIMING: h->p.j.timing = v->i ? VKCU_TIMING_DECODED : VKCU_TIMING_FFMPEG; return 0;
    default: return cli_job_apply(&h->p, CLI_HASH, o, arg, v);
    }
}

static int cli_main_hash(int argc, char **argv)
{
    hash_args h = { .input = NULL };
    cli_job_default(&h.p);
    cli_job *p = &h.p;
    p->j.sink = VKCU_SINK_HASH;
    p->progress = 0;
    int ret = cli_parse(CLI_HASH, argc, argv, hash_apply, &h);
    if (ret >= 0)
        return ret;
    const char *input = h.input, *outpath = h.outpath;
    if (!input)
        return cli_usage_error("hash: no input file");
    if (h.whole && h.format_set)
        return cli_usage_error("hash: --whole prints one line; it takes no --format");
    if (h.whole)
        p->j.hash_format = VKCU_HASH_FORMAT_WHOLE;
    if (outpath && !strcmp(outpath, "-"))
        outpath = NULL; /* standard output, as without -o */
    p->j.input = input;
    p->j.hash_path = outpath; /* the library writes it under a temporary name and renames it */
    if (!outpath)
        p->j.hash_out_name = "standard output"; /* named so in a write error, not as the input */
    p->j.overwrite = h.overwrite;
    cli_install_signals();
    vkcu_job_result r;
    ret = cli_run_job(p, &r);
    return report(p, &r, ret, 1);
}

/* ---- vkcu probe ---- */

static void print_line(void *opaque, const char *line)
{
    fprintf(opaque, "%s\n", line);
}

static int cli_main_probe(int argc, char **argv)
{
    int ret = cli_parse(CLI_PROBE, argc, argv, cli_apply_no_operands, "probe");
    if (ret >= 0)
        return ret;
    ret = vkcu_probe(print_line, stdout);
    return ret < 0 ? cli_exit_code(ret) : 0;
}

/* One rule for every verb's standard output, checked once at the end (the
 * library and the verbs write their lines through stdout's buffer): a
 * reader that went away (`| head`) ends the command quietly, keeping its
 * exit code; any other write error (a full disk, /dev/full) is exit 4, over
 * whatever the verb found (a mismatch, probe's "no GPU": text nobody got),
 * except an interruption. */
static int finish_stdout(int ret)
{
    errno = 0;
    int bad = fflush(stdout) != 0 || ferror(stdout);
    int e = errno, gone = bad && vkcu_stream_reader_gone(stdout);
    if (fclose(stdout) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (!bad || gone)
        return ret;
    if (ret == VKCU_EXIT_OUTPUT)
        return ret; /* the verb's own line said it (hash: "standard output: cannot write the hashes") */
    fprintf(stderr, "vkcu: error: cannot write to standard output: %s\n", e ? strerror(e) : "write error (disk full?)");
    return ret == VKCU_EXIT_INTERRUPT ? ret : VKCU_EXIT_OUTPUT;
}

static const cli_verb_main cli_verbs[CLI_NB_VERBS] = {
    [CLI_TRANSCODE] = cli_main_transcode,
    [CLI_HASH] = cli_main_hash,
    [CLI_PROBE] = cli_main_probe,
};

/* Every verb file's table (cli.h): each verb is in exactly one. */
static const cli_verb_main *const verb_tables[] = { cli_verbs, cli_formats_verbs, cli_regress_verbs, cli_batch_verbs };

/* A verb, and the answer to a --help or --dump-options its parse met. */
static int run_verb(enum cli_verb_id verb, int argc, char **argv)
{
    cli_verb_main fn = NULL;
    for (size_t t = 0; !fn && t < sizeof(verb_tables) / sizeof(verb_tables[0]); t++)
        fn = verb_tables[t][verb];
    if (!fn) { /* a verb in the option table that no file implements: a build error */
        fprintf(stderr, "vkcu: error: %s: this build has no such verb\n", argv[0]);
        return VKCU_EXIT_FAIL;
    }
    int ret = fn(argc, argv);
    if (ret == CLI_HELP_REQUESTED) {
        cli_print_help(verb, stdout);
        return 0;
    }
    if (ret == CLI_OPTIONS_REQUESTED) {
        cli_print_options(verb, stdout);
        return 0;
    }
    return ret;
}

/* `vkcu help [VERB]`, as git answers it: the same text as --help. */
static int help_verb(const char *name)
{
    if (!name || !strcmp(name, "vkcu")) {
        cli_print_help(CLI_TRANSCODE, stdout);
        return 0;
    }
    enum cli_verb_id verb = cli_verb_by_name(name);
    if (verb != CLI_NB_VERBS) {
        cli_print_help(verb, stdout);
        return 0;
    }
    const char *near = cli_nearest_verb(name);
    if (near)
        return cli_usage_error("help: '%s' is not a verb: did you mean 'vkcu help %s'?", name, near);
    return cli_usage_error("help: '%s' is not a verb ('vkcu help' lists them)", name);
}

int main(int argc, char **argv)
{
    /* A closed standard output is found by finish_stdout, for every verb
     * (`vkcu formats | head -c 1`), not by a signal that kills the process
     * mid-line with status 141, depending on when the reader left. */
    signal(SIGPIPE, SIG_IGN);
    /* Library text made outside a context (probe, presets) names options too. */
    vkcu_set_setting_name_callback(cli_setting_name, NULL);
    if (argc < 2) {
        cli_print_help(CLI_TRANSCODE, stderr);
        return VKCU_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "help") && argc <= 3 && (argc == 2 || argv[2][0] != '-'))
        return finish_stdout(help_verb(argc == 3 ? argv[2] : NULL));
    enum cli_verb_id verb = cli_verb_by_name(argv[1]);
    if (verb != CLI_NB_VERBS)
        return finish_stdout(run_verb(verb, argc - 1, argv + 1));
    /* "vkcu hsah x": not a file, but nearly a verb */
    const char *near = argv[1][0] != '-' && access(argv[1], F_OK) != 0 ? cli_nearest_verb(argv[1]) : NULL;
    if (near)
        return cli_usage_error("'%s' is neither a file nor a verb: did you mean 'vkcu %s'?", argv[1], near);
    return finish_stdout(run_verb(CLI_TRANSCODE, argc, argv));
}
