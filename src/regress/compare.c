/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu compare: two inputs (media files decoded through vkcu's own stages,
 * or hash lists written by `vkcu hash`) aligned frame by frame on their
 * timestamps, so that one dropped frame is one count mismatch and not a
 * cascade of differences. Each pair gets FFmpeg's PSNR and SSIM and the
 * largest absolute difference; the worst pair can be drawn as a PNG.
 *
 * Media inputs go through a pull-based frame source built from the same
 * stages vkcu_job_run strings together (demux, decode, CPU operators or the
 * GPU session), so the frames compared are the frames `vkcu hash` hashes.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <libavutil/avstring.h>
#include <libavutil/hash.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include "compare.h"
#include "gpu/gpu.h"
#include "util/file.h"
#include "util/json.h"
#include "util/log.h"
#include "report.h"
#include "core/sink.h"
#include "core/outfile.h"
#include "util/queue.h"
#include "vmaf.h"

/* ------------------------------------------------------------------ */
/* hash lists                                                           */

void vkcu_hash_list_free(vkcu_hash_list *l)
{
    free(l->entries);
    memset(l, 0, sizeof(*l));
}

static int list_push(vkcu_hash_list *l, const vkcu_hash_entry *e)
{
    if (l->nb == l->cap) {
        int cap = l->cap ? l->cap * 2 : 64;
        vkcu_hash_entry *n = realloc(l->entries, (size_t)cap * sizeof(*n));
        if (!n)
            return AVERROR(ENOMEM);
        l->entries = n;
        l->cap = cap;
    }
    l->entries[l->nb++] = *e;
    return 0;
}

static int valid_hex(const char *s)
{
    size_t n = strlen(s);
    if (n < 8 || n >= sizeof(((vkcu_hash_entry *)0)->hash))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!strchr("0123456789abcdefABCDEF", s[i]))
            return 0;
    return 1;
}

/* vkcu writes a file name's stray bytes as lone low surrogates (\udcXX,
 * json.h), which jansson refuses to read: those escapes become U+FFFD
 * in place (the same length), so the line parses and every other value
 * keeps its exact text. Surrogate pairs and every other escape stay. */
static void replace_lone_surrogates(char *s)
{
    for (char *p = s; *p; p++) {
        if (*p != '\\' || !p[1])
            continue;
        if (p[1] != 'u') {
            p++; /* the escaped character, even a backslash or a quote */
            continue;
        }
        unsigned v;
        if (sscanf(p + 2, "%4x", &v) != 1 || strspn(p + 2, "0123456789abcdefABCDEF") < 4) {
            p++;
            continue;
        }
        if (v >= 0xd800 && v <= 0xdbff) {
            unsigned low;
            if (p[6] == '\\' && p[7] == 'u' && strspn(p + 8, "0123456789abcdefABCDEF") >= 4 &&
                sscanf(p + 8, "%4x", &low) == 1 && low >= 0xdc00 && low <= 0xdfff) {
                p += 11; /* a well-formed pair */
                continue;
            }
        }
        if (v >= 0xd800 && v <= 0xdfff)
            memcpy(p + 2, "fffd", 4);
        p += 5;
    }
}

/* An integer member: 0 with *v, -1 when absent or of another type. */
static int json_int_member(const json_t *o, const char *key, int64_t *v)
{
    const json_t *m = json_object_get(o, key);
    if (!json_is_integer(m))
        return -1;
    *v = json_integer_value(m);
    return 0;
}

static int parse_rational(const char *s, AVRational *q)
{
    char *end;
    errno = 0;
    long long num = strtoll(s, &end, 10), den;
    if (errno || end == s || *end != '/' || num <= 0 || num > INT_MAX)
        return -1;
    s = end + 1;
    den = strtoll(s, &end, 10);
    if (errno || end == s || den <= 0 || den > INT_MAX)
        return -1;
    *q = (AVRational){ (int)num, (int)den };
    return 0;
}

/* One number of a frame line and the separator after it: 0, -1 when it is
 * no number, -2 when it is outside [lo, hi] (sscanf would have clipped or
 * wrapped it silently). */
static int frame_field(const char **p, long long lo, long long hi, long long *v)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!((*s >= '0' && *s <= '9') || ((*s == '-' || *s == '+') && s[1] >= '0' && s[1] <= '9')))
        return -1;
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno == ERANGE || x < lo || x > hi)
        return -2;
    s = end;
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s != ',')
        return -1;
    *v = x;
    *p = s + 1;
    return 0;
}

/* "stream, dts, pts, duration, size, hash" as framemd5 writes it. */
static int frame_line(const char *s, int *stream, long long *dts, long long *pts, long long *dur, int *size,
                      char *hash, size_t hashlen)
{
    long long v[5];
    static const long long lo[5] = { INT_MIN, LLONG_MIN, LLONG_MIN, LLONG_MIN, INT_MIN };
    static const long long hi[5] = { INT_MAX, LLONG_MAX, LLONG_MAX, LLONG_MAX, INT_MAX };
    for (int i = 0; i < 5; i++) {
        int r = frame_field(&s, lo[i], hi[i], &v[i]);
        if (r < 0)
            return r;
    }
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strcspn(s, " \t");
    if (!n || n >= hashlen)
        return -1;
    memcpy(hash, s, n);
    hash[n] = 0;
    *stream = (int)v[0], *dts = v[1], *pts = v[2], *dur = v[3], *size = (int)v[4];
    return 0;
}

/* *known: the text has shown itself a hash list (a header, or a frame line).
 * Until then an error quotes nothing of it: it may be any file at all. */
static int parse_line(vkcu_hash_list *l, char *line, const char *name, int lineno, int *known, int *concealed,
                      char *err, size_t errlen)
{
    while (*line == ' ' || *line == '\t')
        line++;
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\r' || line[n - 1] == ' '))
        line[--n] = 0;
    if (!n)
        return 0;
    if (line[0] == '#') {
        if (!strncmp(line, "#format: frame checksums", 24))
            *known = 1;
        if (!strncmp(line, "#hash:", 6)) {
            const char *v = line + 6;
            while (*v == ' ')
                v++;
            if (vkcu_hash_algo_parse(v, &l->algo) < 0) {
                if (*known)
                    snprintf(err, errlen, "%s:%d: hash algorithm '%.40s' is not " VKCU_HASH_ALGOS_UPPER, name, lineno, v);
                else
                    snprintf(err, errlen, "%s:%d: not a hash list (its hash algorithm is not " VKCU_HASH_ALGOS_UPPER ")",
                             name, lineno);
                return VKCU_ERR_INPUT;
            }
            l->algo_known = 1;
        } else if (!strncmp(line, "#tb 0:", 6)) {
            parse_rational(line + 6 + strspn(line + 6, " "), &l->tb);
        } else if (!strncmp(line, "#dimensions 0:", 14)) {
            sscanf(line + 14, " %dx%d", &l->width, &l->height);
        } else if (!strncmp(line, VKCU_HASH_TIMING_MARK, strlen(VKCU_HASH_TIMING_MARK))) {
            const char *v = line + strlen(VKCU_HASH_TIMING_MARK);
            l->decoded = !strcmp(v + strspn(v, " "), "decoded");
        } else if (!strncmp(line, VKCU_HASH_CONCEALED_MARK, strlen(VKCU_HASH_CONCEALED_MARK))) {
            *concealed = 1; /* the next frame line's */
        }
        return 0;
    }
    vkcu_hash_entry e = { 0 };
    if (line[0] == '{') {
        replace_lone_surrogates(line);
        json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, NULL);
        if (!json_is_object(o)) {
            json_decref(o);
            goto bad;
        }
        const char *type = json_string_value(json_object_get(o, "type"));
        int64_t v;
        if (type && !strcmp(type, "header")) {
            *known = 1;
            const char *algo = json_string_value(json_object_get(o, "hash"));
            const char *tb = json_string_value(json_object_get(o, "tb"));
            if (algo && vkcu_hash_algo_parse(algo, &l->algo) == 0)
                l->algo_known = 1;
            if (tb)
                parse_rational(tb, &l->tb);
            if (json_int_member(o, "width", &v) == 0 && v > 0 && v <= INT_MAX)
                l->width = (int)v;
            if (json_int_member(o, "height", &v) == 0 && v > 0 && v <= INT_MAX)
                l->height = (int)v;
            const char *timing = json_string_value(json_object_get(o, "timing"));
            l->decoded = timing && !strcmp(timing, "decoded");
            json_decref(o);
            return 0;
        }
        if (type && !strcmp(type, "summary")) { /* the counts at the end: no frame */
            json_decref(o);
            return 0;
        }
        const char *hash = json_string_value(json_object_get(o, "hash"));
        int ok = json_int_member(o, "pts", &e.pts) == 0 && hash && strlen(hash) < sizeof(e.hash);
        if (ok) {
            e.dts = e.pts;
            snprintf(e.hash, sizeof(e.hash), "%s", hash);
            if (json_int_member(o, "duration", &e.duration) < 0)
                e.duration = 1;
            e.size = json_int_member(o, "size", &v) == 0 && v >= 0 && v <= INT_MAX ? (int)v : 0;
            e.concealed = json_is_true(json_object_get(o, "concealed"));
        }
        json_decref(o);
        if (!ok || !valid_hex(e.hash))
            goto bad;
    } else {
        int stream;
        long long dts, pts, dur;
        char hash[80];
        int r = frame_line(line, &stream, &dts, &pts, &dur, &e.size, hash, sizeof(hash));
        if (r == -2 && *known) {
            snprintf(err, errlen, "%s:%d: a number out of range (stream and size are 32-bit, dts, pts and duration "
                     "64-bit integers): %.60s", name, lineno, line);
            return VKCU_ERR_INPUT;
        }
        if (r < 0 || !valid_hex(hash))
            goto bad;
        if (stream != 0)
            return 0; /* framemd5 of a file with audio: only the first stream is video here */
        e.dts = dts, e.pts = pts, e.duration = dur;
        e.concealed = *concealed;
        *concealed = 0;
        snprintf(e.hash, sizeof(e.hash), "%s", hash);
    }
    for (char *c = e.hash; *c; c++)
        if (*c >= 'A' && *c <= 'F')
            *c = (char)(*c - 'A' + 'a');
    *known = 1;
    return list_push(l, &e);
bad:
    if (!*known) {
        snprintf(err, errlen, "%s:%d: not a hash list (expected '#format: frame checksums' or frame lines "
                 "'stream, dts, pts, duration, size, hash' as 'vkcu hash' writes)", name, lineno);
        return VKCU_ERR_INPUT;
    }
    for (char *c = line; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
            *c = '?'; /* one readable line on the terminal */
    snprintf(err, errlen, "%s:%d: not a frame hash line (expected 'stream, dts, pts, duration, size, hash' as "
             "'vkcu hash' writes): %.60s", name, lineno, line);
    return VKCU_ERR_INPUT;
}

int vkcu_hash_list_parse(const char *text, size_t len, const char *name, vkcu_hash_list *l, char *err, size_t errlen)
{
    memset(l, 0, sizeof(*l));
    l->tb = (AVRational){ 0, 1 };
    int lineno = 0, ret = 0, known = 0, concealed = 0;
    size_t pos = 0, cap = 0;
    char *line = NULL;
    while (pos < len && ret >= 0) {
        size_t end = pos;
        while (end < len && text[end] != '\n')
            end++;
        /* whole lines, however long: a JSON header carries the input's name */
        if (end - pos + 1 > cap) {
            char *n = realloc(line, end - pos + 1);
            if (!n) {
                ret = AVERROR(ENOMEM);
                snprintf(err, errlen, "%s: out of memory", name);
                break;
            }
            line = n;
            cap = end - pos + 1;
        }
        memcpy(line, text + pos, end - pos);
        line[end - pos] = 0;
        lineno++;
        if (memchr(line, 0, end - pos)) {
            /* C strings end there: the rest of the line would go unseen. */
            snprintf(err, errlen, "%s:%d: %s NUL byte", name, lineno,
                     known ? "a frame hash line with a" : "not a hash list: a");
            ret = VKCU_ERR_INPUT;
            break;
        }
        ret = parse_line(l, line, name, lineno, &known, &concealed, err, errlen);
        pos = end + 1;
    }
    free(line);
    if (ret < 0)
        vkcu_hash_list_free(l);
    return ret;
}

