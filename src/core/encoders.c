/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What this build writes, in one place: the video encoders and containers
 * (include/vkcu/formats.h), the encoder "auto" picks, which container holds
 * which encoder, and each encoder's named presets and tunes. The encode sink
 * and vkcu_check_job decide with these calls, and `vkcu formats` and the
 * command line's completion list what they list, so the lists and the
 * checks cannot disagree.
 *
 * Most of it is FFmpeg's own description of its components (codec
 * capabilities and hardware configurations, pixel formats, muxer codec
 * queries, option constants). Two things FFmpeg does not say are vkcu's
 * tables below: the video codecs of muxers that answer no codec query
 * (y4m), and the preset and tune names of x264 and x265, which their
 * libraries check only when the encoder opens (x264.h's and x265.h's
 * *_preset_names and *_tune_names; tests/unit/test_api_formats.c compares).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <libavutil/avstring.h>
#include <libavutil/hwcontext.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>

#include "encoders.h"
#include "ops/op.h"
#include "util/log.h"
#include "util/near.h"
#include <vkcu/formats.h>

/* ---- containers ---- */

const AVOutputFormat *vkcu_output_muxer(const char *path, const char *output_format)
{
    const char *fmtname = NULL;
    const char *ext = path ? strrchr(path, '.') : NULL;
    if (ext && !av_strcasecmp(ext, ".y4m"))
        fmtname = "yuv4mpegpipe";
    else if (ext && (!av_strcasecmp(ext, ".yuv") || !av_strcasecmp(ext, ".raw")))
        fmtname = "rawvideo";
    if (output_format)
        fmtname = !strcmp(output_format, "y4m")   ? "yuv4mpegpipe"
                  : !strcmp(output_format, "mkv") ? "matroska"
                                                  : output_format;
    if (!fmtname && (!path || !ext))
        return NULL;
    return av_guess_format(fmtname, path, NULL);
}

int vkcu_muxer_is_image(const AVOutputFormat *ofmt)
{
    return ofmt && (!strcmp(ofmt->name, "image2") || !strcmp(ofmt->name, "image2pipe"));
}

const char *vkcu_default_encoder(const AVOutputFormat *ofmt, const char *path, int named)
{
    const char *ext = path ? strrchr(path, '.') : NULL;
    if (vkcu_muxer_is_image(ofmt) && path) {
        /* The image's codec by its extension (png, mjpeg for .jpg, tiff, ...), as ffmpeg picks it. */
        enum AVCodecID id = av_guess_codec(ofmt, NULL, path, NULL, AVMEDIA_TYPE_VIDEO);
        const AVCodec *c = id != AV_CODEC_ID_NONE ? avcodec_find_encoder(id) : NULL;
        if (c)
            return c->name;
        if (id != AV_CODEC_ID_NONE)
            return avcodec_get_name(id);
    }
    char first[16] = "";
    if ((!ext || named) && ofmt->extensions) { /* -f FORMAT, standard output: the container's usual extension */
        snprintf(first, sizeof(first), "%.*s", (int)strcspn(ofmt->extensions, ","), ofmt->extensions);
        ext = NULL;
    }
    ext = ext ? ext + 1 : first;
    if (!av_strcasecmp(ext, "y4m"))
        return "wrapped_avframe";
    if (!av_strcasecmp(ext, "nut") || !av_strcasecmp(ext, "yuv") || !av_strcasecmp(ext, "raw"))
        return "rawvideo";
    if (!av_strcasecmp(ext, "ivf") || !av_strcasecmp(ext, "webm") || !av_strcasecmp(ext, "obu"))
        return "libsvtav1";
    if (!av_strcasecmp(ext, "hevc") || !av_strcasecmp(ext, "h265") || !av_strcasecmp(ext, "265"))
        return "libx265";
    return "libx264";
}

/* The layouts the convert operator writes, by its names (op_convert.c):
 * the candidates an image encoder's format is chosen from. */
