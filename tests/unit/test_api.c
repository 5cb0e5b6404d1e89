/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The public API (include/vkcu/) as a program outside the library uses it:
 * only <vkcu/vkcu.h> and FFmpeg's own headers. Checks the version calls,
 * validation at the boundary (-EINVAL with one message through the log
 * callback, naming no command-line option), the context's life cycle, and
 * real CPU jobs whose frames and hash lines equal the reference framemd5
 * of a conformance clip.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/frame.h>
#include <libavutil/md5.h>
#include <libavutil/pixdesc.h>
#include <libavutil/imgutils.h>

#include <vkcu/vkcu.h>

#define CLIP "media/conformance/64x64-I-P-B-P-high.h264"

#include "test_util.h"

/* What the log callback saw. */
typedef struct log_capture {
    int errors, others;
    char last_error[512];
} log_capture;

static void capture_log(void *opaque, enum vkcu_log_level level, const char *message)
{
    log_capture *c = opaque;
    if (level == VKCU_LOG_ERROR) {
        c->errors++;
        snprintf(c->last_error, sizeof(c->last_error), "%s", message);
    } else {
        c->others++;
    }
}

static vkcu_context *open_capturing(log_capture *c, vkcu_settings *s)
{
    memset(c, 0, sizeof(*c));
    s->log_callback = capture_log;
    s->log_opaque = c;
    vkcu_context *ctx = (vkcu_context *)&ctx; /* must be cleared on failure */
    int ret = vkcu_open(&ctx, s);
    if (ret < 0)
        CHECK(ctx == NULL, "a failed open leaves *ctx set");
    return ret < 0 ? NULL : ctx;
}

static void test_version(void)
{
    char want[32];
    snprintf(want, sizeof(want), "%d.%d.%d", VKCU_VERSION_MAJOR, VKCU_VERSION_MINOR, VKCU_VERSION_PATCH);
    CHECK(!strcmp(vkcu_version(), want), "vkcu_version() '%s', headers say '%s'", vkcu_version(), want);
    CHECK(vkcu_version_api() == VKCU_VERSION_INT_CURRENT, "vkcu_version_api() 0x%x", vkcu_version_api());
    CHECK(VKCU_VERSION_INT(1, 0, 0) > VKCU_VERSION_INT(0, 255, 255), "VKCU_VERSION_INT does not order versions");
}

/* One bad setting: -EINVAL, no context, one error line naming `what`. */
static void bad_setting(const char *name, void (*spoil)(vkcu_settings *), const char *what)
{
    vkcu_settings s;
    vkcu_default_settings(&s);
    spoil(&s);
    log_capture c;
    vkcu_context *ctx = open_capturing(&c, &s);
    CHECK(!ctx, "%s: accepted", name);
    vkcu_close(&ctx);
    CHECK(c.errors == 1, "%s: %d error messages", name, c.errors);
    CHECK(strstr(c.last_error, what), "%s: message '%s' lacks '%s'", name, c.last_error, what);
    CHECK(!strstr(c.last_error, "--"), "%s: message names a command-line option: '%s'", name, c.last_error);
}
static void ring_small(vkcu_settings *s) { s->ring_size = VKCU_RING_SIZE_MIN - 1; }
static void ring_big(vkcu_settings *s) { s->ring_size = VKCU_RING_SIZE_MAX + 1; }
static void device_neg(vkcu_settings *s) { s->device = -1; }
static void stall_neg(vkcu_settings *s) { s->stall_timeout_ms = -1; }
static void backend_bad(vkcu_settings *s) { s->backend = (enum vkcu_backend)7; }
static void threads_big(vkcu_settings *s) { s->decode_threads = 257; }
static void queue_big(vkcu_settings *s) { s->decode_queue = VKCU_DECODE_QUEUE_MAX + 1; }
static void queue_neg(vkcu_settings *s) { s->decode_queue = -2; }

static void test_settings(void)
{
    bad_setting("ring size 2", ring_small, "ring_size 2 is out of range [3, 16]");
    bad_setting("ring size 17", ring_big, "ring_size 17 is out of range [3, 16]");
    bad_setting("device -1", device_neg, "device -1");
    bad_setting("stall timeout -1", stall_neg, "stall_timeout_ms -1");
    bad_setting("backend 7", backend_bad, "backend 7");
    bad_setting("decode threads 257", threads_big, "decode_threads 257");
    bad_setting("decode queue 64", queue_big, "decode_queue 64 is out of range [-1, 63]");
    bad_setting("decode queue -2", queue_neg, "decode_queue -2 is out of range [-1, 63]");

    CHECK(vkcu_open(NULL, NULL) == -EINVAL, "vkcu_open(NULL) accepted");
    vkcu_settings s;
    vkcu_default_settings(&s);
    CHECK(s.ring_size >= VKCU_RING_SIZE_MIN && s.ring_size <= VKCU_RING_SIZE_MAX, "default ring size %d", s.ring_size);
    CHECK(s.decode_queue == -1, "default decode queue %d (expected -1: the claimed queues)", s.decode_queue);
    log_capture c;
    vkcu_context *ctx = open_capturing(&c, &s);
    CHECK(ctx, "defaults refused: %s", c.last_error);
    vkcu_close(&ctx);
    CHECK(ctx == NULL, "vkcu_close left the pointer set");
    vkcu_close(&ctx); /* NULL: nothing happens */
    vkcu_close(NULL);
}

