/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scale on the GPU: run_gpu against run_cpu, byte for byte, for every
 * supported format (NV12, P010, planar 4:2:0/4:2:2/4:4:4, gray and planar
 * RGB, at 8 and 10 bits), every filter, down- and up-scaling with
 * non-integer ratios, odd sizes down to 1x1, and downscaling far enough to
 * take the per-plane tile kernel and the two-pass kernels instead of the
 * one launch per frame, with the
 * input planes given as pitch-linear device memory and as CUDA arrays read
 * through texture objects (the interop images' way). The output size, SAR and timestamps must match too.
 * Exit: 0 pass, 1 fail, 77 without a CUDA device.
 */
#include <cuda_runtime_api.h>

#include "test_gpu_util.h"
#include "test_scale_util.h"

static int failures;

static void check_case(enum AVPixelFormat fmt, int iw, int ih, const char *keys, int as_array)
{
    const char *name = av_get_pix_fmt_name(fmt);
    char text[160];
    snprintf(text, sizeof(text), "scale=%s", keys);
    vkcu_video_format in = ct_format(fmt, iw, ih, AVCOL_SPC_BT709, AVCOL_RANGE_MPEG), ocpu, ogpu;
    in.chroma_loc = (iw + ih) % 3 == 0 ? AVCHROMA_LOC_CENTER : (iw + ih) % 3 == 1 ? AVCHROMA_LOC_LEFT : AVCHROMA_LOC_TOPLEFT;
    in.sar = (AVRational){ 16, 15 };
    vkcu_chain cpu, gpu;
    if (ct_op(&cpu, text, &in, &ocpu, 3) < 0) {
        failures++;
        return;
    }
    if (ct_op(&gpu, text, &in, &ogpu, 1) < 0) {
        vkcu_chain_free(&cpu);
        failures++;
        return;
    }
    AVFrame *src = tu_frame(fmt, iw, ih);
    fill_picture(src, (uint64_t)(iw * 3 + ih));
    src->pts = 1234;
    src->duration = 40;
    AVFrame *ref = ct_run(&cpu, src, &ocpu);
    vkcu_op *op = gpu.ops[0];
    cudaStream_t stream;
    CK(cudaStreamCreate(&stream));
    tg_frame d;
    tg_upload(src, as_array, &d);
    vkcu_gpu_frame out;
    memset(&out, 0, sizeof(out));
    int ret = op->cls->init_gpu ? op->cls->init_gpu(op) : 0;
    if (ret >= 0)
        ret = op->cls->run_gpu(op, &d.g, &out, stream);
    CK(cudaStreamSynchronize(stream));
    if (ret < 0 || !ref) {
        printf("FAIL %s %s %dx%d: run_gpu %d\n", text, name, iw, ih, ret);
        failures++;
        goto done;
    }
    if (out.fmt.width != ocpu.width || out.fmt.height != ocpu.height || av_cmp_q(out.fmt.sar, ocpu.sar) ||
        out.pts != 1234 || out.duration != 40) {
        printf("FAIL %s %s %dx%d: GPU frame %dx%d SAR %d:%d pts %lld, CPU %dx%d SAR %d:%d pts 1234\n", text, name,
               iw, ih, out.fmt.width, out.fmt.height, out.fmt.sar.num, out.fmt.sar.den, (long long)out.pts, ocpu.width,
               ocpu.height, ocpu.sar.num, ocpu.sar.den);
        failures++;
        goto done;
    }
    AVFrame *o = tg_download(&out, fmt);
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(fmt);
    long diff = 0, n = 0;
    for (int c = 0; c < desc->nb_components; c++) {
        int w = c ? AV_CEIL_RSHIFT(ocpu.width, desc->log2_chroma_w) : ocpu.width;
        int h = c ? AV_CEIL_RSHIFT(ocpu.height, desc->log2_chroma_h) : ocpu.height;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++, n++)
                diff += tu_get(o, c, x, y) != tu_get(ref, c, x, y);
    }
    if (diff) {
        printf("FAIL %s %s %s %dx%d -> %dx%d: %ld of %ld samples differ from the CPU\n", text, name,
               as_array ? "array" : "pitch", iw, ih, ocpu.width, ocpu.height, diff, n);
        failures++;
    }
    av_frame_free(&o);
done:
    tg_free(&d);
    cudaStreamDestroy(stream);
    av_frame_free(&src);
    av_frame_free(&ref);
    vkcu_chain_free(&cpu);
    vkcu_chain_free(&gpu);
}

int main(void)
{
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev < 1) {
        printf("test_scale_gpu: skipped: no CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 77;
    }
    static const enum AVPixelFormat fmts[] = {
        AV_PIX_FMT_NV12, AV_PIX_FMT_P010, AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV420P10,
        AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUV422P10, AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUV444P10,
        AV_PIX_FMT_GRAY8, AV_PIX_FMT_GRAY10, AV_PIX_FMT_GBRP, AV_PIX_FMT_GBRP10,
    };
    static const char *filter[] = { "bilinear", "bicubic", "lanczos", "spline36" };
    static const int sizes[][4] = {
        { 320, 180, 213, 120 }, /* down, non-integer */
        { 176, 144, 353, 289 }, /* up, odd output */
        { 1, 1, 9, 7 },         /* 1x1 input */
        { 37, 21, 1, 1 },       /* 1x1 output */
        { 7, 5, 3, 2 },         /* not divisible by the subsampling */
    };
    int cases = 0;
    for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++)
        for (int k = 0; k < 4; k++)
            for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
                for (int as_array = 0; as_array < 2; as_array++) {
                    char keys[96];
                    snprintf(keys, sizeof(keys), "w=%d:h=%d:filter=%s", sizes[s][2], sizes[s][3], filter[k]);
                    check_case(fmts[f], sizes[s][0], sizes[s][1], keys, as_array);
                    cases++;
                }
    /* the benchmark's case and a derived size with sar=keep */
    check_case(AV_PIX_FMT_NV12, 3840, 2160, "w=1920:h=1080", 1);
    check_case(AV_PIX_FMT_P010, 1920, 1080, "w=-2:h=720:filter=spline36:sar=keep", 1);
    /* downscaling so far that a tile's rows exceed shared memory: the
     * two-pass kernels (luma and chroma), and a plane on each path */
    check_case(AV_PIX_FMT_NV12, 1920, 1080, "w=64:h=8", 1);
    check_case(AV_PIX_FMT_NV12, 640, 2000, "w=40:h=100", 0);            /* luma one-pass, chroma two */
    check_case(AV_PIX_FMT_YUV420P10, 640, 2000, "w=40:h=100:filter=bicubic", 0);
    check_case(AV_PIX_FMT_YUV444P, 300, 4000, "w=301:h=3:filter=bilinear", 1);
    /* 3:1: one launch for the frame with more horizontal taps than the
     * kernel keeps in registers (NV12); at 16 bits the chroma window no
     * longer fits shared memory, so every plane takes the tile kernel (P010) */
    check_case(AV_PIX_FMT_NV12, 1920, 1080, "w=640:h=360", 1);
    check_case(AV_PIX_FMT_P010, 1920, 1080, "w=640:h=360", 0);
    cases += 8;
    if (failures) {
        printf("test_scale_gpu: %d of %d cases FAILED\n", failures, cases);
        return 1;
    }
    printf("test_scale_gpu: %d cases (12 formats x 4 filters x 5 sizes x pitch-linear/texture input, plus 4K->1080p, "
           "1080p->720p and 3:1): GPU output equals the CPU reference byte for byte, size, SAR and pts match: ok\n",
           cases);
    return 0;
}
