/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu public API: the regression toolkit, for programs that check video
 * pipelines frame by frame (CI systems, codec test harnesses).
 *
 *   - hash:    a job with the hash sink (job.h) writes per-frame hashes in
 *              FFmpeg's framemd5 format or JSON lines; the algorithms and
 *              formats are named and parsed in hash.h.
 *   - compare: two media files or hash lists, paired frame by frame by
 *              timestamp; PSNR, SSIM and the largest sample difference with
 *              FFmpeg's definitions; a pass/fail verdict against limits.
 *   - verify:  a manifest of cases (docs/regression.md), each an input, a
 *              chain and an expectation (exact hashes, or metric limits
 *              against a reference).
 *
 * Media inputs decode with the context's settings (backend, device ...);
 * messages go to its log callback.
 */
#ifndef VKCU_REGRESS_H
#define VKCU_REGRESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common.h"
#include "hash.h"
#include "job.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Says whether this build scores VMAF (vkcu_compare_job.vmaf).
 *
 * @param buf  receives one line: libvmaf's version and the model, or why
 *             VMAF is not available; NUL-terminated.
 * @param size size of buf in bytes (at least 1).
 * @note Thread-safe.
 */
VKCU_API void vkcu_vmaf_describe(char *buf, size_t size);

/* How compare pairs the frames of A and B. */
enum vkcu_compare_align {
    VKCU_ALIGN_START = 0, /* each side's first frame is time zero (default) */
    VKCU_ALIGN_PTS,       /* timestamps as hash lists print them (from the container's start) */
    VKCU_ALIGN_INDEX,     /* frame n with frame n; timestamps are not checked */
};

/* One picture pair's measures. */
typedef struct vkcu_frame_metrics {
    int nb_comps;
    char comp_names[5];        /* "yuv", "yuva", "rgb", "y" ... (FFmpeg's labels) */
    double mse[4], psnr[4], ssim[4];
    double mse_avg, psnr_avg;  /* planes weighted by their size; psnr_avg with FFmpeg's average peak */
    double ssim_all;           /* planes weighted by their size; NAN when a plane is under 8x8 */
    int max_diff;              /* largest |a - b| over every sample of every plane */
    int max_diff_comp, max_diff_x, max_diff_y; /* where it is (component, sample coordinates) */
    int peak;                  /* largest sample value: (1 << depth) - 1 */
    double vmaf;               /* libvmaf's score; NAN when not scored */
    uint64_t reserved[16];     /* zero (version.h: room to grow) */
} vkcu_frame_metrics;

/* A comparison. Fill with vkcu_default_compare_job() first. Strings and
 * streams stay the caller's. */
typedef struct vkcu_compare_job {
    const char *a, *b;             /* media files or hash lists; required */
    const char *chain;             /* operators applied to both media inputs; NULL: none */
    const char *chain_a, *chain_b; /* applied to one side only, after chain; NULL: none */
    double start_time, duration;   /* seconds from each side's own start; -1: not set */
    int64_t start_frame, frame_count; /* frames; -1: not set */
    int max_frames;                /* >0: compare at most this many frames per side */
    int strict;                    /* 1: a corrupt frame fails */
    int max_diff;                  /* 0..65535: pass when no sample differs more; -1 (default): not set */
    double min_psnr;               /* dB, pass when every frame reaches it; <0 (default): not set.
                                    * Neither limit set: the frames must be identical */
    double min_vmaf;               /* 0..100: pass when the mean VMAF reaches it (implies vmaf); <0: not set */
    int vmaf;                      /* 1: score every pair with libvmaf (A the reference); -ENOSYS without libvmaf */
    enum vkcu_compare_align align;
    int scale;                     /* 1: B is scaled to A's size and format when they differ */
    FILE *report;                  /* per-frame lines and the summary; NULL (default): none */
    int per_frame;                 /* 1: a line per frame in report; 0: frames outside the limits only
                                    * (the first 20), then the summary */
    const char *diff_image;        /* PNG of the worst frame's difference; NULL: none */
    const char *csv, *json;        /* per-frame rows; NULL: none */
    const char *report_html;       /* one self-contained HTML page; NULL: none */
    int overwrite;                 /* 1: the files above may replace existing ones (never a or b) */
    const char *pipeline_file;     /* the preset file the settings came from: never written over, like a and b;
                                    * NULL: none */
    enum vkcu_timing timing;       /* media inputs (job.h): VKCU_TIMING_DECODED compares every decoded frame,
                                    * timed as a hash list of that timing; a hash list that says it holds every
                                    * decoded frame makes its media partner read that way too. Default
                                    * VKCU_TIMING_FFMPEG: against a hash list, the frames `vkcu hash` lists;
                                    * between two media files, every decoded frame as it is */
    int exclude_concealed;         /* 1: pairs marked concealed (decoded from damaged data, on either side) do
                                    * not fail the comparison; they are counted in result->concealed either way */
    uint64_t reserved[32];         /* zero (version.h: room to grow) */
} vkcu_compare_job;

/**
 * Fills a comparison with the defaults given beside each field.
 * @note Thread-safe.
 */
VKCU_API void vkcu_default_compare_job(vkcu_compare_job *job);