/* One bad job: -EINVAL before anything opens, the message in both places. */
static void bad_job(vkcu_context *ctx, log_capture *c, const char *name, const vkcu_job *job, const char *what)
{
    vkcu_job_result r;
    int before = c->errors;
    int ret = vkcu_run(ctx, job, &r);
    CHECK(ret == -EINVAL, "%s: returned %d", name, ret);
    CHECK(c->errors == before + 1, "%s: %d error messages", name, c->errors - before);
    CHECK(strstr(r.error, what) && !strcmp(r.error, c->last_error), "%s: result '%s', log '%s', expected '%s'", name,
          r.error, c->last_error, what);
    CHECK(!strstr(r.error, "--"), "%s: message names a command-line option: '%s'", name, r.error);
    CHECK(r.frames_in == 0, "%s: decoded %lld frames", name, (long long)r.frames_in);
}

static void test_job_validation(vkcu_context *ctx, log_capture *c)
{
    vkcu_job j;
    vkcu_default_job(&j);
    bad_job(ctx, c, "no input", &j, "no input");
    j.input = CLIP;
    j.sink = VKCU_SINK_NULL;
    j.crf = 64;
    bad_job(ctx, c, "crf 64", &j, "crf 64 is out of range [-1, 63]");
    vkcu_default_job(&j);
    j.input = CLIP;
    j.sink = VKCU_SINK_NULL;
    CHECK(j.audio_streams == VKCU_STREAMS_ALL && j.subtitle_streams == VKCU_STREAMS_ALL,
          "default job: audio_streams %d subtitle_streams %d", j.audio_streams, j.subtitle_streams);
    j.audio_streams = VKCU_STREAMS_NONE - 1;
    bad_job(ctx, c, "audio_streams -2", &j, "audio_streams -2 is out of range [-1, 1024]");
    j.audio_streams = VKCU_STREAM_NTH(0);
    j.subtitle_streams = VKCU_STREAM_NTH(VKCU_STREAM_INDEX_MAX + 1);
    bad_job(ctx, c, "subtitle_streams 1025", &j, "subtitle_streams 1025 is out of range [-1, 1024]");
    vkcu_default_job(&j);
    j.input = CLIP;
    j.sink = VKCU_SINK_CALLBACK;
    bad_job(ctx, c, "callback sink without callback", &j, "needs a frame callback");
    vkcu_default_job(&j);
    j.input = CLIP;
    j.sink = VKCU_SINK_ENCODE;
    bad_job(ctx, c, "encode without output", &j, "needs an output");
    vkcu_default_job(&j);
    j.input = CLIP;
    j.sink = VKCU_SINK_NULL;
    j.start_time = -2;
    bad_job(ctx, c, "start time -2", &j, "start_time -2");
    j.start_time = 1;
    j.start_frame = 3;
    bad_job(ctx, c, "start time and frame", &j, "both set");
    vkcu_default_job(&j);
    j.input = CLIP;
    j.sink = VKCU_SINK_NULL;
    j.chain = "convert=format=yuv420p10,nosuchop";
    bad_job(ctx, c, "unknown operator", &j, "nosuchop");
    CHECK(vkcu_run(ctx, &j, NULL) == -EINVAL, "NULL result accepted");
}

/* The reference: frame lines of CLIP's framemd5 (pts and md5). */
static int load_reference(char hashes[][33], int max)
{
    FILE *f = fopen(CLIP ".framemd5", "r");
    if (!f)
        return -1;
    char line[256];
    int n = 0;
    while (fgets(line, sizeof(line), f) && n < max) {
        if (line[0] == '#')
            continue;
        char *h = strrchr(line, ' ');
        if (h && strlen(h + 1) >= 32)
            snprintf(hashes[n++], 33, "%.32s", h + 1);
    }
    fclose(f);
    return n;
}

typedef struct frame_sink {
    int opened, frames;
    vkcu_stream_info info;
    char md5[16][33];
    int bad_layout;     /* frames whose planes disagree with the AVFrame beside them */
    int64_t last_pts;
} frame_sink;

