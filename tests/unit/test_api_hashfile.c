/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu_job.hash_path (include/vkcu/job.h) as a program uses it: a hash list
 * written to a file by the library under the one output rule. The file's
 * bytes equal what the same job writes to a stream; an existing file is
 * refused without overwrite (and left as it was), replaced with it; an
 * input is never written over; a failing job leaves no file and no
 * temporary; a hash file on a sink that is not the hash sink is -EINVAL.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <vkcu/vkcu.h>

#define CLIP "media/conformance/64x64-I-P-B-P-high.h264"

#include "test_util.h"

static void quiet_log(void *opaque, enum vkcu_log_level level, const char *message)
{
    (void)opaque;
    (void)level;
    (void)message;
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

static int run(vkcu_context *ctx, const char *input, const char *path, FILE *stream, int overwrite, vkcu_job_result *r)
{
    vkcu_job j;
    vkcu_default_job(&j);
    j.input = input;
    j.sink = VKCU_SINK_HASH;
    j.hash_path = path;
    if (stream)
        j.hash_out = stream;
    j.overwrite = overwrite;
    return vkcu_run(ctx, &j, r);
}

int main(void)
{
    FILE *probe = fopen(CLIP, "rb");
    if (!probe) {
        printf("SKIP: %s missing\n", CLIP);
        return 77;
    }
    fclose(probe);
    char dir[] = "/tmp/vkcu-test-api-hashfile-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char path[256], ref_path[256], bad[256];
    snprintf(path, sizeof(path), "%s/clip.framemd5", dir);
    snprintf(ref_path, sizeof(ref_path), "%s/ref.framemd5", dir);
    snprintf(bad, sizeof(bad), "%s/not-video.mp4", dir);

    vkcu_settings s;
    vkcu_default_settings(&s);
    s.backend = VKCU_BACKEND_CPU;
    s.log_callback = quiet_log;
    vkcu_context *ctx = NULL;
    CHECK(vkcu_open(&ctx, &s) == 0, "open");
    if (!ctx)
        return 1;

    /* the reference: the same job to a stream */
    FILE *ref = fopen(ref_path, "w");
    vkcu_job_result r;
    int ret = run(ctx, CLIP, NULL, ref, 0, &r);
    fclose(ref);
    CHECK(ret == 0 && r.frames_out > 0, "stream job: %d %s", ret, r.error);
    static char want[1 << 16], got[1 << 16];
    long wn = tu_read_text(ref_path, want, sizeof(want));
    remove(ref_path);

    ret = run(ctx, CLIP, path, NULL, 0, &r);
    long gn = tu_read_text(path, got, sizeof(got));
    CHECK(ret == 0 && wn > 0 && gn == wn && !memcmp(got, want, (size_t)wn), "hash file: %d, %ld bytes, want %ld (%s)",
          ret, gn, wn, r.error);
    CHECK(entries(dir) == 1, "%d entries in %s after a finished job (a temporary left?)", entries(dir), dir);

    /* exists: refused without overwrite, untouched */
    FILE *f = fopen(path, "w");
    fputs("mine\n", f);
    fclose(f);
    ret = run(ctx, CLIP, path, NULL, 0, &r);
    CHECK(ret == VKCU_ERR_OUTPUT && strstr(r.error, "clip.framemd5") && r.frames_out == 0,
          "existing file: %d '%s' %lld frames", ret, r.error, (long long)r.frames_out);
    CHECK(tu_read_text(path, got, sizeof(got)) == 5 && !strcmp(got, "mine\n"), "existing file changed: '%.40s'", got);
    ret = run(ctx, CLIP, path, NULL, 1, &r);
    gn = tu_read_text(path, got, sizeof(got));
    CHECK(ret == 0 && gn == wn && !memcmp(got, want, (size_t)wn), "overwrite: %d, %ld bytes", ret, gn);

    /* never over the input, even with overwrite */
    char copy[256];
    snprintf(copy, sizeof(copy), "%s/in.h264", dir);
    FILE *in = fopen(CLIP, "rb"), *out = fopen(copy, "wb");
    size_t n;
    while ((n = fread(got, 1, sizeof(got), in)) > 0)
        fwrite(got, 1, n, out);
    fclose(in);
    fclose(out);
    struct stat before, after;
    stat(copy, &before);
    ret = run(ctx, copy, copy, NULL, 1, &r);
    stat(copy, &after);
    CHECK(ret == VKCU_ERR_OUTPUT && before.st_size == after.st_size, "input as hash file: %d '%s', size %lld -> %lld",
          ret, r.error, (long long)before.st_size, (long long)after.st_size);
    remove(copy);

    /* a failing job: no file, no temporary */
    f = fopen(bad, "w");
    fputs("this is not a video file at all\n", f);
    fclose(f);
    char bad_out[300];
    snprintf(bad_out, sizeof(bad_out), "%s/bad.framemd5", dir);
    int before_n = entries(dir);
    ret = run(ctx, bad, bad_out, NULL, 0, &r);
    CHECK(ret == VKCU_ERR_INPUT && entries(dir) == before_n, "bad input: %d, %d entries (was %d)", ret, entries(dir),
          before_n);

    /* refused at the boundary */
    vkcu_job j;
    vkcu_default_job(&j);
    j.input = CLIP;
    j.sink = VKCU_SINK_NULL;
    j.hash_path = bad_out;
    ret = vkcu_run(ctx, &j, &r);
    CHECK(ret == -EINVAL && strstr(r.error, "not the hash sink") && !strstr(r.error, "--"), "hash file, null sink: %d '%s'",
          ret, r.error);
    j.sink = VKCU_SINK_HASH;
    j.hash_path = "";
    ret = vkcu_run(ctx, &j, &r);
    CHECK(ret == -EINVAL && strstr(r.error, "empty"), "empty hash file name: %d '%s'", ret, r.error);

    vkcu_close(&ctx);
    tu_remove_tree(dir);
    if (tu_failures)
        printf("%d failure(s)\n", tu_failures);
    else
        printf("hash file: same bytes as a stream, exists/overwrite/input rules, nothing left by a failure\n");
    return tu_failures ? 1 : 0;
}
