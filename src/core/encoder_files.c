/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Encoder options that name files (encoder_files.h).
 *
 * FFmpeg's option tables do not say which options are paths: x264's `stats`
 * is a plain string, and most file keys live inside x264-params /
 * x265-params / svtav1-params, dictionaries whose keys only the encoder
 * library knows. So the names are a list, in the spellings of x264, x265,
 * SVT-AV1 and FFmpeg, kept here once: presets refuse every key of it
 * (batch/preset.c), and the command line's written files follow the output
 * rule of outfile.c:
 *
 * - written: x264/x265 `stats` in a pass that writes them (flags=+pass1, or
 *   pass=1 in the params; x264_2pass.log / x265_2pass.log when no name is
 *   given), x265 `csv`, `analysis-save`, x264 `dump-yuv`, `tcfile-out`, ...:
 *   the encoder is given a reserved temporary name beside the file, and the
 *   file (with x264's `.mbtree` / x265's `.cutree` beside it) is moved into
 *   place when the job succeeds; removed when it fails or is interrupted;
 * - read (qpfile, zonefile, `stats` in pass 2, ...): left to the encoder;
 * - pass 3 (read, then rewrite the same statistics) is refused: its file
 *   would be both an input and an output of the job;
 * - any other key that looks like a file (a "file" word in its name): not
 *   renamed, but it may not name an input of the job.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/mem.h>

#include "encoder_files.h"
#include "outfile.h"
#include "util/log.h"

/* Every key that makes an encoder write or read a file of its own choosing
 * (statistics, logs, analysis, reconstructed pictures, quantiser and zone
 * files, film grain tables), or run a command. */
static const char *const file_keys[] = {
    "stats", "pass", "passlogfile", "qpfile", "cqmfile", "dump-yuv", "tcfile-in", "tcfile-out", "opencl-clbin",
    "csv", "analysis-save", "analysis-load", "analysis-reuse-file", "recon", "recon-y4m-exec", "zonefile",
    "scaling-list", "lambda-file", "dolby-vision-rpu", "dhdr10-info", "film-grain", "fgs-table", "roi-map-file",
    "stat-file", "abr-ladder", "input", "output", "log-file", "multi-pass-opt-analysis", "multi-pass-opt-distortion",
    NULL,
};
/* A key with one of these words between its hyphens ("log-file",
 * "lambda-file", "stat-file") is taken for a file key too; not any key
 * holding the letters ("profile" is no file). */
static const char *const file_words[] = { "file", "stats", "dump", "csv", "recon", "exec", NULL };

/* Of those, the ones that name a file the encoder writes (whatever the pass). */
static const char *const written_keys[] = {
    "csv", "analysis-save", "analysis-reuse-file", "dump-yuv", "tcfile-out", "recon", "opencl-clbin", "stat-file",
    "log-file", "output", NULL,
};
/* ... and the ones it only reads, or that are no file (a command, a number). */
static const char *const other_keys[] = {
    "qpfile", "cqmfile", "tcfile-in", "analysis-load", "zonefile", "scaling-list", "lambda-file", "dolby-vision-rpu",
    "dhdr10-info", "film-grain", "fgs-table", "roi-map-file", "input", "abr-ladder", "recon-y4m-exec", "pass",
    "passlogfile", "multi-pass-opt-analysis", "multi-pass-opt-distortion", NULL,
};

static void normalize(const char *key, size_t len, char *norm, size_t size)
{
    size_t n = 0;
    for (size_t i = 0; i < len && n + 1 < size; i++) {
        char c = key[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c == '_')
            c = '-';
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')
            norm[n++] = c; /* quotes and escapes around a name still name it */
    }
    norm[n] = 0;
    if (!strncmp(norm, "no-", 3))
        memmove(norm, norm + 3, strlen(norm + 3) + 1);
}

static int listed(const char *const *list, const char *name)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(name, list[i]))
            return 1;
    return 0;
}