static int on_open(void *opaque, const vkcu_stream_info *info)
{
    frame_sink *fs = opaque;
    fs->opened++;
    fs->info = *info;
    fs->last_pts = INT64_MIN;
    return 0;
}

/* MD5 of the visible picture, planes in order, rows packed: framemd5's,
 * read through vkcu_picture alone (no FFmpeg layout knowledge). */
static int on_frame(void *opaque, const vkcu_picture *pic)
{
    frame_sink *fs = opaque;
    struct AVMD5 *md5 = av_md5_alloc();
    if (!md5)
        return -ENOMEM;
    av_md5_init(md5);
    for (int p = 0; p < pic->nb_planes; p++)
        for (int y = 0; y < pic->rows[p]; y++)
            av_md5_update(md5, pic->data[p] + y * pic->linesize[p], pic->row_bytes[p]);
    uint8_t d[16];
    av_md5_final(md5, d);
    av_free(md5);
    if (fs->frames < 16)
        for (int i = 0; i < 16; i++)
            snprintf(fs->md5[fs->frames] + 2 * i, 3, "%02x", d[i]);
    /* the picture describes the AVFrame it carries, and times only grow */
    const AVFrame *f = pic->avframe;
    int size = 0;
    for (int p = 0; p < pic->nb_planes; p++)
        size += pic->rows[p] * pic->row_bytes[p];
    if (!f || f->data[0] != pic->data[0] || f->width != pic->width || pic->nb_planes != 3 ||
        strcmp(pic->format, av_get_pix_fmt_name(f->format)) ||
        size != av_image_get_buffer_size(f->format, f->width, f->height, 1) || pic->pts <= fs->last_pts)
        fs->bad_layout++;
    fs->last_pts = pic->pts;
    fs->frames++;
    return 0;
}

typedef struct progress_seen {
    int calls, finals;
    int64_t last_frames;
} progress_seen;

static void on_progress(void *opaque, const vkcu_progress_info *info)
{
    progress_seen *p = opaque;
    p->calls++;
    p->finals += info->final;
    p->last_frames = info->frames;
}

static void test_jobs(void)
{
    char ref[16][33];
    int nref = load_reference(ref, 16);
    CHECK(nref == 3, "reference %s.framemd5: %d frames", CLIP, nref);
    if (nref <= 0)
        return;

    vkcu_settings s;
    vkcu_default_settings(&s);
    s.backend = VKCU_BACKEND_CPU;
    progress_seen ps = { 0 };
    s.progress_callback = on_progress;
    s.progress_opaque = &ps;
    log_capture c;
    vkcu_context *ctx = open_capturing(&c, &s);
    CHECK(ctx, "open: %s", c.last_error);
    if (!ctx)
        return;
    test_job_validation(ctx, &c);

    /* frames to a callback: the reference's bytes */
    frame_sink fs = { 0 };
    vkcu_job j;
    vkcu_default_job(&j);
    j.input = CLIP;
    j.sink = VKCU_SINK_CALLBACK;
    j.on_open = on_open;
    j.on_frame = on_frame;
    j.callback_opaque = &fs;
    vkcu_job_result r;
    int ret = vkcu_run(ctx, &j, &r);
    CHECK(ret == 0, "callback job: %d (%s)", ret, r.error);
    CHECK(fs.opened == 1 && fs.info.width == 64 && fs.info.height == 64 && fs.info.format &&
          !strcmp(fs.info.format, "yuv420p"), "on_open: %d calls, %dx%d %s", fs.opened, fs.info.width,
          fs.info.height, fs.info.format ? fs.info.format : "(no format)");
    CHECK(fs.bad_layout == 0, "%d frames whose vkcu_picture does not describe their AVFrame", fs.bad_layout);
    CHECK(fs.frames == nref && r.frames_out == nref, "callback job: %d frames, result %lld, reference %d", fs.frames,
          (long long)r.frames_out, nref);
    for (int i = 0; i < nref && i < fs.frames; i++)
        CHECK(!strcmp(fs.md5[i], ref[i]), "frame %d: md5 %s, reference %s", i, fs.md5[i], ref[i]);
    CHECK(r.path == VKCU_PATH_CPU && !strcmp(vkcu_path_name(r.path), "cpu"), "path %s", vkcu_path_name(r.path));
    CHECK(ps.finals == 1 && ps.last_frames == nref, "progress: %d calls, %d final, last %lld frames", ps.calls,
          ps.finals, (long long)ps.last_frames);
    CHECK(c.errors == 9, "a good job logged an error: %s", c.last_error); /* the 9 refusals only */

    /* hash lines to the caller's stream: the reference's lines */
    FILE *out = tmpfile();
    vkcu_default_job(&j);
    j.input = CLIP;
    j.sink = VKCU_SINK_HASH;
    j.hash_out = out;
    ret = vkcu_run(ctx, &j, &r);
    CHECK(ret == 0, "hash job: %d (%s)", ret, r.error);
    rewind(out);
    char line[256];
    int n = 0;
    while (out && fgets(line, sizeof(line), out)) {
        if (line[0] == '#')
            continue;
        CHECK(n < nref && strstr(line, ref[n]), "hash line %d: %s", n, line);
        n++;
    }
    CHECK(n == nref, "hash job: %d lines", n);
    if (out)
        fclose(out);

    /* a missing input: an input error, one message naming the file */
    int before = c.errors;
    vkcu_default_job(&j);
    j.input = "media/no-such-file.mkv";
    j.sink = VKCU_SINK_NULL;
    ret = vkcu_run(ctx, &j, &r);
    CHECK(ret < 0 && ret != -EINVAL, "missing input: %d", ret);
    CHECK(c.errors == before + 1 && strstr(c.last_error, "no-such-file.mkv"), "missing input: %d messages, '%s'",
          c.errors - before, c.last_error);
    vkcu_close(&ctx);

    /* a quiet context hears nothing */
    vkcu_default_settings(&s);
    s.backend = VKCU_BACKEND_CPU;
    s.log_level = VKCU_LOG_QUIET;
    ctx = open_capturing(&c, &s);
    ret = ctx ? vkcu_run(ctx, &j, &r) : -1;
    CHECK(ret < 0 && c.errors == 0 && c.others == 0 && r.error[0], "quiet: %d, %d messages", ret,
          c.errors + c.others);
    vkcu_close(&ctx);
}

