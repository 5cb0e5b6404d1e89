/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pipeline presets (`*.pipe`): a line-oriented "key value" format, parsed
 * strictly so that a typo in a preset fails before a batch of thousands of
 * files starts, with the file, line and column of the mistake. The format
 * is documented in docs/pipelines.md.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/opt.h>

#include "core/encoder_files.h"
#include "core/encoders.h"
#include "util/file.h"
#include "util/log.h"
#include "util/number.h"
#include "gpu/vkencode.h"
#include "ops/op.h"
#include "preset.h"

#define PRESET_MAX_BYTES (64 * 1024)

/* Keys that may appear once; "op" and "encoder-opt" may repeat. */
enum preset_key {
    KEY_DESCRIPTION, KEY_OP, KEY_OUTPUT, KEY_ENCODER, KEY_CRF, KEY_PRESET, KEY_BITRATE, KEY_GOP,
    KEY_ENCODER_OPT, KEY_CONTAINER, KEY_HASH, KEY_HASH_FORMAT, KEY_FASTSTART, KEY_GPU_ENCODER, KEY_COUNT
};
static const char *const key_names[KEY_COUNT] = {
    "description", "op", "output", "encoder", "crf", "preset", "bitrate", "gop",
    "encoder-opt", "container", "hash", "hash-format", "faststart", "gpu-encoder",
};

typedef struct parse_state {
    const char *path;
    char *err;
    size_t errlen;
    int line_of[KEY_COUNT]; /* first line each key was seen on, 0: not seen */
    int col_of[KEY_COUNT];   /* column of its value */
} parse_state;

