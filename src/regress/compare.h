/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Frame-accuracy comparison: what `vkcu compare` and `vkcu verify` share.
 *
 * - Hash lists (hash_list.c): the framemd5 or JSON-lines text `vkcu hash`
 *   (or `ffmpeg -f framemd5`) writes, parsed back into entries.
 * - Frame metrics (metrics.c): per-component PSNR, SSIM and largest
 *   absolute sample difference of two pictures of the same format, with
 *   the definitions of FFmpeg's psnr and ssim filters (docs/regression.md).
 * - vkcu_compare_run (compare.c, with frame_source.c, align.c,
 *   diff_image.c, compare_rows.c and compare_report.c; compare_priv.h is
 *   what they share): decodes two inputs (or reads their hash lists),
 *   aligns frames by timestamp, measures every pair and decides pass/fail.
 *
 * Every function is reentrant; one comparison runs on one thread.
 */
#ifndef VKCU_COMPARE_H
#define VKCU_COMPARE_H

#include <stdint.h>
#include <stdio.h>
#include <libavutil/frame.h>
#include <libavutil/rational.h>

#include "core/vkcu.h"

/* ---- hash lists ---- */
typedef struct vkcu_hash_entry {
    int64_t dts, pts, duration;
    int size;
    int concealed;           /* marked as decoded from damaged data */
    int width, height;       /* the picture's, where the list says (JSON lines of --timing decoded); else 0 */
    char pix_fmt[24];
    char hash[68];           /* lower-case hex */
} vkcu_hash_entry;

typedef struct vkcu_hash_list {
    enum vkcu_hash_algo algo;
    int algo_known;          /* 0: the text named no algorithm (FFmpeg's default is MD5) */
    AVRational tb;           /* {0,1} when the text does not say */
    int width, height;       /* 0 when unknown */
    int decoded;             /* 1: the list holds every decoded frame (VKCU_TIMING_DECODED) */
    int nb;
    int64_t room;            /* util/array.h */
    vkcu_hash_entry *entries;
} vkcu_hash_list;

/* Parses framemd5 text (`#` header lines, then "stream, dts, pts, duration,
 * size, hash") or vkcu's JSON lines. `name` (a file name, for messages) and
 * the line number appear in err. Returns 0 or VKCU_ERR_INPUT. */
int vkcu_hash_list_parse(const char *text, size_t len, const char *name, vkcu_hash_list *l, char *err, size_t errlen);
/* Reads and parses a file. VKCU_ERR_INPUT when missing or malformed. */
int vkcu_hash_list_load(const char *path, vkcu_hash_list *l, char *err, size_t errlen);
/* 1 when the file starts like a hash list (framemd5 or vkcu JSON), else 0. */
int vkcu_hash_list_sniff(const char *path);
void vkcu_hash_list_free(vkcu_hash_list *l);
/* ---- frame metrics ---- */

/* a and b must have the same format and size (else VKCU_ERR_MISMATCH with
 * the two formats in err). Float formats have no metrics: VKCU_ERR_USAGE. */
int vkcu_frame_metrics_compute(const AVFrame *a, const AVFrame *b, vkcu_frame_metrics *m, char *err, size_t errlen);
/* The same on `threads` workers (bands of rows): the same figures, bit for
 * bit, for every number of threads (kernels/metrics_math.h says why). */
int vkcu_frame_metrics_compute_threads(const AVFrame *a, const AVFrame *b, int threads, vkcu_frame_metrics *m,
                                       char *err, size_t errlen);
/* 0 when a and b have the same format and size, else VKCU_ERR_MISMATCH with
 * the two formats in err. */
int vkcu_frame_metrics_mismatch(const AVFrame *a, const AVFrame *b, char *err, size_t errlen);

/* ---- compare ---- */

typedef struct vkcu_compare_params {
    const char *a, *b;             /* media files or hash lists */
    const vkcu_job_params *job;    /* how media inputs are decoded: backend, device, chain, max_frames, strict */
    const vkcu_job_params *job_b;  /* for b, if different (NULL: job) */
    int max_diff;                  /* <0: unset */
    double min_psnr;               /* NAN: unset. Neither set: frames must be identical */
    const char *diff_image;        /* PNG of the worst frame's difference; NULL: none */
    int overwrite;                 /* 1: diff_image, csv, json may replace an existing file (never a or b) */
    FILE *report;                  /* per-frame lines and the summary; NULL: quiet */
    int per_frame;                 /* 1: one line per frame; 0: differing frames only (first 20) */
    enum vkcu_compare_align align;
    int scale;                     /* 1: B is scaled (and converted) to A's size and format when they differ */
    const char *csv, *json;        /* per-frame rows; NULL: none */
    int vmaf;                      /* 1: VMAF of every pair (libvmaf, vmaf.h); A is the reference unless vmaf_ref_b */
    double min_vmaf;               /* NAN: unset; else pass only when the mean VMAF is at least this (implies vmaf) */
    int vmaf_ref_b;                /* 1: B is the reference for VMAF (verify: the case's reference) */
    const char *report_html;       /* one self-contained HTML page (report.h); NULL: none */
    struct vkcu_compare_plot **plot_out; /* non-NULL: receives the plot data (the caller frees it with
                                          * vkcu_compare_plot_free) when the comparison ran; verify --html */
    enum vkcu_timing timing;       /* media inputs: VKCU_TIMING_DECODED reads every decoded frame as a hash list of
                                    * that timing holds them; against a hash list, the list's own timing
                                    * (its "#timing:" line) wins when it says decoded */
    int exclude_concealed;         /* 1: pairs marked concealed on either side are counted apart, not failed */
} vkcu_compare_params;

void vkcu_compare_params_default(vkcu_compare_params *p);


/* Returns 0 when the inputs pass, VKCU_ERR_MISMATCH when they do not (see
 * r->verdict), or another error (r->error names the file). */
int vkcu_compare_run(const vkcu_compare_params *p, vkcu_compare_result *r);

#endif
