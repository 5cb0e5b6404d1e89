/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * denoise: the shared per-sample math (kernels/denoise_math.h) and the CPU
 * operator's contract: option checks, frame counts and timestamps through
 * EAGAIN/flush, flat input kept exactly, thread-count invariance, the same
 * result for interleaved (NV12/P010) and planar layouts, and a real PSNR gain
 * on noisy synthetic frames.
 */
#include "test_denoise_util.h"
#include "kernels/denoise_math.h"

static void test_math(void)
{
    dn_tnr_params tp = { .maxval = 255, .sp_slope = 65536 / 15, .sp_amount = 256,
                         .mo_slope = 65536 / 60, .px_slope = 65536 / 20, .k_max = 192 };
    int flat[9], prev[9];
    for (int i = 0; i < 9; i++)
        flat[i] = prev[i] = 100;
    CHECK(dn_tnr_sample(flat, prev, 0, &tp) == 100, "flat, first frame");
    CHECK(dn_tnr_sample(flat, prev, 1, &tp) == 100, "flat, with history");
    int spike[9];
    memcpy(spike, flat, sizeof(spike));
    spike[4] = 110;
    int o = dn_tnr_sample(spike, prev, 1, &tp);
    CHECK(o >= 100 && o <= 104, "a small spike on a static flat area is pulled to the history (got %d)", o);
    int bright[9], dark[9];
    for (int i = 0; i < 9; i++) {
        bright[i] = 200;
        dark[i] = 0;
    }
    CHECK(dn_tnr_sample(bright, dark, 1, &tp) == 200, "a scene change takes no history");
    int edge[9] = { 0, 0, 0, 0, 0, 0, 255, 255, 255 };
    CHECK(dn_tnr_sample(edge, edge, 0, &tp) == 0, "a strong edge is not blurred into the sample");
    tp.maxval = 1023;
    for (int i = 0; i < 9; i++)
        flat[i] = prev[i] = 1023;
    CHECK(dn_tnr_sample(flat, prev, 1, &tp) == 1023, "10-bit white stays white");

    CHECK(dn_nlm_finish(5, 2) == 3, "rounding half up");
    CHECK(dn_nlm_finish(7, 3) == 2, "rounding down");
    CHECK(dn_nlm_finish(0xffffffffu, 0xffffffffu) == 1, "no overflow in the rounding");
    uint16_t lut[DN_NLM_LUT];
    for (int i = 0; i < DN_NLM_LUT; i++)
        lut[i] = (uint16_t)(DN_NLM_LUT - 1 - i);
    CHECK(dn_nlm_weight(lut, 2, 0) == 1023, "weight at distance 0");
    CHECK(dn_nlm_weight(lut, 2, 4 * DN_NLM_LUT - 1) == 0, "last bin");
    CHECK(dn_nlm_weight(lut, 2, 4 * DN_NLM_LUT) == 0, "past the table");
}

static void test_options(void)
{
    vkcu_chain chain;
    char err[512];
    CHECK(vkcu_chain_parse("denoise=mode=median", &chain, err, sizeof(err)) == VKCU_ERR_USAGE &&
              strstr(err, "tnr|nlm"),
          "unknown mode rejected with the choices (%s)", err);
    CHECK(vkcu_chain_parse("denoise=patch=9", &chain, err, sizeof(err)) == VKCU_ERR_USAGE && strstr(err, "patch"),
          "patch out of range rejected (%s)", err);
    CHECK(vkcu_chain_parse("denoise=sigma=-1", &chain, err, sizeof(err)) == VKCU_ERR_USAGE, "negative sigma rejected");
    CHECK(vkcu_chain_parse("denoise=mode=nlm:search=15:tradius=3", &chain, err, sizeof(err)) == VKCU_ERR_USAGE &&
              strstr(err, "candidates"),
          "too many nlm candidates rejected when the chain is parsed (%s)", err);
    CHECK(dt_make(&chain, "denoise", AV_PIX_FMT_RGB24, 64, 64, 1) == VKCU_ERR_USAGE, "rgb24 rejected");
    if (dt_make(&chain, "denoise=mode=nlm:sigma=3", AV_PIX_FMT_NV12, 64, 64, 1) == 0)
        vkcu_chain_free(&chain);
    else
        CHECK(0, "nv12 nlm accepted");
}

/* A smooth moving pattern with seeded noise. */
static AVFrame *make_frame(enum AVPixelFormat fmt, int w, int h, int t, double sigma, uint64_t seed)
{
    AVFrame *f = tu_frame(fmt, w, h);
    if (!f)
        return NULL;
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    int depth = d->comp[0].depth, maxval = (1 << depth) - 1;
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + (uint64_t)t + 1;
    for (int c = 0; c < 3; c++) {
        int cw, ch;
        dt_comp_size(f, c, &cw, &ch);
        for (int y = 0; y < ch; y++)
            for (int x = 0; x < cw; x++) {
                double v = 128 + 60 * sin((x + 2 * t) * 0.15 + c) * cos(y * 0.11) + ((x / 8 + y / 8) & 1) * 20;
                v = v * (1 << (depth - 8)) + sigma * (1 << (depth - 8)) * dt_gauss(&s);
                tu_set(f, c, x, y, (int)fmin(fmax(lrint(v), 0), maxval));
            }
    }
    f->pts = 1000 + 40 * t;
    f->duration = 40;
    return f;
}

static void free_frames(AVFrame **f, int n)
{
    for (int i = 0; i < n; i++)
        av_frame_free(&f[i]);
}