static int perr(parse_state *s, int line, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int perr(parse_state *s, int line, int col, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(s->err, s->errlen, "%s:%d:%d: %s", s->path, line, col, msg);
    return VKCU_ERR_USAGE;
}

static int copy_value(parse_state *s, int line, int col, char *dst, size_t size, const char *v, const char *key)
{
    if (strlen(v) >= size)
        return perr(s, line, col, "%s: value longer than %zu characters", key, size - 1);
    snprintf(dst, size, "%s", v);
    return 0;
}

static int is_word(const char *v, const char *extra)
{
    if (!*v)
        return 0;
    for (; *v; v++)
        if (!((*v >= 'a' && *v <= 'z') || (*v >= 'A' && *v <= 'Z') || (*v >= '0' && *v <= '9') || strchr(extra, *v)))
            return 0;
    return 1;
}

static int parse_int_value(parse_state *s, int line, int col, const char *key, const char *v, int lo, int hi, int *out)
{
    int64_t x;
    if (vkcu_parse_int(v, lo, hi, &x) < 0)
        return perr(s, line, col, "%s: '%s' is not an integer in [%d, %d]", key, v, lo, hi);
    *out = (int)x;
    return 0;
}

/* "op" value: exactly one operator, checked against the registry. Chain
 * errors carry "column N" within the value; move it to the file's column. */
static int parse_op(parse_state *s, int line, int col, const char *v, vkcu_preset *ps)
{
    const char *comma = strchr(v, ',');
    if (comma)
        return perr(s, line, col + (int)(comma - v), "op: one operator per 'op' line (put the next one on its own line)");
    vkcu_chain chain;
    char cerr[512] = "";
    if (vkcu_chain_parse(v, &chain, cerr, sizeof(cerr)) < 0) {
        int c = 1;
        const char *msg = cerr;
        const char *at = strstr(cerr, "column ");
        if (at && sscanf(at, "column %d", &c) == 1) {
            const char *colon = strchr(at, ':');
            msg = colon ? colon + 1 : at;
            while (*msg == ' ')
                msg++;
        }
        return perr(s, line, col + c - 1, "op: %s", msg);
    }
    vkcu_chain_free(&chain);
    /* The job parses the joined chain: refuse here what it would refuse. */
    int ops = 0;
    for (const char *p = ps->chain; *p; p++)
        ops += *p == ',';
    if (ps->chain[0] && ops + 1 >= VKCU_CHAIN_MAX_OPS)
        return perr(s, line, col, "op: more than %d operators (a chain holds at most %d)", VKCU_CHAIN_MAX_OPS,
                    VKCU_CHAIN_MAX_OPS);
    size_t used = strlen(ps->chain);
    if (used + strlen(v) + 2 > sizeof(ps->chain))
        return perr(s, line, col, "op: the chain is longer than %zu characters", sizeof(ps->chain) - 1);
    snprintf(ps->chain + used, sizeof(ps->chain) - used, "%s%s", used ? "," : "", v);
    return 0;
}

/* Encoder options that make an encoder write or read a file of its own
 * choosing (core/encoder_files.c keeps the list). A preset may come from
 * anywhere (a pull request, a shared folder), so these are refused in
 * presets; the command line (--encoder-opt) may still set them, under the
 * output rule. */
static int is_file_key(const char *key, size_t len)
{
    return vkcu_encoder_file_key(key, len);
}

/* The column (from 0) of a file key in an encoder-opt value, or -1. Every
 * name before an '=' counts, at any depth, so that keys inside
 * x264-params=..., x265-params=... or svtav1-params=... are found however
 * they are quoted; "flags" with pass1/pass2 (two-pass log files) too. */
static int find_file_key(const char *v)
{
    const char *item = v;
    for (;;) {
        size_t n = strcspn(item, ":");
        const char *seg = item;
        for (;;) {
            size_t k = strcspn(seg, "=:");
            if (seg[k] != '=' || seg + k >= item + n)
                break;
            if (is_file_key(seg, k) ||
                (k == 5 && !strncmp(seg, "flags", 5) &&
                 (memmem(seg, (size_t)(item + n - seg), "pass1", 5) || memmem(seg, (size_t)(item + n - seg), "pass2", 5)))) {
                const char *name = seg; /* the name itself, after a quote or an escape */
                while (name < seg + k && !isalnum((unsigned char)*name))
                    name++;
                return (int)(name - v);
            }
            seg += k + 1;
        }
        if (!item[n])
            return -1;
        item += n + 1;
    }
}

/* "encoder-opt k=v:k=v": syntax now; names against the encoder at the end. */
static int parse_encoder_opt(parse_state *s, int line, int col, const char *v, vkcu_preset *ps)
{
    const char *item = v;
    for (;;) {
        const char *end = strchr(item, ':');
        size_t n = end ? (size_t)(end - item) : strlen(item);
        const char *eq = memchr(item, '=', n);
        if (!eq || eq == item || eq == item + n - 1)
            return perr(s, line, col + (int)(item - v), "encoder-opt: '%.*s' is not key=value", (int)n, item);
        if (!end)
            break;
        item = end + 1;
    }
    int at = find_file_key(v);
    if (at >= 0)
        return perr(s, line, col + at, "encoder-opt: '%.*s' makes the encoder write or read a file, which a preset "
                    "may not do (give it with %s instead)", (int)strcspn(v + at, "=:"), v + at,
                    VKCU_SETTING("encoder_opts"));
    size_t used = strlen(ps->encoder_opts);
    if (used + strlen(v) + 2 > sizeof(ps->encoder_opts))
        return perr(s, line, col, "encoder-opt: options longer than %zu characters", sizeof(ps->encoder_opts) - 1);
    snprintf(ps->encoder_opts + used, sizeof(ps->encoder_opts) - used, "%s%s", used ? ":" : "", v);
    return 0;
}

static int parse_statement(parse_state *s, int line, int key, int col, const char *v, vkcu_preset *ps)
{
    const char *name = key_names[key];
    switch (key) {
    case KEY_DESCRIPTION:
        return copy_value(s, line, col, ps->description, sizeof(ps->description), v, name);
    case KEY_OP:
        return parse_op(s, line, col, v, ps);
    case KEY_OUTPUT:
        if (!strcmp(v, "encode"))
            ps->sink = VKCU_SINK_ENCODE;
        else if (!strcmp(v, "hash"))
            ps->sink = VKCU_SINK_HASH;
        else
            return perr(s, line, col, "output: '%s' is not encode or hash", v);
        return 0;
    case KEY_ENCODER:
        if (!avcodec_find_encoder_by_name(v))
            return perr(s, line, col, "encoder: '%s' is not an encoder of this build (libx264, libx265, ffv1, ...)", v);
        return copy_value(s, line, col, ps->encoder, sizeof(ps->encoder), v, name);
    case KEY_GPU_ENCODER:
        /* Any of FFmpeg's Vulkan encoders, whether this build has it or not:
         * a job without it uses `encoder`. */
        if (!vkcu_vkencode_is_vulkan(v)) {
            char names[128] = "";
            for (int i = 0; vkcu_vkencode_get(i); i++)
                snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
                         vkcu_vkencode_get(i)->name);
            return perr(s, line, col, "gpu-encoder: '%s' is not one of FFmpeg's Vulkan encoders (%s)", v, names);
        }
        return copy_value(s, line, col, ps->gpu_encoder, sizeof(ps->gpu_encoder), v, name);
    case KEY_CRF:
        return parse_int_value(s, line, col, name, v, 0, VKCU_CRF_MAX, &ps->crf);
    case KEY_PRESET:
        if (!is_word(v, "-_"))
            return perr(s, line, col, "preset: '%s' is not a preset name (such as medium or slow)", v);
        return copy_value(s, line, col, ps->encoder_preset, sizeof(ps->encoder_preset), v, name);
    case KEY_BITRATE:
        if (vkcu_parse_bitrate(v, &ps->bitrate) < 0)
            return perr(s, line, col, "bitrate: '%s' is not a bitrate in [1k, %lldM] bit/s (e.g. 4M, 800k)", v,
                        VKCU_BITRATE_MAX / 1000000);
        return 0;
    case KEY_GOP:
        return parse_int_value(s, line, col, name, v, 0, VKCU_GOP_MAX, &ps->gop);
    case KEY_ENCODER_OPT:
        return parse_encoder_opt(s, line, col, v, ps);
    case KEY_CONTAINER: {
        const char *ext = *v == '.' ? v + 1 : v;
        if (!is_word(ext, "") || strlen(ext) > sizeof(ps->extension) - 2)
            return perr(s, line, col, "container: '%s' is not a file extension (mkv, mp4, nut, ...)", v);
        snprintf(ps->extension, sizeof(ps->extension), ".%s", ext);
        return 0;
    }
    case KEY_HASH:
        if (vkcu_hash_algo_parse(v, &ps->hash_algo) < 0)
            return perr(s, line, col, "hash: '%s' is not " VKCU_HASH_ALGOS, v);
        return 0;
    case KEY_FASTSTART:
        if (strcmp(v, "yes") && strcmp(v, "no"))
            return perr(s, line, col, "faststart: '%s' is not yes or no", v);
        ps->faststart = !strcmp(v, "yes");
        return 0;
    case KEY_HASH_FORMAT: {
        /* presets write framemd5 or JSON lines; framecrc is the hash verb's alone */
        enum vkcu_hash_format f;
        if (vkcu_hash_format_parse(v, &f) < 0 || f == VKCU_HASH_FORMAT_FRAMECRC)
            return perr(s, line, col, "hash-format: '%s' is not %s or %s", v,
                        vkcu_hash_format_id(VKCU_HASH_FORMAT_FRAMEMD5), vkcu_hash_format_id(VKCU_HASH_FORMAT_JSON));
        ps->hash_format = f;
        return 0;
    }
    }
    return VKCU_ERR_USAGE;
}

