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
/*
 * The one table of the hash functions a user can name, in the order help and
 * messages list them: (enum, id as options/presets/manifests spell it, name
 * as framemd5 headers spell it). hash_algo.c builds its lookup table from it
 * and the lists below are spliced from it at compile time, so parsers, help
 * and messages cannot drift apart. FIRST, MID and LAST wrap the first, the
 * middle and the last entry (for separators without a leading one).
 */
#define VKCU_HASH_NAMED(FIRST, MID, LAST)                                                                  \
    FIRST(VKCU_HASH_MD5, "md5", "MD5") MID(VKCU_HASH_SHA256, "sha256", "SHA256")                          \
    MID(VKCU_HASH_CRC32, "crc32", "CRC32") MID(VKCU_HASH_XXH64, "xxh64", "XXH64")                          \
    LAST(VKCU_HASH_BLAKE3, "blake3", "BLAKE3")
/* Wrappers for such lists (any X-list of (enum, id, name) rows). */
#define VKCU_NAMES_ID_(e, id, name) id
#define VKCU_NAMES_NAME_(e, id, name) name
#define VKCU_NAMES_COMMA_ID_(e, id, name) ", " id
#define VKCU_NAMES_COMMA_NAME_(e, id, name) ", " name
#define VKCU_NAMES_OR_ID_(e, id, name) " or " id
#define VKCU_NAMES_OR_NAME_(e, id, name) " or " name
#define VKCU_NAMES_PIPE_ID_(e, id, name) "|" id
/* For messages: what vkcu_hash_algo_parse accepts ("md5, sha256, ... or blake3"). */
#define VKCU_HASH_ALGOS VKCU_HASH_NAMED(VKCU_NAMES_ID_, VKCU_NAMES_COMMA_ID_, VKCU_NAMES_OR_ID_)
#define VKCU_HASH_ALGOS_UPPER VKCU_HASH_NAMED(VKCU_NAMES_NAME_, VKCU_NAMES_COMMA_NAME_, VKCU_NAMES_OR_NAME_)
/* For help: "md5, sha256, crc32, xxh64, blake3" and "md5|sha256|crc32|xxh64|blake3". */
#define VKCU_HASH_ALGOS_LIST VKCU_HASH_NAMED(VKCU_NAMES_ID_, VKCU_NAMES_COMMA_ID_, VKCU_NAMES_COMMA_ID_)
#define VKCU_HASH_ALGOS_PIPE VKCU_HASH_NAMED(VKCU_NAMES_ID_, VKCU_NAMES_PIPE_ID_, VKCU_NAMES_PIPE_ID_)

/*
 * The one table of the hash-list formats (hash_format.c): the per-frame
 * formats a user can name (hash --format, the preset key hash-format), with
 * the extension a preset's output takes: (enum, name, extension), in the
 * order help and messages list them. (--whole's one line is an option of
 * its own, not a named format.)
 */
#define VKCU_HASH_FORMATS_NAMED(FIRST, MID, LAST)                                                          \
    FIRST(VKCU_HASH_FORMAT_FRAMEMD5, "framemd5", ".framemd5")                                            \
    MID(VKCU_HASH_FORMAT_FRAMECRC, "framecrc", ".framecrc") LAST(VKCU_HASH_FORMAT_JSON, "json", ".jsonl")
/* "framemd5, framecrc or json" and "framemd5|framecrc|json". */
#define VKCU_HASH_FORMATS VKCU_HASH_FORMATS_NAMED(VKCU_NAMES_ID_, VKCU_NAMES_COMMA_ID_, VKCU_NAMES_OR_ID_)
#define VKCU_HASH_FORMATS_PIPE VKCU_HASH_FORMATS_NAMED(VKCU_NAMES_ID_, VKCU_NAMES_PIPE_ID_, VKCU_NAMES_PIPE_ID_)
/* Comment lines of vkcu's framemd5 and framecrc lists (readers of those
 * formats skip lines that start with '#'): "#timing: decoded" in the
 * header of a list of every decoded frame (VKCU_TIMING_DECODED), and
 * "#concealed: ..." before the line of a frame decoded from damaged data. */
#define VKCU_HASH_TIMING_MARK "#timing:"
#define VKCU_HASH_CONCEALED_MARK "#concealed:"
/* "framemd5", ...; "framemd5" for a format without a name (--whole). */
const char *vkcu_hash_format_id(enum vkcu_hash_format f);
/* ".framemd5", ".jsonl", ...: a hash-list file's extension. */
const char *vkcu_hash_format_extension(enum vkcu_hash_format f);
/* A name from the table (exact case): 0 or -1. */
int vkcu_hash_format_parse(const char *name, enum vkcu_hash_format *f);

#endif
