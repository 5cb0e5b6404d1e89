/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu_batch_run (include/vkcu/batch.h) as a program outside the library
 * uses it: only <vkcu/vkcu.h>. Checks the defaults, validation at the
 * boundary (-EINVAL, one message naming the setting and no command-line
 * option, nothing created), and a CPU batch of two files from media/gen,
 * one of them not a video: the good file's hash list equals the one a
 * single vkcu_run writes, the bad file fails without stopping it, and the
 * file and progress callbacks, the result, the log and the report all say
 * so. Then a dry run, a rerun without resume (the output exists) and one
 * with resume (skipped as up to date).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vkcu/vkcu.h>

#define GOOD "crop-h264.mkv"
#define BAD "not-video.mp4"

#include "test_util.h"

typedef struct log_capture {
    int errors;
    char last_error[1024];
    char all_errors[4096];
} log_capture;

static void capture_log(void *opaque, enum vkcu_log_level level, const char *message)
{
    log_capture *c = opaque;
    if (level != VKCU_LOG_ERROR)
        return;
    c->errors++;
    snprintf(c->last_error, sizeof(c->last_error), "%s", message);
    size_t n = strlen(c->all_errors);
    snprintf(c->all_errors + n, sizeof(c->all_errors) - n, "%s\n", message);
}

/* What the file and progress callbacks saw. */
typedef struct seen {
    int files;
    char name[4][64];
    enum vkcu_batch_status status[4];
    enum vkcu_batch_reason reason[4];
    int error[4];
    int had_job[4];
    char message[4][512];
    int returns;        /* what the file callback returns */
    int progress_calls, finals;
    vkcu_batch_progress last;
} seen;

static int on_file(void *opaque, const vkcu_batch_file *f)
{
    seen *s = opaque;
    if (s->files < 4) {
        int i = s->files;
        snprintf(s->name[i], sizeof(s->name[i]), "%s", f->file);
        s->status[i] = f->status;
        s->reason[i] = f->reason;
        s->error[i] = f->error;
        s->had_job[i] = f->job != NULL;
        snprintf(s->message[i], sizeof(s->message[i]), "%s", f->message);
    }
    s->files++;
    return s->returns;
}

static void on_progress(void *opaque, const vkcu_batch_progress *p)
{
    seen *s = opaque;
    s->progress_calls++;
    s->finals += p->final;
    s->last = *p;
}

static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    char buf[65536];
    size_t n;
    int ok = in && out;
    while (ok && (n = fread(buf, 1, sizeof(buf), in)) > 0)
        ok = fwrite(buf, 1, n, out) == n;
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        ok = 0;
    return ok ? 0 : -1;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void test_defaults(void)
{
    vkcu_batch_settings s;
    memset(&s, 0x5a, sizeof(s));
    vkcu_default_batch_settings(&s);
    CHECK(s.extension && !strcmp(s.extension, ".mkv"), "default extension %s", s.extension ? s.extension : "NULL");
    CHECK(s.jobs == 1 && s.shard_index == 0 && s.shard_count == 1, "default jobs %d, shard %d/%d", s.jobs,
          s.shard_index, s.shard_count);
    CHECK(!s.in_dir && !s.out_dir && !s.report_path && !s.pipeline, "default folders or report set");
    CHECK(!s.recursive && !s.resume && !s.overwrite && !s.dry_run && !s.nb_include && !s.nb_exclude && !s.nb_devices,
          "a default flag or count is set");
    CHECK(!s.file_callback && !s.progress_callback, "default callbacks set");
    CHECK(!s.all_files, "default: media files only (all_files %d)", s.all_files);
    CHECK(s.job.sink == VKCU_SINK_ENCODE && s.job.crf == -1 && s.job.video_stream == -1,
          "default job: sink %d crf %d stream %d", (int)s.job.sink, s.job.crf, s.job.video_stream);
}

