/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * denoise quality against FFmpeg's own denoisers, on the same noisy frames:
 * clean conformance clips (decoded here with libavcodec) plus seeded Gaussian
 * noise of sigma 5, 10 and 20. `tnr` must gain at least as much PSNR as the
 * best of a grid of hqdn3d settings, `nlm` at least as much as the best of a
 * grid of nlmeans strengths (both run by the ffmpeg binary named in the
 * build's deps.mk). Our operator runs with sigma = the true noise sigma and
 * its default keys. PSNR is over all Y, U and V samples of all frames.
 *
 * Usage: test_denoise_quality [--table] [--frames N] [--tnr CHAIN] [--nlm CHAIN]
 *                             [--no-ffmpeg]
 * --table prints one row per clip and sigma (tools/denoise-quality.sh).
 * Environment: FFMPEG (the ffmpeg binary), VKCU_CONFORMANCE (clip folder).
 * Exit: 0 pass, 1 fail, 77 when ffmpeg or the clips are missing.
 */
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libgen.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_denoise_util.h"

#define MAX_FRAMES 16

typedef struct clip {
    const char *file;
    int w, h, n;
    AVFrame *frame[MAX_FRAMES];
} clip;

static int decode_clip(const char *path, clip *c, int nframes)
{
    AVFormatContext *fmt = NULL;
    AVCodecContext *dec = NULL;
    AVPacket *pkt = av_packet_alloc();
    AVFrame *f = av_frame_alloc();
    int ret = -1, si;
    c->n = 0;
    if (!pkt || !f || avformat_open_input(&fmt, path, NULL, NULL) < 0 || avformat_find_stream_info(fmt, NULL) < 0)
        goto done;
    const AVCodec *codec = NULL;
    if ((si = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0)) < 0)
        goto done;
    if (!(dec = avcodec_alloc_context3(codec)) ||
        avcodec_parameters_to_context(dec, fmt->streams[si]->codecpar) < 0)
        goto done;
    dec->thread_count = 1;
    if (avcodec_open2(dec, codec, NULL) < 0)
        goto done;
    int eof = 0;
    while (c->n < nframes) {
        int r = avcodec_receive_frame(dec, f);
        if (r == 0) {
            if (f->format != AV_PIX_FMT_YUV420P)
                goto done;
            c->w = f->width;
            c->h = f->height;
            AVFrame *k = tu_frame(AV_PIX_FMT_YUV420P, f->width, f->height);
            if (!k || av_frame_copy(k, f) < 0) {
                av_frame_free(&k);
                goto done;
            }
            k->pts = c->n;
            c->frame[c->n++] = k;
            continue;
        }
        if (r == AVERROR_EOF)
            break;
        if (r != AVERROR(EAGAIN))
            goto done;
        if (eof)
            break;
        if (av_read_frame(fmt, pkt) < 0) {
            eof = 1;
            avcodec_send_packet(dec, NULL);
            continue;
        }
        if (pkt->stream_index == si)
            avcodec_send_packet(dec, pkt);
        av_packet_unref(pkt);
    }
    ret = c->n == nframes ? 0 : -1;
done:
    av_packet_free(&pkt);
    av_frame_free(&f);
    avcodec_free_context(&dec);
    avformat_close_input(&fmt);
    return ret;
}

static void add_noise(AVFrame *const *clean, AVFrame **noisy, int n, double sigma, uint64_t seed)
{
    uint64_t s = seed;
    for (int i = 0; i < n; i++) {
        noisy[i] = tu_frame(AV_PIX_FMT_YUV420P, clean[i]->width, clean[i]->height);
        noisy[i]->pts = clean[i]->pts;
        for (int c = 0; c < 3; c++) {
            int w, h;
            dt_comp_size(clean[i], c, &w, &h);
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    long v = lrint(tu_get(clean[i], c, x, y) + sigma * dt_gauss(&s));
                    tu_set(noisy[i], c, x, y, v < 0 ? 0 : v > 255 ? 255 : (int)v);
                }
        }
    }
}

