/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the command line's signal handlers call (common.h): a job whose
 * outputs are abandoned mid-way fails and leaves nothing; a stop request
 * ends the running job with VKCU_ERR_INTERRUPT, removes its partial output,
 * and stays for the life of the process (a later job stops at once). A
 * context's stop request (vkcu_context_stop, job.h) does the same to that
 * context's jobs only, and can be withdrawn: the context's next job runs.
 * Every request is made from the job's progress callback, after the job's
 * temporary output exists, so that the job is surely mid-way. The
 * process-wide request is sticky: it is the last thing this program checks.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vkcu/vkcu.h>

#include "test_util.h"

#define CLIP "media/conformance/64x64-I-P-B-P-high.h264" /* 3 frames */

static char dir[64];

/* Files in dir, its temporaries included. */
static int entries(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

typedef struct seen {
    void (*action)(void);
    int calls, entries_then, frames_then;
} seen;

/* The context the running job is on, for the actions. */
static vkcu_context *running;

static void on_progress(void *opaque, const vkcu_progress_info *info)
{
    seen *s = opaque;
    if (s->calls++ == 0) {
        s->entries_then = entries();
        s->frames_then = (int)info->frames;
        s->action();
    }
}

/* A context whose progress callback takes s's action. */
static vkcu_context *open_context(seen *s)
{
    vkcu_settings st;
    vkcu_default_settings(&st);
    st.backend = VKCU_BACKEND_CPU;
    st.log_level = VKCU_LOG_QUIET;
    st.progress_callback = on_progress;
    st.progress_opaque = s;
    vkcu_context *ctx = NULL;
    int ret = vkcu_open(&ctx, &st);
    CHECK(ret == 0, "vkcu_open: %d", ret);
    return ctx;
}

/* One job hashing CLIP into dir/name on ctx (NULL: a context of its own),
 * `action` taken at its first progress report; its return code. */
static int run_on(vkcu_context *ctx, const char *name, void (*action)(void), seen *s, vkcu_job_result *r)
{
    memset(s, 0, sizeof(*s));
    s->action = action;
    s->entries_then = -1;
    vkcu_context *own = ctx ? NULL : open_context(s);
    running = ctx ? ctx : own;
    if (!running)
        return -1;
    char path[128];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    vkcu_job j;
    vkcu_default_job(&j);
    j.input = CLIP;
    j.sink = VKCU_SINK_HASH;
    j.hash_path = path;
    int ret = vkcu_run(running, &j, r);
    vkcu_close(&own);
    running = NULL;
    return ret;
}

static int run(const char *name, void (*action)(void), seen *s, vkcu_job_result *r)
{
    return run_on(NULL, name, action, s, r);
}

static void nothing(void) {}

static void stop_this_context(void)
{
    vkcu_context_stop(running, 1);
}

static void unlink_in_dir(const char *name)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    unlink(path);
}

int main(void)
{
    snprintf(dir, sizeof(dir), "%s", "/tmp/vkcu-test-stop-XXXXXX");
    if (!mkdtemp(dir)) {
        printf("FAIL: no temporary folder\n");
        return 1;
    }
    seen s;
    vkcu_job_result r;

    /* The control: the same job, untouched, writes its list. */
    int ret = run("whole.framemd5", nothing, &s, &r);
    CHECK(ret == 0 && r.frames_out == 3 && entries() == 1, "untouched job: %d, %lld frames, %d files (%s)", ret,
          (long long)r.frames_out, entries(), r.error);
    CHECK(s.calls >= 2 && s.entries_then == 1 && s.frames_then < 3, "untouched job: %d reports, %d files at the first",
          s.calls, s.entries_then);
    char whole[128];
    snprintf(whole, sizeof(whole), "%s/whole.framemd5", dir);
    unlink(whole);

    CHECK(vkcu_stop_requested() == 0, "a stop requested before any was asked");
    ret = run("abandoned.framemd5", vkcu_abandon_outputs, &s, &r);
    CHECK(ret < 0 && ret != VKCU_ERR_INTERRUPT && r.error[0], "abandoned outputs: returned %d, '%s'", ret, r.error);
    CHECK(s.entries_then == 1 && entries() == 0, "abandoned outputs: %d files mid-way, %d left", s.entries_then,
          entries());
    CHECK(vkcu_stop_requested() == 0, "abandoning the outputs requested a stop");

    /* One context's request: its job stops and leaves nothing; its next job
     * stops at once while the request stands; another context's job runs;
     * withdrawn, the context runs jobs again. The process is never asked. */
    seen cs;
    vkcu_context *ctx = open_context(&cs);
    if (ctx) {
        ret = run_on(ctx, "ctx-stopped.framemd5", stop_this_context, &cs, &r);
        CHECK(ret == VKCU_ERR_INTERRUPT && r.frames_out < 3, "context stop mid-way: returned %d after %lld frames",
              ret, (long long)r.frames_out);
        CHECK(cs.entries_then == 1 && entries() == 0, "context stop: %d files mid-way, %d left", cs.entries_then,
              entries());
        ret = run_on(ctx, "ctx-later.framemd5", nothing, &cs, &r);
        CHECK(ret == VKCU_ERR_INTERRUPT && r.frames_out == 0 && entries() == 0,
              "a job on the stopped context: returned %d after %lld frames, %d files", ret, (long long)r.frames_out,
              entries());
        ret = run("other.framemd5", nothing, &s, &r);
        CHECK(ret == 0 && r.frames_out == 3 && entries() == 1,
              "a job on another context while one is stopped: returned %d after %lld frames (%s)", ret,
              (long long)r.frames_out, r.error);
        unlink_in_dir("other.framemd5");
        vkcu_context_stop(ctx, 0);
        ret = run_on(ctx, "ctx-again.framemd5", nothing, &cs, &r);
        CHECK(ret == 0 && r.frames_out == 3 && entries() == 1,
              "the context after its request was withdrawn: returned %d after %lld frames (%s)", ret,
              (long long)r.frames_out, r.error);
        unlink_in_dir("ctx-again.framemd5");
        vkcu_context_stop(NULL, 1); /* nothing */
        vkcu_close(&ctx);
    }
    CHECK(vkcu_stop_requested() == 0, "a context's stop request stopped the process");

    ret = run("stopped.framemd5", vkcu_request_stop, &s, &r);
    CHECK(ret == VKCU_ERR_INTERRUPT && r.frames_out < 3, "stop requested mid-way: returned %d after %lld frames", ret,
          (long long)r.frames_out);
    CHECK(s.entries_then == 1 && entries() == 0, "stop requested: %d files mid-way, %d left", s.entries_then,
          entries());
    CHECK(vkcu_stop_requested() == 1, "the request was forgotten");

    ret = run("later.framemd5", nothing, &s, &r);
    CHECK(ret == VKCU_ERR_INTERRUPT && r.frames_out == 0 && entries() == 0,
          "a job after the request: returned %d after %lld frames, %d files", ret, (long long)r.frames_out, entries());
    CHECK(vkcu_stop_requested() == 1, "the request was forgotten after a job");

    CHECK(rmdir(dir) == 0, "%s not empty afterwards", dir);
    if (tu_failures)
        printf("%d failure(s)\n", tu_failures);
    else
        printf("public API: abandoned outputs and stop requests leave no file; a context's request stops its jobs "
               "only and is withdrawn; the process's stays\n");
    return tu_failures ? 1 : 0;
}
