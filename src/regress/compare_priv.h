/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of the comparison share (compare.h is its face): the frame
 * views of metrics.c, the frame source, the two sides and their alignment,
 * the difference picture, and the run's state, which compare.c drives and
 * compare_rows.c and compare_report.c write out. Internal to src/regress/.
 */
#ifndef VKCU_COMPARE_PRIV_H
#define VKCU_COMPARE_PRIV_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <libavutil/frame.h>
#include <libavutil/pixdesc.h>

#include "compare.h"
#include "kernels/metrics_math.h"
#include "report.h"
#include "util/json.h"
#include "util/queue.h"
#include "vmaf.h"

/* ---- hash lists (hash_list.c) ---- */

/* A pipe or FIFO is read whole, once, and must be a hash list: 1 when path
 * is one (then *l or err is set and *ret is the status), 0 for a regular
 * file or a missing one. */
int vkcu_hash_list_from_stream(const char *path, vkcu_hash_list *l, int *ret, char *err, size_t errlen);

/* ---- frame views (metrics.c) ---- */

typedef struct comp_view {
    const uint8_t *data;
    ptrdiff_t stride;        /* bytes */
    int w, h;
    int wide;                /* 16-bit samples */
} comp_view;

typedef struct frame_view {
    int nb;
    comp_view c[4];
    int depth;
    uint16_t *buf;           /* unpacked samples for layouts that are not one plane per component */
} frame_view;

/* Views of both frames, or neither (an error: VKCU_ERR_USAGE for a layout
 * without sample metrics). */
int vkcu_frame_views_init(frame_view *va, frame_view *vb, const AVFrame *a, const AVFrame *b);
void vkcu_frame_view_free(frame_view *v);
/* Whether component i of the layout is subsampled chroma. */
int vkcu_comp_subsampled(const AVPixFmtDescriptor *d, int i);
/* A frame's figures from its components' comparisons (a: either frame,
 * for its format and size; st: one per component, from the CPU's pass or
 * the GPU's, vkcu_gpu_metrics_run): the one place both backends' numbers
 * become PSNR, SSIM and the largest difference. */
void vkcu_frame_metrics_finish(const AVFrame *a, const vkcu_plane_stats *st, vkcu_frame_metrics *m);
/* PSNR in dB of a mean squared error at this peak; +inf for 0. */
double vkcu_psnr_of(double mse, int peak);

static inline int sample_at(const comp_view *c, int x, int y)
{
    const uint8_t *row = c->data + (ptrdiff_t)y * c->stride;
    return c->wide ? ((const uint16_t *)row)[x] : row[x];
}

/* ---- frame source (frame_source.c) ---- */

/* Frames a source decodes ahead of the comparison. */
#define VKCU_SOURCE_QUEUE 8

typedef struct frame_source {
    vkcu_job_params p;       /* the caller's job, with the callback sink */
    vkcu_job_result r;
    const char *path;
    pthread_t thread;
    int started;
    pthread_mutex_t lock;
    pthread_cond_t cond;     /* opened or done (vkcu_frame_source_open waits for it) */
    vkcu_queue *frames;      /* AVFrame *: decoded frames, closed when the job ends */
    int opened, done, ret;
    int64_t start;           /* stream start in the stream time base (as the hash sink counts) */
    AVRational tb, frame_rate;
    char *err;
    size_t errlen;
} frame_source;

/* Starts the job and waits for its stream description (first frame) or its error. */
int vkcu_frame_source_open(const vkcu_job_params *p, const char *path, frame_source **out, char *err, size_t errlen);
/* 0 with *frame (the caller's), AVERROR_EOF after the last one, or an error. */
int vkcu_frame_source_next(frame_source *s, AVFrame **frame);
void vkcu_frame_source_close(frame_source **ps);

/* ---- the two sides and their alignment (align.c) ---- */

typedef struct side {
    const char *path;
    char label;              /* 'A' or 'B' */
    int is_list;
    vkcu_hash_list list;
    frame_source *src;
    /* the current head item */
    int have;
    int64_t index;           /* of the head item, from 0 */
    int64_t key;             /* timestamp in alignment units */
    double secs;             /* seconds from the stream start */
    AVFrame *frame;
    const vkcu_hash_entry *entry;
    int64_t first;           /* --align start: the first item's timestamp, in its own time base */
    /* The first item whose key does not come after its predecessor's
     * (disorder_index -1: none so far): pairing by timestamp takes each
     * side in order, so a repeated or backward timestamp unpairs frames of
     * two sides that hold as many. */
    int64_t disorder_index;
    int disorder_repeat;     /* 1: the predecessor's key again; 0: an earlier one */
    double disorder_secs, disorder_prev_secs;
    int64_t prev_key;
    double prev_secs;
    char err[512];
} side;

