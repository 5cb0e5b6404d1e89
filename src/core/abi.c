/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The public structs' room to grow (include/vkcu/version.h states the
 * rule): their sizes, which vkcu_struct_size reports and which stay fixed
 * for a major version, and the check that a struct a caller filled has
 * nothing in its reserved words; the library's version, and the one way a
 * call refuses what it was given (vkcu_invalid).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <libavutil/error.h>

#include "context.h"
#include "vkcu.h"

/* The sizes of major version 1 on LP64 (x86-64, aarch64). A field added by
 * the rule takes words from reserved[] and leaves these as they are; a
 * change here is a new major version (VKCU_VERSION_MAJOR) and soname. */
#define VKCU_PUBLIC_STRUCTS(X)                                                                             \
    X(vkcu_ffmpeg_info, 176) X(vkcu_stream_info, 176) X(vkcu_picture, 288) X(vkcu_progress_info, 184)      \
    X(vkcu_settings, 360) X(vkcu_job, 512) X(vkcu_job_result, 1664) X(vkcu_batch_file, 208)                \
    X(vkcu_batch_progress, 192) X(vkcu_batch_settings, 1168) X(vkcu_batch_result, 816)                     \
    X(vkcu_frame_metrics, 296) X(vkcu_compare_job, 448) X(vkcu_compare_result, 1848)                       \
    X(vkcu_verify_job, 368) X(vkcu_preset, 10064) X(vkcu_probe_info, 1304) X(vkcu_encoder_info, 680)       \
    X(vkcu_container_info, 160) X(vkcu_decoder_info, 408) X(vkcu_reader_params, 336)                       \
    X(vkcu_reader_info, 184) X(vkcu_frame, 320) X(vkcu_reader_stats, 360)

#if UINTPTR_MAX == UINT64_MAX
#define VKCU_SIZE_FIXED(t, size) _Static_assert(sizeof(t) == (size), #t " changed size: the ABI rule of "          \
                                                "include/vkcu/version.h takes a new field's words from reserved[]");
VKCU_PUBLIC_STRUCTS(VKCU_SIZE_FIXED)
#undef VKCU_SIZE_FIXED
#endif

const char *vkcu_version(void)
{
#define VKCU_STR_(x) #x
#define VKCU_STR(x) VKCU_STR_(x)
    return VKCU_STR(VKCU_VERSION_MAJOR) "." VKCU_STR(VKCU_VERSION_MINOR) "." VKCU_STR(VKCU_VERSION_PATCH);
}

unsigned vkcu_version_api(void)
{
    return VKCU_VERSION_INT_CURRENT;
}

int vkcu_invalid(char *err, size_t errlen, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    LOGE("%s", line);
    if (err && errlen)
        snprintf(err, errlen, "%s", line);
    return AVERROR(EINVAL);
}

size_t vkcu_struct_size(const char *name)
{
    static const struct {
        const char *name;
        size_t size;
    } sizes[] = {
#define VKCU_SIZE_ROW(t, size) { #t, sizeof(t) },
        VKCU_PUBLIC_STRUCTS(VKCU_SIZE_ROW)
#undef VKCU_SIZE_ROW
    };
    for (size_t i = 0; name && i < sizeof(sizes) / sizeof(sizes[0]); i++)
        if (!strcmp(sizes[i].name, name))
            return sizes[i].size;
    return 0;
}

int vkcu_reserved_check(const char *type, const uint64_t *reserved, size_t words, char *err, size_t errlen)
{
    const char *noun = type + strlen("vkcu_"); /* vkcu_job: vkcu_default_job */
    for (size_t i = 0; i < words; i++)
        if (reserved[i])
            return vkcu_invalid(err, errlen, "%s: reserved[%zu] is 0x%" PRIx64 ", not 0: fill the struct with "
                                "vkcu_default_%s() or clear it first (a program built against the headers of a "
                                "newer vkcu than this library, %s, sets fields it does not know of)",
                                type, i, reserved[i], noun, vkcu_version());
    return 0;
}
