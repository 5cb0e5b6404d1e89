/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The public lists of what this build writes (include/vkcu/formats.h), as
 * a program outside the library uses them: encoders with their pixel
 * formats and GPU marking, containers with the encoder "auto" picks, which
 * container holds which encoder, encoder presets and tunes; and the checks
 * vkcu_run makes with them before opening anything (a container that cannot
 * hold the encoder, a preset that is not the encoder's). x264's and x265's
 * preset and tune names are compared with their own headers' lists where
 * those are installed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <vkcu/vkcu.h>

#include "test_util.h"

#if defined(__has_include)
#if __has_include(<x264.h>)
#include <stdint.h>
#include <x264.h>
#define HAVE_X264_H 1
#endif
#if __has_include(<x265.h>)
#include <x265.h>
#define HAVE_X265_H 1
#endif
#endif

static int find_encoder(const char *name, vkcu_encoder_info *e)
{
    for (int i = 0; vkcu_encoder_get(i, e) == 0; i++)
        if (!strcmp(e->name, name))
            return 1;
    return 0;
}

static int has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
            return 1;
    return 0;
}

static void test_encoders(void)
{
    vkcu_encoder_info e;
    int video = 0, audio = 0, gpu = 0;
    for (int i = 0; vkcu_encoder_get(i, &e) == 0; i++) {
        video += !strcmp(e.media, "video");
        audio += !strcmp(e.media, "audio");
        gpu += e.gpu != NULL;
        CHECK(e.name && e.codec && e.description, "encoder %d has its names", i);
    }
    CHECK(video >= 5 && audio >= 1, "%d video and %d audio encoders", video, audio);
    CHECK(vkcu_encoder_get(-1, &e) == -ENOENT && vkcu_encoder_get(video + audio + 100, &e) == -ENOENT,
          "past the ends: -ENOENT");
    CHECK(vkcu_encoder_get(0, NULL) == -EINVAL, "NULL info: -EINVAL");
    CHECK(find_encoder("libx264", &e) && !strcmp(e.media, "video") && !strcmp(e.codec, "h264") && !e.gpu &&
              has_word(e.pix_fmts, "yuv420p") && has_word(e.pix_fmts, "yuv420p10le"),
          "libx264: h264 on the CPU, takes yuv420p and yuv420p10le ('%s')", e.pix_fmts);
    if (find_encoder("h264_vulkan", &e))
        CHECK(e.gpu && !strcmp(e.gpu, "vulkan") && gpu >= 1, "h264_vulkan runs on the GPU through vulkan (%s)",
              e.gpu ? e.gpu : "CPU");
    if (find_encoder("opus", &e))
        CHECK(!strcmp(e.media, "audio") && !e.pix_fmts[0], "opus is an audio encoder");
}

static void test_containers(void)
{
    vkcu_container_info c;
    int mkv = 0, y4m = 0, n = 0;
    for (int i = 0; vkcu_container_get(i, &c) == 0; i++, n++) {
        if (!strcmp(c.name, "matroska"))
            mkv = !strcmp(c.extensions, "mkv") && c.encoder && !strcmp(c.encoder, "libx264");
        if (!strcmp(c.name, "yuv4mpegpipe"))
            y4m = c.encoder && !strcmp(c.encoder, "wrapped_avframe");
        if (!strcmp(c.name, "wav"))
            CHECK(!c.encoder, "wav holds no video: no auto encoder (%s)", c.encoder);
    }
    CHECK(n >= 5 && mkv && y4m, "%d containers; matroska (mkv, libx264) %d, yuv4mpegpipe (wrapped_avframe) %d", n,
          mkv, y4m);
    CHECK(vkcu_container_get(n, &c) == -ENOENT && vkcu_container_get(0, NULL) == -EINVAL, "past the end, NULL");
    const char *m = vkcu_container_of("dir/out.mkv"), *y = vkcu_container_of("out.y4m");
    CHECK(m && !strcmp(m, "matroska") && y && !strcmp(y, "yuv4mpegpipe"), "out.mkv: %s, out.y4m: %s", m, y);
    CHECK(!vkcu_container_of("notes.txt") && !vkcu_container_of("noext") && !vkcu_container_of(NULL),
          "no container for .txt, no extension, NULL");
    CHECK(vkcu_container_takes("matroska", "libx264") == 1, "matroska holds libx264");
    CHECK(vkcu_container_takes("yuv4mpegpipe", "libx264") == 0, "y4m does not hold libx264 (FFmpeg does not say)");
    CHECK(vkcu_container_takes("yuv4mpegpipe", "rawvideo") == 1, "y4m holds rawvideo");
    CHECK(vkcu_container_takes("webm", "libx264") == 0, "webm does not hold libx264");
    CHECK(vkcu_container_takes("nosuchmuxer", "libx264") == -EINVAL && vkcu_container_takes("matroska", "nosuch") ==
              -EINVAL && vkcu_container_takes("matroska", "aac") == -EINVAL,
          "unknown names, and an audio encoder: -EINVAL");
}

