/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: the hash-list parser that `vkcu compare` and `vkcu verify`
 * read framemd5 and JSON-lines files with (vkcu_hash_list_parse in
 * src/regress/hash_list.c). The input is the file's bytes.
 */
#include <errno.h>
#include <limits.h>

#include "regress/compare.h"
#include "fuzz.h"

#define NAME "fuzz/input.framemd5"

/* 1 when a line of the input is "stream, dts, pts, duration, size, ..."
 * with integers only in those five fields, one of them outside its type
 * (stream and size 32-bit, the rest 64-bit): the parser must refuse it
 * rather than clip it (issue 22.14). */
static int has_out_of_range_field(const uint8_t *data, size_t size)
{
    static const long long lo[5] = { INT_MIN, LLONG_MIN, LLONG_MIN, LLONG_MIN, INT_MIN };
    static const long long hi[5] = { INT_MAX, LLONG_MAX, LLONG_MAX, LLONG_MAX, INT_MAX };
    for (size_t pos = 0; pos < size;) {
        size_t end = pos;
        while (end < size && data[end] != '\n')
            end++;
        char line[512];
        size_t n = end - pos < sizeof(line) - 1 ? end - pos : sizeof(line) - 1;
        memcpy(line, data + pos, n);
        line[n] = 0;
        pos = end + 1;
        if (memchr(line, 0, n))
            continue;
        const char *s = line;
        int out = 0, k;
        for (k = 0; k < 5; k++) {
            while (*s == ' ' || *s == '\t')
                s++;
            char *e;
            errno = 0;
            long long v = strtoll(s, &e, 10);
            if (e == s || !(*s == '-' || *s == '+' || (*s >= '0' && *s <= '9')))
                break;
            out |= errno == ERANGE || v < lo[k] || v > hi[k];
            s = e;
            while (*s == ' ' || *s == '\t')
                s++;
            if (*s++ != ',')
                break;
        }
        if (k == 5 && out)
            return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    vkcu_hash_list l;
    char err[1024] = "";
    int ret = vkcu_hash_list_parse((const char *)data, size, NAME, &l, err, sizeof(err));
    /* A NUL byte would hide the rest of its line: never taken silently. */
    FUZZ_CHECK(ret < 0 || !memchr(data, 0, size), "a NUL byte was accepted");
    FUZZ_CHECK(ret < 0 || !has_out_of_range_field(data, size), "a number out of range was accepted");
    if (ret < 0) {
        FUZZ_CHECK(ret == VKCU_ERR_INPUT, "parse returned %d", ret);
        fuzz_check_message(err, NAME ":");
        return 0;
    }
    FUZZ_CHECK(l.nb >= 0 && l.nb <= l.room, "%d entries, room for %lld", l.nb, (long long)l.room);
    FUZZ_CHECK(l.tb.num >= 0 && l.tb.den > 0, "time base %d/%d", l.tb.num, l.tb.den);
    for (int i = 0; i < l.nb; i++) {
        const char *h = l.entries[i].hash;
        size_t n = strnlen(h, sizeof(l.entries[i].hash));
        FUZZ_CHECK(n >= 8 && n < sizeof(l.entries[i].hash), "entry %d: hash of %zu characters", i, n);
        FUZZ_CHECK(strspn(h, "0123456789abcdef") == n, "entry %d: hash '%s' is not lower-case hex", i, h);
    }
    vkcu_hash_list_free(&l);
    return 0;
}
