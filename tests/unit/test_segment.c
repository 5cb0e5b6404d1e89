/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cut points of parallel decoding (core/segment.h), on packets built
 * here byte by byte:
 * - H.264: an IDR slice is a cut; a non-IDR I slice (a recovery point, what
 *   MP4 marks as a sync sample in open GOPs) and a P slice are not; an
 *   access unit of parameter sets and SEI alone has no picture;
 * - HEVC: IDR_W_RADL, IDR_N_LP and the three BLA types are clean cuts, CRA
 *   a cut with leading pictures, RADL and RASL told apart, trailing
 *   pictures no cut;
 * - both framings: Annex B start codes (3 and 4 bytes) and avcC/hvcC
 *   length prefixes of 1, 2 and 4 bytes (read from the extradata);
 * - the parameter sets kept: each distinct one once, one seen again moved
 *   to the end (the last with its id is in force), and the packet made for
 *   a piece's decoder is them, in the stream's framing, then the packet.
 */
#include <string.h>
#include <libavcodec/packet.h>

#include "core/segment.h"
#include "test_util.h"

/* Appends NAL units (header bytes + a little payload) in a framing. */
static size_t put_nal(uint8_t *out, size_t at, int length_size, const uint8_t *nal, size_t len)
{
    if (length_size) {
        for (int i = length_size - 1; i >= 0; i--)
            out[at++] = (uint8_t)(len >> (8 * i));
    } else {
        out[at++] = 0;
        out[at++] = 0;
        if (at & 1)
            out[at++] = 0; /* 4-byte start codes now and then */
        out[at++] = 1;
    }
    memcpy(out + at, nal, len);
    return at + len;
}

static vkcu_nal_reader reader(enum AVCodecID codec, int length_size)
{
    AVCodecParameters par = { .codec_id = codec };
    uint8_t extra[32] = { 0 };
    char why[64];
    if (length_size && codec == AV_CODEC_ID_H264) {
        extra[0] = 1;
        extra[4] = (uint8_t)(0xfc | (length_size - 1));
        par.extradata = extra;
        par.extradata_size = 7;
    } else if (length_size) {
        extra[0] = 1;
        extra[21] = (uint8_t)(0xfc | (length_size - 1));
        par.extradata = extra;
        par.extradata_size = 23;
    }
    vkcu_nal_reader r;
    CHECK(vkcu_nal_reader_init(&r, &par, why, sizeof(why)) == 1, "%s: no reader", avcodec_get_name(codec));
    CHECK(r.length_size == length_size, "length size %d read as %d", length_size, r.length_size);
    return r;
}

static void check_h264(int ls)
{
    vkcu_nal_reader r = reader(AV_CODEC_ID_H264, ls);
    const uint8_t aud[] = { 0x09, 0xf0 }, sps[] = { 0x67, 0x64, 0x00, 0x1f, 0xac }, pps[] = { 0x68, 0xee, 0x3c, 0x80 };
    const uint8_t sei[] = { 0x06, 0x05, 0x01, 0x80 }, idr[] = { 0x65, 0x88, 0x84, 0x21 };
    const uint8_t islice[] = { 0x61, 0x88 }, pslice[] = { 0x41, 0x9a, 0x02 };
    uint8_t b[256];
    size_t n = put_nal(b, 0, ls, aud, sizeof(aud));
    n = put_nal(b, n, ls, sps, sizeof(sps));
    n = put_nal(b, n, ls, pps, sizeof(pps));
    size_t ps_end = n;
    n = put_nal(b, n, ls, sei, sizeof(sei));
    CHECK(vkcu_access_kind(&r, b, n) == VKCU_AU_NONE, "H.264 (length %d): parameter sets and SEI alone", ls);
    size_t with_idr = put_nal(b, n, ls, idr, sizeof(idr));
    CHECK(vkcu_access_kind(&r, b, with_idr) == VKCU_AU_CLEAN, "H.264 (length %d): IDR", ls);
    uint8_t c[256];
    size_t m = put_nal(c, 0, ls, sei, sizeof(sei));
    m = put_nal(c, m, ls, islice, sizeof(islice));
    CHECK(vkcu_access_kind(&r, c, m) == VKCU_AU_OTHER, "H.264 (length %d): an I slice (recovery point) is no cut", ls);
    m = put_nal(c, 0, ls, pslice, sizeof(pslice));
    CHECK(vkcu_access_kind(&r, c, m) == VKCU_AU_OTHER, "H.264 (length %d): P slice", ls);

    /* Parameter sets: two distinct, one of them again: stored once each, the repeated one last. */
    vkcu_param_sets ps = { 0 };
    CHECK(vkcu_param_sets_add(&ps, &r, b, with_idr) == 0 && ps.count == 2, "H.264: %d parameter sets kept", ps.count);
    const uint8_t pps2[] = { 0x68, 0xce, 0x3c, 0x80 };
    m = put_nal(c, 0, ls, pps2, sizeof(pps2));
    vkcu_param_sets_add(&ps, &r, c, m);
    vkcu_param_sets_add(&ps, &r, b, ps_end); /* SPS, PPS again */
    CHECK(ps.count == 3, "H.264: %d parameter sets after a new PPS and the old ones again", ps.count);
    AVPacket *pkt = av_packet_alloc();
    CHECK(pkt && av_new_packet(pkt, (int)m) == 0, "packet");
    memcpy(pkt->data, c, m);
    pkt->pts = 1234;
    AVPacket *pre = vkcu_param_sets_prefix(&ps, &r, pkt);
    CHECK(pre && pre->pts == 1234, "H.264: the prefixed packet keeps the packet's properties");
    /* Expected: pps2, sps, pps (the last two moved to the end), then the packet. */
    uint8_t want[256];
    size_t w = 0;
    const uint8_t *order[] = { pps2, sps, pps };
    size_t lens[] = { sizeof(pps2), sizeof(sps), sizeof(pps) };
    for (int i = 0; i < 3; i++) {
        if (ls) {
            w = put_nal(want, w, ls, order[i], lens[i]);
        } else {
            want[w++] = 0, want[w++] = 0, want[w++] = 0, want[w++] = 1; /* the prefix always uses 4 bytes */
            memcpy(want + w, order[i], lens[i]);
            w += lens[i];
        }
    }
    memcpy(want + w, c, m);
    w += m;
    CHECK(pre && (size_t)pre->size == w && !memcmp(pre->data, want, w),
          "H.264 (length %d): the prefix is the kept sets in order, then the packet (%d bytes, want %zu)", ls,
          pre ? pre->size : -1, w);
    av_packet_free(&pre);
    av_packet_free(&pkt);
    vkcu_param_sets_free(&ps);
}

