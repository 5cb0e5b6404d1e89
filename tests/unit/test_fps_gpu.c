/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fps on the GPU: run_gpu against the CPU driver, frame for frame (bytes,
 * pts, duration, count), for upsampling (25 -> 30, 25 -> 250: ten outputs
 * per input) and dropping (60 -> 24 round=down, 25 -> 5) on NV12, P010,
 * yuv420p, yuv420p10, yuv422p, yuv444p and gray at an odd size, with input
 * planes as pitch-linear memory and as CUDA arrays. The input's memory is
 * overwritten as soon as run_gpu returns (the ring slot is reused), so a
 * repeated frame must come from the operator's own copy.
 * Exit: 0 pass, 1 fail, 77 without a CUDA device.
 */
#include <cuda_runtime_api.h>

#include "test_gpu_util.h"

typedef struct list {
    int n;
    AVFrame *f[512];
} list;

static int keep(void *opaque, AVFrame *f)
{
    list *l = opaque;
    if (l->n >= 512)
        return AVERROR(ENOSPC);
    l->f[l->n++] = av_frame_clone(f);
    return 0;
}

static AVFrame *make(enum AVPixelFormat fmt, int w, int h, int t, int64_t pts)
{
    AVFrame *f = tu_frame(fmt, w, h);
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    int maxval = (1 << d->comp[0].depth) - 1;
    for (int c = 0; c < d->nb_components; c++) {
        int cw = c == 1 || c == 2 ? AV_CEIL_RSHIFT(w, d->log2_chroma_w) : w;
        int ch = c == 1 || c == 2 ? AV_CEIL_RSHIFT(h, d->log2_chroma_h) : h;
        for (int y = 0; y < ch; y++)
            for (int x = 0; x < cw; x++)
                tu_set(f, c, x, y, (x * 7 + y * 13 + t * 41 + c * 5) % (maxval + 1));
    }
    f->pts = pts;
    f->duration = 1;
    return f;
}

static int same_picture(const AVFrame *a, const AVFrame *b)
{
    int planes = av_pix_fmt_count_planes(a->format);
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(a->format);
    for (int p = 0; p < planes; p++) {
        int h = p == 1 || p == 2 ? AV_CEIL_RSHIFT(a->height, d->log2_chroma_h) : a->height;
        int row = av_image_get_linesize(a->format, a->width, p);
        for (int y = 0; y < h; y++)
            if (memcmp(a->data[p] + (ptrdiff_t)y * a->linesize[p], b->data[p] + (ptrdiff_t)y * b->linesize[p], row))
                return 0;
    }
    return 1;
}

/* Overwrites the input's pitch-linear planes, as the next decoded frame would. */
static void poison(tg_frame *t, enum AVPixelFormat fmt, int w)
{
    for (int p = 0; p < t->g.nb_planes; p++)
        if (t->mem[p])
            CK(cudaMemset2D(t->mem[p], t->g.plane[p].pitch, 0x5a, (size_t)av_image_get_linesize(fmt, w, p),
                            t->g.plane[p].height));
}

