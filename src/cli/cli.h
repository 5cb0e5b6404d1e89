/*
 * The command-line front end: verbs share the job option parser; each verb
 * only parses arguments and calls the library.
 */
#ifndef VKCU_CLI_H
#define VKCU_CLI_H

#include "core/vkcu.h"

typedef struct cli_verb {
    const char *name;
    const char *summary;
    int (*main)(int argc, char **argv); /* argv[0] is the verb */
} cli_verb;

/* Options every job verb accepts (transcode, hash, batch, verify):
 * parses argv[i] (and its value); returns the number of arguments consumed
 * (0: not a job option), or -1 after printing an error. */
int cli_job_option(vkcu_job_params *p, int argc, char **argv, int i);
/* Encoder options of the verbs that encode (transcode, batch): --encoder,
 * --crf, --bitrate, --preset, --gop, --encoder-opt, --encode-workers; same
 * return values as cli_job_option. */
int cli_encode_option(vkcu_job_params *p, int argc, char **argv, int i);
/* Whether argument `a` is an operand (a file) rather than an option: every
 * argument after "--", "-" (standard input) and anything not starting with
 * '-' is one. "--" itself sets *opts_done and returns -1 (skip it). */
int cli_operand(const char *a, int *opts_done);
/* Parses an integer option value in [lo, hi]; prints the error and returns -1 when it is not one. */
int cli_parse_int(const char *opt, const char *v, long lo, long hi, long *out);
/* The same for a finite number in [lo, hi], and for a bitrate ("4M", "800k"). */
int cli_parse_number(const char *opt, const char *v, double lo, double hi, double *out);
int cli_parse_bitrate(const char *opt, const char *v, int64_t *out);
/* Help text for the job options. */
void cli_job_options_help(FILE *out);
/* Prints "vkcu: error: ..." and returns VKCU_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Installs SIGINT/SIGTERM handlers that request a clean stop. */
void cli_install_signals(void);
/* Prints the --stats block for a finished job. */
void cli_print_stats(const vkcu_job_params *p, const vkcu_job_result *r, FILE *out);

extern const cli_verb cli_verbs[];

int cli_main_transcode(int argc, char **argv);
int cli_main_hash(int argc, char **argv);
int cli_main_probe(int argc, char **argv);
/* cli_formats.c: `vkcu formats`, and `vkcu --version` */
int cli_main_formats(int argc, char **argv);
int cli_print_version(const char *vkcu_version);
/* cli_regress.c */
int cli_main_compare(int argc, char **argv);
int cli_main_verify(int argc, char **argv);
/* cli_batch.c: `vkcu batch`, `vkcu pipelines`, and --pipeline, which loads
 * a preset (kept for the process's life) and fills p's chain, encoder
 * settings and hash settings; returns 0, or -1 after printing an error. */
int cli_main_batch(int argc, char **argv);
int cli_main_pipelines(int argc, char **argv);
int cli_pipeline_option(vkcu_job_params *p, const char *arg);

#endif
