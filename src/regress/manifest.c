/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Regression manifests and `vkcu verify`: parsing (docs/regression.md),
 * ${VARIABLE} expansion, running each case through the library, comparing
 * the per-frame hashes with the expectation, --update rewrites, the
 * one-line-per-case report and the JUnit XML file.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libavutil/avstring.h>
#include <libavutil/mathematics.h>

#include "util/log.h"
#include "manifest.h"
#include "util/number.h"
#include "batch/preset.h"
#include "report.h"
#include "core/outfile.h"
#include "vmaf.h"

/* ------------------------------------------------------------------ */
/* parsing                                                              */

static void case_free(vkcu_manifest_case *c)
{
    free(c->name);
    free(c->input);
    free(c->chain);
    free(c->pipeline);
    free(c->hashes);
    free(c->reference);
}

void vkcu_manifest_free(vkcu_manifest **pm)
{
    vkcu_manifest *m = *pm;
    if (!m)
        return;
    for (int i = 0; i < m->nb_lines; i++)
        free(m->lines[i]);
    free(m->lines);
    for (int i = 0; i < m->nb_cases; i++)
        case_free(&m->cases[i]);
    free(m->cases);
    free(m->path);
    free(m->dir);
    if (m->dirfd >= 0)
        close(m->dirfd);
    free(m);
    *pm = NULL;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    return s;
}

/* The mark `vkcu hash` writes before the line of a frame decoded from
 * damaged data: part of an inline expectation (not a comment). */
static int is_concealed_mark(const char *s)
{
    return !strncmp(s, VKCU_HASH_CONCEALED_MARK, strlen(VKCU_HASH_CONCEALED_MARK));
}

/* An inline expectation line, as `vkcu hash` writes it: "0, dts, pts, ...",
 * or the concealed mark before one. */
static int is_frame_line(const char *s)
{
    if (is_concealed_mark(s))
        return 1;
    if (!isdigit((unsigned char)*s))
        return 0;
    while (isdigit((unsigned char)*s))
        s++;
    while (*s == ' ')
        s++;
    return *s == ',';
}

static int load_lines(vkcu_manifest *m, char *err, size_t errlen)
{
    FILE *f = fopen(m->path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s (check the path)", m->path, errno == ENOENT ? "no such file" : strerror(errno));
        return VKCU_ERR_INPUT;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int ret = 0, cap_lines = 0;
    while ((n = getline(&line, &cap, f)) >= 0) {
        if (memchr(line, 0, (size_t)n)) {
            snprintf(err, errlen, "%s:%d: not a vkcu manifest: binary data (NUL bytes)", m->path, m->nb_lines + 1);
            ret = VKCU_ERR_INPUT;
            break;
        }
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = 0;
        if (m->nb_lines == cap_lines) {
            cap_lines = cap_lines ? cap_lines * 2 : 256;
            char **nl = realloc(m->lines, (size_t)cap_lines * sizeof(*nl));
            if (!nl) {
                ret = AVERROR(ENOMEM);
                break;
            }
            m->lines = nl;
        }
        if (!(m->lines[m->nb_lines] = strdup(line))) {
            ret = AVERROR(ENOMEM);
            break;
        }
        m->nb_lines++;
    }
    if (ferror(f) && ret >= 0) {
        snprintf(err, errlen, "%s: cannot read: %s", m->path, strerror(errno));
        ret = VKCU_ERR_INPUT;
    }
    free(line);
    fclose(f);
    return ret;
}

#define SYNTAX(...)                                                       \
    do {                                                                  \
        int n_ = snprintf(err, errlen, "%s:%d: ", m->path, lineno);        \
        snprintf(err + n_, errlen - n_, __VA_ARGS__);                      \
        return VKCU_ERR_INPUT;                                            \
    } while (0)

static int set_key(vkcu_manifest *m, vkcu_manifest_case *c, const char *key, const char *value, int lineno,
                   char *err, size_t errlen)
{
    char **str = !strcmp(key, "input") ? &c->input : !strcmp(key, "chain") ? &c->chain
               : !strcmp(key, "pipeline") ? &c->pipeline : !strcmp(key, "hashes") ? &c->hashes
               : !strcmp(key, "reference") ? &c->reference : NULL;
    if (!*value)
        SYNTAX("'%s' has no value", key);
    if (str) {
        if (*str)
            SYNTAX("'%s' is set twice in case '%s'", key, c->name);
        if (!(*str = strdup(value)))
            return AVERROR(ENOMEM);
    } else if (!strcmp(key, "backend")) {
        if (!strcmp(value, "cpu"))
            c->backend = VKCU_BACKEND_CPU;
        else if (!strcmp(value, "gpu"))
            c->backend = VKCU_BACKEND_GPU;
        else if (!strcmp(value, "auto"))
            c->backend = VKCU_BACKEND_AUTO;
        else
            SYNTAX("backend '%s' is not cpu, gpu or auto", value);
    } else if (!strcmp(key, "backends")) {
        char buf[128];
        snprintf(buf, sizeof(buf), "%s", value);
        c->backends_mask = 0;
        for (char *save = NULL, *tok = strtok_r(buf, " ,", &save); tok; tok = strtok_r(NULL, " ,", &save)) {
            if (!strcmp(tok, "cpu"))
                c->backends_mask |= 1 << VKCU_BACKEND_CPU;
            else if (!strcmp(tok, "gpu"))
                c->backends_mask |= 1 << VKCU_BACKEND_GPU;
            else
                SYNTAX("backends: '%s' is not cpu or gpu", tok);
        }
    } else if (!strcmp(key, "algo")) {
        if (vkcu_hash_algo_parse(value, &c->algo) < 0)
            SYNTAX("algo '%s' is not " VKCU_HASH_ALGOS, value);
        c->algo_set = 1;
    } else if (!strcmp(key, "frames")) {
        int64_t x;
        if (vkcu_parse_int(value, 1, INT_MAX, &x) < 0)
            SYNTAX("frames '%s' is not an integer in [1, %d]", value, INT_MAX);
        c->max_frames = (int)x;
    } else if (!strcmp(key, "strict")) {
        if (strcmp(value, "yes") && strcmp(value, "no"))
            SYNTAX("strict '%s' is not yes or no", value);
        c->strict = !strcmp(value, "yes");
    } else if (!strcmp(key, "max-diff")) {
        int64_t x;
        if (vkcu_parse_int(value, 0, 65535, &x) < 0)
            SYNTAX("max-diff '%s' is not an integer in [0, 65535] (code values)", value);
        c->max_diff = (int)x;
    } else if (!strcmp(key, "min-psnr")) {
        double x;
        if (vkcu_parse_number(value, 0, 1000, &x) < 0)
            SYNTAX("min-psnr '%s' is not a number in [0, 1000] (dB)", value);
        c->min_psnr = x;
    } else if (!strcmp(key, "min-vmaf")) {
        double x;
        if (vkcu_parse_number(value, 0, 100, &x) < 0)
            SYNTAX("min-vmaf '%s' is not a number in [0, 100] (the mean VMAF score)", value);
        c->min_vmaf = x;
    } else if (!strcmp(key, "timing")) {
        if (strcmp(value, "ffmpeg") && strcmp(value, "decoded"))
            SYNTAX("timing '%s' is not ffmpeg or decoded", value);
        c->timing = !strcmp(value, "decoded") ? VKCU_TIMING_DECODED : VKCU_TIMING_FFMPEG;
    } else if (!strcmp(key, "concealed")) {
        if (strcmp(value, "exclude") && strcmp(value, "include"))
            SYNTAX("concealed '%s' is not exclude or include", value);
        c->exclude_concealed = !strcmp(value, "exclude");
    } else if (!strcmp(key, "timeout")) {
        double x;
        if (vkcu_parse_number(value, 0.001, 1e6, &x) < 0)
            SYNTAX("timeout '%s' is not a number of seconds in [0.001, 1000000]", value);
        c->timeout = x;
    } else {
        SYNTAX("unknown key '%s' (input, chain, pipeline, backend, backends, algo, frames, strict, timing, "
               "concealed, hashes, reference, max-diff, min-psnr, min-vmaf, timeout)", key);
    }
    return 0;
}

static int check_case(vkcu_manifest *m, vkcu_manifest_case *c, char *err, size_t errlen)
{
    int lineno = c->line;
    if (!c->input)
        SYNTAX("case '%s' has no input", c->name);
    if (c->chain && c->pipeline)
        SYNTAX("case '%s' sets both chain and pipeline: use one", c->name);
    if (c->reference) {
        c->expect = VKCU_EXPECT_METRICS;
        if (c->hashes || c->inline_first >= 0)
            SYNTAX("case '%s' has a reference and hashes: use one expectation", c->name);
    } else if (c->max_diff >= 0 || !isnan(c->min_psnr) || !isnan(c->min_vmaf)) {
        SYNTAX("case '%s': max-diff/min-psnr/min-vmaf need a reference input", c->name);
    }
    if (c->hashes && c->inline_first >= 0)
        SYNTAX("case '%s' has a hashes file and inline frame lines: use one", c->name);
    return 0;
}

/* Case names seen so far, for the duplicate check: an open-addressing
 * table of case indices, so that a manifest of N cases loads in O(N). */
typedef struct name_table {
    int *slot; /* case index + 1; 0: free */
    size_t size; /* a power of two, at least twice the cases */
} name_table;

static size_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (size_t)h;
}

