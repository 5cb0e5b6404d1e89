/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * denoise on the GPU: run_gpu against run_cpu, byte for byte, for tnr and nlm
 * on NV12, P010, yuv420p, yuv420p10, yuv422p, yuv444p and yuv444p10, with the
 * input planes given both as pitch-linear device memory and as CUDA arrays
 * read through texture objects (the interop images' way). Frame counts and
 * timestamps through EAGAIN/flush must match too.
 * Exit: 0 pass, 1 fail, 77 without a CUDA device.
 */
#include <cuda_runtime_api.h>
#include <unistd.h>

#include "test_denoise_util.h"
#include "test_gpu_util.h"

static int failures;

static AVFrame *make_noisy(enum AVPixelFormat fmt, int w, int h, int t)
{
    AVFrame *f = tu_frame(fmt, w, h);
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    int depth = d->comp[0].depth, maxval = (1 << depth) - 1;
    uint64_t s = 0x1234567ull + (uint64_t)t * 7919;
    for (int c = 0; c < 3; c++) {
        int cw, ch;
        dt_comp_size(f, c, &cw, &ch);
        for (int y = 0; y < ch; y++)
            for (int x = 0; x < cw; x++) {
                double v = 120 + 70 * sin((x + 3 * t) * 0.09 + c) * cos(y * 0.07) + (((x + t) / 16 + y / 12) & 1) * 30 +
                           12 * dt_gauss(&s);
                v *= 1 << (depth - 8);
                tu_set(f, c, x, y, (int)fmin(fmax(lrint(v), 0), maxval));
            }
    }
    f->pts = 90000 + 3000 * t;
    f->duration = 3000;
    return f;
}

static int count_diff(const AVFrame *a, const AVFrame *b, long *total)
{
    int diff = 0;
    for (int c = 0; c < 3; c++) {
        int w, h;
        dt_comp_size(a, c, &w, &h);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                diff += tu_get(a, c, x, y) != tu_get(b, c, x, y);
        *total += (long)w * h;
    }
    return diff;
}

static void check_case(const char *text, enum AVPixelFormat fmt, int w, int h, int as_array)
{
    enum { N = 6 };
    AVFrame *in[N], *ref[N] = { 0 };
    for (int i = 0; i < N; i++)
        in[i] = make_noisy(fmt, w, h, i);
    vkcu_chain cpu, gpu;
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (dt_make(&cpu, text, fmt, w, h, threads > 1 ? threads : 1) < 0 || dt_make(&gpu, text, fmt, w, h, 1) < 0) {
        fprintf(stderr, "FAIL %s: init\n", text);
        failures++;
        return;
    }
    int nref = dt_run(cpu.ops[0], in, N, ref);
    vkcu_op *op = gpu.ops[0];
    cudaStream_t stream;
    CK(cudaStreamCreate(&stream));
    int nout = 0, ret;
    long diffs = 0, total = 0;
    const char *name = av_get_pix_fmt_name(fmt);
    if (op->cls->init_gpu && (ret = op->cls->init_gpu(op)) < 0) {
        fprintf(stderr, "FAIL %s %s: init_gpu: %d\n", text, name, ret);
        failures++;
        goto done;
    }
    for (int i = 0; i <= N; i++) {
        for (;;) {
            tg_frame d;
            vkcu_gpu_frame out;
            memset(&out, 0, sizeof(out));
            if (i < N)
                tg_upload(in[i], as_array, &d);
            ret = op->cls->run_gpu(op, i < N ? &d.g : NULL, &out, stream);
            CK(cudaStreamSynchronize(stream));
            if (i < N)
                tg_free(&d);
            if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF)
                break;
            if (ret < 0) {
                fprintf(stderr, "FAIL %s %s: run_gpu frame %d: %d\n", text, name, i, ret);
                failures++;
                goto done;
            }
            AVFrame *o = tg_download(&out, fmt);
            if (nout >= nref) {
                fprintf(stderr, "FAIL %s %s: GPU gave more frames than the CPU (%d)\n", text, name, nref);
                failures++;
                av_frame_free(&o);
                goto done;
            }
            int dcount = count_diff(o, ref[nout], &total);
            if (dcount)
                fprintf(stderr, "FAIL %s %s %s: frame %d: %d samples differ from the CPU\n", text, name,
                        as_array ? "array" : "pitch", nout, dcount);
            if (o->pts != ref[nout]->pts) {
                fprintf(stderr, "FAIL %s %s: frame %d: pts %lld, CPU %lld\n", text, name, nout, (long long)o->pts,
                        (long long)ref[nout]->pts);
                failures++;
            }
            diffs += dcount;
            nout++;
            av_frame_free(&o);
            if (i < N)
                break;
        }
    }
    if (nout != nref || nref != N) {
        fprintf(stderr, "FAIL %s %s: %d GPU frames, %d CPU frames, %d inputs\n", text, name, nout, nref, N);
        failures++;
    }
    if (diffs)
        failures++;
done:
    cudaStreamDestroy(stream);
    vkcu_chain_free(&cpu);
    vkcu_chain_free(&gpu);
    for (int i = 0; i < N; i++) {
        av_frame_free(&in[i]);
        av_frame_free(&ref[i]);
    }
}

int main(void)
{
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev < 1) {
        printf("test_denoise_gpu: skipped: no CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 77;
    }
    static const enum AVPixelFormat fmts[] = {
        AV_PIX_FMT_NV12, AV_PIX_FMT_P010, AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV420P10,
        AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUV444P10,
    };
    static const char *chains[] = {
        "denoise=mode=tnr:sigma=8",
        "denoise=mode=tnr:sigma=3:planes=luma",
        "denoise=mode=nlm:sigma=8",
        "denoise=mode=nlm:sigma=12:patch=3:search=7:tradius=0",
        "denoise=mode=nlm:sigma=6:patch=1:search=2:tradius=2:planes=chroma",
        "denoise=mode=nlm:sigma=20:patch=4:search=9:tradius=1",
    };
    int cases = 0;
    for (size_t c = 0; c < sizeof(chains) / sizeof(chains[0]); c++)
        for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++)
            for (int as_array = 0; as_array < 2; as_array++) {
                /* odd sizes and widths that are not a multiple of a tile */
                check_case(chains[c], fmts[f], 150, 78, as_array);
                cases++;
            }
    check_case("denoise=mode=nlm:sigma=10", AV_PIX_FMT_NV12, 640, 360, 1);
    check_case("denoise=mode=tnr:sigma=10", AV_PIX_FMT_P010, 1920, 1080, 1);
    cases += 2;
    if (failures) {
        printf("test_denoise_gpu: %d of %d cases FAILED\n", failures, cases);
        return 1;
    }
    printf("test_denoise_gpu: %d cases (tnr/nlm x 7 formats x pitch-linear/texture input, plus 360p/1080p): "
           "GPU output equals the CPU reference byte for byte, frame counts and pts match: ok\n",
           cases);
    return 0;
}