static const struct {
    enum AVPixelFormat pix_fmt;
    const char *name;
} convert_writes[] = {
    { AV_PIX_FMT_RGB24, "rgb24" },      { AV_PIX_FMT_RGBA, "rgba" },
    { AV_PIX_FMT_RGB48LE, "rgb48" },    { AV_PIX_FMT_RGBA64LE, "rgba64" },
    { AV_PIX_FMT_YUV420P, "yuv420p" },  { AV_PIX_FMT_YUV422P, "yuv422p" },
    { AV_PIX_FMT_YUV444P, "yuv444p" },  { AV_PIX_FMT_YUV420P10LE, "yuv420p10" },
    { AV_PIX_FMT_YUV422P10LE, "yuv422p10" }, { AV_PIX_FMT_YUV444P10LE, "yuv444p10" },
    { AV_PIX_FMT_NV12, "nv12" },        { AV_PIX_FMT_P010LE, "p010" },
};
#define NB_CONVERT_WRITES ((int)(sizeof(convert_writes) / sizeof(convert_writes[0])))

int vkcu_image_convert(const char *output, const char *output_format, const char *encoder,
                       enum AVPixelFormat pix_fmt, enum AVColorRange range, char *buf, size_t size)
{
    buf[0] = 0;
    const AVOutputFormat *ofmt = output ? vkcu_output_muxer(output, output_format) : NULL;
    if (!vkcu_muxer_is_image(ofmt))
        return 0;
    int named = encoder && *encoder && strcmp(encoder, "auto");
    const AVCodec *codec = avcodec_find_encoder_by_name(named ? encoder : vkcu_default_encoder(ofmt, output,
                                                                                                !!output_format));
    if (!codec || codec->type != AVMEDIA_TYPE_VIDEO)
        return 0;
    const void *cfg = NULL;
    int n = 0;
    if (avcodec_get_supported_config(NULL, codec, AV_CODEC_CONFIG_PIX_FORMAT, 0, &cfg, &n) < 0 || !cfg)
        return 0; /* the encoder does not say */
    const enum AVPixelFormat *takes = cfg;
    int taken = 0;
    for (int i = 0; i < n; i++)
        taken |= takes[i] == pix_fmt;
    enum AVPixelFormat to = pix_fmt;
    if (!taken) {
        enum AVPixelFormat cand[NB_CONVERT_WRITES + 1];
        int nc = 0;
        for (int k = 0; k < NB_CONVERT_WRITES; k++)
            for (int i = 0; i < n; i++)
                if (takes[i] == convert_writes[k].pix_fmt)
                    cand[nc++] = takes[i];
        if (!nc)
            return 0; /* nothing convert writes: the encoder's own check names the formats */
        cand[nc] = AV_PIX_FMT_NONE;
        const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(pix_fmt);
        int alpha = d && (d->flags & AV_PIX_FMT_FLAG_ALPHA);
        to = avcodec_find_best_pix_fmt_of_list(cand, pix_fmt, alpha, NULL);
        if (to == AV_PIX_FMT_NONE)
            return 0;
    }
    /* The range: MJPEG takes full-range YUV only (at normal compliance), as ffmpeg converts for it. */
    const char *want_range = NULL;
    const AVPixFmtDescriptor *dt = av_pix_fmt_desc_get(to);
    const void *rcfg = NULL;
    int nr = 0;
    if (dt && !(dt->flags & AV_PIX_FMT_FLAG_RGB) &&
        avcodec_get_supported_config(NULL, codec, AV_CODEC_CONFIG_COLOR_RANGE, 0, &rcfg, &nr) >= 0 && rcfg && nr) {
        const enum AVColorRange *ranges = rcfg;
        enum AVColorRange have = range == AVCOL_RANGE_JPEG ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG;
        int ok = 0;
        for (int i = 0; i < nr; i++)
            ok |= ranges[i] == have;
        if (!ok)
            want_range = ranges[0] == AVCOL_RANGE_JPEG ? "full" : "limited";
    }
    if (to == pix_fmt && !want_range)
        return 0;
    const char *name = NULL;
    for (int k = 0; k < NB_CONVERT_WRITES; k++)
        if (convert_writes[k].pix_fmt == to)
            name = convert_writes[k].name;
    if (!name)
        return 0;
    snprintf(buf, size, "convert=format=%s%s%s", name, want_range ? ":range=" : "", want_range ? want_range : "");
    return 1;
}