/* The index of the case named `name`, or -1. */
static int name_find(const name_table *t, const vkcu_manifest *m, const char *name)
{
    if (!t->size)
        return -1;
    for (size_t k = name_hash(name) & (t->size - 1); t->slot[k]; k = (k + 1) & (t->size - 1))
        if (!strcmp(m->cases[t->slot[k] - 1].name, name))
            return t->slot[k] - 1;
    return -1;
}

/* Adds case `index` (its name set); <0 out of memory. */
static int name_add(name_table *t, const vkcu_manifest *m, int index)
{
    if ((size_t)index * 2 + 2 > t->size) {
        size_t size = t->size ? t->size * 2 : 64;
        int *slot = calloc(size, sizeof(*slot));
        if (!slot)
            return -1;
        for (size_t i = 0; i < t->size; i++)
            if (t->slot[i]) {
                size_t k = name_hash(m->cases[t->slot[i] - 1].name) & (size - 1);
                while (slot[k])
                    k = (k + 1) & (size - 1);
                slot[k] = t->slot[i];
            }
        free(t->slot);
        t->slot = slot;
        t->size = size;
    }
    size_t k = name_hash(m->cases[index].name) & (t->size - 1);
    while (t->slot[k])
        k = (k + 1) & (t->size - 1);
    t->slot[k] = index + 1;
    return 0;
}

