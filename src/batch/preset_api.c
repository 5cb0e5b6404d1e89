/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The public preset listing (include/vkcu/preset.h): the presets a name can
 * load. preset.c parses, finds and applies them.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavutil/error.h>

#include "preset.h"
#include "util/array.h"

typedef struct listed {
    char name[128];
    char path[4096 + 256];
} listed;

static int cmp_listed(const void *a, const void *b)
{
    return strcmp(((const listed *)a)->name, ((const listed *)b)->name);
}

int vkcu_presets_list(vkcu_preset_list_callback cb, void *opaque, char *err, size_t errlen)
{
    char dirs[8][4096];
    int nd = vkcu_preset_dirs(dirs, 8);
    if (nd == 0) {
        if (err && errlen)
            snprintf(err, errlen, "no pipelines folder found (install vkcu, or set VKCU_PIPELINES to a folder of "
                     VKCU_PRESET_EXT " files)");
        return VKCU_ERR_INPUT;
    }
    listed *v = NULL;
    int n = 0, ret = 0;
    int64_t room = 0; /* util/array.h */
    for (int d = 0; d < nd && ret >= 0; d++) {
        DIR *dir = opendir(dirs[d]);
        if (!dir)
            continue;
        struct dirent *e;
        while ((e = readdir(dir))) {
            size_t len = strlen(e->d_name), el = strlen(VKCU_PRESET_EXT);
            if (e->d_name[0] == '.' || len <= el || len - el >= sizeof(v->name) ||
                strcmp(e->d_name + len - el, VKCU_PRESET_EXT))
                continue;
            char name[128];
            snprintf(name, sizeof(name), "%.*s", (int)(len - el), e->d_name);
            int seen = 0;
            for (int i = 0; i < n && !seen; i++)
                seen = !strcmp(v[i].name, name); /* an earlier folder shadows it */
            if (seen)
                continue;
            if (VKCU_ARRAY_GROW(v, n, room, 32) < 0) {
                ret = AVERROR(ENOMEM);
                break;
            }
            snprintf(v[n].name, sizeof(v[n].name), "%s", name);
            snprintf(v[n].path, sizeof(v[n].path), "%.4000s/%.255s", dirs[d], e->d_name);
            n++;
        }
        closedir(dir);
    }
    if (ret >= 0 && n)
        qsort(v, (size_t)n, sizeof(*v), cmp_listed);
    for (int i = 0; i < n && ret == 0; i++)
        ret = cb(opaque, v[i].name, v[i].path);
    free(v);
    return ret ? ret : n;
}
