/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * crop and pad on the GPU: run_gpu against run_cpu, byte for byte, on every
 * layout the interop ring carries (NV12 and P010 as Vulkan decodes them,
 * planar 4:2:0/4:2:2/4:4:4 at 8 and 10 bits as software decode uploads
 * them, gray, planar RGB, 4:2:0 with alpha), with the input planes given as
 * pitch-linear memory and as CUDA arrays read through texture objects (the
 * imported interop images), over odd sizes, 1x1, crops ending at the odd
 * edge and pads with colours. Timestamps must pass through.
 * Exit: 0 pass, 1 fail, 77 without a CUDA device.
 */
#include <cuda_runtime_api.h>

#include "croppad_util.h"
#include "test_gpu_util.h"

static int failures, cases;

static void check_case(const char *text, enum AVPixelFormat fmt, int w, int h, int as_array)
{
    vkcu_chain cpu, gpu;
    vkcu_video_format oc, og;
    const char *name = av_get_pix_fmt_name(fmt);
    cases++;
    if (cp_make(&cpu, text, fmt, w, h, &oc) < 0) {
        printf("FAIL %s on %s %dx%d: refused\n", text, name, w, h);
        failures++;
        return;
    }
    if (cp_make(&gpu, text, fmt, w, h, &og) < 0) {
        vkcu_chain_free(&cpu);
        failures++;
        return;
    }
    AVFrame *in = cp_random_frame(fmt, w, h, (uint64_t)w * 131 + h + as_array);
    AVFrame *ref = cp_run_cpu(cpu.ops[0], in);
    cudaStream_t stream;
    CK(cudaStreamCreate(&stream));
    tg_frame d;
    tg_upload(in, as_array, &d);
    vkcu_gpu_frame out;
    memset(&out, 0, sizeof(out));
    vkcu_op *op = gpu.ops[0];
    int ret = op->cls->run_gpu(op, &d.g, &out, stream);
    CK(cudaStreamSynchronize(stream));
    if (ret < 0 || !ref) {
        printf("FAIL %s on %s %dx%d: run_gpu %d, run_cpu %s\n", text, name, w, h, ret, ref ? "ok" : "failed");
        failures++;
    } else {
        AVFrame *o = tg_download(&out, fmt);
        long n = cp_diff(o, ref);
        if (n || o->pts != ref->pts || o->duration != ref->duration) {
            printf("FAIL %s on %s %dx%d (%s input): %ld bytes differ from the CPU, pts %lld/%lld\n", text, name, w, h,
                   as_array ? "array" : "pitch-linear", n, (long long)o->pts, (long long)ref->pts);
            failures++;
        }
        av_frame_free(&o);
    }
    tg_free(&d);
    cudaStreamDestroy(stream);
    av_frame_free(&in);
    av_frame_free(&ref);
    vkcu_chain_free(&cpu);
    vkcu_chain_free(&gpu);
}

int main(void)
{
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev < 1) {
        printf("test_croppad_gpu: skipped: no CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 77;
    }
    static const enum AVPixelFormat fmts[] = {
        AV_PIX_FMT_NV12,      AV_PIX_FMT_P010,    AV_PIX_FMT_YUV420P,   AV_PIX_FMT_YUV420P10,
        AV_PIX_FMT_YUV422P,   AV_PIX_FMT_YUV422P10, AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUV444P10,
        AV_PIX_FMT_GRAY8,     AV_PIX_FMT_GBRP,    AV_PIX_FMT_YUVA420P,
    };
    /* every chain is legal on every layout: offsets even, odd sizes end at the picture's edge */
    static const struct { const char *chain; int w, h; } set[] = {
        { "crop=w=64:h=32:x=10:y=6", 150, 78 },
        { "crop=w=64:h=32", 150, 78 },
        { "crop=w=51:h=27:x=100:y=50", 151, 77 },
        { "crop=w=1:h=1:x=150:y=76", 151, 77 },
        { "crop", 1, 1 },
        { "crop=w=1280:h=720:x=320:y=180", 1920, 1080 },
        { "pad=w=200:h=100:x=-1:y=-1:color=0x3050a0", 150, 78 },
        { "pad=w=151:h=81:y=2:color=white", 150, 78 },
        { "pad=h=81:y=4:color=orange", 151, 77 },
        { "pad=w=3:h=3:x=2:y=2:color=red", 1, 1 },
        { "pad=w=1920:h=1080:x=-1:y=-1", 1440, 1080 },
    };
    for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++)
        for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
            for (int as_array = 0; as_array < 2; as_array++)
                check_case(set[i].chain, fmts[f], set[i].w, set[i].h, as_array);
    if (failures) {
        printf("test_croppad_gpu: %d of %d cases FAILED\n", failures, cases);
        return 1;
    }
    printf("test_croppad_gpu: %d cases (crop/pad x 11 layouts x pitch-linear/texture input, odd sizes, 1x1, 1080p): "
           "GPU bytes equal the CPU reference: ok\n", cases);
    return 0;
}
