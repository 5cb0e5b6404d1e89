/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HTML reports (src/regress/report.h): one page, no script and no external URL.
 *
 * The charts are SVG drawn here from the per-frame rows (one polyline point
 * per paired frame, so nothing is averaged away), the thumbnails PNGs made
 * by FFmpeg's encoder and carried in data: URIs. Element ids and classes
 * are stable (tests and people's own tooling read them): chart figures
 * ID-psnr, ID-ssim, ID-vmaf; polylines class "series"; worst frames
 * ID-worst-N.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <libavcodec/avcodec.h>
#include <libavutil/base64.h>

#include "compare.h"
#include "util/array.h"
#include "util/json.h"
#include "report.h"

/* ------------------------------------------------------------------ */
/* the collected data                                                   */

vkcu_compare_plot *vkcu_compare_plot_alloc(void)
{
    return calloc(1, sizeof(vkcu_compare_plot));
}

void vkcu_compare_plot_free(vkcu_compare_plot **pp)
{
    vkcu_compare_plot *p = *pp;
    if (!p)
        return;
    for (int i = 0; i < p->nb_worst; i++)
        for (int k = 0; k < 3; k++)
            av_frame_free(&p->worst[i].rgb[k]);
    free(p->rows);
    free(p);
    *pp = NULL;
}

int vkcu_compare_plot_add(vkcu_compare_plot *p, const vkcu_plot_row *row)
{
    if (VKCU_ARRAY_GROW(p->rows, p->nb_rows, p->room_rows, 256) < 0)
        return AVERROR(ENOMEM);
    p->rows[p->nb_rows++] = *row;
    return 0;
}

/* ------------------------------------------------------------------ */
/* heat colours, PNG                                                    */

static const uint8_t heat_stops[5][3] = { { 0, 0, 0 }, { 40, 40, 255 }, { 255, 30, 30 }, { 255, 230, 0 }, { 255, 255, 255 } };

void vkcu_heat_colour(double t, uint8_t *px)
{
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double f = t * 4;
    int i = f >= 4 ? 3 : (int)f;
    double u = f - i;
    for (int c = 0; c < 3; c++)
        px[c] = (uint8_t)lrint(heat_stops[i][c] + (heat_stops[i + 1][c] - heat_stops[i][c]) * u);
}

int vkcu_png_encode(const AVFrame *rgb, uint8_t **data, int *size)
{
    const AVCodec *codec = avcodec_find_encoder(AV_CODEC_ID_PNG);
    if (!codec)
        return AVERROR_ENCODER_NOT_FOUND;
    AVCodecContext *enc = avcodec_alloc_context3(codec);
    AVPacket *pkt = av_packet_alloc();
    int ret = enc && pkt ? 0 : AVERROR(ENOMEM);
    if (ret >= 0) {
        enc->width = rgb->width;
        enc->height = rgb->height;
        enc->pix_fmt = AV_PIX_FMT_RGB24;
        enc->time_base = (AVRational){ 1, 1 };
        ret = avcodec_open2(enc, codec, NULL);
    }
    if (ret >= 0)
        ret = avcodec_send_frame(enc, rgb);
    if (ret >= 0)
        ret = avcodec_send_frame(enc, NULL);
    if (ret >= 0)
        ret = avcodec_receive_packet(enc, pkt);
    if (ret >= 0) {
        *data = av_memdup(pkt->data, pkt->size);
        *size = pkt->size;
        if (!*data)
            ret = AVERROR(ENOMEM);
    }
    avcodec_free_context(&enc);
    av_packet_free(&pkt);
    return ret;
}

/* ------------------------------------------------------------------ */
/* text                                                                 */

void vkcu_html_text(FILE *f, const char *s, int markup)
{
    const unsigned char *u = (const unsigned char *)s;
    while (*u) {
        int len = vkcu_utf8_length(u);
        if (len == 1 && (*u < 0x20 || *u == 0x7f))
            len = 0; /* a control character: shown, not obeyed */
        if (!len) {
            fprintf(f, markup ? "<span class=\"esc\">\\x%02X</span>" : "\\x%02X", *u);
            u++;
            continue;
        }
        switch (*u) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fwrite(u, 1, (size_t)len, f);
        }
        u += len;
    }
}

