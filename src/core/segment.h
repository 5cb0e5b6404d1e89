/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where a stream can be cut for parallel decoding (segment.c): the access
 * units from which a fresh decoder gives exactly the pictures a decoder
 * that has run from the start gives, read from the bitstream (not from the
 * container's key flag, which marks H.264 recovery points and HEVC CRA
 * pictures alike), and the parameter sets a fresh decoder must be handed
 * first. Pure functions on packet bytes; decode_par.c cuts and schedules.
 */
#ifndef VKCU_CORE_SEGMENT_H
#define VKCU_CORE_SEGMENT_H

#include <stddef.h>
#include <stdint.h>
#include <libavcodec/codec_par.h>

enum vkcu_access_kind {
    VKCU_AU_OTHER = 0,  /* decodes from earlier pictures: no cut here */
    VKCU_AU_CLEAN,      /* H.264 IDR; HEVC IDR: a cut, nothing of before is used */
    VKCU_AU_CRA,        /* HEVC CRA: a cut whose RASL pictures still need the segment before */
    VKCU_AU_RADL,       /* HEVC leading pictures decodable from their CRA */
    VKCU_AU_RASL,       /* HEVC leading pictures that refer to pictures before their CRA */
    VKCU_AU_NONE,       /* no picture (parameter sets, SEI only) */
    VKCU_AU_BLA,        /* HEVC BLA: a cut like an IDR, but its reference picture set still names
                         * pictures of before, which a decoder started there makes up unavailable */
};

typedef struct vkcu_nal_reader {
    enum AVCodecID codec;  /* AV_CODEC_ID_H264 or AV_CODEC_ID_HEVC */
    int length_size;       /* 1..4: length-prefixed NAL units (avcC/hvcC); 0: Annex B start codes */
} vkcu_nal_reader;

/* Whether streams of this codec can be cut (H.264, HEVC), and how their
 * packets' NAL units are framed (from the extradata). 1, or 0 with why. */
int vkcu_nal_reader_init(vkcu_nal_reader *r, const AVCodecParameters *par, char *why, size_t whylen);
/* The kind of the access unit in data (its first slice's NAL type). */
enum vkcu_access_kind vkcu_access_kind(const vkcu_nal_reader *r, const uint8_t *data, size_t size);

/* The parameter sets (H.264 SPS/PPS, HEVC VPS/SPS/PPS) a stream has
 * carried in its packets so far, in order, each distinct one once: what a
 * decoder started at a later cut is given before the cut's own bytes. */
typedef struct vkcu_param_sets {
    uint8_t *data;   /* the NAL units, each with a 4-byte big-endian length */
    size_t size, room;
    int count;
    int overflow;    /* more than the store keeps: no more cuts */
} vkcu_param_sets;

/* Adds the parameter sets of a packet. 0, or AVERROR(ENOMEM). */
int vkcu_param_sets_add(vkcu_param_sets *ps, const vkcu_nal_reader *r, const uint8_t *data, size_t size);
/* A packet made of the stored parameter sets (in the stream's framing)
 * followed by pkt's bytes, with pkt's properties. NULL when out of memory. */
struct AVPacket *vkcu_param_sets_prefix(const vkcu_param_sets *ps, const vkcu_nal_reader *r,
                                        const struct AVPacket *pkt);
void vkcu_param_sets_free(vkcu_param_sets *ps);

#endif