/* One bad batch setting: -EINVAL, one message naming `what`, nothing made. */
static void bad_batch(vkcu_context *ctx, log_capture *c, const char *name, const vkcu_batch_settings *s,
                      const char *what)
{
    vkcu_batch_result r;
    int before = c->errors;
    int ret = vkcu_batch_run(ctx, s, &r);
    CHECK(ret == -EINVAL, "%s: returned %d", name, ret);
    CHECK(c->errors == before + 1, "%s: %d error messages", name, c->errors - before);
    CHECK(strstr(r.error, what) && !strcmp(r.error, c->last_error), "%s: result '%s', log '%s', expected '%s'",
          name, r.error, c->last_error, what);
    CHECK(!strstr(r.error, "--"), "%s: the message names a command-line option: '%s'", name, r.error);
    CHECK(r.total == 0 && r.done == 0, "%s: %d files listed", name, r.total);
    if (s->out_dir)
        CHECK(!exists(s->out_dir), "%s: the output folder %s was created", name, s->out_dir);
}

static void test_validation(vkcu_context *ctx, log_capture *c, const char *in, const char *out)
{
    vkcu_batch_settings s, good;
    vkcu_default_batch_settings(&good);
    good.in_dir = in;
    good.out_dir = out;
    good.job.sink = VKCU_SINK_HASH;

    s = good;
    s.in_dir = NULL;
    bad_batch(ctx, c, "no input folder", &s, "no input folder");
    s = good;
    s.jobs = 0;
    bad_batch(ctx, c, "jobs 0", &s, "job count 0 is out of range [1, 256]");
    s.jobs = VKCU_BATCH_MAX_JOBS + 1;
    bad_batch(ctx, c, "jobs 257", &s, "job count 257 is out of range [1, 256]");
    s = good;
    s.extension = "mkv";
    bad_batch(ctx, c, "extension without a dot", &s, "extension 'mkv'");
    s.extension = ".a/b";
    bad_batch(ctx, c, "extension with a slash", &s, "extension '.a/b'");
    s = good;
    s.shard_index = 2;
    s.shard_count = 2;
    bad_batch(ctx, c, "shard 2 of 2", &s, "shard index 2 is out of range [0, 1]");
    s.shard_index = 0;
    s.shard_count = 0;
    bad_batch(ctx, c, "shard count 0", &s, "shard count 0 is out of range");
    s = good;
    s.devices[0] = 1;
    s.devices[1] = 1;
    s.nb_devices = 2;
    bad_batch(ctx, c, "device listed twice", &s, "device 1 is listed twice");
    s.devices[1] = 64;
    bad_batch(ctx, c, "device 64", &s, "device ordinal 64 is out of range [0, 63]");
    s = good;
    s.nb_include = 1;
    bad_batch(ctx, c, "include count without patterns", &s, "include pattern count 1 of 1 is missing");
    s = good;
    s.job.sink = VKCU_SINK_NULL;
    bad_batch(ctx, c, "null sink", &s, "encode or the hash sink");
    s = good;
    s.job.crf = 64;
    bad_batch(ctx, c, "crf 64 in the job", &s, "crf 64 is out of range [-1, 63]");
    s = good;
    s.resume = 2;
    bad_batch(ctx, c, "resume 2", &s, "resume flag 2");

    vkcu_batch_result r;
    CHECK(vkcu_batch_run(ctx, &good, NULL) == -EINVAL, "NULL result accepted");
    CHECK(vkcu_batch_run(ctx, NULL, &r) == -EINVAL && strstr(r.error, "no batch settings"), "NULL settings: '%s'",
          r.error);
    CHECK(!exists(out), "validation created %s", out);
}

/* The hash list a single job writes for `input`, to compare the batch's with. */
static long single_hashes(vkcu_context *ctx, const char *input, const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    vkcu_job j;
    vkcu_default_job(&j);
    j.input = input;
    j.sink = VKCU_SINK_HASH;
    j.hash_out = f;
    vkcu_job_result r;
    int ret = vkcu_run(ctx, &j, &r);
    fclose(f);
    CHECK(ret == 0, "single job on %s: %d %s", input, ret, r.error);
    return ret == 0 ? tu_read_text(path, buf, size) : -1;
}

