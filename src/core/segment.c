/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Cut points of H.264 and HEVC streams for parallel decoding (segment.h).
 *
 * H.264: an IDR picture (NAL type 5) empties the decoded picture buffer and
 * nothing after it in decoding order refers to anything before it; an I
 * picture with a recovery point (what MP4 and Matroska mark as a sync
 * sample in open-GOP streams) is no cut.
 * HEVC: IDR_W_RADL, IDR_N_LP and BLA pictures are cuts alike (a decoder
 * drops a BLA's RASL pictures whether it started there or not); a CRA is a
 * cut whose RASL pictures (types 8 and 9) a decoder started at it drops,
 * so decode_par.c has the segment before decode on through them.
 */
#include <string.h>
#include <libavcodec/packet.h>
#include <libavutil/intreadwrite.h>
#include <libavutil/mem.h>

#include "segment.h"

#define PARAM_SETS_MAX_BYTES (1 << 20)

int vkcu_nal_reader_init(vkcu_nal_reader *r, const AVCodecParameters *par, char *why, size_t whylen)
{
    const uint8_t *x = par->extradata;
    int n = par->extradata_size;
    memset(r, 0, sizeof(*r));
    r->codec = par->codec_id;
    if (par->codec_id == AV_CODEC_ID_H264) {
        if (n >= 7 && x[0] == 1) /* avcC */
            r->length_size = (x[4] & 3) + 1;
        return 1;
    }
    if (par->codec_id == AV_CODEC_ID_HEVC) {
        if (n >= 23 && (x[0] || x[1] || x[2] > 1)) /* hvcC (Annex B extradata starts 00 00 00 01 or 00 00 01) */
            r->length_size = (x[21] & 3) + 1;
        return 1;
    }
    snprintf(why, whylen, "no cut points known for %s", avcodec_get_name(par->codec_id));
    return 0;
}

/* The next NAL unit from *pos: 1 with its bytes in *nal and *len, 0 at the end. */
static int next_nal(const vkcu_nal_reader *r, const uint8_t **pos, const uint8_t *end, const uint8_t **nal,
                    size_t *len)
{
    const uint8_t *p = *pos;
    if (r->length_size) {
        if (end - p < r->length_size)
            return 0;
        size_t n = 0;
        for (int i = 0; i < r->length_size; i++)
            n = n << 8 | p[i];
        p += r->length_size;
        if (n > (size_t)(end - p))
            return 0;
        *nal = p;
        *len = n;
        *pos = p + n;
        return n > 0 || *pos < end ? 1 : 0;
    }
    /* Annex B: skip to past the next 00 00 01, up to the one after. */
    while (end - p >= 3 && !(p[0] == 0 && p[1] == 0 && p[2] == 1))
        p++;
    if (end - p < 3)
        return 0;
    p += 3;
    const uint8_t *q = p;
    while (end - q >= 3 && !(q[0] == 0 && q[1] == 0 && (q[2] == 1 || q[2] == 0)))
        q++;
    if (end - q < 3)
        q = end;
    *nal = p;
    *len = (size_t)(q - p);
    *pos = q;
    return 1;
}

static int nal_type(const vkcu_nal_reader *r, const uint8_t *nal, size_t len)
{
    if (!len)
        return -1;
    return r->codec == AV_CODEC_ID_H264 ? nal[0] & 0x1f : (nal[0] >> 1) & 0x3f;
}

static int is_param_set(const vkcu_nal_reader *r, int t)
{
    return r->codec == AV_CODEC_ID_H264 ? t == 7 || t == 8 : t >= 32 && t <= 34;
}

enum vkcu_access_kind vkcu_access_kind(const vkcu_nal_reader *r, const uint8_t *data, size_t size)
{
    const uint8_t *pos = data, *end = data + size, *nal;
    size_t len;
    while (next_nal(r, &pos, end, &nal, &len)) {
        int t = nal_type(r, nal, len);
        if (r->codec == AV_CODEC_ID_H264) {
            if (t == 5)
                return VKCU_AU_CLEAN;
            if (t >= 1 && t <= 4)
                return VKCU_AU_OTHER;
            continue;
        }
        if (t < 0 || t > 31)
            continue;
        if (t >= 16 && t <= 18)
            return VKCU_AU_BLA;
        if (t == 19 || t == 20)
            return VKCU_AU_CLEAN;
        if (t == 21)
            return VKCU_AU_CRA;
        if (t == 6 || t == 7)
            return VKCU_AU_RADL;
        if (t == 8 || t == 9)
            return VKCU_AU_RASL;
        return VKCU_AU_OTHER; /* trailing, TSA, STSA and reserved VCL types */
    }
    return VKCU_AU_NONE;
}

int vkcu_param_sets_add(vkcu_param_sets *ps, const vkcu_nal_reader *r, const uint8_t *data, size_t size)
{
    const uint8_t *pos = data, *end = data + size, *nal;
    size_t len;
    while (next_nal(r, &pos, end, &nal, &len)) {
        /* Annex B: trailing zero bytes belong to the next start code. */
        while (!r->length_size && len && !nal[len - 1])
            len--;
        if (!is_param_set(r, nal_type(r, nal, len)))
            continue;
        if (r->length_size && r->length_size < 4 && len >> (8 * r->length_size)) {
            ps->overflow = 1; /* the stream's framing cannot carry it */
            return 0;
        }
        /* One seen before moves to the end: the last of those with its id is
         * the one in force (a stream going back to an earlier PPS). */
        for (size_t o = 0; o < ps->size;) {
            size_t l = AV_RB32(ps->data + o);
            if (l == len && !memcmp(ps->data + o + 4, nal, len)) {
                memmove(ps->data + o, ps->data + o + 4 + l, ps->size - o - 4 - l);
                ps->size -= 4 + l;
                ps->count--;
                break;
            }
            o += 4 + l;
        }
        if (ps->size + 4 + len > PARAM_SETS_MAX_BYTES) {
            ps->overflow = 1;
            return 0;
        }
        if (ps->size + 4 + len > ps->room) {
            size_t room = FFMAX(ps->room * 2, ps->size + 4 + len + 256);
            uint8_t *d = av_realloc(ps->data, room);
            if (!d)
                return AVERROR(ENOMEM);
            ps->data = d;
            ps->room = room;
        }
        AV_WB32(ps->data + ps->size, (uint32_t)len);
        memcpy(ps->data + ps->size + 4, nal, len);
        ps->size += 4 + len;
        ps->count++;
    }
    return 0;
}

AVPacket *vkcu_param_sets_prefix(const vkcu_param_sets *ps, const vkcu_nal_reader *r, const AVPacket *pkt)
{
    int framing = r->length_size ? r->length_size : 4;
    size_t extra = 0;
    for (size_t o = 0; o < ps->size;) {
        size_t l = AV_RB32(ps->data + o);
        extra += (size_t)framing + l;
        o += 4 + l;
    }
    AVPacket *out = av_packet_alloc();
    if (!out)
        return NULL;
    if (av_new_packet(out, (int)(extra + (size_t)pkt->size)) < 0 || av_packet_copy_props(out, pkt) < 0) {
        av_packet_free(&out);
        return NULL;
    }
    uint8_t *w = out->data;
    for (size_t o = 0; o < ps->size;) {
        size_t l = AV_RB32(ps->data + o);
        if (r->length_size) {
            for (int i = framing - 1; i >= 0; i--)
                *w++ = (uint8_t)(l >> (8 * i));
        } else {
            AV_WB32(w, 1); /* 00 00 00 01 */
            w += 4;
        }
        memcpy(w, ps->data + o + 4, l);
        w += l;
        o += 4 + l;
    }
    memcpy(w, pkt->data, (size_t)pkt->size);
    return out;
}

void vkcu_param_sets_free(vkcu_param_sets *ps)
{
    av_freep(&ps->data);
    memset(ps, 0, sizeof(*ps));
}
