/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Hash expectations: the frames a case produced against the frames its
 * manifest expects, paired by timestamp, with the differences counted and
 * the first one described.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <libavutil/mathematics.h>

#include "manifest_priv.h"

static int entries_equal(const vkcu_hash_entry *a, const vkcu_hash_entry *b)
{
    return a->size == b->size && a->duration == b->duration && !strcmp(a->hash, b->hash);
}

/* Pairs the produced and the expected frames by pts (so one lost frame is
 * one missing frame) and counts the differences; `first` describes the
 * first of them. marks (room for got->nb + want->nb, or NULL) receives one
 * mark per frame in time order, as vkcu_html_frame_strip draws them.
 * Returns the number of frames in that order. */
int vkcu_manifest_diff_lists(const vkcu_hash_list *got, const vkcu_hash_list *want, int exclude_concealed, hash_diff *d,
                             char *marks)
{
    int nb_marks = 0;
    memset(d, 0, sizeof(*d));
    AVRational tb = got->tb.num > 0 ? got->tb : want->tb;
    AVRational wtb = want->tb.num > 0 ? want->tb : tb;
    int i = 0, j = 0;
    while (i < got->nb || j < want->nb) {
        const vkcu_hash_entry *g = i < got->nb ? &got->entries[i] : NULL;
        const vkcu_hash_entry *w = j < want->nb ? &want->entries[j] : NULL;
        int64_t wpts = w ? av_rescale_q(w->pts, wtb, tb) : 0;
        if (g && w && g->pts == wpts) {
            const int concealed = g->concealed || w->concealed, equal = entries_equal(g, w);
            d->concealed += concealed;
            d->concealed_changed += concealed && !equal;
            if (!equal && !(concealed && exclude_concealed)) {
                if (!d->changed && !d->missing && !d->extra) {
                    if (strcmp(g->hash, w->hash))
                        snprintf(d->first, sizeof(d->first), "frame %d (pts %" PRId64 "): hash %s, expected %s", i,
                                 g->pts, g->hash, w->hash);
                    else
                        snprintf(d->first, sizeof(d->first),
                                 "frame %d (pts %" PRId64 "): size %d duration %" PRId64 ", expected size %d duration %"
                                 PRId64, i, g->pts, g->size, g->duration, w->size, w->duration);
                }
                d->changed++;
            }
            if (marks)
                marks[nb_marks] = equal || (concealed && exclude_concealed) ? '=' : 'c';
            nb_marks++;
            i++, j++;
        } else if (!w || (g && g->pts < wpts)) {
            if (!d->changed && !d->missing && !d->extra)
                snprintf(d->first, sizeof(d->first), "frame %d (pts %" PRId64 ") is not expected", i, g->pts);
            d->extra++;
            if (marks)
                marks[nb_marks] = 'x';
            nb_marks++;
            i++;
        } else {
            if (!d->changed && !d->missing && !d->extra)
                snprintf(d->first, sizeof(d->first), "expected frame %d (pts %" PRId64 ") is missing", j, w->pts);
            d->missing++;
            if (marks)
                marks[nb_marks] = 'm';
            nb_marks++;
            j++;
        }
    }
    return nb_marks;
}

/* "; 3 concealed by the decoder (2 differ, left out)": frames marked in
 * either list, said apart from real differences. */
void vkcu_manifest_describe_concealed(const hash_diff *d, int exclude, char *out, size_t n)
{
    out[0] = 0;
    if (d->concealed && exclude)
        snprintf(out, n, "; %d concealed by the decoder (%d differ, left out)", d->concealed, d->concealed_changed);
    else if (d->concealed_changed)
        snprintf(out, n, "; %d of them concealed by the decoder (concealed = exclude leaves those out)",
                 d->concealed_changed);
    else if (d->concealed)
        snprintf(out, n, "; %d concealed by the decoder, equal", d->concealed);
}

void vkcu_manifest_describe_diff(const hash_diff *d, int exclude, int got, int want, char *out, size_t n)
{
    char concealed[128];
    vkcu_manifest_describe_concealed(d, exclude, concealed, sizeof(concealed));
    if (d->missing || d->extra)
        snprintf(out, n, "%d frames, expected %d (%d missing, %d not expected, %d changed%s); first: %s", got, want,
                 d->missing, d->extra, d->changed, concealed, d->first);
    else
        snprintf(out, n, "%d of %d frames differ%s; first: %s", d->changed, want, concealed, d->first);
}