/* Muxers that answer no codec query (no query_codec, no tag list) and
 * still take only a few codecs: every codec their write_header accepts
 * (FFmpeg 7.1's yuv4mpegenc.c, oggenc.c). Others that do not say take
 * what they can (mpegts, mxf) or anything (the hash muxers). */
static const struct {
    const char *muxer;
    enum AVCodecID codecs[7];
} muxer_codecs[] = {
    { "yuv4mpegpipe", { AV_CODEC_ID_WRAPPED_AVFRAME, AV_CODEC_ID_RAWVIDEO, AV_CODEC_ID_NONE } },
    { "ogg", { AV_CODEC_ID_THEORA, AV_CODEC_ID_VP8, AV_CODEC_ID_VORBIS, AV_CODEC_ID_SPEEX, AV_CODEC_ID_FLAC,
               AV_CODEC_ID_OPUS, AV_CODEC_ID_NONE } },
    { "opus", { AV_CODEC_ID_OPUS, AV_CODEC_ID_NONE } },
    { "ffmetadata", { AV_CODEC_ID_NONE } },
};

int vkcu_muxer_takes(const AVOutputFormat *ofmt, enum AVCodecID id)
{
    int ret = avformat_query_codec(ofmt, id, FF_COMPLIANCE_NORMAL);
    if (ret >= 0)
        return ret > 0;
    for (size_t i = 0; i < sizeof(muxer_codecs) / sizeof(muxer_codecs[0]); i++) {
        if (strcmp(ofmt->name, muxer_codecs[i].muxer))
            continue;
        for (int k = 0; muxer_codecs[i].codecs[k] != AV_CODEC_ID_NONE; k++)
            if (muxer_codecs[i].codecs[k] == id)
                return 1;
        return 0;
    }
    return -1;
}

static const AVCodec *video_encoder(int index)
{
    const AVCodec *c;
    void *it = NULL;
    int n = 0;
    while ((c = av_codec_iterate(&it)))
        if (av_codec_is_encoder(c) && c->type == AVMEDIA_TYPE_VIDEO && n++ == index)
            return c;
    return NULL;
}

static void append(char *buf, size_t size, const char *word)
{
    size_t n = strlen(buf);
    if (n + strlen(word) + 3 < size)
        snprintf(buf + n, size - n, "%s%s", n ? ", " : "", word);
}

void vkcu_muxer_encoders(const AVOutputFormat *ofmt, char *buf, size_t size)
{
    buf[0] = 0;
    const AVCodec *c;
    for (int i = 0; (c = video_encoder(i)); i++)
        if (vkcu_muxer_takes(ofmt, c->id) == 1)
            append(buf, size, c->name);
}

static const char *without_lib(const char *name)
{
    return strncmp(name, "lib", 3) ? name : name + 3;
}

const char *vkcu_video_encoder_names(const char *typed, char *buf, size_t size)
{
    const char *names[128], *unprefixed = NULL, *wrapped = NULL;
    int n = 0;
    const AVCodec *c;
    buf[0] = 0;
    for (int i = 0; (c = video_encoder(i)); i++) {
        append(buf, size, c->name);
        if (n < 128)
            names[n++] = c->name;
        /* "x264", "svtav1": the name without its "lib"; "aom", "libaom":
         * the library FFmpeg wraps (libaom-av1). Too far apart for a typo. */
        if (typed && !unprefixed && !strcmp(without_lib(c->name), typed))
            unprefixed = c->name;
        if (typed && !wrapped && c->wrapper_name &&
            (!strcmp(c->wrapper_name, typed) || !strcmp(without_lib(c->wrapper_name), typed)))
            wrapped = c->name;
    }
    if (!typed)
        return NULL;
    return unprefixed ? unprefixed : wrapped ? wrapped : vkcu_nearest_word(typed, names, n);
}

/* ---- presets and tunes ---- */

/* x264.h's and x265.h's lists (their libraries check them only when the
 * encoder opens, after printing their own error). */
static const char *const x26x_presets[] = { "ultrafast", "superfast", "veryfast", "faster", "fast",
                                            "medium", "slow", "slower", "veryslow", "placebo", NULL };
static const char *const x264_tunes[] = { "film", "animation", "grain", "stillimage", "psnr", "ssim",
                                          "fastdecode", "zerolatency", NULL };
static const char *const x265_tunes[] = { "psnr", "ssim", "grain", "zerolatency", "fastdecode", "animation", NULL };

