/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu public API: pipeline presets. A preset is a named, declarative
 * `*.pipe` file (docs/pipelines.md) that sets a job's operator chain, its
 * encoder and options, and the output kind and extension.
 *
 *     vkcu_preset ps;
 *     char err[1024];
 *     if (vkcu_preset_load("denoise-light", &ps, err, sizeof(err)) < 0)
 *         fprintf(stderr, "%s\n", err);
 *     vkcu_job job;
 *     vkcu_default_job(&job);
 *     vkcu_preset_apply(&ps, &job);        // job points into ps from here on
 *
 * A preset is parsed strictly: a mistake is reported as
 * "FILE:LINE:COLUMN: what is wrong". Operators and encoder options are
 * checked against this build when the file is loaded, not when the first
 * frame arrives. Nothing here keeps global state: every call is
 * thread-safe.
 */
#ifndef VKCU_PRESET_H
#define VKCU_PRESET_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "job.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The file name extension of presets. */
#define VKCU_PRESET_EXT ".pipe"

/* A loaded preset: every field is a copy, so it owns no memory. */
typedef struct vkcu_preset {
    char name[128];           /* file name without .pipe */
    char path[4096];          /* the file it came from */
    char description[256];    /* one line */
    char chain[4096];         /* "op" lines joined with ','; "" for none */
    enum vkcu_sink_kind sink; /* VKCU_SINK_ENCODE (default) or VKCU_SINK_HASH */
    char encoder[64];         /* "": the container's default */
    int crf;                  /* -1: encoder default */
    char encoder_preset[64];  /* "": encoder default */
    int64_t bitrate;          /* 0: encoder default */
    int gop;                  /* 0: encoder default */
    int faststart;            /* 1: MP4/MOV index first ("faststart yes") */
    char encoder_opts[1024];  /* "k=v:k=v" from the encoder-opt lines */
    char extension[16];       /* ".mkv"; "" when the file gives none */
    enum vkcu_hash_algo hash_algo;
    enum vkcu_hash_format hash_format;
    char gpu_encoder[32];     /* "gpu-encoder": a Vulkan encoder used instead of `encoder` where it can (vkcu_job) */
    uint64_t reserved[32];    /* zero (version.h: room to grow) */
} vkcu_preset;

/**
 * Loads a preset by name or from a file.
 *
 * @param name_or_path a name, searched in the presets folders (see
 *                     vkcu_presets_list), or a file: an argument with a '/'
 *                     or ending in VKCU_PRESET_EXT.
 * @param out          receives the preset; the caller's.
 * @param err          receives one line saying what failed (naming the file
 *                     and line for a parse error); may be NULL.
 * @param errlen       size of err.
 * @return 0; VKCU_ERR_USAGE (no preset of that name, a mistake in the file);
 *         VKCU_ERR_INPUT (the file cannot be read).
 * @note Thread-safe.
 */
VKCU_API int vkcu_preset_load(const char *name_or_path, vkcu_preset *out, char *err, size_t errlen);

/**
 * @return the output extension the preset implies, with the dot: its
 *         `container`, else ".mkv" for encoding, ".framemd5" or ".jsonl"
 *         for hashes. Points into ps or to a static string.
 * @note Thread-safe.
 */
VKCU_API const char *vkcu_preset_extension(const vkcu_preset *ps);

/**
 * Sets a job's chain, encoder (and GPU encoder), crf, encoder preset,
 * bitrate, GOP, encoder options, faststart and hash settings from a preset. The sink, the input
 * and the output are left to the caller.
 *
 * @param ps  the preset; the job points into it, so it must outlive the
 *            job's use.
 * @param job the caller's job.
 * @note Thread-safe.
 */
VKCU_API void vkcu_preset_apply(const vkcu_preset *ps, vkcu_job *job);

/**
 * Receives one preset of a listing.
 *
 * @param opaque the pointer given to vkcu_presets_list.
 * @param name   the name that vkcu_preset_load finds it by.
 * @param path   its file. Both valid only during the call.
 * @return 0 to go on; any other value stops the listing, and
 *         vkcu_presets_list returns it.
 */
typedef int (*vkcu_preset_list_callback)(void *opaque, const char *name, const char *path);

/**
 * Lists the presets that a name can load, sorted by name, each name once.
 * The folders searched, first match wins: $VKCU_PIPELINES (':'-separated),
 * <program>/../pipelines (a source tree), <program>/../share/vkcu/pipelines
 * (an installed prefix), /usr/local/share/vkcu/pipelines,
 * /usr/share/vkcu/pipelines. Files are not parsed: load each to check it.
 *
 * @param cb     called once per preset, on the calling thread.
 * @param opaque passed to cb.
 * @param err    receives one line when no presets folder exists; may be NULL.
 * @param errlen size of err.
 * @return the number of presets listed (0 for empty folders); what cb
 *         returned when it stopped the listing; VKCU_ERR_INPUT when none
 *         of the folders exists; -ENOMEM.
 * @note Thread-safe.
 */
VKCU_API int vkcu_presets_list(vkcu_preset_list_callback cb, void *opaque, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
