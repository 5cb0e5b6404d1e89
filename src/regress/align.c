/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Alignment: each side of a comparison (a hash list or a frame source)
 * read one item at a time, with the pairing key of its head item, so that
 * frames pair by timestamp (or index, or time from the start) and one
 * dropped frame is one count mismatch, not a cascade of differences.
 */
#include <stdio.h>
#include <string.h>
#include <libavutil/mathematics.h>

#include "compare_priv.h"

/* The pairing key of the head item from its timestamp ts (time base tb),
 * into a hash list's units exactly as the hash sink rounds. */
static void set_key(side *s, const align *al, int64_t ts, AVRational tb)
{
    if (al->mode == VKCU_ALIGN_INDEX) {
        s->key = s->index;
        return;
    }
    if (al->mode == VKCU_ALIGN_START) {
        if (s->index == 0)
            s->first = ts;
        ts -= s->first;
    }
    s->key = av_rescale_q(ts, tb, al->tb);
}

/* Notes the first head item whose key does not follow the one before. */
static void check_order(side *s, const align *al)
{
    if (al->mode != VKCU_ALIGN_INDEX && s->index > 0 && s->disorder_index < 0 && s->key <= s->prev_key) {
        s->disorder_index = s->index;
        s->disorder_repeat = s->key == s->prev_key;
        s->disorder_secs = s->secs;
        s->disorder_prev_secs = s->prev_secs;
    }
    s->prev_key = s->key;
    s->prev_secs = s->secs;
}

int vkcu_side_advance(side *s, const align *al)
{
    av_frame_free(&s->frame);
    s->entry = NULL;
    if (s->have)
        s->index++;
    s->have = 0;
    if (s->is_list) {
        if (s->index >= s->list.nb)
            return 0;
        s->entry = &s->list.entries[s->index];
        s->secs = s->entry->pts * av_q2d(s->list.tb);
        set_key(s, al, s->entry->pts, s->list.tb);
        s->have = 1;
        check_order(s, al);
        return 0;
    }
    int ret = vkcu_frame_source_next(s->src, &s->frame);
    if (ret == AVERROR_EOF)
        return 0;
    if (ret < 0)
        return ret;
    int64_t rel;
    AVRational tb = s->src->tb;
    if (s->frame->pts != AV_NOPTS_VALUE) {
        rel = s->frame->pts - s->src->start;
    } else if (s->src->frame_rate.num > 0) {
        rel = av_rescale_q(s->index, av_inv_q(s->src->frame_rate), tb);
    } else {
        rel = s->index;
        tb = (AVRational){ 1, 25 };
    }
    s->secs = rel * av_q2d(tb);
    set_key(s, al, rel, tb);
    s->have = 1;
    check_order(s, al);
    return 0;
}

/* Reads a side that is a hash list (s->is_list set); a media file is left
 * for vkcu_side_open_media, once both sides' timing is known. */
int vkcu_side_open_list(side *s, const char *path, char label)
{
    memset(s, 0, sizeof(*s));
    s->path = path;
    s->label = label;
    s->index = 0;
    s->disorder_index = -1;
    int ret = 0;
    int stream = vkcu_hash_list_from_stream(path, &s->list, &ret, s->err, sizeof(s->err));
    if (stream || vkcu_hash_list_sniff(path)) {
        s->is_list = 1;
        if (!stream)
            ret = vkcu_hash_list_load(path, &s->list, s->err, sizeof(s->err));
        if (ret >= 0 && s->list.tb.num <= 0) {
            snprintf(s->err, sizeof(s->err), "%s: the hash list has no time base ('#tb 0:' line)", path);
            ret = VKCU_ERR_INPUT;
        }
    }
    return ret;
}

int vkcu_side_open_media(side *s, const vkcu_job_params *job)
{
    return s->is_list ? 0 : vkcu_frame_source_open(job, s->path, &s->src, s->err, sizeof(s->err));
}

/* Whether a side's head item is marked as decoded from damaged data. */
int vkcu_side_concealed(const side *s)
{
    return s->is_list ? s->entry->concealed : !!(s->frame->flags & AV_FRAME_FLAG_CORRUPT);
}

const char *vkcu_side_concealed_where(const side *a, const side *b)
{
    int ca = vkcu_side_concealed(a), cb = vkcu_side_concealed(b);
    return ca && cb ? "in A and B" : ca ? "in A" : "in B";
}

void vkcu_side_close(side *s)
{
    av_frame_free(&s->frame);
    vkcu_frame_source_close(&s->src);
    vkcu_hash_list_free(&s->list);
}
