/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Frame metrics: per-component PSNR, SSIM and largest absolute sample
 * difference of two pictures of the same format, with the definitions of
 * FFmpeg's psnr and ssim filters (libavfilter/vf_psnr.c, vf_ssim.c;
 * docs/regression.md), over views that give every layout one array of
 * samples per component.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "compare_priv.h"
#include "ops/op.h"

void vkcu_frame_view_free(frame_view *v)
{
    av_freep(&v->buf);
}

int vkcu_comp_subsampled(const AVPixFmtDescriptor *d, int i)
{
    return d->nb_components >= 3 && !(d->flags & AV_PIX_FMT_FLAG_RGB) && (i == 1 || i == 2);
}

/* One view per component: planar layouts in place, every other layout
 * (NV12, P010, packed RGB) unpacked into 16-bit samples. */
static int frame_view_init(frame_view *v, const AVFrame *f)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    memset(v, 0, sizeof(*v));
    if (!d || (d->flags & (AV_PIX_FMT_FLAG_FLOAT | AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_BITSTREAM |
                           AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BE)) || d->comp[0].depth > 16)
        return VKCU_ERR_USAGE;
    v->nb = d->nb_components;
    v->depth = d->comp[0].depth;
    int planar = 1;
    size_t total = 0;
    for (int i = 0; i < v->nb; i++) {
        const AVComponentDescriptor *c = &d->comp[i];
        int bytes = c->depth > 8 ? 2 : 1;
        if (c->depth != v->depth)
            return VKCU_ERR_USAGE;
        if (c->plane != i || c->step != bytes || c->shift || c->offset)
            planar = 0;
        v->c[i].w = vkcu_comp_subsampled(d, i) ? AV_CEIL_RSHIFT(f->width, d->log2_chroma_w) : f->width;
        v->c[i].h = vkcu_comp_subsampled(d, i) ? AV_CEIL_RSHIFT(f->height, d->log2_chroma_h) : f->height;
        total += (size_t)v->c[i].w * v->c[i].h;
    }
    if (planar) {
        for (int i = 0; i < v->nb; i++) {
            v->c[i].data = f->data[i];
            v->c[i].stride = f->linesize[i];
            v->c[i].wide = v->depth > 8;
        }
        return 0;
    }
    v->buf = av_malloc(total * sizeof(uint16_t));
    if (!v->buf)
        return AVERROR(ENOMEM);
    uint16_t *p = v->buf;
    for (int i = 0; i < v->nb; i++) {
        comp_view *c = &v->c[i];
        for (int y = 0; y < c->h; y++)
            av_read_image_line2(p + (size_t)y * c->w, (const uint8_t **)f->data, f->linesize, d, 0, y, i, c->w, 0, 2);
        c->data = (const uint8_t *)p;
        c->stride = (ptrdiff_t)c->w * 2;
        c->wide = 1;
        p += (size_t)c->w * c->h;
    }
    return 0;
}

/* Views of both frames, or neither (an error). */
int vkcu_frame_views_init(frame_view *va, frame_view *vb, const AVFrame *a, const AVFrame *b)
{
    int ret = frame_view_init(va, a);
    if (ret >= 0)
        ret = frame_view_init(vb, b);
    if (ret < 0)
        vkcu_frame_view_free(va);
    return ret;
}

/* A plane's comparison on the CPU, in bands of rows on the worker pool
 * (vkcu_parallel_rows): each sample row's squared differences and largest
 * difference, and each window row's SSIM sum, go into arrays that one
 * thread then adds up in order, so the figures do not depend on the number
 * of threads and equal the GPU's (kernels/metrics_math.h). */
typedef struct plane_pass {
    const comp_view *a, *b;
    int64_t c1, c2;
    int wx, wy;              /* SSIM windows per row, window rows */
    uint64_t *row_sse;       /* per sample row */
    int *row_max;
    double *win_rows;        /* per window row */
    int failed;              /* a band could not allocate its sums */
} plane_pass;

/* Squared differences and the largest difference of rows [y0, y1): plain
 * loops the compiler vectorises; the largest difference's place is looked
 * up afterwards in the one row that holds it (first_max_x). */
