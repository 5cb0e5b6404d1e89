/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The public structs' room to grow (include/vkcu/version.h), as a client
 * meets it: every struct ends in its reserved words with no padding after
 * them, and vkcu_struct_size gives each one's size; each vkcu_default_*()
 * leaves reserved[] zero over a struct full of other bytes; each call that
 * takes a struct the caller filled refuses a reserved word that is set with
 * -EINVAL and one line naming the struct, the word and its defaults call,
 * and accepts the same struct with the word cleared; every struct the
 * library fills or hands to a callback comes with reserved[] zero, however
 * the caller's memory was filled before. And the reader's timings take the
 * values of the hash lists' timings, in their order.
 */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vkcu/vkcu.h>

#include "test_util.h"

#define CLIP "media/conformance/64x64-I-P-B-P-high.h264"
#define PRESET "pipelines/bt601-to-bt709.pipe"
#define GARBAGE 0x5a

#define RESERVED_WORDS(s) (sizeof((s).reserved) / sizeof((s).reserved[0]))

static int reserved_zero(const uint64_t *words, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (words[i])
            return 0;
    return 1;
}
#define ZERO(s) reserved_zero((s).reserved, RESERVED_WORDS(s))

static char last_log[1024];

static void keep_log(void *opaque, enum vkcu_log_level level, const char *message)
{
    (void)opaque;
    if (level == VKCU_LOG_ERROR)
        snprintf(last_log, sizeof(last_log), "%s", message);
}

/* The refusal's line names the struct, the word and the call that fills it. */
static void check_refusal(const char *what, int ret, const char *line, const char *type, int word)
{
    char want[128], defaults[96];
    snprintf(want, sizeof(want), "%s: reserved[%d] is", type, word);
    snprintf(defaults, sizeof(defaults), "vkcu_default_%s()", type + strlen("vkcu_"));
    CHECK(ret == -EINVAL, "%s: a reserved word set: %d, expected -EINVAL", what, ret);
    CHECK(strstr(line, want) && strstr(line, defaults) && strstr(line, vkcu_version()),
          "%s: the refusal does not name %s, %s and the library's version: '%s'", what, want, defaults, line);
}

