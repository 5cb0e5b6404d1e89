/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Deinterlace per-sample math of the `deinterlace` operator, shared by the
 * CPU reference (src/ops/op_deint.c) and the CUDA kernel (kernels/deint.cu).
 *
 * The method is bwdif ("Bob Weaver"): the missing lines of a field are
 * interpolated with the Weston 3-field filter (w3fdif: a low-frequency part
 * from the current field's neighbouring lines and a high-frequency part from
 * the same-parity lines of the fields before and after), and the result is
 * limited by yadif's temporal and spatial checks so that static detail stays
 * sharp and moving edges do not comb. Only vertical and temporal neighbours
 * are read: columns are independent, so interleaved chroma (NV12/P010) is
 * two independent channels and no column is an edge case.
 *
 * All arithmetic is integer, in the same order as FFmpeg's bwdif filter so
 * that the outputs are the same bytes (right shifts of negative sums are
 * arithmetic on gcc and nvcc alike). Samples are plain values at the
 * stream's depth (P010 already shifted down).
 *
 * Rows: di_row_plan() says for output line y whether it is kept from the
 * current frame or interpolated, and by which variant:
 *   LINE:  the full filter (reaches 4 lines up and down);
 *   EDGE:  near the top and bottom: the mean of the lines above and below,
 *          still limited by the temporal check (and the spatial one where 2
 *          lines fit on both sides);
 *   INTRA: the first field of the stream and the last: a spatial 4-tap
 *          filter only (the field before or after is a repeat).
 * Lines that do not exist are reflected; at more than 8 bits FFmpeg tests
 * the room below and above against the sample size in bytes rather than
 * one line, and so does this (see di_row_plan), so 10-bit outputs match too.
 */
#ifndef VKCU_KERNELS_DEINT_MATH_H
#define VKCU_KERNELS_DEINT_MATH_H

#include "common.h"

/* Filter coefficients of bwdif, in units of 1/8192: the w3fdif low- and
 * high-frequency sets and the 4-tap spatial interpolator. */
#define DI_LF0 4309
#define DI_LF1 213
#define DI_HF0 5570
#define DI_HF1 3801
#define DI_HF2 1016
#define DI_SP0 5077
#define DI_SP1 981

enum { DI_ROW_COPY = 0, DI_ROW_LINE = 1, DI_ROW_EDGE = 2, DI_ROW_INTRA = 3 };

/* How one output line is made, and which lines it reads (absolute line
 * numbers; m: above, p: below). */
typedef struct di_row {
    int kind;
    int spat;          /* EDGE: whether the spatial check runs */
    int m1, p1;        /* current frame: the lines next to y */
    int m2, p2;        /* the same-parity fields: 2 lines away (LINE; EDGE with spat) */
    int m3, p3;        /* current frame: 3 lines away (LINE, INTRA) */
    int m4, p4;        /* the same-parity fields: 4 lines away (LINE) */
} di_row;

/*
 * y: the output line; h: the plane's height (at least 4); keep: the parity
 * of the lines kept from the current frame (0: even lines, the top field);
 * boundary: 1 for the stream's first field and its last, where the field on
 * one side is a repeat; wide: 1 when samples take two bytes (depth > 8).
 */
VKCU_HD di_row di_row_plan(int y, int h, int keep, int boundary, int wide)
{
    di_row r;
    int bytes = 1 + wide;
    r.kind = DI_ROW_COPY;
    r.spat = 0;
    r.m1 = r.p1 = r.m2 = r.p2 = r.m3 = r.p3 = r.m4 = r.p4 = y;
    if ((y & 1) == keep)
        return r;
    r.p1 = y + bytes < h ? y + 1 : y - 1;
    r.m1 = y > bytes - 1 ? y - 1 : y + 1;
    r.m2 = y - 2;
    r.p2 = y + 2;
    int near_edge = boundary ? (y < 3 || y + 3 >= h) : (y < 4 || y + 5 > h);
    if (near_edge) {
        r.kind = DI_ROW_EDGE;
        r.spat = !(y < 2 || y + 3 > h);
        if (!r.spat)
            r.m2 = r.p2 = y;
        return r;
    }
    if (boundary) {
        r.kind = DI_ROW_INTRA;
        r.p3 = y + 3 * bytes < h ? y + 3 : y - 1;
        r.m3 = y > 3 * bytes - 1 ? y - 3 : y + 1;
        r.m2 = r.p2 = y;
        return r;
    }
    r.kind = DI_ROW_LINE;
    r.m3 = y - 3;
    r.p3 = y + 3;
    r.m4 = y - 4;
    r.p4 = y + 4;
    return r;
}