static const struct {
    const char *encoder, *option;
    const char *const *names;
    int comma_list; /* 1: several names joined by ',' ("film,fastdecode") */
} own_lists[] = {
    { "libx264", "preset", x26x_presets, 0 },
    { "libx264", "tune", x264_tunes, 1 },
    { "libx265", "preset", x26x_presets, 0 },
    { "libx265", "tune", x265_tunes, 0 },
};

/* The option of an encoder's private class and its constants' unit. */
static const AVOption *private_option(const AVCodec *codec, const char *option)
{
    if (!codec->priv_class)
        return NULL;
    const AVClass *cls = codec->priv_class;
    const AVOption *o = av_opt_find2(&cls, option, NULL, 0, AV_OPT_SEARCH_FAKE_OBJ, NULL);
    return o && o->type != AV_OPT_TYPE_CONST ? o : NULL;
}

/* The index-th name of the list, or NULL; *comma_list says whether names
 * may be joined, *numbers whether the option takes a number instead. */
static const char *choice(const AVCodec *codec, const char *option, int index, int *comma_list, int *numbers)
{
    *comma_list = *numbers = 0;
    if (index < 0)
        return NULL;
    for (size_t i = 0; i < sizeof(own_lists) / sizeof(own_lists[0]); i++)
        if (!strcmp(own_lists[i].encoder, codec->name) && !strcmp(own_lists[i].option, option)) {
            *comma_list = own_lists[i].comma_list;
            for (int k = 0; own_lists[i].names[k]; k++)
                if (k == index)
                    return own_lists[i].names[k];
            return NULL;
        }
    const AVOption *o = private_option(codec, option);
    if (!o || !o->unit)
        return NULL;
    *numbers = o->type != AV_OPT_TYPE_STRING; /* named constants of a number */
    const AVClass *cls = codec->priv_class;
    int n = 0;
    for (const AVOption *c = NULL; (c = av_opt_next(&cls, c));)
        if (c->type == AV_OPT_TYPE_CONST && c->unit && !strcmp(c->unit, o->unit) && n++ == index)
            return c->name;
    return NULL;
}

const char *vkcu_encoder_choice(const char *encoder, const char *option, int index)
{
    const AVCodec *codec = encoder && option ? avcodec_find_encoder_by_name(encoder) : NULL;
    int comma_list, numbers;
    return codec ? choice(codec, option, index, &comma_list, &numbers) : NULL;
}

/* 1: `text` (len bytes) is a number, as AVOptions read numbers. */
static int is_number(const char *text, size_t len)
{
    char buf[64];
    if (!len || len >= sizeof(buf))
        return 0;
    memcpy(buf, text, len);
    buf[len] = 0;
    char *end;
    strtod(buf, &end);
    return *end == 0;
}

int vkcu_encoder_check_choice(const AVCodec *codec, const char *option, const char *value, char *err, size_t errlen)
{
    int comma_list, numbers;
    if (!value || !choice(codec, option, 0, &comma_list, &numbers))
        return 0; /* no list of names: the encoder checks the value itself */
    const char *names[64];
    char list[512] = "";
    int n = 0;
    for (const char *c; n < 64 && (c = choice(codec, option, n, &comma_list, &numbers)); n++) {
        names[n] = c;
        append(list, sizeof(list), c);
    }
    for (const char *p = value;;) {
        size_t len = comma_list ? strcspn(p, ",") : strlen(p);
        int known = numbers && is_number(p, len);
        for (int k = 0; k < n && !known; k++)
            known = strlen(names[k]) == len && !strncmp(names[k], p, len);
        if (!known) {
            char word[64];
            snprintf(word, sizeof(word), "%.*s", (int)len, p);
            const char *near = vkcu_nearest_word(word, names, n);
            char hint[96] = "";
            if (near)
                snprintf(hint, sizeof(hint), ": did you mean '%s'?", near);
            snprintf(err, errlen, "encoder %s has no %s '%s'%s (its %ss: %s)", codec->name, option, word, hint, option,
                     list);
            return VKCU_ERR_USAGE;
        }
        if (!p[len])
            return 0;
        p += len + 1;
    }
}

/* ---- pixel formats ---- */

