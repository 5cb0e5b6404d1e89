/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The persistent row-worker pool (util/pool.h) behind vkcu_parallel_rows:
 * - every row is done exactly once, in the same bands threads created per
 *   call had, for 1..9 threads and heights around the band edges;
 * - a scale,denoise chain over 40 frames gives the same bytes with 1 and 4
 *   threads;
 * - the threads of the process do not grow with frames: one pool's worth
 *   is started for 40 frames (pool counter and /proc/self/task), and the
 *   job's end (vkcu_pool_thread_release) joins them all.
 * All of it again pinned to one CPU (as `taskset -c 0`).
 */
#include <dirent.h>
#include <sched.h>
#include <string.h>
#include <libavutil/frame.h>
#include <libavutil/imgutils.h>
#include <libavutil/mem.h>

#include "ops/op.h"
#include "test_util.h"
#include "util/pool.h"

typedef struct rows_ctx {
    int visits[600];
    int band_start[600]; /* y0 of the band that did the row */
} rows_ctx;

static void mark_rows(void *arg, int y0, int y1)
{
    rows_ctx *c = arg;
    for (int y = y0; y < y1; y++) {
        __atomic_fetch_add(&c->visits[y], 1, __ATOMIC_RELAXED);
        c->band_start[y] = y0;
    }
}

static void check_bands(void)
{
    const int heights[] = { 1, 2, 3, 7, 17, 18, 19, 64, 127, 599 };
    for (int threads = 1; threads <= 9; threads++)
        for (size_t hi = 0; hi < sizeof(heights) / sizeof(heights[0]); hi++) {
            int h = heights[hi];
            static rows_ctx c;
            memset(&c, 0, sizeof(c));
            vkcu_parallel_rows(threads, h, mark_rows, &c);
            int serial = threads <= 1 || h < 2 * threads;
            for (int y = 0; y < h; y++) {
                CHECK(c.visits[y] == 1, "threads %d height %d: row %d done %d times", threads, h, y, c.visits[y]);
                /* the band of row y: the last t whose even start is <= y */
                int want = 0;
                for (int t = 0; !serial && t < threads; t++) {
                    int y0 = (int)((int64_t)h * t / threads) & ~1;
                    if (y0 <= y)
                        want = y0;
                }
                CHECK(c.band_start[y] == want, "threads %d height %d: row %d in the band from %d, expected %d",
                      threads, h, y, c.band_start[y], want);
            }
        }
    vkcu_pool_thread_release();
}

/* The frames leaving the chain, as bytes one after the other. */
typedef struct collected {
    uint8_t *buf;
    size_t len, cap;
    int frames;
    int max_tasks;     /* the most threads seen while frames went through */
} collected;

static int collect(void *opaque, AVFrame *f)
{
    collected *c = opaque;
    int size = av_image_get_buffer_size(f->format, f->width, f->height, 1);
    if (size < 0)
        return size;
    if (c->len + (size_t)size > c->cap) {
        size_t cap = 2 * (c->len + (size_t)size);
        uint8_t *b = av_realloc(c->buf, cap);
        if (!b)
            return AVERROR(ENOMEM);
        c->buf = b;
        c->cap = cap;
    }
    av_image_copy_to_buffer(c->buf + c->len, size, (const uint8_t *const *)f->data, f->linesize, f->format,
                            f->width, f->height, 1);
    c->len += (size_t)size;
    c->frames++;
    int t = tu_proc_count("task");
    if (t > c->max_tasks)
        c->max_tasks = t;
    return 0;
}

#define N_FRAMES 40

/* Runs the chain over the frames with `threads` row workers; returns the
 * worker threads the pool counter saw started. */
static int64_t run_chain(int threads, AVFrame **in, collected *out)
{
    vkcu_chain ch;
    char err[256];
    vkcu_video_format fmt = { .pix_fmt = AV_PIX_FMT_YUV420P, .width = 96, .height = 70,
                              .time_base = { 1, 25 }, .frame_rate = { 25, 1 } }, of;
    if (vkcu_chain_parse("scale=w=80:h=120:filter=bicubic,denoise=mode=tnr:sigma=8", &ch, err, sizeof(err)) < 0 ||
        vkcu_chain_init(&ch, &fmt, &of, err, sizeof(err)) < 0) {
        CHECK(0, "chain: %s", err);
        return -1;
    }
    for (int i = 0; i < ch.nb_ops; i++)
        ch.ops[i]->threads = threads;
    int64_t started = vkcu_pool_threads_started();
    for (int i = 0; i < N_FRAMES; i++)
        CHECK(vkcu_chain_feed_cpu(&ch, 0, in[i], collect, out, NULL) == 0, "threads %d: frame %d", threads, i);
    CHECK(vkcu_chain_feed_cpu(&ch, 0, NULL, collect, out, NULL) == 0, "threads %d: flush", threads);
    int64_t n = vkcu_pool_threads_started() - started;
    vkcu_chain_free(&ch);
    vkcu_pool_thread_release(); /* as the job's end does */
    return n;
}

static void check_chain(AVFrame **in, const char *where)
{
    int base = tu_proc_count("task");
    collected serial = { 0 }, pooled = { 0 };
    int64_t s1 = run_chain(1, in, &serial);
    int64_t s4 = run_chain(4, in, &pooled);
    CHECK(serial.frames == N_FRAMES && pooled.frames == N_FRAMES, "%s: %d and %d frames out, expected %d", where,
          serial.frames, pooled.frames, N_FRAMES);
    CHECK(serial.len == pooled.len && !memcmp(serial.buf, pooled.buf, serial.len),
          "%s: 4 threads give other bytes than 1", where);
    CHECK(s1 == 0, "%s: 1 thread started %lld workers", where, (long long)s1);
    /* One pool for the whole run: 3 workers beside the caller, not 3 per frame. */
    CHECK(s4 == 3, "%s: %lld worker threads started for %d frames (expected 3)", where, (long long)s4, N_FRAMES);
    CHECK(pooled.max_tasks <= base + 3, "%s: up to %d threads during the run, %d before it", where, pooled.max_tasks,
          base);
    CHECK(tu_proc_count("task") == base, "%s: %d threads after the job's end, %d before", where, tu_proc_count("task"), base);
    av_free(serial.buf);
    av_free(pooled.buf);
}

int main(void)
{
    AVFrame *in[N_FRAMES];
    uint64_t seed = 7;
    for (int i = 0; i < N_FRAMES; i++) {
        in[i] = tu_frame(AV_PIX_FMT_YUV420P, 96, 70);
        for (int p = 0; p < 3; p++)
            for (int y = 0; y < (p ? 35 : 70); y++)
                for (int x = 0; x < (p ? 48 : 96); x++)
                    in[i]->data[p][y * in[i]->linesize[p] + x] = (uint8_t)(((x + y + i) * 3 + tu_rand(&seed) % 16));
        in[i]->pts = i;
        in[i]->duration = 1;
    }
    check_bands();
    check_chain(in, "all CPUs");
    if (tu_pin_one_cpu() == 0) {
        check_bands();
        check_chain(in, "one CPU");
    } else {
        CHECK(0, "cannot pin to one CPU");
    }
    for (int i = 0; i < N_FRAMES; i++)
        av_frame_free(&in[i]);
    if (tu_failures)
        return 1;
    printf("pool: bands, bytes and thread counts as expected (all CPUs and one)\n");
    return 0;
}
