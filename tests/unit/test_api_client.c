/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The public calls a client needs beyond jobs, as the command line uses
 * them now that it links libvkcu.so and includes only include/vkcu/:
 * numbers read from text as vkcu reads them, the hash vocabulary and its
 * lists, exit statuses, the namer of text made outside a context, the end
 * of a pipe's reader, and what this build reads and which FFmpeg it
 * carries (vkcu --version and vkcu formats print these).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vkcu/vkcu.h>

#include "test_util.h"

static void test_numbers(void)
{
    int64_t i = 7;
    CHECK(vkcu_parse_int("-12", -100, 100, &i) == 0 && i == -12, "-12: %lld", (long long)i);
    const char *bad_ints[] = { "", " 12", "+12", "12x", "1.5", "101", "1e2", "99999999999999999999" };
    for (size_t k = 0; k < sizeof(bad_ints) / sizeof(bad_ints[0]); k++) {
        i = 7;
        CHECK(vkcu_parse_int(bad_ints[k], -100, 100, &i) == -EINVAL && i == 7, "integer '%s' accepted (%lld)",
              bad_ints[k], (long long)i);
    }
    CHECK(vkcu_parse_int(NULL, 0, 1, &i) == -EINVAL, "NULL integer accepted");
    double d = 7;
    CHECK(vkcu_parse_number("1e3", 0, 1e4, &d) == 0 && d == 1000, "1e3: %g", d);
    CHECK(vkcu_parse_number("-0.5", -1, 1, &d) == 0 && d == -0.5, "-0.5: %g", d);
    const char *bad_numbers[] = { "nan", "inf", "1e999", "0x10", "2", " 1", "1 " };
    for (size_t k = 0; k < sizeof(bad_numbers) / sizeof(bad_numbers[0]); k++) {
        d = 7;
        CHECK(vkcu_parse_number(bad_numbers[k], -1, 1.5, &d) == -EINVAL && d == 7, "number '%s' accepted (%g)",
              bad_numbers[k], d);
    }
    int64_t b = 7;
    CHECK(vkcu_parse_bitrate("4M", &b) == 0 && b == 4000000, "4M: %lld", (long long)b);
    CHECK(vkcu_parse_bitrate("800k", &b) == 0 && b == 800000, "800k: %lld", (long long)b);
    CHECK(vkcu_parse_bitrate("2.5m", &b) == 0 && b == 2500000, "2.5m: %lld", (long long)b);
    CHECK(vkcu_parse_bitrate("1G", &b) == 0 && b == 1000000000, "1G: %lld", (long long)b);
    const char *bad_rates[] = { "999", "11G", "4MB", "M", "-4M", "" };
    for (size_t k = 0; k < sizeof(bad_rates) / sizeof(bad_rates[0]); k++) {
        b = 7;
        CHECK(vkcu_parse_bitrate(bad_rates[k], &b) == -EINVAL && b == 7, "bitrate '%s' accepted (%lld)",
              bad_rates[k], (long long)b);
    }
    CHECK(VKCU_BITRATE_MIN == 1000 && VKCU_BITRATE_MAX == 10000000000LL, "bitrate range");
}

/* Each named algorithm: its id, parsed back in any case, and its name as
 * framemd5 headers write it; the lists say the same in the same order. */
static void test_hash_names(void)
{
#define ROW(e, id, name) { e, id, name },
    static const struct {
        enum vkcu_hash_algo algo;
        const char *id, *name;
    } rows[] = { VKCU_HASH_NAMED(ROW, ROW, ROW) };
#undef ROW
    char list[256] = "";
    for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
        enum vkcu_hash_algo a = VKCU_HASH_ADLER32;
        char upper[16];
        snprintf(upper, sizeof(upper), "%s", rows[k].id);
        for (char *c = upper; *c; c++)
            *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
        CHECK(!strcmp(vkcu_hash_algo_id(rows[k].algo), rows[k].id), "id of %d: %s", rows[k].algo,
              vkcu_hash_algo_id(rows[k].algo));
        CHECK(!strcmp(vkcu_hash_algo_name(rows[k].algo), rows[k].name), "name of %s: %s", rows[k].id,
              vkcu_hash_algo_name(rows[k].algo));
        CHECK(vkcu_hash_algo_parse(upper, &a) == 0 && a == rows[k].algo, "%s parses to %d", upper, a);
        size_t n = strlen(list);
        snprintf(list + n, sizeof(list) - n, "%s%s", n ? "|" : "", rows[k].id);
    }
    CHECK(!strcmp(list, VKCU_HASH_ALGOS_PIPE), "rows '%s', list '%s'", list, VKCU_HASH_ALGOS_PIPE);
    CHECK(!strcmp(VKCU_HASH_ALGOS, "md5, sha256, crc32, xxh64 or blake3"), "'%s'", VKCU_HASH_ALGOS);
    enum vkcu_hash_algo a = VKCU_HASH_BLAKE3;
    CHECK(vkcu_hash_algo_parse("adler32", &a) < 0 && a == VKCU_HASH_BLAKE3, "adler32 has no name to parse");
    CHECK(!strcmp(vkcu_hash_algo_id(VKCU_HASH_ADLER32), "md5") && !strcmp(vkcu_hash_algo_name(VKCU_HASH_ADLER32),
                                                                           "ADLER32"), "adler32's id and name");
