/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu_ffv1_header_read (src/util/ffv1_header.c) against FFmpeg's own FFV1
 * encoder: global headers written with each coder type (Golomb-Rice, range
 * coding with the default table and with a custom one) and each version
 * that has one (2, 3), at 8 to 16 bits, read back as the coding asked for;
 * no header, a cut one and bytes that are not one are refused. These are
 * the headers the GPU path reads to keep Golomb-coded FFV1 off FFmpeg's
 * Vulkan decoder (gpu/vk.c).
 */
#include <stdio.h>
#include <string.h>
#include <libavcodec/avcodec.h>
#include <libavutil/opt.h>

#include "test_util.h"
#include "util/ffv1_header.h"

/* The global header FFmpeg's FFV1 encoder writes for these settings. */
static int header(int level, int coder, enum AVPixelFormat fmt, uint8_t *out, size_t cap, size_t *size)
{
    const AVCodec *c = avcodec_find_encoder(AV_CODEC_ID_FFV1);
    AVCodecContext *ctx = c ? avcodec_alloc_context3(c) : NULL;
    int ret = -1;
    if (!ctx)
        return -1;
    ctx->width = 64;
    ctx->height = 48;
    ctx->pix_fmt = fmt;
    ctx->time_base = (AVRational){ 1, 25 };
    ctx->thread_count = 1;
    ctx->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    ctx->strict_std_compliance = FF_COMPLIANCE_EXPERIMENTAL;
    char v[16];
    snprintf(v, sizeof(v), "%d", coder);
    av_opt_set(ctx->priv_data, "coder", v, 0);
    ctx->level = level;
    if (avcodec_open2(ctx, c, NULL) == 0 && ctx->extradata_size > 0 && (size_t)ctx->extradata_size <= cap) {
        memcpy(out, ctx->extradata, (size_t)ctx->extradata_size);
        *size = (size_t)ctx->extradata_size;
        ret = 0;
    }
    avcodec_free_context(&ctx);
    return ret;
}

int main(void)
{
    av_log_set_level(AV_LOG_QUIET);
    const struct { int level, coder; enum AVPixelFormat fmt; } cases[] = {
        { 3, 0, AV_PIX_FMT_YUV420P }, { 3, 1, AV_PIX_FMT_YUV420P }, { 3, 2, AV_PIX_FMT_YUV420P },
        { 3, 0, AV_PIX_FMT_YUV444P }, { 3, 1, AV_PIX_FMT_YUV444P16 }, { 3, 2, AV_PIX_FMT_YUV422P10 },
        { 2, 0, AV_PIX_FMT_YUV420P }, { 2, 1, AV_PIX_FMT_YUV420P }, { 2, 2, AV_PIX_FMT_GBRP10LE },
    };
    int n = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint8_t buf[4096];
        size_t size = 0;
        if (header(cases[i].level, cases[i].coder, cases[i].fmt, buf, sizeof(buf), &size) < 0) {
            CHECK(0, "FFmpeg's FFV1 encoder wrote no global header for level %d coder %d %s", cases[i].level,
                  cases[i].coder, av_get_pix_fmt_name(cases[i].fmt));
            continue;
        }
        int version = -1, coder = -1;
        int r = vkcu_ffv1_header_read(buf, size, &version, &coder);
        /* Range coding asked for with the default table is written with the
         * table spelled out (FFmpeg's encoder does so from version 2 on):
         * either is range coding, which is what the GPU path asks. */
        int want_range = cases[i].coder != VKCU_FFV1_GOLOMB;
        CHECK(r == 0 && version == cases[i].level &&
                  (want_range ? coder == VKCU_FFV1_RANGE || coder == VKCU_FFV1_RANGE_CUSTOM : coder == VKCU_FFV1_GOLOMB),
              "level %d coder %d %s (%zu bytes): read r=%d version %d coder %d", cases[i].level, cases[i].coder,
              av_get_pix_fmt_name(cases[i].fmt), size, r, version, coder);
        /* Cut to three bytes, or nothing: refused, never a guess. */
        CHECK(vkcu_ffv1_header_read(buf, 3, &version, &coder) < 0, "a 3-byte header was read");
        n++;
    }
    int version, coder;
    CHECK(vkcu_ffv1_header_read(NULL, 0, &version, &coder) < 0, "no header was read");
    const uint8_t ff[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    CHECK(vkcu_ffv1_header_read(ff, sizeof(ff), &version, &coder) < 0, "0xff bytes read as a header");
    const uint8_t zero[8] = { 0 };
    CHECK(vkcu_ffv1_header_read(zero, sizeof(zero), &version, &coder) < 0, "zero bytes read as a header");
    if (tu_failures)
        return 1;
    printf("test_ffv1_header: %d global headers of FFmpeg's FFV1 encoder (versions 2 and 3; Golomb-Rice, range coding "
           "with the default and a custom table; 8 to 16 bits) read back as written; cut and foreign bytes refused\n",
           n);
    return 0;
}