/* gcc vectorises these loops at -O2 only with this cost model, and AVX2
 * (32-bit multiplies, twice the lanes) runs them about 3x faster than the
 * baseline's SSE2; the AVX2 clone is chosen at load time where the CPU has
 * it. clang vectorises at -O2 on its own. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define VECTORIZE __attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic"), target_clones("avx2", "default")))
#else
#define VECTORIZE
#endif
#if defined(__x86_64__) && defined(__GNUC__)
/* The squared differences and the largest difference of an 8-bit row's
 * first (w & ~31) samples with AVX2, added to *line and *line_max: each
 * difference |a - b| in 8 bits (two saturating subtractions), its largest
 * kept in 8 bits, the squares summed in pairs by pmaddwd into 32-bit lanes
 * that take at most 2048 steps (2048 * 4 * 255^2 < 2^32) before they go
 * into the 64-bit total. Returns the samples done. */
__attribute__((target("avx2"))) static int sse_row_8_avx2(const uint8_t *a, const uint8_t *b, int w, uint64_t *line,
                                                           int *line_max)
{
    const __m256i zero = _mm256_setzero_si256();
    __m256i big = zero;
    uint64_t total = 0;
    int x = 0;
    while (x + 32 <= w) {
        int end = w - x > 32 * 2048 ? x + 32 * 2048 : w;
        __m256i acc = zero;
        for (; x + 32 <= end; x += 32) {
            __m256i va = _mm256_loadu_si256((const __m256i *)(a + x)), vb = _mm256_loadu_si256((const __m256i *)(b + x));
            __m256i d = _mm256_or_si256(_mm256_subs_epu8(va, vb), _mm256_subs_epu8(vb, va));
            big = _mm256_max_epu8(big, d);
            __m256i lo = _mm256_unpacklo_epi8(d, zero), hi = _mm256_unpackhi_epi8(d, zero);
            acc = _mm256_add_epi32(acc, _mm256_add_epi32(_mm256_madd_epi16(lo, lo), _mm256_madd_epi16(hi, hi)));
        }
        uint64_t lanes[4];
        _mm256_storeu_si256((__m256i *)lanes,
                            _mm256_add_epi64(_mm256_unpacklo_epi32(acc, zero), _mm256_unpackhi_epi32(acc, zero)));
        total += lanes[0] + lanes[1] + lanes[2] + lanes[3];
    }
    uint8_t m[32];
    _mm256_storeu_si256((__m256i *)m, big);
    for (int i = 0; i < 32; i++)
        *line_max = m[i] > *line_max ? m[i] : *line_max;
    *line += total;
    return x;
}
#endif

VECTORIZE static void sse_rows(void *ctx, int y0, int y1)
{
    plane_pass *pp = ctx;
    const comp_view *a = pp->a, *b = pp->b;
    for (int y = y0; y < y1; y++) {
        const uint8_t *ra = a->data + (ptrdiff_t)y * a->stride, *rb = b->data + (ptrdiff_t)y * b->stride;
        uint64_t line = 0;
        int line_max = 0;
        if (a->wide) {
            const uint16_t *pa = (const uint16_t *)ra, *pb = (const uint16_t *)rb;
            for (int x = 0; x < a->w; x++) {
                int d = abs((int)pa[x] - (int)pb[x]);
                line += (uint64_t)((uint32_t)d * (uint32_t)d);
                line_max = d > line_max ? d : line_max;
            }
        } else {
            uint32_t sum = 0; /* at most 8192 * 255^2 < 2^32 per row is not guaranteed: add in chunks */
            int done = 0;
#if defined(__x86_64__) && defined(__GNUC__)
            if (__builtin_cpu_supports("avx2"))
                done = sse_row_8_avx2(ra, rb, a->w, &line, &line_max);
#endif
            for (int x0 = done; x0 < a->w; x0 += 4096) {
                int x1 = x0 + 4096 < a->w ? x0 + 4096 : a->w;
                sum = 0;
                for (int x = x0; x < x1; x++) {
                    int d = abs((int)ra[x] - (int)rb[x]);
                    sum += (uint32_t)(d * d);
                    line_max = d > line_max ? d : line_max;
                }
                line += sum;
            }
        }
        pp->row_sse[y] = line;
        pp->row_max[y] = line_max;
    }
}