static int read_file(const char *path, char **data, size_t *len, char *err, size_t errlen)
{
    int os_err;
    switch (vkcu_read_file(path, 0, 0, data, len, &os_err)) {
    case VKCU_READ_OK:
        return 0;
    case VKCU_READ_OPEN:
        snprintf(err, errlen, "%s: %s (check the path)", path, os_err == ENOENT ? "no such file" : strerror(os_err));
        return VKCU_ERR_INPUT;
    default:
        snprintf(err, errlen, "%s: cannot read", path);
        return VKCU_ERR_INPUT;
    }
}

/* Parses text already read from path, which must hold at least one frame. */
static int hash_list_from_text(char *data, size_t len, const char *path, vkcu_hash_list *l, char *err,
                               size_t errlen)
{
    int ret = vkcu_hash_list_parse(data, len, path, l, err, errlen);
    if (ret >= 0 && l->nb == 0) {
        snprintf(err, errlen, "%s: a hash list without frames", path);
        vkcu_hash_list_free(l);
        ret = VKCU_ERR_INPUT;
    }
    return ret;
}

int vkcu_hash_list_load(const char *path, vkcu_hash_list *l, char *err, size_t errlen)
{
    char *data;
    size_t len;
    int ret = read_file(path, &data, &len, err, errlen);
    if (ret < 0)
        return ret;
    ret = hash_list_from_text(data, len, path, l, err, errlen);
    free(data);
    return ret;
}

/* Whether the first n bytes of a file (head, NUL-terminated, written to)
 * start a hash list: a framemd5-style header or a JSON lines header. */
static int hash_list_head(char *head, size_t n)
{
    int ret = !strncmp(head, "#format: frame checksums", 24);
    if (head[0] == '{') {
        char *nl = memchr(head, '\n', n);
        if (nl)
            *nl = 0;
        replace_lone_surrogates(head);
        json_t *o = json_loads(head, 0, NULL);
        const char *type = json_string_value(json_object_get(o, "type"));
        ret = type && !strcmp(type, "header");
        json_decref(o);
    }
    return ret;
}

/* a JSON header line holds the input's name: room for a long one */
enum { SNIFF_HEAD = 1 << 16 };

int vkcu_hash_list_sniff(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *head = f ? malloc(SNIFF_HEAD + 1) : NULL;
    if (!head) {
        if (f)
            fclose(f);
        return 0;
    }
    size_t n = fread(head, 1, SNIFF_HEAD, f);
    fclose(f);
    head[n] = 0;
    int ret = hash_list_head(head, n);
    free(head);
    return ret;
}

/* A pipe or FIFO (`<(vkcu hash ...)`, /dev/stdin) can be read only once:
 * sniffing it and opening it again would wait forever for a writer that has
 * gone. So it is read whole and must be a hash list; media is decoded from
 * regular files only. Returns 1 when path is such a stream (then *l or err
 * is set and *ret is the status), 0 for a regular file (or a missing one:
 * the media path reports that). */
static int hash_list_from_stream(const char *path, vkcu_hash_list *l, int *ret, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) < 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
        return 0;
    char *data;
    size_t len;
    *ret = read_file(path, &data, &len, err, errlen);
    if (*ret < 0)
        return 1;
    char *head = malloc(SNIFF_HEAD + 1);
    if (!head) {
        free(data);
        snprintf(err, errlen, "%s: out of memory", path);
        *ret = VKCU_ERR_INPUT;
        return 1;
    }
    size_t n = len < SNIFF_HEAD ? len : SNIFF_HEAD;
    memcpy(head, data, n);
    head[n] = 0;
    if (!hash_list_head(head, n)) {
        snprintf(err, errlen, "%s: a pipe that is not a hash list; compare decodes media only from a regular file "
                 "(save the stream to a file first)", path);
        *ret = VKCU_ERR_INPUT;
    } else {
        *ret = hash_list_from_text(data, len, path, l, err, errlen);
    }
    free(head);
    free(data);
    return 1;
}

/* ------------------------------------------------------------------ */
/* frame metrics (FFmpeg's psnr and ssim filters, libavfilter/vf_*.c)   */

typedef struct comp_view {
    const uint8_t *data;
    ptrdiff_t stride;        /* bytes */
    int w, h;
    int wide;                /* 16-bit samples */
} comp_view;

typedef struct frame_view {
    int nb;
    comp_view c[4];
    int depth;
    uint16_t *buf;           /* unpacked samples for layouts that are not one plane per component */
} frame_view;

static void frame_view_free(frame_view *v)
{
    av_freep(&v->buf);
}

static int comp_subsampled(const AVPixFmtDescriptor *d, int i)
{
    return d->nb_components >= 3 && !(d->flags & AV_PIX_FMT_FLAG_RGB) && (i == 1 || i == 2);
}

/* One view per component: planar layouts in place, every other layout
 * (NV12, P010, packed RGB) unpacked into 16-bit samples. */
static int frame_view_init(frame_view *v, const AVFrame *f)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    memset(v, 0, sizeof(*v));
    if (!d || (d->flags & (AV_PIX_FMT_FLAG_FLOAT | AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_BITSTREAM |
                           AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BE)) || d->comp[0].depth > 16)
        return VKCU_ERR_USAGE;
    v->nb = d->nb_components;
    v->depth = d->comp[0].depth;
    int planar = 1;
    size_t total = 0;
    for (int i = 0; i < v->nb; i++) {
        const AVComponentDescriptor *c = &d->comp[i];
        int bytes = c->depth > 8 ? 2 : 1;
        if (c->depth != v->depth)
            return VKCU_ERR_USAGE;
        if (c->plane != i || c->step != bytes || c->shift || c->offset)
            planar = 0;
        v->c[i].w = comp_subsampled(d, i) ? AV_CEIL_RSHIFT(f->width, d->log2_chroma_w) : f->width;
        v->c[i].h = comp_subsampled(d, i) ? AV_CEIL_RSHIFT(f->height, d->log2_chroma_h) : f->height;
        total += (size_t)v->c[i].w * v->c[i].h;
    }
    if (planar) {
        for (int i = 0; i < v->nb; i++) {
            v->c[i].data = f->data[i];
            v->c[i].stride = f->linesize[i];
            v->c[i].wide = v->depth > 8;
        }
        return 0;
    }
    v->buf = av_malloc(total * sizeof(uint16_t));
    if (!v->buf)
        return AVERROR(ENOMEM);
    uint16_t *p = v->buf;
    for (int i = 0; i < v->nb; i++) {
        comp_view *c = &v->c[i];
        for (int y = 0; y < c->h; y++)
            av_read_image_line2(p + (size_t)y * c->w, (const uint8_t **)f->data, f->linesize, d, 0, y, i, c->w, 0, 2);
        c->data = (const uint8_t *)p;
        c->stride = (ptrdiff_t)c->w * 2;
        c->wide = 1;
        p += (size_t)c->w * c->h;
    }
    return 0;
}

/* Views of both frames, or neither (an error). */
static int frame_views_init(frame_view *va, frame_view *vb, const AVFrame *a, const AVFrame *b)
{
    int ret = frame_view_init(va, a);
    if (ret >= 0)
        ret = frame_view_init(vb, b);
    if (ret < 0)
        frame_view_free(va);
    return ret;
}

static inline int sample_at(const comp_view *c, int x, int y)
{
    const uint8_t *row = c->data + (ptrdiff_t)y * c->stride;
    return c->wide ? ((const uint16_t *)row)[x] : row[x];
}

/* Sum of squared differences and the largest difference with its place. */
static uint64_t plane_sse(const comp_view *a, const comp_view *b, int *maxd, int *mx, int *my)
{
    uint64_t sse = 0;
    int best = -1;
    for (int y = 0; y < a->h; y++) {
        const uint8_t *ra = a->data + (ptrdiff_t)y * a->stride, *rb = b->data + (ptrdiff_t)y * b->stride;
        uint64_t line = 0;
        int line_max = 0, line_x = 0;
        if (a->wide) {
            const uint16_t *pa = (const uint16_t *)ra, *pb = (const uint16_t *)rb;
            for (int x = 0; x < a->w; x++) {
                int d = abs((int)pa[x] - (int)pb[x]);
                line += (uint64_t)d * d;
                if (d > line_max)
                    line_max = d, line_x = x;
            }
        } else {
            for (int x = 0; x < a->w; x++) {
                int d = abs((int)ra[x] - (int)rb[x]);
                line += (unsigned)(d * d);
                if (d > line_max)
                    line_max = d, line_x = x;
            }
        }
        sse += line;
        if (line_max > best) {
            best = line_max;
            *mx = line_x;
            *my = y;
        }
    }
    *maxd = best < 0 ? 0 : best;
    return sse;
}

/* vf_ssim.c's ssim_4x4xn: sums over 4x4 blocks of one block row. */
static void ssim_4x4_row(const comp_view *a, const comp_view *b, int by, int64_t (*sums)[4], int blocks)
{
    for (int z = 0; z < blocks; z++) {
        int64_t s1 = 0, s2 = 0, ss = 0, s12 = 0;
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 4; x++) {
                int64_t va = sample_at(a, 4 * z + x, 4 * by + y), vb = sample_at(b, 4 * z + x, 4 * by + y);
                s1 += va;
                s2 += vb;
                ss += va * va + vb * vb;
                s12 += va * vb;
            }
        sums[z][0] = s1;
        sums[z][1] = s2;
        sums[z][2] = ss;
        sums[z][3] = s12;
    }
}

/* vf_ssim.c's ssim_end1x: SSIM of one 8x8 window from its four 4x4 sums. */
static float ssim_end1(int64_t s1, int64_t s2, int64_t ss, int64_t s12, int max)
{
    int64_t c1 = (int64_t)(.01 * .01 * max * max * 64 + .5);
    int64_t c2 = (int64_t)(.03 * .03 * max * max * 64 * 63 + .5);
    int64_t vars = ss * 64 - s1 * s1 - s2 * s2;
    int64_t covar = s12 * 64 - s1 * s2;
    return (float)(2 * s1 * s2 + c1) * (float)(2 * covar + c2) / ((float)(s1 * s1 + s2 * s2 + c1) * (float)(vars + c2));
}

/* Mean SSIM of 8x8 windows stepped by 4 samples, as FFmpeg's ssim filter. */
static double plane_ssim(const comp_view *a, const comp_view *b, int max)
{
    int bw = a->w >> 2, bh = a->h >> 2;
    if (bw < 2 || bh < 2)
        return NAN;
    int64_t (*sum0)[4] = av_malloc_array(2 * (size_t)(bw + 3), sizeof(*sum0));
    if (!sum0)
        return NAN;
    int64_t (*sum1)[4] = sum0 + bw + 3, (*base)[4] = sum0;
    double total = 0;
    ssim_4x4_row(a, b, 0, sum0, bw);
    for (int y = 1; y < bh; y++) {
        int64_t (*t)[4] = sum0;
        sum0 = sum1;
        sum1 = t;
        ssim_4x4_row(a, b, y, sum0, bw);
        for (int i = 0; i < bw - 1; i++)
            total += ssim_end1(sum0[i][0] + sum0[i + 1][0] + sum1[i][0] + sum1[i + 1][0],
                               sum0[i][1] + sum0[i + 1][1] + sum1[i][1] + sum1[i + 1][1],
                               sum0[i][2] + sum0[i + 1][2] + sum1[i][2] + sum1[i + 1][2],
                               sum0[i][3] + sum0[i + 1][3] + sum1[i][3] + sum1[i + 1][3], max);
    }
    av_free(base);
    return total / ((double)(bw - 1) * (bh - 1));
}