int vkcu_encoder_file_key(const char *key, size_t len)
{
    char name[64];
    normalize(key, len, name, sizeof(name));
    if (listed(file_keys, name))
        return 1;
    for (const char *w = name; *w;) {
        size_t wl = strcspn(w, "-");
        for (int i = 0; file_words[i]; i++)
            if (wl == strlen(file_words[i]) && !strncmp(w, file_words[i], wl))
                return 1;
        w += wl + (w[wl] == '-');
    }
    return 0;
}

/* ---- the output rule for the files written ---- */

enum family { FAMILY_X264, FAMILY_X265, FAMILY_OTHER };

typedef struct planner {
    vkcu_encoder_files *ef;
    const char *output;
    int overwrite;
    const char *const *inputs;
    char *err;
    size_t errlen;
    int changed;
} planner;

/* The file named `path` is written: reserve its temporary, whose name the
 * encoder gets instead (*tmp). 0, or <0 with pl->err set. */
static int plan_written(planner *pl, const char *key, const char *path, enum family fam, int is_stats,
                        const char **tmp)
{
    vkcu_encoder_files *ef = pl->ef;
    int ret;
    *tmp = NULL;
    if (!*path) {
        snprintf(pl->err, pl->errlen, "%s: '%s' names no file", VKCU_SETTING("encoder_opts"), key);
        return VKCU_ERR_USAGE;
    }
    if (pl->output && !strcmp(path, pl->output)) {
        snprintf(pl->err, pl->errlen, "%s: '%s=%s' names the job's output; give the encoder's file its own name",
                 VKCU_SETTING("encoder_opts"), key, path);
        return VKCU_ERR_USAGE;
    }
    for (int i = 0; i < ef->nb; i++)
        if (!strcmp(ef->f[i].path, path)) {
            snprintf(pl->err, pl->errlen, "%s: %s is named for two of the encoder's files; give each its own name",
                     VKCU_SETTING("encoder_opts"), path);
            return VKCU_ERR_USAGE;
        }
    if (ef->nb == VKCU_ENCODER_FILES_MAX || strlen(path) + 16 >= PATH_MAX) {
        snprintf(pl->err, pl->errlen, "%s: too many files, or a name too long (%.200s)", VKCU_SETTING("encoder_opts"),
                 path);
        return VKCU_ERR_USAGE;
    }
    vkcu_encoder_file *f = &ef->f[ef->nb];
    memset(f, 0, sizeof(*f));
    snprintf(f->path, sizeof(f->path), "%s", path);
    if (is_stats) {
        /* x264 writes NAME.temp and NAME.mbtree.temp and renames them when it
         * closes; x265 the same with .cutree. */
        f->companion = fam == FAMILY_X265 ? ".cutree" : ".mbtree";
        f->scratch[0] = ".temp";
        f->scratch[1] = fam == FAMILY_X265 ? ".cutree.temp" : ".mbtree.temp";
    }
    if ((ret = vkcu_outfile_reserve(path, pl->overwrite, pl->inputs, f->tmp, sizeof(f->tmp) - 16, pl->err,
                                    pl->errlen)) < 0)
        return ret;
    ef->nb++; /* from here on, abort releases it */
    char comp[PATH_MAX + 16], ctmp[PATH_MAX + 16];
    if (f->companion) {
        snprintf(comp, sizeof(comp), "%s%s", path, f->companion);
        snprintf(ctmp, sizeof(ctmp), "%s%s", f->tmp, f->companion);
        if ((ret = vkcu_outfile_reserve_as(ctmp, comp, pl->overwrite, pl->inputs, pl->err, pl->errlen)) < 0) {
            f->companion = NULL;
            f->scratch[0] = f->scratch[1] = NULL;
            return ret;
        }
    }
    for (int k = 0; k < 2; k++)
        if (f->scratch[k]) {
            snprintf(ctmp, sizeof(ctmp), "%s%s", f->tmp, f->scratch[k]);
            if ((ret = vkcu_outfile_reserve_as(ctmp, NULL, 0, NULL, pl->err, pl->errlen)) < 0) {
                f->scratch[k] = NULL;
                if (k == 0)
                    f->scratch[1] = NULL;
                return ret;
            }
        }
    pl->changed = 1;
    *tmp = f->tmp;
    return 0;
}

