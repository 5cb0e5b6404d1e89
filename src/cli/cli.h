/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The command-line front end: each verb parses its arguments through the
 * one option table (opts.h, table.c) and calls the library, of which it
 * includes only the public headers (include/vkcu/) and links libvkcu.so as
 * any program does. Call graph, without cycles: cli.c (main, transcode,
 * hash, probe) calls the verb files (cli_batch.c, cli_regress.c,
 * cli_formats.c) through the verb tables below; they and cli.c call job.c (shared job options), cli_run.c
 * (contexts and callbacks) and opts.c (the parser); cli.c prints the help a
 * parse asks for with doc.c, which calls opts.c; both read table.c.
 */
#ifndef VKCU_CLI_H
#define VKCU_CLI_H

#include <vkcu/vkcu.h>

#include "opts.h"

/* A command line's job: the context's settings and the job as the public
 * API takes them, and what only the CLI does with them. */
typedef struct cli_job {
    vkcu_settings s; /* the callbacks are set by cli_open_context; log_level by -q and --log-level */
    vkcu_job j;
    int progress;    /* 1: the progress line, when stderr is a terminal */
    int stats;       /* 1: per-stage statistics at the end */
} cli_job;
/* The library's defaults, progress on. */
void cli_job_default(cli_job *p);

/* job.c: stores a processing or encoder option (the ids between
 * OPT_ENCODER and OPT_LOG_LEVEL) into p; --pipeline loads its preset here.
 * Same return values as a cli_apply_fn. */
int cli_job_apply(cli_job *p, enum cli_verb_id verb, const cli_option *o, const char *arg,
                  const cli_value *v);
/* The --pipeline preset of this command line (kept for the process's
 * life), or NULL. */
const vkcu_preset *cli_job_preset(void);

/* run.c, the CLI as a client of the public API: runs one job through a
 * context made from p's settings with the CLI's log, progress and watchdog
 * callbacks (a failure's message has gone to standard error already). */
int cli_run_job(const cli_job *p, vkcu_job_result *r);
/* A context with the settings part of p and the CLI's callbacks. */
int cli_open_context(const cli_job *p, vkcu_context **ctx);
/* The same with another log callback (its opaque NULL). */
int cli_open_context_log(const cli_job *p, vkcu_log_callback log, vkcu_context **ctx);
/* The CLI's log callback: "vkcu: error: MESSAGE" on standard error. */
void cli_log(void *opaque, enum vkcu_log_level level, const char *message);
/* The CLI's own message at `level`, printed as cli_log prints the library's
 * when p's log level (-q, --log-level) lets it through. */
void cli_note(const cli_job *p, enum vkcu_log_level level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The exit code of a library call's return: vkcu_exit_code, and -EINVAL
 * (an argument the library refused) as a usage error. */
int cli_exit_code(int ret);
/* progress.c: draws one report as the terminal line on stderr. */
void cli_progress_draw(const vkcu_progress_info *info);
/* Ends a progress line left open (a job failed mid-way) so that the error
 * that follows starts on its own line. */
void cli_progress_break_line(void);
/* Installs SIGINT/SIGTERM handlers that request a clean stop. */
void cli_install_signals(void);

/* A verb's entry point (argv[0] is the verb). Each verb file keeps its
 * verbs' functions static and exports one table of them, indexed by verb,
 * NULL for the verbs of other files; cli.c has its own (transcode, hash,
 * probe) and dispatches through all of them, so a new verb in a file is
 * one more entry in that file's table. */
typedef int (*cli_verb_main)(int argc, char **argv);
/* cli_formats.c: `vkcu formats` */
extern const cli_verb_main cli_formats_verbs[CLI_NB_VERBS];
/* cli_regress.c: compare, verify */
extern const cli_verb_main cli_regress_verbs[CLI_NB_VERBS];
/* cli_batch.c: batch, pipelines */
extern const cli_verb_main cli_batch_verbs[CLI_NB_VERBS];
/* cli_formats.c: `vkcu --version` */
int cli_print_version(const char *vkcu_version);

#endif
