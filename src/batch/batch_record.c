/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What an output was made with: the record beside each output (its
 * settings, written before the output is moved into place) and the check
 * a resumed batch makes against it (batch_priv.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"
#include "util/xxhash64.h"
#include "core/outfile.h"
#include "batch_priv.h"

/* ---- what an output was made with ---- */

/* Everything that decides an output's bytes, one "key=value" a line: the
 * input (size, modification time to the nanosecond and inode, as make and
 * rsync tell a rewritten file: a file rewritten with the same size within
 * one second, or replaced by another, is a changed input), the chain, the
 * encoder and its options, the trim, the hash settings. Not the backend or
 * device: the GPU and CPU paths are meant to give the same frames, and a
 * resumed run on other hardware should not redo finished work. */
void vkcu_batch_settings_text(const vkcu_job_params *p, const char *in, char *buf, size_t len)
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
             size, mtime, mtime_nsec, inode, p->job.sink == VKCU_SINK_HASH ? "hash" : "encode", p->job.chain ? p->job.chain : "",
             p->job.encoder && strcmp(p->job.encoder, "auto") ? p->job.encoder : "", p->job.crf, (long long)p->job.bitrate,
             p->job.preset ? p->job.preset : "", p->job.gop, p->job.encoder_opts ? p->job.encoder_opts : "", p->job.start_time,
             (long long)p->job.start_frame, p->job.duration, (long long)p->job.frame_count, p->job.max_frames,
             p->job.sink == VKCU_SINK_HASH ? (int)p->job.hash_algo : -1, p->job.sink == VKCU_SINK_HASH ? (int)p->job.hash_format : -1);
    /* Audio settings only when set: records of earlier runs (which had none) still match the default. */
    size_t n = strlen(buf);
    if (p->job.sink == VKCU_SINK_ENCODE && (p->job.no_audio || (p->job.audio_encoder && strcmp(p->job.audio_encoder, "auto"))))
        snprintf(buf + n, len - n, "audio=%s\n", p->job.no_audio ? "none" : p->job.audio_encoder);
    /* Streams picked, only when not every one: older records still match. */
    n = strlen(buf);
    if (p->job.sink == VKCU_SINK_ENCODE && (p->job.audio_streams || p->job.subtitle_streams) && n < len)
        snprintf(buf + n, len - n, "streams=audio:%d/subtitle:%d\n", p->job.audio_streams, p->job.subtitle_streams);
    /* Only when set, so that records made before the key existed still match. */
    size_t used = strlen(buf);
    if (p->job.gpu_encoder && *p->job.gpu_encoder && used < len)
        snprintf(buf + used, len - used, "gpu-encoder=%s\n", p->job.gpu_encoder);
}

/* The record beside an output: ".vkcu-HASH.settings" (short, whatever the
 * output's name), holding the output's name, size and time, then the
 * settings. */
void vkcu_batch_record_name(const char *out, char *name, size_t len)
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
    vkcu_batch_record_name(out, name, sizeof(name));
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
int vkcu_batch_record_matches(const char *out, const char *settings_now, char *why, size_t whylen)
{
    char name[PATH_MAX + 64], head[PATH_MAX + 128], text[8192], settings[8192];
    vkcu_batch_record_name(out, name, sizeof(name));
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


/* The job's hook just before its output is moved into place. */
int vkcu_batch_publish_hook(void *opaque, const char *tmp, const char *path, char *err, size_t errlen)
{
    publish_record *pr = opaque;
    int ret = write_record(path, tmp, pr->settings, err, errlen);
    if (ret < 0)
        return ret;
    pr->written = 1;
    /* For tests only (docs/batch.md, "Resume"): a crash at the worst
     * moment, with the record on disk and the output not yet in place. */
    if (pr->test_kill || getenv("VKCU_TEST_KILL_BEFORE_PUBLISH"))
        raise(SIGKILL);
    return 0;
}

/* Under b->lock, so that the batch's messages and its callbacks never overlap. */