void vkcu_html_begin(FILE *f, const char *title_prefix, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"generator\" content=\"vkcu\">\n<title>", f);
    vkcu_html_text(f, title_prefix, 0);
    vkcu_html_text(f, title, 0);
    /* the page's only styles: no font or stylesheet is fetched */
    fputs("</title>\n<style>\n"
          "body { font: 14px/1.4 sans-serif; margin: 1.5em; color: #1a1a1a; background: #fafafa; }\n"
          "h1 { font-size: 1.4em; } h2 { font-size: 1.2em; margin-top: 1.6em; } h3 { font-size: 1em; }\n"
          "table { border-collapse: collapse; } th, td { text-align: left; padding: 3px 10px; vertical-align: top; }\n"
          "table.cases td, table.cases th { border-bottom: 1px solid #ddd; }\n"
          ".pass { color: #1a7f37; font-weight: bold; } .fail { color: #c0161b; font-weight: bold; }\n"
          ".skip { color: #7a6000; font-weight: bold; }\n"
          ".esc { background: #ffe3a3; font-family: monospace; }\n"
          ".name { font-family: monospace; word-break: break-all; }\n"
          "figure { margin: 0.5em 0; } figcaption { font-weight: bold; }\n"
          "svg.chart { background: #fff; border: 1px solid #ccc; max-width: 100%; height: auto; }\n"
          "svg .grid { stroke: #e4e4e4; stroke-width: 1; } svg .axis { stroke: #888; stroke-width: 1; }\n"
          "svg text { font: 11px sans-serif; fill: #444; }\n"
          "svg .series { fill: none; stroke-width: 1.5; stroke-linejoin: round; }\n"
          "svg .worst { stroke: #c0161b; stroke-width: 1; stroke-dasharray: 4 3; }\n"
          "ul.legend { list-style: none; padding: 0; margin: 0.3em 0; }\n"
          "ul.legend li { display: inline-block; margin-right: 1.2em; }\n"
          "ul.legend span { display: inline-block; width: 14px; height: 3px; vertical-align: middle; margin-right: 4px; }\n"
          "div.thumbs { display: flex; flex-wrap: wrap; gap: 10px; }\n"
          "div.thumbs img { image-rendering: pixelated; border: 1px solid #ccc; background: #fff; }\n"
          "</style>\n</head>\n<body>\n", f);
}

void vkcu_html_end(FILE *f)
{
    fputs("</body>\n</html>\n", f);
}

/* ------------------------------------------------------------------ */
/* charts                                                               */

enum { CHART_W = 900, CHART_H = 240, PAD_L = 56, PAD_R = 16, PAD_T = 14, PAD_B = 34 };
#define PLOT_W (CHART_W - PAD_L - PAD_R)
#define PLOT_H (CHART_H - PAD_T - PAD_B)

typedef struct series {
    const char *label;
    const char *colour;
    int kind;                    /* 0 PSNR of component `comp`, 1 SSIM All, 2 VMAF */
    int comp;
} series;

static double series_value(const series *s, const vkcu_plot_row *r)
{
    return s->kind == 0 ? r->psnr[s->comp] : s->kind == 1 ? r->ssim_all : r->vmaf;
}

/* A step of 1, 2 or 5 times a power of ten giving at most `ticks` ticks. */
static double nice_step(double range, int ticks)
{
    double raw = range / ticks, mag = pow(10, floor(log10(raw)));
    static const double m[] = { 1, 2, 5, 10 };
    for (int i = 0; i < 4; i++)
        if (m[i] * mag >= raw)
            return m[i] * mag;
    return 10 * mag;
}

typedef struct axis {
    double lo, hi;               /* the value range drawn */
    double step;
    int top_is_identical;        /* +inf values drawn at hi, labelled so */
} axis;

static double x_of(double secs, double t1)
{
    return PAD_L + (t1 > 0 ? secs / t1 : 0) * PLOT_W;
}

static double y_of(const axis *ax, double v)
{
    if (isnan(v) || v < ax->lo)
        v = ax->lo;
    if (v > ax->hi)
        v = ax->hi;
    return PAD_T + (ax->hi - v) / (ax->hi - ax->lo) * PLOT_H;
}