int vkcu_manifest_load(const char *path, vkcu_manifest **out, char *err, size_t errlen)
{
    name_table names = { NULL, 0 };
    vkcu_manifest *m = calloc(1, sizeof(*m));
    int ret = 0, lineno = 0, seen_version = 0, cap = 0;
    vkcu_manifest_case *c = NULL;
    *out = NULL;
    if (!m || !(m->path = strdup(path)))
        goto nomem;
    m->dirfd = -1;
    {
        const char *slash = strrchr(path, '/');
        m->dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
        if (!m->dir)
            goto nomem;
    }
    if ((ret = load_lines(m, err, errlen)) < 0)
        goto fail;
    /* Resolved once: what --update writes below it stays below it, whatever
     * links change while the cases run. */
    m->dirfd = open(m->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    for (int i = 0; i < m->nb_lines; i++) {
        char buf[4096];
        lineno = i + 1;
        snprintf(buf, sizeof(buf), "%s", m->lines[i]);
        char *s = trim(buf);
        if (!*s || (*s == '#' && !(c && is_concealed_mark(s))))
            continue;
        if (!seen_version) {
            int64_t v;
            const char *num = s + strlen("vkcu-manifest");
            if (strncmp(s, "vkcu-manifest", strlen("vkcu-manifest")) || (*num != ' ' && *num != '\t') ||
                vkcu_parse_int(num + strspn(num, " \t"), 0, INT_MAX, &v) < 0) {
                snprintf(err, errlen, "%s:%d: not a vkcu manifest: the first line must be 'vkcu-manifest %d' "
                         "(docs/regression.md)", path, lineno, VKCU_MANIFEST_VERSION);
                ret = VKCU_ERR_INPUT;
                goto fail;
            }
            if (v != VKCU_MANIFEST_VERSION) {
                snprintf(err, errlen, "%s:%d: manifest format %lld; this vkcu reads format %d", path, lineno,
                         (long long)v, VKCU_MANIFEST_VERSION);
                ret = VKCU_ERR_INPUT;
                goto fail;
            }
            seen_version = 1;
            continue;
        }
        if (*s == '[') {
            char name[256];
            size_t n = strlen(s);
            if (n < 8 || strncmp(s, "[case ", 6) || s[n - 1] != ']') {
                snprintf(err, errlen, "%s:%d: expected '[case NAME]'", path, lineno);
                ret = VKCU_ERR_INPUT;
                goto fail;
            }
            snprintf(name, sizeof(name), "%.*s", (int)(n - 7), s + 6);
            char *nm = trim(name);
            if (!*nm || strpbrk(nm, " \t<>&\"'")) {
                snprintf(err, errlen, "%s:%d: case name '%s' must be one word without <>&\"'", path, lineno, nm);
                ret = VKCU_ERR_INPUT;
                goto fail;
            }
            int same = name_find(&names, m, nm);
            if (same >= 0) {
                snprintf(err, errlen, "%s:%d: case '%s' already defined on line %d", path, lineno, nm,
                         m->cases[same].line);
                ret = VKCU_ERR_INPUT;
                goto fail;
            }
            if (c && (ret = check_case(m, c, err, errlen)) < 0)
                goto fail;
            if (m->nb_cases == cap) {
                cap = cap ? cap * 2 : 16;
                vkcu_manifest_case *nc = realloc(m->cases, (size_t)cap * sizeof(*nc));
                if (!nc)
                    goto nomem;
                m->cases = nc;
            }
            c = &m->cases[m->nb_cases++];
            memset(c, 0, sizeof(*c));
            c->line = lineno;
            c->inline_first = c->inline_last = -1;
            c->last_line = i;
            c->max_diff = -1;
            c->min_psnr = NAN;
            c->min_vmaf = NAN;
            c->backend = VKCU_BACKEND_AUTO;
            c->timing = -1;
            c->exclude_concealed = -1;
            if (!(c->name = strdup(nm)))
                goto nomem;
            if (name_add(&names, m, m->nb_cases - 1) < 0)
                goto nomem;
            continue;
        }
        if (!c) {
            snprintf(err, errlen, "%s:%d: '%s' before the first [case NAME]", path, lineno, s);
            ret = VKCU_ERR_INPUT;
            goto fail;
        }
        c->last_line = i;
        if (is_frame_line(s)) {
            if (c->inline_first < 0)
                c->inline_first = i;
            else if (c->inline_last != i - 1) {
                snprintf(err, errlen, "%s:%d: case '%s': inline frame lines must be one block", path, lineno, c->name);
                ret = VKCU_ERR_INPUT;
                goto fail;
            }
            c->inline_last = i;
            continue;
        }
        char *eq = strchr(s, '=');
        if (!eq) {
            snprintf(err, errlen, "%s:%d: expected 'key = value', a frame hash line or '[case NAME]': %.60s", path,
                     lineno, s);
            ret = VKCU_ERR_INPUT;
            goto fail;
        }
        *eq = 0;
        if ((ret = set_key(m, c, trim(s), trim(eq + 1), lineno, err, errlen)) < 0)
            goto fail;
    }
    if (!seen_version) {
        snprintf(err, errlen, "%s: empty manifest (expected 'vkcu-manifest %d' and cases)", path, VKCU_MANIFEST_VERSION);
        ret = VKCU_ERR_INPUT;
        goto fail;
    }
    if (c && (ret = check_case(m, c, err, errlen)) < 0)
        goto fail;
    if (!m->nb_cases) {
        snprintf(err, errlen, "%s: no cases: nothing to verify (add a '[case NAME]' section with an input and an "
                 "expectation, docs/regression.md)", path);
        ret = VKCU_ERR_INPUT;
        goto fail;
    }
    *out = m;
    free(names.slot);
    return 0;
nomem:
    ret = AVERROR(ENOMEM);
    snprintf(err, errlen, "%s: out of memory", path);
fail:
    free(names.slot);
    vkcu_manifest_free(&m);
    return ret;
}

/* ------------------------------------------------------------------ */
/* variables and paths                                                  */

static int find_conformance(const vkcu_manifest *m, char *out, size_t outlen)
{
    const char *env = getenv("VKCU_CONFORMANCE");
    if (env && *env) {
        snprintf(out, outlen, "%s", env);
        return 0;
    }
    char dir[PATH_MAX];
    if (!realpath(m->dir, dir))
        return -1;
    /* the repository's own streams (media/conformance beside
     * media/conformance.manifest) before a shared checkout's */
    char own[PATH_MAX + 32];
    struct stat ost;
    snprintf(own, sizeof(own), "%s/conformance", dir);
    if (stat(own, &ost) == 0 && S_ISDIR(ost.st_mode)) {
        av_strlcpy(out, own, outlen);
        return 0;
    }
    for (;;) {
        char cand[PATH_MAX + 32];
        struct stat st;
        snprintf(cand, sizeof(cand), "%s/../shared/conformance", dir);
        if (stat(cand, &st) == 0 && S_ISDIR(st.st_mode)) {
            av_strlcpy(out, cand, outlen);
            return 0;
        }
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
            return -1;
        *slash = 0;
    }
}

char *vkcu_manifest_path(const vkcu_manifest *m, const char *text, char *err, size_t errlen)
{
    char buf[PATH_MAX * 2];
    size_t n = 0;
    for (const char *p = text; *p;) {
        if (p[0] == '$' && p[1] == '{') {
            const char *close = strchr(p, '}');
            if (!close) {
                snprintf(err, errlen, "'%s': unterminated ${", text);
                return NULL;
            }
            char name[128], value[PATH_MAX];
            snprintf(name, sizeof(name), "%.*s", (int)(close - p - 2), p + 2);
            char *def = strstr(name, ":-");
            if (def) {
                *def = 0;
                def += 2;
            }
            const char *env = getenv(name);
            if (env && *env) {
                snprintf(value, sizeof(value), "%s", env);
            } else if (!strcmp(name, "CONFORMANCE") && find_conformance(m, value, sizeof(value)) == 0) {
                /* found beside the checkout */
            } else if (def) {
                snprintf(value, sizeof(value), "%s", def);
            } else {
                snprintf(err, errlen, "'%s': ${%s} is not set%s", text, name,
                         !strcmp(name, "CONFORMANCE") ? " (set VKCU_CONFORMANCE to the conformance stream folder; none "
                                                        "found as ../shared/conformance above the manifest)"
                                                      : " (set it in the environment, or write ${NAME:-default})");
                return NULL;
            }
            n += snprintf(buf + n, sizeof(buf) - n, "%s", value);
            p = close + 1;
        } else {
            if (n + 1 < sizeof(buf))
                buf[n++] = *p;
            buf[n] = 0;
            p++;
        }
        if (n >= sizeof(buf) - 1) {
            snprintf(err, errlen, "'%s': path too long", text);
            return NULL;
        }
    }
    buf[n] = 0;
    if (buf[0] == '/')
        return strdup(buf);
    char *full = malloc(strlen(m->dir) + strlen(buf) + 2);
    if (full)
        sprintf(full, "%s/%s", m->dir, buf);
    return full;
}

/* Whether `path` (from vkcu_manifest_path) lies inside the manifest's
 * folder once symbolic links are resolved: manifests often come with the
 * change under test, and their hashes files are read and, with --update,
 * written. Absolute paths are refused as written; links are followed as far
 * as the path exists (a file --update has yet to create has no link of its
 * own), and the part that does not exist yet may not hold "..". Returns 1
 * inside, 0 with why filled. */
static int inside_folder(const vkcu_manifest *m, const char *path, char *why, size_t whylen)
{
    char root[PATH_MAX], real[PATH_MAX], probe[PATH_MAX], rest[PATH_MAX] = "";
    size_t dn = strlen(m->dir);
    /* vkcu_manifest_path joins a relative path onto the folder. */
    if (strncmp(path, m->dir, dn) || path[dn] != '/') {
        snprintf(why, whylen, "is an absolute path");
        return 0;
    }
    if (!realpath(m->dir, root)) {
        snprintf(why, whylen, "is in a folder that cannot be resolved (%s)", strerror(errno));
        return 0;
    }
    av_strlcpy(probe, path, sizeof(probe));
    while (!realpath(probe, real)) {
        struct stat st;
        char *slash = strrchr(probe, '/');
        if (lstat(probe, &st) == 0 || !slash || slash == probe) {
            snprintf(why, whylen, "cannot be resolved (a broken link?)");
            return 0;
        }
        char joined[PATH_MAX];
        snprintf(joined, sizeof(joined), "%s%s%s", slash + 1, rest[0] ? "/" : "", rest);
        av_strlcpy(rest, joined, sizeof(rest));
        *slash = 0;
    }
    for (const char *c = rest; *c;) {
        size_t n = strcspn(c, "/");
        if (n == 2 && !strncmp(c, "..", 2)) {
            snprintf(why, whylen, "climbs out with '..'");
            return 0;
        }
        c += n + (c[n] == '/');
    }
    size_t rn = strlen(root);
    int inside = rn == 1 || (!strncmp(real, root, rn) && (real[rn] == '/' || (real[rn] == 0 && rest[0])));
    if (!inside)
        snprintf(why, whylen, "resolves to %.250s%s%.200s", real, rest[0] ? "/" : "", rest);
    return inside;
}

/* ------------------------------------------------------------------ */
/* hash expectations                                                    */

typedef struct hash_diff {
    int changed, missing, extra;
    int concealed, concealed_changed; /* pairs marked concealed on either side; of them, the ones that differ */
    char first[400];
} hash_diff;

static int entries_equal(const vkcu_hash_entry *a, const vkcu_hash_entry *b)
{
    return a->size == b->size && a->duration == b->duration && !strcmp(a->hash, b->hash);
}

/* Pairs the produced and the expected frames by pts (so one lost frame is
 * one missing frame) and counts the differences; `first` describes the
 * first of them. marks (room for got->nb + want->nb, or NULL) receives one
 * mark per frame in time order, as vkcu_html_frame_strip draws them.
 * Returns the number of frames in that order. */
static int diff_lists(const vkcu_hash_list *got, const vkcu_hash_list *want, int exclude_concealed, hash_diff *d,
                      char *marks)
{
    int nb_marks = 0;
    memset(d, 0, sizeof(*d));
    AVRational tb = got->tb.num > 0 ? got->tb : want->tb;
    AVRational wtb = want->tb.num > 0 ? want->tb : tb;
    int i = 0, j = 0;
    while (i < got->nb || j < want->nb) {
        const vkcu_hash_entry *g = i < got->nb ? &got->entries[i] : NULL;
        const vkcu_hash_entry *w = j < want->nb ? &want->entries[j] : NULL;
        int64_t wpts = w ? av_rescale_q(w->pts, wtb, tb) : 0;
        if (g && w && g->pts == wpts) {
            const int concealed = g->concealed || w->concealed, equal = entries_equal(g, w);
            d->concealed += concealed;
            d->concealed_changed += concealed && !equal;
            if (!equal && !(concealed && exclude_concealed)) {
                if (!d->changed && !d->missing && !d->extra) {
                    if (strcmp(g->hash, w->hash))
                        snprintf(d->first, sizeof(d->first), "frame %d (pts %" PRId64 "): hash %s, expected %s", i,
                                 g->pts, g->hash, w->hash);
                    else
                        snprintf(d->first, sizeof(d->first),
                                 "frame %d (pts %" PRId64 "): size %d duration %" PRId64 ", expected size %d duration %"
                                 PRId64, i, g->pts, g->size, g->duration, w->size, w->duration);
                }
                d->changed++;
            }
            if (marks)
                marks[nb_marks] = equal || (concealed && exclude_concealed) ? '=' : 'c';
            nb_marks++;
            i++, j++;
        } else if (!w || (g && g->pts < wpts)) {
            if (!d->changed && !d->missing && !d->extra)
                snprintf(d->first, sizeof(d->first), "frame %d (pts %" PRId64 ") is not expected", i, g->pts);
            d->extra++;
            if (marks)
                marks[nb_marks] = 'x';
            nb_marks++;
            i++;
        } else {
            if (!d->changed && !d->missing && !d->extra)
                snprintf(d->first, sizeof(d->first), "expected frame %d (pts %" PRId64 ") is missing", j, w->pts);
            d->missing++;
            if (marks)
                marks[nb_marks] = 'm';
            nb_marks++;
            j++;
        }
    }
    return nb_marks;
}

/* "; 3 concealed by the decoder (2 differ, left out)": frames marked in
 * either list, said apart from real differences. */
static void describe_concealed(const hash_diff *d, int exclude, char *out, size_t n)
{
    out[0] = 0;
    if (d->concealed && exclude)
        snprintf(out, n, "; %d concealed by the decoder (%d differ, left out)", d->concealed, d->concealed_changed);
    else if (d->concealed_changed)
        snprintf(out, n, "; %d of them concealed by the decoder (concealed = exclude leaves those out)",
                 d->concealed_changed);
    else if (d->concealed)
        snprintf(out, n, "; %d concealed by the decoder, equal", d->concealed);
}

static void describe_diff(const hash_diff *d, int exclude, int got, int want, char *out, size_t n)
{
    char concealed[128];
    describe_concealed(d, exclude, concealed, sizeof(concealed));
    if (d->missing || d->extra)
        snprintf(out, n, "%d frames, expected %d (%d missing, %d not expected, %d changed%s); first: %s", got, want,
                 d->missing, d->extra, d->changed, concealed, d->first);
    else
        snprintf(out, n, "%d of %d frames differ%s; first: %s", d->changed, want, concealed, d->first);
}

/* ------------------------------------------------------------------ */
/* running                                                              */

typedef struct case_result {
    const vkcu_manifest_case *c;
    const vkcu_manifest *m;
    enum { CASE_PASS, CASE_FAIL, CASE_SKIP, CASE_UPDATED } status;
    char message[1024];
    double seconds;
    /* verify --html, failing cases only: a metric case's plot, a hash case's frame marks */
    vkcu_compare_plot *plot;
    char *marks;
    int nb_marks;
} case_result;

void vkcu_verify_params_default(vkcu_verify_params *p)
{
    memset(p, 0, sizeof(*p));
    p->backend_override = -1;
}

static int wanted(const vkcu_verify_params *p, const char *name)
{
    if (!p->cases || !p->nb_cases)
        return 1;
    for (int i = 0; i < p->nb_cases; i++)
        if (!fnmatch(p->cases[i], name, 0))
            return 1;
    return 0;
}

static const char *backend_name(int b)
{
    return b == VKCU_BACKEND_CPU ? "cpu" : b == VKCU_BACKEND_GPU ? "gpu" : "auto";
}

/* The job every case starts from: the front end's options, then the case's
 * keys; a pipeline preset (loaded into *preset, which the job points into)
 * sets the chain and, for hash presets, the algorithm. */
static int case_job(const vkcu_manifest *m, const vkcu_manifest_case *c, const vkcu_verify_params *p,
                    vkcu_job_params *job, vkcu_preset *preset, int *backend, char *err, size_t errlen)
{
    if (p->base)
        *job = *p->base;
    else
        vkcu_job_params_default(job);
    job->progress = 0;
    job->start_time = job->duration = -1;
    job->start_frame = job->frame_count = -1;
    *backend = p->backend_override >= 0 ? p->backend_override : c->backend;
    job->backend = (enum vkcu_backend) * backend;
    job->chain = c->chain;
    job->max_frames = c->max_frames;
    job->strict = c->strict;
    job->timing = c->timing >= 0 ? (enum vkcu_timing)c->timing : p->timing;
    job->hash_algo = c->algo;
    if (c->pipeline) {
        /* A file (a '/' or ".pipe") is relative to the manifest; a name is searched as --pipeline does. */
        size_t n = strlen(c->pipeline);
        int is_file = strchr(c->pipeline, '/') || (n > 5 && !strcmp(c->pipeline + n - 5, VKCU_PRESET_EXT));
        char perr[600];
        char *where = is_file ? vkcu_manifest_path(m, c->pipeline, perr, sizeof(perr)) : strdup(c->pipeline);
        if (!where) {
            snprintf(err, errlen, "pipeline %s", perr);
            return VKCU_ERR_USAGE;
        }
        int ret = vkcu_preset_load(where, preset, err, errlen);
        free(where);
        if (ret < 0)
            return ret;
        vkcu_preset_apply_params(preset, job);
        if (!(preset->sink == VKCU_SINK_HASH && !c->algo_set))
            job->hash_algo = c->algo;
    }
    return 0;
}

static int write_text_file(const char *path, const char *text, size_t len, int overwrite, const char *const *inputs,
                           char *err, size_t errlen)
{
    char tmp[4200];
    int ret = vkcu_outfile_begin(path, overwrite, inputs, tmp, sizeof(tmp), err, errlen);
    if (ret < 0)
        return VKCU_ERR_OUTPUT;
    FILE *f = vkcu_outfile_fopen(tmp, "w");
    if (f)
        fwrite(text, 1, len, f); /* a short write leaves the stream's error flag for the close */
    int ok = f && vkcu_outfile_fclose(f, tmp) == 0;
    if (!ok) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        vkcu_outfile_abort(tmp);
        return VKCU_ERR_OUTPUT;
    }
    ret = vkcu_outfile_commit(tmp, path, err, errlen);
    return ret < 0 ? VKCU_ERR_OUTPUT : 0;
}

