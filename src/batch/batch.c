/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Batch runner behind vkcu_batch_run (include/vkcu/batch.h): folder
 * listing (sorted byte-wise so that every shard of a Slurm array sees the
 * same order), output mapping, N worker threads (util/jobs.h) each
 * running one job at a time on the caller's context, the JSON-lines
 * report, and the file and progress callbacks. Memory per file is a few paths; everything heavy
 * lives in the jobs, of which at most `jobs` exist at once.
 *
 * Messages name settings and files, never a command-line option: a program
 * that wants its own words for a file's fate gets the reason codes through
 * the file callback (the CLI adds its option names there).
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <malloc.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libavformat/avformat.h>
#include <libavutil/avstring.h>
#include <libavutil/mem.h>

#include <vkcu/batch.h>
#include "util/array.h"
#include "util/jobs.h"
#include "util/json.h"
#include "util/log.h"
#include "util/number.h"
#include "core/context.h"
#include "core/demux.h"
#include "core/outfile.h"
#include "util/xxhash64.h"
#include "gpu/vkdev.h"

static const char *const status_names[] = { "done", "skipped", "failed", "interrupted", "planned" };

typedef struct batch_file {
    char *rel;               /* path relative to in_dir */
    char *out_rel;           /* output path relative to out_dir */
    const char *same_output; /* rel of an earlier file with the same output, or NULL */
    int not_media;           /* 1: not a media file (skipped unless all_files); it claims no output */
    const char *probed;      /* not_media: the container its bytes are (a static name), or NULL: none */
} batch_file;

typedef struct file_list {
    batch_file *v;
    int n;
    int64_t room; /* util/array.h */
} file_list;

/* A worker slot's running file, for the progress reports: frames so far
 * and the frames its job expects (its own progress reports). */
typedef struct slot_progress {
    _Atomic int64_t frames, expected;
    vkcu_progress_callback user_cb; /* the context's own callback, still called */
    void *user_opaque;
} slot_progress;

typedef struct batch_run {
    const vkcu_batch_settings *p;
    vkcu_context *ctx;
    vkcu_batch_result *r;
    batch_file *files; /* this shard's files */
    int nb_files;
    FILE *report;
    char report_tmp[PATH_MAX + 64]; /* the report is written here and renamed when the batch ends */
    int summary_written;
    char shard_text[32];
    pthread_mutex_t lock;
    int next;          /* next file to start */
    int running;
    int processed;     /* done + failed (for the ETA) */
    double start;
    int worst_error;   /* highest-priority error of a file, 0 when none failed */
    slot_progress *slots; /* one per worker */
    int nb_slots;
} batch_run;

void vkcu_default_batch_settings(vkcu_batch_settings *s)
{
    memset(s, 0, sizeof(*s));
    vkcu_default_job(&s->job);
    s->extension = ".mkv";
    s->jobs = 1;
    s->shard_count = 1;
}

/* ---- listing ---- */