static void chart(FILE *f, const vkcu_compare_plot *p, const char *id, const char *suffix, const char *title,
                  const series *ss, int ns, axis ax)
{
    double t1 = 0;
    for (int64_t i = 0; i < p->nb_rows; i++)
        t1 = fmax(t1, p->rows[i].secs);
    double tstep = t1 > 0 ? nice_step(t1, 10) : 1;
    fprintf(f, "<figure class=\"chart\" id=\"%s-%s\">\n<figcaption>%s</figcaption>\n", id, suffix, title);
    fprintf(f, "<svg class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s\">\n",
            CHART_W, CHART_H, CHART_W, CHART_H, title);
    for (double v = ceil(ax.lo / ax.step) * ax.step; v <= ax.hi + 1e-9; v += ax.step) {
        double y = y_of(&ax, v);
        fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", PAD_L, y, PAD_L + PLOT_W, y);
        if (ax.top_is_identical && v > ax.hi - ax.step / 2)
            fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">identical</text>\n", PAD_L - 4, y + 4);
        else
            fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", PAD_L - 4, y + 4, v);
    }
    for (double t = 0; t1 > 0 && t <= t1 + 1e-9; t += tstep) {
        double x = x_of(t, t1);
        fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", x, PAD_T, x, PAD_T + PLOT_H);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", x, PAD_T + PLOT_H + 14, t);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">time from the first frame (s)</text>\n",
            PAD_L + PLOT_W / 2, CHART_H - 4);
    fprintf(f, "<rect class=\"axis\" fill=\"none\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n", PAD_L, PAD_T,
            PLOT_W, PLOT_H);
    for (int k = 0; k < p->nb_worst; k++) {
        double x = x_of(p->worst[k].secs, t1);
        fprintf(f, "<a href=\"#%s-worst-%d\"><line class=\"worst\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>"
                "<title>frame %" PRId64 "</title></a>\n", id, k + 1, x, PAD_T, x, PAD_T + PLOT_H, p->worst[k].frame);
    }
    /* One point per paired frame, in pairing order: the point count is the
     * frame count. A single frame is a short horizontal stroke. */
    for (int s = 0; s < ns; s++) {
        fprintf(f, "<polyline class=\"series\" data-series=\"%s\" stroke=\"%s\" points=\"", ss[s].label, ss[s].colour);
        for (int64_t i = 0; i < p->nb_rows; i++)
            fprintf(f, "%s%.2f,%.2f", i ? " " : "", x_of(p->rows[i].secs, t1), y_of(&ax, series_value(&ss[s], &p->rows[i])));
        fputs("\"/>\n", f);
        if (p->nb_rows == 1) /* a line of one point draws nothing */
            fprintf(f, "<circle r=\"3\" fill=\"%s\" cx=\"%.2f\" cy=\"%.2f\"/>\n", ss[s].colour,
                    x_of(p->rows[0].secs, t1), y_of(&ax, series_value(&ss[s], &p->rows[0])));
    }
    fputs("</svg>\n<ul class=\"legend\">", f);
    for (int s = 0; s < ns; s++)
        fprintf(f, "<li><span style=\"background:%s\"></span>%s</li>", ss[s].colour, ss[s].label);
    fputs("</ul>\n</figure>\n", f);
}

/* The value range of some series: finite values only; *inf when one is +inf. */
static void value_range(const vkcu_compare_plot *p, const series *ss, int ns, double *lo, double *hi, int *inf)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    *inf = 0;
    for (int s = 0; s < ns; s++)
        for (int64_t i = 0; i < p->nb_rows; i++) {
            double v = series_value(&ss[s], &p->rows[i]);
            if (isinf(v) && v > 0)
                *inf = 1;
            else if (isfinite(v)) {
                *lo = fmin(*lo, v);
                *hi = fmax(*hi, v);
            }
        }
}

static const char *comp_colour(char c)
{
    switch (c) {
    case 'y': return "#222222";
    case 'u': return "#1f6fd0";
    case 'v': return "#d62728";
    case 'r': return "#d62728";
    case 'g': return "#2ca02c";
    case 'b': return "#1f6fd0";
    default: return "#8c8c8c";
    }
}