/* The first place in row y where the difference is d. */
static int first_max_x(const comp_view *a, const comp_view *b, int y, int d)
{
    for (int x = 0; x < a->w; x++)
        if (abs(sample_at(a, x, y) - sample_at(b, x, y)) == d)
            return x;
    return 0;
}

/* Four rows' sums per column, 8-bit samples (at most 8 * 255^2 a column). */
VECTORIZE static void column_sums(const uint8_t *restrict a0, const uint8_t *restrict a1, const uint8_t *restrict a2,
                                  const uint8_t *restrict a3, const uint8_t *restrict b0, const uint8_t *restrict b1,
                                  const uint8_t *restrict b2, const uint8_t *restrict b3, int n, uint32_t *restrict c1,
                                  uint32_t *restrict c2, uint32_t *restrict css, uint32_t *restrict c12)
{
    for (int x = 0; x < n; x++) {
        uint32_t p0 = a0[x], p1 = a1[x], p2 = a2[x], p3 = a3[x], q0 = b0[x], q1 = b1[x], q2 = b2[x], q3 = b3[x];
        c1[x] = p0 + p1 + p2 + p3;
        c2[x] = q0 + q1 + q2 + q3;
        css[x] = p0 * p0 + p1 * p1 + p2 * p2 + p3 * p3 + q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3;
        c12[x] = p0 * q0 + p1 * q1 + p2 * q2 + p3 * q3;
    }
}

/* The four sums of each 4x4 block of block row `by` of 8-bit planes, one
 * array a sum (s->s1[z] ... s->s12[z] for block z): each column's four
 * samples summed first, then four columns a block, every sum in 32 bits
 * (at most 32 * 255^2). col: scratch of 16 words a block. */
typedef struct block_sums {
    uint32_t *s1, *s2, *ss, *s12;
} block_sums;

#ifdef __SSE2__
/* Blocks [0, blocks & ~3) of block_sums_8, four at a time: a row's 16
 * samples widened to 16 bits, their squares and products summed in pairs
 * by pmaddwd (32 bits), four rows added, then each block's two pairs; the
 * sample sums stay in 16 bits (at most 4 * 255 a column) until the last
 * step. Returns the blocks done. */