/* The preset's encoder preset and options against `codec`, the way the
 * encode sink sets them. */
static int check_options(parse_state *s, const vkcu_preset *ps, const AVCodec *codec)
{
    if (!ps->encoder_preset[0] && !ps->encoder_opts[0])
        return 0;
    const char *name = codec ? codec->name : ps->encoder;
    AVCodecContext *enc = codec ? avcodec_alloc_context3(codec) : NULL;
    AVDictionary *opts = NULL;
    int ret = 0;
    if (!enc)
        return perr(s, s->line_of[KEY_ENCODER], s->col_of[KEY_ENCODER], "encoder: cannot set up '%s'", name);
    char why[700];
    if (ps->encoder_preset[0] && vkcu_encoder_check_choice(codec, "preset", ps->encoder_preset, why, sizeof(why)) < 0) {
        ret = perr(s, s->line_of[KEY_PRESET], s->col_of[KEY_PRESET], "preset: %s", why);
        goto done;
    }
    if (ps->encoder_preset[0] && av_opt_set(enc->priv_data, "preset", ps->encoder_preset, 0) < 0) {
        ret = perr(s, s->line_of[KEY_PRESET], s->col_of[KEY_PRESET], "preset: encoder %s has no preset '%s'",
                   name, ps->encoder_preset);
        goto done;
    }
    if (ps->encoder_opts[0] && av_dict_parse_string(&opts, ps->encoder_opts, "=", ":", 0) >= 0) {
        const AVDictionaryEntry *t = NULL;
        while ((t = av_dict_iterate(opts, t))) {
            if ((!strcmp(t->key, "preset") || !strcmp(t->key, "tune")) &&
                vkcu_encoder_check_choice(codec, t->key, t->value, why, sizeof(why)) < 0) {
                ret = perr(s, s->line_of[KEY_ENCODER_OPT], s->col_of[KEY_ENCODER_OPT], "encoder-opt: %s", why);
                goto done;
            }
            if (av_opt_set(enc, t->key, t->value, AV_OPT_SEARCH_CHILDREN) < 0) {
                ret = perr(s, s->line_of[KEY_ENCODER_OPT], s->col_of[KEY_ENCODER_OPT],
                           "encoder-opt: encoder %s has no option %s=%s", name, t->key, t->value);
                goto done;
            }
        }
    }
done:
    av_dict_free(&opts);
    avcodec_free_context(&enc);
    return ret;
}

