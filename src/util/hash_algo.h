/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hash functions a user can name, and their names: one vocabulary for
 * options, presets, manifests, hash-list headers and the GPU's digests.
 */
#ifndef VKCU_UTIL_HASH_ALGO_H
#define VKCU_UTIL_HASH_ALGO_H

/* enum vkcu_hash_algo, vkcu_hash_algo_name and vkcu_hash_algo_parse are
 * public (vkcu/job.h, vkcu/regress.h). */
#include <vkcu/regress.h>

/* "md5", "blake3", ...: as options, presets and manifests name them. */
const char *vkcu_hash_algo_id(enum vkcu_hash_algo a);
/* For messages: what vkcu_hash_algo_parse accepts. */
#define VKCU_HASH_ALGOS "md5, sha256, crc32, xxh64 or blake3"
#define VKCU_HASH_ALGOS_UPPER "MD5, SHA256, CRC32, XXH64 or BLAKE3"

#endif