static int check_case(const char *text, AVRational tb, int n_in, enum AVPixelFormat fmt, int as_array)
{
    const int w = 37, h = 21;
    const char *name = av_get_pix_fmt_name(fmt);
    vkcu_chain cpu, gpu;
    char err[256];
    vkcu_video_format in = { .pix_fmt = fmt, .width = w, .height = h, .time_base = tb, .frame_rate = av_inv_q(tb) };
    vkcu_video_format out;
    if (vkcu_chain_parse(text, &cpu, err, sizeof(err)) < 0 || vkcu_chain_parse(text, &gpu, err, sizeof(err)) < 0 ||
        vkcu_chain_init(&cpu, &in, &out, err, sizeof(err)) < 0 || vkcu_chain_init(&gpu, &in, &out, err, sizeof(err)) < 0) {
        printf("FAIL %s %s: %s\n", text, name, err);
        return 1;
    }
    list ref = { 0 };
    AVFrame *src[64];
    for (int i = 0; i < n_in; i++) {
        src[i] = make(fmt, w, h, i, i);
        vkcu_chain_feed_cpu(&cpu, 0, src[i], keep, &ref, NULL);
    }
    vkcu_chain_feed_cpu(&cpu, 0, NULL, keep, &ref, NULL);
    vkcu_op *op = gpu.ops[0];
    cudaStream_t stream;
    CK(cudaStreamCreate(&stream));
    int nout = 0, bad = 0;
    for (int i = 0; i <= n_in && !bad; i++) {
        tg_frame d;
        if (i < n_in)
            tg_upload(src[i], as_array, &d);
        const vkcu_gpu_frame *arg = i < n_in ? &d.g : NULL;
        for (;;) {
            vkcu_gpu_frame o;
            memset(&o, 0, sizeof(o));
            int ret = op->cls->run_gpu(op, arg, &o, stream);
            CK(cudaStreamSynchronize(stream));
            if (i < n_in)
                poison(&d, fmt, w);
            if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF)
                break;
            if (ret < 0 || nout >= ref.n) {
                printf("FAIL %s %s: run_gpu returned %d at output %d (CPU: %d outputs)\n", text, name, ret, nout, ref.n);
                bad = 1;
                break;
            }
            AVFrame *g = tg_download(&o, fmt);
            if (!same_picture(g, ref.f[nout]) || g->pts != ref.f[nout]->pts || g->duration != ref.f[nout]->duration) {
                printf("FAIL %s %s %s: output %d (pts %lld, CPU %lld) differs from the CPU's\n", text, name,
                       as_array ? "array" : "pitch", nout, (long long)g->pts, (long long)ref.f[nout]->pts);
                bad = 1;
            }
            av_frame_free(&g);
            nout++;
            arg = NULL; /* op.h: the ready outputs, or the flush */
            if (i < n_in && ret != VKCU_OP_MORE)
                break;
        }
        if (i < n_in)
            tg_free(&d);
    }
    if (!bad && nout != ref.n) {
        printf("FAIL %s %s: %d GPU outputs, %d CPU outputs\n", text, name, nout, ref.n);
        bad = 1;
    }
    cudaStreamDestroy(stream);
    vkcu_chain_free(&cpu);
    vkcu_chain_free(&gpu);
    for (int i = 0; i < n_in; i++)
        av_frame_free(&src[i]);
    for (int i = 0; i < ref.n; i++)
        av_frame_free(&ref.f[i]);
    return bad;
}

int main(void)
{
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev < 1) {
        printf("test_fps_gpu: skipped: no CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 77;
    }
    static const enum AVPixelFormat fmts[] = { AV_PIX_FMT_NV12,    AV_PIX_FMT_P010,    AV_PIX_FMT_YUV420P,
                                               AV_PIX_FMT_YUV420P10, AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUV444P,
                                               AV_PIX_FMT_GRAY8 };
    static const struct { const char *chain; AVRational tb; int n; } cases[] = {
        { "fps=30", { 1, 25 }, 12 },
        { "fps=250", { 1, 25 }, 4 },
        { "fps=24:round=down", { 1, 60 }, 20 },
        { "fps=5:round=up:eof_action=pass", { 1, 25 }, 12 },
    };
    int n = 0, failures = 0;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
        for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++)
            for (int as_array = 0; as_array < 2; as_array++, n++)
                failures += check_case(cases[c].chain, cases[c].tb, cases[c].n, fmts[f], as_array);
    if (failures) {
        printf("test_fps_gpu: %d of %d cases FAILED\n", failures, n);
        return 1;
    }
    printf("test_fps_gpu: %d cases (4 rate changes x 7 formats x pitch-linear/array input, the input overwritten "
           "after each call): the GPU's frames, pts and durations equal the CPU driver's: ok\n", n);
    return 0;
}
