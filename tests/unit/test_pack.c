/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The CPU reference of the output ring's semi-planar slot (what the chain's
 * last kernel writes for a Vulkan encoder, vkcu_cuda_to_semiplanar), checked
 * against FFmpeg's own definition of NV12 and P010: every sample of the
 * input read through its pixel format descriptor (the value, shift removed)
 * and written into an FFmpeg NV12 / P010 frame through theirs (P010: the
 * 10-bit value in the high bits, the low 6 bits zero) must equal the bytes
 * vkcu_vkencode_pack put in the slot, row for row, at the offsets and
 * pitches of vkcu_outring_semiplanar_layout; the slot's row padding stays
 * untouched. Inputs: NV12 and P010 (as Vulkan decodes them; P010's low bits
 * random, so dropping them is checked), yuv420p and yuv420p10le (software
 * decode, and the planar layouts operators may give), odd sizes and 1x1.
 * Other layouts are refused.
 */
#include <string.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/mem.h>

#include "gpu/outring_vk.h"
#include "gpu/vkencode.h"
#include "test_util.h"

#define PAD 0xA5

static AVFrame *random_frame(enum AVPixelFormat fmt, int w, int h, uint64_t seed)
{
    AVFrame *f = tu_frame(fmt, w, h);
    if (!f)
        return NULL;
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    for (int p = 0; p < av_pix_fmt_count_planes(fmt); p++) {
        int ph = p == 1 || p == 2 ? AV_CEIL_RSHIFT(h, d->log2_chroma_h) : h;
        for (int y = 0; y < ph; y++)
            for (int x = 0; x < f->linesize[p]; x++)
                f->data[p][(size_t)y * f->linesize[p] + x] = (uint8_t)(tu_rand(&seed) >> 24);
    }
    if (fmt == AV_PIX_FMT_YUV420P10LE) /* values of 10 bits, as a decoder gives them */
        for (int p = 0; p < 3; p++)
            for (int y = 0; y < (p ? (h + 1) / 2 : h); y++)
                for (int x = 0; x < (p ? (w + 1) / 2 : w); x++)
                    ((uint16_t *)(f->data[p] + (size_t)y * f->linesize[p]))[x] &= 0x3ff;
    return f;
}

static void check_case(enum AVPixelFormat fmt, int w, int h)
{
    const char *name = av_get_pix_fmt_name(fmt);
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    int depth16 = d->comp[0].depth > 8;
    enum AVPixelFormat semi = depth16 ? AV_PIX_FMT_P010LE : AV_PIX_FMT_NV12;
    size_t offset[2];
    int pitch[2];
    size_t size = vkcu_outring_semiplanar_layout(depth16, w, h, offset, pitch);
    int bytes = depth16 ? 2 : 1, cw = (w + 1) / 2, ch = (h + 1) / 2;
    CHECK(pitch[0] % 64 == 0 && pitch[1] % 64 == 0 && pitch[0] >= w * bytes && pitch[1] >= cw * 2 * bytes &&
              offset[0] == 0 && offset[1] == (size_t)pitch[0] * h && size == offset[1] + (size_t)pitch[1] * ch,
          "%s %dx%d: layout pitches %d/%d offsets %zu/%zu size %zu", name, w, h, pitch[0], pitch[1], offset[0],
          offset[1], size);

    AVFrame *in = random_frame(fmt, w, h, (uint64_t)w * 7919 + h * 31 + fmt);
    AVFrame *ref = tu_frame(semi, w, h);
    uint8_t *slot = av_malloc(size);
    if (!in || !ref || !slot) {
        CHECK(0, "out of memory");
        goto done;
    }
    /* FFmpeg's definition: the same component values, laid out as NV12/P010. */
    for (int c = 0; c < 3; c++) {
        int pw = c ? cw : w, ph = c ? ch : h;
        for (int y = 0; y < ph; y++)
            for (int x = 0; x < pw; x++)
                tu_set(ref, c, x, y, tu_get(in, c, x, y));
    }
    memset(slot, PAD, size);
    uint8_t *const dst[2] = { slot + offset[0], slot + offset[1] };
    int ret = vkcu_vkencode_pack(in, dst, pitch);
    CHECK(ret == 0, "%s %dx%d: pack refused: %s", name, w, h, av_err2str(ret));
    long diff = 0, pad = 0;
    for (int p = 0; p < 2; p++) {
        int rows = p ? ch : h, used = (p ? cw * 2 : w) * bytes;
        for (int y = 0; y < rows; y++) {
            const uint8_t *row = slot + offset[p] + (size_t)y * pitch[p];
            diff += memcmp(row, ref->data[p] + (size_t)y * ref->linesize[p], used) != 0;
            for (int x = used; x < pitch[p]; x++)
                pad += row[x] != PAD;
        }
    }
    CHECK(!diff, "%s %dx%d: %ld rows of the slot differ from FFmpeg's %s", name, w, h, diff, av_get_pix_fmt_name(semi));
    CHECK(!pad, "%s %dx%d: %ld padding bytes written", name, w, h, pad);
done:
    av_frame_free(&in);
    av_frame_free(&ref);
    av_free(slot);
}