static double psnr_of(double mse, int peak)
{
    return 10.0 * log10((double)peak * peak / mse); /* +inf for mse 0, as FFmpeg prints it */
}

static void comp_labels(const AVPixFmtDescriptor *d, char *names)
{
    const char *set = (d->flags & AV_PIX_FMT_FLAG_RGB) ? "rgb" : "yuv";
    int n = d->nb_components;
    for (int i = 0; i < n; i++)
        names[i] = (i == n - 1 && (d->flags & AV_PIX_FMT_FLAG_ALPHA)) ? 'a' : set[i];
    names[n] = 0;
}

int vkcu_frame_metrics_compute(const AVFrame *a, const AVFrame *b, vkcu_frame_metrics *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof(*m));
    m->vmaf = NAN;
    if (a->format != b->format || a->width != b->width || a->height != b->height) {
        snprintf(err, errlen, "%dx%d %s against %dx%d %s", a->width, a->height, av_get_pix_fmt_name(a->format),
                 b->width, b->height, av_get_pix_fmt_name(b->format));
        return VKCU_ERR_MISMATCH;
    }
    frame_view va, vb;
    int ret = frame_views_init(&va, &vb, a, b);
    if (ret < 0) {
        snprintf(err, errlen, "%s has no sample metrics (float or bitstream layout); compare hashes instead",
                 av_get_pix_fmt_name(a->format));
        return ret;
    }
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(a->format);
    m->nb_comps = va.nb;
    m->peak = (1 << va.depth) - 1;
    comp_labels(d, m->comp_names);
    double total_px = 0, avg_peak = 0, ssim_all = 0;
    for (int i = 0; i < va.nb; i++)
        total_px += (double)va.c[i].w * va.c[i].h;
    m->max_diff = 0;
    for (int i = 0; i < va.nb; i++) {
        int maxd, mx = 0, my = 0;
        double px = (double)va.c[i].w * va.c[i].h, weight = px / total_px;
        uint64_t sse = plane_sse(&va.c[i], &vb.c[i], &maxd, &mx, &my);
        m->mse[i] = sse / px;
        m->psnr[i] = psnr_of(m->mse[i], m->peak);
        m->ssim[i] = plane_ssim(&va.c[i], &vb.c[i], m->peak);
        m->mse_avg += m->mse[i] * weight;
        avg_peak += m->peak * weight;
        ssim_all += m->ssim[i] * weight;
        if (maxd > m->max_diff || i == 0) {
            m->max_diff = maxd;
            m->max_diff_comp = i;
            m->max_diff_x = mx;
            m->max_diff_y = my;
        }
    }
    m->psnr_avg = psnr_of(m->mse_avg, (int)lrint(avg_peak));
    m->ssim_all = ssim_all;
    frame_view_free(&va);
    frame_view_free(&vb);
    return 0;
}

/* ------------------------------------------------------------------ */
/* frame source: a job (vkcu_job_run, either backend) on its own thread  */
/* whose frames arrive through the callback sink into a small queue.     */

#define SOURCE_QUEUE 8

typedef struct frame_source {
    vkcu_job_params p;       /* the caller's job, with the callback sink */
    vkcu_job_result r;
    const char *path;
    pthread_t thread;
    int started;
    pthread_mutex_t lock;
    pthread_cond_t cond;     /* opened or done (source_open waits for it) */
    vkcu_queue *frames;      /* AVFrame *: decoded frames, closed when the job ends */
    int opened, done, ret;
    int64_t start;           /* stream start in the stream time base (as the hash sink counts) */
    AVRational tb, frame_rate;
    char *err;
    size_t errlen;
} frame_source;

static int source_on_open(void *opaque, const vkcu_stream_info *info)
{
    frame_source *s = opaque;
    pthread_mutex_lock(&s->lock);
    s->tb = (AVRational){ info->tb_num, info->tb_den };
    s->frame_rate = (AVRational){ info->fps_num, info->fps_den };
    s->start = info->start;
    s->opened = 1;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

static int source_on_frame(void *opaque, const AVFrame *f)
{
    frame_source *s = opaque;
    AVFrame *ref = av_frame_clone(f);
    if (!ref)
        return AVERROR(ENOMEM);
    if (vkcu_queue_push(s->frames, &ref) < 0) { /* the comparison stopped (source_close) */
        av_frame_free(&ref);
        return AVERROR_EXIT;
    }
    return 0;
}

static void *source_main(void *arg)
{
    frame_source *s = arg;
    int ret = vkcu_job_run(&s->p, &s->r);
    pthread_mutex_lock(&s->lock);
    s->ret = ret;
    s->done = 1;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    vkcu_queue_close(s->frames);
    return NULL;
}

static void frame_item_free(void *item)
{
    av_frame_free((AVFrame **)item);
}

static void source_close(frame_source **ps)
{
    frame_source *s = *ps;
    if (!s)
        return;
    if (s->started) {
        vkcu_queue_abort(s->frames); /* the job's next frame ends it */
        pthread_join(s->thread, NULL);
    }
    vkcu_queue_free(&s->frames, frame_item_free);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->cond);
    av_freep(ps);
}

/* Starts the job and waits for its stream description (first frame) or its error. */
static int source_open(const vkcu_job_params *p, const char *path, frame_source **out, char *err, size_t errlen)
{
    frame_source *s = av_mallocz(sizeof(*s));
    if (!s)
        return AVERROR(ENOMEM);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
    s->frames = vkcu_queue_create(SOURCE_QUEUE, sizeof(AVFrame *));
    if (!s->frames) {
        source_close(&s);
        return AVERROR(ENOMEM);
    }
    s->p = *p;
    s->p.input = path;
    s->p.sink = VKCU_SINK_CALLBACK;
    s->p.on_open = source_on_open;
    s->p.on_frame = source_on_frame;
    s->p.cb_opaque = s;
    s->p.progress = 0;
    s->path = path;
    s->err = err;
    s->errlen = errlen;
    if (vkcu_thread_create(&s->thread, source_main, s)) {
        snprintf(err, errlen, "%s: cannot start a decoding thread", path);
        source_close(&s);
        return AVERROR(EAGAIN);
    }
    s->started = 1;
    pthread_mutex_lock(&s->lock);
    while (!s->opened && !s->done)
        pthread_cond_wait(&s->cond, &s->lock);
    int ret = s->opened ? 0 : s->ret < 0 ? s->ret : VKCU_ERR_INPUT;
    pthread_mutex_unlock(&s->lock);
    if (ret < 0) {
        snprintf(err, errlen, "%s", s->r.error[0] ? s->r.error : "no frames could be decoded");
        source_close(&s);
        return ret;
    }
    *out = s;
    return 0;
}

/* 0 with *frame (the caller's), AVERROR_EOF after the last one, or an error. */
static int source_next(frame_source *s, AVFrame **frame)
{
    if (vkcu_queue_pop(s->frames, frame, VKCU_QUEUE_WAIT) == 0)
        return 0;
    /* Closed and empty: the job has ended. */
    pthread_mutex_lock(&s->lock);
    int ret = s->ret;
    pthread_mutex_unlock(&s->lock);
    if (ret < 0) {
        snprintf(s->err, s->errlen, "%s", s->r.error);
        return ret;
    }
    return AVERROR_EOF;
}

/* ------------------------------------------------------------------ */
/* alignment                                                            */

typedef struct side {
    const char *path;
    char label;              /* 'A' or 'B' */
    int is_list;
    vkcu_hash_list list;
    frame_source *src;
    /* the current head item */
    int have;
    int64_t index;           /* of the head item, from 0 */
    int64_t key;             /* timestamp in alignment units */
    double secs;             /* seconds from the stream start */
    AVFrame *frame;
    const vkcu_hash_entry *entry;
    int64_t first;           /* --align start: the first item's timestamp, in its own time base */
    char err[512];
} side;

typedef struct align {
    enum vkcu_compare_align mode;
    AVRational tb;           /* alignment units */
    int64_t window;          /* |key_a - key_b| <= window pairs two frames */
    int64_t ts_tolerance;    /* paired frames further apart than this are a timestamp mismatch */
} align;

/* The pairing key of the head item from its timestamp ts (time base tb),
 * into a hash list's units exactly as the hash sink rounds. */
static void set_key(side *s, const align *al, int64_t ts, AVRational tb)
{
    if (al->mode == VKCU_ALIGN_INDEX) {
        s->key = s->index;
        return;
    }
    if (al->mode == VKCU_ALIGN_START) {
        if (s->index == 0)
            s->first = ts;
        ts -= s->first;
    }
    s->key = av_rescale_q(ts, tb, al->tb);
}

static int side_advance(side *s, const align *al)
{
    av_frame_free(&s->frame);
    s->entry = NULL;
    if (s->have)
        s->index++;
    s->have = 0;
    if (s->is_list) {
        if (s->index >= s->list.nb)
            return 0;
        s->entry = &s->list.entries[s->index];
        s->secs = s->entry->pts * av_q2d(s->list.tb);
        set_key(s, al, s->entry->pts, s->list.tb);
        s->have = 1;
        return 0;
    }
    int ret = source_next(s->src, &s->frame);
    if (ret == AVERROR_EOF)
        return 0;
    if (ret < 0)
        return ret;
    int64_t rel;
    AVRational tb = s->src->tb;
    if (s->frame->pts != AV_NOPTS_VALUE) {
        rel = s->frame->pts - s->src->start;
    } else if (s->src->frame_rate.num > 0) {
        rel = av_rescale_q(s->index, av_inv_q(s->src->frame_rate), tb);
    } else {
        rel = s->index;
        tb = (AVRational){ 1, 25 };
    }
    s->secs = rel * av_q2d(tb);
    set_key(s, al, rel, tb);
    s->have = 1;
    return 0;
}

/* Reads a side that is a hash list (s->is_list set); a media file is left
 * for side_open_media, once both sides' timing is known. */
static int side_open_list(side *s, const char *path, char label)
{
    memset(s, 0, sizeof(*s));
    s->path = path;
    s->label = label;
    s->index = 0;
    int ret = 0;
    int stream = hash_list_from_stream(path, &s->list, &ret, s->err, sizeof(s->err));
    if (stream || vkcu_hash_list_sniff(path)) {
        s->is_list = 1;
        if (!stream)
            ret = vkcu_hash_list_load(path, &s->list, s->err, sizeof(s->err));
        if (ret >= 0 && s->list.tb.num <= 0) {
            snprintf(s->err, sizeof(s->err), "%s: the hash list has no time base ('#tb 0:' line)", path);
            ret = VKCU_ERR_INPUT;
        }
    }
    return ret;
}

static int side_open_media(side *s, const vkcu_job_params *job)
{
    return s->is_list ? 0 : source_open(job, s->path, &s->src, s->err, sizeof(s->err));
}

/* Whether a side's head item is marked as decoded from damaged data. */
static int side_concealed(const side *s)
{
    return s->is_list ? s->entry->concealed : !!(s->frame->flags & AV_FRAME_FLAG_CORRUPT);
}

static const char *concealed_where(const side *a, const side *b)
{
    int ca = side_concealed(a), cb = side_concealed(b);
    return ca && cb ? "in A and B" : ca ? "in A" : "in B";
}

static void side_close(side *s)
{
    av_frame_free(&s->frame);
    source_close(&s->src);
    vkcu_hash_list_free(&s->list);
}

static void fmt_time(char *buf, size_t n, double secs)
{
    snprintf(buf, n, "%.3f s", secs);
}

static void print_metrics(FILE *o, const vkcu_frame_metrics *m)
{
    fprintf(o, "max diff %d (%c at %d,%d); PSNR", m->max_diff, m->comp_names[m->max_diff_comp], m->max_diff_x,
            m->max_diff_y);
    for (int i = 0; i < m->nb_comps; i++)
        fprintf(o, " %c:%.2f", m->comp_names[i], m->psnr[i]);
    fprintf(o, " avg:%.2f dB; SSIM", m->psnr_avg);
    for (int i = 0; i < m->nb_comps; i++)
        fprintf(o, " %c:%.5f", m->comp_names[i] - 32, m->ssim[i]);
    fprintf(o, " All:%.5f", m->ssim_all);
}