/* Checks that need the whole file: keys that contradict the output kind,
 * encoder options and preset against the encoder, the container. */
static int check_whole(parse_state *s, vkcu_preset *ps)
{
    static const int encode_keys[] = { KEY_ENCODER, KEY_CRF, KEY_PRESET, KEY_BITRATE, KEY_GOP, KEY_ENCODER_OPT,
                                       KEY_FASTSTART, KEY_GPU_ENCODER };
    static const int hash_keys[] = { KEY_HASH, KEY_HASH_FORMAT };
    if (!s->line_of[KEY_DESCRIPTION])
        return perr(s, 1, 1, "no 'description' line (add one: `vkcu pipelines` shows it)");
    if (ps->sink == VKCU_SINK_HASH) {
        for (size_t i = 0; i < sizeof(encode_keys) / sizeof(encode_keys[0]); i++)
            if (s->line_of[encode_keys[i]])
                return perr(s, s->line_of[encode_keys[i]], s->col_of[encode_keys[i]],
                            "'%s' has no effect with 'output hash' (remove it, or use 'output encode')",
                            key_names[encode_keys[i]]);
        return 0;
    }
    for (size_t i = 0; i < sizeof(hash_keys) / sizeof(hash_keys[0]); i++)
        if (s->line_of[hash_keys[i]])
            return perr(s, s->line_of[hash_keys[i]], s->col_of[hash_keys[i]],
                        "'%s' needs 'output hash'", key_names[hash_keys[i]]);
    if (ps->extension[0]) {
        char probe[32];
        snprintf(probe, sizeof(probe), "x%s", ps->extension);
        if (strcmp(ps->extension, ".y4m") && strcmp(ps->extension, ".yuv") && strcmp(ps->extension, ".raw") &&
            !av_guess_format(NULL, probe, NULL))
            return perr(s, s->line_of[KEY_CONTAINER], s->col_of[KEY_CONTAINER],
                        "container: no muxer for '%s' files in this build (mkv, mp4, nut, y4m, ...)", ps->extension);
    }
    if (ps->faststart && strcmp(ps->extension, ".mp4") && strcmp(ps->extension, ".mov") &&
        strcmp(ps->extension, ".m4v"))
        return perr(s, s->line_of[KEY_FASTSTART], s->col_of[KEY_FASTSTART],
                    "faststart: only MP4/MOV files have an index to move (add 'container mp4')");
    /* What a job start would refuse is refused here, so that a preset
     * `vkcu pipelines FILE` accepts also starts: an encoder's options need
     * the encoder named (they are its own), and the container must take it. */
    if (!ps->encoder[0]) {
        int key = s->line_of[KEY_PRESET] ? KEY_PRESET : s->line_of[KEY_GPU_ENCODER] ? KEY_GPU_ENCODER : KEY_ENCODER_OPT;
        if (s->line_of[key])
            return perr(s, s->line_of[key], s->col_of[key], "'%s' needs an 'encoder' line (its options are the "
                        "encoder's own: libx264, libx265, ffv1, ...; a gpu-encoder needs the one to use without "
                        "it)", key_names[key]);
        return 0;
    }
    /* The GPU encoder, where this build has it, takes the same options and
     * container (it encodes the same bitstream as `encoder`). */
    const AVCodec *gpu = ps->gpu_encoder[0] ? avcodec_find_encoder_by_name(ps->gpu_encoder) : NULL;
    if (gpu) {
        const AVCodec *cpu = avcodec_find_encoder_by_name(ps->encoder);
        if (cpu && cpu->id != gpu->id)
            return perr(s, s->line_of[KEY_GPU_ENCODER], s->col_of[KEY_GPU_ENCODER],
                        "gpu-encoder: %s encodes %s, the encoder on line %d (%s) %s: both must encode the same format",
                        gpu->name, avcodec_get_name(gpu->id), s->line_of[KEY_ENCODER], cpu->name,
                        avcodec_get_name(cpu->id));
        int ret = check_options(s, ps, gpu);
        if (ret < 0)
            return ret;
    }
    const AVCodec *codec = avcodec_find_encoder_by_name(ps->encoder);
    if (codec && ps->extension[0]) {
        char probe[32];
        snprintf(probe, sizeof(probe), "x%s", ps->extension);
        const AVOutputFormat *ofmt = vkcu_output_muxer(probe, NULL);
        /* 0: the muxer cannot hold the codec; <0: it does not say. */
        if (ofmt && vkcu_muxer_takes(ofmt, codec->id) == 0)
            return perr(s, s->line_of[KEY_CONTAINER], s->col_of[KEY_CONTAINER],
                        "container: %s files cannot hold %s (encoder on line %d)", ps->extension + 1, ps->encoder,
                        s->line_of[KEY_ENCODER]);
    }
    return check_options(s, ps, codec);
}

