/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pipeline presets: named, declarative `*.pipe` files (docs/pipelines.md)
 * that set a job's operator chain, its encoder and options, and the output
 * kind and extension. Users pick one with `--pipeline NAME|FILE`.
 *
 * A preset is parsed strictly: every mistake is reported as
 * "FILE:LINE:COLUMN: what is wrong" and the load fails with VKCU_ERR_USAGE.
 * Operators and encoder options are checked against this build (operator
 * registry, libavcodec) when the file is loaded, not when the first frame
 * arrives. Nothing here keeps global state: all functions are thread-safe.
 */
#ifndef VKCU_PRESET_H
#define VKCU_PRESET_H

#include <stddef.h>
#include <stdint.h>

#include "core/vkcu.h"

#define VKCU_PRESET_EXT ".pipe"

typedef struct vkcu_preset {
    char name[128];           /* file name without .pipe */
    char path[4096];          /* the file it came from */
    char description[256];    /* one line, for `vkcu pipelines` */
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
} vkcu_preset;

/* Parses preset text. `path` names the file in error messages and gives
 * the preset its name. Returns 0 or VKCU_ERR_USAGE with
 * "PATH:LINE:COLUMN: message" in err. */
int vkcu_preset_parse(const char *text, size_t len, const char *path, vkcu_preset *out, char *err, size_t errlen);

/* Loads a preset by name (searched in vkcu_preset_dirs order) or from a
 * file (an argument with a '/' or ending in ".pipe"). Returns 0,
 * VKCU_ERR_USAGE (unknown name, parse error) or VKCU_ERR_INPUT (file
 * unreadable), with a one-line message in err. */
int vkcu_preset_load(const char *name_or_path, vkcu_preset *out, char *err, size_t errlen);

/* The folders searched for named presets, first match wins:
 * $VKCU_PIPELINES (':'-separated), <binary>/../pipelines (a source tree),
 * <binary>/../share/vkcu/pipelines (an installed prefix),
 * /usr/local/share/vkcu/pipelines, /usr/share/vkcu/pipelines.
 * Writes up to `max` existing folders into dirs; returns how many. */
int vkcu_preset_dirs(char (*dirs)[4096], int max);

/* Fills a job's chain, encoder, crf, preset, bitrate, gop, encoder options
 * and hash settings from the preset (the sink is left to the caller). The
 * params point into `ps`, which must outlive them. */
void vkcu_preset_apply(const vkcu_preset *ps, vkcu_job_params *p);

/* The output extension the preset implies: its `container`, else ".mkv"
 * for encoding, ".framemd5" or ".jsonl" for hashes. */
const char *vkcu_preset_extension(const vkcu_preset *ps);

#endif
