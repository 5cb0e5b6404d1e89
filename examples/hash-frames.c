/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hash-frames: one hash per decoded frame of a video file, in FFmpeg's
 * framemd5 format, as `vkcu hash FILE --algo ALGO` prints them.
 *
 *   cc hash-frames.c $(pkg-config --cflags --libs vkcu) -o hash-frames
 *   ./hash-frames in.mkv [md5|sha256|crc32|xxh64|blake3]
 *
 * Uses nothing but the installed <vkcu/vkcu.h>. Exit status: 0, 2 for a
 * usage error, 1 when the job fails (the library's message is on stderr).
 */
#include <stdio.h>

#include <vkcu/vkcu.h>

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s FILE [md5|sha256|crc32|xxh64|blake3]\n", argv[0]);
        return 2;
    }
    vkcu_job job;
    vkcu_default_job(&job);
    job.input = argv[1];
    job.sink = VKCU_SINK_HASH;
    job.hash_out = stdout;
    job.hash_format = VKCU_HASH_FORMAT_FRAMEMD5;
    if (argc == 3 && vkcu_hash_algo_parse(argv[2], &job.hash_algo) < 0) {
        fprintf(stderr, "%s: unknown hash algorithm '%s' (md5, sha256, crc32, xxh64, blake3)\n", argv[0], argv[2]);
        return 2;
    }

    /* Default settings: the GPU when one is there, else the CPU; messages
     * to stderr. */
    vkcu_settings settings;
    vkcu_default_settings(&settings);
    vkcu_context *ctx = NULL;
    char err[256];
    int ret = vkcu_open(&ctx, &settings);
    if (ret < 0) {
        fprintf(stderr, "%s: %s\n", argv[0], vkcu_error_string(ret, err, sizeof(err)));
        return 1;
    }

    vkcu_job_result result;
    ret = vkcu_run(ctx, &job, &result);
    vkcu_close(&ctx);
    if (ret < 0) {
        /* the library has logged result.error already */
        return 1;
    }
    fprintf(stderr, "%s: %lld frames hashed with %s (%s)\n", argv[0], (long long)result.frames_out,
            vkcu_hash_algo_name(job.hash_algo), vkcu_path_name(result.path));
    return 0;
}