/* Runs `text` over n frames of fmt; returns the output count. */
static int run_chain(const char *text, enum AVPixelFormat fmt, int w, int h, int threads, AVFrame **in, int n,
                     AVFrame **out)
{
    vkcu_chain chain;
    if (dt_make(&chain, text, fmt, w, h, threads) < 0)
        return -1;
    int nout = dt_run(chain.ops[0], in, n, out);
    vkcu_chain_free(&chain);
    return nout;
}

static const enum AVPixelFormat fmts[] = {
    AV_PIX_FMT_NV12, AV_PIX_FMT_P010, AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV420P10,
    AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUV444P10,
};
static const char *modes[] = { "denoise=mode=tnr:sigma=8", "denoise=mode=nlm:sigma=8:search=3:patch=1" };

static void test_flat_and_counts(void)
{
    enum { N = 5 };
    for (size_t fi = 0; fi < sizeof(fmts) / sizeof(fmts[0]); fi++)
        for (int m = 0; m < 2; m++) {
            AVFrame *in[N] = { 0 }, *out[N] = { 0 };
            for (int i = 0; i < N; i++) {
                in[i] = make_frame(fmts[fi], 34, 18, i, 0, 1);
                /* flat: overwrite with one value per component */
                for (int c = 0; c < 3; c++) {
                    int w, h;
                    dt_comp_size(in[i], c, &w, &h);
                    for (int y = 0; y < h; y++)
                        for (int x = 0; x < w; x++)
                            tu_set(in[i], c, x, y, 37 * (c + 1));
                }
            }
            int n = run_chain(modes[m], fmts[fi], 34, 18, 2, in, N, out);
            const char *name = av_get_pix_fmt_name(fmts[fi]);
            CHECK(n == N, "%s %s: %d outputs for %d inputs", name, modes[m], n, N);
            for (int i = 0; i < n && i < N; i++) {
                CHECK(out[i]->pts == in[i]->pts && out[i]->duration == 40, "%s %s: frame %d pts %lld", name,
                      modes[m], i, (long long)out[i]->pts);
                CHECK(dt_equal(out[i], in[i]), "%s %s: frame %d: flat input changed", name, modes[m], i);
            }
            free_frames(in, N);
            free_frames(out, N);
        }
}

static void test_threads_layouts_gain(void)
{
    enum { N = 6, W = 66, H = 40 };
    const char *chains[] = { "denoise=mode=tnr:sigma=10", "denoise=mode=nlm:sigma=10:patch=2:search=4:tradius=1" };
    for (int m = 0; m < 2; m++) {
        for (int depth10 = 0; depth10 < 2; depth10++) {
            enum AVPixelFormat planar = depth10 ? AV_PIX_FMT_YUV420P10 : AV_PIX_FMT_YUV420P;
            enum AVPixelFormat semi = depth10 ? AV_PIX_FMT_P010 : AV_PIX_FMT_NV12;
            AVFrame *clean[N], *noisy[N], *semi_in[N], *o1[N] = { 0 }, *o3[N] = { 0 }, *os[N] = { 0 };
            for (int i = 0; i < N; i++) {
                clean[i] = make_frame(planar, W, H, i, 0, 7);
                noisy[i] = make_frame(planar, W, H, i, 10, 7);
                semi_in[i] = make_frame(semi, W, H, i, 10, 7);
            }
            int n1 = run_chain(chains[m], planar, W, H, 1, noisy, N, o1);
            int n3 = run_chain(chains[m], planar, W, H, 3, noisy, N, o3);
            int ns = run_chain(chains[m], semi, W, H, 2, semi_in, N, os);
            CHECK(n1 == N && n3 == N && ns == N, "%s: output counts %d %d %d", chains[m], n1, n3, ns);
            double sse_in = 0, sse_out = 0, cnt_in = 0, cnt_out = 0;
            for (int i = 0; i < N && n1 == N && n3 == N && ns == N; i++) {
                CHECK(dt_equal(o1[i], o3[i]), "%s depth10=%d frame %d: 1 and 3 threads differ", chains[m], depth10, i);
                CHECK(dt_equal(semi_in[i], noisy[i]), "test input mismatch");
                CHECK(dt_equal(os[i], o1[i]), "%s depth10=%d frame %d: interleaved chroma differs from planar",
                      chains[m], depth10, i);
                dt_sse(clean[i], noisy[i], &sse_in, &cnt_in);
                dt_sse(clean[i], o1[i], &sse_out, &cnt_out);
            }
            int maxval = depth10 ? 1023 : 255;
            double gain = dt_psnr(sse_out, cnt_out, maxval) - dt_psnr(sse_in, cnt_in, maxval);
            CHECK(gain > 3.0, "%s depth10=%d: PSNR gain only %.2f dB", chains[m], depth10, gain);
            free_frames(clean, N);
            free_frames(noisy, N);
            free_frames(semi_in, N);
            free_frames(o1, N);
            free_frames(o3, N);
            free_frames(os, N);
        }
    }
}

int main(void)
{
    test_math();
    test_options();
    test_flat_and_counts();
    test_threads_layouts_gain();
    if (tu_failures) {
        printf("test_denoise_math: %d checks FAILED\n", tu_failures);
        return 1;
    }
    printf("test_denoise_math: tnr/nlm math, options, flat input, frame counts and pts through flush, "
           "thread invariance, NV12/P010 == planar, > 3 dB gain: ok\n");
    return 0;
}