/* Message text (long paths are cut, not refused). */
static void text_cut(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void text_cut(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}


static int match_any(const char *const *globs, int n, const char *rel, const char *name)
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

typedef struct skip_inode {
    dev_t dev;
    ino_t ino;
    int set;
} skip_inode;

/* Walks dir (in_dir/rel). The output folder is not an input: `skip`
 * lists its inode. An existing report file that would be taken as an
 * input is not listed: its path goes to `report_hit` (the batch then
 * refuses to write the report over it). */
static int walk(const vkcu_batch_settings *p, const char *rel, const skip_inode *skip, int nb_skip,
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
            if (!match_any(p->exclude, p->nb_exclude, sub, e->d_name) &&
                (!p->nb_include || match_any(p->include, p->nb_include, sub, e->d_name)) &&
                (ret = list_add(l, sub)) < 0)
                break;
            continue;
        }
        int skipped = 0;
        for (int i = 0; i < nb_skip; i++)
            if (skip[i].set && skip[i].dev == st.st_dev && skip[i].ino == st.st_ino)
                skipped = 1;
        if (skipped || match_any(p->exclude, p->nb_exclude, sub, e->d_name))
            continue;
        if (S_ISDIR(st.st_mode)) {
            /* Links to folders are not followed: they can loop. */
            if (p->recursive && !S_ISLNK(lst.st_mode) &&
                (ret = walk(p, sub, skip, nb_skip, report, report_hit, l, err, errlen)) < 0)
                break;
            continue;
        }
        if (p->nb_include && !match_any(p->include, p->nb_include, sub, e->d_name))
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

static int cmp_rel(const void *a, const void *b)
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
static int map_outputs(file_list *l, const char *ext)
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

static void list_free(file_list *l)
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

static int media_extension(const char *name)
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
static int media_content(const char *path, const char **probed)
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

/* ---- report ---- */

/* Report lines are written by jansson (src/util/json.h): file names as bytes,
 * stray bytes as \udcXX (docs/batch.md, "File names in the report"), so
 * that os.fsencode(json.loads(line)["file"]) is the name on disk. */
static void report_line(batch_run *b, json_t *j)
{
    if (vkcu_json_write_line(b->report, j, 0) < 0)
        LOGW("batch: cannot write a report line (out of memory or output error)");
    fflush(b->report);
}

static void report_file(batch_run *b, const batch_file *f, const char *in, const char *out, enum vkcu_batch_status st,
                        const vkcu_job_result *jr, int err, int device, const char *why, const char *reason)
{
    if (!b->report)
        return;
    json_t *j = json_object();
    if (!j)
        return;
    vkcu_json_set_bytes(j, "file", f->rel);
    vkcu_json_set_bytes(j, "input", in);
    vkcu_json_set_bytes(j, "output", out);
    json_object_set_new(j, "status", json_string(status_names[st]));
    json_object_set_new(j, "frames", json_integer(jr ? (json_int_t)jr->frames_out : 0));
    json_object_set_new(j, "corrupt_frames", json_integer(jr ? (json_int_t)jr->frames_corrupt : 0));
    /* what became of the decoded frames (docs/regression.md, real-world streams) */
    json_object_set_new(j, "concealed_frames", json_integer(jr ? (json_int_t)jr->frames_concealed : 0));
    json_object_set_new(j, "dropped_frames", json_integer(jr ? (json_int_t)jr->frames_dropped : 0));
    json_object_set_new(j, "duplicated_frames", json_integer(jr ? (json_int_t)jr->frames_duplicated : 0));
    json_object_set_new(j, "rescaled_frames", json_integer(jr ? (json_int_t)jr->frames_rescaled : 0));
    vkcu_json_set_fixed(j, "seconds", jr ? jr->seconds : 0.0, 3);
    vkcu_json_set_fixed(j, "fps", jr ? jr->fps : 0.0, 2);
    vkcu_json_set_bytes(j, "path", jr && jr->path != VKCU_PATH_NONE ? vkcu_path_name(jr->path) : NULL);
    vkcu_json_set_bytes(j, "encoder", jr && jr->encoder[0] ? jr->encoder : NULL);
    json_object_set_new(j, "device", device >= 0 ? json_integer(device) : json_null());
    json_object_set_new(j, "exit_code", json_integer(err ? vkcu_exit_code(err) : 0));
    vkcu_json_set_bytes(j, "error", why);
    vkcu_json_set_bytes(j, "reason", reason);
    json_object_set_new(j, "shard", json_string(b->shard_text));
    report_line(b, j);
}

static void report_summary(batch_run *b, int ret)
{
    const vkcu_batch_result *r = b->r;
    if (!b->report)
        return;
    json_t *j = json_object();
    if (!j)
        return;
    json_object_set_new(j, "summary", json_true());
    vkcu_json_set_bytes(j, "in_dir", b->p->in_dir);
    vkcu_json_set_bytes(j, "out_dir", b->p->out_dir);
    vkcu_json_set_bytes(j, "pipeline", b->p->pipeline);
    json_object_set_new(j, "shard", json_string(b->shard_text));
    json_object_set_new(j, "files", json_integer(r->total));
    json_object_set_new(j, "done", json_integer(r->done));
    json_object_set_new(j, "skipped", json_integer(r->skipped));
    json_object_set_new(j, "failed", json_integer(r->failed));
    json_object_set_new(j, "interrupted", json_integer(r->interrupted));
    json_object_set_new(j, "not_started", json_integer(r->not_started));
    json_object_set_new(j, "frames", json_integer((json_int_t)r->frames));
    vkcu_json_set_fixed(j, "seconds", r->seconds, 3);
    vkcu_json_set_fixed(j, "fps", r->seconds > 0 ? r->frames / r->seconds : 0.0, 2);
    json_object_set_new(j, "exit_code", json_integer(vkcu_exit_code(ret)));
    report_line(b, j);
    b->summary_written = 1;
}

/* ---- progress ---- */

/* Under b->lock. */
static void progress_report(batch_run *b, int final)
{
    const vkcu_batch_result *r = b->r;
    vkcu_batch_progress info;
    memset(&info, 0, sizeof(info));
    double el = vkcu_now() - b->start;
    info.total = r->total;
    info.finished = r->done + r->skipped + r->failed + r->interrupted;
    info.running = b->running;
    info.failed = r->failed;
    info.frames = r->frames;
    /* The running files' frames count as they go: a long file would
     * otherwise show no progress, and a falling rate, until it ends. */
    int64_t left = 0, expected = 0;
    int known = 0, unknown = 0;
    for (int i = 0; i < b->nb_slots; i++) {
        int64_t f = atomic_load(&b->slots[i].frames), e = atomic_load(&b->slots[i].expected);
        info.frames_running += f;
        if (e > 0) {
            left += e > f ? e - f : 0;
            expected += e;
            known++;
        } else if (f > 0) {
            unknown++;
        }
    }
    info.elapsed = el;
    info.fps = el > 0 ? (r->frames + info.frames_running) / el : 0.0;
    /* The frames still to come at the rate so far (all streams together):
     * the running files' remainders, and files to start as large as the
     * average of those done and running. */
    int waiting = info.total - info.finished - info.running;
    double per_file = r->done + known > 0 ? (double)(r->frames + expected) / (r->done + known) : -1;
    if (final)
        info.eta = 0.0;
    else if (per_file > 0 && info.fps > 0)
        info.eta = (left + (waiting + unknown) * per_file) / info.fps;
    else
        info.eta = b->processed > 0 && el > 0 ? el / b->processed * (info.total - info.finished) : -1.0;
    info.final = final;
    b->p->progress_callback(b->p->progress_opaque, &info);
}

/* ---- one file ---- */

/* Which failure decides the exit code: problems of the whole run first,
 * then a bad file. Lower is more important. */
static int error_rank(int err)
{
    static const int order[] = { VKCU_ERR_INTERRUPT, VKCU_ERR_DEVICE, VKCU_ERR_OUTPUT, VKCU_ERR_USAGE, VKCU_ERR_INPUT };
    for (int i = 0; i < (int)(sizeof(order) / sizeof(order[0])); i++)
        if (order[i] == err)
            return i;
    return 5;
}

static int mkdirs_for(const char *path, char *err, size_t errlen)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *s = buf + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        if (mkdir(buf, 0777) < 0 && errno != EEXIST) {
            text_cut(err, errlen, "%s: cannot create the output folder %s: %s", path, buf, strerror(errno));
            return VKCU_ERR_OUTPUT;
        }
        *s = '/';
    }
    return 0;
}

