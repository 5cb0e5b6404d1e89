/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The command line's one option table. Every option of every verb is one
 * entry here: its names, argument type and range, default, help text and
 * the verbs that take it. The parser, each verb's --help, the man pages
 * and the bash completion are all generated from it, so they cannot
 * disagree (tests/cli/options.sh checks that they do not).
 *
 * Nothing here knows vkcu_job_params: a verb hands the parser an apply
 * function that stores each parsed option (the switch in each verb file).
 */
#ifndef VKCU_CLI_OPTS_H
#define VKCU_CLI_OPTS_H

#include <stdint.h>
#include <stdio.h>

enum cli_verb_id {
    CLI_TRANSCODE, /* `vkcu [options] INPUT -o OUTPUT`: no verb word */
    CLI_PROBE,
    CLI_FORMATS,
    CLI_HASH,
    CLI_COMPARE,
    CLI_VERIFY,
    CLI_BATCH,
    CLI_PIPELINES,
    CLI_NB_VERBS
};
#define CLI_V(v) (1u << (v))

enum cli_arg_type {
    CLI_ARG_NONE,    /* a flag */
    CLI_ARG_INT,     /* integer in [lo, hi] */
    CLI_ARG_NUMBER,  /* finite number in [lo, hi] */
    CLI_ARG_BITRATE, /* "4M", "800k" */
    CLI_ARG_TIME,    /* seconds, [HH:]MM:SS or NNNf */
    CLI_ARG_CHOICE,  /* one of `choices` */
    CLI_ARG_TEXT,
    CLI_ARG_FILE,    /* a path (completion offers files) */
    CLI_ARG_PRESET,  /* a preset name or a .pipe file */
    CLI_ARG_PICK,    /* an integer in [lo, hi] (value i), or one of `choices` (i = -1 - its index) */
};

/* What an option does; a verb's apply function switches on it. An id may
 * have one table entry per meaning (-y replaces different files in each
 * verb), never two entries for one verb. */
enum cli_opt_id {
    OPT_HELP, OPT_DUMP_OPTIONS, OPT_VERSION, OPT_GENERATE,
    /* transcode output */
    OPT_OUTPUT, OPT_FORMAT, OPT_OVERWRITE, OPT_NO_OVERWRITE, OPT_KEEP_PARTIAL, OPT_NULL, OPT_DECODE_ONLY,
    /* encoder */
    OPT_ENCODER, OPT_CRF, OPT_BITRATE, OPT_PRESET, OPT_GOP, OPT_ENCODER_OPT, OPT_FASTSTART, OPT_ENCODE_WORKERS,
    OPT_NO_AUDIO, OPT_AUDIO_ENCODER, OPT_AUDIO_STREAM, OPT_SUBTITLE_STREAM,
    /* processing (job) */
    OPT_BACKEND, OPT_DEVICE, OPT_CHAIN, OPT_PIPELINE, OPT_START, OPT_DURATION, OPT_FRAMES, OPT_VIDEO_STREAM,
    OPT_STRICT, OPT_RING_SIZE, OPT_HANDOFF, OPT_DOWNLOAD, OPT_DECODE_THREADS, OPT_DECODE_PARALLEL, OPT_DECODE_QUEUE, OPT_STALL_TIMEOUT, OPT_REQUIRE_GPU_DECODE,
    OPT_STATS, OPT_QUIET, OPT_LOG_LEVEL, OPT_TIMING, OPT_EXCLUDE_CONCEALED,
    /* hash */
    OPT_ALGO, OPT_HASH_FORMAT, OPT_WHOLE,
    /* compare */
    OPT_MAX_DIFF, OPT_MIN_PSNR, OPT_DIFF_IMAGE, OPT_PER_FRAME, OPT_ALIGN, OPT_CHAIN_A, OPT_CHAIN_B, OPT_SCALE,
    OPT_CSV, OPT_JSON, OPT_VMAF, OPT_MIN_VMAF, OPT_HTML_REPORT,
    /* verify */
    OPT_JUNIT, OPT_SUMMARY, OPT_HTML, OPT_JOBS, OPT_TIMEOUT, OPT_FAIL_FAST, OPT_UPDATE, OPT_CASE, OPT_ALLOW_OUTSIDE,
    /* batch */
    OPT_RECURSIVE, OPT_INCLUDE, OPT_EXCLUDE, OPT_RESUME, OPT_REPORT, OPT_DRY_RUN, OPT_DEVICES, OPT_SHARD,
    OPT_SHARD_COUNT, OPT_CONTAINER, OPT_ALL_FILES, OPT_PROCESSES,
    /* pipelines */
    OPT_PATHS,
};

/* Help sections, in the order --help and the man pages print them. */
enum cli_group { CLI_G_VERB, CLI_G_OUTPUT, CLI_G_ENCODE, CLI_G_PROCESS, CLI_NB_GROUPS };

#define CLI_HIDDEN 1u /* debugging aid: parsed, but in no help, page or completion */
#define CLI_REPEAT 2u /* each use adds a value (the others: the last one wins) */
#define CLI_NOCASE 4u /* choices match in any case */

