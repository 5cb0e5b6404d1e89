/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Readers (include/vkcu/reader.h) on the CPU backend, as a program outside
 * the library uses them (<vkcu/vkcu.h> and FFmpeg's md5 only):
 *   - iterated frames hash (md5 of each plane's visible rows, packed) and
 *     are timed exactly as `vkcu hash` lines say (VKCU_READER_TIMING_VFR), for a
 *     clip in MP4 and a raw conformance stream;
 *   - random access gives the frames a full iteration gives, in the asked
 *     order, repeats included, and pays its set-up once;
 *   - frame_at_time finds each frame by its own time;
 *   - max_held is enforced at once (-ENOBUFS), and detach lifts it;
 *   - DLPack tensors, read back at the offsets dlpack.h gives the fields:
 *     device, dtype, shape, strides (the row pitch), data, and a deleter
 *     that releases the frame;
 *   - errors: missing file (-ENOENT), bad parameters (-EINVAL naming the
 *     field), random access with a temporal chain or past the end, a raw
 *     stream (-ENOSYS);
 *   - struct sizes as the library reports them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/md5.h>

#include <vkcu/vkcu.h>

#include "test_util.h"

#define MP4 "media/gen/h264-aac.mp4"
#define RAW "media/conformance/64x64-I-P-B-P-high.h264"
#define MAXF 512

typedef struct log_capture {
    int errors;
    char last_error[512];
} log_capture;

static void capture_log(void *opaque, enum vkcu_log_level level, const char *message)
{
    log_capture *c = opaque;
    if (level == VKCU_LOG_ERROR) {
        c->errors++;
        snprintf(c->last_error, sizeof(c->last_error), "%s", message);
    }
}

static void frame_md5(const vkcu_frame *f, char hex[33])
{
    struct AVMD5 *m = av_md5_alloc();
    uint8_t d[16];
    av_md5_init(m);
    for (int p = 0; p < f->nb_planes; p++)
        for (int y = 0; y < f->rows[p]; y++)
            av_md5_update(m, f->data[p] + (ptrdiff_t)y * f->linesize[p], f->row_bytes[p]);
    av_md5_final(m, d);
    av_free(m);
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

/* `vkcu hash` of a clip through the API: md5 and pts of each line. */
static int hash_lines(vkcu_context *ctx, const char *input, const char *chain, char md5[][33], int64_t *pts, int max)
{
    FILE *out = tmpfile();
    vkcu_job j;
    vkcu_default_job(&j);
    j.input = input;
    j.chain = chain;
    j.sink = VKCU_SINK_HASH;
    j.hash_out = out;
    vkcu_job_result r;
    int ret = vkcu_run(ctx, &j, &r);
    CHECK(ret == 0, "hash %s: %d (%s)", input, ret, r.error);
    int n = 0;
    char line[256];
    rewind(out);
    while (fgets(line, sizeof(line), out) && n < max) {
        long long dts, p, dur;
        int size;
        char h[65];
        if (line[0] == '#' || sscanf(line, "0, %lld, %lld, %lld, %d, %64s", &dts, &p, &dur, &size, h) != 5)
            continue;
        memcpy(md5[n], h, 32);
        md5[n][32] = 0;
        pts[n++] = p;
    }
    fclose(out);
    return n;
}

static vkcu_reader *open_reader(vkcu_context *ctx, const char *input, const char *chain, enum vkcu_reader_timing timing,
                                int max_held, int detach)
{
    vkcu_reader_params p;
    vkcu_default_reader_params(&p);
    p.input = input;
    p.chain = chain;
    p.timing = timing;
    p.max_held = max_held;
    p.detach = detach;
    vkcu_reader *r = (vkcu_reader *)&p; /* must be set */
    char err[512] = "";
    int ret = vkcu_reader_open(ctx, &p, &r, err, sizeof(err));
    CHECK(ret == 0 && r, "open %s: %d (%s)", input, ret, err);
    return ret == 0 ? r : NULL;
}

/* Iterated frames against `vkcu hash` of the same clip and chain. */
static void test_iteration_equals_hash(vkcu_context *ctx, const char *input, const char *chain)
{
    static char want[MAXF][33], got[33];
    static int64_t want_pts[MAXF];
    int n = hash_lines(ctx, input, chain, want, want_pts, MAXF);
    CHECK(n > 2, "%s: only %d hash lines", input, n);
    vkcu_reader *r = open_reader(ctx, input, chain, VKCU_READER_TIMING_VFR, 8, 0);
    if (!r)
        return;
    char err[512];
    int i = 0, bad = 0;
    for (vkcu_frame *f; vkcu_reader_next(r, &f, err, sizeof(err)) == 0 && f; i++) {
        frame_md5(f, got);
        if (i >= n || strcmp(got, want[i]) || f->pts != want_pts[i]) {
            if (!bad++)
                CHECK(0, "%s %s: frame %d: md5 %s pts %lld, hash says %s pts %lld", input, chain ? chain : "", i, got,
                      (long long)f->pts, i < n ? want[i] : "-", i < n ? (long long)want_pts[i] : -1LL);
        }
        CHECK(f->memory == VKCU_MEMORY_HOST && f->device == -1, "CPU frame in memory %d", f->memory);
        vkcu_frame_unref(&f);
    }
    CHECK(i == n, "%s %s: %d frames iterated, %d hash lines", input, chain ? chain : "", i, n);
    vkcu_frame *f = (vkcu_frame *)&i;
    CHECK(vkcu_reader_next(r, &f, err, sizeof(err)) == 0 && !f, "after the end: a frame or an error");
    vkcu_reader_stats st;
    vkcu_reader_stats_get(r, &st);
    CHECK(st.frames == n && st.host_copies == n && st.held == 0 && st.cuda_frames == 0 && st.path == VKCU_PATH_CPU,
          "stats: %lld frames, %lld copies, %d held, path %d", (long long)st.frames, (long long)st.host_copies, st.held,
          st.path);
    /* rewind: the same frames again */
    vkcu_reader_rewind(r);
    int again = 0;
    for (; vkcu_reader_next(r, &f, err, sizeof(err)) == 0 && f; again++)
        vkcu_frame_unref(&f);
    CHECK(again == n, "after rewind: %d frames, expected %d", again, n);
    vkcu_reader_close(&r);
    CHECK(r == NULL, "close left the pointer set");
}

static void test_random_access(vkcu_context *ctx, const char *chain)
{
    static char all[MAXF][33];
    static int64_t all_pts[MAXF];
    char err[512];
    vkcu_reader *r = open_reader(ctx, MP4, chain, VKCU_READER_TIMING_DECODED, 8, 0);
    if (!r)
        return;
    int n = 0;
    for (vkcu_frame *f; n < MAXF && vkcu_reader_next(r, &f, err, sizeof(err)) == 0 && f; n++) {
        frame_md5(f, all[n]);
        all_pts[n] = f->pts;
        CHECK(f->index == n, "iterated frame %d has index %lld", n, (long long)f->index);
        vkcu_frame_unref(&f);
    }
    int64_t count = -1;
    CHECK(vkcu_reader_frame_count(r, &count, err, sizeof(err)) == 0 && count == n, "frame count %lld, iterated %d (%s)",
          (long long)count, n, err);
    /* out of order, a repeat, both ends, the middle of a group of pictures */
    int64_t idx[] = { n - 1, 3, 0, 17 % n, 3, n / 2, 1 };
    int k = (int)(sizeof(idx) / sizeof(idx[0]));
    vkcu_frame *got[8] = { 0 };
    int ret = vkcu_reader_frames_at(r, idx, k, got, err, sizeof(err));
    CHECK(ret == 0, "frames_at: %d (%s)", ret, err);
    for (int i = 0; ret == 0 && i < k; i++) {
        char h[33];
        frame_md5(got[i], h);
        CHECK(!strcmp(h, all[idx[i]]) && got[i]->pts == all_pts[idx[i]] && got[i]->index == idx[i],
              "frames_at[%d] = frame %lld: md5 %s pts %lld index %lld; iteration: %s pts %lld", i, (long long)idx[i], h,
              (long long)got[i]->pts, (long long)got[i]->index, all[idx[i]], (long long)all_pts[idx[i]]);
    }
    CHECK(ret != 0 || got[1] == got[4], "a repeated number gives two references to one frame");
    vkcu_reader_stats st;
    vkcu_reader_stats_get(r, &st);
    CHECK(st.held == 6, "%d frames held after frames_at of 6 distinct", st.held);
    for (int i = 0; i < k; i++)
        vkcu_frame_unref(&got[i]);
    vkcu_reader_stats_get(r, &st);
    CHECK(st.held == 0, "%d frames held after releasing them", st.held);
    /* a second call reuses the decoder: one set-up */
    int64_t one = n - 2;
    CHECK(vkcu_reader_frames_at(r, &one, 1, got, err, sizeof(err)) == 0, "second call: %s", err);
    vkcu_frame_unref(&got[0]);
    vkcu_reader_stats_get(r, &st);
    CHECK(st.random_setups == 1 && st.random_seeks >= 1 && st.random_decoded >= 7,
          "random access: %d set-ups, %lld seeks, %lld decoded", st.random_setups, (long long)st.random_seeks,
          (long long)st.random_decoded);
    /* each frame's own time finds it; times outside are refused */
    int bad = 0;
    for (int i = 0; i < n; i++) {
        int64_t at = -1;
        vkcu_frame *f = NULL;
        if (vkcu_reader_frames_at(r, (int64_t[]){ i }, 1, &f, err, sizeof(err)) == 0) {
            double sec = (double)f->pts * f->tb_num / f->tb_den;
            if (vkcu_reader_frame_at_time(r, sec, &at, err, sizeof(err)) < 0 || at != i)
                bad++;
            vkcu_frame_unref(&f);
        }
        if (i > 4)
            break; /* a few are enough; each is a seek */
    }
    CHECK(bad == 0, "%d frames not found at their own time", bad);
    int64_t at;
    CHECK(vkcu_reader_frame_at_time(r, -1.0, &at, err, sizeof(err)) == -EINVAL, "time -1 accepted");
    CHECK(vkcu_reader_frame_at_time(r, 1e6, &at, err, sizeof(err)) == -EINVAL && strstr(err, "outside"),
          "time 1e6: '%s'", err);
    /* numbers past the end */
    int64_t past = n;
    CHECK(vkcu_reader_frames_at(r, &past, 1, got, err, sizeof(err)) == -EINVAL && strstr(err, "does not exist"),
          "frame %d: '%s'", n, err);
    vkcu_reader_close(&r);
}

static void test_held_limit(vkcu_context *ctx)
{
    char err[512] = "";
    vkcu_reader *r = open_reader(ctx, MP4, NULL, VKCU_READER_TIMING_DECODED, 2, 0);
    if (!r)
        return;
    vkcu_frame *a = NULL, *b = NULL, *c = NULL;
    CHECK(vkcu_reader_next(r, &a, err, sizeof(err)) == 0 && a, "first frame: %s", err);
    CHECK(vkcu_reader_next(r, &b, err, sizeof(err)) == 0 && b, "second frame: %s", err);
    int ret = vkcu_reader_next(r, &c, err, sizeof(err));
    CHECK(ret == -ENOBUFS && !c && strstr(err, "max_held") && strstr(err, "holds 2"),
          "third frame with max_held 2: %d, '%s'", ret, err);
    /* a reference of a tensor's counts: the frame stays held until both go */
    void *t = NULL;
    CHECK(vkcu_frame_dlpack(a, 0, 1, 0, &t, err, sizeof(err)) == 0 && t, "dlpack: %s", err);
    vkcu_frame_unref(&a);
    CHECK(vkcu_reader_next(r, &c, err, sizeof(err)) == -ENOBUFS, "a tensor's frame was not counted as held");
    /* DLManagedTensorVersioned: the deleter at offset 16 */
    void (*deleter)(void *) = *(void (**)(void *))((uint8_t *)t + 16);
    deleter(t);
    CHECK(vkcu_reader_next(r, &c, err, sizeof(err)) == 0 && c, "after the tensor's deleter: %s", err);
    /* a detached copy is the caller's: it counts against nothing */
    vkcu_frame *copy = NULL;
    CHECK(vkcu_frame_detach(b, &copy, err, sizeof(err)) == 0 && copy && copy->data[0] != b->data[0], "detach: %s",
          err);
    char h1[33], h2[33];
    frame_md5(b, h1);
    frame_md5(copy, h2);
    CHECK(!strcmp(h1, h2) && copy->pts == b->pts && copy->index == b->index, "detached copy differs");
    vkcu_frame_unref(&b);
    vkcu_frame *d = NULL;
    CHECK(vkcu_reader_next(r, &d, err, sizeof(err)) == 0 && d, "held: c and d, copy not counted: %s", err);
    vkcu_frame_unref(&copy);
    vkcu_frame_unref(&c);
    /* a frame outlives its reader */
    vkcu_reader_close(&r);
    frame_md5(d, h1);
    vkcu_frame_unref(&d);

    /* detach = 1: frames of their own, as many as the caller likes */
    r = open_reader(ctx, MP4, NULL, VKCU_READER_TIMING_DECODED, 1, 1);
    vkcu_frame *keep[12] = { 0 };
    int n = 0;
    while (r && n < 12 && vkcu_reader_next(r, &keep[n], err, sizeof(err)) == 0 && keep[n])
        n++;
    CHECK(n == 12, "detach: %d frames held with max_held 1 (%s)", n, err);
    vkcu_reader_stats st;
    vkcu_reader_stats_get(r, &st);
    CHECK(st.detached == 12 && st.held == 0, "detach: %lld copies, %d held", (long long)st.detached, st.held);
    for (int i = 0; i < n; i++)
        vkcu_frame_unref(&keep[i]);
    vkcu_reader_close(&r);
}

/* Reads a DLPack field at its dlpack.h offset. */
#define AT(t, off, type) (*(type *)((uint8_t *)(t) + (off)))
typedef void (*deleter_fn)(void *);

static void test_dlpack(vkcu_context *ctx)
{
    char err[512] = "";
    struct { const char *chain; const char *fmt; int planes_tensor; } cases[] = {
        { NULL, "yuv420p", 0 },
        { "convert=format=yuv420p10", "yuv420p10le", 0 },
        { "convert=format=rgb24", "rgb24", 1 },
        { "convert=format=yuv444p", "yuv444p", 1 },
        { "convert=format=nv12", "yuv420p", 0 }, /* handed out planar, as hashed */
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        vkcu_reader *r = open_reader(ctx, MP4, cases[c].chain, VKCU_READER_TIMING_DECODED, 4, 0);
        vkcu_frame *f = NULL;
        if (!r || vkcu_reader_next(r, &f, err, sizeof(err)) < 0 || !f) {
            CHECK(0, "%s: no frame: %s", cases[c].chain, err);
            vkcu_reader_close(&r);
            continue;
        }
        CHECK(!strcmp(f->format, cases[c].fmt), "%s: format %s, expected %s", cases[c].chain, f->format, cases[c].fmt);
        for (int versioned = 0; versioned < 2; versioned++) {
            void *t = NULL;
            int ret = vkcu_frame_dlpack(f, 0, versioned, 0, &t, err, sizeof(err));
            CHECK(ret == 0, "%s: plane 0: %s", cases[c].chain, err);
            if (ret)
                continue;
            /* DLManagedTensor: DLTensor at 0, deleter at 56; versioned: version at 0 (1.0),
             * deleter at 16, flags at 24, DLTensor at 32 */
            size_t base = versioned ? 32 : 0;
            if (versioned)
                CHECK(AT(t, 0, uint32_t) == 1 && AT(t, 4, uint32_t) == 0 && AT(t, 24, uint64_t) == 0,
                      "version %u.%u flags %llu", AT(t, 0, uint32_t), AT(t, 4, uint32_t),
                      (unsigned long long)AT(t, 24, uint64_t));
            void *data = AT(t, base + 0, void *);
            int32_t dev_type = AT(t, base + 8, int32_t), ndim = AT(t, base + 16, int32_t);
            uint8_t code = AT(t, base + 20, uint8_t), bits = AT(t, base + 21, uint8_t);
            const int64_t *shape = AT(t, base + 24, int64_t *), *strides = AT(t, base + 32, int64_t *);
            uint64_t offset = AT(t, base + 40, uint64_t);
            int packed = f->components > 1;
            CHECK(data == f->data[0] && offset == 0 && dev_type == 1 && code == 1 && bits == 8 * f->bytes_per_sample &&
                  ndim == (packed ? 3 : 2) && shape[0] == f->rows[0] &&
                  shape[1] == f->row_bytes[0] / (f->bytes_per_sample * f->components) &&
                  strides[0] == f->linesize[0] / f->bytes_per_sample && strides[1] == (packed ? f->components : 1) &&
                  (!packed || (shape[2] == 3 && strides[2] == 1)),
                  "%s: tensor: data %s, device %d, dtype %u/%u, ndim %d, shape %lld x %lld, strides %lld %lld",
                  cases[c].chain, data == f->data[0] ? "ok" : "wrong", dev_type, code, bits, ndim,
                  (long long)shape[0], (long long)shape[1], (long long)strides[0], (long long)strides[1]);
            AT(t, versioned ? 16 : 56, deleter_fn)(t);
        }
        void *t = NULL;
        int ret = vkcu_frame_dlpack(f, -1, 1, 0, &t, err, sizeof(err));
        if (cases[c].planes_tensor) {
            CHECK(ret == 0, "%s: whole frame: %s", cases[c].chain, err);
            if (!ret) {
                const int64_t *shape = AT(t, 32 + 24, int64_t *), *strides = AT(t, 32 + 32, int64_t *);
                int32_t ndim = AT(t, 32 + 16, int32_t);
                if (f->nb_planes == 3)
                    CHECK(ndim == 3 && shape[0] == 3 && shape[1] == f->height && shape[2] == f->width &&
                              strides[0] == (f->data[1] - f->data[0]) && strides[1] == f->linesize[0],
                          "%s: whole frame %d dims %lld x %lld x %lld", cases[c].chain, ndim, (long long)shape[0],
                          (long long)shape[1], (long long)shape[2]);
                AT(t, 16, deleter_fn)(t);
            }
        } else {
            CHECK(ret == -EINVAL && strstr(err, "differ"), "%s: whole frame of unequal planes: %d '%s'",
                  cases[c].chain, ret, err);
        }
        CHECK(vkcu_frame_dlpack(f, f->nb_planes, 0, 0, &t, err, sizeof(err)) == -EINVAL, "plane past the last");
        vkcu_frame_unref(&f);
        vkcu_reader_stats st;
        vkcu_reader_stats_get(r, &st);
        CHECK(st.held == 0, "%s: %d frames still held after every tensor's deleter", cases[c].chain, st.held);
        vkcu_reader_close(&r);
    }
}

static void test_errors(vkcu_context *ctx, log_capture *lc)
{
    char err[512] = "";
    vkcu_reader_params p;
    vkcu_reader *r = NULL;
    vkcu_default_reader_params(&p);
    p.input = "media/no-such-file.mkv";
    int before = lc->errors;
    int ret = vkcu_reader_open(ctx, &p, &r, err, sizeof(err));
    CHECK(ret == -ENOENT && !r && strstr(err, "no-such-file.mkv") && lc->errors == before + 1,
          "missing file: %d '%s', %d messages", ret, err, lc->errors - before);
    vkcu_default_reader_params(&p);
    p.input = MP4;
    p.max_held = 0;
    ret = vkcu_reader_open(ctx, &p, &r, err, sizeof(err));
    CHECK(ret == -EINVAL && strstr(err, "max_held 0 is out of range"), "max_held 0: %d '%s'", ret, err);
    vkcu_default_reader_params(&p);
    p.input = MP4;
    p.timing = (enum vkcu_reader_timing)9;
    ret = vkcu_reader_open(ctx, &p, &r, err, sizeof(err));
    CHECK(ret == -EINVAL && strstr(err, "timing 9"), "timing 9: %d '%s'", ret, err);
    vkcu_default_reader_params(&p);
    p.input = MP4;
    p.chain = "scale=w=16:nokey=1";
    ret = vkcu_reader_open(ctx, &p, &r, err, sizeof(err));
    CHECK(ret == -EINVAL && strstr(err, "nokey"), "bad chain: %d '%s'", ret, err);
    vkcu_default_reader_params(&p);
    p.input = "media/gen/not-video.mp4";
    ret = vkcu_reader_open(ctx, &p, &r, err, sizeof(err));
    CHECK(ret == VKCU_ERR_INPUT && strstr(err, "not-video.mp4"), "not a video: %d '%s'", ret, err);

    /* random access with a temporal operator, and on a raw stream */
    r = open_reader(ctx, MP4, "denoise=tnr", VKCU_READER_TIMING_DECODED, 4, 0);
    vkcu_frame *f = NULL;
    int64_t i0 = 0;
    ret = r ? vkcu_reader_frames_at(r, &i0, 1, &f, err, sizeof(err)) : -1;
    CHECK(ret == -EINVAL && strstr(err, "denoise") && !f, "frames_at with denoise: %d '%s'", ret, err);
    vkcu_reader_close(&r);
    r = open_reader(ctx, RAW, NULL, VKCU_READER_TIMING_DECODED, 4, 0);
    vkcu_reader_info info;
    vkcu_reader_info_get(r, &info);
    CHECK(info.width == 64 && info.height == 64 && info.seekable == 0 && !strcmp(info.codec, "h264"),
          "raw stream info: %dx%d seekable %d %s", info.width, info.height, info.seekable, info.codec);
    ret = r ? vkcu_reader_frames_at(r, &i0, 1, &f, err, sizeof(err)) : -1;
    CHECK(ret == -ENOSYS && strstr(err, "seekable"), "frames_at on a raw stream: %d '%s'", ret, err);
    vkcu_reader_close(&r);

    /* a failing job: the error at the first frame, then the end */
    vkcu_default_reader_params(&p);
    p.input = MP4;
    p.start_frame = 100000;
    CHECK(vkcu_reader_open(ctx, &p, &r, err, sizeof(err)) == 0, "open: %s", err);
    ret = vkcu_reader_next(r, &f, err, sizeof(err));
    CHECK(ret == VKCU_ERR_USAGE && strstr(err, "start_frame=100000 is past the end"), "start past the end: %d '%s'",
          ret, err);
    CHECK(vkcu_reader_next(r, &f, err, sizeof(err)) == 0 && !f, "after a failure: not the end");
    vkcu_reader_close(&r);
}

static void test_struct_sizes(void)
{
    CHECK(vkcu_struct_size("vkcu_frame") == sizeof(vkcu_frame) &&
          vkcu_struct_size("vkcu_reader_params") == sizeof(vkcu_reader_params) &&
          vkcu_struct_size("vkcu_job") == sizeof(vkcu_job) && vkcu_struct_size("vkcu_settings") == sizeof(vkcu_settings) &&
          vkcu_struct_size("vkcu_compare_result") == sizeof(vkcu_compare_result),
          "struct sizes differ from the headers'");
    CHECK(vkcu_struct_size("nosuch") == 0 && vkcu_struct_size(NULL) == 0, "unknown struct has a size");
}

int main(void)
{
    vkcu_settings s;
    vkcu_default_settings(&s);
    s.backend = VKCU_BACKEND_CPU;
    log_capture lc = { 0 };
    s.log_callback = capture_log;
    s.log_opaque = &lc;
    s.log_level = VKCU_LOG_WARNING;
    vkcu_context *ctx = NULL;
    if (vkcu_open(&ctx, &s) < 0) {
        printf("cannot open a context\n");
        return 1;
    }
    test_struct_sizes();
    test_iteration_equals_hash(ctx, MP4, NULL);
    test_iteration_equals_hash(ctx, MP4, "scale=w=160:h=90,convert=format=nv12");
    test_iteration_equals_hash(ctx, RAW, NULL);
    test_random_access(ctx, NULL);
    test_random_access(ctx, "crop=w=64:h=48,convert=format=yuv420p10");
    test_held_limit(ctx);
    test_dlpack(ctx);
    test_errors(ctx, &lc);
    vkcu_close(&ctx);
    if (tu_failures)
        printf("%d failure(s)\n", tu_failures);
    else
        printf("readers: frames equal vkcu hash, random access equals iteration, held limit, DLPack, errors\n");
    return tu_failures ? 1 : 0;
}
