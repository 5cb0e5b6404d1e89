/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers every test program shares: a seeded generator, software frames,
 * sample access by component, and a CHECK macro that counts failures.
 */
#ifndef VKCU_TEST_UTIL_H
#define VKCU_TEST_UTIL_H

#include <dirent.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <libavutil/frame.h>
#include <libavutil/pixdesc.h>

/* Entries of a /proc/self folder ("fd": open files, "task": threads), or -1. */
static inline int tu_proc_count(const char *what)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/%s", what);
    DIR *d = opendir(path);
    int n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* As `taskset -c 0`: pins the process (and every thread it starts from here
 * on) to the first CPU it may use. 0, or -1 when it cannot. */
static inline int tu_pin_one_cpu(void)
{
    cpu_set_t all, one;
    CPU_ZERO(&one);
    int first = -1;
    if (sched_getaffinity(0, sizeof(all), &all) == 0)
        for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
            if (CPU_ISSET(c, &all))
                first = c;
    CPU_SET(first < 0 ? 0 : first, &one);
    return sched_setaffinity(0, sizeof(one), &one) == 0 ? 0 : -1;
}

/* xorshift64*: the same sequence on every machine. */
static inline uint64_t tu_rand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static inline AVFrame *tu_frame(enum AVPixelFormat fmt, int w, int h)
{
    AVFrame *f = av_frame_alloc();
    if (!f)
        return NULL;
    f->format = fmt;
    f->width = w;
    f->height = h;
    if (av_frame_get_buffer(f, 0) < 0)
        av_frame_free(&f);
    return f;
}

/* Component c (pixdesc order) at (x, y) of its own grid, as a value at the
 * component's depth (shift removed); 16-bit samples little-endian. */
static inline int tu_get(const AVFrame *f, int c, int x, int y)
{
    const AVComponentDescriptor *cd = &av_pix_fmt_desc_get(f->format)->comp[c];
    const uint8_t *p = f->data[cd->plane] + (ptrdiff_t)y * f->linesize[cd->plane] + x * cd->step + cd->offset;
    if (cd->depth > 8)
        return (p[0] | p[1] << 8) >> cd->shift;
    return p[0];
}

static inline void tu_set(AVFrame *f, int c, int x, int y, int v)
{
    const AVComponentDescriptor *cd = &av_pix_fmt_desc_get(f->format)->comp[c];
    uint8_t *p = f->data[cd->plane] + (ptrdiff_t)y * f->linesize[cd->plane] + x * cd->step + cd->offset;
    if (cd->depth > 8) {
        v <<= cd->shift;
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
    } else {
        p[0] = (uint8_t)v;
    }
}

/* Reads at most size - 1 bytes of path into buf, NUL-terminated; the
 * count, or -1 when it cannot be opened. */
static inline long tu_read_text(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = 0;
    return (long)n;
}

/* Removes a test's scratch folder and everything in it (rm -rf); says so
 * on stderr when it cannot. */
static inline void tu_remove_tree(const char *dir)
{
    char cmd[4200];
    if (snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir) >= (int)sizeof(cmd) || system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

/* CHECK(cond, fmt, ...): prints FAIL with the place and counts it in tu_failures. */
static int tu_failures __attribute__((unused));
#define CHECK(cond, ...)                                         \
    do {                                                         \
        if (!(cond)) {                                           \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fprintf(stderr, "\n");                               \
            tu_failures++;                                       \
        }                                                        \
    } while (0)

#endif