/* What a profile of x264 and x265 holds, which their libraries check only
 * when the encoder opens (x264_param_apply_profile, x265_param_apply_profile:
 * "high profile doesn't support 4:2:2"): the deepest samples, the widest
 * chroma (0: 4:2:0, 1: 4:2:2, 2: 4:4:4 or RGB), and gray or not. Measured by
 * opening libx264 and libx265 8.1 with each profile and pixel format;
 * tests/cli/pixfmt.sh checks vkcu's answer against the libraries'. */
typedef struct profile_rule {
    const char *encoder, *profile;
    int depth, chroma, gray;
} profile_rule;

static const profile_rule profile_rules[] = {
    { "libx264", "baseline", 8, 0, 0 },    { "libx264", "main", 8, 0, 0 },        { "libx264", "high", 8, 0, 1 },
    { "libx264", "high10", 10, 0, 1 },     { "libx264", "high422", 10, 1, 1 },    { "libx264", "high444", 10, 2, 1 },
    { "libx265", "main", 8, 0, 0 },        { "libx265", "main10", 10, 0, 0 },     { "libx265", "main12", 12, 0, 0 },
    { "libx265", "main422-10", 10, 1, 0 }, { "libx265", "main422-12", 12, 1, 0 }, { "libx265", "main444-8", 8, 2, 1 },
    { "libx265", "main444-10", 10, 2, 1 }, { "libx265", "main444-12", 12, 2, 1 }, { "libx265", "main444-16", 16, 2, 1 },
};
#define NB_PROFILE_RULES ((int)(sizeof(profile_rules) / sizeof(profile_rules[0])))

static const profile_rule *find_profile_rule(const char *encoder, const char *profile)
{
    if (!profile || !*profile)
        return NULL;
    size_t n = strlen(profile);
    /* x265's intra-only and still-picture variants hold what their base does */
    if (!strcmp(encoder, "libx265") && n > 6 && profile[n - 6] == '-' && !strcmp(profile + n - 5, "intra"))
        n -= 6;
    else if (!strcmp(encoder, "libx265") && (!strcmp(profile, "mainstillpicture") || !strcmp(profile, "msp")))
        profile = "main", n = 4;
    for (int i = 0; i < NB_PROFILE_RULES; i++)
        if (!strcmp(profile_rules[i].encoder, encoder) && strlen(profile_rules[i].profile) == n &&
            !strncmp(profile_rules[i].profile, profile, n))
            return &profile_rules[i];
    return NULL;
}

/* Chroma class of pf: -1 gray, 0 4:2:0, 1 4:2:2, 2 4:4:4 or RGB, 3 other. */
static int chroma_class(const AVPixFmtDescriptor *d)
{
    if (d->nb_components < 3)
        return -1;
    if (d->flags & AV_PIX_FMT_FLAG_RGB)
        return 2;
    return d->log2_chroma_h == 1 && d->log2_chroma_w == 1   ? 0
           : d->log2_chroma_h == 0 && d->log2_chroma_w == 1 ? 1
           : d->log2_chroma_h == 0 && d->log2_chroma_w == 0 ? 2
                                                            : 3;
}

static int rule_takes(const profile_rule *r, enum AVPixelFormat pf)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(pf);
    if (!d)
        return 0;
    int c = chroma_class(d);
    return d->comp[0].depth <= r->depth && (c < 0 ? r->gray : c <= r->chroma);
}

/* The profile named in encoder options "k=v:k=v" (--encoder-opt), or "". */
static void options_profile(const char *opts, char *buf, size_t size)
{
    AVDictionary *d = NULL;
    buf[0] = 0;
    if (opts && *opts && av_dict_parse_string(&d, opts, "=", ":", 0) >= 0) {
        const AVDictionaryEntry *t = av_dict_get(d, "profile", NULL, 0);
        if (t)
            snprintf(buf, size, "%s", t->value);
    }
    av_dict_free(&d);
}

/* Closeness of pixel format `to` to `from`, for the convert= to suggest:
 * lower is better. Losing chroma or bits costs most, then a change between
 * YUV and RGB, then gaining them. */