static int block_sums_8_sse2(const uint8_t *const ra[4], const uint8_t *const rb[4], const block_sums *s, int blocks)
{
    const __m128i zero = _mm_setzero_si128(), ones = _mm_set1_epi16(1);
    int z = 0;
    for (; z + 4 <= blocks; z += 4) {
        __m128i sa_lo = zero, sa_hi = zero, sb_lo = zero, sb_hi = zero;
        __m128i ss_lo = zero, ss_hi = zero, sab_lo = zero, sab_hi = zero;
        for (int y = 0; y < 4; y++) {
            __m128i va = _mm_loadu_si128((const __m128i *)(ra[y] + 4 * z));
            __m128i vb = _mm_loadu_si128((const __m128i *)(rb[y] + 4 * z));
            __m128i a_lo = _mm_unpacklo_epi8(va, zero), a_hi = _mm_unpackhi_epi8(va, zero);
            __m128i b_lo = _mm_unpacklo_epi8(vb, zero), b_hi = _mm_unpackhi_epi8(vb, zero);
            sa_lo = _mm_add_epi16(sa_lo, a_lo);
            sa_hi = _mm_add_epi16(sa_hi, a_hi);
            sb_lo = _mm_add_epi16(sb_lo, b_lo);
            sb_hi = _mm_add_epi16(sb_hi, b_hi);
            ss_lo = _mm_add_epi32(ss_lo, _mm_add_epi32(_mm_madd_epi16(a_lo, a_lo), _mm_madd_epi16(b_lo, b_lo)));
            ss_hi = _mm_add_epi32(ss_hi, _mm_add_epi32(_mm_madd_epi16(a_hi, a_hi), _mm_madd_epi16(b_hi, b_hi)));
            sab_lo = _mm_add_epi32(sab_lo, _mm_madd_epi16(a_lo, b_lo));
            sab_hi = _mm_add_epi32(sab_hi, _mm_madd_epi16(a_hi, b_hi));
        }
        /* Pairs of columns (lo: blocks z, z + 1; hi: z + 2, z + 3) to blocks. */
#define PAIRS_TO_BLOCKS(lo, hi)                                                                                        \
    _mm_add_epi32(_mm_castps_si128(_mm_shuffle_ps(_mm_castsi128_ps(lo), _mm_castsi128_ps(hi), _MM_SHUFFLE(2, 0, 2, 0))), \
                  _mm_castps_si128(_mm_shuffle_ps(_mm_castsi128_ps(lo), _mm_castsi128_ps(hi), _MM_SHUFFLE(3, 1, 3, 1))))
        _mm_storeu_si128((__m128i *)(s->s1 + z),
                         PAIRS_TO_BLOCKS(_mm_madd_epi16(sa_lo, ones), _mm_madd_epi16(sa_hi, ones)));
        _mm_storeu_si128((__m128i *)(s->s2 + z),
                         PAIRS_TO_BLOCKS(_mm_madd_epi16(sb_lo, ones), _mm_madd_epi16(sb_hi, ones)));
        _mm_storeu_si128((__m128i *)(s->ss + z), PAIRS_TO_BLOCKS(ss_lo, ss_hi));
        _mm_storeu_si128((__m128i *)(s->s12 + z), PAIRS_TO_BLOCKS(sab_lo, sab_hi));
#undef PAIRS_TO_BLOCKS
    }
    return z;
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
/* The same for eight blocks at a time with AVX2 (unpacking within each
 * 128-bit lane keeps the blocks in order: the low lane's pairs are blocks
 * z..z+3, the high lane's z+4..z+7). Returns the blocks done. */
__attribute__((target("avx2"))) static int block_sums_8_avx2(const uint8_t *const ra[4], const uint8_t *const rb[4],
                                                              const block_sums *s, int blocks)
{
    const __m256i zero = _mm256_setzero_si256(), ones = _mm256_set1_epi16(1);
    int z = 0;
    for (; z + 8 <= blocks; z += 8) {
        __m256i sa_lo = zero, sa_hi = zero, sb_lo = zero, sb_hi = zero;
        __m256i ss_lo = zero, ss_hi = zero, sab_lo = zero, sab_hi = zero;
        for (int y = 0; y < 4; y++) {
            __m256i va = _mm256_loadu_si256((const __m256i *)(ra[y] + 4 * z));
            __m256i vb = _mm256_loadu_si256((const __m256i *)(rb[y] + 4 * z));
            __m256i a_lo = _mm256_unpacklo_epi8(va, zero), a_hi = _mm256_unpackhi_epi8(va, zero);
            __m256i b_lo = _mm256_unpacklo_epi8(vb, zero), b_hi = _mm256_unpackhi_epi8(vb, zero);
            sa_lo = _mm256_add_epi16(sa_lo, a_lo);
            sa_hi = _mm256_add_epi16(sa_hi, a_hi);
            sb_lo = _mm256_add_epi16(sb_lo, b_lo);
            sb_hi = _mm256_add_epi16(sb_hi, b_hi);
            ss_lo = _mm256_add_epi32(ss_lo,
                                     _mm256_add_epi32(_mm256_madd_epi16(a_lo, a_lo), _mm256_madd_epi16(b_lo, b_lo)));
            ss_hi = _mm256_add_epi32(ss_hi,
                                     _mm256_add_epi32(_mm256_madd_epi16(a_hi, a_hi), _mm256_madd_epi16(b_hi, b_hi)));
            sab_lo = _mm256_add_epi32(sab_lo, _mm256_madd_epi16(a_lo, b_lo));
            sab_hi = _mm256_add_epi32(sab_hi, _mm256_madd_epi16(a_hi, b_hi));
        }
#define PAIRS_TO_BLOCKS(lo, hi)                                                                                        \
    _mm256_add_epi32(                                                                                                  \
        _mm256_castps_si256(_mm256_shuffle_ps(_mm256_castsi256_ps(lo), _mm256_castsi256_ps(hi), _MM_SHUFFLE(2, 0, 2, 0))), \
        _mm256_castps_si256(_mm256_shuffle_ps(_mm256_castsi256_ps(lo), _mm256_castsi256_ps(hi), _MM_SHUFFLE(3, 1, 3, 1))))
        _mm256_storeu_si256((__m256i *)(s->s1 + z),
                            PAIRS_TO_BLOCKS(_mm256_madd_epi16(sa_lo, ones), _mm256_madd_epi16(sa_hi, ones)));
        _mm256_storeu_si256((__m256i *)(s->s2 + z),
                            PAIRS_TO_BLOCKS(_mm256_madd_epi16(sb_lo, ones), _mm256_madd_epi16(sb_hi, ones)));
        _mm256_storeu_si256((__m256i *)(s->ss + z), PAIRS_TO_BLOCKS(ss_lo, ss_hi));
        _mm256_storeu_si256((__m256i *)(s->s12 + z), PAIRS_TO_BLOCKS(sab_lo, sab_hi));
#undef PAIRS_TO_BLOCKS
    }
    return z;
}
#endif

VECTORIZE static void block_sums_8(const comp_view *a, const comp_view *b, int by, const block_sums *s, int blocks,
                                   uint32_t *restrict col)
{
    const uint8_t *ra[4], *rb[4];
    for (int y = 0; y < 4; y++) {
        ra[y] = a->data + (ptrdiff_t)(4 * by + y) * a->stride;
        rb[y] = b->data + (ptrdiff_t)(4 * by + y) * b->stride;
    }
#ifdef __SSE2__
    int done = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx2"))
        done = block_sums_8_avx2(ra, rb, s, blocks);
#endif
    if (done < blocks) {
        const uint8_t *const ta[4] = { ra[0] + 4 * done, ra[1] + 4 * done, ra[2] + 4 * done, ra[3] + 4 * done };
        const uint8_t *const tb[4] = { rb[0] + 4 * done, rb[1] + 4 * done, rb[2] + 4 * done, rb[3] + 4 * done };
        block_sums tail = { s->s1 + done, s->s2 + done, s->ss + done, s->s12 + done };
        done += block_sums_8_sse2(ta, tb, &tail, blocks - done);
    }
    if (done == blocks)
        return;
    for (int y = 0; y < 4; y++) {
        ra[y] += 4 * done;
        rb[y] += 4 * done;
    }
    blocks -= done;
    s = &(block_sums){ s->s1 + done, s->s2 + done, s->ss + done, s->s12 + done };
#endif
    int n = 4 * blocks;
    uint32_t *restrict c1 = col, *restrict c2 = col + n, *restrict css = col + 2 * n, *restrict c12 = col + 3 * n;
    column_sums(ra[0], ra[1], ra[2], ra[3], rb[0], rb[1], rb[2], rb[3], n, c1, c2, css, c12);
    uint32_t *restrict s1 = s->s1, *restrict s2 = s->s2, *restrict ss = s->ss, *restrict s12 = s->s12;
    for (int z = 0; z < blocks; z++) {
        int x = 4 * z;
        s1[z] = c1[x] + c1[x + 1] + c1[x + 2] + c1[x + 3];
        s2[z] = c2[x] + c2[x + 1] + c2[x + 2] + c2[x + 3];
        ss[z] = css[x] + css[x + 1] + css[x + 2] + css[x + 3];
        s12[z] = c12[x] + c12[x + 1] + c12[x + 2] + c12[x + 3];
    }
}

/* The windows of one window row of 8-bit planes, from the block rows above
 * (t) and below (u): vkcu_ssim_window's expression (kernels/metrics_math.h)
 * in 32-bit integers, where 8-bit sums keep every term exact (the largest,
 * ss * 64 and 2 * s1 * s2, at most 64 * 2 * 64 * 255^2 < 2^31), so each
 * float is the one vkcu_ssim_window gives; in a loop the compiler
 * vectorises (the division and products rounded each on its own, no fused
 * multiply-add: -std=c11 keeps contraction off and the clones are AVX2's,
 * without FMA). */
VECTORIZE static void windows_8(const block_sums *t, const block_sums *u, int wx, int32_t c1, int32_t c2,
                                float *restrict win)
{
    const uint32_t *restrict t1 = t->s1, *restrict t2 = t->s2, *restrict tss = t->ss, *restrict t12 = t->s12;
    const uint32_t *restrict u1 = u->s1, *restrict u2 = u->s2, *restrict uss = u->ss, *restrict u12 = u->s12;
    for (int i = 0; i < wx; i++) {
        int32_t s1 = (int32_t)(t1[i] + t1[i + 1] + u1[i] + u1[i + 1]);
        int32_t s2 = (int32_t)(t2[i] + t2[i + 1] + u2[i] + u2[i + 1]);
        int32_t ss = (int32_t)(tss[i] + tss[i + 1] + uss[i] + uss[i + 1]);
        int32_t s12 = (int32_t)(t12[i] + t12[i + 1] + u12[i] + u12[i + 1]);
        int32_t vars = ss * 64 - s1 * s1 - s2 * s2;
        int32_t covar = s12 * 64 - s1 * s2;
        float n0 = (float)(2 * s1 * s2 + c1), n1 = (float)(2 * covar + c2);
        float d0 = (float)(s1 * s1 + s2 * s2 + c1), d1 = (float)(vars + c2);
        win[i] = n0 * n1 / (d0 * d1);
    }
}

/* vf_ssim.c's ssim_4x4xn for samples over 8 bits: the sums of the 4x4
 * blocks of block row `by`, in 64 bits. */
VECTORIZE static void ssim_4x4_row_wide(const comp_view *a, const comp_view *b, int by, int64_t (*sums)[4], int blocks)
{
    const uint8_t *ra[4], *rb[4];
    for (int y = 0; y < 4; y++) {
        ra[y] = a->data + (ptrdiff_t)(4 * by + y) * a->stride;
        rb[y] = b->data + (ptrdiff_t)(4 * by + y) * b->stride;
    }
    for (int z = 0; z < blocks; z++) {
        int64_t s1 = 0, s2 = 0, ss = 0, s12 = 0;
        for (int y = 0; y < 4; y++) {
            const uint16_t *pa = (const uint16_t *)ra[y], *pb = (const uint16_t *)rb[y];
            for (int x = 4 * z; x < 4 * z + 4; x++) {
                int64_t va = pa[x], vb = pb[x];
                s1 += va;
                s2 += vb;
                ss += va * va + vb * vb;
                s12 += va * vb;
            }
        }
        sums[z][0] = s1;
        sums[z][1] = s2;
        sums[z][2] = ss;
        sums[z][3] = s12;
    }
}

/* Window rows [j0, j1) of 8-bit planes: window row j spans block rows j
 * and j + 1; its windows' floats added in double from left to right. */
static void ssim_rows_8(plane_pass *pp, int j0, int j1)
{
    int blocks = pp->wx + 1;
    uint32_t *mem = av_malloc_array(24 * (size_t)blocks, sizeof(*mem));
    float *win = av_malloc_array((size_t)pp->wx, sizeof(*win));
    if (!mem || !win) {
        av_free(mem);
        av_free(win);
        __atomic_store_n(&pp->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    uint32_t *col = mem + 8 * (size_t)blocks;
    block_sums rows[2];
    for (int r = 0; r < 2; r++)
        rows[r] = (block_sums){ mem + (4 * r) * (size_t)blocks, mem + (4 * r + 1) * (size_t)blocks,
                                mem + (4 * r + 2) * (size_t)blocks, mem + (4 * r + 3) * (size_t)blocks };
    block_sums *top = &rows[0], *bottom = &rows[1];
    block_sums_8(pp->a, pp->b, j0, top, blocks, col);
    for (int j = j0; j < j1; j++) {
        block_sums_8(pp->a, pp->b, j + 1, bottom, blocks, col);
        windows_8(top, bottom, pp->wx, (int32_t)pp->c1, (int32_t)pp->c2, win);
        double row = 0;
        for (int i = 0; i < pp->wx; i++)
            row += win[i];
        pp->win_rows[j] = row;
        block_sums *t = top;
        top = bottom;
        bottom = t;
    }
    av_free(mem);
    av_free(win);
}

/* Window rows [j0, j1): window row j spans block rows j and j + 1. */
static void ssim_rows(void *ctx, int j0, int j1)
{
    plane_pass *pp = ctx;
    if (!pp->a->wide) {
        ssim_rows_8(pp, j0, j1);
        return;
    }
    int blocks = pp->wx + 1;
    int64_t (*top)[4] = av_malloc_array(2 * (size_t)blocks, sizeof(*top));
    if (!top) {
        __atomic_store_n(&pp->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    int64_t (*base)[4] = top, (*bottom)[4] = top + blocks;
    ssim_4x4_row_wide(pp->a, pp->b, j0, top, blocks);
    for (int j = j0; j < j1; j++) {
        ssim_4x4_row_wide(pp->a, pp->b, j + 1, bottom, blocks);
        double row = 0;
        for (int i = 0; i < pp->wx; i++)
            row += vkcu_ssim_window(top[i][0] + top[i + 1][0] + bottom[i][0] + bottom[i + 1][0],
                                    top[i][1] + top[i + 1][1] + bottom[i][1] + bottom[i + 1][1],
                                    top[i][2] + top[i + 1][2] + bottom[i][2] + bottom[i + 1][2],
                                    top[i][3] + top[i + 1][3] + bottom[i][3] + bottom[i + 1][3], pp->c1, pp->c2);
        pp->win_rows[j] = row;
        int64_t (*t)[4] = top;
        top = bottom;
        bottom = t;
    }
    av_free(base);
}

static int plane_stats_cpu(const comp_view *a, const comp_view *b, int peak, int threads, vkcu_plane_stats *st)
{
    plane_pass pp = { .a = a, .b = b, .c1 = vkcu_ssim_c1(peak), .c2 = vkcu_ssim_c2(peak),
                      .wx = vkcu_ssim_windows_x(a->w), .wy = vkcu_ssim_windows_y(a->h) };
    int ssim = pp.wx >= 1 && pp.wy >= 1;
    pp.row_sse = av_malloc_array(a->h, sizeof(*pp.row_sse));
    pp.row_max = av_malloc_array(a->h, sizeof(*pp.row_max));
    pp.win_rows = ssim ? av_malloc_array(pp.wy, sizeof(*pp.win_rows)) : NULL;
    int ret = pp.row_sse && pp.row_max && (pp.win_rows || !ssim) ? 0 : AVERROR(ENOMEM);
    if (ret >= 0) {
        vkcu_parallel_rows(threads, a->h, sse_rows, &pp);
        if (ssim)
            vkcu_parallel_rows(threads, pp.wy, ssim_rows, &pp);
        if (pp.failed)
            ret = AVERROR(ENOMEM);
    }
    if (ret >= 0) {
        memset(st, 0, sizeof(*st));
        int best = -1;
        for (int y = 0; y < a->h; y++) {
            st->sse += pp.row_sse[y];
            if (pp.row_max[y] > best) {
                best = pp.row_max[y];
                st->max_y = y;
            }
        }
        st->max_diff = best < 0 ? 0 : best;
        st->max_x = first_max_x(a, b, st->max_y, st->max_diff);
        for (int j = 0; ssim && j < pp.wy; j++)
            st->ssim_sum += pp.win_rows[j];
        st->ssim_windows = ssim ? (int64_t)pp.wx * pp.wy : 0;
    }
    av_free(pp.row_sse);
    av_free(pp.row_max);
    av_free(pp.win_rows);
    return ret;
}

double vkcu_psnr_of(double mse, int peak)
{
    return 10.0 * log10((double)peak * peak / mse); /* +inf for mse 0, as FFmpeg prints it */
}

static void comp_labels(const AVPixFmtDescriptor *d, char *names)
{
    const char *set = (d->flags & AV_PIX_FMT_FLAG_RGB) ? "rgb" : "yuv";
    int n = d->nb_components;
    for (int i = 0; i < n; i++)
        names[i] = (i == n - 1 && (d->flags & AV_PIX_FMT_FLAG_ALPHA)) ? 'a' : set[i];
    names[n] = 0;
}

/* A frame's figures from its planes' (either backend's): the one place
 * where they become PSNR, SSIM and the largest difference. */
void vkcu_frame_metrics_finish(const AVFrame *a, const vkcu_plane_stats *st, vkcu_frame_metrics *m)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(a->format);
    memset(m, 0, sizeof(*m));
    m->vmaf = NAN;
    m->nb_comps = d->nb_components;
    m->peak = (1 << d->comp[0].depth) - 1;
    comp_labels(d, m->comp_names);
    double total_px = 0, avg_peak = 0, ssim_all = 0;
    int w[4], h[4];
    for (int i = 0; i < m->nb_comps; i++) {
        w[i] = vkcu_comp_subsampled(d, i) ? AV_CEIL_RSHIFT(a->width, d->log2_chroma_w) : a->width;
        h[i] = vkcu_comp_subsampled(d, i) ? AV_CEIL_RSHIFT(a->height, d->log2_chroma_h) : a->height;
        total_px += (double)w[i] * h[i];
    }
    for (int i = 0; i < m->nb_comps; i++) {
        double px = (double)w[i] * h[i], weight = px / total_px;
        m->mse[i] = st[i].sse / px;
        m->psnr[i] = vkcu_psnr_of(m->mse[i], m->peak);
        m->ssim[i] = st[i].ssim_windows ? st[i].ssim_sum / (double)st[i].ssim_windows : NAN;
        m->mse_avg += m->mse[i] * weight;
        avg_peak += m->peak * weight;
        ssim_all += m->ssim[i] * weight;
        if (st[i].max_diff > m->max_diff || i == 0) {
            m->max_diff = st[i].max_diff;
            m->max_diff_comp = i;
            m->max_diff_x = st[i].max_x;
            m->max_diff_y = st[i].max_y;
        }
    }
    m->psnr_avg = vkcu_psnr_of(m->mse_avg, (int)lrint(avg_peak));
    m->ssim_all = ssim_all;
}

int vkcu_frame_metrics_mismatch(const AVFrame *a, const AVFrame *b, char *err, size_t errlen)
{
    if (a->format == b->format && a->width == b->width && a->height == b->height)
        return 0;
    snprintf(err, errlen, "%dx%d %s against %dx%d %s", a->width, a->height, av_get_pix_fmt_name(a->format), b->width,
             b->height, av_get_pix_fmt_name(b->format));
    return VKCU_ERR_MISMATCH;
}

int vkcu_frame_metrics_compute_threads(const AVFrame *a, const AVFrame *b, int threads, vkcu_frame_metrics *m,
                                       char *err, size_t errlen)
{
    memset(m, 0, sizeof(*m));
    m->vmaf = NAN;
    int ret = vkcu_frame_metrics_mismatch(a, b, err, errlen);
    if (ret < 0)
        return ret;
    frame_view va, vb;
    if ((ret = vkcu_frame_views_init(&va, &vb, a, b)) < 0) {
        snprintf(err, errlen, "%s has no sample metrics (float or bitstream layout); compare hashes instead",
                 av_get_pix_fmt_name(a->format));
        return ret;
    }
    vkcu_plane_stats st[4];
    int peak = (1 << va.depth) - 1;
    for (int i = 0; i < va.nb && ret >= 0; i++)
        ret = plane_stats_cpu(&va.c[i], &vb.c[i], peak, threads, &st[i]);
    vkcu_frame_view_free(&va);
    vkcu_frame_view_free(&vb);
    if (ret < 0) {
        snprintf(err, errlen, "out of memory");
        return ret;
    }
    vkcu_frame_metrics_finish(a, st, m);
    return 0;
}

int vkcu_frame_metrics_compute(const AVFrame *a, const AVFrame *b, vkcu_frame_metrics *m, char *err, size_t errlen)
{
    return vkcu_frame_metrics_compute_threads(a, b, 1, m, err, errlen);
}
