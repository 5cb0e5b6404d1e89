/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The public preset calls beyond loading (include/vkcu/preset.h): the
 * listing of the presets a name can load, and a preset applied to a public
 * job. preset.c parses and finds the files.
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
