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
 * The major number changes when a call or struct changes incompatibly, the
 * minor number when one is added, the patch number for fixes only.
 */
#ifndef VKCU_VERSION_H
#define VKCU_VERSION_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VKCU_VERSION_MAJOR 0
#define VKCU_VERSION_MINOR 1
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
} vkcu_ffmpeg_info;

/**
 * Describes the FFmpeg inside the library (a program's own FFmpeg, if it
 * has one, is another).
 *
 * @param info the caller's struct; every field is written.
 * @note Thread-safe.
 */
VKCU_API void vkcu_ffmpeg_info_get(vkcu_ffmpeg_info *info);

#ifdef __cplusplus
}
#endif
#endif