/* The compute encoders' planar slot: vkcu_outring_layout's pitches and
 * offsets, and the CPU reference of what the GPU writes there
 * (vkcu_vkencode_pack_planar), read back through FFmpeg's definition of the
 * format: a frame whose planes point into the slot at the layout's offsets
 * and pitches must hold every sample of the input (the value, through the
 * pixel format descriptor); the padding stays untouched. */
static void check_planar(enum AVPixelFormat fmt, int w, int h)
{
    const char *name = av_get_pix_fmt_name(fmt);
    vkcu_slot_layout l;
    if (vkcu_outring_layout(fmt, w, h, &l) < 0) {
        CHECK(0, "%s %dx%d: no slot layout", name, w, h);
        return;
    }
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    int planes = av_pix_fmt_count_planes(fmt);
    CHECK(l.nb_planes == planes && l.format == fmt && l.width == w && l.height == h, "%s %dx%d: %d planes", name, w,
          h, l.nb_planes);
    size_t off = 0;
    for (int p = 0; p < l.nb_planes; p++) {
        int row = av_image_get_linesize(fmt, w, p);
        CHECK(l.offset[p] == off && l.pitch[p] % 64 == 0 && l.pitch[p] % l.texel[p] == 0 && l.pitch[p] >= row &&
                  l.pitch[p] - row < 64 * l.texel[p] && l.plane_w[p] * l.texel[p] == row,
              "%s %dx%d plane %d: offset %zu pitch %d texel %d row %d", name, w, h, p, l.offset[p], l.pitch[p],
              l.texel[p], row);
        off += (size_t)l.pitch[p] * l.plane_h[p];
    }
    CHECK(l.size == off, "%s %dx%d: size %zu, planes end at %zu", name, w, h, l.size, off);
    if (fmt == AV_PIX_FMT_NV12 || fmt == AV_PIX_FMT_P010) {
        size_t o2[2];
        int p2[2];
        size_t sz = vkcu_outring_semiplanar_layout(fmt == AV_PIX_FMT_P010, w, h, o2, p2);
        CHECK(sz == l.size && o2[1] == l.offset[1] && p2[0] == l.pitch[0] && p2[1] == l.pitch[1],
              "%s %dx%d: the semi-planar layout differs from the general one", name, w, h);
        return;
    }
    AVFrame *in = random_frame(fmt, w, h, (uint64_t)w * 131 + h * 17 + fmt);
    uint8_t *slot = av_malloc(l.size);
    AVFrame *view = av_frame_alloc();
    if (!in || !slot || !view) {
        CHECK(0, "out of memory");
        goto done;
    }
    memset(slot, PAD, l.size);
    CHECK(vkcu_vkencode_pack_planar(in, slot, l.offset, l.pitch) == 0, "%s %dx%d: refused", name, w, h);
    view->format = fmt;
    view->width = w;
    view->height = h;
    for (int p = 0; p < l.nb_planes; p++) {
        view->data[p] = slot + l.offset[p];
        view->linesize[p] = l.pitch[p];
    }
    long diff = 0, pad = 0;
    for (int c = 0; c < d->nb_components; c++) {
        int sub = (c == 1 || c == 2) && !(d->flags & AV_PIX_FMT_FLAG_RGB);
        int cw = sub ? AV_CEIL_RSHIFT(w, d->log2_chroma_w) : w, ch = sub ? AV_CEIL_RSHIFT(h, d->log2_chroma_h) : h;
        for (int y = 0; y < ch; y++)
            for (int x = 0; x < cw; x++)
                diff += tu_get(view, c, x, y) != tu_get(in, c, x, y);
    }
    for (int p = 0; p < l.nb_planes; p++)
        for (int y = 0; y < l.plane_h[p]; y++)
            for (int x = l.plane_w[p] * l.texel[p]; x < l.pitch[p]; x++)
                pad += slot[l.offset[p] + (size_t)y * l.pitch[p] + x] != PAD;
    CHECK(!diff, "%s %dx%d: %ld samples of the planar slot differ from the input", name, w, h, diff);
    CHECK(!pad, "%s %dx%d: %ld padding bytes written", name, w, h, pad);
done:
    av_frame_free(&in);
    av_frame_free(&view);
    av_free(slot);
}

