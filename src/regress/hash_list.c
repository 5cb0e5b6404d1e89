/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Hash lists: the framemd5 or JSON-lines text `vkcu hash` (or
 * `ffmpeg -f framemd5`) writes, parsed back into entries; from a file, from
 * a pipe read once, or sniffed to tell a list from a media file.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compare_priv.h"
#include "util/array.h"
#include "util/file.h"
#include "util/json.h"

void vkcu_hash_list_free(vkcu_hash_list *l)
{
    free(l->entries);
    memset(l, 0, sizeof(*l));
}

static int list_push(vkcu_hash_list *l, const vkcu_hash_entry *e)
{
    if (VKCU_ARRAY_GROW(l->entries, l->nb, l->room, 64) < 0)
        return AVERROR(ENOMEM);
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
    if (errno || end == s || den <= 0 || den > INT_MAX || end[strspn(end, " \t")])
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

/* Whether some hash algorithm's digests have this many hex digits. */
static int some_digest_size(int digits)
{
    for (int a = 0; a <= VKCU_HASH_BLAKE3; a++)
        if (vkcu_hash_algo_hex_digits((enum vkcu_hash_algo)a) == digits)
            return 1;
    return 0;
}

/* A time base that does not read: named with its line, rather than taken
 * for none ("has no time base") further on. what: the line or the field. */
static int bad_time_base(const char *what, const char *value, const char *name, int lineno, char *err, size_t errlen)
{
    char shown[48];
    snprintf(shown, sizeof(shown), "%.40s", value);
    for (char *c = shown; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
            *c = '?'; /* one readable line on the terminal */
    snprintf(err, errlen, "%s:%d: %s: '%s' is not a time base (two positive whole numbers NUM/DEN, as '1/25')",
             name, lineno, what, shown);
    return VKCU_ERR_INPUT;
}

/* *known: the text has shown itself a hash list (a header, or a frame line).
 * Until then an error quotes nothing of it: it may be any file at all.
 * Long: one case per kind of line of the format (docs/hash.md), in its
 * order, each with its refusal. */
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
            const char *v = line + 6 + strspn(line + 6, " ");
            if (parse_rational(v, &l->tb) < 0)
                return bad_time_base("the '#tb 0:' line", v, name, lineno, err, errlen);
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
            if (tb && parse_rational(tb, &l->tb) < 0) {
                int ret = bad_time_base("the header's \"tb\"", tb, name, lineno, err, errlen);
                json_decref(o);
                return ret;
            }
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
            int64_t w, h;
            const char *pf = json_string_value(json_object_get(o, "pix_fmt"));
            if (json_int_member(o, "width", &w) == 0 && json_int_member(o, "height", &h) == 0 && pf && w > 0 &&
                h > 0 && w <= INT_MAX && h <= INT_MAX && strlen(pf) < sizeof(e.pix_fmt)) {
                e.width = (int)w;
                e.height = (int)h;
                snprintf(e.pix_fmt, sizeof(e.pix_fmt), "%s", pf);
            }
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
    /* A digit lost or added (an edit, a copy cut short) would be one more
     * differing frame far from its cause: the line is refused instead. A
     * list that names no algorithm has one digest size throughout, some
     * algorithm's. */
    int digits = (int)strlen(e.hash), want = vkcu_hash_algo_hex_digits(l->algo);
    if (!l->algo_known)
        want = l->nb ? (int)strlen(l->entries[0].hash) : some_digest_size(digits) ? digits : 0;
    if (digits != want) {
        if (l->algo_known)
            snprintf(err, errlen, "%s:%d: %s hashes have %d hex digits, this one %d: %.80s", name, lineno,
                     vkcu_hash_algo_name(l->algo), want, digits, e.hash);
        else if (want)
            snprintf(err, errlen, "%s:%d: a hash of %d hex digits where the list's first has %d: %.80s", name,
                     lineno, digits, want, e.hash);
        else
            snprintf(err, errlen, "%s:%d: a hash of %d hex digits, the size of no hash algorithm (MD5 has 32, "
                     "SHA256 64): %.80s", name, lineno, digits, e.hash);
        return VKCU_ERR_INPUT;
    }
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

/* The UTF-8 byte order mark some Windows editors put first: no part of the
 * text (its lines keep their numbers). */
#define UTF8_BOM "\xEF\xBB\xBF"

static size_t bom_length(const char *text, size_t len)
{
    return len >= 3 && !memcmp(text, UTF8_BOM, 3) ? 3 : 0;
}

int vkcu_hash_list_parse(const char *text, size_t len, const char *name, vkcu_hash_list *l, char *err, size_t errlen)
{
    size_t bom = bom_length(text, len);
    text += bom;
    len -= bom;
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
    size_t bom = bom_length(head, n);
    head += bom;
    n -= bom;
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
int vkcu_hash_list_from_stream(const char *path, vkcu_hash_list *l, int *ret, char *err, size_t errlen)
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