static void test_choices(void)
{
    const char *p0 = vkcu_encoder_choice("libx264", "preset", 0);
    int n = 0, medium = 0;
    for (const char *c; (c = vkcu_encoder_choice("libx264", "preset", n)); n++)
        medium += !strcmp(c, "medium");
    CHECK(p0 && !strcmp(p0, "ultrafast") && n == 10 && medium == 1, "libx264: %d presets from %s", n, p0);
    CHECK(!vkcu_encoder_choice("libx264", "preset", -1) && !vkcu_encoder_choice("nosuch", "preset", 0) &&
              !vkcu_encoder_choice("libx264", "nosuchoption", 0) && !vkcu_encoder_choice("rawvideo", "preset", 0),
          "no names: a negative index, an unknown encoder or option, an encoder without presets");
#ifdef HAVE_X264_H
    for (int i = 0; x264_preset_names[i] || vkcu_encoder_choice("libx264", "preset", i); i++) {
        const char *ours = vkcu_encoder_choice("libx264", "preset", i);
        CHECK(ours && x264_preset_names[i] && !strcmp(ours, x264_preset_names[i]), "x264 preset %d: %s / %s", i,
              ours, x264_preset_names[i]);
    }
    for (int i = 0; x264_tune_names[i] || vkcu_encoder_choice("libx264", "tune", i); i++) {
        const char *ours = vkcu_encoder_choice("libx264", "tune", i);
        CHECK(ours && x264_tune_names[i] && !strcmp(ours, x264_tune_names[i]), "x264 tune %d: %s / %s", i, ours,
              x264_tune_names[i]);
    }
#else
    printf("note: no x264.h here: x264's names not compared with its header\n");
#endif
#ifdef HAVE_X265_H
    for (int i = 0; x265_preset_names[i] || vkcu_encoder_choice("libx265", "preset", i); i++) {
        const char *ours = vkcu_encoder_choice("libx265", "preset", i);
        CHECK(ours && x265_preset_names[i] && !strcmp(ours, x265_preset_names[i]), "x265 preset %d: %s / %s", i,
              ours, x265_preset_names[i]);
    }
    for (int i = 0; x265_tune_names[i] || vkcu_encoder_choice("libx265", "tune", i); i++) {
        const char *ours = vkcu_encoder_choice("libx265", "tune", i);
        CHECK(ours && x265_tune_names[i] && !strcmp(ours, x265_tune_names[i]), "x265 tune %d: %s / %s", i, ours,
              x265_tune_names[i]);
    }
#else
    printf("note: no x265.h here: x265's names not compared with its header\n");
#endif
    /* FFmpeg's own named constants, where the encoder has them */
    vkcu_encoder_info e;
    if (find_encoder("h264_vulkan", &e)) {
        int hq = 0;
        for (int i = 0; vkcu_encoder_choice("h264_vulkan", "tune", i); i++)
            hq += !strcmp(vkcu_encoder_choice("h264_vulkan", "tune", i), "hq");
        CHECK(hq == 1, "h264_vulkan's tunes, from its option's constants, hold hq");
    }
}

static void test_job_checks(void)
{
    vkcu_settings s;
    vkcu_default_settings(&s);
    s.backend = VKCU_BACKEND_CPU;
    s.log_level = VKCU_LOG_QUIET;
    vkcu_context *ctx = NULL;
    CHECK(vkcu_open(&ctx, &s) == 0, "open");
    if (!ctx)
        return;
    vkcu_job j;
    vkcu_job_result r;
    /* Nothing is opened: the input need not exist. */
    vkcu_default_job(&j);
    j.input = "/nonexistent/in.mp4";
    j.output = "/nonexistent/out.y4m";
    j.encoder = "libx264";
    CHECK(vkcu_run(ctx, &j, &r) == -EINVAL && strstr(r.error, "yuv4mpegpipe cannot hold h264") &&
              strstr(r.error, "rawvideo") && strstr(r.error, "wrapped_avframe"),
          "y4m with libx264: -EINVAL naming the encoders y4m takes: '%s'", r.error);
    j.output = "/nonexistent/out.mkv";
    j.preset = "superfast2";
    CHECK(vkcu_run(ctx, &j, &r) == -EINVAL && strstr(r.error, "no preset 'superfast2': did you mean 'superfast'"),
          "preset superfast2: '%s'", r.error);
    j.preset = "veryfast";
    j.encoder_opts = "tune=film,fastdecod";
    CHECK(vkcu_run(ctx, &j, &r) == -EINVAL && strstr(r.error, "no tune 'fastdecod': did you mean 'fastdecode'"),
          "tune film,fastdecod: '%s'", r.error);
    j.encoder_opts = NULL;
    j.encoder = "libx246";
    CHECK(vkcu_run(ctx, &j, &r) == -EINVAL && strstr(r.error, "libx246") && strstr(r.error, "libx264"),
          "an unknown encoder names the near one: '%s'", r.error);
    j.encoder = "libx264";
    CHECK(vkcu_run(ctx, &j, &r) == VKCU_ERR_INPUT, "a valid job gets as far as its missing input: %d (%s)",
          vkcu_run(ctx, &j, &r), r.error);
    vkcu_close(&ctx);
}

int main(void)
{
    test_encoders();
    test_containers();
    test_choices();
    test_job_checks();
    if (tu_failures)
        printf("%d failure(s)\n", tu_failures);
    else
        printf("public API: encoders, containers, presets and the checks made with them, as documented\n");
    return tu_failures ? 1 : 0;
}
