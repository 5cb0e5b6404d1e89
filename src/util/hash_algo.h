/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hash functions a user can name, and their names: one vocabulary for
 * options, presets, manifests, hash-list headers and the GPU's digests;
 * here what only the library needs of it.
 */
#ifndef VKCU_UTIL_HASH_ALGO_H
#define VKCU_UTIL_HASH_ALGO_H

/* The enums, the name tables (VKCU_HASH_NAMED, VKCU_HASH_FORMATS_NAMED) and
 * the lists spliced from them, vkcu_hash_algo_name, _id and _parse and
 * vkcu_hash_format_name are public (vkcu/hash.h). */
#include <vkcu/hash.h>

/* Comment lines of vkcu's framemd5 and framecrc lists (readers of those
 * formats skip lines that start with '#'): "#timing: decoded" in the
 * header of a list of every decoded frame (VKCU_TIMING_DECODED), and
 * "#concealed: ..." before the line of a frame decoded from damaged data. */
#define VKCU_HASH_TIMING_MARK "#timing:"
#define VKCU_HASH_CONCEALED_MARK "#concealed:"

/* The hex digits of one digest (MD5: 32, as lists write it); 0 unknown. */
int vkcu_hash_algo_hex_digits(enum vkcu_hash_algo a);
/* "framemd5", ...; "framemd5" for a format without a name (--whole). */
const char *vkcu_hash_format_id(enum vkcu_hash_format f);
/* ".framemd5", ".jsonl", ...: a hash-list file's extension. */
const char *vkcu_hash_format_extension(enum vkcu_hash_format f);
/* A name from the table (exact case): 0 or -1. */
int vkcu_hash_format_parse(const char *name, enum vkcu_hash_format *f);

#endif