static void test_sizes(void)
{
#define SIZE(t)                                                                                              \
    do {                                                                                                     \
        CHECK(vkcu_struct_size(#t) == sizeof(t), "vkcu_struct_size(%s) %zu, sizeof %zu", #t,                  \
              vkcu_struct_size(#t), sizeof(t));                                                              \
        CHECK(offsetof(t, reserved) + sizeof(((t *)0)->reserved) == sizeof(t) && sizeof(t) % 8 == 0,        \
              "%s does not end in its reserved words", #t);                                                  \
    } while (0)
    SIZE(vkcu_ffmpeg_info); SIZE(vkcu_stream_info); SIZE(vkcu_picture); SIZE(vkcu_progress_info);
    SIZE(vkcu_settings); SIZE(vkcu_job); SIZE(vkcu_job_result); SIZE(vkcu_batch_file); SIZE(vkcu_batch_progress);
    SIZE(vkcu_batch_settings); SIZE(vkcu_batch_result); SIZE(vkcu_frame_metrics); SIZE(vkcu_compare_job);
    SIZE(vkcu_compare_result); SIZE(vkcu_verify_job); SIZE(vkcu_preset); SIZE(vkcu_probe_info);
    SIZE(vkcu_encoder_info); SIZE(vkcu_container_info); SIZE(vkcu_decoder_info); SIZE(vkcu_reader_params);
    SIZE(vkcu_reader_info); SIZE(vkcu_frame); SIZE(vkcu_reader_stats);
#undef SIZE
    CHECK(vkcu_struct_size("vkcu_context") == 0 && vkcu_struct_size("nosuch") == 0 && vkcu_struct_size(NULL) == 0,
          "a name that is no public struct has a size");
}

static void test_defaults(void)
{
#define DEFAULTS(t, fill)                                                                                    \
    do {                                                                                                     \
        t s;                                                                                                 \
        memset(&s, GARBAGE, sizeof(s));                                                                      \
        fill(&s);                                                                                            \
        CHECK(ZERO(s), "%s leaves reserved[] as it found it", #fill);                                        \
    } while (0)
    DEFAULTS(vkcu_settings, vkcu_default_settings);
    DEFAULTS(vkcu_job, vkcu_default_job);
    DEFAULTS(vkcu_batch_settings, vkcu_default_batch_settings);
    DEFAULTS(vkcu_compare_job, vkcu_default_compare_job);
    DEFAULTS(vkcu_verify_job, vkcu_default_verify_job);
    DEFAULTS(vkcu_reader_params, vkcu_default_reader_params);
#undef DEFAULTS
    vkcu_batch_settings b;
    memset(&b, GARBAGE, sizeof(b));
    vkcu_default_batch_settings(&b);
    CHECK(ZERO(b.job), "vkcu_default_batch_settings leaves its job's reserved[] as it found it");
}

/* The two timing enums (job.h, reader.h) in one order: the reader's VFR is
 * a hash list's ffmpeg timing, DECODED its every decoded frame. */
static void test_timings(void)
{
    CHECK((int)VKCU_READER_TIMING_VFR == (int)VKCU_TIMING_FFMPEG &&
          (int)VKCU_READER_TIMING_DECODED == (int)VKCU_TIMING_DECODED &&
          (int)VKCU_READER_TIMING_CFR == (int)VKCU_TIMING_DECODED + 1, "reader timings VFR %d DECODED %d CFR %d, hash list "
          "timings FFMPEG %d DECODED %d", VKCU_READER_TIMING_VFR, VKCU_READER_TIMING_DECODED, VKCU_READER_TIMING_CFR,
          VKCU_TIMING_FFMPEG, VKCU_TIMING_DECODED);
    vkcu_reader_params p;
    vkcu_default_reader_params(&p);
    vkcu_job job;
    vkcu_default_job(&job);
    CHECK(p.timing == VKCU_READER_TIMING_DECODED && job.timing == VKCU_TIMING_FFMPEG,
          "default timings: reader %d, job %d", p.timing, job.timing);
}

static void test_settings(void)
{
    vkcu_settings s;
    vkcu_default_settings(&s);
    s.backend = VKCU_BACKEND_CPU;
    s.log_callback = keep_log;
    s.reserved[3] = 1;
    vkcu_context *ctx = (vkcu_context *)&s;
    last_log[0] = 0;
    check_refusal("vkcu_open", vkcu_open(&ctx, &s), last_log, "vkcu_settings", 3);
    CHECK(!ctx, "vkcu_open refused the settings but left *ctx set");
    s.reserved[3] = 0;
    CHECK(vkcu_open(&ctx, &s) == 0 && ctx, "vkcu_open refuses the same settings with reserved[] zero");
    vkcu_close(&ctx);
}

typedef struct seen {
    int stream_info, pictures, progress, files, batch_progress; /* calls */
    int bad;                                                    /* of them, with a reserved word set */
} seen;

static int on_open(void *opaque, const vkcu_stream_info *info)
{
    seen *w = opaque;
    w->stream_info++;
    w->bad += !ZERO(*info);
    return 0;
}

static int on_frame(void *opaque, const vkcu_picture *pic)
{
    seen *w = opaque;
    w->pictures++;
    w->bad += !ZERO(*pic);
    return 0;
}

static void on_progress(void *opaque, const vkcu_progress_info *info)
{
    seen *w = opaque;
    w->progress++;
    w->bad += !ZERO(*info);
}

static void test_job(vkcu_context *ctx, seen *w)
{
    vkcu_job job;
    vkcu_default_job(&job);
    job.input = CLIP;
    job.sink = VKCU_SINK_CALLBACK;
    job.on_open = on_open;
    job.on_frame = on_frame;
    job.callback_opaque = w;
    job.reserved[0] = 0xff00;
    vkcu_job_result r;
    memset(&r, GARBAGE, sizeof(r));
    check_refusal("vkcu_run", vkcu_run(ctx, &job, &r), r.error, "vkcu_job", 0);
    CHECK(ZERO(r), "vkcu_run's refusal leaves the result's reserved[] as it found it");
    CHECK(w->stream_info + w->pictures == 0, "vkcu_run ran the job it refused");
    job.reserved[0] = 0;
    memset(&r, GARBAGE, sizeof(r));
    CHECK(vkcu_run(ctx, &job, &r) == 0 && r.frames_out > 0, "vkcu_run refuses the same job with reserved[] zero: %s",
          r.error);
    CHECK(ZERO(r), "vkcu_run leaves the result's reserved[] as it found it");
    CHECK(w->stream_info == 1 && w->pictures == r.frames_out && w->progress > 0 && !w->bad,
          "callbacks: %d stream info, %d pictures (of %lld), %d progress reports, %d of them with reserved[] set",
          w->stream_info, w->pictures, (long long)r.frames_out, w->progress, w->bad);
}

static int on_file(void *opaque, const vkcu_batch_file *f)
{
    seen *w = opaque;
    w->files++;
    w->bad += !ZERO(*f);
    return 0;
}

static void on_batch_progress(void *opaque, const vkcu_batch_progress *p)
{
    seen *w = opaque;
    w->batch_progress++;
    w->bad += !ZERO(*p);
}

static void test_batch(vkcu_context *ctx)
{
    char in[64], out[96], link[128], cwd[4096];
    snprintf(in, sizeof(in), "%s", "/tmp/vkcu-test-abi-XXXXXX");
    CHECK(mkdtemp(in) && getcwd(cwd, sizeof(cwd)), "no temporary folder");
    snprintf(out, sizeof(out), "%s/out", in);
    snprintf(link, sizeof(link), "%s/clip.h264", in);
    char target[4200];
    snprintf(target, sizeof(target), "%s/%s", cwd, CLIP);
    CHECK(symlink(target, link) == 0, "cannot link %s", link);
    seen w = { 0 };
    vkcu_batch_settings b;
    vkcu_default_batch_settings(&b);
    b.in_dir = in;
    b.out_dir = out;
    b.job.sink = VKCU_SINK_HASH;
    b.extension = ".framemd5";
    b.file_callback = on_file;
    b.file_opaque = &w;
    b.progress_callback = on_batch_progress;
    b.progress_opaque = &w;
    vkcu_batch_result r;
    b.reserved[30] = 1;
    memset(&r, GARBAGE, sizeof(r));
    check_refusal("vkcu_batch_run", vkcu_batch_run(ctx, &b, &r), r.error, "vkcu_batch_settings", 30);
    CHECK(ZERO(r), "vkcu_batch_run's refusal leaves the result's reserved[] as it found it");
    b.reserved[30] = 0;
    b.job.reserved[5] = 1;
    check_refusal("vkcu_batch_run (its job)", vkcu_batch_run(ctx, &b, &r), r.error, "vkcu_job", 5);
    CHECK(w.files == 0, "vkcu_batch_run went through files of settings it refused");
    b.job.reserved[5] = 0;
    memset(&r, GARBAGE, sizeof(r));
    CHECK(vkcu_batch_run(ctx, &b, &r) == 0 && r.done == 1, "vkcu_batch_run refuses the same settings with "
          "reserved[] zero: %s (done %d)", r.error, r.done);
    CHECK(ZERO(r), "vkcu_batch_run leaves the result's reserved[] as it found it");
    CHECK(w.files == 1 && w.batch_progress > 0 && !w.bad, "batch callbacks: %d files, %d progress reports, %d of "
          "them with reserved[] set", w.files, w.batch_progress, w.bad);
    /* out/: the hash list and the resume record beside it (batch.h) */
    int entries = 0, hash_list = 0;
    DIR *d = opendir(out);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || !strcmp(e->d_name, "..")))
            continue;
        char path[400];
        snprintf(path, sizeof(path), "%s/%s", out, e->d_name);
        hash_list += !strcmp(e->d_name, "clip.framemd5");
        entries += unlink(path) == 0;
    }
    if (d)
        closedir(d);
    CHECK(hash_list == 1 && entries == 2 && rmdir(out) == 0 && unlink(link) == 0 && rmdir(in) == 0,
          "%s: not as the batch should leave it (%d entries in out/, hash list %d)", in, entries, hash_list);
}

static void test_regress(vkcu_context *ctx)
{
    vkcu_compare_job c;
    vkcu_default_compare_job(&c);
    c.a = c.b = CLIP;
    c.reserved[7] = 1;
    vkcu_compare_result r;
    memset(&r, GARBAGE, sizeof(r));
    check_refusal("vkcu_compare", vkcu_compare(ctx, &c, &r), r.error, "vkcu_compare_job", 7);
    CHECK(ZERO(r), "vkcu_compare's refusal leaves the result's reserved[] as it found it");
    c.reserved[7] = 0;
    memset(&r, GARBAGE, sizeof(r));
    CHECK(vkcu_compare(ctx, &c, &r) == 0 && r.paired > 0, "vkcu_compare refuses the same job with reserved[] zero: "
          "%s", r.error);
    CHECK(ZERO(r) && ZERO(r.worst), "vkcu_compare leaves the result's reserved[] (or its worst pair's) as it "
          "found it");

    const char *manifests[] = { "/nonexistent/vkcu-test-abi.toml" };
    vkcu_verify_job v;
    vkcu_default_verify_job(&v);
    v.manifests = manifests;
    v.nb_manifests = 1;
    v.reserved[0] = 2;
    last_log[0] = 0;
    check_refusal("vkcu_verify", vkcu_verify(ctx, &v), last_log, "vkcu_verify_job", 0);
    v.reserved[0] = 0;
    int ret = vkcu_verify(ctx, &v);
    CHECK(ret == VKCU_ERR_INPUT, "vkcu_verify with reserved[] zero and a missing manifest: %d, expected "
          "VKCU_ERR_INPUT", ret);
}

static void test_reader(vkcu_context *ctx)
{
    vkcu_reader_params p;
    vkcu_default_reader_params(&p);
    p.input = CLIP;
    p.reserved[31] = 0x8000000000000000ull;
    vkcu_reader *rd = NULL;
    char err[512] = "";
    check_refusal("vkcu_reader_open", vkcu_reader_open(ctx, &p, &rd, err, sizeof(err)), err, "vkcu_reader_params",
                  31);
    CHECK(!rd, "vkcu_reader_open refused the parameters but made a reader");
    p.reserved[31] = 0;
    CHECK(vkcu_reader_open(ctx, &p, &rd, err, sizeof(err)) == 0 && rd, "vkcu_reader_open refuses the same "
          "parameters with reserved[] zero: %s", err);
    if (!rd)
        return;
    vkcu_frame *f = NULL;
    CHECK(vkcu_reader_next(rd, &f, err, sizeof(err)) == 0 && f, "no first frame: %s", err);
    CHECK(!f || ZERO(*f), "a reader's frame comes with reserved[] set");
    vkcu_frame_unref(&f);
    vkcu_reader_info info;
    memset(&info, GARBAGE, sizeof(info));
    vkcu_reader_info_get(rd, &info);
    CHECK(ZERO(info), "vkcu_reader_info_get leaves reserved[] as it found it");
    vkcu_reader_stats st;
    memset(&st, GARBAGE, sizeof(st));
    vkcu_reader_stats_get(rd, &st);
    CHECK(ZERO(st), "vkcu_reader_stats_get leaves reserved[] as it found it");
    vkcu_reader_close(&rd);
}

/* The structs that describe the build and the machine. */
static void test_descriptions(void)
{
#define FILLED(t, call)                                                                                      \
    do {                                                                                                     \
        t s;                                                                                                 \
        memset(&s, GARBAGE, sizeof(s));                                                                      \
        call;                                                                                                \
        CHECK(ZERO(s), "%s leaves reserved[] as it found it", #call);                                        \
    } while (0)
    FILLED(vkcu_ffmpeg_info, vkcu_ffmpeg_info_get(&s));
    FILLED(vkcu_encoder_info, CHECK(vkcu_encoder_get(0, &s) == 0, "no encoder"));
    FILLED(vkcu_container_info, CHECK(vkcu_container_get(0, &s) == 0, "no muxer"));
    FILLED(vkcu_container_info, CHECK(vkcu_demuxer_get(0, &s) == 0, "no demuxer"));
    FILLED(vkcu_decoder_info, CHECK(vkcu_decoder_get(0, &s) == 0, "no decoder"));
    FILLED(vkcu_preset, CHECK(vkcu_preset_load(PRESET, &s, NULL, 0) == 0, "cannot load " PRESET));
    FILLED(vkcu_probe_info, vkcu_probe_summary(&s));
#undef FILLED
}

int main(void)
{
    test_sizes();
    test_defaults();
    test_timings();
    test_settings();
    vkcu_settings s;
    vkcu_default_settings(&s);
    s.backend = VKCU_BACKEND_CPU;
    s.log_callback = keep_log;
    seen w = { 0 };
    s.progress_callback = on_progress;
    s.progress_opaque = &w;
    vkcu_context *ctx = NULL;
    CHECK(vkcu_open(&ctx, &s) == 0, "vkcu_open");
    if (ctx) {
        test_job(ctx, &w);
        test_batch(ctx);
        test_regress(ctx);
        test_reader(ctx);
    }
    vkcu_close(&ctx);
    test_descriptions();
    if (tu_failures)
        printf("%d failure(s)\n", tu_failures);
    else
        printf("public API: every struct ends in reserved[] that defaults clear, calls check and results return zero\n");
    return tu_failures ? 1 : 0;
}