/* One key=value of the options (at the top, or inside a params value). The
 * value to give the encoder goes to *out (a new string), or NULL: as is. */
static int plan_key(planner *pl, const char *key, const char *value, enum family fam, int pass, char **out)
{
    char name[64];
    *out = NULL;
    normalize(key, strlen(key), name, sizeof(name));
    int stats = !strcmp(name, "stats") && fam != FAMILY_OTHER;
    if (stats && pass == 3) {
        snprintf(pl->err, pl->errlen, "%s: pass 3 reads and rewrites its statistics file %s, which would be an input "
                 "and an output of one job; run pass 1, then pass 2", VKCU_SETTING("encoder_opts"), value);
        return VKCU_ERR_USAGE;
    }
    if ((stats && pass == 1) || listed(written_keys, name)) {
        const char *tmp;
        int ret = plan_written(pl, key, value, fam, stats, &tmp);
        if (ret < 0)
            return ret;
        return (*out = av_strdup(tmp)) ? 0 : AVERROR(ENOMEM);
    }
    if (stats || listed(other_keys, name) || !vkcu_encoder_file_key(key, strlen(key)))
        return 0;
    /* A file key whose direction this list does not know: it may write. */
    const char *which;
    if (vkcu_outfile_is_input(value, pl->inputs, &which)) {
        snprintf(pl->err, pl->errlen, "%s: '%s=%s' names %s, an input of this job; vkcu never lets anything write "
                 "over an input", VKCU_SETTING("encoder_opts"), key, value, which);
        return VKCU_ERR_OUTPUT;
    }
    return 0;
}

/* The pass a dictionary asks for (its "pass" key), else `pass`. */
static int pass_of(const AVDictionary *d, int pass)
{
    const AVDictionaryEntry *t = NULL;
    while ((t = av_dict_iterate(d, t))) {
        char name[64];
        normalize(t->key, strlen(t->key), name, sizeof(name));
        if (!strcmp(name, "pass"))
            pass = atoi(t->value);
    }
    return pass;
}

static int has_key(const AVDictionary *d, const char *want)
{
    const AVDictionaryEntry *t = NULL;
    while ((t = av_dict_iterate(d, t))) {
        char name[64];
        normalize(t->key, strlen(t->key), name, sizeof(name));
        if (!strcmp(name, want))
            return 1;
    }
    return 0;
}

/* A key whose value holds further key=value pairs for the encoder library. */
static enum family params_family(const char *key, int *is_params)
{
    char name[64];
    normalize(key, strlen(key), name, sizeof(name));
    size_t n = strlen(name);
    *is_params = !strcmp(name, "x264opts") || (n > 7 && name[n - 7] == '-' && !strcmp(name + n - 6, "params"));
    return strstr(name, "x264") ? FAMILY_X264 : strstr(name, "x265") ? FAMILY_X265 : FAMILY_OTHER;
}

/* The options as the encoder will see them, pass by pass. */
typedef struct passes {
    int x264, x265;              /* the pass of each library: 1 writes statistics, 2 reads them, 3 both */
    int x264_stats, x265_stats;  /* a stats name is given */
} passes;

static void find_passes(const AVDictionary *top, const char *encoder, passes *ps)
{
    memset(ps, 0, sizeof(*ps));
    const AVDictionaryEntry *t = NULL;
    int libx264 = !strcmp(encoder, "libx264") || !strcmp(encoder, "libx264rgb");
    while ((t = av_dict_iterate(top, t))) {
        char name[64];
        normalize(t->key, strlen(t->key), name, sizeof(name));
        if (!strcmp(name, "flags") && libx264 && !ps->x264)
            ps->x264 = strstr(t->value, "pass1") ? 1 : strstr(t->value, "pass2") ? 2 : 0;
        if (!strcmp(name, "stats") && libx264)
            ps->x264_stats = 1;
    }
    t = NULL;
    while ((t = av_dict_iterate(top, t))) {
        int is_params;
        enum family fam = params_family(t->key, &is_params);
        AVDictionary *d = NULL;
        if (!is_params || fam == FAMILY_OTHER || av_dict_parse_string(&d, t->value, "=", ":", 0) < 0) {
            av_dict_free(&d);
            continue;
        }
        if (fam == FAMILY_X264) {
            ps->x264 = pass_of(d, ps->x264);
            ps->x264_stats |= has_key(d, "stats");
        } else {
            ps->x265 = pass_of(d, ps->x265);
            ps->x265_stats |= has_key(d, "stats");
        }
        av_dict_free(&d);
    }
}