/* The key `word` is a typo of (at most two edits from), or NULL. */
static const char *near_key(const char *word)
{
    size_t n = strlen(word);
    if (n > 20 || !is_word(word, "-_"))
        return NULL;
    for (int k = 0; k < KEY_COUNT; k++) {
        /* Levenshtein distance, one row at a time. */
        const char *key = key_names[k];
        size_t m = strlen(key);
        int row[32];
        for (size_t j = 0; j <= m; j++)
            row[j] = (int)j;
        for (size_t i = 1; i <= n; i++) {
            int diag = row[0];
            row[0] = (int)i;
            for (size_t j = 1; j <= m; j++) {
                int up = row[j];
                int best = diag + (word[i - 1] != key[j - 1]);
                if (up + 1 < best)
                    best = up + 1;
                if (row[j - 1] + 1 < best)
                    best = row[j - 1] + 1;
                row[j] = best;
                diag = up;
            }
        }
        if (row[m] <= 2 && (size_t)row[m] < m)
            return key;
    }
    return NULL;
}

static void name_from_path(const char *path, char *name, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    size_t ext = strlen(VKCU_PRESET_EXT);
    if (n > ext && !strcmp(base + n - ext, VKCU_PRESET_EXT))
        n -= ext;
    snprintf(name, size, "%.*s", (int)n, base);
}