/* ------------------------------------------------------------------ */
/* difference picture                                                   */

/* 3x5 glyphs for the scale labels: digits, then 'x', '.', '-'. */
static const uint16_t glyphs[13] = {
    0x7B6F, 0x2C97, 0x73E7, 0x73CF, 0x5BC9, 0x79CF, 0x79EF, 0x7249, 0x7BEF, 0x7BCF, 0x0AA8, 0x0002, 0x01C0,
};

static void put_text(uint8_t *rgb, int stride, int w, int h, int x0, int y0, int scale, const char *text)
{
    for (const char *c = text; *c; c++, x0 += 4 * scale) {
        int g = *c >= '0' && *c <= '9' ? *c - '0' : *c == 'x' ? 10 : *c == '.' ? 11 : *c == '-' ? 12 : -1;
        if (g < 0)
            continue;
        for (int gy = 0; gy < 5; gy++)
            for (int gx = 0; gx < 3; gx++) {
                if (!(glyphs[g] >> (14 - (gy * 3 + gx)) & 1))
                    continue;
                for (int sy = 0; sy < scale; sy++)
                    for (int sx = 0; sx < scale; sx++) {
                        int x = x0 + gx * scale + sx, y = y0 + gy * scale + sy;
                        if (x >= 0 && x < w && y >= 0 && y < h)
                            memset(rgb + (ptrdiff_t)y * stride + 3 * x, 255, 3);
                    }
            }
    }
}

static int write_png(const char *path, int overwrite, const char *const *inputs, AVFrame *rgb, char *err,
                     size_t errlen)
{
    char tmp[4200], buf[128];
    uint8_t *png = NULL;
    int size = 0;
    int ret = vkcu_outfile_begin(path, overwrite, inputs, tmp, sizeof(tmp), err, errlen);
    if (ret < 0)
        return VKCU_ERR_OUTPUT;
    ret = vkcu_png_encode(rgb, &png, &size);
    if (ret < 0) {
        if (ret == AVERROR_ENCODER_NOT_FOUND)
            snprintf(err, errlen, "%s: this FFmpeg build has no PNG encoder", path);
        else
            snprintf(err, errlen, "%s: PNG encoding failed: %s", path, vkcu_err_str(ret, buf, sizeof(buf)));
        ret = VKCU_ERR_OUTPUT;
        goto fail;
    }
    FILE *f = vkcu_outfile_fopen(tmp, "wb");
    if (f)
        fwrite(png, 1, size, f); /* a short write leaves the stream's error flag for the close */
    int ok = f && vkcu_outfile_fclose(f, tmp) == 0;
    if (!ok) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        ret = VKCU_ERR_OUTPUT;
        goto fail;
    }
    ret = vkcu_outfile_commit(tmp, path, err, errlen);
    if (ret < 0)
        ret = VKCU_ERR_OUTPUT;
fail:
    if (ret < 0)
        vkcu_outfile_abort(tmp);
    av_free(png);
    return ret;
}

/* Per pixel of the luma grid: the largest difference of any component
 * sampled there (chroma at its subsampled position). Returns the largest. */
static int diff_map(const frame_view *va, const frame_view *vb, const AVPixFmtDescriptor *d, int w, int h, int *diff)
{
    int maxd = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int m = 0;
            for (int c = 0; c < va->nb; c++) {
                int sx = comp_subsampled(d, c) ? x >> d->log2_chroma_w : x;
                int sy = comp_subsampled(d, c) ? y >> d->log2_chroma_h : y;
                int dd = abs(sample_at(&va->c[c], sx, sy) - sample_at(&vb->c[c], sx, sy));
                m = dd > m ? dd : m;
            }
            diff[(size_t)y * w + x] = m;
            maxd = m > maxd ? m : maxd;
        }
    return maxd;
}

/* The worst frame: A's luma dimmed as a backdrop, every sample whose
 * largest per-component difference is non-zero coloured on a heat scale
 * reaching white at the frame's largest difference, and a labelled scale
 * bar underneath ("0", the largest difference, and the amplification). */
static int draw_difference(const vkcu_compare_params *p, const AVFrame *a, const AVFrame *b, char *err,
                           size_t errlen)
{
    frame_view va, vb;
    int ret = frame_views_init(&va, &vb, a, b);
    if (ret < 0) {
        snprintf(err, errlen, "%s: cannot draw the difference of %s frames", p->diff_image, av_get_pix_fmt_name(a->format));
        return ret;
    }
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(a->format);
    int w = a->width, h = a->height, bar = h >= 96 ? 28 : 20, scale = h >= 96 ? 2 : 1;
    int total_h = h + bar;
    AVFrame *rgb = av_frame_alloc();
    int *diff = av_malloc_array((size_t)w * h, sizeof(int));
    if (!rgb || !diff) {
        ret = AVERROR(ENOMEM);
        goto done;
    }
    rgb->format = AV_PIX_FMT_RGB24;
    rgb->width = w;
    rgb->height = total_h;
    if ((ret = av_frame_get_buffer(rgb, 0)) < 0)
        goto done;
    int peak = (1 << va.depth) - 1;
    int maxd = diff_map(&va, &vb, d, w, h, diff);
    for (int y = 0; y < h; y++) {
        uint8_t *row = rgb->data[0] + (ptrdiff_t)y * rgb->linesize[0];
        for (int x = 0; x < w; x++) {
            int m = diff[(size_t)y * w + x];
            if (m) {
                vkcu_heat_colour((double)m / maxd, row + 3 * x);
            } else {
                int luma = (d->flags & AV_PIX_FMT_FLAG_RGB) ? sample_at(&va.c[1], x, y) : sample_at(&va.c[0], x, y);
                memset(row + 3 * x, (luma * 64) / (peak ? peak : 1), 3);
            }
        }
    }
    /* The scale bar: the colour ramp over the width, labels on it. */
    for (int y = h; y < total_h; y++) {
        uint8_t *row = rgb->data[0] + (ptrdiff_t)y * rgb->linesize[0];
        for (int x = 0; x < w; x++) {
            if (y < h + bar / 2)
                vkcu_heat_colour(w > 1 ? (double)x / (w - 1) : 1, row + 3 * x);
            else
                memset(row + 3 * x, 0, 3);
        }
    }
    char label[64];
    int ty = h + bar / 2 + 1;
    put_text(rgb->data[0], rgb->linesize[0], w, total_h, 1, ty, scale, "0");
    snprintf(label, sizeof(label), "%d", maxd);
    int lw = (int)strlen(label) * 4 * scale;
    put_text(rgb->data[0], rgb->linesize[0], w, total_h, w - lw, ty, scale, label);
    snprintf(label, sizeof(label), "x%d", maxd ? (255 + maxd - 1) / maxd : 1);
    lw = (int)strlen(label) * 4 * scale;
    put_text(rgb->data[0], rgb->linesize[0], w, total_h, (w - lw) / 2, ty, scale, label);
    const char *inputs[] = { p->a, p->b, p->job->pipeline_file, NULL };
    ret = write_png(p->diff_image, p->overwrite, inputs, rgb, err, errlen);
done:
    av_frame_free(&rgb);
    av_free(diff);
    frame_view_free(&va);
    frame_view_free(&vb);
    return ret;
}

/* ------------------------------------------------------------------ */
/* the comparison                                                       */

void vkcu_compare_params_default(vkcu_compare_params *p)
{
    memset(p, 0, sizeof(*p));
    p->max_diff = -1;
    p->min_psnr = NAN;
    p->min_vmaf = NAN;
}

/* One paired frame's row (--csv, --json). */
typedef struct frame_row {
    int64_t frame_a, frame_b;
    double pts_a, pts_b;
    vkcu_frame_metrics m;
} frame_row;

typedef struct run {
    const vkcu_compare_params *p;
    vkcu_compare_result *r;
    side a, b;
    align al;
    int exact;               /* no threshold given: any difference fails */
    int64_t lines;           /* per-frame lines printed */
    double mse_sum[4], mse_avg_sum, ssim_sum[4], ssim_all_sum, worst_mse;
    int64_t metric_frames, ssim_frames;
    AVFrame *worst_a, *worst_b;
    struct SwsContext *sws; /* --scale: B to A's size and format */
    FILE *csv;
    json_t *rows;
    vkcu_compare_plot *plot;   /* --report, verify --html: every row and the worst frames */
    struct SwsContext *thumb_sws;
    char csv_tmp[4200];
    char first_problem[256];
    /* --vmaf: libvmaf scores a frame only once it has seen the whole stream,
     * so per-frame lines wait in `held` (each paired frame's line ends at an
     * offset in held_ends, its VMAF to be appended) and rows in `pending`. */
    vkcu_vmaf *vmaf;
    FILE *held;
    char *held_buf;
    size_t held_len;
    struct held_end { size_t offset; int64_t row; } *held_ends;
    int64_t nb_held_ends, cap_held_ends;
    frame_row *pending;
    int64_t nb_pending, cap_pending;
} run;

#define MAX_LINES 20

static FILE *line_out(run *x, int always)
{
    FILE *o = x->held ? x->held : x->p->report;
    if (!o)
        return NULL;
    if (always || x->p->per_frame)
        return o;
    if (x->lines++ < MAX_LINES)
        return o;
    if (x->lines == MAX_LINES + 1)
        fprintf(o, "... (more differences not listed; %s lists every frame)\n", VKCU_SETTING_IS("per_frame", "1"));
    return NULL;
}

