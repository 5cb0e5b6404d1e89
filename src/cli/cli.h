/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The command-line front end: each verb parses its arguments through the
 * one option table (opts.h, table.c) and calls the library. Call graph,
 * without cycles: cli.c (main, transcode, hash, probe) calls the verb files
 * (cli_batch.c, cli_regress.c, cli_formats.c); they and cli.c call job.c
 * (shared job options) and opts.c/doc.c (parser, help), which read table.c.
 */
#ifndef VKCU_CLI_H
#define VKCU_CLI_H

#include "core/vkcu.h"
#include "opts.h"

/* job.c: stores a processing or encoder option (the ids between
 * OPT_ENCODER and OPT_LOG_LEVEL) into p; --pipeline loads its preset here.
 * Same return values as a cli_apply_fn. */
int cli_job_apply(vkcu_job_params *p, enum cli_verb_id verb, const cli_option *o, const char *arg,
                  const cli_value *v);
/* The --pipeline preset of this command line (kept for the process's
 * life), or NULL. */
const vkcu_preset *cli_job_preset(void);

/* run.c, the CLI as a client of the public API: runs one job through a
 * context made from p's settings with the CLI's log, progress and watchdog
 * callbacks (a failure's message has gone to standard error already). */
int cli_run_job(const vkcu_job_params *p, vkcu_job_result *r);
/* A context with the settings part of p and the CLI's callbacks. */
int cli_open_context(const vkcu_job_params *p, vkcu_context **ctx);
/* The same with another log callback (its opaque NULL). */
int cli_open_context_log(const vkcu_job_params *p, vkcu_log_callback log, vkcu_context **ctx);
/* The job part of p as a public job, and back. */
void cli_job_from_params(const vkcu_job_params *p, vkcu_job *job);
void cli_params_from_job(const vkcu_job *job, vkcu_job_params *p);
/* The CLI's log callback: "vkcu: error: MESSAGE" on standard error. */
void cli_log(void *opaque, enum vkcu_log_level level, const char *message);
/* The exit code of a library call's return: vkcu_exit_code, and -EINVAL
 * (an argument the library refused) as a usage error. */
int cli_exit_code(int ret);
/* Installs SIGINT/SIGTERM handlers that request a clean stop. */
void cli_install_signals(void);

/* The verbs (argv[0] is the verb, or "vkcu" for transcode). */
int cli_main_transcode(int argc, char **argv);
int cli_main_hash(int argc, char **argv);
int cli_main_probe(int argc, char **argv);
/* cli_formats.c: `vkcu formats`, and `vkcu --version` */
int cli_main_formats(int argc, char **argv);
int cli_print_version(const char *vkcu_version);
/* cli_regress.c */
int cli_main_compare(int argc, char **argv);
int cli_main_verify(int argc, char **argv);
/* cli_batch.c */
int cli_main_batch(int argc, char **argv);
int cli_main_pipelines(int argc, char **argv);

#endif