static void psnr_chart(FILE *f, const vkcu_compare_plot *p, const char *id)
{
    series ss[4];
    char labels[4][16];
    for (int i = 0; i < p->nb_comps && i < 4; i++) {
        snprintf(labels[i], sizeof(labels[i]), "PSNR %c", p->comp_names[i] >= 'a' ? p->comp_names[i] - 32 : p->comp_names[i]);
        ss[i] = (series){ labels[i], comp_colour(p->comp_names[i]), 0, i };
    }
    double lo, hi;
    int inf;
    value_range(p, ss, p->nb_comps, &lo, &hi, &inf);
    axis ax = { 0 };
    if (!isfinite(lo)) {
        /* every plane of every frame identical */
        lo = 0, hi = 50;
    }
    ax.step = nice_step(fmax(hi - lo, 1), 6);
    ax.lo = floor(lo / ax.step) * ax.step;
    ax.hi = ceil(hi / ax.step) * ax.step;
    if (ax.hi <= ax.lo)
        ax.hi = ax.lo + ax.step;
    if (inf) {
        ax.hi += ax.step;
        ax.top_is_identical = 1;
    }
    chart(f, p, id, "psnr", "PSNR per frame (dB)", ss, p->nb_comps, ax);
}

static void ssim_chart(FILE *f, const vkcu_compare_plot *p, const char *id)
{
    series s = { "SSIM All", "#7b3fb5", 1, 0 };
    double lo, hi;
    int inf;
    value_range(p, &s, 1, &lo, &hi, &inf);
    if (!isfinite(lo)) {
        fputs("<p>No SSIM: a plane is smaller than 8x8 samples.</p>\n", f);
        return;
    }
    axis ax = { 0 };
    ax.step = nice_step(fmax(1 - lo, 0.001), 5);
    ax.lo = floor(lo / ax.step) * ax.step;
    ax.hi = 1;
    if (ax.hi - ax.lo < ax.step)
        ax.lo = ax.hi - ax.step;
    chart(f, p, id, "ssim", "SSIM per frame (All)", &s, 1, ax);
}

/* Drawn only when VMAF was scored (`compare --vmaf`): a row's vmaf is NAN otherwise. */
static void vmaf_chart(FILE *f, const vkcu_compare_plot *p, const char *id)
{
    series s = { "VMAF", "#e07b00", 2, 0 };
    double lo, hi;
    int inf;
    value_range(p, &s, 1, &lo, &hi, &inf);
    if (!isfinite(lo))
        return;
    axis ax = { 0 };
    ax.step = nice_step(fmax(100 - fmax(lo, 0), 1), 5);
    ax.lo = fmax(0, floor(fmax(lo, 0) / ax.step) * ax.step);
    ax.hi = fmax(100, ceil(hi / ax.step) * ax.step); /* libvmaf's scores can pass 100 a little */
    if (ax.hi - ax.lo < ax.step)
        ax.lo = ax.hi - ax.step;
    chart(f, p, id, "vmaf", "VMAF per frame", &s, 1, ax);
}

static int thumb_img(FILE *f, const AVFrame *rgb, const char *alt)
{
    uint8_t *png = NULL;
    int size = 0;
    int ret = vkcu_png_encode(rgb, &png, &size);
    if (ret < 0)
        return ret;
    size_t b64len = AV_BASE64_SIZE((size_t)size);
    char *b64 = av_malloc(b64len);
    if (!b64) {
        av_free(png);
        return AVERROR(ENOMEM);
    }
    av_base64_encode(b64, (int)b64len, png, size);
    /* tiny pictures are shown at least 160 wide, without smoothing */
    int scale = rgb->width < 160 ? (160 + rgb->width - 1) / rgb->width : 1;
    fprintf(f, "<img width=\"%d\" height=\"%d\" alt=\"%s\" src=\"data:image/png;base64,%s\">", rgb->width * scale,
            rgb->height * scale, alt, b64);
    av_free(b64);
    av_free(png);
    return 0;
}