static void note_problem(run *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_problem(run *x, const char *fmt, ...)
{
    if (x->first_problem[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->first_problem, sizeof(x->first_problem), fmt, ap);
    va_end(ap);
}

static void unpaired(run *x, side *s)
{
    vkcu_compare_result *r = x->r;
    char t[32];
    fmt_time(t, sizeof(t), s->secs);
    if (s->label == 'A')
        r->only_a++;
    else
        r->only_b++;
    note_problem(x, "%c frame %" PRId64 " (pts %s) has no partner in %c", s->label, s->index, t, s->label == 'A' ? 'B' : 'A');
    FILE *o = line_out(x, 0);
    if (o)
        fprintf(o, "%c frame %" PRId64 " (pts %s): only in %c (missing from %c)\n", s->label, s->index, t, s->label,
                s->label == 'A' ? 'B' : 'A');
}

static int pair_hashes(run *x)
{
    side *a = &x->a, *b = &x->b;
    char ha[68], hb[68];
    int sa = 0, sb = 0;
    enum vkcu_hash_algo algo = a->is_list ? a->list.algo : b->list.algo;
    if (a->is_list) {
        snprintf(ha, sizeof(ha), "%s", a->entry->hash);
        sa = a->entry->size;
    } else if (vkcu_frame_hash(a->frame, algo, ha, sizeof(ha), &sa) < 0) {
        snprintf(x->r->error, sizeof(x->r->error), "%s: cannot hash frame %" PRId64, a->path, a->index);
        return AVERROR(ENOMEM);
    }
    if (b->is_list) {
        snprintf(hb, sizeof(hb), "%s", b->entry->hash);
        sb = b->entry->size;
    } else if (vkcu_frame_hash(b->frame, algo, hb, sizeof(hb), &sb) < 0) {
        snprintf(x->r->error, sizeof(x->r->error), "%s: cannot hash frame %" PRId64, b->path, b->index);
        return AVERROR(ENOMEM);
    }
    int same = !strcmp(ha, hb) && sa == sb;
    int concealed = side_concealed(a) || side_concealed(b);
    char t[32], note[64] = "";
    fmt_time(t, sizeof(t), a->secs);
    if (concealed)
        snprintf(note, sizeof(note), " (concealed by the decoder %s%s)", concealed_where(a, b),
                 x->p->exclude_concealed ? ", left out" : "");
    if (!same && concealed)
        x->r->concealed_differing++;
    if (!same && !(concealed && x->p->exclude_concealed)) {
        x->r->differing++;
        x->r->over_limit++;
        if (x->r->first_diff < 0) {
            x->r->first_diff = a->index;
            x->r->first_diff_time = a->secs;
        }
        note_problem(x, "frame %" PRId64 " (pts %s): %s of A %s, of B %s%s", a->index, t, vkcu_hash_algo_name(algo), ha, hb,
                     x->exact ? "" : " (a hash list cannot tell by how much: compare the pictures)");
    }
    FILE *o = same ? (x->p->per_frame ? x->p->report : NULL) : line_out(x, 0);
    if (o && same)
        fprintf(o, "frame %" PRId64 " (pts %s): same hash %s%s\n", a->index, t, ha, note);
    else if (o)
        fprintf(o, "frame %" PRId64 " (pts %s): hashes differ: A %s (size %d), B %s (size %d)%s\n", a->index, t, ha, sa,
                hb, sb, note);
    return 0;
}

/* ---- per-frame rows: --csv and --json ---- */

/* JSON has no infinity: identical planes (PSNR +inf) are null. */
static json_t *json_metric(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static int rows_open(run *x)
{
    const vkcu_compare_params *p = x->p;
    const char *files[2] = { p->csv, p->json };
    const char *inputs[] = { p->a, p->b, p->job->pipeline_file, NULL };
    for (int k = 0; k < 2; k++) {
        if (!files[k])
            continue;
        if (x->a.is_list || x->b.is_list) {
            snprintf(x->r->error, sizeof(x->r->error), "%s: per-frame rows need pictures, and %s is a hash list",
                     files[k], x->a.is_list ? p->a : p->b);
            return VKCU_ERR_USAGE;
        }
        /* Refuse an existing file or an input now, not after decoding both inputs. */
        if (vkcu_outfile_check(files[k], p->overwrite, inputs, x->r->error, sizeof(x->r->error)) < 0)
            return VKCU_ERR_OUTPUT;
    }
    if (p->csv) {
        if (vkcu_outfile_begin(p->csv, p->overwrite, inputs, x->csv_tmp, sizeof(x->csv_tmp), x->r->error,
                               sizeof(x->r->error)) < 0)
            return VKCU_ERR_OUTPUT;
        x->csv = vkcu_outfile_fopen(x->csv_tmp, "w");
        if (!x->csv) {
            snprintf(x->r->error, sizeof(x->r->error), "%s: cannot write: %s", p->csv, strerror(errno));
            vkcu_outfile_abort(x->csv_tmp);
            x->csv_tmp[0] = 0;
            return VKCU_ERR_OUTPUT;
        }
    }
    if (p->json) {
        x->rows = json_array();
        if (!x->rows)
            return AVERROR(ENOMEM);
    }
    return 0;
}

static int rows_add(run *x, const frame_row *row_data)
{
    const vkcu_frame_metrics *m = &row_data->m;
    int vmaf = x->vmaf != NULL;
    if (x->plot) {
        vkcu_plot_row row = { .frame = row_data->frame_a, .secs = row_data->pts_a, .psnr_avg = m->psnr_avg,
                              .ssim_all = m->ssim_all, .vmaf = vmaf ? m->vmaf : NAN, .max_diff = m->max_diff };
        memcpy(row.psnr, m->psnr, sizeof(row.psnr));
        if (!x->plot->nb_rows) {
            x->plot->nb_comps = m->nb_comps;
            memcpy(x->plot->comp_names, m->comp_names, sizeof(x->plot->comp_names));
        }
        if (vkcu_compare_plot_add(x->plot, &row) < 0)
            return AVERROR(ENOMEM);
    }
    if (x->csv) {
        FILE *f = x->csv;
        if (ftell(f) == 0) {
            fprintf(f, "frame_a,frame_b,pts_a,pts_b");
            for (int i = 0; i < m->nb_comps; i++)
                fprintf(f, ",psnr_%c", m->comp_names[i]);
            fprintf(f, ",psnr_avg");
            for (int i = 0; i < m->nb_comps; i++)
                fprintf(f, ",ssim_%c", m->comp_names[i]);
            fprintf(f, ",ssim_all,max_diff%s\n", vmaf ? ",vmaf" : "");
        }
        fprintf(f, "%" PRId64 ",%" PRId64 ",%.6f,%.6f", row_data->frame_a, row_data->frame_b, row_data->pts_a,
                row_data->pts_b);
        for (int i = 0; i < m->nb_comps; i++)
            fprintf(f, ",%.6f", m->psnr[i]);
        fprintf(f, ",%.6f", m->psnr_avg);
        for (int i = 0; i < m->nb_comps; i++)
            fprintf(f, ",%.6f", m->ssim[i]);
        fprintf(f, ",%.6f,%d", m->ssim_all, m->max_diff);
        if (vmaf)
            fprintf(f, ",%.6f", m->vmaf);
        fputc('\n', f);
    }
    if (x->rows) {
        json_t *row = json_object(), *psnr = json_object(), *ssim = json_object();
        int bad = !row || !psnr || !ssim;
        char key[2] = { 0, 0 };
        for (int i = 0; i < m->nb_comps && !bad; i++) {
            key[0] = m->comp_names[i];
            bad |= json_object_set_new(psnr, key, json_metric(m->psnr[i])) < 0;
            bad |= json_object_set_new(ssim, key, json_metric(m->ssim[i])) < 0;
        }
        if (!bad)
            bad = json_object_set_new(psnr, "avg", json_metric(m->psnr_avg)) < 0 ||
                  json_object_set_new(ssim, "all", json_metric(m->ssim_all)) < 0 ||
                  json_object_set_new(row, "frame_a", json_integer(row_data->frame_a)) < 0 ||
                  json_object_set_new(row, "frame_b", json_integer(row_data->frame_b)) < 0 ||
                  json_object_set_new(row, "pts_a", json_real(row_data->pts_a)) < 0 ||
                  json_object_set_new(row, "pts_b", json_real(row_data->pts_b)) < 0 ||
                  json_object_set(row, "psnr", psnr) < 0 || json_object_set(row, "ssim", ssim) < 0 ||
                  json_object_set_new(row, "max_diff", json_integer(m->max_diff)) < 0 ||
                  (vmaf && json_object_set_new(row, "vmaf", json_metric(m->vmaf)) < 0) ||
                  json_array_append(x->rows, row) < 0;
        json_decref(psnr);
        json_decref(ssim);
        json_decref(row);
        if (bad)
            return AVERROR(ENOMEM);
    }
    return 0;
}

/* What became of a media side's decoded frames (null for a hash list). */
static json_t *side_counts(const side *s)
{
    if (s->is_list || !s->src)
        return json_null();
    const vkcu_job_result *r = &s->src->r;
    return json_pack("{sIsIsIsIsI}", "decoded", (json_int_t)r->frames_in, "dropped", (json_int_t)r->frames_dropped,
                     "duplicated", (json_int_t)r->frames_duplicated, "rescaled", (json_int_t)r->frames_rescaled,
                     "concealed", (json_int_t)r->frames_concealed);
}

static const char *align_name(enum vkcu_compare_align a)
{
    return a == VKCU_ALIGN_PTS ? "pts" : a == VKCU_ALIGN_INDEX ? "index" : "start";
}

/* Publishes the row files (after the summary): 0 or VKCU_ERR_OUTPUT. */
static int rows_finish(run *x)
{
    const vkcu_compare_params *p = x->p;
    vkcu_compare_result *r = x->r;
    if (x->csv) {
        int bad = vkcu_outfile_fclose(x->csv, x->csv_tmp) != 0;
        x->csv = NULL;
        if (bad) {
            snprintf(r->error, sizeof(r->error), "%s: cannot write: %s", p->csv, strerror(errno));
            return VKCU_ERR_OUTPUT;
        }
        int ret = vkcu_outfile_commit(x->csv_tmp, p->csv, r->error, sizeof(r->error));
        x->csv_tmp[0] = 0;
        if (ret < 0)
            return VKCU_ERR_OUTPUT;
    }
    if (x->rows) {
        char tmp[4200];
        json_t *root = json_object();
        if (!root)
            return AVERROR(ENOMEM);
        if (vkcu_json_set_bytes(root, "a", p->a) < 0 || vkcu_json_set_bytes(root, "b", p->b) < 0 ||
            json_object_set_new(root, "align", json_string(align_name(p->align))) < 0 ||
            vkcu_json_set_bytes(root, "result", r->verdict) < 0 ||
            json_object_set_new(root, "counts", json_pack("{soso}", "a", side_counts(&x->a), "b", side_counts(&x->b))) < 0 ||
            json_object_set_new(root, "concealed", json_integer((json_int_t)r->concealed)) < 0 ||
            json_object_set(root, "frames", x->rows) < 0) {
            json_decref(root);
            return AVERROR(ENOMEM);
        }
        const char *inputs[] = { p->a, p->b, p->job->pipeline_file, NULL };
        int ret = vkcu_outfile_begin(p->json, p->overwrite, inputs, tmp, sizeof(tmp), r->error, sizeof(r->error));
        if (ret >= 0) {
            char *text = vkcu_json_text(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
            FILE *f = text ? vkcu_outfile_fopen(tmp, "w") : NULL;
            if (f) {
                fputs(text, f);
                fputc('\n', f);
            }
            int bad = !f || vkcu_outfile_fclose(f, tmp) != 0;
            free(text);
            if (bad) {
                snprintf(r->error, sizeof(r->error), "%s: cannot write: %s", p->json, strerror(errno));
                vkcu_outfile_abort(tmp);
                ret = VKCU_ERR_OUTPUT;
            } else if (vkcu_outfile_commit(tmp, p->json, r->error, sizeof(r->error)) < 0) {
                ret = VKCU_ERR_OUTPUT;
            }
        } else {
            ret = VKCU_ERR_OUTPUT;
        }
        json_decref(root);
        if (ret < 0)
            return ret;
    }
    return 0;
}

/* ---- the report's worst frames ---- */

/* A, B and their difference downscaled into the thumbnail box (area
 * averaging for the pictures; the difference takes the largest value under
 * each thumbnail pixel, so that one changed sample still shows). */
static int make_thumbs(run *x, const AVFrame *a, const AVFrame *b, vkcu_plot_thumb *t)
{
    int w = a->width, h = a->height;
    double s = fmin(1.0, fmin((double)VKCU_THUMB_W / w, (double)VKCU_THUMB_H / h));
    int tw = (int)fmax(1, lrint(w * s)), th = (int)fmax(1, lrint(h * s));
    frame_view va, vb;
    int *diff = NULL, ret = frame_views_init(&va, &vb, a, b);
    if (ret < 0)
        return ret;
    x->thumb_sws = sws_getCachedContext(x->thumb_sws, w, h, a->format, tw, th, AV_PIX_FMT_RGB24,
                                        SWS_AREA | SWS_ACCURATE_RND | SWS_BITEXACT, NULL, NULL, NULL);
    diff = av_malloc_array((size_t)w * h, sizeof(int));
    ret = x->thumb_sws && diff ? 0 : AVERROR(ENOMEM);
    for (int k = 0; k < 3 && ret >= 0; k++) {
        t->rgb[k] = av_frame_alloc();
        if (!t->rgb[k]) {
            ret = AVERROR(ENOMEM);
            break;
        }
        t->rgb[k]->format = AV_PIX_FMT_RGB24;
        t->rgb[k]->width = tw;
        t->rgb[k]->height = th;
        ret = av_frame_get_buffer(t->rgb[k], 0);
    }
    for (int k = 0; k < 2 && ret >= 0; k++) {
        const AVFrame *in = k ? b : a;
        ret = sws_scale(x->thumb_sws, (const uint8_t *const *)in->data, in->linesize, 0, h, t->rgb[k]->data,
                        t->rgb[k]->linesize);
    }
    if (ret < 0)
        goto done;
    int maxd = diff_map(&va, &vb, av_pix_fmt_desc_get(a->format), w, h, diff);
    for (int ty = 0; ty < th; ty++) {
        int y0 = (int)((int64_t)ty * h / th), y1 = (int)fmax(y0 + 1, (int64_t)(ty + 1) * h / th);
        const uint8_t *src = t->rgb[0]->data[0] + (ptrdiff_t)ty * t->rgb[0]->linesize[0];
        uint8_t *dst = t->rgb[2]->data[0] + (ptrdiff_t)ty * t->rgb[2]->linesize[0];
        for (int tx = 0; tx < tw; tx++) {
            int x0 = (int)((int64_t)tx * w / tw), x1 = (int)fmax(x0 + 1, (int64_t)(tx + 1) * w / tw), m = 0;
            for (int y = y0; y < y1; y++)
                for (int xx = x0; xx < x1; xx++)
                    m = diff[(size_t)y * w + xx] > m ? diff[(size_t)y * w + xx] : m;
            if (m) {
                vkcu_heat_colour((double)m / maxd, dst + 3 * tx);
            } else {
                /* A's luma, dimmed as in --diff-image */
                int luma = (77 * src[3 * tx] + 150 * src[3 * tx + 1] + 29 * src[3 * tx + 2]) >> 8;
                memset(dst + 3 * tx, luma / 4, 3);
            }
        }
    }
    ret = 0;
done:
    av_free(diff);
    frame_view_free(&va);
    frame_view_free(&vb);
    if (ret < 0)
        for (int k = 0; k < 3; k++)
            av_frame_free(&t->rgb[k]);
    return ret;
}

/* Keeps the VKCU_PLOT_WORST differing frames of lowest PSNR (the earlier
 * frame on a tie), as thumbnails made now: no frame is held. */
static int plot_offer(run *x, const AVFrame *a, const AVFrame *b, const vkcu_frame_metrics *m)
{
    vkcu_compare_plot *p = x->plot;
    if (!p || !m->max_diff)
        return 0;
    int pos = p->nb_worst;
    while (pos > 0 && m->psnr_avg < p->worst[pos - 1].psnr_avg)
        pos--;
    if (pos >= VKCU_PLOT_WORST)
        return 0;
    vkcu_plot_thumb t = { .frame = x->a.index, .secs = x->a.secs, .psnr_avg = m->psnr_avg, .ssim_all = m->ssim_all,
                          .max_diff = m->max_diff };
    int ret = make_thumbs(x, a, b, &t);
    if (ret < 0)
        return ret;
    if (p->nb_worst == VKCU_PLOT_WORST) {
        for (int k = 0; k < 3; k++)
            av_frame_free(&p->worst[VKCU_PLOT_WORST - 1].rgb[k]);
        p->nb_worst--;
    }
    memmove(&p->worst[pos + 1], &p->worst[pos], (size_t)(p->nb_worst - pos) * sizeof(t));
    p->worst[pos] = t;
    p->nb_worst++;
    return 0;
}

/* The --report page, written whole under a temporary name. */
static int write_report(run *x)
{
    const vkcu_compare_params *p = x->p;
    vkcu_compare_result *r = x->r;
    const char *inputs[] = { p->a, p->b, p->job->pipeline_file, NULL };
    char tmp[4200], buf[128];
    if (vkcu_outfile_begin(p->report_html, p->overwrite, inputs, tmp, sizeof(tmp), r->error, sizeof(r->error)) < 0)
        return VKCU_ERR_OUTPUT;
    FILE *f = vkcu_outfile_fopen(tmp, "w");
    int ret = f ? vkcu_html_compare_page(f, p, r, x->plot) : AVERROR(errno);
    int bad = !f || vkcu_outfile_fclose(f, tmp) != 0;
    if (ret < 0 || bad) {
        snprintf(r->error, sizeof(r->error), "%s: cannot write: %s", p->report_html,
                 ret < 0 ? vkcu_err_str(ret, buf, sizeof(buf)) : strerror(errno));
        vkcu_outfile_abort(tmp);
        return VKCU_ERR_OUTPUT;
    }
    if (vkcu_outfile_commit(tmp, p->report_html, r->error, sizeof(r->error)) < 0)
        return VKCU_ERR_OUTPUT;
    if (p->report)
        fprintf(p->report, "report: %s (%" PRId64 " frames plotted, %d worst frames)\n", p->report_html,
                x->plot->nb_rows, x->plot->nb_worst);
    return 0;
}

/* --scale: replaces B's frame by one of ref's size and format. Bicubic,
 * with accurate rounding and bit-exact arithmetic, so that ffmpeg's
 * scale=W:H:flags=bicubic+accurate_rnd+bitexact gives the same pictures. */
static int scale_to(run *x, side *b, const AVFrame *ref)
{
    AVFrame *in = b->frame;
    if (in->width == ref->width && in->height == ref->height && in->format == ref->format)
        return 0;
    x->sws = sws_getCachedContext(x->sws, in->width, in->height, in->format, ref->width, ref->height, ref->format,
                                  SWS_BICUBIC | SWS_ACCURATE_RND | SWS_BITEXACT, NULL, NULL, NULL);
    AVFrame *out = av_frame_alloc();
    int ret = x->sws && out ? 0 : AVERROR(ENOMEM);
    if (ret >= 0) {
        out->width = ref->width;
        out->height = ref->height;
        out->format = ref->format;
        ret = av_frame_get_buffer(out, 0);
    }
    if (ret >= 0)
        ret = av_frame_copy_props(out, in);
    if (ret >= 0)
        ret = sws_scale(x->sws, (const uint8_t *const *)in->data, in->linesize, 0, in->height, out->data, out->linesize);
    if (ret < 0 || !x->sws) {
        av_frame_free(&out);
        snprintf(x->r->error, sizeof(x->r->error), "%s: cannot scale %dx%d %s to %dx%d %s", b->path, in->width,
                 in->height, av_get_pix_fmt_name(in->format), ref->width, ref->height, av_get_pix_fmt_name(ref->format));
        return ret < 0 ? ret : VKCU_ERR_USAGE;
    }
    av_frame_free(&b->frame);
    b->frame = out;
    return 0;
}

static int pending_push(run *x, const frame_row *row)
{
    if (x->nb_pending == x->cap_pending) {
        int64_t cap = x->cap_pending ? x->cap_pending * 2 : 256;
        frame_row *n = realloc(x->pending, (size_t)cap * sizeof(*n));
        if (!n)
            return AVERROR(ENOMEM);
        x->pending = n;
        x->cap_pending = cap;
    }
    x->pending[x->nb_pending++] = *row;
    return 0;
}

/* Ends a paired frame's line: now, or (held for --vmaf) once its score is known. */
static int end_frame_line(run *x, FILE *o)
{
    if (o != x->held) {
        fputc('\n', o);
        return 0;
    }
    if (x->nb_held_ends == x->cap_held_ends) {
        int64_t cap = x->cap_held_ends ? x->cap_held_ends * 2 : 256;
        struct held_end *n = realloc(x->held_ends, (size_t)cap * sizeof(*n));
        if (!n)
            return AVERROR(ENOMEM);
        x->held_ends = n;
        x->cap_held_ends = cap;
    }
    long off = ftell(o);
    if (off < 0)
        return AVERROR(errno);
    x->held_ends[x->nb_held_ends++] = (struct held_end){ (size_t)off, x->nb_pending - 1 };
    return 0;
}

/* Prints the held lines, each paired frame's with its VMAF (scored: 1) or
 * without (the run failed before libvmaf finished). */
static void release_held(run *x, int scored)
{
    if (!x->held)
        return;
    int bad = fclose(x->held) != 0;
    x->held = NULL;
    FILE *o = x->p->report;
    size_t at = 0;
    for (int64_t i = 0; i < x->nb_held_ends && !bad; i++) {
        const struct held_end *e = &x->held_ends[i];
        fwrite(x->held_buf + at, 1, e->offset - at, o);
        if (scored)
            fprintf(o, "; VMAF %.2f", x->pending[e->row].m.vmaf);
        fputc('\n', o);
        at = e->offset;
    }
    if (!bad && x->held_len > at)
        fwrite(x->held_buf + at, 1, x->held_len - at, o);
    free(x->held_buf);
    x->held_buf = NULL;
}

/* --vmaf after the last pair: every pending row gets its score, the held
 * lines and the rows go out, and the result gets the pooled mean. */
static int vmaf_settle(run *x)
{
    vkcu_compare_result *r = x->r;
    double *scores = NULL, mean;
    int64_t n;
    char err[400];
    int ret = vkcu_vmaf_finish(x->vmaf, &scores, &n, &mean, err, sizeof(err));
    if (ret >= 0 && n != x->nb_pending) {
        snprintf(err, sizeof(err), "%s: libvmaf scored %" PRId64 " of %" PRId64 " pairs", VKCU_SETTING("vmaf"), n,
                 x->nb_pending);
        ret = AVERROR_BUG;
    }
    if (ret < 0) {
        free(scores);
        snprintf(r->error, sizeof(r->error), "%s", err);
        return ret;
    }
    r->vmaf = 1;
    r->vmaf_mean = mean;
    r->vmaf_min = NAN;
    for (int64_t i = 0; i < n; i++) {
        frame_row *row = &x->pending[i];
        row->m.vmaf = scores[i];
        if (isnan(r->vmaf_min) || scores[i] < r->vmaf_min) {
            r->vmaf_min = scores[i];
            r->vmaf_min_index = row->frame_a;
        }
        if (row->frame_a == r->worst_index)
            r->worst.vmaf = scores[i];
    }
    free(scores);
    release_held(x, 1);
    for (int64_t i = 0; i < n; i++)
        if ((ret = rows_add(x, &x->pending[i])) < 0) {
            snprintf(r->error, sizeof(r->error), "out of memory");
            return ret;
        }
    return 0;
}

static int pair_frames(run *x)
{
    side *a = &x->a, *b = &x->b;
    vkcu_compare_result *r = x->r;
    vkcu_frame_metrics m;
    char err[256], t[32];
    fmt_time(t, sizeof(t), a->secs);
    if (x->p->scale) {
        int ret = scale_to(x, b, a->frame);
        if (ret < 0)
            return ret;
    }
    int ret = vkcu_frame_metrics_compute(a->frame, b->frame, &m, err, sizeof(err));
    if (ret == VKCU_ERR_MISMATCH) {
        r->format_mismatch++;
        r->differing++;
        if (r->first_diff < 0) {
            r->first_diff = a->index;
            r->first_diff_time = a->secs;
        }
        note_problem(x, "frame %" PRId64 " (pts %s): pictures differ in format: %s", a->index, t, err);
        FILE *o = line_out(x, 0);
        if (o)
            fprintf(o, "frame %" PRId64 " (pts %s): different picture formats: %s\n", a->index, t, err);
        return 0;
    }
    if (ret < 0) {
        snprintf(r->error, sizeof(r->error), "%s: frame %" PRId64 ": %s", a->path, a->index, err);
        return ret;
    }
    frame_row row = { a->index, b->index, a->secs, b->secs, m };
    if (x->vmaf) {
        const AVFrame *ref = x->p->vmaf_ref_b ? b->frame : a->frame, *dist = x->p->vmaf_ref_b ? a->frame : b->frame;
        char verr[400];
        if ((ret = vkcu_vmaf_add(x->vmaf, ref, dist, verr, sizeof(verr))) < 0) {
            snprintf(r->error, sizeof(r->error), "%s: frame %" PRId64 ": %s", a->path, a->index, verr);
            return ret;
        }
        ret = pending_push(x, &row);
    } else {
        ret = rows_add(x, &row);
    }
    if (ret < 0) {
        snprintf(r->error, sizeof(r->error), "out of memory");
        return ret;
    }
    if (!r->metrics) {
        r->metrics = 1;
        r->nb_comps = m.nb_comps;
        memcpy(r->comp_names, m.comp_names, sizeof(r->comp_names));
    }
    if (m.nb_comps == r->nb_comps) {
        for (int i = 0; i < m.nb_comps; i++)
            x->mse_sum[i] += m.mse[i];
        x->mse_avg_sum += m.mse_avg;
        x->metric_frames++;
        if (!isnan(m.ssim_all)) {
            for (int i = 0; i < m.nb_comps; i++)
                x->ssim_sum[i] += m.ssim[i];
            x->ssim_all_sum += m.ssim_all;
            x->ssim_frames++;
        }
        r->psnr_min = fmin(r->psnr_min, m.psnr_avg);
    }
    if ((ret = plot_offer(x, a->frame, b->frame, &m)) < 0) {
        snprintf(r->error, sizeof(r->error), "%s: frame %" PRId64 ": cannot make the report's thumbnails", a->path,
                 a->index);
        return ret;
    }
    if (m.max_diff > r->max_diff) {
        r->max_diff = m.max_diff;
        r->max_diff_index = a->index;
    }
    int concealed = side_concealed(a) || side_concealed(b);
    const char *where = concealed ? concealed_where(a, b) : ""; /* before the frames may move to worst_a/b */
    int differs = m.max_diff > 0;
    int over = x->exact ? differs
                        : (x->p->max_diff >= 0 && m.max_diff > x->p->max_diff) ||
                              (!isnan(x->p->min_psnr) && m.psnr_avg < x->p->min_psnr);
    if (differs && concealed)
        r->concealed_differing++;
    if (concealed && x->p->exclude_concealed) {
        /* Counted apart: the decoder, not the pipeline, made these pixels. */
        FILE *o = differs ? line_out(x, 0) : (x->p->per_frame ? x->p->report : NULL);
        if (o) {
            fprintf(o, "frame %" PRId64 " (pts %s): %s (concealed by the decoder %s, left out): ", a->index, t,
                    differs ? "differs" : "identical", where);
            print_metrics(o, &m);
            if ((ret = end_frame_line(x, o)) < 0) {
                snprintf(r->error, sizeof(r->error), "out of memory");
                return ret;
            }
        }
        return 0;
    }
    r->max_diff = m.max_diff > r->max_diff ? m.max_diff : r->max_diff;
    if (differs) {
        r->differing++;
        if (r->first_diff < 0) {
            r->first_diff = a->index;
            r->first_diff_time = a->secs;
        }
        if (m.mse_avg > x->worst_mse || !x->worst_a) {
            x->worst_mse = m.mse_avg;
            r->worst = m;
            r->worst_index = a->index;
            av_frame_free(&x->worst_a);
            av_frame_free(&x->worst_b);
            x->worst_a = a->frame;
            x->worst_b = b->frame;
            a->frame = b->frame = NULL;
        }
    }
    if (over) {
        r->over_limit++;
        if (x->exact)
            note_problem(x, "frame %" PRId64 " (pts %s) differs: max diff %d, PSNR %.2f dB", a->index, t, m.max_diff,
                         m.psnr_avg);
        else
            note_problem(x, "frame %" PRId64 " (pts %s) is outside the limits: max diff %d, PSNR %.2f dB", a->index, t,
                         m.max_diff, m.psnr_avg);
    }
    /* Frames within the limits are listed only with per_frame: a PASS is its summary. */
    FILE *o = over ? line_out(x, 0) : x->p->per_frame ? line_out(x, 1) : NULL;
    if (o) {
        fprintf(o, "frame %" PRId64 " (pts %s): %s", a->index, t, !differs ? "identical; " : over ? "DIFFERS: " : "differs (within limits): ");
        if (concealed)
            fprintf(o, "(concealed by the decoder %s) ", where);
        print_metrics(o, &m);
        if ((ret = end_frame_line(x, o)) < 0) {
            snprintf(r->error, sizeof(r->error), "out of memory");
            return ret;
        }
    }
    return 0;
}

static int do_pair(run *x)
{
    side *a = &x->a, *b = &x->b;
    vkcu_compare_result *r = x->r;
    r->paired++;
    if (side_concealed(a) || side_concealed(b))
        r->concealed++;
    int64_t dk = a->key - b->key;
    if (dk < 0)
        dk = -dk;
    if (dk > x->al.ts_tolerance) {
        char ta[32], tb[32];
        fmt_time(ta, sizeof(ta), a->secs);
        fmt_time(tb, sizeof(tb), b->secs);
        r->ts_mismatch++;
        note_problem(x, "frame %" PRId64 ": timestamps differ (A %s, B %s)", a->index, ta, tb);
        FILE *o = line_out(x, 0);
        if (o)
            fprintf(o, "frame %" PRId64 ": timestamps differ: A %s, B %s\n", a->index, ta, tb);
    }
    if (a->is_list || b->is_list)
        return pair_hashes(x);
    return pair_frames(x);
}

static void set_alignment(run *x)
{
    side *a = &x->a, *b = &x->b;
    x->al.mode = x->p->align;
    if (x->al.mode == VKCU_ALIGN_INDEX) {
        /* Keys are frame numbers: n pairs with n, and timestamps are not checked. */
        x->al.tb = (AVRational){ 1, 1 };
        x->al.window = 0;
        x->al.ts_tolerance = INT64_MAX;
        return;
    }
    if (a->is_list || b->is_list) {
        /* Hash lists count in 1/frame-rate units: frames pair on equal timestamps. */
        x->al.tb = a->is_list ? a->list.tb : b->list.tb;
        x->al.window = 0;
        x->al.ts_tolerance = 0;
        return;
    }
    /* Two media files: frames pair within half a frame interval, and
     * timestamps closer than 1 ms (Matroska's precision) agree. Keys count
     * microseconds, or finer units where half a frame interval would be
     * fewer than 500 of them (a y4m at F1000000:1): rounding to a coarse
     * unit must not leave frames unpaired. */
    double fps = 0;
    if (a->src->frame_rate.num > 0)
        fps = av_q2d(a->src->frame_rate);
    if (b->src->frame_rate.num > 0)
        fps = fmax(fps, av_q2d(b->src->frame_rate));
    if (fps <= 0)
        fps = 25;
    int64_t units = 1000000;
    while (units <= INT_MAX / 10 && 0.5 * (double)units / fps < 500)
        units *= 10;
    x->al.tb = (AVRational){ 1, (int)units };
    x->al.window = (int64_t)(0.5 * (double)units / fps) - 1;
    if (x->al.window < 0)
        x->al.window = 0;
    x->al.ts_tolerance = FFMIN(units / 1000, x->al.window);
}

static void fmt_fps(char *buf, size_t n, AVRational q)
{
    int len = snprintf(buf, n, "%.3f", av_q2d(q));
    while (len > 0 && (size_t)len < n && buf[len - 1] == '0')
        buf[--len] = 0;
    if (len > 0 && (size_t)len < n && buf[len - 1] == '.')
        buf[--len] = 0;
}

/* 1 (with the verdict set) when both inputs are media files that declare
 * different frame rates. Index alignment pairs frames whatever their rate. */
static int rate_differs(run *x)
{
    side *a = &x->a, *b = &x->b;
    if (x->al.mode == VKCU_ALIGN_INDEX || a->is_list || b->is_list)
        return 0;
    AVRational ra = a->src->frame_rate, rb = b->src->frame_rate;
    if (ra.num <= 0 || ra.den <= 0 || rb.num <= 0 || rb.den <= 0)
        return 0;
    double fa = av_q2d(ra), fb = av_q2d(rb);
    if (fabs(fa - fb) <= 1e-4 * fmax(fa, fb))
        return 0;
    char ta[32], tb[32];
    fmt_fps(ta, sizeof(ta), ra);
    fmt_fps(tb, sizeof(tb), rb);
    snprintf(x->r->verdict, sizeof(x->r->verdict),
             "MISMATCH: frame rate differs: A %s fps, B %s fps (convert one to the other's rate, or %s)", ta,
             tb, VKCU_SETTING_IS("align", "index"));
    return 1;
}

static void print_header(run *x, side *s)
{
    FILE *o = x->p->report;
    if (!o)
        return;
    if (s->is_list)
        fprintf(o, "%c: %s: hash list, %s, %d frames\n", s->label, s->path, vkcu_hash_algo_name(s->list.algo), s->list.nb);
    else
        fprintf(o, "%c: %s\n", s->label, s->path);
}

static void summarize(run *x)
{
    vkcu_compare_result *r = x->r;
    const vkcu_compare_params *p = x->p;
    FILE *o = p->report;
    if (r->metrics && x->metric_frames) {
        int peak = r->worst.peak;
        if (!peak) {
            /* no frame differed: the peak of the format does not matter for +inf */
            peak = 255;
        }
        for (int i = 0; i < r->nb_comps; i++)
            r->psnr[i] = psnr_of(x->mse_sum[i] / x->metric_frames, peak);
        r->psnr_avg = psnr_of(x->mse_avg_sum / x->metric_frames, peak);
        for (int i = 0; i < r->nb_comps && x->ssim_frames; i++)
            r->ssim[i] = x->ssim_sum[i] / x->ssim_frames;
        r->ssim_all = x->ssim_frames ? x->ssim_all_sum / x->ssim_frames : NAN;
        if (o) {
            fprintf(o, "PSNR");
            for (int i = 0; i < r->nb_comps; i++)
                fprintf(o, " %c:%f", r->comp_names[i], r->psnr[i]);
            fprintf(o, " average:%f min:%f\n", r->psnr_avg, r->psnr_min);
            fprintf(o, "SSIM");
            for (int i = 0; i < r->nb_comps; i++)
                fprintf(o, " %c:%f", r->comp_names[i] - 32, r->ssim[i]);
            fprintf(o, " All:%f\n", r->ssim_all);
            if (r->vmaf)
                fprintf(o, "VMAF mean:%f min:%f (frame %" PRId64 "), libvmaf model %s\n", r->vmaf_mean, r->vmaf_min,
                        r->vmaf_min_index, VKCU_VMAF_MODEL);
            /* Each figure with its own frame: the largest difference and the
             * largest MSE (lowest PSNR) need not be in the same one. */
            fprintf(o, "max diff: %d", r->max_diff);
            if (r->max_diff_index >= 0)
                fprintf(o, " (frame %" PRId64 ")", r->max_diff_index);
            fputc('\n', o);
            if (r->worst_index >= 0)
                fprintf(o, "worst frame: %" PRId64 " (lowest PSNR: %.2f dB, max diff %d)\n", r->worst_index,
                        r->worst.psnr_avg, r->worst.max_diff);
        }
    }
    if (o) {
        fprintf(o, "frames: A %" PRId64 ", B %" PRId64 ", paired %" PRId64 ", differing %" PRId64, r->frames_a,
                r->frames_b, r->paired, r->differing);
        if (r->concealed)
            fprintf(o, "; concealed by the decoder %" PRId64 " (%" PRId64 " of them differ%s)", r->concealed,
                    r->concealed_differing, p->exclude_concealed ? ", left out of the verdict" : "");
        fputc('\n', o);
        if (r->first_diff >= 0)
            fprintf(o, "first differing frame: %" PRId64 " (pts %.3f s)\n", r->first_diff, r->first_diff_time);
    }
    char limits[128] = "";
    if (x->exact)
        snprintf(limits, sizeof(limits), "identical frames required");
    else {
        int n = 0;
        if (p->max_diff >= 0)
            n += snprintf(limits + n, sizeof(limits) - n, "%s %d", VKCU_SETTING("max_diff"), p->max_diff);
        if (!isnan(p->min_psnr))
            n += snprintf(limits + n, sizeof(limits) - n, "%s%s %g", n ? ", " : "", VKCU_SETTING("min_psnr"),
                          p->min_psnr);
        if (!isnan(p->min_vmaf))
            snprintf(limits + n, sizeof(limits) - n, "%s%s %g", n ? ", " : "", VKCU_SETTING("min_vmaf"), p->min_vmaf);
    }
    int count_bad = r->only_a || r->only_b;
    /* The mean, as VMAF is quoted; a NAN mean (nothing scored) fails too. */
    int vmaf_low = !isnan(p->min_vmaf) && !(r->vmaf_mean >= p->min_vmaf);
    r->pass = !count_bad && !r->ts_mismatch && !r->format_mismatch && !r->over_limit && !vmaf_low;
    char concealed[160] = "";
    if (r->concealed && p->exclude_concealed)
        snprintf(concealed, sizeof(concealed), "; %" PRId64 " concealed by the decoder left out (%" PRId64 " differ)",
                 r->concealed, r->concealed_differing);
    else if (r->concealed_differing)
        snprintf(concealed, sizeof(concealed), "; %" PRId64 " of them concealed by the decoder: %s leaves those out",
                 r->concealed_differing, VKCU_SETTING_IS("exclude_concealed", "1"));
    if (r->pass && !r->differing && r->concealed && p->exclude_concealed)
        snprintf(r->verdict, sizeof(r->verdict), "PASS: %" PRId64 " of %" PRId64 " frames identical%s",
                 r->paired - r->concealed, r->paired, concealed);
    else if (r->pass && !r->differing)
        snprintf(r->verdict, sizeof(r->verdict), "IDENTICAL: %" PRId64 " frames", r->paired);
    else if (r->pass)
        snprintf(r->verdict, sizeof(r->verdict), "PASS: %" PRId64 " of %" PRId64 " frames differ, within %s%s",
                 r->differing, r->paired, limits, p->exclude_concealed ? concealed : "");
    else if (count_bad)
        snprintf(r->verdict, sizeof(r->verdict),
                 "MISMATCH: frame count differs: A has %" PRId64 ", B has %" PRId64 " (%" PRId64 " only in A, %" PRId64
                 " only in B; first: %s)",
                 r->frames_a, r->frames_b, r->only_a, r->only_b, x->first_problem);
    else if (r->format_mismatch)
        snprintf(r->verdict, sizeof(r->verdict), "MISMATCH: %s", x->first_problem);
    else if (r->over_limit)
        snprintf(r->verdict, sizeof(r->verdict), "MISMATCH: %" PRId64 " of %" PRId64 " frames %s (%s%s); first: %s",
                 r->over_limit, r->paired, x->exact ? "differ" : "outside the limits", limits, concealed,
                 x->first_problem);
    else if (vmaf_low && isnan(r->vmaf_mean))
        snprintf(r->verdict, sizeof(r->verdict), "MISMATCH: no frame was scored for %s %g", VKCU_SETTING("min_vmaf"),
                 p->min_vmaf);
    else if (vmaf_low)
        snprintf(r->verdict, sizeof(r->verdict), "MISMATCH: VMAF mean %.2f is below %s %g (lowest: frame %" PRId64
                 ", %.2f)", r->vmaf_mean, VKCU_SETTING("min_vmaf"), p->min_vmaf, r->vmaf_min_index, r->vmaf_min);
    else
        snprintf(r->verdict, sizeof(r->verdict), "MISMATCH: %" PRId64 " timestamp(s) differ; first: %s", r->ts_mismatch,
                 x->first_problem);
    if (o)
        fprintf(o, "result: %s\n", r->verdict);
}

int vkcu_compare_run(const vkcu_compare_params *p, vkcu_compare_result *r)
{
    run x_ = { 0 }, *x = &x_;
    memset(r, 0, sizeof(*r));
    r->first_diff = r->worst_index = r->max_diff_index = -1;
    r->psnr_min = INFINITY;
    x->p = p;
    x->r = r;
    x->exact = p->max_diff < 0 && isnan(p->min_psnr) && isnan(p->min_vmaf);
    r->vmaf_mean = r->vmaf_min = NAN;
    r->vmaf_min_index = -1;
    const char *inputs[] = { p->a, p->b, p->job->pipeline_file, NULL };
    int ret = 0;
    int want_vmaf = p->vmaf || !isnan(p->min_vmaf);
    if (want_vmaf && !vkcu_vmaf_available()) {
        vkcu_vmaf_missing(VKCU_SETTING(p->vmaf ? "vmaf" : "min_vmaf"), r->error, sizeof(r->error));
        return VKCU_ERR_USAGE; /* before anything is read or written */
    }
    if (p->diff_image && ((ret = vkcu_outfile_not_terminal(p->diff_image, VKCU_SETTING("diff_image"), r->error,
                                                           sizeof(r->error))) < 0 ||
                          (ret = vkcu_outfile_check(p->diff_image, p->overwrite, inputs, r->error, sizeof(r->error))) < 0))
        return ret; /* before decoding anything */
    if (p->report_html &&
        (ret = vkcu_outfile_check(p->report_html, p->overwrite, inputs, r->error, sizeof(r->error))) < 0)
        return ret;
    const char *outs[] = { p->diff_image, p->csv, p->json, p->report_html };
    for (int i = 0; i < 4; i++)
        for (int k = i + 1; k < 4; k++)
            if (outs[i] && outs[k] && !strcmp(outs[i], outs[k])) {
                snprintf(r->error, sizeof(r->error), "%s: given to two outputs; name a file for each", outs[i]);
                return VKCU_ERR_USAGE;
            }
    if ((p->report_html || p->plot_out) && !(x->plot = vkcu_compare_plot_alloc()))
        return AVERROR(ENOMEM);
    ret = side_open_list(&x->a, p->a, 'A');
    if (ret >= 0)
        ret = side_open_list(&x->b, p->b, 'B');
    if (ret >= 0) {
        /* Media sides give the frames their partner holds: against a hash
         * list those `vkcu hash` lists with the list's timing (a list of
         * every decoded frame says so); between media files every decoded
         * frame, timed as a list of every decoded frame with that timing. */
        vkcu_job_params ja = *p->job, jb = p->job_b ? *p->job_b : *p->job;
        int decoded = p->timing == VKCU_TIMING_DECODED || (x->a.is_list && x->a.list.decoded) ||
                      (x->b.is_list && x->b.list.decoded);
        ja.timing = jb.timing = decoded ? VKCU_TIMING_DECODED : VKCU_TIMING_FFMPEG;
        ja.callback_timing = jb.callback_timing = decoded || x->a.is_list || x->b.is_list;
        ret = side_open_media(&x->a, &ja);
        if (ret >= 0)
            ret = side_open_media(&x->b, &jb);
    }
    if (ret < 0) {
        av_strlcpy(r->error, x->a.err[0] ? x->a.err : x->b.err, sizeof(r->error));
        goto done;
    }
    if (x->a.is_list && x->b.is_list && x->a.list.algo != x->b.list.algo) {
        snprintf(r->error, sizeof(r->error), "%s uses %s and %s uses %s: hash both with the same %s", p->a,
                 vkcu_hash_algo_name(x->a.list.algo), p->b, vkcu_hash_algo_name(x->b.list.algo),
                 VKCU_SETTING("hash_algo"));
        ret = VKCU_ERR_INPUT;
        goto done;
    }
    const vkcu_job_params *trim = p->job;
    if ((x->a.is_list || x->b.is_list) &&
        (trim->start_time >= 0 || trim->start_frame >= 0 || trim->duration >= 0 || trim->frame_count >= 0)) {
        /* A list cannot be trimmed here, and a trimmed side starts at zero: nothing would pair. */
        const char *start = VKCU_SETTING("start_time"), *length = VKCU_SETTING("duration");
        snprintf(r->error, sizeof(r->error), "%s is a hash list: %s/%s trim media inputs only (hash the "
                 "media with the same %s/%s instead)", x->a.is_list ? p->a : p->b, start, length, start, length);
        ret = VKCU_ERR_USAGE;
        goto done;
    }
    if ((ret = rows_open(x)) < 0)
        goto done;
    if (want_vmaf) {
        if (x->a.is_list || x->b.is_list) {
            snprintf(r->error, sizeof(r->error), "%s needs pictures, and %s is a hash list", VKCU_SETTING("vmaf"),
                     x->a.is_list ? p->a : p->b);
            ret = VKCU_ERR_USAGE;
            goto done;
        }
        if ((ret = vkcu_vmaf_open(&x->vmaf, r->error, sizeof(r->error))) < 0)
            goto done;
        if (p->report && !(x->held = open_memstream(&x->held_buf, &x->held_len))) {
            ret = AVERROR(ENOMEM);
            goto done;
        }
    }
    if (x->plot && (x->a.is_list || x->b.is_list))
        x->plot->why_empty = "a hash list holds no pictures";
    set_alignment(x);
    print_header(x, &x->a);
    print_header(x, &x->b);
    if (rate_differs(x)) {
        /* Pairing by time would call every other frame missing: name the cause instead. */
        ret = VKCU_ERR_MISMATCH;
        if (x->plot)
            x->plot->why_empty = "the frame rates differ, so no frames were paired";
        if (p->report)
            fprintf(p->report, "result: %s\n", r->verdict);
        goto done;
    }
    if ((ret = side_advance(&x->a, &x->al)) < 0 || (ret = side_advance(&x->b, &x->al)) < 0)
        goto read_error;
    while (x->a.have || x->b.have) {
        side *a = &x->a, *b = &x->b;
        if (a->have && b->have && llabs(a->key - b->key) <= x->al.window) {
            ret = do_pair(x);
            if (ret < 0)
                goto done;
            if ((ret = side_advance(a, &x->al)) < 0 || (ret = side_advance(b, &x->al)) < 0)
                goto read_error;
        } else if (!b->have || (a->have && a->key < b->key)) {
            unpaired(x, a);
            if ((ret = side_advance(a, &x->al)) < 0)
                goto read_error;
        } else {
            unpaired(x, b);
            if ((ret = side_advance(b, &x->al)) < 0)
                goto read_error;
        }
    }
    r->frames_a = x->a.index;
    r->frames_b = x->b.index;
    if (x->vmaf && (ret = vmaf_settle(x)) < 0)
        goto done;
    summarize(x);
    if ((ret = rows_finish(x)) < 0)
        goto done;
    if (p->diff_image) {
        const char *why = NULL;
        if (x->worst_a)
            ret = draw_difference(p, x->worst_a, x->worst_b, r->error, sizeof(r->error));
        else
            why = r->metrics ? "no frame differs" : "hash lists hold no pictures";
        if (why && p->report)
            fprintf(p->report, "diff image: not written (%s)\n", why);
        else if (ret >= 0 && p->report)
            fprintf(p->report, "diff image: %s (frame %" PRId64 ", differences amplified x%d)\n", p->diff_image,
                    r->worst_index, r->worst.max_diff ? (255 + r->worst.max_diff - 1) / r->worst.max_diff : 1);
        if (ret < 0)
            goto done;
    }
    ret = r->pass ? 0 : VKCU_ERR_MISMATCH;
    goto done;
read_error:
    av_strlcpy(r->error, x->a.err[0] ? x->a.err : x->b.err[0] ? x->b.err : "read error", sizeof(r->error));
done:
    release_held(x, 0);
    free(x->held_ends);
    free(x->pending);
    vkcu_vmaf_close(&x->vmaf);
    if ((ret == 0 || ret == VKCU_ERR_MISMATCH) && x->plot) {
        if (!x->plot->nb_rows && !x->plot->why_empty)
            x->plot->why_empty = r->paired ? "no pair could be measured (their picture formats differ)"
                                           : "no frames were paired";
        int wr = p->report_html ? write_report(x) : 0;
        if (wr < 0)
            ret = wr;
        else if (p->plot_out)
            FFSWAP(vkcu_compare_plot *, *p->plot_out, x->plot);
    }
    vkcu_compare_plot_free(&x->plot);
    sws_freeContext(x->thumb_sws);
    if (x->csv)
        fclose(x->csv);
    if (x->csv_tmp[0])
        vkcu_outfile_abort(x->csv_tmp);
    json_decref(x->rows);
    sws_freeContext(x->sws);
    av_frame_free(&x->worst_a);
    av_frame_free(&x->worst_b);
    side_close(&x->a);
    side_close(&x->b);
    return ret;
}
