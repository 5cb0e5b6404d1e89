/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HTML reports a person opens in a browser: `vkcu compare --report` and
 * `vkcu verify --html` (docs/regression.md, "HTML reports").
 *
 * A report is one self-contained page: the per-frame metrics drawn as
 * inline SVG, the worst frames as PNG thumbnails in data: URIs, and the
 * styles in the page itself. It loads nothing (no script, no font, no
 * external URL), so it can be attached to a CI job and opened offline.
 *
 * The comparison collects a vkcu_compare_plot while it pairs frames (its
 * rows in compare_rows.c, its worst frames in compare_report.c); this file
 * only writes. Everything here is reentrant.
 */
#ifndef VKCU_REPORT_H
#define VKCU_REPORT_H

#include <stdint.h>
#include <stdio.h>
#include <libavutil/frame.h>

struct vkcu_compare_params;
struct vkcu_compare_result;

/* Worst frames a report shows (lowest PSNR). */
#define VKCU_PLOT_WORST 4
/* Thumbnails fit this box (never enlarged). */
#define VKCU_THUMB_W 320
#define VKCU_THUMB_H 180

/* One paired frame's point on the plot. */
typedef struct vkcu_plot_row {
    int64_t frame;               /* index in A */
    double secs;                 /* A's time from its first frame */
    double psnr[4], psnr_avg;    /* +inf for identical planes */
    double ssim_all;             /* NAN when a plane is under 8x8 */
    double vmaf;                 /* NAN when VMAF was not scored: the plot then has no VMAF chart */
    int max_diff;
} vkcu_plot_row;

/* One of the worst frames: A, B and their difference, downscaled. */
typedef struct vkcu_plot_thumb {
    int64_t frame;
    double secs, psnr_avg, ssim_all;
    int max_diff;                /* the frame's largest difference: where the colour scale reaches white */
    AVFrame *rgb[3];             /* RGB24: A, B, difference (heat colours over A's luma, dimmed) */
} vkcu_plot_thumb;

typedef struct vkcu_compare_plot {
    int nb_comps;
    char comp_names[5];          /* "yuv", "rgb", ... as vkcu_frame_metrics */
    vkcu_plot_row *rows;
    int64_t nb_rows, room_rows; /* util/array.h */
    vkcu_plot_thumb worst[VKCU_PLOT_WORST]; /* lowest PSNR first; ties: the earlier frame */
    int nb_worst;
    const char *why_empty;       /* when there are no rows: why (a static string), e.g. hash lists */
} vkcu_compare_plot;

vkcu_compare_plot *vkcu_compare_plot_alloc(void);
void vkcu_compare_plot_free(vkcu_compare_plot **plot);
/* 0, or AVERROR(ENOMEM). */
int vkcu_compare_plot_add(vkcu_compare_plot *plot, const vkcu_plot_row *row);

/* The difference pictures' colour scale: black, blue, red, yellow, white
 * as t goes 0 -> 1 (px: R, G, B). */
void vkcu_heat_colour(double t, uint8_t *px);

/* A PNG of an RGB24 frame (FFmpeg's png encoder): *data is av_malloc'd. */
int vkcu_png_encode(const AVFrame *rgb, uint8_t **data, int *size);

/* Text of a file name or message as HTML: & < > " ' as entities, and the
 * bytes a page cannot show (stray non-UTF-8 bytes, control characters) as
 * \xHH, inside <span class="esc"> when markup is 1 (not in <title>). */
void vkcu_html_text(FILE *f, const char *s, int markup);
/* <!DOCTYPE html> ... <body>, the page's only styles; title = prefix + s. */
void vkcu_html_begin(FILE *f, const char *title_prefix, const char *title);
void vkcu_html_end(FILE *f);
/* The charts (PSNR per component, SSIM, VMAF when scored) and the worst
 * frames; element ids start with `id` (unique in the page). 0 or an error
 * (PNG encoding). */
int vkcu_html_plot(FILE *f, const vkcu_compare_plot *plot, const char *id);
/* A hash case's frames in time order, one mark each: '=' equal, 'c'
 * changed, 'm' expected but missing, 'x' produced but not expected. */
void vkcu_html_frame_strip(FILE *f, const char *marks, int n, const char *id);
/* The whole `vkcu compare --report` page. */
int vkcu_html_compare_page(FILE *f, const struct vkcu_compare_params *p, const struct vkcu_compare_result *r,
                           const vkcu_compare_plot *plot);

#endif
