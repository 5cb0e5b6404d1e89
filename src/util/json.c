/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * JSON lines through jansson (src/util/json.h).
 *
 * jansson refuses strings that are not well-formed UTF-8, and a lone
 * surrogate cannot be put into one, so a file name with stray bytes goes
 * into the object as a marker string carrying the bytes in hex; after
 * jansson has written the line, each marker is replaced by the name's
 * escaped form, whose well-formed runs jansson escapes too. A name that
 * happens to start like a marker takes the same way, so no real name is
 * ever mistaken for one.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

/* \x01 is escaped by jansson as \u0001: the marker is recognised in the
 * output by its escaped form. */
#define MARK "\x01vkcu-bytes\x01"
#define MARK_OUT "\"\\u0001vkcu-bytes\\u0001"

int vkcu_utf8_length(const unsigned char *u)
{
    if (u[0] < 0x80)
        return 1;
    int len = u[0] >= 0xc2 && u[0] <= 0xdf ? 2 : u[0] >= 0xe0 && u[0] <= 0xef ? 3 : u[0] >= 0xf0 && u[0] <= 0xf4 ? 4 : 0;
    for (int i = 1; i < len; i++)
        if ((u[i] & 0xc0) != 0x80)
            return 0;
    if ((u[0] == 0xe0 && u[1] < 0xa0) || (u[0] == 0xed && u[1] >= 0xa0) || (u[0] == 0xf0 && u[1] < 0x90) ||
        (u[0] == 0xf4 && u[1] >= 0x90))
        return 0;
    return len;
}

static int well_formed(const char *s)
{
    for (const unsigned char *u = (const unsigned char *)s; *u;) {
        int len = vkcu_utf8_length(u);
        if (!len)
            return 0;
        u += len;
    }
    return 1;
}

int vkcu_json_set_bytes(json_t *obj, const char *key, const char *s)
{
    if (!s)
        return json_object_set_new(obj, key, json_null());
    if (well_formed(s) && strncmp(s, MARK, strlen(MARK)))
        return json_object_set_new(obj, key, json_string(s));
    size_t n = strlen(s), ml = strlen(MARK);
    char *m = malloc(ml + 2 * n + 1);
    if (!m)
        return -1;
    memcpy(m, MARK, ml);
    for (size_t i = 0; i < n; i++)
        snprintf(m + ml + 2 * i, 3, "%02x", (unsigned char)s[i]);
    int ret = json_object_set_new(obj, key, json_string(m));
    free(m);
    return ret;
}

int vkcu_json_set_fixed(json_t *obj, const char *key, double v, int decimals)
{
    double scale = pow(10, decimals);
    if (!isfinite(v))
        return json_object_set_new(obj, key, json_null());
    return json_object_set_new(obj, key, json_real(round(v * scale) / scale));
}

typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

static int put(buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        char *p = realloc(b->p, cap);
        if (!p)
            return -1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
    return 0;
}

/* The escaped form of `n` bytes (without quotes): well-formed runs as
 * jansson writes them, stray bytes as \udcXX. */
static int put_escaped(buf *b, const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n) {
            unsigned char tmp[5] = {0};
            size_t k = n - j < 4 ? n - j : 4;
            memcpy(tmp, s + j, k);
            int len = vkcu_utf8_length(tmp);
            /* a NUL cannot come from a C string's bytes; stop on it anyway */
            if (!len || !tmp[0])
                break;
            j += (size_t)len;
        }
        if (j > i) {
            json_t *str = json_stringn((const char *)s + i, j - i);
            char *t = str ? json_dumps(str, JSON_ENCODE_ANY) : NULL;
            json_decref(str);
            if (!t)
                return -1;
            int ret = put(b, t + 1, strlen(t) - 2);
            free(t);
            if (ret < 0)
                return -1;
        }
        if (j < n) {
            char esc[8];
            snprintf(esc, sizeof(esc), "\\udc%02x", s[j]);
            if (put(b, esc, 6) < 0)
                return -1;
            j++;
        }
        i = j;
    }
    return 0;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

char *vkcu_json_line(const json_t *obj, int compact)
{
    return vkcu_json_text(obj, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15) | (compact ? JSON_COMPACT : JSON_INDENT(0)));
}

char *vkcu_json_text(const json_t *obj, size_t flags)
{
    char *raw = json_dumps(obj, flags);
    if (!raw || !strstr(raw, MARK_OUT))
        return raw;
    buf b = {0};
    const char *p = raw;
    for (const char *q; (q = strstr(p, MARK_OUT));) {
        /* only a whole value: a marker inside a longer string, or after an
         * escaped quote, is a real name's text */
        const char *h = q + strlen(MARK_OUT), *e = h;
        while (hexval(e[0]) >= 0 && hexval(e[1]) >= 0)
            e += 2;
        if (q == raw || q[-1] == '\\' || *e != '"') {
            if (put(&b, p, (size_t)(h - p)) < 0)
                goto fail;
            p = h;
            continue;
        }
        size_t n = (size_t)(e - h) / 2;
        unsigned char *bytes = malloc(n + 1);
        if (!bytes)
            goto fail;
        for (size_t i = 0; i < n; i++)
            bytes[i] = (unsigned char)(hexval(h[2 * i]) << 4 | hexval(h[2 * i + 1]));
        int ret = put(&b, p, (size_t)(q - p)) < 0 || put(&b, "\"", 1) < 0 || put_escaped(&b, bytes, n) < 0 ||
                  put(&b, "\"", 1) < 0;
        free(bytes);
        if (ret)
            goto fail;
        p = e + 1;
    }
    if (put(&b, p, strlen(p)) < 0)
        goto fail;
    free(raw);
    return b.p;
fail:
    free(raw);
    free(b.p);
    return NULL;
}

int vkcu_json_write_line(FILE *f, json_t *obj, int compact)
{
    char *line = obj ? vkcu_json_line(obj, compact) : NULL;
    json_decref(obj);
    if (!line)
        return -1;
    int ret = fputs(line, f) < 0 || fputc('\n', f) < 0 ? -1 : 0;
    free(line);
    return ret;
}