static void heat_legend(FILE *f, const char *id, int k, int max_diff)
{
    fprintf(f, "<svg width=\"160\" height=\"30\" viewBox=\"0 0 160 30\" role=\"img\" aria-label=\"colour scale\">"
            "<defs><linearGradient id=\"%s-heat-%d\">", id, k);
    for (int i = 0; i < 5; i++)
        fprintf(f, "<stop offset=\"%d%%\" stop-color=\"rgb(%d,%d,%d)\"/>", i * 25, heat_stops[i][0], heat_stops[i][1],
                heat_stops[i][2]);
    fprintf(f, "</linearGradient></defs><rect x=\"0\" y=\"0\" width=\"160\" height=\"12\" fill=\"url(#%s-heat-%d)\"/>"
            "<text x=\"0\" y=\"26\">0</text><text x=\"160\" y=\"26\" text-anchor=\"end\">%d</text></svg>", id, k,
            max_diff);
}

int vkcu_html_plot(FILE *f, const vkcu_compare_plot *p, const char *id)
{
    if (!p || !p->nb_rows) {
        fputs("<p>No per-frame metrics to plot", f);
        if (p && p->why_empty) {
            fputs(": ", f);
            vkcu_html_text(f, p->why_empty, 1);
        }
        fputs(".</p>\n", f);
        return 0;
    }
    psnr_chart(f, p, id);
    ssim_chart(f, p, id);
    vmaf_chart(f, p, id);
    if (!p->nb_worst) {
        fputs("<p>No frame differs: no worst frames to show.</p>\n", f);
        return 0;
    }
    fprintf(f, "<h3>The %d worst frame%s (lowest PSNR)</h3>\n", p->nb_worst, p->nb_worst > 1 ? "s" : "");
    for (int k = 0; k < p->nb_worst; k++) {
        const vkcu_plot_thumb *t = &p->worst[k];
        fprintf(f, "<div class=\"frame\" id=\"%s-worst-%d\">\n<p>frame %" PRId64 " (pts %.3f s): PSNR %.2f dB, "
                "SSIM %.5f, max diff %d</p>\n<div class=\"thumbs\">\n", id, k + 1, t->frame, t->secs, t->psnr_avg,
                t->ssim_all, t->max_diff);
        static const char *const what[3] = { "A", "B", "difference" };
        for (int i = 0; i < 3; i++) {
            char alt[64];
            snprintf(alt, sizeof(alt), "%s, frame %" PRId64, what[i], t->frame);
            fputs("<figure>", f);
            int ret = thumb_img(f, t->rgb[i], alt);
            if (ret < 0)
                return ret;
            fprintf(f, "<figcaption>%s</figcaption>", what[i]);
            if (i == 2)
                heat_legend(f, id, k + 1, t->max_diff);
            fputs("</figure>\n", f);
        }
        fputs("</div>\n</div>\n", f);
    }
    return 0;
}

void vkcu_html_frame_strip(FILE *f, const char *marks, int n, const char *id)
{
    static const struct { char mark; const char *colour, *label; } kinds[] = {
        { '=', "#b9dcc2", "equal" }, { 'c', "#d62728", "changed" }, { 'm', "#f0a020", "expected, missing" },
        { 'x', "#1f6fd0", "not expected" },
    };
    int counts[4] = { 0 };
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 4; k++)
            counts[k] += marks[i] == kinds[k].mark;
    int per_row = n < 100 ? (n > 0 ? n : 1) : 100;
    int rows = (n + per_row - 1) / per_row, cell = 880 / per_row < 8 ? 8 : 880 / per_row > 30 ? 30 : 880 / per_row;
    int w = per_row * cell + 20, h = rows * (cell + 4) + 20;
    fprintf(f, "<figure class=\"strip\" id=\"%s-frames\">\n<figcaption>Frames in time order</figcaption>\n", id);
    fprintf(f, "<svg class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
            "aria-label=\"frames in time order\">\n", w, h, w, h);
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (k < 3 && kinds[k].mark != marks[i])
            k++;
        fprintf(f, "<rect class=\"frame-%c\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>%d: %s"
                "</title></rect>\n", kinds[k].mark == '=' ? 'e' : kinds[k].mark, 10 + (i % per_row) * cell,
                10 + (i / per_row) * (cell + 4), cell - 1, cell, kinds[k].colour, i, kinds[k].label);
    }
    fputs("</svg>\n<ul class=\"legend\">", f);
    for (int k = 0; k < 4; k++)
        fprintf(f, "<li><span style=\"background:%s\"></span>%s: %d</li>", kinds[k].colour, kinds[k].label, counts[k]);
    fputs("</ul>\n</figure>\n", f);
}

