/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The output ring's slot in the Vulkan encoder's layout, on the GPU: the
 * chain's last kernel (vkcu_cuda_to_semiplanar) writes each output frame as
 * NV12 (8-bit) or P010 (10-bit) into a slot of a real output ring (the
 * CUDA device's UUID-matched shared Vulkan device, slot memory and
 * semaphores imported into CUDA), and the readback of `--download vulkan`
 * (vkcu_outring_readback: waits `filled`, signals `drained`) brings the
 * slot to the host. Its bytes must equal the CPU backend's frame of the same
 * chain packed by the CPU reference (vkcu_vkencode_pack, itself checked
 * against FFmpeg's NV12/P010 by test_pack), for 8- and 10-bit chains (crop
 * and pad on NV12 and P010 as Vulkan decodes them, on yuv420p and
 * yuv420p10 as software decode uploads them, odd sizes), the inputs as
 * CUDA arrays (the interop ring's images) and as pitch-linear memory; and
 * for frames packed straight from the input (P010 with random low bits:
 * dropped, as the host download drops them). Five frames go through three
 * slots, so CUDA waits each slot's `drained` before writing it again.
 * The last frame of each even-sized case also goes through the encode
 * consumer's copy (vkcu_outring_to_frame) into a plain FFmpeg Vulkan frame
 * (NV12/P010 images, TRANSFER_DST|TRANSFER_SRC, no encoder: the H200 has
 * no encode queue), downloaded by FFmpeg: equal to the CPU reference; the
 * frame's timeline value advanced by one and its layout stored.
 * Exit: 0 pass, 1 fail, 77 without a CUDA device.
 */
#include <cuda_runtime_api.h>
#include <libavutil/error.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>
#include <libavutil/mem.h>

#include "croppad_util.h"
#include "gpu/vkdev.h"
#include "gpu/gpu.h"
#include "gpu/outring_cuda.h"
#include "gpu/vkencode.h"
#include "kernels/frame_kernels.h"
#include "test_gpu_util.h"
#include "util/error.h"

#define SLOTS 3
#define FRAMES 5

typedef struct env {
    AVBufferRef *dev;
    vkcu_vkfn vk;
    uint32_t qf, qi;
    cudaStream_t stream;
} env;

static int cases, to_frames;

/* Bytes of the slot's visible rows that differ from the reference slot. */
static long slot_diff(const uint8_t *a, const uint8_t *b, const vkcu_slot_layout *l)
{
    long n = 0;
    for (int p = 0; p < l->nb_planes; p++)
        for (int y = 0; y < l->plane_h[p]; y++) {
            const uint8_t *ra = a + l->offset[p] + (size_t)y * l->pitch[p], *rb = b + l->offset[p] + (size_t)y * l->pitch[p];
            for (int x = 0; x < l->plane_w[p] * l->texel[p]; x++)
                n += ra[x] != rb[x];
        }
    return n;
}

/* The slot copied into a plain FFmpeg frame of the ring's device (as the
 * encoders' are made: NV12/P010 as FFmpeg chooses, planar one image per
 * plane), downloaded. */
static void check_to_frame(env *e, vkcu_outring *ring, int s, const uint8_t *ref, const vkcu_slot_layout *l,
                           const char *what)
{
    char err[256] = "";
    AVBufferRef *frames = av_hwframe_ctx_alloc(e->dev);
    AVHWFramesContext *fc = (AVHWFramesContext *)frames->data;
    fc->format = AV_PIX_FMT_VULKAN;
    fc->sw_format = l->format;
    fc->width = l->width;
    fc->height = l->height;
    AVVulkanFramesContext *vfc = fc->hwctx;
    vfc->usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
    if (l->format != AV_PIX_FMT_NV12 && l->format != AV_PIX_FMT_P010)
        vfc->flags |= AV_VK_FRAME_FLAG_DISABLE_MULTIPLANE;
    int r = av_hwframe_ctx_init(frames);
    CHECK(r == 0, "%s: frames context: %s", what, av_err2str(r));
    AVFrame *hwf = av_frame_alloc(), *back = av_frame_alloc();
    if (r == 0)
        CHECK((r = av_hwframe_get_buffer(frames, hwf, 0)) == 0, "%s: frame: %s", what, av_err2str(r));
    int ticket = -1;
    if (r == 0) {
        AVVkFrame *vkf = (AVVkFrame *)hwf->data[0];
        uint64_t v0 = vkf->sem_value[0];
        r = vkcu_outring_to_frame(ring, s, hwf, l, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, &ticket, err, sizeof(err));
        CHECK(r == 0, "%s: to_frame: %s", what, err);
        CHECK(r < 0 || (vkf->sem_value[0] == v0 + 1 && vkf->layout[0] == VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL),
              "%s: the frame's timeline value %llu (was %llu), layout %d", what,
              (unsigned long long)vkf->sem_value[0], (unsigned long long)v0, (int)vkf->layout[0]);
    }
    if (r == 0)
        CHECK((r = vkcu_outring_wait(ring, ticket, 5000000000ull, err, sizeof(err))) == 0, "%s: wait: %s", what, err);
    if (r == 0) {
        back->format = fc->sw_format;
        CHECK((r = av_hwframe_transfer_data(back, hwf, 0)) == 0, "%s: download: %s", what, av_err2str(r));
    }
    if (r == 0) {
        long n = 0;
        for (int p = 0; p < l->nb_planes; p++)
            for (int y = 0; y < l->plane_h[p]; y++)
                n += memcmp(back->data[p] + (size_t)y * back->linesize[p], ref + l->offset[p] + (size_t)y * l->pitch[p],
                            (size_t)l->plane_w[p] * l->texel[p]) != 0;
        CHECK(!n, "%s: %ld rows of the encode consumer's frame differ from the CPU reference", what, n);
        to_frames += !n;
    }
    av_frame_free(&hwf);
    av_frame_free(&back);
    av_buffer_unref(&frames);
}

/* NV12/P010 as the host download gives them (yuv420p, yuv420p10: P010's
 * value without its low bits); other frames as they are. */
static AVFrame *host_frame(const AVFrame *in)
{
    enum AVPixelFormat host = vkcu_gpu_host_format(in->format);
    if (host == in->format)
        return av_frame_clone(in);
    AVFrame *o = tu_frame(host, in->width, in->height);
    if (!o)
        return NULL;
    for (int c = 0; c < 3; c++) {
        int pw = c ? (in->width + 1) / 2 : in->width, ph = c ? (in->height + 1) / 2 : in->height;
        for (int y = 0; y < ph; y++)
            for (int x = 0; x < pw; x++)
                tu_set(o, c, x, y, tu_get(in, c, x, y));
    }
    o->pts = in->pts;
    return o;
}

/* chain: operator text, or NULL to write the input itself. planar: the
 * compute encoders' slot (the chain's planar host layout, vkcu_cuda_to_planar)
 * instead of the video encoders' NV12/P010 (vkcu_cuda_to_semiplanar). */
static void check_case(env *e, const char *chain, enum AVPixelFormat fmt, int w, int h, int as_array, int planar)
{
    char err[256] = "", what[200];
    snprintf(what, sizeof(what), "%s on %s %dx%d (%s input, %s slot)", chain ? chain : "input as it is",
             av_get_pix_fmt_name(fmt), w, h, as_array ? "array" : "pitch-linear", planar ? "planar" : "NV12/P010");
    vkcu_chain cpu, gpu;
    vkcu_video_format oc, og;
    int ow = w, oh = h;
    enum AVPixelFormat out_fmt = fmt;
    if (chain) {
        if (cp_make(&cpu, chain, fmt, w, h, &oc) < 0 || cp_make(&gpu, chain, fmt, w, h, &og) < 0) {
            CHECK(0, "%s: chain refused", what);
            return;
        }
        ow = og.width, oh = og.height, out_fmt = og.pix_fmt;
    }
    cases++;
    int depth16 = av_pix_fmt_desc_get(out_fmt)->comp[0].depth > 8;
    enum AVPixelFormat slot_fmt = planar ? vkcu_gpu_host_format(out_fmt) : depth16 ? AV_PIX_FMT_P010 : AV_PIX_FMT_NV12;
    vkcu_slot_layout l;
    CHECK(vkcu_outring_layout(slot_fmt, ow, oh, &l) == 0, "%s: no slot layout", what);
    size_t size = l.size;
    vkcu_outring_params rp = { .vk_device = e->dev, .vk = &e->vk, .queue_family = e->qf, .queue_index = e->qi,
                               .nb_slots = SLOTS, .frame_size = size, .export_semaphores = 1 };
    vkcu_outring *ring = NULL;
    vkcu_outring_cuda oc_ring;
    memset(&oc_ring, 0, sizeof(oc_ring));
    int ok = vkcu_outring_create(&rp, &ring, err, sizeof(err)) == 0 &&
             vkcu_outring_cuda_import(&oc_ring, ring, size, err, sizeof(err)) == 0;
    CHECK(ok, "%s: ring: %s", what, err);
    CHECK(!ok || oc_ring.imports == 3 * SLOTS, "%s: %lld imports for %d slots", what, (long long)oc_ring.imports, SLOTS);
    uint8_t *ref = av_mallocz(size);
    for (int n = 0; ok && n < FRAMES; n++) {
        uint64_t seed = (uint64_t)n * 977 + (uint64_t)w * 13 + (uint64_t)h + (uint64_t)fmt * 7 + (uint64_t)as_array;
        AVFrame *in = cp_random_frame(fmt, w, h, seed);
        if (!chain && fmt == AV_PIX_FMT_P010) /* low bits a decoder leaves zero: the ring must drop them */
            for (int p = 0; p < 2; p++)
                for (int y = 0; y < (p ? (h + 1) / 2 : h); y++)
                    for (int x = 0; x < (p ? (w + 1) / 2 * 2 : w); x++)
                        ((uint16_t *)(in->data[p] + (size_t)y * in->linesize[p]))[x] |= (uint16_t)((x + y + n) & 63);
        AVFrame *cref = chain ? cp_run_cpu(cpu.ops[0], in) : av_frame_clone(in);
        AVFrame *chost = cref && planar ? host_frame(cref) : NULL;
        uint8_t *const dst[2] = { ref + l.offset[0], ref + l.offset[1] };
        ok = cref && (planar ? chost && vkcu_vkencode_pack_planar(chost, ref, l.offset, l.pitch) == 0
                             : vkcu_vkencode_pack(cref, dst, l.pitch) == 0);
        CHECK(ok, "%s: CPU reference failed", what);
        tg_frame d;
        tg_upload(in, as_array, &d);
        vkcu_gpu_frame out = d.g;
        if (ok && chain) {
            memset(&out, 0, sizeof(out));
            ok = gpu.ops[0]->cls->run_gpu(gpu.ops[0], &d.g, &out, e->stream) >= 0;
            CHECK(ok, "%s: run_gpu failed", what);
        }
        int s = -1, ticket = -1;
        uint8_t *slot = NULL;
        AVBufferRef *host = NULL;
        if (ok) {
            ok = vkcu_outring_cuda_begin(&oc_ring, e->stream, &s, &slot, err, sizeof(err)) == 0;
            CHECK(ok, "%s: begin: %s", what, err);
        }
        if (ok) {
            int ce = planar ? vkcu_cuda_to_planar(&out, slot_fmt, slot, l.offset, l.pitch, e->stream)
                            : vkcu_cuda_to_semiplanar(&out, slot, l.offset, l.pitch, e->stream);
            ok = !ce;
            CHECK(ok, "%s: slot kernel: %s", what, cudaGetErrorString((cudaError_t)ce));
        }
        if (ok) {
            ok = vkcu_outring_cuda_end(&oc_ring, s, e->stream, err, sizeof(err)) == 0;
            CHECK(ok, "%s: end: %s", what, err);
        }
        /* The last frame into a Vulkan frame (NV12/P010 images only at even sizes, as Vulkan has them). */
        int last = n == FRAMES - 1 && (planar || (!(ow & 1) && !(oh & 1)));
        if (ok && !last) {
            ok = vkcu_outring_readback(ring, s, 1, 1, &host, &ticket, err, sizeof(err)) == 0 &&
                 vkcu_outring_wait(ring, ticket, 10000000000ull, err, sizeof(err)) == 0;
            CHECK(ok, "%s: readback: %s", what, err);
            long nd = ok ? slot_diff(host->data, ref, &l) : 0;
            CHECK(!nd, "%s frame %d: %ld bytes of the slot read back differ from the CPU backend's frame", what, n, nd);
        } else if (ok) {
            check_to_frame(e, ring, s, ref, &l, what);
        }
        CK(cudaStreamSynchronize(e->stream));
        av_buffer_unref(&host);
        tg_free(&d);
        av_frame_free(&in);
        av_frame_free(&cref);
        av_frame_free(&chost);
    }
    /* Every `drained` signalled by the last readbacks is waited on here, so
     * none is left pending when the semaphores go. */
    for (int i = 0; ok && i < SLOTS; i++) {
        int s;
        uint8_t *p;
        if (vkcu_outring_cuda_begin(&oc_ring, e->stream, &s, &p, err, sizeof(err)) < 0)
            break;
    }
    CK(cudaStreamSynchronize(e->stream));
    vkcu_outring_cuda_release(&oc_ring);
    vkcu_outring_free(&ring);
    av_free(ref);
    if (chain) {
        vkcu_chain_free(&cpu);
        vkcu_chain_free(&gpu);
    }
}

int main(void)
{
    int ndev = 0;
    cudaError_t ce = cudaGetDeviceCount(&ndev);
    if (ce != cudaSuccess || ndev < 1) {
        printf("test_pack_gpu: skipped: no CUDA device (%s)\n", ce != cudaSuccess ? cudaGetErrorString(ce) : "0 devices");
        return 77;
    }
    CK(cudaSetDevice(0));
    env e;
    memset(&e, 0, sizeof(e));
    char err[512] = "";
    int lane = 0;
    if (vkcu_vkdev_acquire(0, -1, &e.dev, &lane, err, sizeof(err)) < 0) {
        printf("FAIL the CUDA device's Vulkan device: %s\n", err);
        return 1;
    }
    AVVulkanDeviceContext *hw = ((AVHWDeviceContext *)e.dev->data)->hwctx;
    const char *missing = NULL;
    if (vkcu_vk_load(&e.vk, hw->get_proc_addr, hw->inst, hw->act_dev, &missing) < 0) {
        printf("FAIL the Vulkan device lacks %s\n", missing);
        return 1;
    }
    int best = -1;
    for (int i = 0; i < hw->nb_qf && best < 0; i++)
        if (hw->qf[i].flags & VK_QUEUE_COMPUTE_BIT)
            best = i;
    if (best < 0) {
        printf("FAIL no compute queue on the Vulkan device\n");
        return 1;
    }
    e.qf = (uint32_t)hw->qf[best].idx;
    e.qi = (uint32_t)(hw->qf[best].num - 1);
    CK(cudaStreamCreateWithFlags(&e.stream, cudaStreamNonBlocking));
    static const enum AVPixelFormat fmts[] = { AV_PIX_FMT_NV12, AV_PIX_FMT_P010, AV_PIX_FMT_YUV420P,
                                               AV_PIX_FMT_YUV420P10 };
    static const struct { const char *chain; int w, h; } set[] = {
        { NULL, 150, 78 },
        { NULL, 151, 77 },
        { "crop=w=64:h=32:x=10:y=6", 150, 78 },
        { "pad=w=151:h=81:y=2:color=white", 150, 78 },
        { "crop=w=1280:h=720:x=320:y=180", 1920, 1080 },
    };
    for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++)
        for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
            for (int as_array = 0; as_array < 2; as_array++)
                check_case(&e, set[i].chain, fmts[f], set[i].w, set[i].h, as_array, 0);
    int semi_cases = cases;
    /* The compute encoders' planar slots: the same 4:2:0 cases, then 8- to
     * 16-bit 4:2:0/4:2:2/4:4:4 and alpha from the inputs, crop and convert,
     * odd sizes and 1x1. */
    for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++)
        for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
            check_case(&e, set[i].chain, fmts[f], set[i].w, set[i].h, (int)(i & 1), 1);
    static const enum AVPixelFormat planar[] = { AV_PIX_FMT_YUV420P12, AV_PIX_FMT_YUV420P16, AV_PIX_FMT_YUV422P,
                                                 AV_PIX_FMT_YUV422P10, AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUV444P10,
                                                 AV_PIX_FMT_YUV444P16, AV_PIX_FMT_YUVA420P, AV_PIX_FMT_YUVA444P10,
                                                 AV_PIX_FMT_YUVA444P16 };
    static const int odd[][2] = { { 151, 77 }, { 1, 1 }, { 1920, 1080 } };
    for (size_t f = 0; f < sizeof(planar) / sizeof(planar[0]); f++)
        for (size_t z = 0; z < sizeof(odd) / sizeof(odd[0]); z++)
            check_case(&e, NULL, planar[f], odd[z][0], odd[z][1], (int)(z & 1), 1);
    check_case(&e, "convert=format=yuv422p10", AV_PIX_FMT_YUV420P, 150, 78, 1, 1);
    check_case(&e, "convert=format=yuv444p16", AV_PIX_FMT_YUV420P10, 150, 78, 0, 1);
    check_case(&e, "convert=format=yuv444p", AV_PIX_FMT_NV12, 150, 78, 1, 1);
    check_case(&e, "crop=w=64:h=32:x=10:y=6", AV_PIX_FMT_YUV444P10, 151, 77, 1, 1);
    cudaStreamDestroy(e.stream);
    av_buffer_unref(&e.dev);
    if (tu_failures) {
        printf("test_pack_gpu: %d failures in %d cases\n", tu_failures, cases);
        return 1;
    }
    printf("test_pack_gpu: %d cases in NV12/P010 slots (NV12/P010/yuv420p/yuv420p10, packed input and crop/pad "
           "chains, array and pitch-linear input) and %d in planar slots (the same, 8- to 16-bit 4:2:0/4:2:2/4:4:4 and "
           "alpha inputs at 151x77, 1x1 and 1920x1080, convert and crop chains), %d frames through %d slots each: the "
           "slot read back by Vulkan equals the CPU backend's frame in the slot's layout; %d copies into a plain "
           "Vulkan frame bit-exact: ok\n", semi_cases, cases - semi_cases, FRAMES, SLOTS, to_frames);
    return 0;
}
