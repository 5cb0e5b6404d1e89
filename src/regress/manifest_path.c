/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A manifest's variables and paths: ${NAME} and ${NAME:-default}
 * expansion (CONFORMANCE found by walking up from the manifest), paths made
 * relative to the manifest's folder, and the check that a file --update
 * writes stays inside that folder.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <libavutil/avstring.h>

#include "manifest_priv.h"

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
int vkcu_manifest_inside_folder(const vkcu_manifest *m, const char *path, char *why, size_t whylen)
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
