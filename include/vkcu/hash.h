/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu public API: the hash algorithms and hash list formats of per-frame
 * hashes (a job's hash sink, job.h; hash lists compared and verified,
 * regress.h), and their names.
 *
 * The names a user types (options, presets, manifests) and the names
 * framemd5 headers write come from one table, VKCU_HASH_NAMED below, which
 * the library's parsers and messages splice too: a program that offers the
 * same choices can build its lists from it at compile time and say exactly
 * what vkcu accepts.
 */
#ifndef VKCU_HASH_H
#define VKCU_HASH_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Hash algorithms. ADLER32 is FFmpeg's framecrc checksum; BLAKE3 is its
 * standard 32-byte digest, computed on the GPU for GPU frames. */
enum vkcu_hash_algo {
    VKCU_HASH_MD5 = 0,
    VKCU_HASH_CRC32,
    VKCU_HASH_XXH64,
    VKCU_HASH_SHA256,
    VKCU_HASH_ADLER32,
    VKCU_HASH_BLAKE3,
};

/* Hash list formats. FRAMEMD5: ffmpeg -f framemd5 lines (any algorithm);
 * JSON: one object per frame; FRAMECRC: FFmpeg FATE's framecrc lines
 * (always adler32); WHOLE: one hash over all frames' bytes in order, as
 * ffmpeg -f md5 prints it. */
enum vkcu_hash_format {
    VKCU_HASH_FORMAT_FRAMEMD5 = 0,
    VKCU_HASH_FORMAT_JSON,
    VKCU_HASH_FORMAT_FRAMECRC,
    VKCU_HASH_FORMAT_WHOLE,
};

/*
 * The hash algorithms a user can name, in the order help and messages list
 * them: one (enum, id, name) row each, the id as options, presets and
 * manifests spell it ("md5"), the name as framemd5 headers write it
 * ("MD5"). FIRST, MID and LAST wrap the first, the middle and the last row,
 * so that a list needs no leading separator. ADLER32 is not named: it comes
 * with VKCU_HASH_FORMAT_FRAMECRC.
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
/* For messages: what vkcu_hash_algo_parse accepts ("md5, sha256, ... or blake3"),
 * and the names hash list headers carry ("MD5, SHA256, ... or BLAKE3"). */
#define VKCU_HASH_ALGOS VKCU_HASH_NAMED(VKCU_NAMES_ID_, VKCU_NAMES_COMMA_ID_, VKCU_NAMES_OR_ID_)
#define VKCU_HASH_ALGOS_UPPER VKCU_HASH_NAMED(VKCU_NAMES_NAME_, VKCU_NAMES_COMMA_NAME_, VKCU_NAMES_OR_NAME_)
/* For help: "md5, sha256, crc32, xxh64, blake3" and "md5|sha256|crc32|xxh64|blake3". */
#define VKCU_HASH_ALGOS_LIST VKCU_HASH_NAMED(VKCU_NAMES_ID_, VKCU_NAMES_COMMA_ID_, VKCU_NAMES_COMMA_ID_)
#define VKCU_HASH_ALGOS_PIPE VKCU_HASH_NAMED(VKCU_NAMES_ID_, VKCU_NAMES_PIPE_ID_, VKCU_NAMES_PIPE_ID_)

/*
 * The per-frame hash list formats a user can name (vkcu hash --format, the
 * preset key hash-format), with the extension a preset's output takes:
 * (enum, name, extension) rows, in the order help and messages list them.
 * VKCU_HASH_FORMAT_WHOLE, one line, is not among them.
 */
#define VKCU_HASH_FORMATS_NAMED(FIRST, MID, LAST)                                                          \
    FIRST(VKCU_HASH_FORMAT_FRAMEMD5, "framemd5", ".framemd5")                                            \
    MID(VKCU_HASH_FORMAT_FRAMECRC, "framecrc", ".framecrc") LAST(VKCU_HASH_FORMAT_JSON, "json", ".jsonl")
/* "framemd5, framecrc or json" and "framemd5|framecrc|json". */
#define VKCU_HASH_FORMATS VKCU_HASH_FORMATS_NAMED(VKCU_NAMES_ID_, VKCU_NAMES_COMMA_ID_, VKCU_NAMES_OR_ID_)
#define VKCU_HASH_FORMATS_PIPE VKCU_HASH_FORMATS_NAMED(VKCU_NAMES_ID_, VKCU_NAMES_PIPE_ID_, VKCU_NAMES_PIPE_ID_)

/**
 * @return the algorithm's name as framemd5 headers write it ("MD5",
 *         "BLAKE3" ...), a static string; "MD5" (FFmpeg's default) for a
 *         value outside the enum.
 * @note Thread-safe.
 */
VKCU_API const char *vkcu_hash_algo_name(enum vkcu_hash_algo algo);

/**
 * @return the algorithm's id as options, presets and manifests spell it
 *         ("md5", "blake3" ...), a static string; "md5" for ADLER32 (which
 *         has no id) and for a value outside the enum.
 * @note Thread-safe.
 */
VKCU_API const char *vkcu_hash_algo_id(enum vkcu_hash_algo algo);

/**
 * Reads an algorithm name.
 *
 * @param name "md5", "sha256", "crc32", "xxh64" or "blake3", in any case
 *             (ADLER32 comes with VKCU_HASH_FORMAT_FRAMECRC, not by name).
 * @param algo receives the algorithm when the name is known.
 * @return 0, or a negative value (nothing written) for an unknown name.
 * @note Thread-safe.
 */
VKCU_API int vkcu_hash_algo_parse(const char *name, enum vkcu_hash_algo *algo);

/**
 * @return the hash list format's name as VKCU_HASH_FORMATS_NAMED spells it
 *         ("framemd5", "json", "framecrc"), a static string; "framemd5" for
 *         VKCU_HASH_FORMAT_WHOLE (which has no name: it is asked for as
 *         such) and for a value outside the enum.
 * @note Thread-safe.
 */
VKCU_API const char *vkcu_hash_format_name(enum vkcu_hash_format format);

#ifdef __cplusplus
}
#endif
#endif
