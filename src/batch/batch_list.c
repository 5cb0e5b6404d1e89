/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The batch's files: the input folder walked (sorted byte-wise, so that
 * every shard of a Slurm array sees the same order), the include and
 * exclude globs, the outputs mapped, and which files are media, by
 * extension or by their bytes (batch_priv.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libavformat/avformat.h>
#include <libavutil/avstring.h>

#include "util/array.h"
#include "batch_priv.h"

int vkcu_batch_match_any(const char *const *globs, int n, const char *rel, const char *name)
{
    for (int i = 0; i < n; i++) {
        const char *g = globs[i];
        if (strchr(g, '/') ? fnmatch(g, rel, FNM_PATHNAME) == 0 : fnmatch(g, name, 0) == 0)
            return 1;
    }
    return 0;
}

static int list_add(file_list *l, const char *rel)
{
    if (VKCU_ARRAY_GROW(l->v, l->n, l->room, 256) < 0)
        return AVERROR(ENOMEM);
    memset(&l->v[l->n], 0, sizeof(l->v[l->n]));
    if (!(l->v[l->n].rel = strdup(rel)))
        return AVERROR(ENOMEM);
    l->n++;
    return 0;
}


/* Walks dir (in_dir/rel). The output folder is not an input: `skip`
 * lists its inode. An existing report file that would be taken as an
 * input is not listed: its path goes to `report_hit` (the batch then
 * refuses to write the report over it). */
int vkcu_batch_walk(const vkcu_batch_settings *p, const char *rel, const skip_inode *skip, int nb_skip,
                    const skip_inode *report, char *report_hit, file_list *l, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s%s%s", p->in_dir, *rel ? "/" : "", rel);
    DIR *d = opendir(dir);
    if (!d) {
        text_cut(err, errlen, "%s: cannot read the folder: %s", dir, strerror(errno));
        return VKCU_ERR_INPUT;
    }
    int ret = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue; /* hidden, ".", "..", and vkcu's own temporary outputs */
        char sub[PATH_MAX], full[PATH_MAX + 1];
        if ((size_t)snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", e->d_name) >= sizeof(sub))
            continue;
        snprintf(full, sizeof(full), "%s/%s", p->in_dir, sub);
        struct stat st, lst;
        if (stat(full, &st) < 0 || lstat(full, &lst) < 0) {
            /* A dangling link is a file the user asked for: let the job report it. */
            if (!vkcu_batch_match_any(p->exclude, p->nb_exclude, sub, e->d_name) &&
                (!p->nb_include || vkcu_batch_match_any(p->include, p->nb_include, sub, e->d_name)) &&
                (ret = list_add(l, sub)) < 0)
                break;
            continue;
        }
        int skipped = 0;
        for (int i = 0; i < nb_skip; i++)
            if (skip[i].set && skip[i].dev == st.st_dev && skip[i].ino == st.st_ino)
                skipped = 1;
        if (skipped || vkcu_batch_match_any(p->exclude, p->nb_exclude, sub, e->d_name))
            continue;
        if (S_ISDIR(st.st_mode)) {
            /* Links to folders are not followed: they can loop. */
            if (p->recursive && !S_ISLNK(lst.st_mode) &&
                (ret = vkcu_batch_walk(p, sub, skip, nb_skip, report, report_hit, l, err, errlen)) < 0)
                break;
            continue;
        }
        if (p->nb_include && !vkcu_batch_match_any(p->include, p->nb_include, sub, e->d_name))
            continue;
        if (report->set && report->dev == st.st_dev && report->ino == st.st_ino) {
            snprintf(report_hit, PATH_MAX + 1, "%s", full);
            continue;
        }
        if ((ret = list_add(l, sub)) < 0)
            break;
    }
    closedir(d);
    return ret;
}

int vkcu_batch_cmp_rel(const void *a, const void *b)
{
    return strcmp(((const batch_file *)a)->rel, ((const batch_file *)b)->rel);
}

static const file_list *sort_list; /* qsort has no context argument: set under sort_lock */
static pthread_mutex_t sort_lock = PTHREAD_MUTEX_INITIALIZER;

static int cmp_out(const void *a, const void *b)
{
    const batch_file *fa = &sort_list->v[*(const int *)a], *fb = &sort_list->v[*(const int *)b];
    int c = strcmp(fa->out_rel, fb->out_rel);
    return c ? c : (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* Output names, and which files would write the same output (a.mp4 and
 * a.mov both become a.mkv): the first in sorted order keeps it. Done on
 * the whole list so every shard decides the same way. */
int vkcu_batch_map_outputs(file_list *l, const char *ext)
{
    for (int i = 0; i < l->n; i++) {
        const char *rel = l->v[i].rel;
        const char *slash = strrchr(rel, '/');
        const char *dot = strrchr(slash ? slash + 1 : rel, '.');
        size_t stem = dot && dot != (slash ? slash + 1 : rel) ? (size_t)(dot - rel) : strlen(rel);
        size_t size = stem + strlen(ext) + 1;
        if (!(l->v[i].out_rel = malloc(size)))
            return AVERROR(ENOMEM);
        snprintf(l->v[i].out_rel, size, "%.*s%s", (int)stem, rel, ext);
    }
    int *order = malloc((size_t)(l->n ? l->n : 1) * sizeof(int));
    if (!order)
        return AVERROR(ENOMEM);
    for (int i = 0; i < l->n; i++)
        order[i] = i;
    pthread_mutex_lock(&sort_lock);
    sort_list = l;
    qsort(order, (size_t)l->n, sizeof(int), cmp_out);
    sort_list = NULL;
    pthread_mutex_unlock(&sort_lock);
    /* Files that are not media write nothing: notes.txt beside notes.mp4 takes no output from it. */
    for (int i = 0, prev = -1; i < l->n; i++) {
        batch_file *f = &l->v[order[i]];
        if (f->not_media)
            continue;
        if (prev >= 0 && !strcmp(f->out_rel, l->v[prev].out_rel))
            f->same_output = l->v[prev].same_output ? l->v[prev].same_output : l->v[prev].rel;
        prev = order[i];
    }
    free(order);
    return 0;
}

void vkcu_batch_list_free(file_list *l)
{
    for (int i = 0; i < l->n; i++) {
        free(l->v[i].rel);
        free(l->v[i].out_rel);
    }
    free(l->v);
    memset(l, 0, sizeof(*l));
}

/* ---- media files ---- */

/* Extensions of video containers and streams: taken without reading them
 * (a damaged one fails as its job, rather than being skipped). */
static const char *const media_extensions[] = {
    "264", "265", "3g2", "3gp", "asf", "av1", "avi", "bit", "dv", "f4v", "flv", "h264", "h265", "hevc", "ivf", "m2t",
    "m2ts", "m2v", "m4v", "mj2", "mjpeg", "mkv", "mov", "mp4", "mpeg", "mpg", "mts", "mxf", "nut", "obu", "ogv", "qt",
    "rm", "rmvb", "ts", "vob", "webm", "wmv", "y4m", NULL,
};

int vkcu_batch_media_extension(const char *name)
{
    const char *slash = strrchr(name, '/'), *dot = strrchr(slash ? slash + 1 : name, '.');
    for (int i = 0; dot && media_extensions[i]; i++)
        if (!av_strcasecmp(dot + 1, media_extensions[i]))
            return 1;
    return 0;
}

/* Whether a file of another extension is media: FFmpeg recognizes its
 * bytes (their name does not count) as a container that holds a video
 * stream (not only a cover picture). Pipes, devices and unreadable files
 * are not opened. *probed: the container's name, when its bytes are one. */
int vkcu_batch_media_content(const char *path, const char **probed)
{
    enum { PROBE_BYTES = 1 << 16 };
    struct stat st;
    *probed = NULL;
    if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
        return 0;
    uint8_t *buf = av_mallocz(PROBE_BYTES + AVPROBE_PADDING_SIZE);
    FILE *f = buf ? fopen(path, "rb") : NULL;
    size_t n = f ? fread(buf, 1, PROBE_BYTES, f) : 0;
    if (f)
        fclose(f);
    AVProbeData pd = { .filename = "", .buf = buf, .buf_size = (int)n };
    int score = 0;
    const AVInputFormat *fmt = n ? av_probe_input_format3(&pd, 1, &score) : NULL;
    av_free(buf);
    if (!fmt || score <= AVPROBE_SCORE_RETRY)
        return 0;
    *probed = fmt->name;
    /* FFmpeg's still-image demuxers (jpeg_pipe, png_pipe, ...): a picture, not a video */
    size_t len = strlen(fmt->name);
    if (len > 5 && !strcmp(fmt->name + len - 5, "_pipe"))
        return 0;
    AVFormatContext *fc = NULL;
    if (avformat_open_input(&fc, path, fmt, NULL) < 0)
        return 1; /* its bytes say media, yet it does not open: its job says why */
    int video = !fc->nb_streams && (fc->ctx_flags & AVFMTCTX_NOHEADER); /* streams come with packets */
    for (unsigned i = 0; i < fc->nb_streams; i++)
        video |= fc->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_VIDEO &&
                 !(fc->streams[i]->disposition & AV_DISPOSITION_ATTACHED_PIC);
    avformat_close_input(&fc);
    return video;
}

