/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: the hash-list parser that `vkcu compare` and `vkcu verify`
 * read framemd5 and JSON-lines files with (vkcu_hash_list_parse in
 * src/regress/compare.c). The input is the file's bytes.
 */
#include "regress/compare.h"
#include "fuzz.h"

#define NAME "fuzz/input.framemd5"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    vkcu_hash_list l;
    char err[1024] = "";
    int ret = vkcu_hash_list_parse((const char *)data, size, NAME, &l, err, sizeof(err));
    if (ret < 0) {
        FUZZ_CHECK(ret == VKCU_ERR_INPUT, "parse returned %d", ret);
        fuzz_check_message(err, NAME ":");
        return 0;
    }
    FUZZ_CHECK(l.nb >= 0 && l.nb <= l.cap, "%d entries, room for %d", l.nb, l.cap);
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
