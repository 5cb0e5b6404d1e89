/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The GPU session's side of zero-copy Vulkan encode, everything but the
 * encoder (no machine here has a Vulkan video encode queue): a session is
 * given a plain Vulkan frames context on its own device, as the encode sink
 * gives it the encoder's (vkcu_gpu_encode_into; NV12/P010 images with
 * TRANSFER_DST | TRANSFER_SRC instead of VIDEO_ENCODE_SRC), and software
 * frames are pushed through a crop chain at 8 and 10 bits, more frames than
 * the ring has slots. Every frame popped must be an AV_PIX_FMT_VULKAN frame
 * of that context whose pixels, downloaded by FFmpeg, equal the CPU
 * backend's frame of the same chain (in NV12/P010 layout, vkcu_vkencode_pack,
 * for the video encoders' images; as it is for the compute encoders' planar
 * images of the chain's own format), with its timestamps; and no byte may
 * have gone to the host (dtoh_bytes 0, no Vulkan readbacks). A context
 * whose images are of another size or format than the chain's output
 * leaves the frames on the host path (host frames, equal to the CPU's); one
 * whose images no transfer can write is refused, saying why.
 * Exit: 0 pass, 1 fail, 77 without a CUDA device.
 */
#include <cuda_runtime_api.h>
#include <libavutil/error.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>

#include "croppad_util.h"
#include "gpu/gpu.h"
#include "gpu/vkencode.h"

#define FRAMES 7

static AVBufferRef *plain_frames(AVBufferRef *dev, enum AVPixelFormat sw, int w, int h)
{
    AVBufferRef *frames = av_hwframe_ctx_alloc(dev);
    if (!frames)
        return NULL;
    AVHWFramesContext *fc = (AVHWFramesContext *)frames->data;
    fc->format = AV_PIX_FMT_VULKAN;
    fc->sw_format = sw;
    fc->width = w;
    fc->height = h;
    AVVulkanFramesContext *vfc = fc->hwctx;
    vfc->usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
    if (sw != AV_PIX_FMT_NV12 && sw != AV_PIX_FMT_P010) /* as the compute encoders' frames are made */
        vfc->flags |= AV_VK_FRAME_FLAG_DISABLE_MULTIPLANE;
    int r = av_hwframe_ctx_init(frames);
    CHECK(r == 0, "%s frames context: %s", av_get_pix_fmt_name(sw), av_err2str(r));
    if (r < 0)
        av_buffer_unref(&frames);
    return frames;
}

/* Frames the session gave back, compared with the CPU's; returns how many. */
static int check_out(AVFrame *o, vkcu_op *cpu_op, int64_t *next, int zero_copy, const char *what)
{
    AVFrame *in = cp_random_frame(cpu_op->in.pix_fmt, cpu_op->in.width, cpu_op->in.height, (uint64_t)*next + 1);
    AVFrame *ref = cp_run_cpu(cpu_op, in);
    int n = (int)(*next)++;
    CHECK(ref && o->pts == ref->pts, "%s frame %d: pts %lld, want %lld", what, n, (long long)o->pts,
          ref ? (long long)ref->pts : -1LL);
    if (zero_copy) {
        CHECK(o->format == AV_PIX_FMT_VULKAN && o->hw_frames_ctx, "%s frame %d: a %s frame, not a Vulkan frame", what,
              n, av_get_pix_fmt_name(o->format));
        AVHWFramesContext *fc = o->hw_frames_ctx ? (AVHWFramesContext *)o->hw_frames_ctx->data : NULL;
        AVFrame *back = av_frame_alloc(), *want = fc ? tu_frame(fc->sw_format, fc->width, fc->height) : NULL;
        int r = -1;
        int semi = fc && (fc->sw_format == AV_PIX_FMT_NV12 || fc->sw_format == AV_PIX_FMT_P010);
        if (fc && back && want && ref) {
            back->format = fc->sw_format;
            r = av_hwframe_transfer_data(back, o, 0);
            CHECK(r == 0, "%s frame %d: download: %s", what, n, av_err2str(r));
            /* A video encoder's NV12/P010 images: the CPU frame packed; a compute encoder's: the CPU frame itself. */
            CHECK(semi ? vkcu_vkencode_pack(ref, want->data, want->linesize) == 0
                       : av_frame_copy(want, ref) >= 0, "%s: CPU reference", what);
        }
        if (r == 0) {
            long d = cp_diff(back, want);
            CHECK(d == 0, "%s frame %d: %ld bytes of the encoder's frame differ from the CPU backend's", what, n, d);
        }
        av_frame_free(&back);
        av_frame_free(&want);
    } else {
        enum AVPixelFormat host = vkcu_gpu_host_format(cpu_op->out.pix_fmt);
        CHECK(o->format == host, "%s frame %d: a %s frame, want host %s", what, n, av_get_pix_fmt_name(o->format),
              av_get_pix_fmt_name(host));
        long d = o->format == host && ref ? cp_diff(o, ref) : -1;
        CHECK(d == 0, "%s frame %d: %ld bytes of the host frame differ from the CPU backend's", what, n, d);
    }
    av_frame_free(&in);
    av_frame_free(&ref);
    return 1;
}

/* frames_fmt/fw/fh: the context offered; zero_copy: whether it must be taken. */
static void run_case(const char *chain_text, enum AVPixelFormat fmt, int w, int h, enum AVPixelFormat frames_fmt,
                     int fw, int fh, int zero_copy)
{
    char err[512] = "", what[200];
    snprintf(what, sizeof(what), "%s on %s %dx%d into %s %dx%d frames", chain_text, av_get_pix_fmt_name(fmt), w, h,
             av_get_pix_fmt_name(frames_fmt), fw, fh);
    vkcu_chain gchain, cchain;
    vkcu_video_format og, oc;
    if (cp_make(&gchain, chain_text, fmt, w, h, &og) < 0 || cp_make(&cchain, chain_text, fmt, w, h, &oc) < 0) {
        CHECK(0, "%s: chain refused", what);
        return;
    }
    vkcu_gpu_config cfg = { .device = 0, .ring_size = 3, .stall_timeout_ms = 20000, .frames_wanted = 1 };
    vkcu_gpu *g = NULL;
    if (vkcu_gpu_open(&cfg, &g, err, sizeof(err)) < 0) {
        CHECK(0, "%s: session: %s", what, err);
        vkcu_chain_free(&gchain);
        vkcu_chain_free(&cchain);
        return;
    }
    vkcu_gpu_set_chain(g, &gchain);
    AVBufferRef *frames = plain_frames(vkcu_gpu_vulkan_device(g), frames_fmt, fw, fh);
    int taken = frames ? vkcu_gpu_encode_into(g, frames, err, sizeof(err)) : -1;
    CHECK(taken == 0, "%s: not taken (%d): %s", what, taken, err);
    AVFrame *o = av_frame_alloc();
    int64_t next = 0;
    int ret = 0;
    for (int n = 0; ret >= 0 && n <= FRAMES; n++) {
        while (ret >= 0 && (n == FRAMES ? vkcu_gpu_pending(g) > 0 : vkcu_gpu_full(g))) {
            ret = vkcu_gpu_pop(g, o, 1, err, sizeof(err));
            if (ret == AVERROR(EAGAIN)) { /* nothing more will come (the flush gives no frame) */
                ret = 0;
                break;
            }
            if (ret >= 0)
                check_out(o, cchain.ops[0], &next, zero_copy, what);
            av_frame_unref(o);
        }
        if (ret >= 0 && n < FRAMES)
            ret = vkcu_gpu_push(g, cp_random_frame(fmt, w, h, (uint64_t)n + 1), err, sizeof(err));
        if (ret >= 0 && n == FRAMES - 1)
            ret = vkcu_gpu_push(g, NULL, err, sizeof(err));
    }
    CHECK(ret >= 0, "%s: %s", what, err);
    CHECK(next == FRAMES, "%s: %lld frames out of %d", what, (long long)next, FRAMES);
    vkcu_job_result c = { 0 };
    vkcu_gpu_stats(g, &c);
    if (zero_copy)
        CHECK(c.dtoh_bytes == 0 && c.vk_readbacks == 0, "%s: %lld bytes to the host, %lld Vulkan readbacks", what,
              (long long)c.dtoh_bytes, (long long)c.vk_readbacks);
    av_frame_free(&o);
    av_buffer_unref(&frames);
    vkcu_gpu_close(&g);
    vkcu_chain_free(&gchain);
    vkcu_chain_free(&cchain);
}

int main(void)
{
    int ndev = 0;
    cudaError_t ce = cudaGetDeviceCount(&ndev);
    if (ce != cudaSuccess || ndev < 1) {
        printf("test_encode_ring_gpu: skipped: no CUDA device (%s)\n",
               ce != cudaSuccess ? cudaGetErrorString(ce) : "0 devices");
        return 77;
    }
    /* 8 and 10 bits into frames the session takes: zero-copy. */
    run_case("crop=w=64:h=32:x=10:y=6", AV_PIX_FMT_YUV420P, 150, 78, AV_PIX_FMT_NV12, 64, 32, 1);
    run_case("crop=w=1280:h=720:x=320:y=180", AV_PIX_FMT_YUV420P10LE, 1920, 1080, AV_PIX_FMT_P010, 1280, 720, 1);
    /* The compute encoders' planar images of the chain's own format: zero-copy too. */
    run_case("crop=w=64:h=32:x=10:y=6", AV_PIX_FMT_YUV420P, 150, 78, AV_PIX_FMT_YUV420P, 64, 32, 1);
    run_case("convert=format=yuv422p10", AV_PIX_FMT_YUV420P10LE, 151, 77, AV_PIX_FMT_YUV422P10, 151, 77, 1);
    run_case("crop=w=63:h=31:x=3:y=1", AV_PIX_FMT_YUV444P16, 150, 78, AV_PIX_FMT_YUV444P16, 63, 31, 1);
    /* Images of another size, or another format, than the chain's output: the host path. */
    run_case("crop=w=64:h=32:x=10:y=6", AV_PIX_FMT_YUV420P, 150, 78, AV_PIX_FMT_NV12, 66, 32, 0);
    run_case("crop=w=64:h=32:x=10:y=6", AV_PIX_FMT_YUV420P, 150, 78, AV_PIX_FMT_YUV444P, 64, 32, 0);
    /* Images no transfer can write: refused before any frame, saying why. */
    vkcu_gpu_config cfg = { .device = 0, .ring_size = 3, .stall_timeout_ms = 20000, .frames_wanted = 1 };
    vkcu_gpu *g = NULL;
    char err[512] = "";
    if (vkcu_gpu_open(&cfg, &g, err, sizeof(err)) == 0) {
        /* Not initialised: the refusal reads only what the caller set. */
        AVBufferRef *frames = av_hwframe_ctx_alloc(vkcu_gpu_vulkan_device(g));
        if (frames) {
            AVHWFramesContext *fc = (AVHWFramesContext *)frames->data;
            fc->format = AV_PIX_FMT_VULKAN;
            fc->sw_format = AV_PIX_FMT_YUV420P;
            fc->width = 64;
            fc->height = 32;
            ((AVVulkanFramesContext *)fc->hwctx)->usage = VK_IMAGE_USAGE_STORAGE_BIT;
        }
        err[0] = 0;
        CHECK(frames && vkcu_gpu_encode_into(g, frames, err, sizeof(err)) == 1 &&
                  strstr(err, "cannot be written by a transfer"),
              "frames context without TRANSFER_DST: '%s'", err);
        av_buffer_unref(&frames);
        vkcu_gpu_close(&g);
    } else {
        CHECK(0, "session: %s", err);
    }
    if (tu_failures) {
        printf("test_encode_ring_gpu: %d failures\n", tu_failures);
        return 1;
    }
    printf("test_encode_ring_gpu: crop/convert chains at 8, 10 and 16 bits, %d frames through a 3-slot ring each: "
           "every frame a Vulkan frame of the offered context (NV12/P010 as the video encoders', planar 4:2:0/4:2:2/"
           "4:4:4 one image per plane as the compute encoders'), equal to the CPU backend's, no byte to the host; "
           "images of another size or format: host frames equal to the CPU's; images without transfer writes "
           "refused: ok\n", FRAMES);
    return 0;
}
