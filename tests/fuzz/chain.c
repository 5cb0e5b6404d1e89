/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: the operator chain parser (src/ops/chain.c), then the chain's
 * init and a few frames through the CPU reference operators.
 *
 * Input: byte 0 picks the input picture (format, colour, odd or even
 * size); the rest is the --chain text. A chain that parses must either be
 * refused by init with a message, or run: an operator that fails on a
 * frame after init accepted its input is a bug a user would hit mid-file.
 */
#include <libavutil/frame.h>
#include <libavutil/pixdesc.h>

#include "fuzz.h"
#include "ops/op.h"
#include "core/vkcu.h"

typedef struct input_kind {
    enum AVPixelFormat fmt;
    enum AVColorSpace matrix;
    enum AVColorPrimaries primaries;
    enum AVColorTransferCharacteristic transfer;
    int hdr_metadata;
} input_kind;

static const input_kind kinds[8] = {
    { AV_PIX_FMT_YUV420P, AVCOL_SPC_BT709, AVCOL_PRI_BT709, AVCOL_TRC_BT709, 0 },
    { AV_PIX_FMT_NV12, AVCOL_SPC_BT470BG, AVCOL_PRI_BT470BG, AVCOL_TRC_SMPTE170M, 0 },
    { AV_PIX_FMT_P010LE, AVCOL_SPC_BT2020_NCL, AVCOL_PRI_BT2020, AVCOL_TRC_SMPTE2084, 1 },
    { AV_PIX_FMT_YUV420P10LE, AVCOL_SPC_BT2020_NCL, AVCOL_PRI_BT2020, AVCOL_TRC_ARIB_STD_B67, 0 },
    { AV_PIX_FMT_YUV422P, AVCOL_SPC_BT709, AVCOL_PRI_BT709, AVCOL_TRC_BT709, 0 },
    { AV_PIX_FMT_YUV444P10LE, AVCOL_SPC_BT2020_NCL, AVCOL_PRI_BT2020, AVCOL_TRC_SMPTE2084, 0 },
    { AV_PIX_FMT_YUV420P, AVCOL_SPC_UNSPECIFIED, AVCOL_PRI_UNSPECIFIED, AVCOL_TRC_UNSPECIFIED, 0 },
    { AV_PIX_FMT_GBRP, AVCOL_SPC_RGB, AVCOL_PRI_BT709, AVCOL_TRC_IEC61966_2_1, 0 },
};

/* Frames per input: enough for the temporal operators to emit and flush. */
#define FRAMES 3

static AVFrame *alloc_frame(const vkcu_video_format *f)
{
    AVFrame *fr = av_frame_alloc();
    if (!fr)
        abort();
    fr->format = f->pix_fmt;
    fr->width = f->width;
    fr->height = f->height;
    if (av_frame_get_buffer(fr, 0) < 0)
        abort();
    return fr;
}

/* Sample values from 0 to the largest the depth allows, different per frame. */
static void fill(AVFrame *fr, int seed)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fr->format);
    int wide = d->comp[0].depth > 8;
    unsigned mask = (1u << d->comp[0].depth) - 1;
    for (int p = 0; p < 4 && fr->data[p]; p++) {
        int h = p && !(d->flags & AV_PIX_FMT_FLAG_RGB) ? AV_CEIL_RSHIFT(fr->height, d->log2_chroma_h) : fr->height;
        for (int y = 0; y < h; y++) {
            uint8_t *row = fr->data[p] + (ptrdiff_t)y * fr->linesize[p];
            for (int x = 0; x < fr->linesize[p] / (wide ? 2 : 1); x++) {
                unsigned v = (unsigned)(x * 37 + y * 101 + seed * 59 + p * 13) * 2654435761u >> 7;
                v = (x + y + seed) % 5 == 0 ? mask : (x + y) % 7 == 0 ? 0 : v & mask;
                if (wide)
                    ((uint16_t *)row)[x] = (uint16_t)(d->comp[0].shift ? v << d->comp[0].shift : v);
                else
                    row[x] = (uint8_t)v;
            }
        }
    }
}

