/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Hash function names (hash_algo.h). */
#include <stddef.h>
#include <strings.h>

#include "hash_algo.h"

/* The one list of hash functions a user can name (options, presets,
 * manifests, hash-list headers); adler32 is framecrc's, never named. */
static const struct {
    const char *id, *name;
} hash_algos[] = {
    [VKCU_HASH_MD5] = { "md5", "MD5" },         [VKCU_HASH_CRC32] = { "crc32", "CRC32" },
    [VKCU_HASH_XXH64] = { "xxh64", "XXH64" },   [VKCU_HASH_SHA256] = { "sha256", "SHA256" },
    [VKCU_HASH_ADLER32] = { NULL, "ADLER32" }, [VKCU_HASH_BLAKE3] = { "blake3", "BLAKE3" },
};

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
