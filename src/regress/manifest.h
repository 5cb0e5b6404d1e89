/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Regression manifests (`vkcu verify`): a text file of cases, each an input,
 * a chain or pipeline, a backend and an expectation (exact per-frame hashes
 * stored inline or in a sidecar file, or metric limits against a reference
 * input). The format is documented in docs/regression.md.
 *
 * Cases run through the library: vkcu_job_run with the hash sink for hash
 * expectations, vkcu_compare_run for metric expectations.
 */
#ifndef VKCU_MANIFEST_H
#define VKCU_MANIFEST_H

#include <stdint.h>
#include <stdio.h>

#include "compare.h"
#include "core/vkcu.h"

#define VKCU_MANIFEST_VERSION 1

enum vkcu_case_expect { VKCU_EXPECT_HASHES = 0, VKCU_EXPECT_METRICS };

typedef struct vkcu_manifest_case {
    char *name;
    int line;                   /* of its [case NAME] header, from 1 */
    char *input;                /* as written (before ${...} expansion) */
    char *chain, *pipeline;     /* NULL when not set */
    int backend;                /* enum vkcu_backend; auto when not set */
    int backends_mask;          /* 1 << backend the expectation holds on (CPU, GPU); 0: both */
    enum vkcu_hash_algo algo;   /* md5 unless set (or set by a hash pipeline) */
    int algo_set;
    int max_frames;             /* 0: every frame */
    double start_time, duration; /* seconds; -1: not set (as vkcu_job's) */
    int64_t start_frame, frame_count; /* frames; -1: not set */
    int strict;
    enum vkcu_case_expect expect;
    char *hashes;               /* sidecar, as written; NULL: inline frame lines */
    int inline_first, inline_last; /* line indexes of inline frame lines; -1: none */
    int last_line;              /* last non-blank line index of the case */
    char *reference;            /* metric expectation: the reference input, as written */
    int max_diff;               /* <0: unset */
    double min_psnr;            /* NAN: unset */
    double min_vmaf;            /* NAN: unset; the mean VMAF against the reference (needs libvmaf) */
    double timeout;             /* seconds; 0: verify's --timeout */
    int timing;                 /* enum vkcu_timing; -1: not set (verify's default) */
    int exclude_concealed;      /* 1 exclude, 0 include; -1: not set (verify's default) */
} vkcu_manifest_case;

/* A manifest file as verify read it, or as --update last wrote it. */
typedef struct vkcu_manifest_file_state {
    long long size, mtime_sec, mtime_nsec;
    uint64_t hash;              /* xxh64 of its bytes */
    int known;
} vkcu_manifest_file_state;

typedef struct vkcu_manifest {
    char *path;
    vkcu_manifest_file_state file; /* --update rewrites it only while it is still this (manifest.c) */
    char *dir;                  /* folder relative paths start from */
    int dirfd;                  /* that folder, held open (O_PATH) from the load on: --update writes below it */
    char **lines;               /* the text, one entry per line, for --update rewrites */
    int nb_lines;
    vkcu_manifest_case *cases;
    int nb_cases;
    int unsaved;                /* --update changed its lines, to be saved when every case has run (verify.c) */
} vkcu_manifest;

/* Parses a manifest. Errors (VKCU_ERR_INPUT) name the file and line. */
int vkcu_manifest_load(const char *path, vkcu_manifest **out, char *err, size_t errlen);
void vkcu_manifest_free(vkcu_manifest **m);

/* Expands ${NAME} and ${NAME:-default} (environment variables; CONFORMANCE
 * is $VKCU_CONFORMANCE, else the first ../shared/conformance found walking
 * up from the manifest's folder) and makes a relative path relative to the
 * manifest's folder. Returns a new string, or NULL with err filled. */
char *vkcu_manifest_path(const vkcu_manifest *m, const char *text, char *err, size_t errlen);

typedef struct vkcu_verify_params {
    const vkcu_job_params *base; /* device, ring size, handoff ... for every case; NULL: defaults */
    int backend_override;       /* enum vkcu_backend, or <0: each case's own */
    int update;                 /* 1: rewrite hash expectations that differ, print what changed */
    int allow_outside;          /* 1: a case's hashes file may lie outside its manifest's folder */
    const char *junit;          /* JUnit XML report path; NULL: none */
    int overwrite;              /* 1: junit/summary may replace an existing file (never an input) */
    const char *const *cases;   /* only cases whose name matches one of these (fnmatch); NULL: all */
    int nb_cases;
    FILE *out;                  /* one line per case, then the totals */
    int jobs;                   /* cases run at once (>= 1); results still print in manifest order */
    double timeout;             /* seconds a case may run when it sets no timeout; 0: no limit */
    int fail_fast;              /* 1: stop at the first failing case (in manifest order) */
    const char *summary;        /* Markdown summary path; NULL: none */
    const char *html;           /* one self-contained HTML page (report.h); NULL: none */
    enum vkcu_timing timing;    /* cases without a 'timing' key */
    int exclude_concealed;      /* cases without a 'concealed' key */
} vkcu_verify_params;

void vkcu_verify_params_default(vkcu_verify_params *p);

/* Runs every case of the manifests. Returns 0 when every case passed (or
 * was updated), VKCU_ERR_MISMATCH when one failed, VKCU_ERR_INPUT when a
 * manifest cannot be read (nothing runs), VKCU_ERR_OUTPUT when the JUnit
 * file or an updated expectation cannot be written; err says which. */
int vkcu_verify_run(const char *const *manifests, int nb, const vkcu_verify_params *p, char *err, size_t errlen);

#endif
