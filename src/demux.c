/*
 * Demux stage: opens the input with libavformat, picks the video stream and
 * turns every way an input can be wrong into one line that names the file.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <libavutil/avstring.h>

#include "log.h"
#include "stage.h"

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
    return vkcu_stop_requested();
}

int vkcu_demux_open(const char *path, vkcu_demux **out, char *err, size_t errlen)
{
    return vkcu_demux_open_io(path, NULL, out, err, errlen);
}

int vkcu_demux_open_io(const char *path, AVIOContext *pb, vkcu_demux **out, char *err, size_t errlen)
{
    int fifo = 0;
    vkcu_demux *d = NULL;
    int ret;
    *out = NULL;
    if (!pb && strcmp(path, "-")) {
        struct stat st;
        if (stat(path, &st) < 0) {
            snprintf(err, errlen, "%s: %s (check the path)", path,
                     errno == ENOENT ? "no such file" : strerror(errno));
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
        fifo = S_ISFIFO(st.st_mode);
    }
    d = av_mallocz(sizeof(*d));
    if (!d || !(d->fmt = avformat_alloc_context())) {
        av_free(d);
        return AVERROR(ENOMEM);
    }
    d->path = path;
    d->fmt->interrupt_callback = (AVIOInterruptCB){ stop_requested_cb, NULL };
    d->fmt->pb = pb;
    if (fifo)
        fifo_open_begin();
    ret = avformat_open_input(&d->fmt, strcmp(path, "-") ? path : "pipe:0", NULL, NULL);
    if (fifo)
        fifo_open_end();
    if (ret < 0 && vkcu_stop_requested()) {
        snprintf(err, errlen, "%s: interrupted while opening", path);
        ret = VKCU_ERR_INTERRUPT;
        goto fail;
    }
    if (ret < 0) {
        char buf[128];
        if (ret == AVERROR_INVALIDDATA)
            snprintf(err, errlen, "%s: not a media file vkcu can read (unknown or corrupt format)", path);
        else
            snprintf(err, errlen, "%s: cannot open: %s", path, vkcu_err_str(ret, buf, sizeof(buf)));
        ret = VKCU_ERR_INPUT;
        goto fail;
    }
    ret = avformat_find_stream_info(d->fmt, NULL);
    if (ret < 0 && vkcu_stop_requested()) {
        snprintf(err, errlen, "%s: interrupted while opening", path);
        ret = VKCU_ERR_INTERRUPT;
        goto fail;
    }
    /* Past the open, a stop is seen between packets, as the job loop checks it. */
    d->fmt->interrupt_callback.callback = NULL;
    if (ret < 0) {
        snprintf(err, errlen, "%s: cannot read stream information (truncated or corrupt file)", path);
        ret = VKCU_ERR_INPUT;
        goto fail;
    }
    ret = av_find_best_stream(d->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
    if (ret < 0) {
        snprintf(err, errlen, "%s: has no video stream", path);
        ret = VKCU_ERR_INPUT;
        goto fail;
    }
    d->video_index = ret;
    d->video = d->fmt->streams[ret];
    AVCodecParameters *par = d->video->codecpar;
    if (par->width <= 0 || par->height <= 0 || par->format < 0) {
        snprintf(err, errlen, "%s: video stream %d has no decodable picture (truncated or corrupt)", path, ret);
        ret = VKCU_ERR_INPUT;
        goto fail;
    }
    if (!avcodec_find_decoder(par->codec_id)) {
        snprintf(err, errlen, "%s: unsupported video codec '%s'", path, avcodec_get_name(par->codec_id));
        ret = VKCU_ERR_INPUT;
        goto fail;
    }
    for (unsigned i = 0; i < d->fmt->nb_streams; i++)
        if ((int)i != d->video_index && d->fmt->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_VIDEO)
            d->fmt->streams[i]->discard = AVDISCARD_ALL;
    d->frame_rate = av_guess_frame_rate(d->fmt, d->video, NULL);
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

int vkcu_demux_read(vkcu_demux *d, AVPacket *pkt, char *err, size_t errlen)
{
    int ret = av_read_frame(d->fmt, pkt);
    if (ret == AVERROR_EOF || ret >= 0)
        return ret;
    if (avio_feof(d->fmt->pb))
        return AVERROR_EOF;
    char buf[128];
    snprintf(err, errlen, "%s: read error: %s", d->path, vkcu_err_str(ret, buf, sizeof(buf)));
    return VKCU_ERR_INPUT;
}

int vkcu_demux_seek(vkcu_demux *d, int64_t ts)
{
    return avformat_seek_file(d->fmt, d->video_index, INT64_MIN, ts, ts, 0);
}

void vkcu_demux_close(vkcu_demux **pd)
{
    vkcu_demux *d = *pd;
    if (!d)
        return;
    avformat_close_input(&d->fmt);
    av_freep(pd);
}