/* x264opts is split by x264 itself on ':' and '=', without escapes. */
static char *join_plain(const AVDictionary *d)
{
    size_t n = 1;
    const AVDictionaryEntry *t = NULL;
    while ((t = av_dict_iterate(d, t)))
        n += strlen(t->key) + strlen(t->value) + 2;
    char *s = av_malloc(n), *p = s;
    if (!s)
        return NULL;
    *p = 0;
    t = NULL;
    while ((t = av_dict_iterate(d, t)))
        p += sprintf(p, "%s%s=%s", p == s ? "" : ":", t->key, t->value);
    return s;
}

/* Plans every key of dictionary `d` (fam: the library its keys belong to)
 * into a new dictionary *nd, with the temporaries in; `default_stats`: the
 * statistics file the library writes when the options name none. */
static int plan_dict(planner *pl, const AVDictionary *d, enum family fam, int pass, const char *default_stats,
                     AVDictionary **nd)
{
    const AVDictionaryEntry *t = NULL;
    int ret = 0;
    while (ret >= 0 && (t = av_dict_iterate(d, t))) {
        char *v = NULL;
        ret = plan_key(pl, t->key, t->value, fam, pass, &v);
        if (ret >= 0)
            ret = av_dict_set(nd, t->key, v ? v : t->value, v ? AV_DICT_DONT_STRDUP_VAL : 0);
    }
    if (ret >= 0 && default_stats) {
        char *v = NULL;
        ret = plan_key(pl, "stats", default_stats, fam, pass, &v);
        if (ret >= 0 && v)
            ret = av_dict_set(nd, "stats", v, AV_DICT_DONT_STRDUP_VAL);
    }
    return ret;
}

int vkcu_encoder_files_begin(vkcu_encoder_files *ef, const char *opts, const char *encoder, const char *output,
                             int overwrite, const char *const *inputs, char *err, size_t errlen)
{
    memset(ef, 0, sizeof(*ef));
    planner pl = { ef, output && strcmp(output, "-") ? output : NULL, overwrite, inputs, err, errlen, 0 };
    AVDictionary *top = NULL, *ntop = NULL;
    passes ps;
    int ret = 0;
    if (opts && *opts && av_dict_parse_string(&top, opts, "=", ":", 0) < 0) {
        av_dict_free(&top);
        return 0; /* the encoder's set-up names the mistake */
    }
    find_passes(top, encoder, &ps);
    int libx264 = !strcmp(encoder, "libx264") || !strcmp(encoder, "libx264rgb");
    int libx265 = !strcmp(encoder, "libx265");
    const AVDictionaryEntry *t = NULL;
    while (ret >= 0 && (t = av_dict_iterate(top, t))) {
        int is_params;
        enum family fam = params_family(t->key, &is_params);
        char *v = NULL;
        if (is_params) {
            AVDictionary *d = NULL, *nd = NULL;
            if (av_dict_parse_string(&d, t->value, "=", ":", 0) >= 0) {
                int pass = fam == FAMILY_X264 ? ps.x264 : fam == FAMILY_X265 ? ps.x265 : 0;
                const char *dflt = fam == FAMILY_X265 && libx265 && !ps.x265_stats && (pass & 1) ? "x265_2pass.log"
                                                                                                  : NULL;
                int before = pl.changed;
                pl.changed = 0;
                ret = plan_dict(&pl, d, fam, pass, dflt, &nd);
                if (ret >= 0 && pl.changed) {
                    char name[64];
                    normalize(t->key, strlen(t->key), name, sizeof(name));
                    if (!strcmp(name, "x264opts"))
                        v = join_plain(nd);
                    else if (av_dict_get_string(nd, &v, '=', ':') < 0)
                        v = NULL;
                    if (!v)
                        ret = AVERROR(ENOMEM);
                }
                pl.changed |= before;
            }
            av_dict_free(&d);
            av_dict_free(&nd);
        } else {
            ret = plan_key(&pl, t->key, t->value, libx264 ? FAMILY_X264 : FAMILY_OTHER, ps.x264, &v);
        }
        if (ret >= 0)
            ret = av_dict_set(&ntop, t->key, v ? v : t->value, v ? AV_DICT_DONT_STRDUP_VAL : 0);
        else
            av_free(v);
    }
    /* No name given: the library's own default, in the working folder. */
    if (ret >= 0 && libx264 && (ps.x264 & 1) && !ps.x264_stats) {
        char *v = NULL;
        ret = plan_key(&pl, "stats", "x264_2pass.log", FAMILY_X264, ps.x264, &v);
        if (ret >= 0 && v)
            ret = av_dict_set(&ntop, "stats", v, AV_DICT_DONT_STRDUP_VAL);
    }
    if (ret >= 0 && pl.changed && av_dict_get_string(ntop, &ef->opts, '=', ':') < 0)
        ret = AVERROR(ENOMEM);
    av_dict_free(&top);
    av_dict_free(&ntop);
    if (ret < 0) {
        if (ret == AVERROR(ENOMEM))
            snprintf(err, errlen, "%s: out of memory", VKCU_SETTING("encoder_opts"));
        vkcu_encoder_files_abort(ef);
    }
    return ret;
}

