/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu public API: version of the headers and of the library in use.
 *
 * The macros describe the headers a program was compiled against;
 * vkcu_version() and vkcu_version_api() describe the library it runs with
 * (a shared libvkcu may be newer). A program that needs a feature added in
 * MAJOR.MINOR checks both:
 *   VKCU_VERSION_INT(VKCU_VERSION_MAJOR, VKCU_VERSION_MINOR, 0) >= wanted
 *   vkcu_version_api() >= wanted
 * The major number changes when a call or struct changes incompatibly (the
 * shared library's soname, libvkcu.so.MAJOR, changes with it), the minor
 * number when one is added or grows as the rule below allows, the patch
 * number for fixes only.
 *
 * Room to grow: the rule of the public structs. Every struct of the public
 * headers ends in
 *     uint64_t reserved[N];
 * 32 words in what a call takes or returns (settings, jobs, parameters,
 * results, statistics, a preset), 16 in descriptions (the info structs,
 * what a callback receives, a reader's frame). Within one major version
 * no struct changes its size and no field its offset:
 *   - A minor version adds fields in place of the first words of
 *     reserved[]: k words become fields of k * 8 bytes (a pointer; or an
 *     int and an int named reserved_N beside it), reserved[] shrinks by k,
 *     and no field goes into padding (which nothing clears or checks). The
 *     new field's value 0 means what the library did before the field
 *     existed: a program built against older headers, or one that cleared
 *     the struct itself, passes 0 there.
 *   - A struct the caller fills (vkcu_settings, vkcu_job, vkcu_batch_settings,
 *     vkcu_compare_job, vkcu_verify_job, vkcu_reader_params) is filled with
 *     its vkcu_default_*() first, or cleared with memset(&s, 0, sizeof(s)):
 *     vkcu_default_*() writes the whole struct as the library knows it (its
 *     defaults in the fields, zero in reserved[]), and the struct is the
 *     same size in every minor version, so it writes no byte beyond the
 *     caller's. The call that takes the struct refuses a reserved word that
 *     is not zero with -EINVAL and one line naming the struct and the word:
 *     such a struct was not cleared, or comes from a program built against
 *     the headers of a newer minor version, which sets a field this library
 *     does not know of; the library says so rather than ignore the setting.
 *   - A struct the library fills (results, statistics, descriptions, a
 *     loaded preset) is written whole, reserved[] zero; a program built
 *     against older headers finds the newer fields in its reserved[] and
 *     never reads them. Structs handed to callbacks and frames are the
 *     library's, read-only, and grow the same way.
 *   - A struct that outgrows its room, a field removed, moved or retyped,
 *     an enum value renumbered, a call's arguments changed: a new major
 *     version.
 * Why not a leading size field (Win32's cbSize): vkcu_batch_settings holds
 * a vkcu_job and vkcu_compare_result a vkcu_frame_metrics, whose growth
 * would then move every field after them, and vkcu_default_*() would have
 * to be told the caller's size.
 */
#ifndef VKCU_VERSION_H
#define VKCU_VERSION_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VKCU_VERSION_MAJOR 1
#define VKCU_VERSION_MINOR 2
#define VKCU_VERSION_PATCH 0

/* Packs a version into one comparable integer. */
#define VKCU_VERSION_INT(major, minor, patch) (((unsigned)(major) << 16) | ((unsigned)(minor) << 8) | (unsigned)(patch))
#define VKCU_VERSION_INT_CURRENT VKCU_VERSION_INT(VKCU_VERSION_MAJOR, VKCU_VERSION_MINOR, VKCU_VERSION_PATCH)

/**
 * @return the library's version as "MAJOR.MINOR.PATCH", a static string.
 * @note Thread-safe.
 */
VKCU_API const char *vkcu_version(void);

/**
 * @return the library's API version, VKCU_VERSION_INT(major, minor, patch).
 * @note Thread-safe.
 */
VKCU_API unsigned vkcu_version_api(void);

/* The FFmpeg the library carries (built into it). */
typedef struct vkcu_ffmpeg_info {
    const char *version;       /* FFmpeg's version ("8.1.2", or a git describe); static */
    unsigned avcodec, avformat, avutil; /* its libraries' versions, as VKCU_VERSION_INT(major, minor, micro) */
    const char *configuration; /* the configure options it was built with, one line; static */
    int nb_decoders, nb_encoders, nb_demuxers, nb_muxers; /* its components, of every media type */
    uint64_t reserved[16];     /* zero (the rule above) */
} vkcu_ffmpeg_info;

/**
 * Describes the FFmpeg inside the library (a program's own FFmpeg, if it
 * has one, is another).
 *
 * @param info the caller's struct; every field is written.
 * @note Thread-safe.
 */
VKCU_API void vkcu_ffmpeg_info_get(vkcu_ffmpeg_info *info);

/**
 * The size of a public struct in this library, for bindings that lay the
 * structs out themselves (python/vkcu's ctypes layer compares its own with
 * these when it loads the library). By the rule above, a struct's size is
 * the same in every library of one major version.
 *
 * @param name a struct of the public headers by its typedef name:
 *             "vkcu_settings", "vkcu_job", "vkcu_job_result" ... (every
 *             typedef struct of include/vkcu/ but the opaque vkcu_context
 *             and vkcu_reader).
 * @return its size in bytes, or 0 for another name (and for NULL).
 * @note Thread-safe.
 */
VKCU_API size_t vkcu_struct_size(const char *name);

#ifdef __cplusplus
}
#endif
#endif