#define FMT(e, name, ext) { e, name },
    static const struct {
        enum vkcu_hash_format format;
        const char *name;
    } formats[] = { VKCU_HASH_FORMATS_NAMED(FMT, FMT, FMT) };
#undef FMT
    for (size_t k = 0; k < sizeof(formats) / sizeof(formats[0]); k++)
        CHECK(!strcmp(vkcu_hash_format_name(formats[k].format), formats[k].name), "format %s named %s",
              formats[k].name, vkcu_hash_format_name(formats[k].format));
    CHECK(!strcmp(VKCU_HASH_FORMATS, "framemd5, framecrc or json"), "'%s'", VKCU_HASH_FORMATS);
}

static void test_exit_codes(void)
{
    static const struct {
        int err, status;
    } map[] = {
        { 0, VKCU_EXIT_OK },
        { VKCU_ERR_USAGE, 2 },
        { VKCU_ERR_INPUT, 3 },
        { VKCU_ERR_OUTPUT, 4 },
        { VKCU_ERR_DEVICE, 5 },
        { VKCU_ERR_MISMATCH, 6 },
        { VKCU_ERR_INTERRUPT, 130 },
        { VKCU_ERR_PIPE_CLOSED, 0 },
        { -ENOMEM, VKCU_EXIT_FAIL },
        { -EINVAL, 1 }, /* the library's mapping: the vkcu command makes it a usage error itself */
    };
    for (size_t k = 0; k < sizeof(map) / sizeof(map[0]); k++)
        CHECK(vkcu_exit_code(map[k].err) == map[k].status, "error %d: exit %d, expected %d", map[k].err,
              vkcu_exit_code(map[k].err), map[k].status);
}

static const char *bracket_namer(void *opaque, const char *setting, const char *value, char *buf, size_t size)
{
    ++*(int *)opaque;
    snprintf(buf, size, "<%s%s%s>", setting, value ? " " : "", value ? value : "");
    return buf;
}

/* A preset that names an encoder file key is refused with text that tells
 * which setting takes it: made outside any context, it names the setting
 * with the process's namer. */
static void test_setting_namer(void)
{
    char path[] = "/tmp/vkcu-test-namer-XXXXXX.pipe";
    int fd = mkstemps(path, 5);
    CHECK(fd >= 0, "temporary preset");
    if (fd < 0)
        return;
    const char text[] = "description namer\nencoder libx264\nencoder-opt passlogfile=x\n";
    CHECK(write(fd, text, sizeof(text) - 1) == (ssize_t)(sizeof(text) - 1), "preset written");
    close(fd);
    vkcu_preset ps;
    char err[1024] = "";
    CHECK(vkcu_preset_load(path, &ps, err, sizeof(err)) == VKCU_ERR_USAGE && strstr(err, "with encoder_opts instead"),
          "without a namer: '%s'", err);
    int calls = 0;
    vkcu_set_setting_name_callback(bracket_namer, &calls);
    CHECK(vkcu_preset_load(path, &ps, err, sizeof(err)) == VKCU_ERR_USAGE &&
          strstr(err, "with <encoder_opts> instead") && calls == 1, "with a namer (%d calls): '%s'", calls, err);
    vkcu_set_setting_name_callback(NULL, NULL);
    CHECK(vkcu_preset_load(path, &ps, err, sizeof(err)) == VKCU_ERR_USAGE && strstr(err, "with encoder_opts instead") &&
          calls == 1, "the namer cleared: '%s'", err);
    unlink(path);
}