typedef struct align {
    enum vkcu_compare_align mode;
    AVRational tb;           /* alignment units */
    int64_t window;          /* |key_a - key_b| <= window pairs two frames */
    int64_t ts_tolerance;    /* paired frames further apart than this are a timestamp mismatch */
} align;

/* Moves a side to its next item (s->have 0 at the end). */
int vkcu_side_advance(side *s, const align *al);
/* Reads a side that is a hash list (s->is_list set); a media file is left
 * for vkcu_side_open_media, once both sides' timing is known. */
int vkcu_side_open_list(side *s, const char *path, char label);
int vkcu_side_open_media(side *s, const vkcu_job_params *job);
/* Whether a side's head item is marked as decoded from damaged data, and
 * where, in words ("in A", "in B", "in A and B"). */
int vkcu_side_concealed(const side *s);
const char *vkcu_side_concealed_where(const side *a, const side *b);
void vkcu_side_close(side *s);

/* ---- the difference picture (diff_image.c) ---- */

/* Per pixel of the luma grid: the largest difference of any component
 * sampled there (chroma at its subsampled position). Returns the largest. */
int vkcu_diff_map(const frame_view *va, const frame_view *vb, const AVPixFmtDescriptor *d, int w, int h, int *diff);
/* Draws the pair into p->diff_image. */
int vkcu_draw_difference(const vkcu_compare_params *p, const AVFrame *a, const AVFrame *b, char *err, size_t errlen);

/* ---- the run (compare.c) ---- */

/* One paired frame's row (--csv, --json). */
typedef struct frame_row {
    int64_t frame_a, frame_b;
    double pts_a, pts_b;
    vkcu_frame_metrics m;
    /* each side's picture: its size and pixel format */
    int width_a, height_a, width_b, height_b;
    enum AVPixelFormat format_a, format_b;
    int unmeasured;          /* 1: the pictures differ in size or format: no figures (m unset) */
} frame_row;

typedef struct compare_run {
    const vkcu_compare_params *p;
    vkcu_compare_result *r;
    side a, b;
    align al;
    int exact;               /* no threshold given: any difference fails */
    int decoded;             /* VKCU_TIMING_DECODED: every decoded frame, whose size may change; the per-frame
                              * lines name each side's size and format */
    int64_t lines;           /* per-frame lines printed */
    double mse_sum[4], mse_avg_sum, ssim_sum[4], ssim_all_sum, worst_mse;
    int64_t metric_frames, ssim_frames;
    AVFrame *worst_a, *worst_b; /* --diff-image: the worst pair so far (device frames copied on the GPU) */
    int threads;             /* CPU metrics: workers */
    struct vkcu_gpu_metrics *gm; /* GPU metrics, made at the first pair of device frames */
    int gm_failed;           /* it could not be made: the CPU measures */
    struct SwsContext *sws; /* --scale: B to A's size and format */
    FILE *csv;
    json_t *rows;
    vkcu_compare_plot *plot;   /* --report, verify --html: every row and the worst frames */
    struct SwsContext *thumb_sws;
    char csv_tmp[4200];
    char first_problem[256];
    /* --vmaf: libvmaf scores a frame only once it has seen the whole stream,
     * so per-frame lines wait in `held` (each paired frame's line ends at an
     * offset in held_ends, its VMAF to be appended) and rows in `pending`. */
    vkcu_vmaf *vmaf;
    FILE *held;
    char *held_buf;
    size_t held_len;
    struct held_end { size_t offset; int64_t row; } *held_ends;
    int64_t nb_held_ends, room_held_ends; /* util/array.h */
    frame_row *pending;
    int64_t nb_pending, room_pending;
    int64_t vmaf_pairs;
    int vmaf_device;         /* libvmaf takes this run's pairs from device memory */
} compare_run;

/* Per-frame rows (compare_rows.c): opened before the pairs (an existing
 * file is refused before decoding), one per measured pair, published after
 * the summary (0 or VKCU_ERR_OUTPUT). */
int vkcu_compare_rows_open(compare_run *x);
int vkcu_compare_rows_add(compare_run *x, const frame_row *row_data);
int vkcu_compare_rows_finish(compare_run *x);
/* The report (compare_report.c): offers a measured pair for the worst
 * frames, and writes the --report page. */
int vkcu_compare_plot_offer(compare_run *x, const AVFrame *a, const AVFrame *b, const vkcu_frame_metrics *m);
/* 1 when vkcu_compare_plot_offer would keep a pair of these figures (it
 * then reads their pixels, which must be on the host). */
int vkcu_compare_plot_wants(const compare_run *x, const vkcu_frame_metrics *m);
int vkcu_compare_report_write(compare_run *x);

#endif