static void test_chains(void)
{
    char err[256];
    CHECK(vkcu_chain_check("convert=format=yuv420p10,scale=w=32:h=32", err, sizeof(err)) == 0, "valid chain: %s", err);
    CHECK(vkcu_chain_check(NULL, err, sizeof(err)) == 0 && vkcu_chain_check("", NULL, 0) == 0, "empty chain refused");
    err[0] = 0;
    CHECK(vkcu_chain_check("scale=w=32:nokey=1", err, sizeof(err)) == -EINVAL && strstr(err, "nokey"),
          "unknown key: '%s'", err);
    int n = 0, scale = 0;
    for (const char *name; (name = vkcu_operator_name(n)); n++)
        scale += !strcmp(name, "scale");
    CHECK(n >= 5 && scale == 1, "%d operators, scale %d times", n, scale);
    CHECK(vkcu_operator_name(-1) == NULL && vkcu_operator_name(n) == NULL, "names past the ends");
    FILE *f = tmpfile();
    CHECK(f && vkcu_operator_describe("scale", f) == 0, "describe scale");
    char text[4096] = "";
    if (f) {
        rewind(f);
        size_t got = fread(text, 1, sizeof(text) - 1, f);
        text[got] = 0;
        fclose(f);
    }
    CHECK(strstr(text, "accuracy:") && strstr(text, "default"), "describe scale: '%.200s'", text);
    CHECK(vkcu_operator_describe("nosuchop", stdout) == -EINVAL, "describe nosuchop");
    /* keys in the order values without a key take them */
    const char *k0 = vkcu_operator_key("scale", 0), *k1 = vkcu_operator_key("scale", 1);
    CHECK(k0 && k1 && !strcmp(k0, "w") && !strcmp(k1, "h"), "scale's first keys: %s, %s", k0 ? k0 : "(null)",
          k1 ? k1 : "(null)");
    CHECK(!vkcu_operator_key("copy", 0) && !vkcu_operator_key("nosuchop", 0) && !vkcu_operator_key("scale", -1) &&
          !vkcu_operator_key(NULL, 0), "no keys for copy, an unknown operator or a negative index");
    CHECK(vkcu_chain_check("scale=32:24:bicubic", err, sizeof(err)) == 0, "values in key order: %s", err);
    err[0] = 0;
    CHECK(vkcu_chain_check("scal=32", err, sizeof(err)) == -EINVAL && strstr(err, "did you mean 'scale'"),
          "misspelt operator: '%s'", err);
    char buf[128];
    CHECK(vkcu_error_string(-EINVAL, buf, sizeof(buf)) == buf && buf[0], "error string");
    CHECK(strcmp(vkcu_error_string(VKCU_ERR_INPUT, buf, sizeof(buf)), "invalid input") == 0, "VKCU_ERR_INPUT: %s", buf);
}

int main(void)
{
    test_version();
    test_settings();
    test_jobs();
    test_chains();
    if (tu_failures)
        printf("%d failure(s)\n", tu_failures);
    else
        printf("public API: version, validation, callbacks and CPU jobs as documented\n");
    return tu_failures ? 1 : 0;
}
