/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The CLI as a client of the public API (include/vkcu/): its log,
 * progress and watchdog callbacks, and one job run through a context.
 * The library's text names settings ("overwrite=1"); cli_setting_name
 * (opts.c) prints each as its option ("-y") from the one option table.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* The library's messages, as the CLI has always printed its own. */
void cli_log(void *opaque, enum vkcu_log_level level, const char *message)
{
    (void)opaque;
    if (level == VKCU_LOG_ERROR)
        cli_progress_break_line(); /* the error starts on its own line */
    const char *tag = level == VKCU_LOG_ERROR ? "error: " : level == VKCU_LOG_WARNING ? "warning: " : "";
    fprintf(stderr, "vkcu: %s%s\n", tag, message);
}

void cli_note(const cli_job *p, enum vkcu_log_level level, const char *fmt, ...)
{
    if (level > p->s.log_level)
        return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    cli_log(NULL, level, line);
}

static void cli_progress(void *opaque, const vkcu_progress_info *info)
{
    (void)opaque;
    cli_progress_draw(info);
}

/* A stalled driver call cannot be unwound: the command ends here, with
 * the device exit code and no partial file (the library has logged the
 * stall). */
static void cli_watchdog(void *opaque, const char *input, double stalled_seconds)
{
    (void)opaque;
    (void)stalled_seconds;
    fprintf(stderr, "vkcu: %s: raise --stall-timeout, or use --backend cpu\n", input);
    vkcu_abandon_outputs();
    _exit(VKCU_EXIT_DEVICE);
}

int cli_exit_code(int ret)
{
    /* -EINVAL: the library refused an argument, which on the command line
     * is a usage error like any other. */
    return ret == -EINVAL ? VKCU_EXIT_USAGE : vkcu_exit_code(ret);
}

void cli_job_default(cli_job *p)
{
    memset(p, 0, sizeof(*p));
    vkcu_default_settings(&p->s);
    vkcu_default_job(&p->j);
    p->progress = 1;
}

int cli_open_context(const cli_job *p, vkcu_context **ctx)
{
    return cli_open_context_log(p, cli_log, ctx);
}

int cli_open_context_log(const cli_job *p, vkcu_log_callback log, vkcu_context **ctx)
{
    vkcu_settings s = p->s;
    s.log_callback = log;
    s.log_opaque = NULL;
    s.setting_name_callback = cli_setting_name; /* the library names settings; the table knows their options */
    if (p->progress && isatty(STDERR_FILENO))
        s.progress_callback = cli_progress;
    s.watchdog_callback = cli_watchdog;
    return vkcu_open(ctx, &s);
}

int cli_run_job(const cli_job *p, vkcu_job_result *r)
{
    vkcu_context *ctx = NULL;
    int ret = cli_open_context(p, &ctx);
    if (ret < 0) {
        memset(r, 0, sizeof(*r));
        return ret;
    }
    ret = vkcu_run(ctx, &p->j, r);
    vkcu_close(&ctx);
    return ret;
}
