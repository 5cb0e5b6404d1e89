/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * decode-chain: decode a video file, run an operator chain on its frames and
 * receive each processed frame in a callback, with the library's messages
 * going through a log callback of our own.
 *
 *   cc decode-chain.c $(pkg-config --cflags --libs vkcu) -o decode-chain
 *   ./decode-chain in.mkv 'crop=w=640:h=360,scale=w=320:h=180' [out.raw]
 *
 * Prints the stream the chain produces (size, pixel format, frame rate,
 * time base), one line per frame (its time and whether it is a key frame),
 * then the count and the path the frames took (GPU or CPU). With a third
 * argument it also writes the frames' pixels to that file, planes in
 * order and rows packed: the bytes `vkcu hash --whole` hashes. The file
 * must not exist yet, and is removed again when the job fails.
 * Uses nothing but the installed <vkcu/vkcu.h>: a vkcu_picture describes
 * its planes without any FFmpeg header.
 * Exit status: 0, 2 for a usage error or an invalid chain, 1 when the job
 * or the output file fails.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <vkcu/vkcu.h>

typedef struct frame_counter {
    long long frames;
    FILE *raw; /* NULL: pixels not written */
} frame_counter;

/* Library threads call this; stderr is line-buffered enough for us. */
static void log_line(void *opaque, enum vkcu_log_level level, const char *message)
{
    (void)opaque;
    fprintf(stderr, "decode-chain: %s%s\n", level == VKCU_LOG_ERROR ? "error: " : "", message);
}

static int on_open(void *opaque, const vkcu_stream_info *info)
{
    (void)opaque;
    printf("stream: %dx%d %s, %d/%d fps, time base %d/%d\n", info->width, info->height, info->format, info->fps_num,
           info->fps_den, info->tb_num, info->tb_den);
    return 0;
}

static int on_frame(void *opaque, const vkcu_picture *pic)
{
    frame_counter *c = opaque;
    printf("frame %lld pts %lld%s\n", c->frames++, (long long)pic->pts, pic->key_frame ? " key" : "");
    /* The planes are the library's until we return: copy what we keep. */
    for (int p = 0; c->raw && p < pic->nb_planes; p++)
        for (int y = 0; y < pic->rows[p]; y++)
            if (fwrite(pic->data[p] + y * pic->linesize[p], 1, (size_t)pic->row_bytes[p], c->raw) !=
                (size_t)pic->row_bytes[p])
                return -EIO; /* ends the job with this error */
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: %s FILE CHAIN [RAW_OUT]   (e.g. 'crop=w=64:h=48')\n", argv[0]);
        return 2;
    }
    char err[512];
    /* A chain can be checked before any file or device is opened. */
    if (vkcu_chain_check(argv[2], err, sizeof(err)) < 0) {
        fprintf(stderr, "%s: invalid chain: %s\n", argv[0], err);
        return 2;
    }

    vkcu_settings settings;
    vkcu_default_settings(&settings);
    settings.log_callback = log_line;
    settings.log_level = VKCU_LOG_WARNING;
    vkcu_context *ctx = NULL;
    int ret = vkcu_open(&ctx, &settings);
    if (ret < 0) {
        fprintf(stderr, "%s: %s\n", argv[0], vkcu_error_string(ret, err, sizeof(err)));
        return 1;
    }

    frame_counter counter = { 0 };
    const char *raw = argc == 4 ? argv[3] : NULL;
    /* "x": never replace a file that exists */
    if (raw && !(counter.raw = fopen(raw, "wbx"))) {
        fprintf(stderr, "%s: %s: %s (choose a new name)\n", argv[0], raw, strerror(errno));
        vkcu_close(&ctx);
        return 1;
    }
    vkcu_job job;
    vkcu_default_job(&job);
    job.input = argv[1];
    job.chain = argv[2];
    job.sink = VKCU_SINK_CALLBACK;
    job.on_open = on_open;
    job.on_frame = on_frame;
    job.callback_opaque = &counter;

    vkcu_job_result result;
    ret = vkcu_run(ctx, &job, &result);
    vkcu_close(&ctx);
    if (counter.raw && fclose(counter.raw) && ret >= 0) {
        fprintf(stderr, "%s: %s: %s\n", argv[0], raw, strerror(errno));
        ret = -EIO;
    }
    if (ret < 0) {
        if (raw)
            remove(raw); /* no partial output */
        return 1; /* log_line printed why */
    }
    printf("frames: %lld (%s)\n", counter.frames, vkcu_path_name(result.path));
    return 0;
}
