/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Demux stage: opens the input with libavformat, picks the video stream and
 * turns every way an input can be wrong into one line that names the file.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <libavutil/avstring.h>
#include <libavutil/imgutils.h>

#include <vkcu/job.h>

#include "util/array.h"
#include "util/log.h"
#include "demux.h"

/* Opening a FIFO blocks in open() until a writer comes. A stop signal must
 * make that open return (EINTR), which it does only while the handler runs
 * without SA_RESTART: the flag is cleared for the open, whoever installed
 * the handler, and put back after. Jobs of a batch may open FIFOs at once:
 * the first saves the flags, the last restores them. */
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
static pthread_mutex_t fifo_lock = PTHREAD_MUTEX_INITIALIZER;
static int fifo_opens;
static struct sigaction fifo_saved[4];

static void fifo_open_begin(void)
{
    pthread_mutex_lock(&fifo_lock);
    if (fifo_opens++ == 0) {
        for (int i = 0; i < 4; i++) {
            struct sigaction sa;
            if (sigaction(stop_signals[i], NULL, &fifo_saved[i]) < 0)
                continue;
            sa = fifo_saved[i];
            if (!(sa.sa_flags & SA_SIGINFO) && (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN))
                continue;
            sa.sa_flags &= ~SA_RESTART;
            sigaction(stop_signals[i], &sa, NULL);
        }
    }
    pthread_mutex_unlock(&fifo_lock);
}

static void fifo_open_end(void)
{
    pthread_mutex_lock(&fifo_lock);
    if (--fifo_opens == 0) {
        for (int i = 0; i < 4; i++) {
            struct sigaction now;
            /* Put the flag back only on the handler we changed. */
            if (sigaction(stop_signals[i], NULL, &now) == 0 && now.sa_handler == fifo_saved[i].sa_handler &&
                (fifo_saved[i].sa_flags & SA_RESTART)) {
                now.sa_flags |= SA_RESTART;
                sigaction(stop_signals[i], &now, NULL);
            }
        }
    }
    pthread_mutex_unlock(&fifo_lock);
}

/* libavformat's I/O asks this between reads: a stop request ends a blocked open. */
static int stop_requested_cb(void *opaque)
{
    (void)opaque;
    return vkcu_job_stop_requested();
}

/* Names the codec of a stream no decoder takes: its FFmpeg name, or the
 * container's tag for it when FFmpeg does not know the codec at all. */
static void unknown_codec_name(const AVCodecParameters *par, char *buf, size_t len)
{
    if (par->codec_id != AV_CODEC_ID_NONE) {
        snprintf(buf, len, "%s", avcodec_get_name(par->codec_id));
        return;
    }
    char tag[AV_FOURCC_MAX_STRING_SIZE];
    if (par->codec_tag)
        snprintf(buf, len, "unknown (tag %s)", av_fourcc_make_string(tag, par->codec_tag));
    else
        snprintf(buf, len, "unknown");
}

/* The container a file's first bytes claim, when opening it failed: a
 * damaged file of a known format, rather than an unknown format. */
static const AVInputFormat *probe_format(const char *path)
{
    AVIOContext *pb = NULL;
    const AVInputFormat *fmt = NULL;
    struct stat st;
    /* Only a regular file can be read twice (a pipe's bytes are gone). */
    if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || avio_open(&pb, path, AVIO_FLAG_READ) < 0)
        return NULL;
    /* Only a confident guess: random bytes resemble MP3 frames now and then. */
    if (av_probe_input_buffer2(pb, &fmt, path, NULL, 0, 0) <= AVPROBE_SCORE_EXTENSION)
        fmt = NULL;
    avio_closep(&pb);
    return fmt;
}

/* The colour spaces (C field) FFmpeg's YUV4MPEG demuxer reads, matched as
 * it matches them, by prefix: the longer names of a prefix first. */