static int write_raw(const char *path, AVFrame *const *f, int n)
{
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return -1;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) {
            int w, h;
            dt_comp_size(f[i], c, &w, &h);
            for (int y = 0; y < h; y++)
                fwrite(f[i]->data[c] + (ptrdiff_t)y * f[i]->linesize[c], 1, w, fp);
        }
    return fclose(fp);
}

/* PSNR of a raw yuv420p file against the clean frames; -1 on error. */
static double psnr_raw(const char *path, AVFrame *const *clean, int n)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return -1;
    double sse = 0, cnt = 0;
    for (int i = 0; i < n; i++) {
        AVFrame *g = tu_frame(AV_PIX_FMT_YUV420P, clean[i]->width, clean[i]->height);
        int ok = 1;
        for (int c = 0; c < 3 && ok; c++) {
            int w, h;
            dt_comp_size(g, c, &w, &h);
            for (int y = 0; y < h && ok; y++)
                ok = fread(g->data[c] + (ptrdiff_t)y * g->linesize[c], 1, w, fp) == (size_t)w;
        }
        if (ok)
            dt_sse(clean[i], g, &sse, &cnt);
        av_frame_free(&g);
        if (!ok) {
            fclose(fp);
            return -1;
        }
    }
    fclose(fp);
    return dt_psnr(sse, cnt, 255);
}

static double psnr_frames(AVFrame *const *clean, AVFrame *const *f, int n)
{
    double sse = 0, cnt = 0;
    for (int i = 0; i < n; i++)
        dt_sse(clean[i], f[i], &sse, &cnt);
    return dt_psnr(sse, cnt, 255);
}

static const char *ffmpeg_bin;
static char tmpdir[256];

static double run_ffmpeg(const clip *c, const char *filter, AVFrame *const *clean)
{
    char cmd[2048], out[512];
    snprintf(out, sizeof(out), "%s/out.yuv", tmpdir);
    snprintf(cmd, sizeof(cmd),
             "'%s' -nostdin -v error -f rawvideo -pix_fmt yuv420p -s %dx%d -i '%s/noisy.yuv' -vf '%s' "
             "-f rawvideo -pix_fmt yuv420p -y '%s'",
             ffmpeg_bin, c->w, c->h, tmpdir, filter, out);
    if (system(cmd) != 0) {
        fprintf(stderr, "test_denoise_quality: failed: %s\n", cmd);
        return -1;
    }
    return psnr_raw(out, clean, c->n);
}

static double run_ours(const clip *c, const char *chain_text, AVFrame *const *clean, AVFrame *const *noisy)
{
    vkcu_chain chain;
    AVFrame *out[MAX_FRAMES] = { 0 };
    if (dt_make(&chain, chain_text, AV_PIX_FMT_YUV420P, c->w, c->h, 2) < 0)
        return -1;
    int n = dt_run(chain.ops[0], noisy, c->n, out);
    vkcu_chain_free(&chain);
    double p = n == c->n ? psnr_frames(clean, out, n) : -1;
    for (int i = 0; i < n; i++)
        av_frame_free(&out[i]);
    return p;
}

/* Finds FFMPEG_BIN in the deps.mk of the build this test was built in. */
static const char *find_ffmpeg(const char *argv0)
{
    static char bin[1024];
    const char *env = getenv("FFMPEG");
    if (env)
        return access(env, X_OK) == 0 ? env : NULL;
    char tmp[1024];
    snprintf(tmp, sizeof(tmp), "%s", argv0);
    char mk[1100];
    snprintf(mk, sizeof(mk), "%s/../deps.mk", dirname(tmp));
    FILE *fp = fopen(mk, "r");
    if (!fp)
        return NULL;
    char line[1024];
    while (fgets(line, sizeof(line), fp)) {
        char dir[900];
        if (sscanf(line, "FFMPEG_BIN := %899s", dir) == 1) {
            snprintf(bin, sizeof(bin), "%s/ffmpeg", dir);
            break;
        }
    }
    fclose(fp);
    return bin[0] && access(bin, X_OK) == 0 ? bin : NULL;
}

