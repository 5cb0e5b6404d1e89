/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hash functions a user can name, and their names: one vocabulary for
 * options, presets, manifests, hash-list headers and the GPU's digests.
 */
#ifndef VKCU_UTIL_HASH_ALGO_H
#define VKCU_UTIL_HASH_ALGO_H

/* ADLER32: FFmpeg's framecrc checksum (set by VKCU_HASH_FORMAT_FRAMECRC);
 * BLAKE3: its standard 32-byte digest, computed on the GPU for GPU frames */
enum vkcu_hash_algo { VKCU_HASH_MD5 = 0, VKCU_HASH_CRC32, VKCU_HASH_XXH64, VKCU_HASH_SHA256, VKCU_HASH_ADLER32,
                      VKCU_HASH_BLAKE3 };

/* "MD5", "BLAKE3", ...: as framemd5 headers and messages name them. */
const char *vkcu_hash_algo_name(enum vkcu_hash_algo a);
/* "md5", "blake3", ...: as options, presets and manifests name them. */
const char *vkcu_hash_algo_id(enum vkcu_hash_algo a);
/* "md5", "MD5", "crc32", "blake3", ... (any case): 0 or -1. */
int vkcu_hash_algo_parse(const char *name, enum vkcu_hash_algo *a);
/* For messages: what vkcu_hash_algo_parse accepts. */
#define VKCU_HASH_ALGOS "md5, sha256, crc32, xxh64 or blake3"
#define VKCU_HASH_ALGOS_UPPER "MD5, SHA256, CRC32, XXH64 or BLAKE3"

#endif