static const char *const y4m_colour_spaces[] = {
    "420jpeg", "420mpeg2", "420paldv", "420p16", "422p16", "444p16", "420p14", "422p14", "444p14", "420p12",
    "422p12",  "444p12",   "420p10",   "422p10", "444p10", "420p9",  "422p9",  "444p9",  "420",    "411",
    "422",     "444alpha", "444",      "mono16", "mono12", "mono10", "mono9",  "mono",
};

/* FFmpeg reads this many bytes of a YUV4MPEG header, its newline included. */
#define Y4M_HEADER_MAX 128

/* A YUV4MPEG file FFmpeg's demuxer refused: the header field at fault, as
 * the demuxer reads the header (its own error is an unrelated errno:
 * EINVAL, EBUSY when the packet size went negative). Only called after the
 * open failed; 1 with err set, 0 when no field is found at fault. */
static int y4m_header_invalid(const char *path, char *err, size_t errlen)
{
    struct stat st;
    char line[512];
    if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(line, 1, sizeof(line) - 1, f);
    fclose(f);
    line[n] = 0;
    if (n < 10 || strncmp(line, "YUV4MPEG2 ", 10))
        return 0;
    char *nl = memchr(line, '\n', n);
    if (!nl || nl - line >= Y4M_HEADER_MAX) {
        snprintf(err, errlen, "%s: the YUV4MPEG header line is longer than the %d bytes FFmpeg reads (%s)", path,
                 Y4M_HEADER_MAX - 1, nl ? "shorten its X fields" : "no end of line in it");
        return 1;
    }
    *nl = 0;
    for (char *c = line; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
            *c = '?'; /* quoted below: one readable line */
    char w[24] = "(none)", h[24] = "(none)";
    long long wv = -1, hv = -1;
    char *save = NULL;
    for (char *t = strtok_r(line + 10, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        char *end;
        if (*t == 'W' || *t == 'H') {
            long long v = strtoll(t + 1, &end, 10);
            snprintf(*t == 'W' ? w : h, sizeof(w), "%.20s", t + 1);
            *(*t == 'W' ? &wv : &hv) = *end || end == t + 1 ? -1 : v;
        } else if (*t == 'I' && !strchr("?ptb", t[1] ? t[1] : 'x')) {
            snprintf(err, errlen, "%s: the YUV4MPEG header's interlacing field '%.20s' is %s (FFmpeg reads Ip, It, "
                     "Ib and I?)", path, t, t[1] == 'm' ? "for mixed progressive and interlaced frames, which FFmpeg "
                     "does not read" : "invalid");
            return 1;
        } else if (*t == 'C') {
            size_t k = 0, nb = sizeof(y4m_colour_spaces) / sizeof(y4m_colour_spaces[0]);
            while (k < nb && strncmp(t + 1, y4m_colour_spaces[k], strlen(y4m_colour_spaces[k])))
                k++;
            if (k == nb) {
                snprintf(err, errlen, "%s: the YUV4MPEG header's colour space '%.20s' is not one FFmpeg reads "
                         "(C420jpeg, C420mpeg2, C420paldv, C411, C422, C444, C444alpha, Cmono, C420p10, ... up to "
                         "p16)", path, t);
                return 1;
            }
        }
    }
    if (wv > 0 && hv > 0 && wv <= INT_MAX && hv <= INT_MAX && av_image_check_size((unsigned)wv, (unsigned)hv, 0, NULL) >= 0)
        return 0;
    snprintf(err, errlen, "%s: the YUV4MPEG header's picture size is invalid (W%s H%s: each side must be from 1 and "
             "the picture within FFmpeg's size limit)", path, w, h);
    return 1;
}

/* What is known of a path before FFmpeg opens it: missing, a folder, empty.
 * "-" (standard input) passes; *fifo: 1 for a named pipe. */
static int check_path(const char *path, int *fifo, char *err, size_t errlen)
{
    struct stat st;
    *fifo = 0;
    if (!strcmp(path, "-"))
        return 0;
    if (stat(path, &st) < 0) {
        snprintf(err, errlen, "%s: %s (check the path)", path, errno == ENOENT ? "no such file" : strerror(errno));
        return VKCU_ERR_INPUT;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: is a folder (use 'vkcu batch' for folders)", path);
        return VKCU_ERR_INPUT;
    }
    if (S_ISREG(st.st_mode) && st.st_size == 0) {
        snprintf(err, errlen, "%s: empty file (0 bytes)", path);
        return VKCU_ERR_INPUT;
    }
    *fifo = S_ISFIFO(st.st_mode);
    return 0;
}

/* Why avformat_open_input refused `path` with `ret`; io: over the caller's
 * I/O, where no file can be read again to say more. */
static void open_failed(const char *path, int io, int ret, char *err, size_t errlen)
{
    char buf[128];
    const AVInputFormat *known = ret == AVERROR_INVALIDDATA && !io ? probe_format(path) : NULL;
    if (!io && y4m_header_invalid(path, err, errlen))
        ; /* said */
    else if (known)
        snprintf(err, errlen, "%s: damaged %s file (truncated or corrupt: its demuxer cannot read it)", path,
                 known->name);
    else if (ret == AVERROR_INVALIDDATA)
        snprintf(err, errlen, "%s: not a media file: no container format of this build recognises it "
                 "('vkcu formats' lists them)", path);
    else
        snprintf(err, errlen, "%s: cannot open: %s", path, vkcu_err_str(ret, buf, sizeof(buf)));
}

/* The container opened and its streams probed (a FIFO's open with the stop
 * signals watched); a stop request during either ends it. */
static int open_input(vkcu_demux *d, const char *path, AVIOContext *pb, int fifo, char *err, size_t errlen)
{
    int ret;
    if (fifo)
        fifo_open_begin();
    ret = avformat_open_input(&d->fmt, strcmp(path, "-") ? path : "pipe:0", NULL, NULL);
    if (fifo)
        fifo_open_end();
    if (ret < 0 && vkcu_job_stop_requested()) {
        snprintf(err, errlen, "%s: interrupted while opening", path);
        return VKCU_ERR_INTERRUPT;
    }
    if (ret < 0) {
        open_failed(path, !!pb, ret, err, errlen);
        return VKCU_ERR_INPUT;
    }
    ret = avformat_find_stream_info(d->fmt, NULL);
    /* An interrupted probe can return success with the streams unknown. */
    if (vkcu_job_stop_requested()) {
        snprintf(err, errlen, "%s: interrupted while opening", path);
        return VKCU_ERR_INTERRUPT;
    }
    /* Past the open, a stop is seen between packets, as the job loop checks it. */
    d->fmt->interrupt_callback.callback = NULL;
    if (ret < 0) {
        snprintf(err, errlen, "%s: cannot read stream information (truncated or corrupt file)", path);
        return VKCU_ERR_INPUT;
    }
    return 0;
}

/* The video stream to decode (d->video): number video_stream among the
 * video streams, or FFmpeg's choice for -1; it must have a decoder in this
 * build and a known picture. */
static int choose_video(vkcu_demux *d, const char *path, int video_stream, char *err, size_t errlen)
{
    /* Video streams in the container's order; attached pictures (cover
     * art) are not video. */
    int nb_video = 0, chosen = -1;
    for (unsigned i = 0; i < d->fmt->nb_streams; i++) {
        const AVStream *st = d->fmt->streams[i];
        if (st->codecpar->codec_type != AVMEDIA_TYPE_VIDEO || (st->disposition & AV_DISPOSITION_ATTACHED_PIC))
            continue;
        if (nb_video++ == video_stream)
            chosen = (int)i;
    }
    if (!nb_video) {
        snprintf(err, errlen, "%s: has no video stream", path);
        return VKCU_ERR_INPUT;
    }
    if (video_stream >= nb_video) {
        char n[16];
        snprintf(n, sizeof(n), "%d", video_stream);
        snprintf(err, errlen, "%s: %s: the input has %d video stream%s (numbered from 0)", path,
                 VKCU_SETTING_IS("video_stream", n), nb_video, nb_video == 1 ? "" : "s");
        return VKCU_ERR_USAGE;
    }
    if (chosen < 0) {
        /* FFmpeg's choice: the one its decoder likes best (resolution, frames). */
        chosen = av_find_best_stream(d->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
        if (chosen < 0) {
            snprintf(err, errlen, "%s: has no video stream", path);
            return VKCU_ERR_INPUT;
        }
    }
    d->video_index = chosen;
    d->video = d->fmt->streams[chosen];
    AVCodecParameters *par = d->video->codecpar;
    /* A missing decoder first: without one, the picture size and format stay
     * unknown, which is no fault of the file. */
    if (!avcodec_find_decoder(par->codec_id)) {
        char name[64];
        unknown_codec_name(par, name, sizeof(name));
        snprintf(err, errlen, "%s: no decoder for codec %s in this build ('vkcu formats' lists the decodable codecs)",
                 path, name);
        return VKCU_ERR_INPUT;
    }
    if (par->width <= 0 || par->height <= 0 || par->format < 0) {
        if (d->fmt->pb && !(d->fmt->pb->seekable & AVIO_SEEKABLE_NORMAL) && strstr(d->fmt->iformat->name, "mov"))
            /* The index (moov) after the media data: a pipe cannot go back to the data. */
            snprintf(err, errlen, "%s: this MP4/MOV has its index (moov) at the end, which a pipe cannot reach "
                     "before the data: read the file from disk, or move its index to the front first (a transcode "
                     "with %s, or ffmpeg's faststart)", path, VKCU_SETTING_IS("faststart", "1"));
        else
            snprintf(err, errlen, "%s: video stream %d (%s) has no decodable picture (truncated or corrupt)", path,
                     chosen, avcodec_get_name(par->codec_id));
        return VKCU_ERR_INPUT;
    }
    return 0;
}

/* The other video streams discarded, with a warning naming those that are
 * not attached pictures. */
static void drop_other_video(vkcu_demux *d, const char *path)
{
    const AVCodecParameters *par = d->video->codecpar;
    char dropped[256] = "";
    for (unsigned i = 0; i < d->fmt->nb_streams; i++) {
        AVStream *st = d->fmt->streams[i];
        if ((int)i == d->video_index || st->codecpar->codec_type != AVMEDIA_TYPE_VIDEO)
            continue;
        st->discard = AVDISCARD_ALL;
        if (!(st->disposition & AV_DISPOSITION_ATTACHED_PIC))
            av_strlcatf(dropped, sizeof(dropped), "%s%u (%s %dx%d)", dropped[0] ? ", " : "", i,
                        avcodec_get_name(st->codecpar->codec_id), st->codecpar->width, st->codecpar->height);
    }
    if (dropped[0])
        LOGW("%s: using video stream %d (%s %dx%d); other video stream(s) dropped: %s (pick one with %s)",
             path, d->video_index, avcodec_get_name(par->codec_id), par->width, par->height, dropped,
             VKCU_SETTING_IS("video_stream", "N"));
}

int vkcu_demux_check(const char *path, char *err, size_t errlen)
{
    int fifo, ret = check_path(path, &fifo, err, errlen);
    if (ret < 0 || fifo || !strcmp(path, "-"))
        return ret; /* a pipe is read once: by its job */
    AVFormatContext *fmt = NULL;
    ret = avformat_open_input(&fmt, path, NULL, NULL);
    if (ret < 0) {
        open_failed(path, 0, ret, err, errlen);
        return VKCU_ERR_INPUT;
    }
    avformat_close_input(&fmt);
    return 0;
}

static int demux_open(const char *path, AVIOContext *pb, int video_stream, vkcu_demux **out, char *err,
                      size_t errlen);

int vkcu_demux_open(const char *path, int video_stream, vkcu_demux **out, char *err, size_t errlen)
{
    return demux_open(path, NULL, video_stream, out, err, errlen);
}

int vkcu_demux_open_io(const char *path, AVIOContext *pb, vkcu_demux **out, char *err, size_t errlen)
{
    return demux_open(path, pb, -1, out, err, errlen);
}

static int demux_open(const char *path, AVIOContext *pb, int video_stream, vkcu_demux **out, char *err,
                      size_t errlen)
{
    int fifo = 0;
    vkcu_demux *d = NULL;
    int ret;
    *out = NULL;
    if (!pb && (ret = check_path(path, &fifo, err, errlen)) < 0)
        return ret;
    d = av_mallocz(sizeof(*d));
    if (!d || !(d->fmt = avformat_alloc_context())) {
        av_free(d);
        return AVERROR(ENOMEM);
    }
    d->path = path;
    d->last_video_ts = AV_NOPTS_VALUE;
    d->fmt->interrupt_callback = (AVIOInterruptCB){ stop_requested_cb, NULL };
    d->fmt->pb = pb;
    if ((ret = open_input(d, path, pb, fifo, err, errlen)) < 0)
        goto fail;
    if ((ret = choose_video(d, path, video_stream, err, errlen)) < 0)
        goto fail;
    drop_other_video(d, path);
    d->frame_rate = av_guess_frame_rate(d->fmt, d->video, NULL);
    /* An index the container brought (read with its header), or FFmpeg's
     * own that grows as packets are read (raw streams): timestamp seeks
     * land on key frames. Otherwise (MPEG-TS, MPEG-PS, FLV...) they land
     * anywhere (vkcu_demux_seek_packet). */
    d->indexed = (d->fmt->iformat->flags & AVFMT_GENERIC_INDEX) || avformat_index_get_entries_count(d->video) > 0;
    if (d->video->nb_frames > 0)
        d->frames_estimate = d->video->nb_frames;
    else if (d->fmt->duration > 0 && d->frame_rate.num > 0)
        d->frames_estimate = av_rescale_q(d->fmt->duration, AV_TIME_BASE_Q, av_inv_q(d->frame_rate));
    *out = d;
    return 0;
fail:
    vkcu_demux_close(&d);
    return ret;
}

int vkcu_demux_damaged(const vkcu_demux *d, int ret)
{
    return ret < 0 && ret != AVERROR_EOF && ret != AVERROR_EXIT && !(d->fmt->pb && d->fmt->pb->error < 0);
}

int vkcu_demux_read(vkcu_demux *d, AVPacket *pkt, int strict, int *damaged, char *err, size_t errlen)
{
    int ret;
    for (;;) {
        ret = av_read_frame(d->fmt, pkt);
        if (ret >= 0 && pkt->stream_index == d->video_index) {
            int64_t ts = pkt->pts != AV_NOPTS_VALUE ? pkt->pts : pkt->dts;
            if (ts != AV_NOPTS_VALUE)
                d->last_video_ts = ts;
            d->video_packets++;
            if (d->skip_video > 0) { /* before the key frame vkcu_demux_seek_packet moved to */
                d->skip_video--;
                av_packet_unref(pkt);
                continue;
            }
        }
        break;
    }
    if (ret == AVERROR_EOF || ret >= 0)
        return ret;
    if (avio_feof(d->fmt->pb))
        return AVERROR_EOF;
    char buf[128];
    vkcu_err_str(ret, buf, sizeof(buf));
    if (!vkcu_demux_damaged(d, ret)) {
        snprintf(err, errlen, "%s: read error: %s", d->path, buf);
        return VKCU_ERR_INPUT;
    }
    /* The file reads, but its demuxer cannot go on (a packet header that
     * claims 4 GB, a broken frame marker): the stream ends there, as
     * ffmpeg ends it, keeping every frame before the damage. The damaged
     * packet is named by the time of the last good one (a seek for a trim
     * makes packet counts start anywhere). */
    char where[96] = "in the first video packet";
    if (d->video_packets > 0 && d->last_video_ts != AV_NOPTS_VALUE) {
        int64_t start = d->video->start_time != AV_NOPTS_VALUE ? d->video->start_time : 0;
        /* in double: a damaged file's timestamps can be anywhere in int64 */
        snprintf(where, sizeof(where), "after the video packet at %.3f s",
                 ((double)d->last_video_ts - (double)start) * av_q2d(d->video->time_base));
    } else if (d->video_packets > 0) {
        snprintf(where, sizeof(where), "after video packet %lld", (long long)d->video_packets - 1);
    }
    if (strict) {
        snprintf(err, errlen, "%s: damaged container data %s (the %s demuxer cannot read on: %s)", d->path, where,
                 d->fmt->iformat->name, buf);
        return VKCU_ERR_INPUT;
    }
    LOGW("%s: damaged container data %s (the %s demuxer cannot read on: %s): the stream ends there, the frames "
         "before it are kept, as ffmpeg keeps them (use %s to stop)", d->path, where, d->fmt->iformat->name, buf,
         VKCU_SETTING_IS("strict", "1"));
    if (damaged)
        *damaged = 1;
    return AVERROR_EOF;
}

int vkcu_demux_seek(vkcu_demux *d, int64_t ts)
{
    d->skip_video = 0;
    return avformat_seek_file(d->fmt, d->video_index, INT64_MIN, ts, ts, 0);
}

void vkcu_packet_scan_free(vkcu_packet_scan *scan)
{
    free(scan->pts);
    free(scan->dts);
    free(scan->duration);
    free(scan->key);
    free(scan->discard);
    memset(scan, 0, sizeof(*scan));
}

int vkcu_demux_scan(vkcu_demux *d, int64_t limit, int64_t stop, vkcu_packet_scan *scan)
{
    AVPacket *pkt = av_packet_alloc();
    int64_t room = 0, dts_room = 0, duration_room = 0, key_room = 0, discard_room = 0; /* util/array.h */
    int64_t after = -1; /* packets since the stop */
    int ret = pkt ? 0 : AVERROR(ENOMEM);
    memset(scan, 0, sizeof(*scan));
    while (ret >= 0 && scan->n < limit && after < 16) {
        ret = av_read_frame(d->fmt, pkt);
        if (ret < 0) {
            /* the end, or damage the job's own reading reports */
            ret = ret == AVERROR_EOF || avio_feof(d->fmt->pb) || vkcu_demux_damaged(d, ret) ? 0 : ret;
            break;
        }
        if (pkt->stream_index == d->video_index) {
            if (pkt->pts != AV_NOPTS_VALUE && pkt->dts != AV_NOPTS_VALUE && pkt->pts - pkt->dts > scan->max_delay)
                scan->max_delay = pkt->pts - pkt->dts;
            if (VKCU_ARRAY_GROW(scan->pts, scan->n, room, 1024) < 0 ||
                VKCU_ARRAY_GROW(scan->dts, scan->n, dts_room, 1024) < 0 ||
                VKCU_ARRAY_GROW(scan->duration, scan->n, duration_room, 1024) < 0 ||
                VKCU_ARRAY_GROW(scan->key, scan->n, key_room, 1024) < 0 ||
                VKCU_ARRAY_GROW(scan->discard, scan->n, discard_room, 1024) < 0) {
                ret = AVERROR(ENOMEM);
            } else {
                scan->pts[scan->n] = pkt->pts;
                scan->dts[scan->n] = pkt->dts;
                scan->duration[scan->n] = pkt->duration;
                scan->key[scan->n] = !!(pkt->flags & AV_PKT_FLAG_KEY);
                scan->discard[scan->n] = !!(pkt->flags & AV_PKT_FLAG_DISCARD);
                scan->n++;
            }
            int64_t ts = pkt->dts != AV_NOPTS_VALUE ? pkt->dts : pkt->pts;
            if (after >= 0)
                after++;
            else if (stop != AV_NOPTS_VALUE && ts != AV_NOPTS_VALUE && ts > stop)
                after = 0;
        }
        av_packet_unref(pkt);
    }
    av_packet_free(&pkt);
    if (ret < 0)
        vkcu_packet_scan_free(scan);
    return ret;
}

int64_t vkcu_packet_scan_key_before(const vkcu_packet_scan *scan, int64_t t)
{
    int64_t best = 0;
    for (int64_t i = 0; i < scan->n; i++)
        if (scan->key[i] && scan->pts[i] != AV_NOPTS_VALUE && scan->pts[i] <= t)
            best = i;
    return best;
}

int vkcu_demux_seek_packet(vkcu_demux *d, int64_t packet)
{
    /* A search for a time before every packet's (the first pts is not the
     * first dts, which such searches use) ends at the first packet. */
    int ret = avformat_seek_file(d->fmt, d->video_index, INT64_MIN, INT64_MIN / 2, INT64_MIN / 2, 0);
    if (ret < 0)
        return ret;
    d->skip_video = packet;
    return 0;
}

void vkcu_demux_close(vkcu_demux **pd)
{
    vkcu_demux *d = *pd;
    if (!d)
        return;
    avformat_close_input(&d->fmt);
    av_freep(pd);
}

/* Where output timestamps count from, as ffmpeg's CLI takes it: the
 * input's start time, or in a container whose timestamps may jump
 * (MPEG-TS) the earliest start of the streams actually read. */
int64_t vkcu_demux_input_start(const AVFormatContext *fmt)
{
    int64_t start = INT64_MAX;
    if (fmt->start_time == AV_NOPTS_VALUE)
        return 0;
    if (!(fmt->iformat->flags & AVFMT_TS_DISCONT))
        return fmt->start_time;
    for (unsigned i = 0; i < fmt->nb_streams; i++) {
        const AVStream *st = fmt->streams[i];
        if (st->discard != AVDISCARD_ALL && st->start_time != AV_NOPTS_VALUE)
            start = FFMIN(start, av_rescale_q(st->start_time, st->time_base, AV_TIME_BASE_Q));
    }
    return start != INT64_MAX ? start : fmt->start_time;
}

/* Streams of `type` before input stream `index` (all of them: index = nb_streams). */
static int nb_of_kind(const vkcu_demux *d, enum AVMediaType type, unsigned index)
{
    int n = 0;
    for (unsigned i = 0; i < index && i < d->fmt->nb_streams; i++)
        n += d->fmt->streams[i]->codecpar->codec_type == type;
    return n;
}

int vkcu_demux_check_picks(const vkcu_demux *d, int audio_streams, int subtitle_streams, char *err, size_t errlen)
{
    static const struct {
        enum AVMediaType type;
        const char *setting, *kind;
    } kinds[] = {
        { AVMEDIA_TYPE_AUDIO, "audio_streams", "audio" },
        { AVMEDIA_TYPE_SUBTITLE, "subtitle_streams", "subtitle" },
    };
    for (int k = 0; k < 2; k++) {
        int pick = k ? subtitle_streams : audio_streams;
        int have = nb_of_kind(d, kinds[k].type, d->fmt->nb_streams);
        if (pick < VKCU_STREAM_NTH(0) || pick - 1 < have)
            continue;
        char n[16];
        snprintf(n, sizeof(n), "%d", pick - 1);
        if (!have)
            snprintf(err, errlen, "%s: %s: the input has no %s stream", d->path,
                     VKCU_SETTING_IS(kinds[k].setting, n), kinds[k].kind);
        else
            snprintf(err, errlen, "%s: %s: the input has %d %s stream%s (numbered from 0)", d->path,
                     VKCU_SETTING_IS(kinds[k].setting, n), have, kinds[k].kind, have == 1 ? "" : "s");
        return VKCU_ERR_USAGE;
    }
    return 0;
}

int vkcu_demux_picked(const vkcu_demux *d, int index, int audio_streams, int subtitle_streams)
{
    enum AVMediaType type = d->fmt->streams[index]->codecpar->codec_type;
    int pick = type == AVMEDIA_TYPE_AUDIO ? audio_streams : type == AVMEDIA_TYPE_SUBTITLE ? subtitle_streams
                                                                                          : VKCU_STREAMS_ALL;
    if (pick == VKCU_STREAMS_ALL)
        return 1;
    return pick != VKCU_STREAMS_NONE && nb_of_kind(d, type, (unsigned)index) == pick - 1;
}