/* A file below the manifest's folder (path from vkcu_manifest_path, checked
 * by inside_folder), written relative to the folder held open since the
 * manifest was loaded; elsewhere (allow_outside) by its path. */
static int write_confined(const vkcu_manifest *m, int confined, const char *path, const char *text, size_t len,
                          const char *const *inputs, char *err, size_t errlen)
{
    size_t dn = strlen(m->dir);
    const char *rel = !strchr(path, '/') && !strcmp(m->dir, ".") ? path
                      : !strncmp(path, m->dir, dn) && path[dn] == '/' ? path + dn + 1 : NULL;
    if (!confined || m->dirfd < 0 || !rel)
        return write_text_file(path, text, len, 1, inputs, err, errlen);
    int ret = vkcu_outfile_write_at(m->dirfd, rel, path, text, len, 1, inputs, err, errlen);
    return ret < 0 ? VKCU_ERR_OUTPUT : 0;
}

/* Replaces a case's inline frame lines with the frame lines of `text`. */
static int update_inline(vkcu_manifest *m, vkcu_manifest_case *c, const char *text)
{
    int nb_new = 0;
    for (const char *p = text; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
        if ((*p != '#' || is_concealed_mark(p)) && *p != '\n')
            nb_new++;
    int first = c->inline_first >= 0 ? c->inline_first : c->last_line + 1;
    int nb_old = c->inline_first >= 0 ? c->inline_last - c->inline_first + 1 : 0;
    int total = m->nb_lines - nb_old + nb_new;
    char **lines = calloc((size_t)(total ? total : 1), sizeof(*lines));
    if (!lines)
        return AVERROR(ENOMEM);
    int k = 0;
    for (int i = 0; i < first; i++)
        lines[k++] = m->lines[i];
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if ((*p != '#' || is_concealed_mark(p)) && n)
            lines[k++] = strndup(p, n);
        p += n + (nl ? 1 : 0);
    }
    for (int i = first; i < first + nb_old; i++)
        free(m->lines[i]);
    for (int i = first + nb_old; i < m->nb_lines; i++)
        lines[k++] = m->lines[i];
    for (int i = 0; i < k; i++)
        if (!lines[i])
            return AVERROR(ENOMEM);
    free(m->lines);
    m->lines = lines;
    m->nb_lines = k;
    int shift = nb_new - nb_old;
    for (int i = 0; i < m->nb_cases; i++) {
        vkcu_manifest_case *o = &m->cases[i];
        if (o->line - 1 > first) {
            o->line += shift;
            o->last_line += shift;
            if (o->inline_first >= 0)
                o->inline_first += shift, o->inline_last += shift;
        }
    }
    c->inline_first = nb_new ? first : -1;
    c->inline_last = nb_new ? first + nb_new - 1 : -1;
    c->last_line = nb_new ? first + nb_new - 1 : c->last_line;
    return 0;
}

static int save_manifest(vkcu_manifest *m, char *err, size_t errlen)
{
    size_t len = 0;
    for (int i = 0; i < m->nb_lines; i++)
        len += strlen(m->lines[i]) + 1;
    char *text = malloc(len + 1), *p = text;
    if (!text)
        return AVERROR(ENOMEM);
    for (int i = 0; i < m->nb_lines; i++)
        p += sprintf(p, "%s\n", m->lines[i]);
    /* --update rewrites the manifest itself: the one input it may replace. */
    int ret = write_confined(m, 1, m->path, text, len, NULL, err, errlen);
    free(text);
    return ret;
}