static void test_batch(vkcu_context *ctx, log_capture *c, const char *dir)
{
    char in[512], out[512], report[512], good_out[600], bad_out[600], single[600], good_in[600];
    snprintf(in, sizeof(in), "%s/in", dir);
    snprintf(out, sizeof(out), "%s/out", dir);
    snprintf(report, sizeof(report), "%s/report.jsonl", dir);
    snprintf(good_in, sizeof(good_in), "%s/" GOOD, in);
    snprintf(good_out, sizeof(good_out), "%s/crop-h264.framemd5", out);
    snprintf(bad_out, sizeof(bad_out), "%s/not-video.framemd5", out);
    snprintf(single, sizeof(single), "%s/single.framemd5", dir);

    vkcu_batch_settings s;
    vkcu_default_batch_settings(&s);
    s.in_dir = in;
    s.out_dir = out;
    s.extension = ".framemd5";
    s.job.sink = VKCU_SINK_HASH;
    s.jobs = 2;
    s.report_path = report;
    seen sn;
    memset(&sn, 0, sizeof(sn));
    s.file_callback = on_file;
    s.file_opaque = &sn;
    s.progress_callback = on_progress;
    s.progress_opaque = &sn;

    /* A dry run: the good file planned, the bad one failed as its job's
     * first check (opening the container) would fail it; nothing written. */
    s.dry_run = 1;
    vkcu_batch_result r;
    int ret = vkcu_batch_run(ctx, &s, &r);
    CHECK(ret == VKCU_ERR_INPUT && r.total == 2 && r.planned == 1 && r.failed == 1,
          "dry run: %d, %d files, %d planned, %d failed, '%s'", ret, r.total, r.planned, r.failed, r.error);
    CHECK(sn.files == 2 && sn.status[0] == VKCU_BATCH_PLANNED && sn.status[1] == VKCU_BATCH_FAILED &&
          sn.reason[1] == VKCU_BATCH_REASON_JOB && sn.error[1] == VKCU_ERR_INPUT && !sn.had_job[1] &&
          strstr(sn.message[1], "not a media file") && !strcmp(sn.name[0], GOOD) && !strcmp(sn.name[1], BAD),
          "dry run: %d file calls, %s %d, %s %d '%s'", sn.files, sn.name[0], (int)sn.status[0], sn.name[1],
          (int)sn.status[1], sn.message[1]);
    CHECK(!exists(out) && !exists(report), "dry run wrote the output folder or the report");
    CHECK(sn.progress_calls == 0, "dry run: %d progress calls", sn.progress_calls);

    /* The batch: the bad file fails, the good one is done all the same. */
    s.dry_run = 0;
    memset(&sn, 0, sizeof(sn));
    int errors = c->errors;
    ret = vkcu_batch_run(ctx, &s, &r);
    CHECK(ret == VKCU_ERR_INPUT, "batch returned %d (%s), not VKCU_ERR_INPUT", ret, r.error);
    CHECK(r.total == 2 && r.done == 1 && r.failed == 1 && r.skipped == 0 && r.interrupted == 0 && r.not_started == 0,
          "result: %d files, %d done, %d failed, %d skipped", r.total, r.done, r.failed, r.skipped);
    CHECK(r.error[0] == 0, "a batch that ran has a start error: '%s'", r.error);
    int g = !strcmp(sn.name[0], GOOD) ? 0 : 1, b = 1 - g;
    CHECK(sn.files == 2 && !strcmp(sn.name[g], GOOD) && !strcmp(sn.name[b], BAD), "file calls %d: %s, %s", sn.files,
          sn.name[0], sn.name[1]);
    CHECK(sn.status[g] == VKCU_BATCH_DONE && sn.error[g] == 0 && sn.had_job[g] && !sn.message[g][0],
          "good file: status %d error %d '%s'", (int)sn.status[g], sn.error[g], sn.message[g]);
    CHECK(sn.status[b] == VKCU_BATCH_FAILED && sn.reason[b] == VKCU_BATCH_REASON_JOB && sn.error[b] == VKCU_ERR_INPUT &&
          sn.had_job[b] && strstr(sn.message[b], BAD), "bad file: status %d reason %d error %d '%s'",
          (int)sn.status[b], (int)sn.reason[b], sn.error[b], sn.message[b]);
    /* The callback returned 0: the library logged the failure itself. */
    CHECK(c->errors == errors + 1 && strstr(c->last_error, BAD) && !strstr(c->last_error, "--"),
          "log: %d errors, last '%s'", c->errors - errors, c->last_error);
    CHECK(sn.finals == 1 && sn.last.final && sn.last.total == 2 && sn.last.finished == 2 && sn.last.failed == 1 &&
          sn.last.running == 0 && sn.last.eta == 0, "final progress: %d finals, %d/%d finished, %d failed, %d running",
          sn.finals, sn.last.finished, sn.last.total, sn.last.failed, sn.last.running);
    CHECK(sn.last.frames == r.frames && r.frames > 0, "frames: progress %lld, result %lld", (long long)sn.last.frames,
          (long long)r.frames);

    char got[65536], want[65536];
    long n = tu_read_text(good_out, got, sizeof(got));
    long m = single_hashes(ctx, good_in, single, want, sizeof(want));
    CHECK(n > 0 && n == m && !memcmp(got, want, (size_t)n), "batch hashes (%ld bytes) differ from a single job's (%ld)",
          n, m);
    CHECK(!exists(bad_out), "the failed file left %s", bad_out);
    long lines = 0;
    for (char *p = got; n > 0 && *p; p++)
        lines += *p == '\n' && p[1] && p[1] != '#';
    CHECK(lines == r.frames, "%ld hash lines, %lld frames", lines, (long long)r.frames);

    char rep[16384];
    CHECK(tu_read_text(report, rep, sizeof(rep)) > 0 && strstr(rep, "\"file\": \"" GOOD "\"") &&
          strstr(rep, "\"file\": \"" BAD "\"") && strstr(rep, "\"status\": \"done\"") &&
          strstr(rep, "\"status\": \"failed\"") && strstr(rep, "\"summary\": true"), "report: %.400s", rep);

    /* Again: the output exists. A callback that reports failures itself
     * keeps them out of the log. */
    memset(&sn, 0, sizeof(sn));
    sn.returns = 1;
    s.report_path = NULL;
    errors = c->errors;
    ret = vkcu_batch_run(ctx, &s, &r);
    g = !strcmp(sn.name[0], GOOD) ? 0 : 1;
    b = 1 - g;
    CHECK(ret == VKCU_ERR_OUTPUT && r.done == 0 && r.failed == 2, "rerun: %d, %d done, %d failed", ret, r.done,
          r.failed);
    CHECK(sn.status[g] == VKCU_BATCH_FAILED && sn.reason[g] == VKCU_BATCH_REASON_EXISTS && !sn.had_job[g] &&
          strstr(sn.message[g], "already exists") && !strstr(sn.message[g], "--"),
          "rerun, good file: status %d reason %d '%s'", (int)sn.status[g], (int)sn.reason[g], sn.message[g]);
    CHECK(c->errors == errors, "rerun: %d errors logged though the callback reported them", c->errors - errors);
    CHECK(tu_read_text(good_out, got, sizeof(got)) == m && !memcmp(got, want, (size_t)m), "rerun changed %s", good_out);

    /* With resume: the good file is up to date, the bad one fails again. */
    memset(&sn, 0, sizeof(sn));
    s.resume = 1;
    ret = vkcu_batch_run(ctx, &s, &r);
    g = !strcmp(sn.name[0], GOOD) ? 0 : 1;
    b = 1 - g;
    CHECK(ret == VKCU_ERR_INPUT && r.skipped == 1 && r.failed == 1 && r.done == 0, "resume: %d, %d skipped, %d failed",
          ret, r.skipped, r.failed);
    CHECK(sn.status[g] == VKCU_BATCH_SKIPPED && sn.reason[g] == VKCU_BATCH_REASON_UP_TO_DATE && !sn.had_job[g],
          "resume, good file: status %d reason %d", (int)sn.status[g], (int)sn.reason[g]);
    CHECK(sn.status[b] == VKCU_BATCH_FAILED && sn.error[b] == VKCU_ERR_INPUT, "resume, bad file: status %d error %d",
          (int)sn.status[b], sn.error[b]);
}

