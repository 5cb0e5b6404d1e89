/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Files that encoder options make an encoder write or read (x264/x265
 * two-pass statistics, x265's CSV log and analysis files, x264's
 * reconstructed pictures, ...): the one list of their names, and the output
 * rule applied to the written ones (encoder_files.c).
 */
#ifndef VKCU_CORE_ENCODER_FILES_H
#define VKCU_CORE_ENCODER_FILES_H

#include <limits.h>
#include <stddef.h>

/* Whether `key` (len bytes, as written in an encoder-opt value) names a
 * file: compared in lower case, '_' as '-', without a "no-" prefix; quotes
 * and escapes around the name still name it. */
int vkcu_encoder_file_key(const char *key, size_t len);

#define VKCU_ENCODER_FILES_MAX 8

/* One file an encoder writes: the encoder gets `tmp` in place of `path`,
 * and what it wrote there is moved into place when the job succeeds. */
typedef struct vkcu_encoder_file {
    char path[PATH_MAX];    /* what the options named */
    char tmp[PATH_MAX];     /* the reserved temporary name the encoder writes */
    const char *companion;  /* a second file the encoder derives from the name (".mbtree"), or NULL */
    const char *scratch[2]; /* the encoder's own temporaries beside it (removed on failure), or NULL */
} vkcu_encoder_file;

typedef struct vkcu_encoder_files {
    vkcu_encoder_file f[VKCU_ENCODER_FILES_MAX];
    int nb;
    char *opts;             /* the options with the temporaries in (av_malloc'ed); NULL: unchanged */
} vkcu_encoder_files;

/* Finds the files that `opts` (the job's encoder options for `encoder`)
 * make the encoder write, and applies the output rule to each before
 * anything is written: never one of `inputs` (even with overwrite), never
 * an existing file without overwrite, never the job's `output`; each gets a
 * reserved temporary name, written into ef->opts. A file only read, or a
 * key whose direction is unknown, is left as it is, but may not be an
 * input. 0, or VKCU_ERR_OUTPUT/VKCU_ERR_USAGE with err set (nothing is
 * reserved then). */
int vkcu_encoder_files_begin(vkcu_encoder_files *ef, const char *opts, const char *encoder, const char *output,
                             int overwrite, const char *const *inputs, char *err, size_t errlen);
/* After the encoder is closed and the job succeeded: moves each written
 * file (and its companion) into place. */
int vkcu_encoder_files_commit(vkcu_encoder_files *ef, char *err, size_t errlen);
/* Removes what the encoder wrote and frees ef->opts. Safe to call twice. */
void vkcu_encoder_files_abort(vkcu_encoder_files *ef);

#endif