/* A hash case: the job's hash output against the expected frames. */
static int run_hash_case(vkcu_manifest *m, vkcu_manifest_case *c, const vkcu_verify_params *p, vkcu_job_params *job,
                         case_result *cr, int *dirty, char *err, size_t errlen)
{
    char perr[600];
    char *input = vkcu_manifest_path(m, c->input, perr, sizeof(perr));
    char *sidecar = NULL, *out = NULL;
    size_t outlen = 0;
    vkcu_hash_list got = { 0 }, want = { 0 };
    int ret = 0, have_want = 0;
    if (!input) {
        snprintf(cr->message, sizeof(cr->message), "input %s", perr);
        cr->status = CASE_FAIL;
        goto done;
    }
    if (c->hashes && !(sidecar = vkcu_manifest_path(m, c->hashes, perr, sizeof(perr)))) {
        snprintf(cr->message, sizeof(cr->message), "hashes %s", perr);
        cr->status = CASE_FAIL;
        goto done;
    }
    if (sidecar && !p->allow_outside && !inside_folder(m, sidecar, perr, sizeof(perr))) {
        snprintf(cr->message, sizeof(cr->message), "hashes '%s' %s: it must stay inside the manifest's folder %s "
                 "(write it relative to the manifest, or use %s)", c->hashes, perr, m->dir,
                 VKCU_SETTING_IS("allow_outside", "1"));
        cr->status = CASE_FAIL;
        goto done;
    }
    FILE *mem = open_memstream(&out, &outlen);
    if (!mem) {
        ret = AVERROR(ENOMEM);
        goto done;
    }
    job->input = input;
    job->sink = VKCU_SINK_HASH;
    job->hash_out = mem;
    job->hash_format = VKCU_HASH_FORMAT_FRAMEMD5;
    vkcu_job_result res;
    int jr = vkcu_job_run(job, &res);
    fclose(mem);
    if (jr == VKCU_ERR_INTERRUPT) {
        ret = jr;
        snprintf(err, errlen, "%s", res.error);
        goto done;
    }
    if (jr < 0) {
        snprintf(cr->message, sizeof(cr->message), "%s", res.error[0] ? res.error : "the job failed");
        cr->status = CASE_FAIL;
        goto done;
    }
    int ran_on = res.path == VKCU_PATH_CPU ? VKCU_BACKEND_CPU : VKCU_BACKEND_GPU;
    if (c->backends_mask && !(c->backends_mask & (1 << ran_on))) {
        snprintf(cr->message, sizeof(cr->message), "ran on %s; the expectation holds on %s only", backend_name(ran_on),
                 backend_name(c->backends_mask & (1 << VKCU_BACKEND_CPU) ? VKCU_BACKEND_CPU : VKCU_BACKEND_GPU));
        cr->status = CASE_SKIP;
        goto done;
    }
    if (vkcu_hash_list_parse(out, outlen, input, &got, perr, sizeof(perr)) < 0) {
        snprintf(cr->message, sizeof(cr->message), "cannot read back the hashes: %s", perr);
        cr->status = CASE_FAIL;
        goto done;
    }
    if (sidecar) {
        struct stat st;
        if (stat(sidecar, &st) < 0 && !p->update) {
            snprintf(cr->message, sizeof(cr->message), "no expected hashes: %s does not exist (record them: rerun "
                     "%s with %s)", sidecar, m->path, VKCU_SETTING_IS("update", "1"));
            cr->status = CASE_FAIL;
            goto done;
        }
        if (stat(sidecar, &st) == 0) {
            if (vkcu_hash_list_load(sidecar, &want, perr, sizeof(perr)) < 0) {
                snprintf(cr->message, sizeof(cr->message), "expected hashes: %s", perr);
                cr->status = CASE_FAIL;
                goto done;
            }
            have_want = 1;
        }
    } else if (c->inline_first >= 0) {
        size_t len = 0;
        for (int i = c->inline_first; i <= c->inline_last; i++)
            len += strlen(m->lines[i]) + 1;
        char *text = malloc(len + 1), *q = text;
        if (!text) {
            ret = AVERROR(ENOMEM);
            goto done;
        }
        for (int i = c->inline_first; i <= c->inline_last; i++)
            q += sprintf(q, "%s\n", m->lines[i]);
        char name[600];
        snprintf(name, sizeof(name), "%s (case %s)", m->path, c->name);
        int pr = vkcu_hash_list_parse(text, len, name, &want, perr, sizeof(perr));
        free(text);
        if (pr < 0) {
            snprintf(cr->message, sizeof(cr->message), "%s", perr);
            cr->status = CASE_FAIL;
            goto done;
        }
        want.tb = got.tb;
        have_want = 1;
    }
    if (have_want && want.algo_known && want.algo != job->hash_algo) {
        snprintf(cr->message, sizeof(cr->message), "expected hashes are %s, the case asks for %s (set algo = %s)",
                 vkcu_hash_algo_name(want.algo), vkcu_hash_algo_name(job->hash_algo), vkcu_hash_algo_name(want.algo));
        cr->status = CASE_FAIL;
        goto done;
    }
    hash_diff d = { 0 };
    const int exclude = c->exclude_concealed >= 0 ? c->exclude_concealed : p->exclude_concealed;
    char *marks = have_want && p->html ? malloc((size_t)got.nb + want.nb) : NULL;
    int nb_marks = have_want ? diff_lists(&got, &want, exclude, &d, marks) : 0;
    int same = have_want && !d.changed && !d.missing && !d.extra;
    if (marks && !same && !p->update) {
        cr->marks = marks;
        cr->nb_marks = nb_marks;
    } else {
        free(marks);
    }
    const char *ran = res.path == VKCU_PATH_CPU ? "cpu" : "gpu";
    if (same) {
        char concealed[128];
        describe_concealed(&d, exclude, concealed, sizeof(concealed));
        snprintf(cr->message, sizeof(cr->message), "%d frames, %s hashes equal%s (%s)", got.nb,
                 vkcu_hash_algo_name(job->hash_algo), concealed, ran);
        cr->status = CASE_PASS;
    } else if (!p->update) {
        if (!have_want)
            snprintf(cr->message, sizeof(cr->message),
                     "no expected hashes (record them: rerun %s with %s)", m->path, VKCU_SETTING_IS("update", "1"));
        else {
            char what[700];
            describe_diff(&d, exclude, got.nb, want.nb, what, sizeof(what));
            snprintf(cr->message, sizeof(cr->message), "%s (%s; if intended: rerun %s with %s)", what, ran,
                     m->path, VKCU_SETTING_IS("update", "1"));
        }
        cr->status = CASE_FAIL;
    } else {
        char what[700];
        if (!have_want)
            snprintf(what, sizeof(what), "recorded %d frames", got.nb);
        else
            describe_diff(&d, exclude, got.nb, want.nb, what, sizeof(what));
        if (sidecar) {
            const char *inputs[] = { input, m->path, job->pipeline_file, NULL };
            /* --update: replacing is the point */
            ret = write_confined(m, !p->allow_outside, sidecar, out, outlen, inputs, err, errlen);
        } else {
            ret = update_inline(m, c, out);
            *dirty = 1;
        }
        if (ret < 0)
            goto done;
        snprintf(cr->message, sizeof(cr->message), "%s; wrote %s", what, sidecar ? sidecar : m->path);
        cr->status = CASE_UPDATED;
    }
done:
    vkcu_hash_list_free(&got);
    vkcu_hash_list_free(&want);
    free(out);
    free(input);
    free(sidecar);
    return ret;
}