int vkcu_encoder_files_commit(vkcu_encoder_files *ef, char *err, size_t errlen)
{
    int ret = 0;
    for (int i = 0; i < ef->nb; i++) {
        vkcu_encoder_file *f = &ef->f[i];
        char comp[PATH_MAX + 16], ctmp[PATH_MAX + 16];
        struct stat st;
        /* A file the encoder did not write (no frame, or an option it
         * ignores) has nothing to publish. */
        if (ret >= 0 && lstat(f->tmp, &st) == 0)
            ret = vkcu_outfile_commit(f->tmp, f->path, err, errlen);
        else
            vkcu_outfile_abort(f->tmp);
        if (f->companion) {
            snprintf(comp, sizeof(comp), "%s%s", f->path, f->companion);
            snprintf(ctmp, sizeof(ctmp), "%s%s", f->tmp, f->companion);
            if (ret >= 0 && lstat(ctmp, &st) == 0)
                ret = vkcu_outfile_commit(ctmp, comp, err, errlen);
            else
                vkcu_outfile_abort(ctmp);
        }
        for (int k = 0; k < 2; k++)
            if (f->scratch[k]) {
                snprintf(ctmp, sizeof(ctmp), "%s%s", f->tmp, f->scratch[k]);
                vkcu_outfile_abort(ctmp);
            }
        f->companion = f->scratch[0] = f->scratch[1] = NULL;
        f->tmp[0] = 0;
    }
    ef->nb = 0;
    av_freep(&ef->opts);
    return ret;
}

void vkcu_encoder_files_abort(vkcu_encoder_files *ef)
{
    for (int i = 0; i < ef->nb; i++) {
        vkcu_encoder_file *f = &ef->f[i];
        char ctmp[PATH_MAX + 16];
        vkcu_outfile_abort(f->tmp);
        const char *more[3] = { f->companion, f->scratch[0], f->scratch[1] };
        for (int k = 0; k < 3; k++)
            if (more[k]) {
                snprintf(ctmp, sizeof(ctmp), "%s%s", f->tmp, more[k]);
                vkcu_outfile_abort(ctmp);
            }
        f->companion = f->scratch[0] = f->scratch[1] = NULL;
        f->tmp[0] = 0;
    }
    ef->nb = 0;
    av_freep(&ef->opts);
}
