/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Hash function names (hash_algo.h). */
#include <stddef.h>
#include <strings.h>

#include "hash_algo.h"

/* By enum, from the one list (VKCU_HASH_NAMED in vkcu/hash.h); adler32 is
 * framecrc's, never named. */
#define ROW(e, id, name) [e] = { id, name },
static const struct {
    const char *id, *name;
} hash_algos[] = {
    VKCU_HASH_NAMED(ROW, ROW, ROW)
    [VKCU_HASH_ADLER32] = { NULL, "ADLER32" },
};
#undef ROW

const char *vkcu_hash_algo_name(enum vkcu_hash_algo a)
{
    return (unsigned)a < sizeof(hash_algos) / sizeof(hash_algos[0]) ? hash_algos[a].name : "MD5";
}

const char *vkcu_hash_algo_id(enum vkcu_hash_algo a)
{
    return (unsigned)a < sizeof(hash_algos) / sizeof(hash_algos[0]) && hash_algos[a].id ? hash_algos[a].id : "md5";
}

int vkcu_hash_algo_parse(const char *name, enum vkcu_hash_algo *a)
{
    for (size_t i = 0; i < sizeof(hash_algos) / sizeof(hash_algos[0]); i++)
        if (hash_algos[i].id && !strcasecmp(name, hash_algos[i].id)) {
            *a = (enum vkcu_hash_algo)i;
            return 0;
        }
    return -1;
}

int vkcu_hash_algo_hex_digits(enum vkcu_hash_algo a)
{
    static const int digits[] = {
        [VKCU_HASH_MD5] = 32, [VKCU_HASH_CRC32] = 8,   [VKCU_HASH_XXH64] = 16,
        [VKCU_HASH_SHA256] = 64, [VKCU_HASH_ADLER32] = 8, [VKCU_HASH_BLAKE3] = 64,
    };
    return (unsigned)a < sizeof(digits) / sizeof(digits[0]) ? digits[a] : 0;
}