/* A metric case: the input (with the case's processing) against a reference. */
static int run_metric_case(vkcu_manifest *m, vkcu_manifest_case *c, const vkcu_verify_params *p, vkcu_job_params *job,
                           case_result *cr, char *err, size_t errlen)
{
    char perr[600];
    char *input = vkcu_manifest_path(m, c->input, perr, sizeof(perr)), *ref = NULL;
    if (!input || !(ref = vkcu_manifest_path(m, c->reference, perr, sizeof(perr)))) {
        snprintf(cr->message, sizeof(cr->message), "%s %s", input ? "reference" : "input", perr);
        cr->status = CASE_FAIL;
        free(input);
        return 0;
    }
    vkcu_job_params job_b = *job;
    job_b.chain = NULL; /* the reference is compared as it is */
    vkcu_compare_params cp;
    vkcu_compare_params_default(&cp);
    cp.a = input;
    cp.b = ref;
    cp.job = job;
    cp.job_b = &job_b;
    cp.max_diff = c->max_diff;
    cp.min_psnr = c->min_psnr;
    cp.min_vmaf = c->min_vmaf;
    cp.vmaf_ref_b = 1; /* the case's reference is VMAF's reference */
    cp.timing = job->timing;
    cp.exclude_concealed = c->exclude_concealed >= 0 ? c->exclude_concealed : p->exclude_concealed;
    if (p->html)
        cp.plot_out = &cr->plot;
    vkcu_compare_result r;
    int ret = vkcu_compare_run(&cp, &r);
    if (ret != VKCU_ERR_MISMATCH)
        vkcu_compare_plot_free(&cr->plot); /* a page shows the failing cases' plots */
    if (ret == VKCU_ERR_INTERRUPT) {
        snprintf(err, errlen, "%s", r.error);
    } else if (ret == 0) {
        cr->status = CASE_PASS;
        if (r.metrics && r.vmaf)
            snprintf(cr->message, sizeof(cr->message), "%s; VMAF mean %.2f (lowest %.2f), PSNR min %.2f dB, max diff %d",
                     r.verdict, r.vmaf_mean, r.vmaf_min, r.psnr_min, r.max_diff);
        else if (r.metrics)
            snprintf(cr->message, sizeof(cr->message), "%s; PSNR min %.2f dB, max diff %d", r.verdict, r.psnr_min,
                     r.max_diff);
        else
            snprintf(cr->message, sizeof(cr->message), "%s", r.verdict);
    } else {
        cr->status = CASE_FAIL;
        snprintf(cr->message, sizeof(cr->message), "%s", ret == VKCU_ERR_MISMATCH ? r.verdict : r.error);
        ret = 0;
    }
    free(input);
    free(ref);
    return ret == VKCU_ERR_INTERRUPT ? ret : 0;
}

static int run_case(vkcu_manifest *m, vkcu_manifest_case *c, const vkcu_verify_params *p, case_result *cr, int *dirty,
                    char *err, size_t errlen)
{
    vkcu_job_params job;
    int backend;
    cr->c = c;
    cr->m = m;
    double t0 = vkcu_now();
    char jerr[1024] = "";
    /* Only a case with a pipeline needs one (a few KB: not for every case of a big suite). */
    vkcu_preset *preset = c->pipeline ? calloc(1, sizeof(*preset)) : NULL;
    if (c->pipeline && !preset)
        return AVERROR(ENOMEM);
    int ret = case_job(m, c, p, &job, preset, &backend, jerr, sizeof(jerr));
    double limit = c->timeout > 0 ? c->timeout : p->timeout;
    if (ret >= 0 && limit > 0)
        job.deadline = t0 + limit;
    if (ret < 0) {
        cr->status = CASE_FAIL;
        snprintf(cr->message, sizeof(cr->message), "%s", jerr);
        ret = 0;
    } else if (c->backends_mask && backend != VKCU_BACKEND_AUTO && !(c->backends_mask & (1 << backend))) {
        cr->status = CASE_SKIP;
        snprintf(cr->message, sizeof(cr->message), "the expectation holds on %s only, not on %s",
                 backend_name(c->backends_mask & (1 << VKCU_BACKEND_CPU) ? VKCU_BACKEND_CPU : VKCU_BACKEND_GPU),
                 backend_name(backend));
    } else if (c->expect == VKCU_EXPECT_METRICS) {
        ret = run_metric_case(m, c, p, &job, cr, err, errlen);
    } else {
        ret = run_hash_case(m, c, p, &job, cr, dirty, err, errlen);
    }
    free(preset);
    cr->seconds = vkcu_now() - t0;
    return ret;
}

/* ------------------------------------------------------------------ */
/* JUnit XML                                                            */

static void xml_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t' || *s == '\n')
                fputc(*s, f);
        }
    }
}

typedef struct file_id {
    dev_t dev;
    ino_t ino;
    char *path;
} file_id;