/*
 * The samples one interpolated output sample reads. "a" is the field of
 * the missing lines' parity before the output instant, "b" the one after
 * (first field of a frame: a = previous frame, b = current; second field:
 * a = current, b = next). Entries a kind does not read may hold anything.
 */
typedef struct di_taps {
    int c, e;                   /* current frame at m1 and p1 */
    int c3m, c3p;               /* current frame at m3 and p3 */
    int pm, pp, nm, np;         /* previous and next frame at m1 and p1 */
    int a0, b0;                 /* a and b at y */
    int a2m, b2m, a2p, b2p;     /* a and b at m2 and p2 */
    int a4m, b4m, a4p, b4p;     /* a and b at m4 and p4 */
} di_taps;

VKCU_HD int di_abs(int v) { return v < 0 ? -v : v; }
VKCU_HD int di_max3(int a, int b, int c) { return vkcu_maxi(vkcu_maxi(a, b), c); }
VKCU_HD int di_min3(int a, int b, int c) { return vkcu_mini(vkcu_mini(a, b), c); }

/* One interpolated sample (kind LINE, EDGE or INTRA) of a row planned by
 * di_row_plan; maxval = (1 << depth) - 1. */
VKCU_HD int di_sample(const di_row *r, const di_taps *t, int maxval)
{
    int c = t->c, e = t->e;
    if (r->kind == DI_ROW_INTRA)
        return vkcu_clampi((DI_SP0 * (c + e) - DI_SP1 * (t->c3m + t->c3p)) >> 13, 0, maxval);
    /* temporal check (yadif): how much the picture moves around this sample */
    int d = (t->a0 + t->b0) >> 1;
    int td0 = di_abs(t->a0 - t->b0);
    int td1 = (di_abs(t->pm - c) + di_abs(t->pp - e)) >> 1;
    int td2 = (di_abs(t->nm - c) + di_abs(t->np - e)) >> 1;
    int diff = di_max3(td0 >> 1, td1, td2);
    if (!diff)
        return d;
    if (r->kind == DI_ROW_LINE || r->spat) {
        /* spatial check: allow more change where the vertical profile of
         * the fields around does not continue through the temporal mean */
        int b = ((t->a2m + t->b2m) >> 1) - c;
        int f = ((t->a2p + t->b2p) >> 1) - e;
        int dc = d - c, de = d - e;
        int mx = di_max3(de, dc, vkcu_mini(b, f));
        int mn = di_min3(de, dc, vkcu_maxi(b, f));
        diff = di_max3(diff, mn, -mx);
    }
    int v;
    if (r->kind == DI_ROW_EDGE)
        v = (c + e) >> 1;
    else if (di_abs(c - e) > td0)
        v = (((DI_HF0 * (t->a0 + t->b0) - DI_HF1 * (t->a2m + t->b2m + t->a2p + t->b2p) +
               DI_HF2 * (t->a4m + t->b4m + t->a4p + t->b4p)) >> 2) +
             DI_LF0 * (c + e) - DI_LF1 * (t->c3m + t->c3p)) >> 13;
    else
        v = (DI_SP0 * (c + e) - DI_SP1 * (t->c3m + t->c3p)) >> 13;
    if (v > d + diff)
        v = d + diff;
    else if (v < d - diff)
        v = d - diff;
    return vkcu_clampi(v, 0, maxval);
}

#endif