static int pix_fmt_distance(enum AVPixelFormat from, enum AVPixelFormat to)
{
    const AVPixFmtDescriptor *a = av_pix_fmt_desc_get(from), *b = av_pix_fmt_desc_get(to);
    if (!a || !b)
        return 1000;
    int ca = chroma_class(a), cb = chroma_class(b), da = a->comp[0].depth, db = b->comp[0].depth;
    int cost = ((a->flags ^ b->flags) & AV_PIX_FMT_FLAG_RGB) ? 30 : 0;
    cost += ca > cb ? 8 * (ca - cb) : 2 * (cb - ca);
    cost += da > db ? 4 : da < db ? 1 : 0;
    return cost;
}

static int encoder_lists(const AVCodec *codec, enum AVPixelFormat pf)
{
    const void *cfg = NULL;
    int n = 0;
    if (avcodec_get_supported_config(NULL, codec, AV_CODEC_CONFIG_PIX_FORMAT, 0, &cfg, &n) < 0 || !cfg)
        return 0;
    for (int i = 0; i < n; i++)
        if (((const enum AVPixelFormat *)cfg)[i] == pf)
            return 1;
    return 0;
}

int vkcu_encoder_check_pix_fmt(const AVCodec *codec, const char *opts, enum AVPixelFormat pf, char *err, size_t errlen)
{
    const void *cfg = NULL;
    int n = 0;
    if (avcodec_get_supported_config(NULL, codec, AV_CODEC_CONFIG_PIX_FORMAT, 0, &cfg, &n) < 0 || !cfg)
        return 0; /* the encoder does not say: let it decide */
    const enum AVPixelFormat *list = cfg;
    char profile[64];
    options_profile(opts, profile, sizeof(profile));
    const profile_rule *rule = find_profile_rule(codec->name, profile);
    char takes[600] = "";
    enum AVPixelFormat best = AV_PIX_FMT_NONE;
    int found = 0, best_cost = 0;
    for (int i = 0; i < n; i++) {
        if (rule && !rule_takes(rule, list[i]))
            continue;
        if (list[i] == pf)
            found = 1;
        append(takes, sizeof(takes), av_get_pix_fmt_name(list[i]));
        int cost = pix_fmt_distance(pf, list[i]);
        if (vkcu_convert_writes(list[i]) && (best == AV_PIX_FMT_NONE || cost < best_cost))
            best = list[i], best_cost = cost;
    }
    if (found)
        return 0;
    char with[96] = "", fix[400], other[128] = "";
    if (rule)
        snprintf(with, sizeof(with), " with profile=%s", profile);
    if (!vkcu_convert_reads(pf)) {
        /* no convert to add: the encoders that take the frames as they are */
        char names[300] = "";
        const AVCodec *c;
        for (int i = 0; (c = video_encoder(i)); i++)
            if (!(c->capabilities & AV_CODEC_CAP_HARDWARE) && encoder_lists(c, pf))
                append(names, sizeof(names), c->name);
        snprintf(fix, sizeof(fix), "convert does not read %s; %s%s", av_get_pix_fmt_name(pf),
                 names[0] ? "encoders of this build that take it: " : "no encoder of this build takes it",
                 names);
    } else if (best != AV_PIX_FMT_NONE) {
        snprintf(fix, sizeof(fix), "add convert=format=%s at the end of the chain", av_get_pix_fmt_name(best));
    } else {
        snprintf(fix, sizeof(fix), "convert writes none of these; pick another encoder");
    }
    /* a profile that holds pf, where another one was asked for */
    for (int i = 0; rule && i < NB_PROFILE_RULES; i++)
        if (!strcmp(profile_rules[i].encoder, codec->name) && rule_takes(&profile_rules[i], pf)) {
            char opt[80];
            snprintf(opt, sizeof(opt), "profile=%s", profile_rules[i].profile);
            snprintf(other, sizeof(other), ", or %s", VKCU_SETTING_IS("encoder_opts", opt));
            break;
        }
    snprintf(err, errlen, "encoder %s%s takes %s, not %s: %s%s", codec->name, with, takes[0] ? takes : "no format",
             av_get_pix_fmt_name(pf) ? av_get_pix_fmt_name(pf) : "these", fix, other);
    return VKCU_ERR_USAGE;
}

/* ---- the job's checks ---- */