static void check_hevc(int ls)
{
    vkcu_nal_reader r = reader(AV_CODEC_ID_HEVC, ls);
    static const struct { int type; enum vkcu_access_kind kind; } cases[] = {
        { 19, VKCU_AU_CLEAN }, { 20, VKCU_AU_CLEAN }, { 16, VKCU_AU_BLA }, { 17, VKCU_AU_BLA },
        { 18, VKCU_AU_BLA }, { 21, VKCU_AU_CRA }, { 6, VKCU_AU_RADL }, { 7, VKCU_AU_RADL },
        { 8, VKCU_AU_RASL }, { 9, VKCU_AU_RASL }, { 0, VKCU_AU_OTHER }, { 1, VKCU_AU_OTHER },
        { 2, VKCU_AU_OTHER }, { 5, VKCU_AU_OTHER },
    };
    const uint8_t vps[] = { 0x40, 0x01, 0x0c }, sps[] = { 0x42, 0x01, 0x01 }, pps[] = { 0x44, 0x01, 0xc1 };
    const uint8_t sei[] = { 0x4e, 0x01, 0x05 };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint8_t b[128];
        size_t n = put_nal(b, 0, ls, vps, sizeof(vps));
        n = put_nal(b, n, ls, sps, sizeof(sps));
        n = put_nal(b, n, ls, pps, sizeof(pps));
        n = put_nal(b, n, ls, sei, sizeof(sei));
        const uint8_t slice[] = { (uint8_t)(cases[i].type << 1), 0x01, 0xaf, 0x10 };
        n = put_nal(b, n, ls, slice, sizeof(slice));
        enum vkcu_access_kind k = vkcu_access_kind(&r, b, n);
        CHECK(k == cases[i].kind, "HEVC (length %d): NAL type %d read as kind %d, want %d", ls, cases[i].type, k,
              cases[i].kind);
        vkcu_param_sets ps = { 0 };
        vkcu_param_sets_add(&ps, &r, b, n);
        CHECK(ps.count == 3, "HEVC (length %d): %d parameter sets kept of VPS, SPS, PPS", ls, ps.count);
        vkcu_param_sets_free(&ps);
    }
}

int main(void)
{
    int sizes[] = { 0, 1, 2, 4 };
    for (int i = 0; i < 4; i++) {
        check_h264(sizes[i]);
        check_hevc(sizes[i]);
    }
    char why[128] = "";
    vkcu_nal_reader r;
    AVCodecParameters vp9 = { .codec_id = AV_CODEC_ID_VP9 };
    CHECK(vkcu_nal_reader_init(&r, &vp9, why, sizeof(why)) == 0 && strstr(why, "vp9"),
          "VP9 has no cut points here (why: '%s')", why);
    if (tu_failures)
        return 1;
    printf("segment: H.264 and HEVC cut points in Annex B and 1/2/4-byte length framings, parameter sets kept "
           "and put before a piece's first packet\n");
    return 0;
}