int vkcu_preset_parse(const char *text, size_t len, const char *path, vkcu_preset *ps, char *err, size_t errlen)
{
    parse_state s = { .path = path, .err = err, .errlen = errlen };
    memset(ps, 0, sizeof(*ps));
    ps->crf = -1;
    ps->sink = VKCU_SINK_ENCODE;
    snprintf(ps->path, sizeof(ps->path), "%s", path);
    name_from_path(path, ps->name, sizeof(ps->name));
    if (memchr(text, '\0', len))
        return perr(&s, 1, 1, "not a text file (it holds NUL bytes)");

    char linebuf[4096];
    int line = 0, seen_key = 0;
    size_t pos = 0;
    while (pos < len) {
        line++;
        size_t end = pos;
        while (end < len && text[end] != '\n')
            end++;
        size_t n = end - pos;
        if (n && text[pos + n - 1] == '\r')
            n--;
        if (n >= sizeof(linebuf))
            return perr(&s, line, (int)sizeof(linebuf), "line longer than %zu characters", sizeof(linebuf) - 1);
        memcpy(linebuf, text + pos, n);
        linebuf[n] = 0;
        pos = end + 1;

        for (size_t i = 0; i < n; i++)
            if ((unsigned char)linebuf[i] < 0x20 && linebuf[i] != '\t')
                return perr(&s, line, (int)i + 1, "control character 0x%02x (only text, spaces and tabs)",
                            (unsigned char)linebuf[i]);
        /* A '#' at the start or after a blank starts a comment. */
        for (size_t i = 0; i < n; i++)
            if (linebuf[i] == '#' && (i == 0 || linebuf[i - 1] == ' ' || linebuf[i - 1] == '\t')) {
                linebuf[i] = 0;
                n = i;
                break;
            }
        while (n && (linebuf[n - 1] == ' ' || linebuf[n - 1] == '\t'))
            linebuf[--n] = 0;
        size_t k = 0;
        while (k < n && (linebuf[k] == ' ' || linebuf[k] == '\t'))
            k++;
        if (k == n)
            continue;

        size_t key_start = k;
        while (k < n && linebuf[k] != ' ' && linebuf[k] != '\t')
            k++;
        char key[64];
        snprintf(key, sizeof(key), "%.*s", (int)(k - key_start), linebuf + key_start);
        int key_col = (int)key_start + 1;
        int id = -1;
        for (int i = 0; i < KEY_COUNT; i++)
            if (!strcmp(key, key_names[i]))
                id = i;
        if (id < 0 && !seen_key) {
            /* Nothing yet says this is a pipeline file: quote none of it (it
             * may be any file, a secret one included), unless the word is a
             * near miss of a key, which tells nothing about the file. */
            const char *near = near_key(key);
            if (near)
                return perr(&s, line, key_col, "unknown key '%s' (did you mean '%s'?)", key, near);
            return perr(&s, line, key_col, "not a vkcu pipeline file: this line does not start with a key "
                        "(keys: description op output encoder crf preset bitrate gop encoder-opt container hash "
                        "hash-format; docs/pipelines.md)");
        }
        seen_key = 1;
        if (id < 0) {
            const char *eq = strchr(key, '=');
            if (eq || strchr(key, ':'))
                return perr(&s, line, key_col, "'%s' is not a key (write 'KEY VALUE', e.g. 'op %s')", key, key);
            return perr(&s, line, key_col,
                        "unknown key '%s' (keys: description op output encoder crf preset bitrate gop "
                        "encoder-opt container hash hash-format)",
                        key);
        }
        while (k < n && (linebuf[k] == ' ' || linebuf[k] == '\t'))
            k++;
        if (k == n)
            return perr(&s, line, (int)n + 1, "'%s' needs a value", key);
        if (id != KEY_OP && id != KEY_ENCODER_OPT && s.line_of[id])
            return perr(&s, line, key_col, "'%s' given twice (first on line %d)", key, s.line_of[id]);
        if (!s.line_of[id]) {
            s.line_of[id] = line;
            s.col_of[id] = (int)k + 1; /* whole-file checks point at the value */
        }
        if (id != KEY_DESCRIPTION) {
            for (size_t i = k; i < n; i++)
                if (linebuf[i] == ' ' || linebuf[i] == '\t')
                    return perr(&s, line, (int)i + 1, "%s: one value without spaces expected", key);
        }
        int ret = parse_statement(&s, line, id, (int)k + 1, linebuf + k, ps);
        if (ret < 0)
            return ret;
    }
    return check_whole(&s, ps);
}

static int read_file(const char *path, char **text, size_t *len, char *err, size_t errlen)
{
    int os_err;
    switch (vkcu_read_file(path, PRESET_MAX_BYTES, VKCU_READ_REGULAR, text, len, &os_err)) {
    case VKCU_READ_OK:
        return 0;
    case VKCU_READ_OPEN:
        snprintf(err, errlen, "%s: cannot open pipeline file: %s", path, strerror(os_err));
        return os_err == ENOENT ? VKCU_ERR_USAGE : VKCU_ERR_INPUT;
    case VKCU_READ_NOT_REGULAR:
        snprintf(err, errlen, "%s: not a regular file (a pipeline file is text, see docs/pipelines.md)", path);
        return VKCU_ERR_USAGE;
    case VKCU_READ_TOO_BIG:
        snprintf(err, errlen, "%s: larger than %d KiB: not a pipeline file", path, PRESET_MAX_BYTES / 1024);
        return VKCU_ERR_USAGE;
    case VKCU_READ_NOMEM:
        snprintf(err, errlen, "%s: out of memory", path);
        return VKCU_ERR_INPUT;
    case VKCU_READ_IO:
        break;
    }
    snprintf(err, errlen, "%s: read error", path);
    return VKCU_ERR_INPUT;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int add_dir(char (*dirs)[4096], int n, int max, const char *dir)
{
    char real[PATH_MAX];
    if (n >= max || !is_dir(dir) || !realpath(dir, real))
        return n;
    for (int i = 0; i < n; i++)
        if (!strcmp(dirs[i], real))
            return n;
    snprintf(dirs[n], sizeof(dirs[n]), "%s", real);
    return n + 1;
}

int vkcu_preset_dirs(char (*dirs)[4096], int max)
{
    int n = 0;
    const char *env = getenv("VKCU_PIPELINES");
    if (env && *env) {
        char buf[8192];
        snprintf(buf, sizeof(buf), "%s", env);
        char *save = NULL;
        for (char *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save))
            n = add_dir(dirs, n, max, d);
    }
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (len > 0) {
        exe[len] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            char dir[PATH_MAX + 64];
            snprintf(dir, sizeof(dir), "%s/../pipelines", exe);
            n = add_dir(dirs, n, max, dir);
            snprintf(dir, sizeof(dir), "%s/../share/vkcu/pipelines", exe);
            n = add_dir(dirs, n, max, dir);
        }
    }
    n = add_dir(dirs, n, max, "/usr/local/share/vkcu/pipelines");
    n = add_dir(dirs, n, max, "/usr/share/vkcu/pipelines");
    return n;
}