/* Media files only by default: notes.txt is skipped (not media), claims
 * no output, and is no failure; with all_files it is an input again. A dry
 * run whose plan holds a failure returns the run's error. */
static void test_media(vkcu_context *ctx, const char *dir)
{
    char in[600], out[600], path[700], good[700];
    snprintf(in, sizeof(in), "%s/media-in", dir);
    snprintf(out, sizeof(out), "%s/media-out", dir);
    mkdir(in, 0777);
    snprintf(good, sizeof(good), "%s/in/" GOOD, dir);
    snprintf(path, sizeof(path), "%s/crop-h264.mkv", in);
    int ok = copy_file(good, path) == 0;
    snprintf(path, sizeof(path), "%s/crop-h264.txt", in); /* the same stem: it would map to the same output */
    FILE *f = fopen(path, "w");
    ok &= f && fputs("notes about the clip\n", f) >= 0 && fclose(f) == 0;
    CHECK(ok, "cannot make %s", in);
    vkcu_batch_settings s;
    vkcu_default_batch_settings(&s);
    s.in_dir = in;
    s.out_dir = out;
    s.extension = ".framemd5";
    s.job.sink = VKCU_SINK_HASH;
    seen sn;
    memset(&sn, 0, sizeof(sn));
    s.file_callback = on_file;
    s.file_opaque = &sn;
    vkcu_batch_result r;
    int ret = vkcu_batch_run(ctx, &s, &r);
    int t = !strcmp(sn.name[0], "crop-h264.txt") ? 0 : 1;
    CHECK(ret == 0 && r.total == 2 && r.done == 1 && r.skipped == 1 && r.failed == 0,
          "media only: %d, %d files, %d done, %d skipped, %d failed", ret, r.total, r.done, r.skipped, r.failed);
    CHECK(sn.files == 2 && sn.status[t] == VKCU_BATCH_SKIPPED && sn.reason[t] == VKCU_BATCH_REASON_NOT_MEDIA &&
          !sn.had_job[t] && sn.error[t] == 0, "crop-h264.txt: status %d reason %d", (int)sn.status[t],
          (int)sn.reason[t]);
    /* every file as an input: the text file now claims the same output and fails, and so does its dry run */
    snprintf(out, sizeof(out), "%s/media-out2", dir);
    s.all_files = 1;
    s.dry_run = 1;
    memset(&sn, 0, sizeof(sn));
    ret = vkcu_batch_run(ctx, &s, &r);
    CHECK(ret == VKCU_ERR_USAGE && r.planned == 1 && r.failed == 1, "all files, dry run: %d, %d planned, %d failed",
          ret, r.planned, r.failed);
    s.all_files = 2;
    CHECK(vkcu_batch_run(ctx, &s, &r) == -EINVAL && strstr(r.error, "all-files"), "all_files 2: '%s'", r.error);
}