int main(int argc, char **argv)
{
    int table = 0, nframes = 8, use_ffmpeg = 1;
    const char *tnr_extra = "", *nlm_extra = "";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--table"))
            table = 1;
        else if (!strcmp(argv[i], "--no-ffmpeg"))
            use_ffmpeg = 0;
        else if (!strcmp(argv[i], "--frames") && i + 1 < argc)
            nframes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tnr") && i + 1 < argc)
            tnr_extra = argv[++i];
        else if (!strcmp(argv[i], "--nlm") && i + 1 < argc)
            nlm_extra = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--table] [--frames N] [--tnr KEYS] [--nlm KEYS] [--no-ffmpeg]\n", argv[0]);
            return 2;
        }
    }
    if (nframes < 2 || nframes > MAX_FRAMES)
        nframes = 8;
    ffmpeg_bin = find_ffmpeg(argv[0]);
    if (!ffmpeg_bin && use_ffmpeg) {
        printf("test_denoise_quality: skipped: no ffmpeg binary (set FFMPEG or build deps.mk)\n");
        return 77;
    }
    const char *dir = getenv("VKCU_CONFORMANCE");
    if (!dir)
        dir = "/work/shared/conformance";
    clip clips[] = { { .file = "BA1_FT_C.264" }, { .file = "test-25fps.h264" } };
    int nclips = (int)(sizeof(clips) / sizeof(clips[0]));
    for (int k = 0; k < nclips; k++) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, clips[k].file);
        if (decode_clip(path, &clips[k], nframes) < 0) {
            printf("test_denoise_quality: skipped: cannot decode %d frames of %s (set VKCU_CONFORMANCE)\n", nframes,
                   path);
            return 77;
        }
    }
    snprintf(tmpdir, sizeof(tmpdir), "%s/vkcu-dnq-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }

    static const double sigmas[] = { 5, 10, 20 };
    /* hqdn3d: luma spatial strength x temporal/spatial ratio (chroma at the
     * filter's own default ratios); nlmeans: s as a multiple of sigma (its
     * weight is exp(-SSD / (10 s)^2), so s ~ sigma is its natural scale) */
    static const double hq_ls[] = { 1, 2, 3, 4, 6, 8, 11, 15, 20, 28, 40, 56, 80, 120 };
    static const double hq_tr[] = { 0.75, 1.5, 3 };
    static const double nl_s[] = { 0.5, 0.7, 1.0, 1.4, 2.0 };
    int fails = 0;
    double worst_tnr = 1e9, worst_nlm = 1e9;
    if (table)
        printf("%-16s %5s %7s | %7s %-22s %7s | %7s %-10s %7s\n", "clip", "sigma", "noisy", "hqdn3d", "(best)", "tnr",
               "nlmeans", "(best)", "nlm");
    for (int k = 0; k < nclips; k++)
        for (size_t si = 0; si < sizeof(sigmas) / sizeof(sigmas[0]); si++) {
            clip *c = &clips[k];
            double sigma = sigmas[si];
            AVFrame *noisy[MAX_FRAMES];
            add_noise(c->frame, noisy, c->n, sigma, 0x5eed0000u + (uint64_t)sigma * 131 + (uint64_t)k);
            char path[512];
            snprintf(path, sizeof(path), "%s/noisy.yuv", tmpdir);
            if (write_raw(path, noisy, c->n) < 0) {
                perror(path);
                return 1;
            }
            double p_noisy = psnr_frames(c->frame, noisy, c->n);
            double best_hq = -1, best_nl = -1;
            char best_hq_txt[64] = "-", best_nl_txt[64] = "-";
            for (size_t a = 0; use_ffmpeg && a < sizeof(hq_ls) / sizeof(hq_ls[0]); a++)
                for (size_t b = 0; b < sizeof(hq_tr) / sizeof(hq_tr[0]); b++) {
                    char f[128];
                    double ls = hq_ls[a], lt = ls * hq_tr[b];
                    snprintf(f, sizeof(f), "hqdn3d=%g:%g:%g:%g", ls, ls * 0.75, lt, lt * 0.75);
                    double p = run_ffmpeg(c, f, c->frame);
                    if (p < 0)
                        return 1;
                    if (p > best_hq) {
                        best_hq = p;
                        snprintf(best_hq_txt, sizeof(best_hq_txt), "%g:%g:%g:%g", ls, ls * 0.75, lt, lt * 0.75);
                    }
                }
            for (size_t a = 0; use_ffmpeg && a < sizeof(nl_s) / sizeof(nl_s[0]); a++) {
                char f[128];
                double s = fmin(fmax(nl_s[a] * sigma, 1.0), 30.0);
                snprintf(f, sizeof(f), "nlmeans=s=%g", s);
                double p = run_ffmpeg(c, f, c->frame);
                if (p < 0)
                    return 1;
                if (p > best_nl) {
                    best_nl = p;
                    snprintf(best_nl_txt, sizeof(best_nl_txt), "s=%g", s);
                }
            }
            char chain_text[512];
            snprintf(chain_text, sizeof(chain_text), "denoise=mode=tnr:sigma=%g%s%s", sigma, *tnr_extra ? ":" : "",
                     tnr_extra);
            double p_tnr = run_ours(c, chain_text, c->frame, noisy);
            snprintf(chain_text, sizeof(chain_text), "denoise=mode=nlm:sigma=%g%s%s", sigma, *nlm_extra ? ":" : "",
                     nlm_extra);
            double p_nlm = run_ours(c, chain_text, c->frame, noisy);
            for (int i = 0; i < c->n; i++)
                av_frame_free(&noisy[i]);
            if (p_tnr < 0 || p_nlm < 0) {
                fprintf(stderr, "test_denoise_quality: denoise failed on %s\n", c->file);
                return 1;
            }
            if (table)
                printf("%-16s %5g %7.2f | %7.2f %-22s %7.2f | %7.2f %-10s %7.2f\n", c->file, sigma, p_noisy, best_hq,
                       best_hq_txt, p_tnr, best_nl, best_nl_txt, p_nlm);
            if (use_ffmpeg) {
                worst_tnr = fmin(worst_tnr, p_tnr - best_hq);
                worst_nlm = fmin(worst_nlm, p_nlm - best_nl);
                if (p_tnr < best_hq) {
                    fprintf(stderr, "FAIL %s sigma %g: tnr %.2f dB < hqdn3d %.2f dB (%s)\n", c->file, sigma, p_tnr,
                            best_hq, best_hq_txt);
                    fails++;
                }
                if (p_nlm < best_nl) {
                    fprintf(stderr, "FAIL %s sigma %g: nlm %.2f dB < nlmeans %.2f dB (%s)\n", c->file, sigma, p_nlm,
                            best_nl, best_nl_txt);
                    fails++;
                }
            }
            fflush(stdout);
        }
    tu_remove_tree(tmpdir);
    for (int k = 0; k < nclips; k++)
        for (int i = 0; i < clips[k].n; i++)
            av_frame_free(&clips[k].frame[i]);
    printf("test_denoise_quality: %d clips x sigma 5/10/20, %d frames: PSNR margin over the best grid point: "
           "tnr vs hqdn3d >= %+.2f dB, nlm vs nlmeans >= %+.2f dB: %s\n",
           nclips, nframes, worst_tnr, worst_nlm, fails ? "FAILED" : "ok");
    return fails ? 1 : 0;
}
