/*
 * Demux stage: opens the input with libavformat, picks the video stream and
 * turns every way an input can be wrong into one line that names the file.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <libavutil/avstring.h>

#include "log.h"
#include "stage.h"

int vkcu_demux_open(const char *path, vkcu_demux **out, char *err, size_t errlen)
{
    vkcu_demux *d = NULL;
    int ret;
    *out = NULL;
    if (strcmp(path, "-")) {
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
    }
    d = av_mallocz(sizeof(*d));
    if (!d)
        return AVERROR(ENOMEM);
    d->path = path;
    ret = avformat_open_input(&d->fmt, strcmp(path, "-") ? path : "pipe:0", NULL, NULL);
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
