/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Regression manifests (docs/regression.md): the text of a manifest
 * parsed into its cases, with errors that name the file and line, and its
 * lines kept for --update rewrites.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "manifest_priv.h"
#include "util/array.h"
#include "util/number.h"
#include "util/xxhash64.h"

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
int vkcu_manifest_is_concealed_mark(const char *s)
{
    return !strncmp(s, VKCU_HASH_CONCEALED_MARK, strlen(VKCU_HASH_CONCEALED_MARK));
}

/* An inline expectation line, as `vkcu hash` writes it: "0, dts, pts, ...",
 * or the concealed mark before one. */
static int is_frame_line(const char *s)
{
    if (vkcu_manifest_is_concealed_mark(s))
        return 1;
    if (!isdigit((unsigned char)*s))
        return 0;
    while (isdigit((unsigned char)*s))
        s++;
    while (*s == ' ')
        s++;
    return *s == ',';
}

/* The lines, and the state of the file they came from (m->file): its
 * size and time when opened, and the hash of the bytes parsed. */
static int load_lines(vkcu_manifest *m, char *err, size_t errlen)
{
    FILE *f = fopen(m->path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s (check the path)", m->path, errno == ENOENT ? "no such file" : strerror(errno));
        return VKCU_ERR_INPUT;
    }
    struct stat st;
    vkcu_xxh64_state h;
    vkcu_xxh64_init(&h, 0);
    m->file.known = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
    if (m->file.known) {
        m->file.mtime_sec = (long long)st.st_mtim.tv_sec;
        m->file.mtime_nsec = (long long)st.st_mtim.tv_nsec;
    }
    long long size = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int ret = 0;
    int64_t room_lines = 0;
    while ((n = getline(&line, &cap, f)) >= 0) {
        vkcu_xxh64_update(&h, (const uint8_t *)line, (size_t)n);
        size += n;
        if (memchr(line, 0, (size_t)n)) {
            snprintf(err, errlen, "%s:%d: not a vkcu manifest: binary data (NUL bytes)", m->path, m->nb_lines + 1);
            ret = VKCU_ERR_INPUT;
            break;
        }
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = 0;
        if (VKCU_ARRAY_GROW(m->lines, m->nb_lines, room_lines, 256) < 0) {
            ret = AVERROR(ENOMEM);
            break;
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
    m->file.size = size;
    m->file.hash = vkcu_xxh64_digest(&h);
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

/* A trim's value, as the command line's --start takes its simplest forms:
 * seconds ("2.5") or a frame number ("75f"). 0, or -1 for a value that is
 * neither. */
static int parse_trim(const char *value, double *seconds, int64_t *frames)
{
    size_t n = strlen(value);
    char digits[32];
    if (n > 1 && value[n - 1] == 'f' && n < sizeof(digits)) {
        memcpy(digits, value, n - 1);
        digits[n - 1] = 0;
        return vkcu_parse_int(digits, 0, INT64_MAX, frames) < 0 ? -1 : 0;
    }
    return vkcu_parse_number(value, 0, 1e9, seconds) < 0 ? -1 : 0;
}

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
    } else if (!strcmp(key, "start") || !strcmp(key, "duration")) {
        int start = !strcmp(key, "start");
        double *seconds = start ? &c->start_time : &c->duration;
        int64_t *frames = start ? &c->start_frame : &c->frame_count;
        if (*seconds >= 0 || *frames >= 0)
            SYNTAX("'%s' is set twice in case '%s'", key, c->name);
        if (parse_trim(value, seconds, frames) < 0)
            SYNTAX("%s '%s' is not seconds in [0, 1e9] or a frame number such as 75f", key, value);
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
        SYNTAX("unknown key '%s' (input, chain, pipeline, backend, backends, algo, start, duration, frames, strict, "
               "timing, concealed, hashes, reference, max-diff, min-psnr, min-vmaf, timeout)", key);
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

/* The folder of the manifest at path (malloc'ed): up to its last '/', or
 * "."; NULL out of memory. */
static char *manifest_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
}

/* The manifest's first line, 'vkcu-manifest N': VKCU_ERR_INPUT when it is
 * not one or names another format, else 0. */
static int check_version_line(const char *s, const char *path, int lineno, char *err, size_t errlen)
{
    int64_t v;
    const char *num = s + strlen("vkcu-manifest");
    if (strncmp(s, "vkcu-manifest", strlen("vkcu-manifest")) || (*num != ' ' && *num != '\t') ||
        vkcu_parse_int(num + strspn(num, " \t"), 0, INT_MAX, &v) < 0) {
        snprintf(err, errlen, "%s:%d: not a vkcu manifest: the first line must be 'vkcu-manifest %d' "
                 "(docs/regression.md)", path, lineno, VKCU_MANIFEST_VERSION);
        return VKCU_ERR_INPUT;
    }
    if (v != VKCU_MANIFEST_VERSION) {
        snprintf(err, errlen, "%s:%d: manifest format %lld; this vkcu reads format %d", path, lineno,
                 (long long)v, VKCU_MANIFEST_VERSION);
        return VKCU_ERR_INPUT;
    }
    return 0;
}

/* The name of a '[case NAME]' line s, trimmed, in name (size bytes); NULL
 * when s is no such line or the name is not one word (err says why). */
static char *case_header_name(const char *s, char *name, size_t size, const char *path, int lineno, char *err,
                              size_t errlen)
{
    size_t n = strlen(s);
    if (n < 8 || strncmp(s, "[case ", 6) || s[n - 1] != ']') {
        snprintf(err, errlen, "%s:%d: expected '[case NAME]'", path, lineno);
        return NULL;
    }
    snprintf(name, size, "%.*s", (int)(n - 7), s + 6);
    char *nm = trim(name);
    if (!*nm || strpbrk(nm, " \t<>&\"'")) {
        snprintf(err, errlen, "%s:%d: case name '%s' must be one word without <>&\"'", path, lineno, nm);
        return NULL;
    }
    return nm;
}

/* A new case's defaults: its header on line lineno (index i), no inline
 * frames, every limit and range unset. */
static void init_case(vkcu_manifest_case *c, int lineno, int i)
{
    memset(c, 0, sizeof(*c));
    c->line = lineno;
    c->inline_first = c->inline_last = -1;
    c->last_line = i;
    c->max_diff = -1;
    c->start_time = c->duration = -1;
    c->start_frame = c->frame_count = -1;
    c->min_psnr = NAN;
    c->min_vmaf = NAN;
    c->backend = VKCU_BACKEND_AUTO;
    c->timing = -1;
    c->exclude_concealed = -1;
}

/* A frame hash line (index i) of case c into its inline block, which must
 * be one run of lines: VKCU_ERR_INPUT when it is not, else 0. */
static int add_frame_line(vkcu_manifest_case *c, int i, const char *path, int lineno, char *err, size_t errlen)
{
    if (c->inline_first < 0)
        c->inline_first = i;
    else if (c->inline_last != i - 1) {
        snprintf(err, errlen, "%s:%d: case '%s': inline frame lines must be one block", path, lineno, c->name);
        return VKCU_ERR_INPUT;
    }
    c->inline_last = i;
    return 0;
}

/* A 'key = value' line s (cut in place) of case c, through set_key. */
static int key_line(vkcu_manifest *m, vkcu_manifest_case *c, char *s, const char *path, int lineno, char *err,
                    size_t errlen)
{
    char *eq = strchr(s, '=');
    if (!eq) {
        snprintf(err, errlen, "%s:%d: expected 'key = value', a frame hash line or '[case NAME]': %.60s", path,
                 lineno, s);
        return VKCU_ERR_INPUT;
    }
    *eq = 0;
    return set_key(m, c, trim(s), trim(eq + 1), lineno, err, errlen);
}

int vkcu_manifest_load(const char *path, vkcu_manifest **out, char *err, size_t errlen)
{
    name_table names = { NULL, 0 };
    vkcu_manifest *m = calloc(1, sizeof(*m));
    int ret = 0, lineno = 0, seen_version = 0;
    int64_t room_cases = 0;
    vkcu_manifest_case *c = NULL;
    *out = NULL;
    if (!m || !(m->path = strdup(path)))
        goto nomem;
    m->dirfd = -1;
    if (!(m->dir = manifest_dir(path)))
        goto nomem;
    if ((ret = load_lines(m, err, errlen)) < 0)
        goto fail;
    /* Resolved once: what --update writes below it stays below it, whatever
     * links change while the cases run. */
    m->dirfd = open(m->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    for (int i = 0; i < m->nb_lines; i++) {
        char buf[4096];
        lineno = i + 1;
        /* A UTF-8 byte order mark (Windows editors) is no part of the first
         * line; --update writes the line back as it was. */
        snprintf(buf, sizeof(buf), "%s", m->lines[i] + (i == 0 && !strncmp(m->lines[i], "\xEF\xBB\xBF", 3) ? 3 : 0));
        char *s = trim(buf);
        if (!*s || (*s == '#' && !(c && vkcu_manifest_is_concealed_mark(s))))
            continue;
        if (!seen_version) {
            if ((ret = check_version_line(s, path, lineno, err, errlen)) < 0)
                goto fail;
            seen_version = 1;
            continue;
        }
        if (*s == '[') {
            char name[256];
            char *nm = case_header_name(s, name, sizeof(name), path, lineno, err, errlen);
            if (!nm) {
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
            if (VKCU_ARRAY_GROW(m->cases, m->nb_cases, room_cases, 16) < 0)
                goto nomem;
            c = &m->cases[m->nb_cases++];
            init_case(c, lineno, i);
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
            if ((ret = add_frame_line(c, i, path, lineno, err, errlen)) < 0)
                goto fail;
            continue;
        }
        if ((ret = key_line(m, c, s, path, lineno, err, errlen)) < 0)
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