static void feed(vkcu_chain *chain, int i, const AVFrame *in)
{
    if (i == chain->nb_ops)
        return;
    vkcu_op *op = chain->ops[i];
    const int flushing = !in;
    for (;;) {
        AVFrame *out = alloc_frame(&op->out);
        int ret = op->cls->run_cpu(op, in, out);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF) {
            av_frame_free(&out);
            break;
        }
        FUZZ_CHECK(ret >= 0, "operator %s failed on a frame its init accepted (%d)", op->cls->name, ret);
        FUZZ_CHECK(out->width == op->out.width && out->height == op->out.height && out->format == op->out.pix_fmt,
                   "operator %s wrote a frame unlike its declared output", op->cls->name);
        feed(chain, i + 1, out);
        av_frame_free(&out);
        if (!flushing && ret != VKCU_OP_MORE)
            return;
        in = NULL; /* op.h: the ready outputs, or the rest of the flush */
    }
    if (flushing)
        feed(chain, i + 1, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    if (!size)
        return 0;
    const input_kind *k = &kinds[data[0] & 7];
    char *text = fuzz_strndup(data + 1, size - 1);
    vkcu_chain chain;
    char err[512] = "";
    int ret = vkcu_chain_parse(text, &chain, err, sizeof(err));
    if (ret < 0) {
        FUZZ_CHECK(ret == VKCU_ERR_USAGE, "parse returned %d", ret);
        fuzz_check_message(err, "chain: column ");
        free(text);
        return 0;
    }
    FUZZ_CHECK(chain.nb_ops >= 0 && chain.nb_ops <= 16, "%d operators", chain.nb_ops);
    FUZZ_CHECK(chain.nb_ops > 0 || !text[0], "'%s' parsed to no operator", text);

    vkcu_video_format in = { 0 }, out;
    in.pix_fmt = k->fmt;
    in.width = data[0] & 8 ? 7 : 8;
    in.height = data[0] & 16 ? 5 : 6;
    in.matrix = k->matrix;
    in.primaries = k->primaries;
    in.transfer = k->transfer;
    in.range = data[0] & 32 ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG;
    in.chroma_loc = data[0] & 64 ? AVCHROMA_LOC_TOPLEFT : AVCHROMA_LOC_LEFT;
    in.time_base = (AVRational){ 1, 25 };
    in.frame_rate = (AVRational){ 25, 1 };
    if (k->hdr_metadata) {
        in.has_mastering = in.has_cll = 1;
        in.mastering.has_luminance = in.mastering.has_primaries = 1;
        in.mastering.max_luminance = av_make_q(1000, 1);
        in.mastering.min_luminance = av_make_q(1, 10000);
        for (int c = 0; c < 3; c++)
            for (int xy = 0; xy < 2; xy++)
                in.mastering.display_primaries[c][xy] = av_make_q(c * 2 + xy + 1, 10);
        in.mastering.white_point[0] = av_make_q(3127, 10000);
        in.mastering.white_point[1] = av_make_q(3290, 10000);
        in.cll.MaxCLL = 1000;
        in.cll.MaxFALL = 400;
    }
    ret = vkcu_chain_init(&chain, &in, &out, err, sizeof(err));
    /* Frames run only through chains whose every picture is at most 4M
     * samples: `scale=10086` makes 10086x7564 from 8x6, correct but tens of
     * seconds for 3 frames in this build, which libFuzzer's 10 s bound calls
     * a hang. The parse and init of such chains are still checked. */
    int64_t largest = 0;
    for (int i = 0; ret >= 0 && i < chain.nb_ops; i++)
        largest = FFMAX(largest, (int64_t)chain.ops[i]->out.width * chain.ops[i]->out.height);
    if (ret < 0) {
        fuzz_check_message(err, "operator ");
    } else if (largest <= (int64_t)1 << 22) {
        for (int n = 0; n < FRAMES; n++) {
            AVFrame *fr = alloc_frame(&in);
            fill(fr, n);
            fr->pts = n;
            fr->duration = 1;
            FUZZ_CHECK(vkcu_format_to_frame(&in, fr) >= 0, "side data");
            feed(&chain, 0, fr);
            av_frame_free(&fr);
        }
        feed(&chain, 0, NULL);
    }
    vkcu_chain_free(&chain);
    free(text);
    return 0;
}
