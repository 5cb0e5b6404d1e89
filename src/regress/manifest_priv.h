/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of manifests and `vkcu verify` share (manifest.h is their
 * face): a case's result, the hash expectations' differences, and the
 * calls from one file of the run into another. Internal to src/regress/.
 */
#ifndef VKCU_MANIFEST_PRIV_H
#define VKCU_MANIFEST_PRIV_H

#include <stddef.h>

#include "manifest.h"
#include "report.h"

/* ---- parsing (manifest.c), paths (manifest_path.c) ---- */

/* The mark `vkcu hash` writes before the line of a frame decoded from
 * damaged data: part of an inline expectation (not a comment). */
int vkcu_manifest_is_concealed_mark(const char *s);
/* Whether `path` (from vkcu_manifest_path) lies inside the manifest's
 * folder, as written and as resolved: 1, or 0 with why filled. */
int vkcu_manifest_inside_folder(const vkcu_manifest *m, const char *path, char *why, size_t whylen);

/* ---- hash expectations (manifest_diff.c) ---- */

typedef struct hash_diff {
    int changed, missing, extra;
    int concealed, concealed_changed; /* pairs marked concealed on either side; of them, the ones that differ */
    char first[400];
} hash_diff;

/* Pairs the produced and the expected frames by pts and counts the
 * differences; marks (or NULL) receives one mark per frame in time order.
 * Returns the number of frames in that order. */
int vkcu_manifest_diff_lists(const vkcu_hash_list *got, const vkcu_hash_list *want, int exclude_concealed, hash_diff *d,
                             char *marks);
/* The differences in words, with the frames concealed by the decoder said apart. */
void vkcu_manifest_describe_concealed(const hash_diff *d, int exclude, char *out, size_t n);
void vkcu_manifest_describe_diff(const hash_diff *d, int exclude, int got, int want, char *out, size_t n);

/* ---- a case (verify_case.c) ---- */

typedef struct case_result {
    const vkcu_manifest_case *c;
    const vkcu_manifest *m;
    enum { CASE_PASS, CASE_FAIL, CASE_SKIP, CASE_UPDATED } status;
    char message[1024];
    double seconds;
    /* verify --html, failing cases only: a metric case's plot, a hash case's frame marks */
    vkcu_compare_plot *plot;
    char *marks;
    int nb_marks;
    /* verify --update of a run where two cases name one hashes file: hold
     * (set before the run) keeps the frames a case made for its hashes
     * file (passed or updated) instead of writing them, and leaves a
     * rewritten manifest unsaved, so that verify.c can refuse two
     * different contents for one file before it writes anything. */
    int hold;
    char *held;
    size_t held_len;
    char *held_file, *held_input, *held_preset; /* the file; what its write must not replace */
} case_result;

/* Whether a case of this name is selected (verify's case patterns). */
int vkcu_verify_wanted(const vkcu_verify_params *p, const char *name);
/* Runs one case into *cr (a failing case is a result, not an error: <0 only
 * for what stops the run); *dirty: the manifest's lines were rewritten. */
int vkcu_verify_run_case(vkcu_manifest *m, vkcu_manifest_case *c, const vkcu_verify_params *p, case_result *cr,
                         int *dirty, char *err, size_t errlen);
/* --update of a held case (hold): writes its frames into its hashes
 * file, under the rules of its own write. */
int vkcu_verify_write_held(const case_result *cr, const vkcu_verify_params *p, char *err, size_t errlen);
void vkcu_verify_free_held(case_result *cr);
/* VKCU_ERR_OUTPUT when the manifest file is no longer what verify read (or
 * last wrote): lines added or edited while the cases ran would be lost in
 * a rewrite. Else 0. */
int vkcu_manifest_unchanged(const vkcu_manifest *m, char *err, size_t errlen);
/* --update: writes the manifest's lines back over it, refused (VKCU_ERR_OUTPUT)
 * when the file changed since it was loaded or last written. */
int vkcu_manifest_save(vkcu_manifest *m, char *err, size_t errlen);
/* A whole text file under the output file rule: 0 or VKCU_ERR_OUTPUT. */
int vkcu_verify_write_text(const char *path, const char *text, size_t len, int overwrite, const char *const *inputs,
                           char *err, size_t errlen);

/* ---- the report files (verify_report.c) ---- */

int vkcu_verify_write_junit(const char *path, int overwrite, const char *const *inputs, vkcu_manifest **ms, int nb,
                            const case_result *res, int nb_res, char *err, size_t errlen);
int vkcu_verify_write_summary(const char *path, int overwrite, const char *const *inputs, const case_result *res,
                              int nb_res, int passed, int failed, int skipped, int updated, int not_run, char *err,
                              size_t errlen);
int vkcu_verify_write_html(const char *path, int overwrite, const char *const *inputs, const case_result *res,
                           int nb_res, int passed, int failed, int skipped, int updated, int not_run, char *err,
                           size_t errlen);

#endif
