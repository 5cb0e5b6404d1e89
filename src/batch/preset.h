/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pipeline presets, inside the library (the type and the public calls are
 * include/vkcu/preset.h's): named, declarative `*.pipe` files (docs/pipelines.md)
 * that set a job's operator chain, its encoder and options, and the output
 * kind and extension. Users pick one with `--pipeline NAME|FILE`.
 *
 * A preset is parsed strictly: every mistake is reported as
 * "FILE:LINE:COLUMN: what is wrong" and the load fails with VKCU_ERR_USAGE.
 * Operators and encoder options are checked against this build (operator
 * registry, libavcodec) when the file is loaded, not when the first frame
 * arrives. Nothing here keeps global state: all functions are thread-safe.
 */
#ifndef VKCU_BATCH_PRESET_H
#define VKCU_BATCH_PRESET_H

#include <stddef.h>
#include <stdint.h>

#include "core/vkcu.h"
#include <vkcu/preset.h>

/* Parses preset text. `path` names the file in error messages and gives
 * the preset its name. Returns 0 or VKCU_ERR_USAGE with
 * "PATH:LINE:COLUMN: message" in err. */
int vkcu_preset_parse(const char *text, size_t len, const char *path, vkcu_preset *out, char *err, size_t errlen);

/* The folders searched for named presets, first match wins:
 * $VKCU_PIPELINES (':'-separated), <binary>/../pipelines (a source tree),
 * <binary>/../share/vkcu/pipelines (an installed prefix),
 * /usr/local/share/vkcu/pipelines, /usr/share/vkcu/pipelines.
 * Writes up to `max` existing folders into dirs; returns how many. */
int vkcu_preset_dirs(char (*dirs)[4096], int max);
/* The file a preset name or path names: 1 with path set; 0 when no folder
 * holds it; -1 when there is no presets folder at all. */
int vkcu_preset_locate(const char *arg, char *path, size_t len);

/* vkcu_preset_apply (public) for the internal job: the same fields from the
 * same list (preset.c), the sink left to the caller. The params point into
 * `ps`, which must outlive them. */
void vkcu_preset_apply_params(const vkcu_preset *ps, vkcu_job_params *p);

#endif