int vkcu_encode_check(const vkcu_job *job, char *err, size_t errlen)
{
    if (job->sink != VKCU_SINK_ENCODE || !job->output || !*job->output)
        return 0;
    const char *out = job->output;
    const AVOutputFormat *ofmt = vkcu_output_muxer(out, job->output_format);
    int named = job->encoder && *job->encoder && strcmp(job->encoder, "auto");
    const char *encname = named ? job->encoder : ofmt ? vkcu_default_encoder(ofmt, out, !!job->output_format) : NULL;
    if (!encname)
        return 0; /* no container known yet: the sink says so, with what to do */
    const AVCodec *codec = avcodec_find_encoder_by_name(encname);
    if (!codec && !named && vkcu_muxer_is_image(ofmt)) {
        /* The image's extension names a codec this build cannot write. */
        const char *ext = strrchr(out, '.');
        snprintf(err, errlen, "%s: this build has no %s encoder for %s images; name the output .png or .jpg "
                 "(or pick one with %s)", out, encname, ext ? ext : "these", VKCU_SETTING("encoder"));
        return VKCU_ERR_USAGE;
    }
    if (!codec || codec->type != AVMEDIA_TYPE_VIDEO) {
        char names[400], hint[96] = "";
        const char *near = vkcu_video_encoder_names(encname, names, sizeof(names));
        if (near)
            snprintf(hint, sizeof(hint), ": did you mean %s?", VKCU_SETTING_IS("encoder", near));
        snprintf(err, errlen, "%s: %s: %s%s (this build's video encoders: %s)", out,
                 VKCU_SETTING_IS("encoder", encname), codec ? "not a video encoder" : "no such encoder in this build",
                 hint, names);
        return VKCU_ERR_USAGE;
    }
    if (ofmt && vkcu_muxer_takes(ofmt, codec->id) == 0) {
        char takes[300];
        vkcu_muxer_encoders(ofmt, takes, sizeof(takes));
        snprintf(err, errlen, "%s: %s cannot hold %s video (%s); %s%s%s", out, ofmt->name, avcodec_get_name(codec->id),
                 encname, takes[0] ? "it takes " : "it holds no video", takes,
                 takes[0] ? " (or pick another extension)" : "");
        return VKCU_ERR_USAGE;
    }
    const char *audio = job->audio_encoder;
    if (audio && *audio && strcmp(audio, "auto") && strcmp(audio, "copy")) {
        const AVCodec *ac = avcodec_find_encoder_by_name(audio);
        if (!ac || ac->type != AVMEDIA_TYPE_AUDIO) {
            char names[256] = "";
            const char *words[64];
            int n = 0;
            void *it = NULL;
            for (const AVCodec *c; (c = av_codec_iterate(&it));)
                if (av_codec_is_encoder(c) && c->type == AVMEDIA_TYPE_AUDIO && n < 64) {
                    append(names, sizeof(names), c->name);
                    words[n++] = c->name;
                }
            const char *near = vkcu_nearest_word(audio, words, n);
            char hint[96] = "";
            if (near)
                snprintf(hint, sizeof(hint), ": did you mean %s?", VKCU_SETTING_IS("audio_encoder", near));
            snprintf(err, errlen, "%s: %s%s (this build's audio encoders: %s; or auto, copy)",
                     VKCU_SETTING_IS("audio_encoder", audio), ac ? "not an audio encoder" : "no such encoder in this build",
                     hint, names);
            return VKCU_ERR_USAGE;
        }
        if (ofmt && vkcu_muxer_takes(ofmt, ac->id) == 0) {
            snprintf(err, errlen, "%s: %s cannot hold %s audio (%s)", out, ofmt->name, avcodec_get_name(ac->id),
                     VKCU_SETTING_IS("audio_encoder", audio));
            return VKCU_ERR_USAGE;
        }
    }
    char why[700];
    if (job->preset && *job->preset && vkcu_encoder_check_choice(codec, "preset", job->preset, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "%s: %s", VKCU_SETTING_IS("preset", job->preset), why);
        return VKCU_ERR_USAGE;
    }
    if (job->encoder_opts && *job->encoder_opts) {
        AVDictionary *opts = NULL;
        int ret = 0;
        if (av_dict_parse_string(&opts, job->encoder_opts, "=", ":", 0) >= 0) {
            static const char *const checked[] = { "preset", "tune" };
            for (int k = 0; k < 2 && !ret; k++) {
                const AVDictionaryEntry *t = av_dict_get(opts, checked[k], NULL, 0);
                if (t && (ret = vkcu_encoder_check_choice(codec, checked[k], t->value, why, sizeof(why))) < 0)
                    snprintf(err, errlen, "%s: %s", VKCU_SETTING("encoder_opts"), why);
            }
        }
        av_dict_free(&opts); /* a text that does not parse is the sink's to refuse, with its own words */
        if (ret < 0)
            return ret;
    }
    return 0;
}

