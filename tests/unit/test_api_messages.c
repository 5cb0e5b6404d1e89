/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a program using the public API reads (issue 14): the library's
 * messages name settings by their field names ("overwrite=1", "ring_size",
 * "start_frame=...") and never a command-line option; a program's
 * setting_name_callback renames them; FFmpeg's own lines about a job's
 * input reach the log callback, tagged "ffmpeg: ", at the documented
 * levels, and none of them goes to standard error.
 */
#include <errno.h>
#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vkcu/vkcu.h>

#define CLIP "media/conformance/64x64-I-P-B-P-high.h264"
#define TRIM "media/gen/trim.mp4"       /* 200 frames */
#define CORRUPT "media/gen/corrupt.h264" /* one damaged picture */

#include "test_util.h"

#define MAX_LINES 256
typedef struct log_capture {
    int n;
    int level[MAX_LINES];
    char text[MAX_LINES][512];
} log_capture;

static void capture_log(void *opaque, enum vkcu_log_level level, const char *message)
{
    log_capture *c = opaque;
    if (c->n < MAX_LINES) {
        c->level[c->n] = level;
        snprintf(c->text[c->n], sizeof(c->text[0]), "%s", message);
    }
    c->n++;
}

/* A command-line option: "--x", or "-x" alone at the start or after a
 * space or '(' ("-y", "(-f"); "-1", "x-y" and "%-8s" are not. */
static const char *names_flag(const char *s)
{
    for (const char *p = s; *p; p++) {
        if (p[0] == '-' && p[1] == '-' && isalpha((unsigned char)p[2]))
            return p;
        if (p[0] == '-' && isalpha((unsigned char)p[1]) && (p == s || p[-1] == ' ' || p[-1] == '(') &&
            !isalnum((unsigned char)p[2]))
            return p;
    }
    return NULL;
}

static void no_flags(const char *what, const log_capture *c)
{
    for (int i = 0; i < c->n && i < MAX_LINES; i++)
        CHECK(!names_flag(c->text[i]), "%s: message names a command-line option at '%s': '%s'", what,
              names_flag(c->text[i]), c->text[i]);
}

static const char *find(const log_capture *c, int level, const char *needle)
{
    for (int i = 0; i < c->n && i < MAX_LINES; i++)
        if ((level < 0 || c->level[i] == level) && strstr(c->text[i], needle))
            return c->text[i];
    return NULL;
}

static vkcu_context *open_ctx(log_capture *c, vkcu_settings *s)
{
    memset(c, 0, sizeof(*c));
    s->log_callback = capture_log;
    s->log_opaque = c;
    vkcu_context *ctx = NULL;
    return vkcu_open(&ctx, s) < 0 ? NULL : ctx;
}

static void test_bad_settings(void)
{
    vkcu_settings s;
    log_capture c;
    vkcu_default_settings(&s);
    s.ring_size = 2;
    CHECK(!open_ctx(&c, &s), "ring_size 2 accepted");
    CHECK(c.n == 1 && find(&c, VKCU_LOG_ERROR, "ring_size 2 is out of range [3, 16]"), "ring_size 2: %d lines, '%s'",
          c.n, c.text[0]);
    no_flags("ring_size 2", &c);

    vkcu_default_settings(&s);
    s.backend = (enum vkcu_backend)9;
    CHECK(!open_ctx(&c, &s), "backend 9 accepted");
    CHECK(c.n == 1 && find(&c, VKCU_LOG_ERROR, "backend 9 is out of range"), "backend 9: '%s'", c.text[0]);
    no_flags("backend 9", &c);
}

/* A job on the CPU; its result's error (also the last error line). */
static int run_job(vkcu_job *j, log_capture *c, int level, vkcu_setting_name_callback namer, vkcu_job_result *r)
{
    vkcu_settings s;
    vkcu_default_settings(&s);
    s.backend = VKCU_BACKEND_CPU;
    s.decode_threads = 1; /* FFmpeg decodes on the job's thread */
    s.log_level = (enum vkcu_log_level)level;
    s.setting_name_callback = namer;
    vkcu_context *ctx = open_ctx(c, &s);
    CHECK(ctx, "open failed: %s", c->text[0]);
    if (!ctx)
        return -1;
    int ret = vkcu_run(ctx, j, r);
    vkcu_close(&ctx);
    return ret;
}

static const char *replace_box(void *opaque, const char *setting, const char *value, char *buf, size_t size)
{
    (void)opaque;
    (void)value;
    if (strcmp(setting, "overwrite"))
        return NULL; /* the library's own name */
    snprintf(buf, size, "the Replace box");
    return buf;
}