int main(void)
{
    const char *media = getenv("MEDIA");
    char good[512], bad[512];
    snprintf(good, sizeof(good), "%s/" GOOD, media && *media ? media : "media/gen");
    snprintf(bad, sizeof(bad), "%s/" BAD, media && *media ? media : "media/gen");
    if (!exists(good) || !exists(bad)) {
        printf("SKIP: %s or %s missing (make media)\n", good, bad);
        return 77;
    }
    char dir[] = "/tmp/vkcu-test-api-batch-XXXXXX", in[600], path[700];
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(in, sizeof(in), "%s/in", dir);
    mkdir(in, 0777);
    snprintf(path, sizeof(path), "%s/" GOOD, in);
    int ok = copy_file(good, path) == 0;
    snprintf(path, sizeof(path), "%s/" BAD, in);
    ok &= copy_file(bad, path) == 0;
    CHECK(ok, "cannot copy the media into %s", in);

    test_defaults();
    vkcu_settings st;
    vkcu_default_settings(&st);
    st.backend = VKCU_BACKEND_CPU;
    log_capture c;
    memset(&c, 0, sizeof(c));
    st.log_callback = capture_log;
    st.log_opaque = &c;
    vkcu_context *ctx = NULL;
    CHECK(vkcu_open(&ctx, &st) == 0, "open: %s", c.last_error);
    if (ctx && ok) {
        snprintf(path, sizeof(path), "%s/out", dir);
        test_validation(ctx, &c, in, path);
        test_batch(ctx, &c, dir);
        test_media(ctx, dir);
    }
    vkcu_close(&ctx);

    tu_remove_tree(dir);
    if (tu_failures)
        printf("%d failure(s)\n", tu_failures);
    else
        printf("batch API: defaults, validation, a 2-file batch with a bad file, dry run, rerun and resume\n");
    return tu_failures ? 1 : 0;
}
