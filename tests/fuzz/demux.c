/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: opening and decoding a media file through vkcu's own demux
 * and decode stages (src/core/demux.c, src/core/decode.c) and frame hash, the path
 * every verb starts with. The input is the file's bytes, read through an
 * AVIOContext over memory.
 *
 * FFmpeg itself is not instrumented for coverage here (it is the cached
 * static build), so this target mostly guards vkcu's handling of what
 * libavformat/libavcodec return for damaged files. Work per input is
 * bounded so that one run stays fast: 64 packets, 8 frames, 1 Mpixel.
 */
#include <libavformat/avio.h>
#include <libavutil/mem.h>

#include "fuzz.h"
#include "core/decode.h"
#include "core/sink.h"

#define NAME "fuzz-input"
#define MAX_PACKETS 64
#define MAX_FRAMES 8
#define MAX_PIXELS (1 << 20)

typedef struct mem_reader {
    const uint8_t *data;
    size_t size, pos;
} mem_reader;

static int mem_read(void *opaque, uint8_t *buf, int n)
{
    mem_reader *r = opaque;
    size_t left = r->size - r->pos;
    if (!left)
        return AVERROR_EOF;
    if ((size_t)n > left)
        n = (int)left;
    memcpy(buf, r->data + r->pos, (size_t)n);
    r->pos += (size_t)n;
    return n;
}

static int64_t mem_seek(void *opaque, int64_t offset, int whence)
{
    mem_reader *r = opaque;
    switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE: return (int64_t)r->size;
    case SEEK_SET: break;
    case SEEK_CUR: offset += (int64_t)r->pos; break;
    case SEEK_END: offset += (int64_t)r->size; break;
    default: return AVERROR(EINVAL);
    }
    if (offset < 0 || offset > (int64_t)r->size)
        return AVERROR(EINVAL);
    r->pos = (size_t)offset;
    return offset;
}

static void decode_frames(vkcu_decoder *dec, AVFrame *frame, int *frames)
{
    while (*frames < MAX_FRAMES && vkcu_decoder_receive(dec, frame) == 0) {
        char hex[68];
        int size = 0;
        FUZZ_CHECK(frame->width > 0 && frame->height > 0, "decoded a %dx%d frame", frame->width, frame->height);
        int ret = vkcu_frame_hash(frame, VKCU_HASH_MD5, hex, sizeof(hex), &size);
        FUZZ_CHECK(ret >= 0 || ret == VKCU_ERR_INPUT || ret == VKCU_ERR_USAGE, "frame hash returned %d", ret);
        if (ret >= 0)
            FUZZ_CHECK(strlen(hex) == 32 && size > 0, "hash '%s' of %d bytes", hex, size);
        av_frame_unref(frame);
        (*frames)++;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    mem_reader r = { data, size, 0 };
    uint8_t *buf = av_malloc(4096);
    AVIOContext *pb = buf ? avio_alloc_context(buf, 4096, 0, &r, mem_read, NULL, mem_seek) : NULL;
    FUZZ_CHECK(pb, "avio_alloc_context");

    vkcu_demux *d = NULL;
    vkcu_decoder *dec = NULL;
    char err[1024] = "";
    int ret = vkcu_demux_open_io(NAME, pb, &d, err, sizeof(err));
    if (ret < 0) {
        FUZZ_CHECK(ret == VKCU_ERR_INPUT, "demux open returned %d", ret);
        fuzz_check_message(err, NAME ": ");
        goto done;
    }
    const AVCodecParameters *par = d->video->codecpar;
    FUZZ_CHECK(par->width > 0 && par->height > 0, "opened a %dx%d video stream", par->width, par->height);
    if ((int64_t)par->width * par->height > MAX_PIXELS)
        goto done;
    ret = vkcu_decoder_open(d, NULL, 1, &dec, err, sizeof(err));
    if (ret < 0) {
        FUZZ_CHECK(ret == VKCU_ERR_INPUT, "decoder open returned %d", ret);
        fuzz_check_message(err, NAME ": ");
        goto done;
    }
    /* Read at each get_buffer: a damaged header cannot make it allocate more. */
    dec->avctx->max_pixels = MAX_PIXELS;
    AVPacket *pkt = av_packet_alloc();
    AVFrame *frame = av_frame_alloc();
    FUZZ_CHECK(pkt && frame, "allocation");
    int frames = 0;
    for (int n = 0; n < MAX_PACKETS && frames < MAX_FRAMES; n++) {
        ret = vkcu_demux_read(d, pkt, 1, NULL, err, sizeof(err)); /* strict: damage is a message to check */
        if (ret == AVERROR_EOF)
            break;
        if (ret < 0) {
            FUZZ_CHECK(ret == VKCU_ERR_INPUT, "demux read returned %d", ret);
            fuzz_check_message(err, NAME ": ");
            break;
        }
        if (pkt->stream_index == d->video_index) {
            ret = vkcu_decoder_send(dec, pkt, 0, err, sizeof(err));
            if (ret < 0 && ret != AVERROR(EAGAIN) && ret != AVERROR_EOF) {
                FUZZ_CHECK(ret == VKCU_ERR_INPUT, "decoder send returned %d", ret);
                fuzz_check_message(err, NAME ": ");
                av_packet_unref(pkt);
                break;
            }
            decode_frames(dec, frame, &frames);
        }
        av_packet_unref(pkt);
    }
    if (vkcu_decoder_send(dec, NULL, 0, err, sizeof(err)) >= 0)
        decode_frames(dec, frame, &frames);
    if (getenv("VKCU_FUZZ_VERBOSE")) /* what a replayed input did */
        fprintf(stderr, "%s %dx%d: %d frames\n", avcodec_get_name(par->codec_id), par->width, par->height, frames);
    av_packet_free(&pkt);
    av_frame_free(&frame);
done:
    vkcu_decoder_close(&dec);
    vkcu_demux_close(&d);
    av_freep(&pb->buffer);
    avio_context_free(&pb);
    return 0;
}