int main(void)
{
    static const enum AVPixelFormat fmts[] = { AV_PIX_FMT_NV12, AV_PIX_FMT_P010LE, AV_PIX_FMT_YUV420P,
                                               AV_PIX_FMT_YUV420P10LE };
    static const int sizes[][2] = { { 1, 1 }, { 2, 2 }, { 3, 3 }, { 65, 33 }, { 70, 46 }, { 176, 144 }, { 1920, 1080 } };
    int cases = 0;
    for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++)
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++, cases++)
            check_case(fmts[f], sizes[s][0], sizes[s][1]);
    /* Only 4:2:0 at 8 or 10 bits has a semi-planar encoder layout. */
    AVFrame *other = tu_frame(AV_PIX_FMT_YUV422P, 16, 16);
    uint8_t buf[1024];
    uint8_t *const dst[2] = { buf, buf + 512 };
    const int pitch[2] = { 64, 64 };
    CHECK(other && vkcu_vkencode_pack(other, dst, pitch) == AVERROR(EINVAL), "yuv422p accepted");
    av_frame_free(&other);
    /* Planar 8- to 16-bit 4:2:0/4:2:2/4:4:4, with alpha, gray; packed RGB
     * (one plane of 3- and 8-byte texels); the semi-planar two as a case of
     * the general layout. */
    static const enum AVPixelFormat planar[] = {
        AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV420P10LE, AV_PIX_FMT_YUV420P12LE, AV_PIX_FMT_YUV420P16LE,
        AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUV422P10LE, AV_PIX_FMT_YUV422P12LE, AV_PIX_FMT_YUV422P16LE,
        AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUV444P10LE, AV_PIX_FMT_YUV444P12LE, AV_PIX_FMT_YUV444P16LE,
        AV_PIX_FMT_YUVA420P, AV_PIX_FMT_YUVA422P10LE, AV_PIX_FMT_YUVA444P10LE, AV_PIX_FMT_YUVA444P16LE,
        AV_PIX_FMT_GRAY8, AV_PIX_FMT_GRAY10LE, AV_PIX_FMT_RGB24, AV_PIX_FMT_RGBA64LE, AV_PIX_FMT_GBRP10LE,
        AV_PIX_FMT_NV12, AV_PIX_FMT_P010LE,
    };
    int planar_cases = 0;
    for (size_t f = 0; f < sizeof(planar) / sizeof(planar[0]); f++)
        for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++, planar_cases++)
            check_planar(planar[f], sizes[z][0], sizes[z][1]);
    /* No slot layout for hardware, bitstream or palette formats, nor empty frames. */
    vkcu_slot_layout l;
    CHECK(vkcu_outring_layout(AV_PIX_FMT_VULKAN, 16, 16, &l) == AVERROR(EINVAL) &&
              vkcu_outring_layout(AV_PIX_FMT_MONOWHITE, 16, 16, &l) == AVERROR(EINVAL) &&
              vkcu_outring_layout(AV_PIX_FMT_PAL8, 16, 16, &l) == AVERROR(EINVAL) &&
              vkcu_outring_layout(AV_PIX_FMT_YUV420P, 0, 16, &l) == AVERROR(EINVAL),
          "a format without a slot layout accepted");
    if (tu_failures)
        return 1;
    printf("test_pack: %d cases (NV12, P010, yuv420p, yuv420p10 at 7 sizes): the slot's NV12/P010 bytes equal "
           "FFmpeg's definition, padding untouched; yuv422p refused; %d planar slot cases (8- to 16-bit 4:2:0/4:2:2/"
           "4:4:4, alpha, gray, packed RGB, 1x1 to 1920x1080): layout and samples as FFmpeg defines them, padding "
           "untouched; hardware/bitstream/palette formats refused: ok\n", cases, planar_cases);
    return 0;
}