/* ---- the public lists ---- */

int vkcu_encoder_get(int index, vkcu_encoder_info *info)
{
    if (!info)
        return AVERROR(EINVAL);
    const AVCodec *c = NULL;
    void *it = NULL;
    for (int n = 0; index >= 0 && (c = av_codec_iterate(&it));)
        if (av_codec_is_encoder(c) && (c->type == AVMEDIA_TYPE_VIDEO || c->type == AVMEDIA_TYPE_AUDIO ||
                                       c->type == AVMEDIA_TYPE_SUBTITLE) && n++ == index)
            break;
    if (index < 0 || !c)
        return AVERROR(ENOENT);
    memset(info, 0, sizeof(*info));
    info->name = c->name;
    info->media = av_get_media_type_string(c->type);
    info->codec = avcodec_get_name(c->id);
    info->description = c->long_name ? c->long_name : c->name;
    /* From FFmpeg's description: an encoder that takes a hardware device's
     * frames runs on that device. */
    for (int i = 0;; i++) {
        const AVCodecHWConfig *h = avcodec_get_hw_config(c, i);
        if (!h)
            break;
        if (h->device_type != AV_HWDEVICE_TYPE_NONE) {
            info->gpu = av_hwdevice_get_type_name(h->device_type);
            break;
        }
    }
    if (!info->gpu && (c->capabilities & AV_CODEC_CAP_HARDWARE))
        info->gpu = "hardware";
    const void *cfg = NULL;
    int n = 0;
    if (avcodec_get_supported_config(NULL, c, AV_CODEC_CONFIG_PIX_FORMAT, 0, &cfg, &n) >= 0 && cfg) {
        const enum AVPixelFormat *p = cfg;
        for (int i = 0; i < n; i++) {
            const char *name = av_get_pix_fmt_name(p[i]);
            size_t len = strlen(info->pix_fmts);
            if (name && len + strlen(name) + 2 < sizeof(info->pix_fmts))
                snprintf(info->pix_fmts + len, sizeof(info->pix_fmts) - len, "%s%s", len ? " " : "", name);
        }
    }
    return 0;
}

int vkcu_container_get(int index, vkcu_container_info *info)
{
    if (!info)
        return AVERROR(EINVAL);
    const AVOutputFormat *f = NULL;
    void *it = NULL;
    for (int n = 0; index >= 0 && (f = av_muxer_iterate(&it)) && n < index; n++)
        ;
    if (index < 0 || !f)
        return AVERROR(ENOENT);
    memset(info, 0, sizeof(*info));
    info->name = f->name;
    info->description = f->long_name ? f->long_name : f->name;
    info->extensions = f->extensions ? f->extensions : "";
    const char *enc = vkcu_default_encoder(f, NULL, 1);
    const AVCodec *c = avcodec_find_encoder_by_name(enc);
    if (f->video_codec != AV_CODEC_ID_NONE && c && vkcu_muxer_takes(f, c->id) != 0)
        info->encoder = enc;
    return 0;
}

const char *vkcu_container_of(const char *path)
{
    const AVOutputFormat *f = path ? vkcu_output_muxer(path, NULL) : NULL;
    return f ? f->name : NULL;
}

int vkcu_container_takes(const char *container, const char *encoder)
{
    const AVOutputFormat *f = container ? av_guess_format(container, NULL, NULL) : NULL;
    const AVCodec *c = encoder ? avcodec_find_encoder_by_name(encoder) : NULL;
    if (!f || strcmp(f->name, container) || !c || c->type != AVMEDIA_TYPE_VIDEO)
        return AVERROR(EINVAL);
    return vkcu_muxer_takes(f, c->id);
}