/* ------------------------------------------------------------------ */
/* the compare page                                                     */

static const char *align_label(enum vkcu_compare_align a)
{
    return a == VKCU_ALIGN_PTS ? "pts" : a == VKCU_ALIGN_INDEX ? "index" : "start";
}

int vkcu_html_compare_page(FILE *f, const vkcu_compare_params *cp, const vkcu_compare_result *r,
                           const vkcu_compare_plot *plot)
{
    vkcu_html_begin(f, "vkcu compare: ", cp->a);
    fputs("<h1>vkcu compare</h1>\n<table class=\"summary\">\n<tr><th>A</th><td><span class=\"name\" id=\"name-a\">", f);
    vkcu_html_text(f, cp->a, 1);
    fputs("</span></td></tr>\n<tr><th>B</th><td><span class=\"name\" id=\"name-b\">", f);
    vkcu_html_text(f, cp->b, 1);
    fprintf(f, "</span></td></tr>\n<tr><th>result</th><td class=\"%s\" id=\"result\">", r->pass ? "pass" : "fail");
    vkcu_html_text(f, r->verdict, 1);
    fprintf(f, "</td></tr>\n<tr><th>frames</th><td>A %" PRId64 ", B %" PRId64 ", paired %" PRId64 ", differing %" PRId64
            "</td></tr>\n", r->frames_a, r->frames_b, r->paired, r->differing);
    if (r->metrics) {
        fputs("<tr><th>PSNR</th><td>", f);
        for (int i = 0; i < r->nb_comps; i++)
            fprintf(f, "%c: %.4f dB, ", r->comp_names[i], r->psnr[i]);
        fprintf(f, "average: %.4f dB, min: %.4f dB</td></tr>\n<tr><th>SSIM</th><td>", r->psnr_avg, r->psnr_min);
        for (int i = 0; i < r->nb_comps; i++)
            fprintf(f, "%c: %.6f, ", r->comp_names[i] - 32, r->ssim[i]);
        fprintf(f, "All: %.6f</td></tr>\n", r->ssim_all);
        if (r->vmaf)
            fprintf(f, "<tr><th>VMAF</th><td>mean: %.4f, min: %.4f (frame %" PRId64 ")</td></tr>\n", r->vmaf_mean,
                    r->vmaf_min, r->vmaf_min_index);
        /* The CLI's words (compare.c): each figure with its own frame. */
        fprintf(f, "<tr><th>max diff</th><td>%d", r->max_diff);
        if (r->max_diff_index >= 0)
            fprintf(f, " (frame %" PRId64 ")", r->max_diff_index);
        fputs("</td></tr>\n", f);
        if (r->worst_index >= 0)
            fprintf(f, "<tr><th>worst frame</th><td>%" PRId64 " (lowest PSNR: %.2f dB, max diff %d)</td></tr>\n",
                    r->worst_index, r->worst.psnr_avg, r->worst.max_diff);
    }
    if (r->first_diff >= 0)
        fprintf(f, "<tr><th>first differing frame</th><td>%" PRId64 " (pts %.3f s)</td></tr>\n", r->first_diff,
                r->first_diff_time);
    fprintf(f, "<tr><th>alignment</th><td>%s</td></tr>\n<tr><th>limits</th><td>", align_label(cp->align));
    if (cp->max_diff < 0 && isnan(cp->min_psnr) && isnan(cp->min_vmaf))
        fputs("identical frames required", f);
    if (cp->max_diff >= 0)
        fprintf(f, "max diff %d", cp->max_diff);
    if (!isnan(cp->min_psnr))
        fprintf(f, "%smin PSNR %g dB", cp->max_diff >= 0 ? ", " : "", cp->min_psnr);
    if (!isnan(cp->min_vmaf))
        fprintf(f, "%smean VMAF at least %g", cp->max_diff >= 0 || !isnan(cp->min_psnr) ? ", " : "", cp->min_vmaf);
    fputs("</td></tr>\n</table>\n<h2>Per-frame metrics</h2>\n", f);
    int ret = vkcu_html_plot(f, plot, "cmp");
    vkcu_html_end(f);
    return ret;
}
