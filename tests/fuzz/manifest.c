/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: the regression manifest parser (vkcu_manifest_load,
 * src/regress/manifest.c, and the ${...} path expansion of manifest_path.c).
 * The loader reads a path, so the input goes into a memory file (memfd)
 * read back through /proc/self/fd.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "regress/manifest.h"

static void check_path(const vkcu_manifest *m, const char *text)
{
    if (!text)
        return;
    char err[1024] = "";
    char *p = vkcu_manifest_path(m, text, err, sizeof(err));
    if (p)
        FUZZ_CHECK(p[0], "'%s' expanded to an empty path", text);
    else
        fuzz_check_message(err, "");
    free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("vkcu-fuzz-manifest", 0);
        FUZZ_CHECK(fd >= 0, "memfd_create");
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    }
    FUZZ_CHECK(ftruncate(fd, 0) == 0 && pwrite(fd, data, size, 0) == (ssize_t)size, "memfd write");

    vkcu_manifest *m = NULL;
    char err[1024] = "";
    int ret = vkcu_manifest_load(path, &m, err, sizeof(err));
    if (ret < 0) {
        FUZZ_CHECK(ret == VKCU_ERR_INPUT, "load returned %d", ret);
        FUZZ_CHECK(!m, "a failed load returned a manifest");
        fuzz_check_message(err, path);
        return 0;
    }
    FUZZ_CHECK(m && m->nb_cases >= 0, "no manifest");
    for (int i = 0; i < m->nb_cases; i++) {
        const vkcu_manifest_case *c = &m->cases[i];
        FUZZ_CHECK(c->name && c->name[0] && c->input, "case %d has no name or input", i);
        FUZZ_CHECK(c->line >= 1 && c->line <= m->nb_lines, "case %s on line %d of %d", c->name, c->line, m->nb_lines);
        FUZZ_CHECK(c->inline_first < 0 || (c->inline_first <= c->inline_last && c->inline_last < m->nb_lines),
                   "case %s: inline lines %d..%d", c->name, c->inline_first, c->inline_last);
        check_path(m, c->input);
        check_path(m, c->hashes);
        check_path(m, c->reference);
    }
    vkcu_manifest_free(&m);
    return 0;
}