/* What a comparison found. */
typedef struct vkcu_compare_result {
    int64_t frames_a, frames_b;
    int64_t paired;                /* frames matched by timestamp */
    int64_t differing;             /* paired frames that are not identical */
    int64_t over_limit;            /* paired frames outside max_diff / min_psnr */
    int64_t only_a, only_b;        /* frames without a partner (dropped or added) */
    int64_t ts_mismatch;           /* paired frames whose timestamps disagree */
    int64_t format_mismatch;       /* paired frames of different size or pixel format */
    int64_t first_diff;            /* index in A of the first differing frame; -1: none */
    double first_diff_time;        /* its timestamp, seconds from the stream start */
    int metrics;                   /* 1: pictures were compared (not only hashes) */
    vkcu_frame_metrics worst;      /* the pair with the largest mean squared error (the lowest PSNR) */
    int64_t worst_index;           /* its index in A; -1: none */
    int max_diff;                  /* over all paired frames (max_diff_index: where it is) */
    int nb_comps;
    char comp_names[5];
    double psnr[4], psnr_avg, psnr_min; /* as FFmpeg's psnr summary: from the mean MSE */
    double ssim[4], ssim_all;      /* as FFmpeg's ssim summary: mean of per-frame values */
    int vmaf;                      /* 1: VMAF scored (vmaf_mean is libvmaf's pooled mean; NAN: no pair) */
    double vmaf_mean, vmaf_min;
    int64_t vmaf_min_index;        /* the lowest-scoring frame's index in A; -1: none */
    int pass;                      /* 1: within the limits */
    char verdict[512];             /* one line: IDENTICAL / PASS / MISMATCH and why */
    char error[512];               /* when the call failed for another reason than a mismatch */
    int64_t max_diff_index;        /* the index in A of the first frame with max_diff; -1: no frame differs */
    int64_t concealed;             /* paired frames marked concealed on either side (docs/regression.md) */
    int64_t concealed_differing;   /* of those, the ones that differ (with exclude_concealed: not in differing) */
    /* Since 1.1: where the pictures were measured. On the GPU backend both
     * inputs' frames stay in device memory and each pair is measured there
     * (the same figures as the CPU's, bit for bit); only the figures, and
     * the pictures a report or difference image draws, reach the host. */
    int64_t gpu_pairs;             /* pairs whose PSNR, SSIM and differences were computed on the GPU */
    int64_t frames_dtoh_bytes;     /* picture bytes brought from the GPU to the host: the decoders' downloads and
                                    * the comparison's own (CPU metrics, libvmaf on the CPU, report, diff image) */
    uint64_t reserved[30];         /* zero (version.h: room to grow) */
} vkcu_compare_result;

/**
 * Compares two inputs frame by frame.
 *
 * @param ctx    an open context: media inputs decode with its settings.
 * @param job    the comparison; read during the call only.
 * @param result receives the counts, measures and verdict. Must not be NULL.
 * @return 0 when the inputs match within the limits; VKCU_ERR_MISMATCH
 *         when they do not (result->verdict says why); -EINVAL for a bad
 *         field (nothing was read); VKCU_ERR_INPUT when an input is missing
 *         or unreadable; VKCU_ERR_OUTPUT when a report file cannot be
 *         written (or exists, without overwrite); other negative errors.
 *         A failure other than a mismatch is logged and in result->error.
 * @note Thread-safe: comparisons may run at once on one context.
 */
VKCU_API int vkcu_compare(vkcu_context *ctx, const vkcu_compare_job *job, vkcu_compare_result *result);

/* A run of regression manifests. Fill with vkcu_default_verify_job() first. */
typedef struct vkcu_verify_job {
    const char *const *manifests;  /* paths; required */
    int nb_manifests;              /* 1..64 */
    int override_backend;          /* 1: every case on the context's backend; 0 (default): each case's own */
    const char *const *cases;      /* only cases whose name matches one of these (fnmatch); NULL: all */
    int nb_cases;
    FILE *out;                     /* one line per case, then the totals; default stdout */
    int jobs;                      /* cases run at once, 1..64 (results still in manifest order); default 1 */
    double timeout;                /* seconds a case may run when it sets none; 0 (default): no limit */
    int fail_fast;                 /* 1: stop at the first failing case */
    int update;                    /* 1: rewrite hash expectations that differ, and say what changed */
    int allow_outside;             /* 1: a case's hashes file may lie outside its manifest's folder */
    const char *junit;             /* JUnit XML report; NULL: none */
    const char *summary;           /* Markdown summary; NULL: none */
    const char *html;              /* one self-contained HTML page; NULL: none */
    int overwrite;                 /* 1: the reports may replace existing files (never an input) */
    enum vkcu_timing timing;       /* cases without a 'timing' key (default VKCU_TIMING_FFMPEG) */
    int exclude_concealed;         /* 1: cases without a 'concealed' key leave frames marked concealed out of
                                    * their verdict (still counted in their line) */
    uint64_t reserved[32];         /* zero (version.h: room to grow) */
} vkcu_verify_job;

/**
 * Fills a verify job with the defaults given beside each field.
 * @note Thread-safe.
 */
VKCU_API void vkcu_default_verify_job(vkcu_verify_job *job);

/**
 * Runs every case of the manifests.
 *
 * @param ctx an open context: cases decode with its settings (and its
 *            backend, when override_backend is set).
 * @param job the run; read during the call only.
 * @return 0 when every case passed (or was updated); VKCU_ERR_MISMATCH
 *         when one failed; -EINVAL for a bad field; VKCU_ERR_INPUT when a
 *         manifest cannot be read (no case runs); VKCU_ERR_OUTPUT when a
 *         report or an updated expectation cannot be written. Failures
 *         other than a case's are logged.
 * @note Thread-safe for distinct output streams.
 */
VKCU_API int vkcu_verify(vkcu_context *ctx, const vkcu_verify_job *job);

#ifdef __cplusplus
}
#endif
#endif