/* A pipe whose reader closed is a reader gone; a full device is not. */
static void test_reader_gone(void)
{
    signal(SIGPIPE, SIG_IGN);
    int fds[2];
    CHECK(pipe(fds) == 0, "pipe");
    close(fds[0]);
    FILE *f = fdopen(fds[1], "w");
    int failed = f && (fputs("frame\n", f), fflush(f) != 0);
    CHECK(failed && vkcu_stream_reader_gone(f) == 1, "a pipe without its reader: failed %d, gone %d", failed,
          f ? vkcu_stream_reader_gone(f) : -1);
    if (f)
        fclose(f);
    FILE *full = fopen("/dev/full", "w");
    if (!full) {
        printf("no /dev/full here: the full-disk case is not checked\n");
        return;
    }
    failed = (fputs("frame\n", full), fflush(full) != 0);
    CHECK(failed && vkcu_stream_reader_gone(full) == 0, "/dev/full: failed %d, taken for a reader gone", failed);
    fclose(full);
}

static void test_ffmpeg(void)
{
    vkcu_ffmpeg_info ff;
    memset(&ff, 0xa5, sizeof(ff));
    vkcu_ffmpeg_info_get(&ff);
    CHECK(ff.version && ff.version[0] && ff.configuration, "FFmpeg version '%s'", ff.version ? ff.version : "(null)");
    /* FFmpeg 8.1: libavcodec 62, libavformat 62, libavutil 60 */
    CHECK(ff.avcodec >> 16 >= 62 && ff.avformat >> 16 >= 62 && ff.avutil >> 16 >= 60, "libraries %u.%u %u %u",
          ff.avcodec >> 16, (ff.avcodec >> 8) & 0xff, ff.avformat >> 16, ff.avutil >> 16);
    CHECK(strstr(ff.configuration, "--enable-vulkan"), "configuration '%.200s' lacks Vulkan", ff.configuration);
    vkcu_decoder_info d;
    int n = 0, h264 = 0, ffv1 = 0, cuvid = 0, empty = 0;
    for (; vkcu_decoder_get(n, &d) == 0; n++) {
        h264 += !strcmp(d.codec, "h264") && strstr(d.decoders, "h264") && d.codec_id > 0 && d.description[0];
        ffv1 += !strcmp(d.codec, "ffv1");
        cuvid += strstr(d.decoders, "_cuvid") != NULL;
        empty += !d.decoders[0] || !d.codec[0];
    }
    CHECK(n >= 10 && n <= ff.nb_decoders && h264 == 1 && ffv1 == 1 && !cuvid && !empty,
          "%d video codecs of %d decoders (h264 %d, ffv1 %d, cuvid %d, empty %d)", n, ff.nb_decoders, h264, ffv1,
          cuvid, empty);
    CHECK(vkcu_decoder_get(-1, &d) == -ENOENT && vkcu_decoder_get(n, &d) == -ENOENT && vkcu_decoder_get(0, NULL) ==
          -EINVAL, "decoders past the ends");
    vkcu_container_info c;
    int m = 0, mkv = 0;
    for (; vkcu_demuxer_get(m, &c) == 0; m++)
        mkv += !strcmp(c.name, "matroska,webm") && strstr(c.extensions, "mkv") && !c.encoder && c.description[0];
    CHECK(m == ff.nb_demuxers && mkv == 1, "%d demuxers of %d, matroska %d", m, ff.nb_demuxers, mkv);
    CHECK(vkcu_demuxer_get(-1, &c) == -ENOENT && vkcu_demuxer_get(m, &c) == -ENOENT && vkcu_demuxer_get(0, NULL) ==
          -EINVAL, "demuxers past the ends");
    int muxers = 0;
    while (vkcu_container_get(muxers, &c) == 0)
        muxers++;
    CHECK(muxers == ff.nb_muxers && ff.nb_encoders > 0, "%d muxers listed, %d counted", muxers, ff.nb_muxers);
}

int main(void)
{
    test_numbers();
    test_hash_names();
    test_exit_codes();
    test_setting_namer();
    test_reader_gone();
    test_ffmpeg();
    if (tu_failures)
        printf("%d failure(s)\n", tu_failures);
    else
        printf("public API: numbers, hash names, exit codes, the namer outside contexts, pipe ends, FFmpeg's lists\n");
    return tu_failures ? 1 : 0;
}