int vkcu_preset_locate(const char *arg, char *path, size_t len)
{
    size_t alen = strlen(arg);
    size_t elen = strlen(VKCU_PRESET_EXT);
    if (strchr(arg, '/') || (alen > elen && !strcmp(arg + alen - elen, VKCU_PRESET_EXT))) {
        snprintf(path, len, "%s", arg);
        return 1;
    }
    char dirs[8][4096];
    int nd = vkcu_preset_dirs(dirs, 8);
    for (int i = 0; i < nd; i++) {
        snprintf(path, len, "%.4000s/%.200s%s", dirs[i], arg, VKCU_PRESET_EXT);
        if (access(path, F_OK) == 0)
            return 1;
    }
    return nd ? 0 : -1;
}

int vkcu_preset_load(const char *arg, vkcu_preset *ps, char *err, size_t errlen)
{
    char path[4096 + 256];
    if (!*arg) {
        snprintf(err, errlen, "pipeline: empty name (`vkcu pipelines` lists the presets)");
        return VKCU_ERR_USAGE;
    }
    {
        int found = vkcu_preset_locate(arg, path, sizeof(path));
        if (found <= 0) {
            if (found < 0)
                snprintf(err, errlen, "pipeline: no preset '%s': no pipelines folder found (install vkcu, "
                         "or set VKCU_PIPELINES to a folder of .pipe files)", arg);
            else
                snprintf(err, errlen, "pipeline: no preset '%s' (`vkcu pipelines` lists them; a file path "
                         "needs a '/' or the .pipe extension)", arg);
            return VKCU_ERR_USAGE;
        }
    }
    char *text = NULL;
    size_t len = 0;
    int ret = read_file(path, &text, &len, err, errlen);
    if (ret < 0)
        return ret;
    ret = vkcu_preset_parse(text, len, path, ps, err, errlen);
    free(text);
    return ret;
}

/* What a preset sets in a job, once, for both kinds of job: the public
 * vkcu_job, and the internal vkcu_job_params that manifests fill (its
 * job). An empty string is the field's default, NULL. */
void vkcu_preset_apply(const vkcu_preset *ps, vkcu_job *job)
{
    job->chain = ps->chain;
    job->encoder = ps->encoder[0] ? ps->encoder : NULL;
    job->gpu_encoder = ps->gpu_encoder[0] ? ps->gpu_encoder : NULL;
    job->crf = ps->crf;
    job->preset = ps->encoder_preset[0] ? ps->encoder_preset : NULL;
    job->bitrate = ps->bitrate;
    job->gop = ps->gop;
    job->encoder_opts = ps->encoder_opts[0] ? ps->encoder_opts : NULL;
    job->faststart = ps->faststart;
    job->hash_algo = ps->hash_algo;
    job->hash_format = ps->hash_format;
    job->pipeline_file = ps->path;
}

void vkcu_preset_apply_params(const vkcu_preset *ps, vkcu_job_params *p)
{
    vkcu_preset_apply(ps, &p->job);
}

const char *vkcu_preset_extension(const vkcu_preset *ps)
{
    if (ps->extension[0])
        return ps->extension;
    if (ps->sink == VKCU_SINK_HASH)
        return vkcu_hash_format_extension(ps->hash_format);
    return ".mkv";
}