typedef struct cli_option {
    enum cli_opt_id id;
    const char *name;    /* long name without "--"; NULL: short only */
    char short_name;     /* 0: long only */
    enum cli_arg_type type;
    const char *metavar; /* the value's name in help ("N", "FILE") */
    double lo, hi;       /* CLI_ARG_INT, CLI_ARG_NUMBER */
    const char *choices; /* CLI_ARG_CHOICE: "a, b or c", as messages name them */
    const char *def;     /* default, for help; NULL: none worth stating (or said in `help`) */
    const char *help;
    unsigned verbs;      /* CLI_V() bits */
    enum cli_group group;
    unsigned flags;
    /* The public settings this option sets, space-separated ("start_time
     * start_frame"): the field names library messages use, which the CLI
     * prints as this option (cli_setting_name). NULL: none named. */
    const char *setting;
} cli_option;

typedef struct cli_verb_doc {
    const char *name;     /* "hash"; "vkcu" for CLI_TRANSCODE */
    const char *summary;  /* one line, for the verb list and the man page's NAME */
    const char *usage;    /* the lines after "Usage: " ("\n"-separated) */
    const char *description; /* paragraphs ("\n\n"); lines starting with two spaces are kept as they are */
    const char *notes;    /* after the options, same form; may be NULL */
    const char *exit_codes;
    const char *environment; /* "NAME\ttext\n" lines; may be NULL */
} cli_verb_doc;

typedef struct cli_value {
    int64_t i;            /* CLI_ARG_INT, CLI_ARG_BITRATE; CLI_ARG_CHOICE: the choice's index */
    double d;             /* CLI_ARG_NUMBER */
    double seconds;       /* CLI_ARG_TIME: -1, or the time in seconds */
    int64_t frame;        /* CLI_ARG_TIME: -1, or the frame number (NNNf) */
} cli_value;

extern const cli_option cli_options[];
extern const int cli_nb_options;
extern const cli_verb_doc cli_verb_docs[CLI_NB_VERBS];

/* An apply function stores one parsed option (o, its text arg and value v),
 * or takes one operand (o == NULL, arg the operand). Returns 0 to go on,
 * CLI_STOP to end the program with status 0 (it printed what was asked,
 * --version say), or an exit status (after printing its one-line error). */
#define CLI_STOP 0x100
/* cli_parse's answers to --help and --dump-options: the verb's caller
 * prints them (doc.c) and ends with status 0. */
#define CLI_HELP_REQUESTED 0x101
#define CLI_OPTIONS_REQUESTED 0x102
typedef int (*cli_apply_fn)(void *ctx, const cli_option *o, const char *arg, const cli_value *v);

/* Parses argv[1..argc) for a verb, as getopt_long does: "--name value",
 * "--name=value", short options grouped or with their value attached
 * ("-yq", "-j2"), options after operands, "-" an operand and "--" the end
 * of options. Returns -1 when the verb should go on; CLI_HELP_REQUESTED or
 * CLI_OPTIONS_REQUESTED when --help or --dump-options came first (the verb
 * returns it as it is, and main prints the text); else the exit status. */
int cli_parse(enum cli_verb_id verb, int argc, char **argv, cli_apply_fn apply, void *ctx);

/* The apply function of verbs that take no operand and no option of their
 * own (probe, formats); ctx is the verb's name. */
int cli_apply_no_operands(void *ctx, const cli_option *o, const char *arg, const cli_value *v);
/* The verb `name` is a typo of ("hsah": "hash"), or NULL. */
const char *cli_nearest_verb(const char *name);

/* util/near.c, compiled into vkcu under these names (Makefile, CLI_SHARED):
 * the edit distance of the library's "did you mean", and its nearest word
 * of a list (util/near.h says how near is near enough). */
int cli_edit_distance(const char *a, const char *b);
const char *cli_nearest_word(const char *typed, const char *const *words, int n);

/* Prints "vkcu: error: ..." and returns VKCU_EXIT_USAGE (2). */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A vkcu_setting_name_callback: the option that sets `setting`, as the
 * table spells it, with `value` after it unless the option is a flag
 * ("--backend gpu", "-y"); NULL for a setting no option sets. */
const char *cli_setting_name(void *opaque, const char *setting, const char *value, char *buf, size_t size);
/* "--name" or "-n" for messages, as the table spells it. */
const char *cli_option_spelling(const cli_option *o, char *buf, size_t size);
/* The entry of `verb` whose long name is `name` (no dashes); NULL if none. */
const cli_option *cli_find_option(enum cli_verb_id verb, const char *name);
/* The verb named `name` ("hash"); CLI_NB_VERBS when none is. */
enum cli_verb_id cli_verb_by_name(const char *name);

/* Generators (doc.c), all from the table above. */
void cli_print_help(enum cli_verb_id verb, FILE *out);
void cli_print_options(enum cli_verb_id verb, FILE *out); /* --dump-options */
void cli_print_man(enum cli_verb_id verb, const char *version, FILE *out);
/* `ops` (NULL-terminated) are the operator names --chain completes to. */
void cli_print_completion(const char *const *ops, FILE *out);

#endif