static int cmp_file_id(const void *a, const void *b)
{
    const file_id *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* The paths of v (n of them, malloc'ed) that exist, one per file: a big
 * suite names one clip in thousands of cases, and every output is checked
 * against each input by device and inode. A file that does not exist yet
 * cannot be written over. Frees what it drops; NULL-terminated. */
static int cmp_str(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    return x && y ? strcmp(x, y) : (x != NULL) - (y != NULL);
}

static char **distinct_files(char **v, int n)
{
    file_id *ids = malloc((size_t)(n ? n : 1) * sizeof(*ids));
    int k = 0;
    /* the same name once, before any stat */
    qsort(v, (size_t)n, sizeof(*v), cmp_str);
    for (int i = 1; i < n; i++)
        if (v[i] && v[i - 1] && !strcmp(v[i], v[i - 1])) {
            free(v[i - 1]);
            v[i - 1] = NULL;
        }
    if (!ids) {
        for (int i = 0; i < n; i++)
            free(v[i]);
        free(v);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (v[i] && stat(v[i], &st) == 0)
            ids[k++] = (file_id){ st.st_dev, st.st_ino, v[i] };
        else
            free(v[i]);
    }
    qsort(ids, (size_t)k, sizeof(*ids), cmp_file_id);
    int m = 0;
    for (int i = 0; i < k; i++) {
        if (m && !cmp_file_id(&ids[m - 1], &ids[i])) {
            free(ids[i].path);
            continue;
        }
        ids[m++] = ids[i];
    }
    for (int i = 0; i < m; i++)
        v[i] = ids[i].path;
    v[m] = NULL;
    free(ids);
    return v;
}

/* Every file a verify run reads (manifests, case inputs, references,
 * expected hashes files and presets), NULL-terminated, for the rule that
 * no output replaces an input. */
static char **verify_inputs(vkcu_manifest **ms, int nb)
{
    int n = 0;
    for (int k = 0; k < nb; k++)
        n += 1 + 4 * ms[k]->nb_cases;
    char **v = calloc((size_t)n + 1, sizeof(*v));
    if (!v)
        return NULL;
    n = 0;
    for (int k = 0; k < nb; k++) {
        char perr[600];
        v[n++] = strdup(ms[k]->path);
        for (int i = 0; i < ms[k]->nb_cases; i++) {
            const vkcu_manifest_case *c = &ms[k]->cases[i];
            if (c->input && (v[n] = vkcu_manifest_path(ms[k], c->input, perr, sizeof(perr))))
                n++;
            if (c->reference && (v[n] = vkcu_manifest_path(ms[k], c->reference, perr, sizeof(perr))))
                n++;
            if (c->hashes && (v[n] = vkcu_manifest_path(ms[k], c->hashes, perr, sizeof(perr))))
                n++;
            if (c->pipeline) {
                /* as case_job finds it: a file relative to the manifest, or a name in the presets folders */
                size_t len = strlen(c->pipeline);
                char where[4096 + 256];
                if (strchr(c->pipeline, '/') || (len > 5 && !strcmp(c->pipeline + len - 5, VKCU_PRESET_EXT)))
                    v[n] = vkcu_manifest_path(ms[k], c->pipeline, perr, sizeof(perr));
                else if (vkcu_preset_locate(c->pipeline, where, sizeof(where)) > 0)
                    v[n] = strdup(where);
                n += v[n] != NULL;
            }
        }
    }
    return distinct_files(v, n);
}

static void free_inputs(char **v)
{
    for (int i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

static int write_junit(const char *path, int overwrite, const char *const *inputs, vkcu_manifest **ms, int nb,
                       const case_result *res, int nb_res, char *err, size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return AVERROR(ENOMEM);
    int total = 0, failures = 0, skipped = 0;
    double secs = 0;
    for (int i = 0; i < nb_res; i++) {
        total++;
        failures += res[i].status == CASE_FAIL;
        skipped += res[i].status == CASE_SKIP;
        secs += res[i].seconds;
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites name=\"vkcu verify\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\" time=\"%.3f\">\n",
            total, failures, skipped, secs);
    for (int k = 0; k < nb; k++) {
        int t = 0, fl = 0, sk = 0;
        double s = 0;
        for (int i = 0; i < nb_res; i++)
            if (res[i].m == ms[k]) {
                t++;
                fl += res[i].status == CASE_FAIL;
                sk += res[i].status == CASE_SKIP;
                s += res[i].seconds;
            }
        fputs("  <testsuite name=\"", f);
        xml_escaped(f, ms[k]->path);
        fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\" time=\"%.3f\">\n", t, fl, sk, s);
        for (int i = 0; i < nb_res; i++) {
            const case_result *r = &res[i];
            if (r->m != ms[k])
                continue;
            fputs("    <testcase classname=\"", f);
            xml_escaped(f, ms[k]->path);
            fputs("\" name=\"", f);
            xml_escaped(f, r->c->name);
            fprintf(f, "\" time=\"%.3f\"", r->seconds);
            if (r->status == CASE_FAIL || r->status == CASE_SKIP) {
                fprintf(f, ">\n      <%s message=\"", r->status == CASE_FAIL ? "failure" : "skipped");
                xml_escaped(f, r->message);
                fputs("\"", f);
                if (r->status == CASE_FAIL) {
                    fputs(">", f);
                    xml_escaped(f, r->message);
                    fputs("</failure>\n", f);
                } else {
                    fputs("/>\n", f);
                }
                fputs("    </testcase>\n", f);
            } else {
                fputs(">\n      <system-out>", f);
                xml_escaped(f, r->message);
                fputs("</system-out>\n    </testcase>\n", f);
            }
        }
        fputs("  </testsuite>\n", f);
    }
    fputs("</testsuites>\n", f);
    fclose(f);
    int ret = text ? write_text_file(path, text, len, overwrite, inputs, err, errlen) : AVERROR(ENOMEM);
    free(text);
    return ret;
}

/* ------------------------------------------------------------------ */

/* A case run by one of verify's workers (-j). */
typedef struct verify_task {
    vkcu_manifest *m;
    vkcu_manifest_case *c;
    case_result *cr;
    int ret, state; /* 0 waiting, 1 running, 2 done */
    char *err;      /* why ret < 0 (malloc'ed), or NULL: per case only when it failed, for big suites */
} verify_task;

/* run_case, keeping the message of a failure in t->err. */
static int run_task(verify_task *t, const vkcu_verify_params *p, int *dirty)
{
    char err[1024] = "";
    int ret = run_case(t->m, t->c, p, t->cr, dirty, err, sizeof(err));
    if (ret >= 0 && *dirty)
        ret = save_manifest(t->m, err, sizeof(err));
    if (ret < 0 && !(t->err = strdup(err)))
        ret = AVERROR(ENOMEM);
    return ret;
}

typedef struct verify_pool {
    verify_task *t;
    int n, next, stop;
    const vkcu_verify_params *p;
    pthread_mutex_t lock;
    pthread_cond_t done;
} verify_pool;

static void *verify_worker(void *arg)
{
    verify_pool *vp = arg;
    pthread_mutex_lock(&vp->lock);
    while (!vp->stop && vp->next < vp->n) {
        verify_task *t = &vp->t[vp->next++];
        t->state = 1;
        pthread_mutex_unlock(&vp->lock);
        int dirty = 0; /* --update runs one case at a time: nothing to rewrite here */
        t->ret = run_task(t, vp->p, &dirty);
        pthread_mutex_lock(&vp->lock);
        t->state = 2;
        pthread_cond_broadcast(&vp->done);
    }
    pthread_mutex_unlock(&vp->lock);
    return NULL;
}

static void md_cell(FILE *f, const char *s)
{
    /* a table cell: one line, no column breaks */
    for (; *s; s++)
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n' || *s == '\r')
            fputc(' ', f);
        else
            fputc(*s, f);
}

static int write_summary(const char *path, int overwrite, const char *const *inputs, const case_result *res, int nb_res,
                         int passed, int failed, int skipped, int updated, int not_run, char *err, size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return AVERROR(ENOMEM);
    double secs = 0;
    for (int i = 0; i < nb_res; i++)
        secs += res[i].seconds;
    fprintf(f, "## vkcu verify: %s\n\n", failed ? "FAILED" : "passed");
    fprintf(f, "%d passed, %d failed", passed, failed);
    if (updated)
        fprintf(f, ", %d updated", updated);
    if (skipped)
        fprintf(f, ", %d skipped", skipped);
    if (not_run)
        fprintf(f, ", %d not run (%s)", not_run, VKCU_SETTING_IS("fail_fast", "1"));
    fprintf(f, " (%.1f s of case time)\n\n", secs);
    static const char *tags[] = { "PASS", "FAIL", "SKIP", "UPDATED" };
    if (failed) {
        fputs("### Failures\n\n", f);
        for (int i = 0; i < nb_res; i++)
            if (res[i].status == CASE_FAIL) {
                fputs("- **", f);
                md_cell(f, res[i].c->name);
                fputs("** (", f);
                md_cell(f, res[i].m->path);
                fputs("): ", f);
                md_cell(f, res[i].message);
                fputc('\n', f);
            }
        fputc('\n', f);
    }
    fputs("| case | manifest | result | seconds | detail |\n|---|---|---|---:|---|\n", f);
    for (int i = 0; i < nb_res; i++) {
        fputs("| ", f);
        md_cell(f, res[i].c->name);
        fputs(" | ", f);
        md_cell(f, res[i].m->path);
        fprintf(f, " | %s | %.2f | ", tags[res[i].status], res[i].seconds);
        md_cell(f, res[i].message);
        fputs(" |\n", f);
    }
    fclose(f);
    if (!text)
        return AVERROR(ENOMEM);
    int ret = write_text_file(path, text, len, overwrite, inputs, err, errlen);
    free(text);
    return ret < 0 ? VKCU_ERR_OUTPUT : 0;
}

/* verify --html: the cases in a table, each failing case linked to its
 * section below (a metric case's charts and worst frames, a hash case's
 * frames in time order). One page, written whole. */
static int write_html(const char *path, int overwrite, const char *const *inputs, const case_result *res, int nb_res,
                      int passed, int failed, int skipped, int updated, int not_run, char *err, size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return AVERROR(ENOMEM);
    static const char *tags[] = { "PASS", "FAIL", "SKIP", "UPDATED" }, *classes[] = { "pass", "fail", "skip", "pass" };
    char title[160];
    int n = snprintf(title, sizeof(title), "%d passed, %d failed", passed, failed);
    if (updated)
        n += snprintf(title + n, sizeof(title) - n, ", %d updated", updated);
    if (skipped)
        n += snprintf(title + n, sizeof(title) - n, ", %d skipped", skipped);
    if (not_run)
        snprintf(title + n, sizeof(title) - n, ", %d not run (%s)", not_run, VKCU_SETTING_IS("fail_fast", "1"));
    double secs = 0;
    for (int i = 0; i < nb_res; i++)
        secs += res[i].seconds;
    vkcu_html_begin(f, "vkcu verify: ", title);
    fprintf(f, "<h1>vkcu verify</h1>\n<p class=\"%s\" id=\"totals\">%s</p>\n<p>%.1f s of case time</p>\n",
            failed ? "fail" : "pass", title, secs);
    fputs("<table class=\"cases\">\n<tr><th>case</th><th>manifest</th><th>result</th><th>seconds</th><th>detail</th>"
          "</tr>\n", f);
    for (int i = 0; i < nb_res; i++) {
        const case_result *r = &res[i];
        fputs("<tr><td>", f);
        if (r->status == CASE_FAIL)
            fprintf(f, "<a href=\"#case-%d\">", i + 1);
        vkcu_html_text(f, r->c->name, 1);
        fputs(r->status == CASE_FAIL ? "</a></td><td><span class=\"name\">" : "</td><td><span class=\"name\">", f);
        vkcu_html_text(f, r->m->path, 1);
        fprintf(f, "</span></td><td class=\"%s\">%s</td><td>%.2f</td><td>", classes[r->status], tags[r->status],
                r->seconds);
        vkcu_html_text(f, r->message, 1);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    int ret = 0;
    for (int i = 0; i < nb_res && ret >= 0; i++) {
        const case_result *r = &res[i];
        if (r->status != CASE_FAIL)
            continue;
        char id[32];
        snprintf(id, sizeof(id), "case-%d", i + 1);
        fprintf(f, "<section class=\"case\" id=\"%s\">\n<h2><span class=\"fail\">FAIL</span> ", id);
        vkcu_html_text(f, r->c->name, 1);
        fputs("</h2>\n<p>", f);
        vkcu_html_text(f, r->message, 1);
        fputs("</p>\n", f);
        if (r->plot)
            ret = vkcu_html_plot(f, r->plot, id);
        else if (r->marks)
            vkcu_html_frame_strip(f, r->marks, r->nb_marks, id);
        else
            fputs("<p>No frames to show: the case stopped before its frames were compared.</p>\n", f);
        fputs("</section>\n", f);
    }
    vkcu_html_end(f);
    fclose(f);
    if (ret >= 0 && !text)
        ret = AVERROR(ENOMEM);
    if (ret < 0) {
        snprintf(err, errlen, "%s: cannot make the page (PNG encoding failed)", path);
        ret = VKCU_ERR_OUTPUT;
    } else {
        ret = write_text_file(path, text, len, overwrite, inputs, err, errlen);
    }
    free(text);
    return ret < 0 ? VKCU_ERR_OUTPUT : 0;
}

int vkcu_verify_run(const char *const *paths, int nb, const vkcu_verify_params *p, char *err, size_t errlen)
{
    vkcu_manifest **ms = calloc((size_t)nb, sizeof(*ms));
    case_result *res = NULL;
    verify_task *tasks = NULL;
    int nb_res = 0, ret = 0, failed = 0, passed = 0, skipped = 0, updated = 0, not_run = 0;
    char **inputs = NULL;
    FILE *o = p->out;
    verify_pool pool = { 0 };
    pthread_t threads[64];
    int nb_threads = 0;
    if (!ms)
        return AVERROR(ENOMEM);
    int total = 0;
    for (int i = 0; i < nb; i++) {
        if ((ret = vkcu_manifest_load(paths[i], &ms[i], err, errlen)) < 0)
            goto done;
        total += ms[i]->nb_cases;
    }
    /* A case that needs VMAF in a build without it: say so before anything runs or is written. */
    for (int k = 0; k < nb && !vkcu_vmaf_available(); k++)
        for (int i = 0; i < ms[k]->nb_cases; i++)
            if (!isnan(ms[k]->cases[i].min_vmaf) && wanted(p, ms[k]->cases[i].name)) {
                char what[600];
                snprintf(what, sizeof(what), "%s:%d: case '%s': min-vmaf", ms[k]->path, ms[k]->cases[i].line,
                         ms[k]->cases[i].name);
                vkcu_vmaf_missing(what, err, errlen);
                ret = VKCU_ERR_USAGE;
                goto done;
            }
    res = calloc((size_t)(total ? total : 1), sizeof(*res));
    tasks = calloc((size_t)(total ? total : 1), sizeof(*tasks));
    if (!res || !tasks || ((p->junit || p->summary || p->html) && !(inputs = verify_inputs(ms, nb)))) {
        ret = AVERROR(ENOMEM);
        goto done;
    }
    /* An existing report file is refused before any case runs. */
    if (p->junit && (ret = vkcu_outfile_check(p->junit, p->overwrite, (const char *const *)inputs, err, errlen)) < 0)
        goto done;
    if (p->summary &&
        (ret = vkcu_outfile_check(p->summary, p->overwrite, (const char *const *)inputs, err, errlen)) < 0)
        goto done;
    if (p->html && (ret = vkcu_outfile_check(p->html, p->overwrite, (const char *const *)inputs, err, errlen)) < 0)
        goto done;
    for (int k = 0; k < nb; k++)
        for (int i = 0; i < ms[k]->nb_cases; i++)
            if (wanted(p, ms[k]->cases[i].name)) {
                tasks[nb_res] = (verify_task){ .m = ms[k], .c = &ms[k]->cases[i], .cr = &res[nb_res] };
                nb_res++;
            }
    if (!nb_res) {
        snprintf(err, errlen, "no case matched %s in %s%s", VKCU_SETTING("cases"), paths[0], nb > 1 ? " ..." : "");
        ret = VKCU_ERR_USAGE;
        goto done;
    }
    /* --update rewrites manifests as it goes: one case at a time */
    int jobs = p->update || p->jobs < 1 ? 1 : p->jobs > 64 ? 64 : p->jobs;
    pool.t = tasks;
    pool.n = nb_res;
    pool.p = p;
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.done, NULL);
    if (jobs > 1)
        for (; nb_threads < jobs && nb_threads < nb_res; nb_threads++)
            if (vkcu_thread_create(&threads[nb_threads], verify_worker, &pool))
                break;
    int shown = 0;
    double last_flush = 0;
    for (int i = 0; i < nb_res; i++) {
        verify_task *t = &tasks[i];
        if (nb_threads) {
            pthread_mutex_lock(&pool.lock);
            while (t->state != 2 && !(pool.stop && t->state == 0))
                pthread_cond_wait(&pool.done, &pool.lock);
            pthread_mutex_unlock(&pool.lock);
        } else {
            int dirty = 0;
            t->ret = run_task(t, p, &dirty);
        }
        if (t->ret < 0) {
            ret = t->ret;
            snprintf(err, errlen, "%s", t->err ? t->err : "out of memory");
            pthread_mutex_lock(&pool.lock);
            pool.stop = 1;
            pthread_mutex_unlock(&pool.lock);
            break;
        }
        case_result *cr = t->cr;
        static const char *tags[] = { "PASS", "FAIL", "SKIP", "UPDATED" };
        if (o) {
            fprintf(o, "%s %s: %s\n", tags[cr->status], t->c->name, cr->message);
            /* Lines show as cases end (a CI log), but a suite of 200k quick
             * cases is not 200k writes: at most ten flushes a second. */
            double now = vkcu_now();
            if (now - last_flush >= 0.1) {
                fflush(o);
                last_flush = now;
            }
        }
        shown++;
        passed += cr->status == CASE_PASS;
        failed += cr->status == CASE_FAIL;
        skipped += cr->status == CASE_SKIP;
        updated += cr->status == CASE_UPDATED;
        if (cr->status == CASE_FAIL && p->fail_fast) {
            pthread_mutex_lock(&pool.lock);
            pool.stop = 1;
            pthread_mutex_unlock(&pool.lock);
            break;
        }
    }
    /* cases after a --fail-fast stop are not reported, whether or not a
     * worker had started them: the output is the same for any -j */
    not_run = nb_res - shown;
    for (int i = 0; i < nb_threads; i++)
        pthread_join(threads[i], NULL);
    nb_threads = 0;
    if (ret < 0)
        goto done;
    if (o) {
        fprintf(o, "%d passed, %d failed", passed, failed);
        if (updated)
            fprintf(o, ", %d updated", updated);
        if (skipped)
            fprintf(o, ", %d skipped", skipped);
        if (not_run)
            fprintf(o, ", %d not run (%s)", not_run, VKCU_SETTING_IS("fail_fast", "1"));
        fputc('\n', o);
    }
    if (p->junit && (ret = write_junit(p->junit, p->overwrite, (const char *const *)inputs, ms, nb, res, shown, err,
                                       errlen)) < 0)
        goto done;
    if (p->summary && (ret = write_summary(p->summary, p->overwrite, (const char *const *)inputs, res, shown, passed,
                                           failed, skipped, updated, not_run, err, errlen)) < 0)
        goto done;
    if (p->html && (ret = write_html(p->html, p->overwrite, (const char *const *)inputs, res, shown, passed, failed,
                                     skipped, updated, not_run, err, errlen)) < 0)
        goto done;
    ret = failed ? VKCU_ERR_MISMATCH : 0;
done:
    free_inputs(inputs);
    if (nb_threads) {
        pthread_mutex_lock(&pool.lock);
        pool.stop = 1;
        pthread_mutex_unlock(&pool.lock);
        for (int i = 0; i < nb_threads; i++)
            pthread_join(threads[i], NULL);
    }
    if (pool.t) {
        pthread_mutex_destroy(&pool.lock);
        pthread_cond_destroy(&pool.done);
    }
    for (int i = 0; i < nb; i++)
        vkcu_manifest_free(&ms[i]);
    free(ms);
    for (int i = 0; res && i < total; i++) {
        vkcu_compare_plot_free(&res[i].plot);
        free(res[i].marks);
    }
    free(res);
    for (int i = 0; tasks && i < total; i++)
        free(tasks[i].err);
    free(tasks);
    return ret;
}