static void test_existing_output(const char *dir)
{
    char out[512];
    snprintf(out, sizeof(out), "%s/exists.mkv", dir);
    FILE *f = fopen(out, "w");
    CHECK(f && fputs("mine", f) >= 0, "cannot write %s", out);
    if (f)
        fclose(f);
    vkcu_job j;
    vkcu_default_job(&j);
    j.input = CLIP;
    j.output = out;
    vkcu_job_result r;
    log_capture c;
    int ret = run_job(&j, &c, VKCU_LOG_INFO, NULL, &r);
    CHECK(ret == VKCU_ERR_OUTPUT, "existing output: %d (%s)", ret, r.error);
    CHECK(strstr(r.error, "exists.mkv: already exists (use overwrite=1 to overwrite)"), "existing output: '%s'",
          r.error);
    CHECK(find(&c, VKCU_LOG_ERROR, "use overwrite=1"), "existing output: the log lacks the error: %d lines", c.n);
    CHECK(!names_flag(r.error), "existing output names an option: '%s'", r.error);
    no_flags("existing output", &c);
    char buf[16] = "";
    f = fopen(out, "r");
    CHECK(f && fgets(buf, sizeof(buf), f) && !strcmp(buf, "mine"), "existing output was changed: '%s'", buf);
    if (f)
        fclose(f);

    /* a program that calls the setting something else */
    ret = run_job(&j, &c, VKCU_LOG_INFO, replace_box, &r);
    CHECK(ret == VKCU_ERR_OUTPUT && strstr(r.error, "(use the Replace box to overwrite)"),
          "renamed setting: %d '%s'", ret, r.error);
    unlink(out);
}

static void test_trim_past_end(void)
{
    vkcu_job j;
    vkcu_default_job(&j);
    j.input = TRIM;
    j.sink = VKCU_SINK_NULL;
    j.start_frame = 300;
    vkcu_job_result r;
    log_capture c;
    int ret = run_job(&j, &c, VKCU_LOG_INFO, NULL, &r);
    CHECK(ret == VKCU_ERR_USAGE && strstr(r.error, "start_frame=300 is past the end (the input has 200 frames)"),
          "start_frame 300: %d '%s'", ret, r.error);
    no_flags("start_frame 300", &c);
}

/* FFmpeg's decode errors about a damaged picture: at VERBOSE, through the
 * callback, "ffmpeg: " first, nothing on standard error; at INFO not at
 * all (as the CLI shows them); vkcu's own warning names the setting. */
static void test_ffmpeg_lines(const char *dir)
{
    char errpath[512];
    snprintf(errpath, sizeof(errpath), "%s/stderr", dir);
    int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int saved = dup(STDERR_FILENO);
    CHECK(fd >= 0 && saved >= 0, "cannot redirect standard error");
    if (fd < 0 || saved < 0)
        return;
    fflush(stderr);
    dup2(fd, STDERR_FILENO);

    vkcu_job j;
    vkcu_default_job(&j);
    j.input = CORRUPT;
    j.sink = VKCU_SINK_NULL;
    vkcu_job_result r;
    log_capture verbose, info;
    int ret_v = run_job(&j, &verbose, VKCU_LOG_VERBOSE, NULL, &r);
    int64_t corrupt = r.frames_corrupt;
    int ret_i = run_job(&j, &info, VKCU_LOG_INFO, NULL, &r);

    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(fd);
    char leaked[512] = "";
    FILE *f = fopen(errpath, "r");
    if (f) {
        size_t got = fread(leaked, 1, sizeof(leaked) - 1, f);
        leaked[got] = 0;
        fclose(f);
    }
    unlink(errpath);

    CHECK(ret_v == 0 && ret_i == 0 && corrupt >= 1, "corrupt input: %d/%d, %lld corrupt frames", ret_v, ret_i,
          (long long)corrupt);
    const char *ff = find(&verbose, VKCU_LOG_VERBOSE, "ffmpeg: [h264 @ ");
    CHECK(ff, "no FFmpeg decode error reached the callback at VERBOSE (%d lines)", verbose.n);
    CHECK(!find(&verbose, VKCU_LOG_ERROR, "ffmpeg: "), "an FFmpeg error came at VKCU_LOG_ERROR: %s",
          find(&verbose, VKCU_LOG_ERROR, "ffmpeg: "));
    CHECK(!find(&info, -1, "ffmpeg: "), "FFmpeg's errors reached an INFO callback: %s", find(&info, -1, "ffmpeg: "));
    for (int i = 0; i < verbose.n && i < MAX_LINES; i++)
        CHECK(strchr(verbose.text[i], '\n') == NULL, "a line with a newline: '%s'", verbose.text[i]);
    CHECK(find(&info, VKCU_LOG_WARNING, "1 damaged picture, concealed by the decoder: frame ") &&
              find(&info, VKCU_LOG_WARNING, "kept and marked (use strict=1 to stop)"),
          "no warning naming strict=1 (%d lines: %s)", info.n, info.n ? info.text[0] : "");
    CHECK(find(&verbose, VKCU_LOG_VERBOSE, ": damaged picture, concealed by the decoder; kept and marked"),
          "no verbose line for the damaged picture (%d lines)", verbose.n);
    CHECK(!leaked[0], "standard error got: '%.200s'", leaked);
    no_flags("corrupt input", &verbose);
}

int main(void)
{
    if (access(TRIM, R_OK) || access(CORRUPT, R_OK)) {
        printf("media/gen is missing (make media)\n");
        return 1;
    }
    char dir[] = "/tmp/vkcu-api-messages-XXXXXX";
    if (!mkdtemp(dir)) {
        printf("mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    test_bad_settings();
    test_existing_output(dir);
    test_trim_past_end();
    test_ffmpeg_lines(dir);
    rmdir(dir);
    if (tu_failures)
        printf("%d failure(s)\n", tu_failures);
    else
        printf("public API messages: settings named by field, none by option; FFmpeg's lines to the callback\n");
    return tu_failures ? 1 : 0;
}