/* Error text of a file (long paths are cut, not refused). */
static void job_error(vkcu_job_result *jr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void job_error(vkcu_job_result *jr, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(jr->error, sizeof(jr->error), fmt, ap);
    va_end(ap);
}

/* ---- what an output was made with ---- */

/* Everything that decides an output's bytes, one "key=value" a line: the
 * input (size, modification time to the nanosecond and inode, as make and
 * rsync tell a rewritten file: a file rewritten with the same size within
 * one second, or replaced by another, is a changed input), the chain, the
 * encoder and its options, the trim, the hash settings. Not the backend or
 * device: the GPU and CPU paths are meant to give the same frames, and a
 * resumed run on other hardware should not redo finished work. */
static void settings_text(const vkcu_job_params *p, const char *in, char *buf, size_t len)
{
    struct stat st;
    long long size = -1, mtime = -1, mtime_nsec = -1, inode = -1;
    if (stat(in, &st) == 0) {
        size = (long long)st.st_size;
        mtime = (long long)st.st_mtim.tv_sec;
        mtime_nsec = (long long)st.st_mtim.tv_nsec;
        inode = (long long)st.st_ino;
    }
    snprintf(buf, len,
             "input-size=%lld\ninput-mtime=%lld\ninput-mtime-nsec=%lld\ninput-inode=%lld\nsink=%s\nchain=%s\n"
             "encoder=%s\ncrf=%d\nbitrate=%lld\npreset=%s\n"
             "gop=%d\nencoder-opt=%s\nstart=%.6f/%lld\nduration=%.6f/%lld\nframes=%d\nhash=%d/%d\n",
             size, mtime, mtime_nsec, inode, p->sink == VKCU_SINK_HASH ? "hash" : "encode", p->chain ? p->chain : "",
             p->encoder && strcmp(p->encoder, "auto") ? p->encoder : "", p->crf, (long long)p->bitrate,
             p->preset ? p->preset : "", p->gop, p->encoder_opts ? p->encoder_opts : "", p->start_time,
             (long long)p->start_frame, p->duration, (long long)p->frame_count, p->max_frames,
             p->sink == VKCU_SINK_HASH ? (int)p->hash_algo : -1, p->sink == VKCU_SINK_HASH ? (int)p->hash_format : -1);
    /* Audio settings only when set: records of earlier runs (which had none) still match the default. */
    size_t n = strlen(buf);
    if (p->sink == VKCU_SINK_ENCODE && (p->no_audio || (p->audio_encoder && strcmp(p->audio_encoder, "auto"))))
        snprintf(buf + n, len - n, "audio=%s\n", p->no_audio ? "none" : p->audio_encoder);
    /* Streams picked, only when not every one: older records still match. */
    n = strlen(buf);
    if (p->sink == VKCU_SINK_ENCODE && (p->audio_streams || p->subtitle_streams) && n < len)
        snprintf(buf + n, len - n, "streams=audio:%d/subtitle:%d\n", p->audio_streams, p->subtitle_streams);
    /* Only when set, so that records made before the key existed still match. */
    size_t used = strlen(buf);
    if (p->gpu_encoder && *p->gpu_encoder && used < len)
        snprintf(buf + used, len - used, "gpu-encoder=%s\n", p->gpu_encoder);
}

/* The record beside an output: ".vkcu-HASH.settings" (short, whatever the
 * output's name), holding the output's name, size and time, then the
 * settings. */
static void record_name(const char *out, char *name, size_t len)
{
    const char *slash = strrchr(out, '/');
    const char *base = slash ? slash + 1 : out;
    vkcu_xxh64_state h;
    vkcu_xxh64_init(&h, 0);
    vkcu_xxh64_update(&h, (const uint8_t *)base, strlen(base));
    snprintf(name, len, "%.*s.vkcu-%016llx.settings", slash ? (int)(slash - out + 1) : 0, out,
             (unsigned long long)vkcu_xxh64_digest(&h));
}

/* made: the file whose size and time it records (the finished temporary,
 * which the move into place keeps as they are), else out itself. */
static void record_head(const char *out, const char *made, char *buf, size_t len)
{
    struct stat st;
    const char *slash = strrchr(out, '/');
    if (stat(made ? made : out, &st) < 0)
        memset(&st, 0, sizeof(st));
    snprintf(buf, len, "vkcu settings 1\noutput=%s\noutput-size=%lld\noutput-mtime=%lld\n", slash ? slash + 1 : out,
             (long long)st.st_size, (long long)st.st_mtime);
}

/* Written and synced before the output is moved into place (made: its
 * finished temporary), so that a crash between the two leaves a record
 * without its output (redone by --resume), never an output without its
 * record (refused by --resume). */
/* A failure of the record is the output's (the file the batch processes):
 * named so, with the record's own name after it, without the record's name
 * that starts why. */
static void record_error(const char *out, const char *name, const char *why, char *err, size_t errlen)
{
    size_t n = strlen(name);
    const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
    if (!strncmp(why, name, n) && !strncmp(why + n, ": ", 2))
        why += n + 2;
    text_cut(err, errlen, "%s: cannot write the record of its settings beside it (%s, read by a resumed batch): %s",
             out, base, why);
}

static int write_record(const char *out, const char *made, const char *settings, char *err, size_t errlen)
{
    char name[PATH_MAX + 64], tmp[PATH_MAX + 64], head[PATH_MAX + 128], why[1024];
    record_name(out, name, sizeof(name));
    record_head(out, made, head, sizeof(head));
    int ret = vkcu_outfile_begin(name, 1, NULL, tmp, sizeof(tmp), why, sizeof(why));
    if (ret < 0) {
        record_error(out, name, why, err, errlen);
        return ret;
    }
    FILE *f = fopen(tmp, "w");
    int ok = f && fputs(head, f) >= 0 && fputs(settings, f) >= 0;
    if (f && fclose(f) != 0)
        ok = 0;
    if (!ok) {
        record_error(out, name, strerror(errno), err, errlen);
        vkcu_outfile_abort(tmp);
        return VKCU_ERR_OUTPUT;
    }
    if ((ret = vkcu_outfile_commit(tmp, name, why, sizeof(why))) < 0)
        record_error(out, name, why, err, errlen);
    return ret;
}

/* Keys that records of vkcu before issue 33 lack. Such a record is read
 * on what it holds (the input's size and whole-second time, as before), so
 * that an upgrade does not redo or refuse every finished output; the next
 * record made for the file has them. */
static const char *const keys_added_later[] = { "input-mtime-nsec", "input-inode", NULL };

/* `settings` without the lines of keys_added_later that the record `text` lacks. */
static void settings_as_recorded(const char *text, const char *settings, char *out, size_t len)
{
    size_t n = 0;
    for (const char *line = settings; *line && n + 1 < len;) {
        const char *end = strchr(line, '\n');
        size_t ll = end ? (size_t)(end - line + 1) : strlen(line);
        int drop = 0;
        for (int i = 0; keys_added_later[i]; i++) {
            size_t kl = strlen(keys_added_later[i]);
            char key[64];
            snprintf(key, sizeof(key), "\n%s=", keys_added_later[i]);
            drop |= !strncmp(line, keys_added_later[i], kl) && line[kl] == '=' && !strstr(text, key);
        }
        if (!drop && n + ll < len) {
            memcpy(out + n, line, ll);
            n += ll;
        }
        line += ll;
    }
    out[n] = 0;
}

/* 1 when `out` was made with `settings` (and is unchanged since), else 0
 * with what differs in `why`. */
static int record_matches(const char *out, const char *settings_now, char *why, size_t whylen)
{
    char name[PATH_MAX + 64], head[PATH_MAX + 128], text[8192], settings[8192];
    record_name(out, name, sizeof(name));
    FILE *f = fopen(name, "r");
    if (!f) {
        snprintf(why, whylen, "no record of the settings it was made with (an older vkcu, or not by vkcu batch)");
        return 0;
    }
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = 0;
    settings_as_recorded(text, settings_now, settings, sizeof(settings));
    record_head(out, NULL, head, sizeof(head));
    size_t hl = strlen(head);
    if (strncmp(text, head, hl)) {
        text_cut(why, whylen, "it changed after vkcu made it, or its record %s belongs to another file", name);
        return 0;
    }
    if (!strcmp(text + hl, settings))
        return 1;
    /* Name the first setting that differs. */
    const char *a = text + hl, *b = settings;
    while (*a && *b) {
        const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
        if (!ea || !eb)
            break;
        if (ea - a != eb - b || strncmp(a, b, (size_t)(ea - a))) {
            const char *eq = memchr(b, '=', (size_t)(eb - b));
            int kl = eq ? (int)(eq - b) : (int)(eb - b);
            const char *wa = memchr(a, '=', (size_t)(ea - a));
            snprintf(why, whylen, "it was made with other settings (%.*s was '%.*s', now '%.*s')", kl, b,
                     wa ? (int)(ea - wa - 1) : 0, wa ? wa + 1 : "", eq ? (int)(eb - eq - 1) : 0, eq ? eq + 1 : "");
            return 0;
        }
        a = ea + 1;
        b = eb + 1;
    }
    snprintf(why, whylen, "it was made with other settings");
    return 0;
}

typedef struct publish_record {
    const char *settings;
    int written;
} publish_record;

/* The job's hook just before its output is moved into place. */
static int publish_hook(void *opaque, const char *tmp, const char *path, char *err, size_t errlen)
{
    publish_record *pr = opaque;
    int ret = write_record(path, tmp, pr->settings, err, errlen);
    if (ret < 0)
        return ret;
    pr->written = 1;
    /* For tests only (docs/batch.md, "Resume"): a crash at the worst
     * moment, with the record on disk and the output not yet in place. */
    if (getenv("VKCU_TEST_KILL_BEFORE_PUBLISH"))
        raise(SIGKILL);
    return 0;
}

/* Under b->lock, so that the batch's messages and its callbacks never overlap. */
static void log_line(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void log_line(int level, const char *fmt, ...)
{
    if (level > vkcu_log_level())
        return;
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    vkcu_log(level, "%s", msg);
}

/* The file callback, and the library's own line for a failure that the
 * callback did not report. Under b->lock. */
static void file_outcome(batch_run *b, const vkcu_batch_file *bf)
{
    const vkcu_batch_settings *p = b->p;
    int reported = p->file_callback ? p->file_callback(p->file_opaque, bf) : 0;
    if (!p->dry_run && !reported && (bf->status == VKCU_BATCH_FAILED || bf->status == VKCU_BATCH_INTERRUPTED))
        log_line(VKCU_LOG_ERROR, "%s", bf->message);
}

/* A job's progress report, on its thread: the slot's counts for the
 * batch's own reports. */
static void slot_progress_report(void *opaque, const vkcu_progress_info *info)
{
    slot_progress *sp = opaque;
    atomic_store(&sp->frames, info->frames);
    atomic_store(&sp->expected, info->expected);
    if (sp->user_cb)
        sp->user_cb(sp->user_opaque, info);
}

/* "not media", or "not media: srt, no video stream", "not media: png_pipe, a still image". */
static void not_media_note(const batch_file *f, char *buf, size_t size)
{
    size_t len = f->probed ? strlen(f->probed) : 0;
    if (len > 5 && !strcmp(f->probed + len - 5, "_pipe"))
        snprintf(buf, size, "not media: %s, a still image", f->probed);
    else if (f->probed)
        snprintf(buf, size, "not media: %s, no video stream", f->probed);
    else
        snprintf(buf, size, "not media");
}

static void process_file(batch_run *b, int k, int slot)
{
    const vkcu_batch_settings *p = b->p;
    const batch_file *f = &b->files[k];
    char in[PATH_MAX + 1], out[PATH_MAX + 1];
    snprintf(in, sizeof(in), "%s/%s", p->in_dir, f->rel);
    snprintf(out, sizeof(out), "%s/%s", p->out_dir, f->out_rel);
    vkcu_job_params jp;
    vkcu_context_describe(b->ctx, &p->job, &jp);
    int device = p->nb_devices ? p->devices[slot % p->nb_devices] : jp.device;
    vkcu_job_result jr;
    memset(&jr, 0, sizeof(jr));
    enum vkcu_batch_status st;
    enum vkcu_batch_reason reason = VKCU_BATCH_REASON_JOB;
    const char *detail = "";
    int ret = 0, claim = -1, ran = 0;
    long holder = 0;
    struct stat sb;
    char settings[8192], why[1024] = "", note[1200] = "";
    jp.input = in;
    jp.output = out;
    jp.device = device;
    jp.overwrite = p->overwrite;
    jp.hash_out_name = out;
    /* The job's progress feeds the batch's (and still the context's callback, if any). */
    slot_progress *sp = &b->slots[slot];
    sp->user_cb = jp.progress ? jp.progress_cb : NULL;
    sp->user_opaque = jp.progress_opaque;
    jp.progress = 1;
    jp.progress_cb = slot_progress_report;
    jp.progress_opaque = sp;
    settings_text(&jp, in, settings, sizeof(settings));

    if (f->not_media) {
        not_media_note(f, note, sizeof(note));
        reason = VKCU_BATCH_REASON_NOT_MEDIA;
        st = VKCU_BATCH_SKIPPED;
        goto record;
    } else if (f->same_output) {
        job_error(&jr, "%s: its output %s is also the output of %s (rename one of them, or leave one out "
                  "with an exclude pattern)", in, out, f->same_output);
        reason = VKCU_BATCH_REASON_SAME_OUTPUT;
        detail = f->same_output;
        ret = VKCU_ERR_USAGE;
    } else if ((ret = mkdirs_for(out, jr.error, sizeof(jr.error))) < 0) {
        /* reported below */
    } else if ((ret = (vkcu_outfile_clean_beside(out),
                       vkcu_outfile_claim(out, &claim, &holder, jr.error, sizeof(jr.error)))) == 0) {
        /* Another vkcu (a second batch over this folder, a Slurm task) works on it. */
        if (holder > 0)
            snprintf(note, sizeof(note), "another vkcu process (pid %ld) is working on it", holder);
        else
            snprintf(note, sizeof(note), "another vkcu process is working on it");
        reason = VKCU_BATCH_REASON_BUSY;
        st = VKCU_BATCH_SKIPPED;
        goto record;
    } else if (ret < 0) {
        /* reported below */
    } else if (stat(out, &sb) == 0 && p->resume && record_matches(out, settings, why, sizeof(why))) {
        snprintf(note, sizeof(note), "done earlier with the same settings");
        reason = VKCU_BATCH_REASON_UP_TO_DATE;
        st = VKCU_BATCH_SKIPPED;
        goto record;
    } else if (stat(out, &sb) == 0 && p->resume && !p->overwrite) {
        job_error(&jr, "%s: exists, but %s; it is redone only when overwriting is allowed", out, why);
        reason = VKCU_BATCH_REASON_EXISTS_CHANGED;
        detail = why;
        ret = VKCU_ERR_OUTPUT;
    } else if (stat(out, &sb) == 0 && !p->overwrite) {
        job_error(&jr, "%s: already exists (resuming skips finished files; overwriting replaces them)", out);
        reason = VKCU_BATCH_REASON_EXISTS;
        ret = VKCU_ERR_OUTPUT;
    } else {
        if (why[0])
            log_line(VKCU_LOG_INFO, "batch: %s: redone: %s", out, why);
        ran = 1;
        publish_record pr = { settings, 0 };
        jp.before_publish = publish_hook;
        jp.publish_opaque = &pr;
        ret = jp.sink == VKCU_SINK_HASH ? vkcu_job_run_to_hash_file(&jp, out, &jr) : vkcu_job_run(&jp, &jr);
        if (ret < 0 && !jr.error[0]) {
            char buf[128];
            job_error(&jr, "%s: %s", in, vkcu_err_str(ret, buf, sizeof(buf)));
        }
        if (ret < 0 && pr.written) {
            /* the output did not take its place: the record describes nothing */
            char name[PATH_MAX + 64];
            record_name(out, name, sizeof(name));
            unlink(name);
        }
    }
    st = ret >= 0 ? VKCU_BATCH_DONE : ret == VKCU_ERR_INTERRUPT ? VKCU_BATCH_INTERRUPTED : VKCU_BATCH_FAILED;
    if (st == VKCU_BATCH_DONE)
        reason = VKCU_BATCH_REASON_NONE;
record:
    vkcu_outfile_release(out, claim);
    pthread_mutex_lock(&b->lock);
    vkcu_batch_result *r = b->r;
    int busy = reason == VKCU_BATCH_REASON_BUSY;
    int on_gpu = jr.path != VKCU_PATH_NONE && jr.path != VKCU_PATH_CPU;
    atomic_store(&sp->frames, 0); /* counted below when written, else gone */
    atomic_store(&sp->expected, 0);
    if (st == VKCU_BATCH_DONE) {
        r->done++;
        r->frames += jr.frames_out;
        b->processed++;
        log_line(VKCU_LOG_VERBOSE, "batch: %s -> %s: %lld frames, %.1f fps, path %s", f->rel, out,
                 (long long)jr.frames_out, jr.fps, vkcu_path_name(jr.path));
    } else if (st == VKCU_BATCH_SKIPPED) {
        r->skipped++;
        detail = note;
        if (reason == VKCU_BATCH_REASON_NOT_MEDIA)
            log_line(VKCU_LOG_INFO, "batch: %s: skipped (%s)", f->rel, note);
        else
            log_line(busy ? VKCU_LOG_INFO : VKCU_LOG_VERBOSE, "batch: %s: skipped: %s", f->rel, note);
    } else {
        if (st == VKCU_BATCH_INTERRUPTED)
            r->interrupted++;
        else
            r->failed++;
        b->processed++;
    }
    vkcu_batch_file bf = { .index = k, .file = f->rel, .input = in, .output = out, .status = st,
                           .reason = reason, .detail = detail, .error = ret < 0 ? ret : 0,
                           .message = ret < 0 ? jr.error : "", .job = ran ? &jr : NULL,
                           .device = on_gpu ? device : -1 };
    file_outcome(b, &bf);
    if (ret < 0 && (!b->worst_error || error_rank(ret) < error_rank(b->worst_error)))
        b->worst_error = ret;
    report_file(b, f, in,
                st == VKCU_BATCH_DONE || (st == VKCU_BATCH_SKIPPED && !busy && reason != VKCU_BATCH_REASON_NOT_MEDIA)
                    ? out : NULL, st,
                st == VKCU_BATCH_SKIPPED ? NULL : &jr, ret < 0 ? ret : 0, on_gpu ? device : -1,
                ret < 0 ? jr.error : NULL, st == VKCU_BATCH_SKIPPED ? note : NULL);
    pthread_mutex_unlock(&b->lock);
}

/* The pool's work (util/jobs.h): the next file on worker slot `slot`, until
 * the list is done or a stop is asked for. */
static int batch_work(void *opaque, int slot)
{
    batch_run *b = opaque;
    pthread_mutex_lock(&b->lock);
    if (vkcu_job_stop_requested() || b->next >= b->nb_files) {
        pthread_mutex_unlock(&b->lock);
        return 0;
    }
    int k = b->next++;
    b->running++;
    pthread_mutex_unlock(&b->lock);
    process_file(b, k, slot);
    /* A job frees its decoder and buffers at the end; hand the freed
     * pages back so that host RSS stays flat over thousands of files
     * instead of creeping with per-thread heap fragmentation. */
    malloc_trim(0);
    pthread_mutex_lock(&b->lock);
    b->running--;
    pthread_mutex_unlock(&b->lock);
    return 1;
}

/* ---- the batch ---- */

/* Each file's fate without touching anything, in the order of the list. */
static void dry_run(batch_run *b)
{
    const vkcu_batch_settings *p = b->p;
    vkcu_batch_result *r = b->r;
    vkcu_job_params job;
    vkcu_context_describe(b->ctx, &p->job, &job);
    job.overwrite = p->overwrite;
    for (int k = 0; k < b->nb_files; k++) {
        const batch_file *f = &b->files[k];
        char out[PATH_MAX + 1], in[PATH_MAX + 1], settings[8192], differs[1024] = "";
        vkcu_job_result jr; /* only its error line */
        struct stat sb;
        snprintf(out, sizeof(out), "%s/%s", p->out_dir, f->out_rel);
        snprintf(in, sizeof(in), "%s/%s", p->in_dir, f->rel);
        jr.error[0] = 0;
        job.input = in;
        job.output = out;
        vkcu_batch_file bf = { .index = k, .file = f->rel, .input = in, .output = out, .status = VKCU_BATCH_PLANNED,
                               .reason = VKCU_BATCH_REASON_NONE, .detail = "", .message = jr.error, .device = -1 };
        int exists = stat(out, &sb) == 0;
        char note[128];
        if (f->not_media) {
            not_media_note(f, note, sizeof(note));
            bf.status = VKCU_BATCH_SKIPPED;
            bf.reason = VKCU_BATCH_REASON_NOT_MEDIA;
            bf.detail = note;
        } else if (f->same_output) {
            bf.status = VKCU_BATCH_FAILED;
            bf.reason = VKCU_BATCH_REASON_SAME_OUTPUT;
            bf.detail = f->same_output;
            bf.error = VKCU_ERR_USAGE;
            job_error(&jr, "%s: its output %s is also the output of %s", in, out, f->same_output);
        } else if (exists && p->resume &&
                   (settings_text(&job, in, settings, sizeof(settings)),
                    record_matches(out, settings, differs, sizeof(differs)))) {
            bf.status = VKCU_BATCH_SKIPPED;
            bf.reason = VKCU_BATCH_REASON_UP_TO_DATE;
            bf.detail = "done earlier with the same settings";
        } else if (exists && p->resume && !p->overwrite) {
            bf.status = VKCU_BATCH_FAILED;
            bf.reason = VKCU_BATCH_REASON_EXISTS_CHANGED;
            bf.detail = differs;
            bf.error = VKCU_ERR_OUTPUT;
            job_error(&jr, "%s: exists, but %s", out, differs);
        } else if (exists && !p->overwrite) {
            bf.status = VKCU_BATCH_FAILED;
            bf.reason = VKCU_BATCH_REASON_EXISTS;
            bf.error = VKCU_ERR_OUTPUT;
            job_error(&jr, "%s: already exists", out);
        } else if ((bf.error = vkcu_demux_check(in, jr.error, sizeof(jr.error))) < 0) {
            /* the job's first checks: an empty file, a container FFmpeg cannot open */
            bf.status = VKCU_BATCH_FAILED;
            bf.reason = VKCU_BATCH_REASON_JOB;
        }
        r->planned += bf.status == VKCU_BATCH_PLANNED;
        r->skipped += bf.status == VKCU_BATCH_SKIPPED;
        r->failed += bf.status == VKCU_BATCH_FAILED;
        /* The plan's failures decide its return, as the real run's would. */
        if (bf.error < 0 && (!b->worst_error || error_rank(bf.error) < error_rank(b->worst_error)))
            b->worst_error = bf.error;
        pthread_mutex_lock(&b->lock);
        file_outcome(b, &bf);
        pthread_mutex_unlock(&b->lock);
    }
}

/* Refuses an integer setting outside [lo, hi], naming it. */
#define RANGE(what, value, lo, hi) VKCU_RANGE("batch: " what, value, lo, hi)

static int check_globs(const char *what, const char *const *globs, int n, char *err, size_t errlen)
{
    if (n < 0)
        return vkcu_invalid(err, errlen, "batch: %s %d is negative", what, n);
    for (int i = 0; i < n; i++)
        if (!globs || !globs[i])
            return vkcu_invalid(err, errlen, "batch: %s %d of %d is missing (NULL)", what, i + 1, n);
    return 0;
}

static int check_batch(const vkcu_batch_settings *p, char *err, size_t errlen)
{
    int ret = VKCU_RESERVED_CHECK(vkcu_batch_settings, p, err, errlen);
    if (ret < 0)
        return ret;
    if (!p->in_dir || !*p->in_dir)
        return vkcu_invalid(err, errlen, "batch: no input folder given");
    if (!p->out_dir || !*p->out_dir)
        return vkcu_invalid(err, errlen, "batch: no output folder given");
    const char *e = p->extension;
    if (!e || e[0] != '.' || !e[1] || strlen(e) > 17 || strchr(e, '/'))
        return vkcu_invalid(err, errlen, "batch: the output extension '%s' is not a dot and 1 to 16 characters "
                            "without '/' (such as \".mkv\")", e ? e : "(none)");
    RANGE("job count", p->jobs, 1, VKCU_BATCH_MAX_JOBS);
    RANGE("recursive flag", p->recursive, 0, 1);
    RANGE("resume flag", p->resume, 0, 1);
    RANGE("overwrite flag", p->overwrite, 0, 1);
    RANGE("dry-run flag", p->dry_run, 0, 1);
    RANGE("all-files flag", p->all_files, 0, 1);
    RANGE("shard count", p->shard_count, 1, VKCU_BATCH_MAX_SHARDS);
    RANGE("shard index", p->shard_index, 0, p->shard_count - 1);
    ret = check_globs("include pattern count", p->include, p->nb_include, err, errlen);
    if (ret >= 0)
        ret = check_globs("exclude pattern count", p->exclude, p->nb_exclude, err, errlen);
    if (ret < 0)
        return ret;
    RANGE("device count", p->nb_devices, 0, VKCU_BATCH_MAX_DEVICES);
    for (int i = 0; i < p->nb_devices; i++) {
        RANGE("device ordinal", p->devices[i], 0, 63);
        for (int j = 0; j < i; j++)
            if (p->devices[j] == p->devices[i])
                return vkcu_invalid(err, errlen, "batch: device %d is listed twice", p->devices[i]);
    }
    if (p->job.sink != VKCU_SINK_ENCODE && p->job.sink != VKCU_SINK_HASH)
        return vkcu_invalid(err, errlen, "batch: the job's sink must be the encode or the hash sink (a batch writes "
                            "one output per file)");
    /* The per-file fields get stand-ins: the rest of the job is checked as vkcu_run would. */
    vkcu_job job = p->job;
    char outputs[PATH_MAX + 32];
    snprintf(outputs, sizeof(outputs), "%s/*%s", p->out_dir, p->extension); /* the container and encoder of every file */
    job.input = p->in_dir;
    job.output = outputs;
    job.hash_out = stdout;
    job.overwrite = p->overwrite;
    return vkcu_check_job(&job, err, errlen);
}

/* Whether `path` is a report of vkcu batch: --resume rewrites its own
 * report without overwrite, never another file. */
static int is_batch_report(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[8192];
    int yes = 0;
    if (fgets(line, sizeof(line), f)) {
        json_t *j = json_loads(line, JSON_DECODE_ANY, NULL);
        yes = json_is_object(j) && json_is_string(json_object_get(j, "shard")) &&
              (json_object_get(j, "file") || json_object_get(j, "summary"));
        json_decref(j);
    }
    fclose(f);
    return yes;
}

/* The report's folder and name, resolved (the file need not exist). */
static int resolve_beside(const char *path, char *out, size_t len)
{
    char dir[PATH_MAX], real[PATH_MAX];
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    snprintf(dir, sizeof(dir), "%.*s", slash ? (slash == path ? 1 : (int)(slash - path)) : 1, slash ? path : ".");
    if (!realpath(dir, real))
        return -1;
    return (size_t)snprintf(out, len, "%s%s%s", real, strcmp(real, "/") ? "/" : "", base) < len ? 0 : -1;
}

/* rel (under root) when the resolved `path` lies below the folder `root`,
 * else NULL. Folders are compared by device and inode, not by name: a bind
 * mount of root (or a link the resolved path went through) is root. */
static const char *below(const char *path, const char *root)
{
    struct stat rs, st;
    if (stat(root, &rs) < 0)
        return NULL;
    char prefix[PATH_MAX];
    size_t n = strlen(path);
    if (n >= sizeof(prefix))
        return NULL;
    memcpy(prefix, path, n + 1);
    /* Each folder above path, nearest first: "/a/b/c" tries /a/b, /a, then /. */
    for (char *slash = strrchr(prefix, '/'); slash; slash = strrchr(prefix, '/')) {
        size_t at = (size_t)(slash - prefix);
        *slash = 0;
        if (stat(at ? prefix : "/", &st) == 0 && st.st_dev == rs.st_dev && st.st_ino == rs.st_ino)
            return path + at + 1;
    }
    return NULL;
}

/* The report, under a temporary name until the batch ends. Refused: an
 * existing file without overwrite (with resume, an earlier report of vkcu
 * batch is rewritten), an input, and a new file inside the input folder
 * that the next run would take for an input. */
static int report_open(batch_run *b, const char *report_hit, char *err, size_t errlen)
{
    const vkcu_batch_settings *p = b->p;
    char why[1024], where[PATH_MAX];
    struct stat st;
    /* Every file the batch reads that the report could name: the preset,
     * and the input the listing found under the report's name (no hole
     * in the list: a NULL ends it). */
    const char *inputs[3] = { NULL };
    int nb_inputs = 0;
    if (p->job.pipeline_file)
        inputs[nb_inputs++] = p->job.pipeline_file;
    if (report_hit[0])
        inputs[nb_inputs++] = report_hit;
    int exists = strcmp(p->report_path, "-") && stat(p->report_path, &st) == 0;
    int overwrite = p->overwrite || (p->resume && exists && S_ISREG(st.st_mode) && is_batch_report(p->report_path));
    if (vkcu_outfile_check(p->report_path, overwrite, inputs, why, sizeof(why)) < 0) {
        text_cut(err, errlen, "cannot write the report: %s", why);
        return VKCU_ERR_OUTPUT;
    }
    const char *rel;
    if (strcmp(p->report_path, "-") && resolve_beside(p->report_path, where, sizeof(where)) == 0 &&
        (rel = below(where, p->in_dir))) {
        /* Taken by the next run as walk() would take it: not hidden, in reach, matching the patterns. */
        const char *name = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
        int hidden = rel[0] == '.' || strstr(rel, "/.");
        if (!hidden && (p->recursive || !strchr(rel, '/')) && !match_any(p->exclude, p->nb_exclude, rel, name) &&
            (!p->nb_include || match_any(p->include, p->nb_include, rel, name))) {
            text_cut(err, errlen, "cannot write the report: %s: is inside the input folder %s, where the next run "
                     "would take it for an input (write it outside, or exclude it)", p->report_path, p->in_dir);
            return VKCU_ERR_OUTPUT;
        }
    }
    if (vkcu_outfile_begin(p->report_path, overwrite, inputs, b->report_tmp, sizeof(b->report_tmp), why,
                           sizeof(why)) < 0) {
        text_cut(err, errlen, "cannot write the report: %s", why);
        return VKCU_ERR_OUTPUT;
    }
    if (!(b->report = vkcu_outfile_fopen(b->report_tmp, "w"))) {
        text_cut(err, errlen, "cannot write the report: %s: %s", p->report_path, strerror(errno));
        vkcu_outfile_abort(b->report_tmp);
        return VKCU_ERR_OUTPUT;
    }
    return 0;
}

/* Before the output folder is made: a report that cannot be written (its
 * folder missing or read-only, the file there without overwrite) stops the
 * batch with nothing made. A report in the output folder about to be made
 * waits for report_open, which checks everything once the inputs are known. */
static int report_writable_first(const vkcu_batch_settings *p, char *err, size_t errlen)
{
    char why[1024];
    if (!p->report_path || !strcmp(p->report_path, "-"))
        return 0;
    const char *slash = strrchr(p->report_path, '/');
    size_t dl = slash ? (size_t)(slash - p->report_path) : 0, ol = strlen(p->out_dir);
    while (ol > 1 && p->out_dir[ol - 1] == '/')
        ol--;
    while (dl > 1 && p->report_path[dl - 1] == '/')
        dl--;
    if (slash && dl == ol && !strncmp(p->report_path, p->out_dir, ol))
        return 0;
    if (vkcu_outfile_check(p->report_path, p->overwrite || p->resume, NULL, why, sizeof(why)) < 0) {
        text_cut(err, errlen, "cannot write the report: %s", why);
        return VKCU_ERR_OUTPUT;
    }
    return 0;
}

/* Refuses a report that is one of the batch's outputs. */
static int report_not_an_output(batch_run *b, const file_list *all, char *err, size_t errlen)
{
    const vkcu_batch_settings *p = b->p;
    char where[PATH_MAX];
    const char *rel;
    if (!strcmp(p->report_path, "-") || resolve_beside(p->report_path, where, sizeof(where)) < 0 ||
        !(rel = below(where, p->out_dir)))
        return 0;
    for (int i = 0; i < all->n; i++)
        if (!strcmp(all->v[i].out_rel, rel)) {
            text_cut(err, errlen, "cannot write the report: %s: is also the output of %s/%s (name the report "
                     "outside the outputs)", p->report_path, p->in_dir, all->v[i].rel);
            return VKCU_ERR_OUTPUT;
        }
    return 0;
}

/* Under the context's log target. A failure before any file ran leaves its
 * reason in r->error (logged by the caller). */
static int batch_run_files(vkcu_context *ctx, const vkcu_batch_settings *p, vkcu_batch_result *r)
{
    batch_run b_ = { 0 }, *b = &b_;
    file_list all = { 0 };
    vkcu_jobs *workers = NULL;
    int ret = 0;
    char *err = r->error;
    size_t errlen = sizeof(r->error);
    struct stat st;
    b->p = p;
    b->ctx = ctx;
    b->r = r;
    pthread_mutex_init(&b->lock, NULL);
    int count = p->shard_count;
    snprintf(b->shard_text, sizeof(b->shard_text), "%d/%d", p->shard_index, count);

    if (stat(p->in_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
        text_cut(err, errlen, "%s: %s (the batch's input folder)", p->in_dir,
                 stat(p->in_dir, &st) < 0 ? "no such folder" : "not a folder");
        ret = VKCU_ERR_INPUT;
        goto fail;
    }
    skip_inode skip[1] = { { 0 } }, report_inode = { 0 };
    char report_hit[PATH_MAX + 1] = "";
    if (stat(p->out_dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            text_cut(err, errlen, "%s: exists and is not a folder (the batch's output folder)", p->out_dir);
            ret = VKCU_ERR_OUTPUT;
            goto fail;
        }
        /* The same folder under any name: a link, or a bind mount of it (whose real path differs). */
        struct stat in_st;
        if (stat(p->in_dir, &in_st) == 0 && in_st.st_dev == st.st_dev && in_st.st_ino == st.st_ino) {
            text_cut(err, errlen, "%s: the output folder is the input folder (outputs would replace or be taken "
                     "for inputs): choose another one", p->out_dir);
            ret = VKCU_ERR_USAGE;
            goto fail;
        }
        skip[0] = (skip_inode){ st.st_dev, st.st_ino, 1 };
    } else if (!p->dry_run) {
        if ((ret = report_writable_first(p, err, errlen)) < 0)
            goto fail;
        char probe[PATH_MAX + 2];
        snprintf(probe, sizeof(probe), "%s/", p->out_dir);
        if ((ret = mkdirs_for(probe, err, errlen)) < 0)
            goto fail;
        if (stat(p->out_dir, &st) == 0)
            skip[0] = (skip_inode){ st.st_dev, st.st_ino, 1 };
    }
    /* A report on standard output redirected onto an input is the same file. */
    if (p->report_path && (!strcmp(p->report_path, "-") ? fstat(STDOUT_FILENO, &st) == 0 && S_ISREG(st.st_mode)
                                                        : stat(p->report_path, &st) == 0))
        report_inode = (skip_inode){ st.st_dev, st.st_ino, 1 };

    if ((ret = walk(p, "", skip, 1, &report_inode, report_hit, &all, err, errlen)) < 0)
        goto fail;
    /* Media files only (unless all_files): decided on the whole list, so
     * every shard maps the same outputs. */
    for (int k = 0; !p->all_files && k < all.n; k++) {
        batch_file *f = &all.v[k];
        char full[PATH_MAX + 1];
        snprintf(full, sizeof(full), "%s/%s", p->in_dir, f->rel);
        f->not_media = !media_extension(f->rel) && !media_content(full, &f->probed);
    }
    if (p->report_path && !p->dry_run && (ret = report_open(b, report_hit, err, errlen)) < 0)
        goto fail;
    if (all.n == 0) {
        text_cut(err, errlen, "%s: no input files (hidden files are skipped%s%s)", p->in_dir,
                 p->recursive ? "" : "; subfolders are taken only by a recursive batch",
                 p->nb_include || p->nb_exclude ? "; check the include and exclude patterns" : "");
        ret = VKCU_ERR_INPUT;
        goto fail;
    }
    qsort(all.v, (size_t)all.n, sizeof(all.v[0]), cmp_rel);
    if ((ret = map_outputs(&all, p->extension)) < 0)
        goto fail;
    if (b->report && (ret = report_not_an_output(b, &all, err, errlen)) < 0)
        goto fail;
    /* This shard's files: every count-th of the sorted list. */
    b->files = malloc((size_t)all.n * sizeof(*b->files));
    if (!b->files) {
        ret = AVERROR(ENOMEM);
        goto fail;
    }
    for (int k = 0; k < all.n; k++)
        if (k % count == p->shard_index)
            b->files[b->nb_files++] = all.v[k];
    r->total = b->nb_files;

    if (p->dry_run) {
        dry_run(b);
        ret = b->worst_error;
        goto fail;
    }

    int jobs = p->jobs < b->nb_files ? p->jobs : (b->nb_files ? b->nb_files : 1);
    /* One decode queue per concurrent stream on each GPU's shared device. */
    vkcu_vkdev_expect((unsigned)jobs, 0);
    b->slots = calloc((size_t)jobs, sizeof(*b->slots));
    b->nb_slots = b->slots ? jobs : 0;
    if (!b->slots) {
        ret = AVERROR(ENOMEM);
        goto fail;
    }
    b->start = vkcu_now();
    /* The workers' messages (theirs and their jobs') go to the context's log
     * callback. Workers that cannot be started leave their files to the others. */
    vkcu_jobs_params wp = { .workers = jobs, .work = batch_work, .opaque = b };
    if ((ret = vkcu_jobs_start(&workers, &wp)) < 0) {
        if (ret != AVERROR(ENOMEM)) {
            text_cut(err, errlen, "batch: cannot start worker threads");
            ret = AVERROR(EAGAIN);
        }
        goto fail;
    }
    for (;;) {
        if (p->progress_callback) {
            pthread_mutex_lock(&b->lock);
            progress_report(b, 0);
            pthread_mutex_unlock(&b->lock);
        }
        if (vkcu_jobs_wait(workers, 0.25))
            break;
    }
    vkcu_jobs_join(&workers);
    r->seconds = vkcu_now() - b->start;
    r->not_started = r->total - r->done - r->skipped - r->failed - r->interrupted;
    /* Files not started mean the run was stopped: an interrupted run exits as
     * one, whatever failed before the stop. */
    if (r->not_started > 0 || (r->interrupted > 0 && vkcu_job_stop_requested()))
        b->worst_error = VKCU_ERR_INTERRUPT;
    if (p->progress_callback) {
        pthread_mutex_lock(&b->lock);
        progress_report(b, 1);
        pthread_mutex_unlock(&b->lock);
    }
    ret = b->worst_error;
    report_summary(b, ret);
fail:
    if (b->report) {
        /* Published only whole, summary included: a report that could not
         * be written (a full disk), or a batch that stopped before its
         * summary, leaves the earlier report (if any) as it was. */
        int bad = vkcu_outfile_fclose(b->report, b->report_tmp) != 0;
        char why[1024];
        if (!bad && b->summary_written) {
            if (vkcu_outfile_commit(b->report_tmp, p->report_path, why, sizeof(why)) < 0) {
                if (ret >= 0) {
                    text_cut(err, errlen, "cannot write the report: %s", why);
                    ret = VKCU_ERR_OUTPUT;
                } else {
                    vkcu_log(VKCU_LOG_ERROR, "cannot write the report: %s", why);
                }
            }
        } else {
            vkcu_outfile_abort(b->report_tmp);
            if (bad) {
                char line[512];
                snprintf(line, sizeof(line), "%s: cannot write the report (disk full?); nothing was written in its "
                         "place", p->report_path);
                if (ret >= 0) {
                    text_cut(err, errlen, "%s", line);
                    ret = VKCU_ERR_OUTPUT;
                } else {
                    vkcu_log(VKCU_LOG_ERROR, "%s", line);
                }
            }
        }
    }
    free(b->slots);
    free(b->files);
    list_free(&all);
    pthread_mutex_destroy(&b->lock);
    return ret;
}

int vkcu_batch_run(vkcu_context *ctx, const vkcu_batch_settings *s, vkcu_batch_result *result)
{
    if (!result)
        return AVERROR(EINVAL);
    memset(result, 0, sizeof(*result));
    if (!ctx)
        return vkcu_invalid(result->error, sizeof(result->error), "batch: no context given");
    const vkcu_log_target *prev = vkcu_log_target_swap(vkcu_context_log(ctx));
    int ret = s ? check_batch(s, result->error, sizeof(result->error))
                : vkcu_invalid(result->error, sizeof(result->error), "batch: no batch settings given");
    if (ret >= 0) {
        ret = batch_run_files(ctx, s, result);
        if (result->error[0])
            LOGE("%s", result->error);
    }
    vkcu_log_target_swap(prev);
    return ret;
}
