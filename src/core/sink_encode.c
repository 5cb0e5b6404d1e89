/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Encode sink: libavcodec encoder + libavformat muxer. The container
 * follows the output's extension; `.y4m` and `.nut` get raw frames. Other
 * streams (audio, subtitles, data) are copied, with container metadata,
 * chapters and rotation; audio the container cannot hold is encoded
 * (audio_encode.h), text subtitles converted (subtitle_text.h). Colour tags and HDR metadata come from the chain's
 * output format. Encoding and muxing run on their own thread behind a
 * bounded queue. Output goes to a temporary name and is renamed at the end.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libavutil/avstring.h>
#include <libavutil/display.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>

#include "util/log.h"
#include "encoder_files.h"
#include "audio_encode.h"
#include "subtitle_text.h"
#include "encoders.h"
#include "sink.h"
#include "outfile.h"
#include "timing.h"
#include "gpu/vkencode.h"

/* Frames waiting for the encoder thread: the bound keeps memory flat when
 * the encoder is slower than decode (GPU frames hold pinned buffers). */
#define QUEUE_FRAMES 8
/* GOP-parallel encoding holds a GOP per worker: at most this many frames,
 * and this many bytes of them. */
#define GOP_QUEUE_FRAMES 192
#define GOP_QUEUE_BYTES ((int64_t)1 << 30)
#define MAX_GOP_WORKERS 8
/* Queue slots: frames plus stream-copied packets between them (audio,
 * subtitles). */
#define QUEUE_ITEMS 512

typedef struct queue_item {
    AVFrame *frame;         /* a video frame to encode, or */
    AVPacket *pkt;          /* a stream-copied packet, already mapped to its output stream */
    int64_t index;          /* frames: number in the stream (GOP-parallel: which worker) */
    int state;              /* GOP-parallel frames: 0 queued, 1 being encoded, 2 encoded into pkt */
} queue_item;

/* GOP-parallel encoding (intra-only codecs whose frames depend only on the
 * GOP's first, FFV1): worker w encodes GOPs w, w + n, w + 2n ... with its own
 * encoder context, opened with the same settings, so that every worker sees
 * its GOPs at frame numbers that are multiples of the GOP size, where the
 * encoder starts a key frame and resets its state. The packets are the ones
 * one encoder would have made; the encoder thread writes them in order. */
typedef struct gop_worker {
    vkcu_sink *s;
    AVCodecContext *enc;
    AVPacket *pkt;
    pthread_t thread;
    int running;
    int64_t next;           /* the next frame number this worker encodes */
} gop_worker;

typedef struct encode_sink {
    AVFormatContext *oc;
    AVCodecContext *enc;
    AVStream *vst;
    int *stream_map;        /* input stream -> output stream, -1: dropped */
    int nb_map;
    vkcu_audio_enc **audio; /* per input stream: its re-encoder (audio the container cannot hold), or NULL */
    vkcu_sub_text **subs;   /* per input stream: its text conversion (subtitles the container cannot hold), or NULL */
    AVPacket *pkt;
    AVFrame *hw_frame;      /* Vulkan encode: the uploaded frame */
    AVBufferRef *vk_device; /* Vulkan encode: the GPU's shared device (gpu/device.c) */
    vkcu_vkencode_timer *timer; /* Vulkan encode: timestamps around the encoder's submissions (encoder thread) */
    int64_t video_bytes;    /* bytes of the video packets written (encoder thread) */
    vkcu_frame_sync sync;   /* frames onto the encoder's 1/frame rate, as the muxer wants (job thread) */
    int to_stdout;          /* -o -: the output is standard output */
    int64_t *last_dts;      /* per output stream: the last dts muxed (encoder thread) */
    char tmp[4200];
    vkcu_encoder_files files; /* what the encoder options make the encoder write, under the output rule */
    int header_written;
    int64_t frames;         /* frames handed to the encoder (encoder thread) */
    /* Image outputs (image2): IMAGE_ONE, one file (-o g.png, written as
     * ffmpeg's -update 1 writes it: one frame, else an error); IMAGE_SEQ, a
     * numbered sequence (-o f%03d.png), each image its own file under the
     * output rule, numbered from 1 as ffmpeg numbers them. */
    enum { IMAGE_NONE, IMAGE_ONE, IMAGE_SEQ } image;
    int64_t images;         /* images written (encoder thread) */
    /* The encoder thread owns enc and oc between open and close: it encodes
     * frames and writes every packet (encoded and copied) in queue order, so
     * the muxer sees one writer and the output bytes do not depend on timing. */
    pthread_t thread;
    int thread_running;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    queue_item queue[QUEUE_ITEMS];
    int q_head, q_count, q_frames;
    int finishing;          /* no more items: flush the encoder and end */
    int aborting;           /* job failed: drop what is queued and end */
    int thread_ret;         /* first error of the encoder thread (or of a worker) */
    int64_t next_index;     /* number of the next frame enqueued */
    int max_frames;         /* frames the queue holds */
    gop_worker *gw;         /* GOP-parallel workers (nb_gw > 1), else NULL */
    int nb_gw, gop;
    double t_encode, t_mux, t_idle; /* encoder thread time, seconds (--stats) */
    char thread_err[512];
} encode_sink;

/* Encoders that print to stderr themselves (x265, SVT-AV1) stay quiet below
 * --log-level verbose, so the progress line and errors remain readable. */
static void quiet_encoder_logs(AVCodecContext *enc, const AVCodec *codec, const char *user_opts)
{
    if (vkcu_log_level() >= VKCU_LOG_VERBOSE)
        return;
    if (!strcmp(codec->name, "libx265") && !(user_opts && strstr(user_opts, "x265-params")))
        av_opt_set(enc->priv_data, "x265-params", "log-level=error", 0);
    if (!strcmp(codec->name, "libsvtav1"))
        setenv("SVT_LOG", "1", 0);
}

/* HDR static metadata of the output format, for the encoder (x265, SVT-AV1
 * write it into the bitstream) and, through coded_side_data, the muxer
 * (Matroska MasteringMetadata, MP4 mdcv/clli). */
static int set_hdr_side_data(AVCodecContext *enc, const vkcu_video_format *fmt)
{
    if (fmt->has_mastering) {
        AVFrameSideData *sd = av_frame_side_data_new(&enc->decoded_side_data, &enc->nb_decoded_side_data,
                                                     AV_FRAME_DATA_MASTERING_DISPLAY_METADATA,
                                                     sizeof(AVMasteringDisplayMetadata), 0);
        if (!sd)
            return AVERROR(ENOMEM);
        memcpy(sd->data, &fmt->mastering, sizeof(fmt->mastering));
    }
    if (fmt->has_cll) {
        AVFrameSideData *sd = av_frame_side_data_new(&enc->decoded_side_data, &enc->nb_decoded_side_data,
                                                     AV_FRAME_DATA_CONTENT_LIGHT_LEVEL, sizeof(AVContentLightMetadata), 0);
        if (!sd)
            return AVERROR(ENOMEM);
        memcpy(sd->data, &fmt->cll, sizeof(fmt->cll));
    }
    return 0;
}

static void *encode_thread_main(void *arg);
static int setup_workers(vkcu_sink *s, const AVCodec *codec, const vkcu_video_format *fmt, AVRational tb,
                         int global_header);
static int start_workers(vkcu_sink *s);

/* An encoder context with every setting of the job (several identical ones
 * for GOP-parallel encoding). Errors go to s->err. */
static int configure_encoder(vkcu_sink *s, const AVCodec *codec, const vkcu_video_format *fmt, AVRational tb,
                             int global_header, AVCodecContext **out)
{
    const vkcu_job_params *p = s->params;
    const vkcu_demux *d = s->demux;
    const char *path = p->job.output;
    /* the options with the encoder's own files renamed to their temporaries */
    const char *user_opts = ((encode_sink *)s->priv)->files.opts ? ((encode_sink *)s->priv)->files.opts
                                                                  : p->job.encoder_opts;
    int ret = 0;
    AVCodecContext *enc = avcodec_alloc_context3(codec);
    if (!enc)
        return AVERROR(ENOMEM);
    enc->width = fmt->width;
    enc->height = fmt->height;
    enc->pix_fmt = fmt->pix_fmt;
    enc->time_base = tb;
    enc->framerate = ((encode_sink *)s->priv)->sync.rate;
    /* The frames' aspect ratio, as ffmpeg gives the encoder; the stream's when they have none. */
    enc->sample_aspect_ratio = fmt->sar.num > 0 ? fmt->sar : d->video->codecpar->sample_aspect_ratio;
    enc->colorspace = fmt->matrix;
    enc->color_range = fmt->range;
    enc->color_primaries = fmt->primaries;
    enc->color_trc = fmt->transfer;
    enc->chroma_sample_location = fmt->chroma_loc;
    /* Interlaced frames: the field order in the stream's parameters (the
     * container's field flags), as the ffmpeg CLI sets it from the first
     * frame (TB/BT, TT/BB for MJPEG). Progressive frames from an interlaced
     * stream (deinterlaced) say so; those of a progressive one leave it
     * unset, as vkcu always has. */
    enum AVFieldOrder src_order = d->video->codecpar->field_order;
    if (fmt->field_order == AV_FIELD_TT || fmt->field_order == AV_FIELD_BB)
        enc->field_order = codec->id == AV_CODEC_ID_MJPEG ? fmt->field_order
                           : fmt->field_order == AV_FIELD_TT ? AV_FIELD_TB
                                                             : AV_FIELD_BT;
    else if (fmt->field_order == AV_FIELD_PROGRESSIVE && src_order != AV_FIELD_UNKNOWN &&
             src_order != AV_FIELD_PROGRESSIVE)
        enc->field_order = AV_FIELD_PROGRESSIVE;
    ret = set_hdr_side_data(enc, fmt);
    if (ret < 0)
        goto fail;
    if (p->job.gop > 0)
        enc->gop_size = p->job.gop;
    if (p->job.bitrate > 0)
        enc->bit_rate = p->job.bitrate;
    if (p->job.crf >= 0 && av_opt_set_int(enc->priv_data, "crf", p->job.crf, 0) < 0 &&
        av_opt_set_int(enc->priv_data, "qp", p->job.crf, 0) < 0)
        LOGW("%s: encoder %s has no crf (or qp) option; %s ignored", path, codec->name, VKCU_SETTING("crf"));
    /* Named presets and tunes against the encoder's list, before its library sees (and prints about) them. */
    char why[700];
    if (p->job.preset && *p->job.preset &&
        vkcu_encoder_check_choice(codec, "preset", p->job.preset, why, sizeof(why)) < 0) {
        snprintf(s->err, s->errlen, "%s: %s", path, why);
        ret = VKCU_ERR_USAGE;
        goto fail;
    }
    if (p->job.preset && *p->job.preset && av_opt_set(enc->priv_data, "preset", p->job.preset, 0) < 0) {
        snprintf(s->err, s->errlen, "%s: encoder %s has no preset '%s'", path, codec->name, p->job.preset);
        ret = VKCU_ERR_USAGE;
        goto fail;
    }
    /* Encoder threads as the ffmpeg CLI sets them: automatic (libavcodec's
     * default is 1, which leaves x264/x265 on one frame thread).
     * --encoder-opt threads=N still overrides. */
    enc->thread_count = 0;
    vkcu_vkencode_defaults(enc);
    quiet_encoder_logs(enc, codec, user_opts);
    if (user_opts && *user_opts) {
        AVDictionary *opts = NULL;
        if (av_dict_parse_string(&opts, user_opts, "=", ":", 0) < 0) {
            snprintf(s->err, s->errlen, "%s: cannot parse '%s' (expected key=value:key=value)",
                     VKCU_SETTING("encoder_opts"), p->job.encoder_opts);
            av_dict_free(&opts);
            ret = VKCU_ERR_USAGE;
            goto fail;
        }
        const AVDictionaryEntry *t = NULL;
        while ((t = av_dict_iterate(opts, t))) {
            if ((!strcmp(t->key, "preset") || !strcmp(t->key, "tune")) &&
                vkcu_encoder_check_choice(codec, t->key, t->value, why, sizeof(why)) < 0) {
                snprintf(s->err, s->errlen, "%s: %s", VKCU_SETTING("encoder_opts"), why);
                av_dict_free(&opts);
                ret = VKCU_ERR_USAGE;
                goto fail;
            }
            if (av_opt_set(enc, t->key, t->value, AV_OPT_SEARCH_CHILDREN) < 0) {
                snprintf(s->err, s->errlen, "%s: %s has no option %s=%s", VKCU_SETTING("encoder_opts"), codec->name,
                         t->key, t->value);
                av_dict_free(&opts);
                ret = VKCU_ERR_USAGE;
                goto fail;
            }
        }
        av_dict_free(&opts);
    }
    if (global_header)
        enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    *out = enc;
    return 0;
fail:
    avcodec_free_context(&enc);
    return ret;
}


/* An audio stream the job encodes rather than copies: the one the container
 * cannot hold (with the container's audio encoder), or every one with a
 * named audio_encoder. 1: encoded (its output stream mapped); 0: copy or
 * drop it as other streams; <0: the job fails (a named encoder that cannot
 * be set up), with s->err set. */
static int audio_stream(vkcu_sink *s, const AVOutputFormat *ofmt, AVStream *ist, int copy)
{
    encode_sink *e = s->priv;
    const vkcu_job_params *p = s->params;
    const char *named =
        p->job.audio_encoder && *p->job.audio_encoder && strcmp(p->job.audio_encoder, "auto") ? p->job.audio_encoder : NULL;
    if ((named && !strcmp(named, "copy")) || (copy && !named) || (ofmt->flags & AVFMT_NOTIMESTAMPS))
        return 0;
    const AVCodec *codec = named ? avcodec_find_encoder_by_name(named) : vkcu_audio_encoder_for(ofmt);
    if (!codec)
        return 0; /* the check refused unknown names: here, no encoder fits the container */
    char why[512] = "";
    int ret = vkcu_audio_enc_open(&e->audio[ist->index], ist, codec, e->oc, why, sizeof(why));
    if (ret < 0) {
        if (named) {
            snprintf(s->err, s->errlen, "%s: stream %d (audio %s): %s: %s", p->job.output, ist->index,
                     avcodec_get_name(ist->codecpar->codec_id), VKCU_SETTING_IS("audio_encoder", named), why);
            return VKCU_ERR_USAGE;
        }
        LOGW("%s: stream %d (audio %s) cannot go into %s, nor be encoded with %s (%s); dropped", s->demux->path,
             ist->index, avcodec_get_name(ist->codecpar->codec_id), ofmt->name, codec->name, why);
        ist->discard = AVDISCARD_ALL;
        return 1;
    }
    e->stream_map[ist->index] = vkcu_audio_enc_stream(e->audio[ist->index]);
    if (named)
        LOGV("%s: stream %d (audio %s) encoded with %s", s->demux->path, ist->index,
             avcodec_get_name(ist->codecpar->codec_id), codec->name);
    else
        LOGI("%s: stream %d (audio %s) cannot go into %s: encoded with %s (%s chooses another, %s drops it)",
             s->demux->path, ist->index, avcodec_get_name(ist->codecpar->codec_id), ofmt->name, codec->name,
             VKCU_SETTING("audio_encoder"), VKCU_SETTING_IS("no_audio", "1"));
    return 1;
}

/* A subtitle stream the container cannot hold: text is converted to the
 * text codec it holds (subtitle_text.h); what cannot be is dropped with a
 * warning naming the stream. */
static void subtitle_stream(vkcu_sink *s, const AVOutputFormat *ofmt, AVStream *ist)
{
    encode_sink *e = s->priv;
    const char *path = s->demux->path, *name = avcodec_get_name(ist->codecpar->codec_id);
    const char *none = VKCU_SETTING_IS("subtitle_streams", "none");
    enum AVCodecID target = ofmt->flags & AVFMT_NOTIMESTAMPS ? AV_CODEC_ID_NONE : vkcu_sub_text_target(ofmt);
    ist->discard = AVDISCARD_ALL;
    if (!vkcu_sub_is_text(ist->codecpar->codec_id)) {
        if (target != AV_CODEC_ID_NONE)
            LOGW("%s: stream %d (subtitle %s) cannot go into %s, and bitmap subtitles cannot become text (%s); "
                 "dropped (%s drops subtitles without this warning)", path, ist->index, name, ofmt->name,
                 avcodec_get_name(target), none);
        else
            LOGW("%s: stream %d (subtitle %s) cannot go into %s; dropped (%s drops subtitles without this warning)",
                 path, ist->index, name, ofmt->name, none);
        return;
    }
    if (target == AV_CODEC_ID_NONE) {
        LOGW("%s: stream %d (subtitle %s) cannot go into %s, which holds no text subtitles; dropped (%s drops "
             "subtitles without this warning)", path, ist->index, name, ofmt->name, none);
        return;
    }
    char why[512] = "";
    if (vkcu_sub_text_open(&e->subs[ist->index], ist, target, e->oc, why, sizeof(why)) < 0) {
        LOGW("%s: stream %d (subtitle %s) cannot go into %s, nor be converted to %s (%s); dropped", path, ist->index,
             name, ofmt->name, avcodec_get_name(target), why);
        return;
    }
    ist->discard = AVDISCARD_DEFAULT;
    e->stream_map[ist->index] = vkcu_sub_text_stream(e->subs[ist->index]);
    LOGI("%s: stream %d (subtitle %s) cannot go into %s: converted to %s (text and timings kept, styling not; %s "
         "drops it)", path, ist->index, name, ofmt->name, avcodec_get_name(target), none);
}

/* Whether a muxer that does not say which codecs it holds (mpegts, mxf:
 * avformat_query_codec answers "unknown") takes input stream `ist`, tried
 * as ffmpeg's -c copy tries it: a header written to memory with the video
 * stream and this one. 1: it does; 0: it refuses this stream (the video
 * alone is taken); -1: the trial says nothing (the video alone is refused,
 * or the muxer writes no file of its own): copy, as ffmpeg would. */
static int muxer_trial(const AVOutputFormat *ofmt, const AVCodecContext *venc, AVRational vtb, const AVStream *ist)
{
    if (ofmt->flags & AVFMT_NOFILE)
        return -1;
    int result[2];
    for (int with = 0; with < 2; with++) {
        AVFormatContext *oc = NULL;
        AVStream *v, *o = NULL;
        int ret = avformat_alloc_output_context2(&oc, ofmt, NULL, NULL);
        if (ret >= 0 && (!(v = avformat_new_stream(oc, NULL)) || (with && !(o = avformat_new_stream(oc, NULL)))))
            ret = AVERROR(ENOMEM);
        if (ret >= 0 && (ret = avcodec_parameters_from_context(v->codecpar, venc)) >= 0) {
            v->time_base = vtb;
            if (o && (ret = avcodec_parameters_copy(o->codecpar, ist->codecpar)) >= 0) {
                o->codecpar->codec_tag = 0;
                o->time_base = ist->time_base;
            }
        }
        if (ret >= 0)
            ret = avio_open_dyn_buf(&oc->pb);
        if (ret >= 0) {
            ret = avformat_write_header(oc, NULL);
            uint8_t *buf = NULL;
            avio_close_dyn_buf(oc->pb, &buf);
            oc->pb = NULL;
            av_free(buf);
        }
        avformat_free_context(oc);
        if (ret == AVERROR(ENOMEM))
            return -1;
        result[with] = ret >= 0;
    }
    return !result[0] ? -1 : result[1];
}

/* Undoes what open_encoder made (a candidate that did not open). */
static void drop_encoder(vkcu_sink *s)
{
    encode_sink *e = s->priv;
    avcodec_free_context(&e->enc);
    av_frame_free(&e->hw_frame);
    av_buffer_unref(&e->vk_device);
    vkcu_frame_sync_free(&e->sync);
    vkcu_encoder_files_abort(&e->files);
    memset(&e->files, 0, sizeof(e->files));
    s->gpu_frames = NULL;
}

/* Finds, checks, configures and opens encoder `encname` for frames of `fmt`
 * (a Vulkan encoder with its device and frames context); *tb in: the
 * frames' time base, out: the encoder's. Errors go to s->err; what was made
 * is undone. */
static int open_encoder(vkcu_sink *s, const char *encname, const vkcu_video_format *fmt, const AVOutputFormat *ofmt,
                        AVRational *tb, const AVCodec **out)
{
    encode_sink *e = s->priv;
    const vkcu_job_params *p = s->params;
    vkcu_demux *d = s->demux;
    const char *path = p->job.output;
    const vkcu_vkencoder *vke = vkcu_vkencode_find(encname);
    int ret;
    if (vke && !vke->video_op && s->result->path == VKCU_PATH_CPU) {
        /* FFmpeg's compute encoders take frames from the GPU's output ring. */
        snprintf(s->err, s->errlen, "%s: %s runs on the GPU backend only (this job runs on the CPU); use %s", path,
                 VKCU_SETTING_IS("encoder", encname), VKCU_SETTING_IS("encoder", vke->cpu_twin));
        return VKCU_ERR_DEVICE;
    }
    const AVCodec *codec = avcodec_find_encoder_by_name(encname);
    if (!codec || codec->type != AVMEDIA_TYPE_VIDEO) {
        char names[400];
        vkcu_video_encoder_names(NULL, names, sizeof(names));
        if (vke && !codec)
            snprintf(s->err, s->errlen, "%s: encoder %s is not available in this build (FFmpeg %s; FFmpeg 8.1 has "
                     "it); use %s", path, encname, av_version_info(), VKCU_SETTING_IS("encoder", vke->cpu_twin));
        else
            snprintf(s->err, s->errlen, "%s: %s '%s' is not available in this build (its video encoders: %s)", path,
                     codec ? "not a video encoder:" : "encoder", encname, names);
        return VKCU_ERR_USAGE;
    }
    if (vke) {
        /* Before anything is created: a GPU that cannot run it, no output.
         * The GPU backend encodes on its own GPU; the CPU path (video
         * encoders only) on any that can. */
        char why[512];
        int cuda = s->result->path == VKCU_PATH_CPU ? -1 : p->settings.device;
        if (vkcu_vkencode_device(encname, cuda, &e->vk_device, why, sizeof(why)) < 0) {
            snprintf(s->err, s->errlen, "%s: %s: %s; use %s%s", path, VKCU_SETTING_IS("encoder", encname), why,
                     VKCU_SETTING_IS("encoder", vke->cpu_twin), vke->video_op ? " or auto" : "");
            return VKCU_ERR_DEVICE;
        }
    }
    if (!e->vk_device) {
        /* What the encoder (and its profile) takes, before its library refuses it in its own words. */
        char why[900];
        if ((ret = vkcu_encoder_check_pix_fmt(codec, p->job.encoder_opts, fmt->pix_fmt, why, sizeof(why))) < 0) {
            snprintf(s->err, s->errlen, "%s: %s", path, why);
            goto fail;
        }
    }
    if (vkcu_muxer_takes(ofmt, codec->id) == 0) {
        char takes[300];
        vkcu_muxer_encoders(ofmt, takes, sizeof(takes));
        snprintf(s->err, s->errlen, "%s: %s cannot hold %s video (pick another extension or %s%s%s)", path,
                 ofmt->name, avcodec_get_name(codec->id), VKCU_SETTING("encoder"), takes[0] ? ": it takes " : "", takes);
        ret = VKCU_ERR_USAGE;
        goto fail;
    }
    /* The encoder's time base is 1/frame rate, and frames are repeated or
     * dropped as the container wants, both as ffmpeg's CLI does. */
    const void *rates = NULL;
    int nb_rates = 0;
    if (avcodec_get_supported_config(NULL, codec, AV_CODEC_CONFIG_FRAME_RATE, 0, &rates, &nb_rates) < 0)
        rates = NULL;
    vkcu_frame_sync_init(&e->sync, vkcu_fps_mode_for(ofmt, d->fmt->nb_streams), fmt->frame_rate, *tb, rates);
    *tb = e->sync.tb_out;

    {
        const char *inputs[] = { p->job.input, p->job.pipeline_file, NULL };
        ret = vkcu_encoder_files_begin(&e->files, p->job.encoder_opts, codec->name, path, p->job.overwrite, inputs,
                                       s->err, s->errlen);
        if (ret < 0)
            goto fail;
    }
    ret = configure_encoder(s, codec, fmt, *tb, !!(ofmt->flags & AVFMT_GLOBALHEADER), &e->enc);
    if (ret < 0)
        goto fail;
    if (e->vk_device) {
        char why[512];
        ret = vkcu_vkencode_setup(e->enc, e->vk_device, fmt->pix_fmt, why, sizeof(why));
        if (ret < 0) {
            snprintf(s->err, s->errlen, "%s: %s: %s", path, VKCU_SETTING_IS("encoder", encname), why);
            goto fail;
        }
        e->hw_frame = av_frame_alloc();
        if (!e->hw_frame) {
            ret = AVERROR(ENOMEM);
            goto fail;
        }
        s->gpu_frames = e->enc->hw_frames_ctx;
    }
    ret = avcodec_open2(e->enc, codec, NULL);
    if (ret < 0) {
        char buf[128];
        const AVPixFmtDescriptor *pd = av_pix_fmt_desc_get(e->enc->pix_fmt);
        int subw = pd ? 1 << pd->log2_chroma_w : 1, subh = pd ? 1 << pd->log2_chroma_h : 1;
        if (vke) {
            /* Set-up on the GPU (shaders, buffers, queues) failed: the device's doing. */
            snprintf(s->err, s->errlen, "%s: cannot open encoder %s on the GPU: %s; use %s", path, codec->name,
                     vkcu_err_str(ret, buf, sizeof(buf)), VKCU_SETTING_IS("encoder", vke->cpu_twin));
            ret = ret == AVERROR(EINVAL) || ret == AVERROR_INVALIDDATA || ret == AVERROR_PATCHWELCOME ? VKCU_ERR_USAGE
                                                                                                   : VKCU_ERR_DEVICE;
        } else if (fmt->width > 8192 || fmt->height > 8192) {
            snprintf(s->err, s->errlen, "%s: encoder %s cannot take %dx%d frames (over its size limit); "
                     "use %s or a smaller input", path, codec->name, fmt->width, fmt->height,
                     VKCU_SETTING_IS("encoder", "ffv1"));
            ret = VKCU_ERR_INPUT;
        } else if (fmt->width % subw || fmt->height % subh) {
            /* x264/x265 refuse subsampled pictures of odd size with a generic error */
            snprintf(s->err, s->errlen, "%s: encoder %s cannot take %dx%d %s frames (not a multiple of the chroma "
                     "subsampling, %dx%d); use -2 for a side in scale, or %s", path, codec->name,
                     fmt->width, fmt->height, av_get_pix_fmt_name(e->enc->pix_fmt), subw, subh,
                     VKCU_SETTING_IS("encoder", "ffv1"));
            ret = VKCU_ERR_USAGE;
        } else {
            snprintf(s->err, s->errlen, "%s: cannot open encoder %s: %s (check %s/%s/%s)", path,
                     codec->name, vkcu_err_str(ret, buf, sizeof(buf)), VKCU_SETTING("crf"), VKCU_SETTING("preset"),
                     VKCU_SETTING("encoder_opts"));
            ret = VKCU_ERR_USAGE;
        }
        goto fail;
    }
    *out = codec;
    return 0;
fail:
    drop_encoder(s);
    return ret;
}

/* HDR pictures (PQ, HLG) the chain left at 8 bits: tagged rightly, but
 * banded, and seldom what was meant (a web preset on an HDR10 source): one
 * line saying how to get SDR or keep the bits. */
static void hdr_depth_warning(vkcu_sink *s, const vkcu_video_format *fmt)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt->pix_fmt);
    int pq = fmt->transfer == AVCOL_TRC_SMPTE2084;
    if (!d || d->comp[0].depth > 8 || (!pq && fmt->transfer != AVCOL_TRC_ARIB_STD_B67))
        return;
    LOGW("%s: HDR (%s) in 8 bits, which bands: for SDR BT.709 add tonemap=format=yuv420p to the chain (or use "
         "the preset hdr10-to-sdr); for HDR keep 10 bits (convert=format=yuv420p10le)",
         s->params->job.output, pq ? "PQ" : "HLG");
}

static int encode_open(vkcu_sink *s, const vkcu_video_format *fmt, AVRational tb)
{
    encode_sink *e = s->priv;
    const vkcu_job_params *p = s->params;
    vkcu_demux *d = s->demux;
    const char *path = p->job.output;
    int ret;
    const char *fmtname = NULL;
    const char *ext = strrchr(path, '.');
    /* "-": standard output, written as it comes (no temporary name). */
    e->to_stdout = !strcmp(path, "-");
    if (ext && !av_strcasecmp(ext, ".y4m"))
        fmtname = "yuv4mpegpipe";
    else if (ext && (!av_strcasecmp(ext, ".yuv") || !av_strcasecmp(ext, ".raw")))
        fmtname = "rawvideo";
    if (p->job.output_format) {
        fmtname = !strcmp(p->job.output_format, "y4m") ? "yuv4mpegpipe"
                  : !strcmp(p->job.output_format, "mkv") ? "matroska"
                                                     : p->job.output_format;
        if (!av_guess_format(fmtname, NULL, NULL)) {
            snprintf(s->err, s->errlen, "%s: no such container in this build (nut, yuv4mpegpipe, matroska, mp4, ...)",
                     VKCU_SETTING_IS("output_format", p->job.output_format));
            return VKCU_ERR_USAGE;
        }
    } else if (e->to_stdout) {
        snprintf(s->err, s->errlen, "%s: name the container of standard output with %s (nut, y4m, matroska, ...)",
                 VKCU_SETTING_IS("output", "-"), VKCU_SETTING("output_format"));
        return VKCU_ERR_USAGE;
    }
    const AVOutputFormat *ofmt = av_guess_format(fmtname, path, NULL);
    if (!ofmt) {
        snprintf(s->err, s->errlen, "%s: unknown output format (use an extension such as .mkv, .mp4, .nut, .y4m)", path);
        return VKCU_ERR_USAGE;
    }
    const char *encname = p->job.encoder && *p->job.encoder && strcmp(p->job.encoder, "auto")
                              ? p->job.encoder
                              : vkcu_default_encoder(ofmt, path, !!p->job.output_format);
    /* A GPU encoder the job prefers (a preset's gpu-encoder), tried first on
     * the GPU backend; where it cannot take the frames, `encname`. */
    const char *gpu_pick = p->job.gpu_encoder && *p->job.gpu_encoder && s->result->path != VKCU_PATH_CPU &&
                                   strcmp(p->job.gpu_encoder, encname) ? p->job.gpu_encoder : NULL;
    const AVCodec *codec = NULL;
    AVRational tb_in = tb;
    for (int pick = !gpu_pick; pick < 2; pick++) {
        const char *name = pick ? encname : gpu_pick;
        tb = tb_in;
        ret = open_encoder(s, name, fmt, ofmt, &tb, &codec);
        if (ret >= 0)
            break;
        if (!pick) {
            LOGV("%s: %s not used (%s); %s instead", path, name, s->err, encname);
            s->err[0] = 0;
            continue;
        }
        goto fail_out;
    }
    snprintf(s->result->encoder, sizeof(s->result->encoder), "%s", codec->name);
    if (!strcmp(ofmt->name, "image2") && !e->to_stdout)
        e->image = av_filename_number_test(path) ? IMAGE_SEQ : IMAGE_ONE;
    hdr_depth_warning(s, fmt);
    if (e->vk_device) {
        LOGV("%s: %s encodes on the GPU%s", path, codec->name, vkcu_vkencode_op(codec->name) ? "'s video encode queue"
                                                                                          : "'s compute queue");
        e->timer = vkcu_vkencode_timer_new(e->vk_device);
    }
    e->max_frames = QUEUE_FRAMES;
    if (!e->hw_frame && (ret = setup_workers(s, codec, fmt, tb, !!(ofmt->flags & AVFMT_GLOBALHEADER))) < 0)
        goto fail_out;

    /* The mov muxer moves the index at the trailer by reading the file
     * back: only MP4/MOV have one, and only a file can be re-read. */
    if (p->job.faststart && ((!strstr(ofmt->name, "mp4") && !strstr(ofmt->name, "mov") && strcmp(ofmt->name, "ipod")) ||
                         e->to_stdout)) {
        if (e->to_stdout)
            snprintf(s->err, s->errlen, "%s: the index is moved by re-reading the file; not possible on "
                     "standard output (write a file)", VKCU_SETTING("faststart"));
        else
            snprintf(s->err, s->errlen, "%s: only MP4/MOV outputs have an index to move (this output is %s)",
                     VKCU_SETTING("faststart"), ofmt->name);
        ret = VKCU_ERR_USAGE;
        goto fail_out;
    }
    /* Only now, with every option checked, does the output appear. A
     * sequence's files appear one by one (write_image); none of them may
     * be there already. */
    if (e->image == IMAGE_SEQ) {
        const char *inputs[] = { p->job.input, p->job.pipeline_file, NULL };
        ret = vkcu_outfile_check_sequence(path, p->job.overwrite, inputs, s->err, s->errlen);
        if (ret < 0)
            goto fail_out;
    } else if (!e->to_stdout) {
        const char *inputs[] = { p->job.input, p->job.pipeline_file, NULL };
        ret = vkcu_outfile_begin(path, p->job.overwrite, inputs, e->tmp, sizeof(e->tmp), s->err, s->errlen);
        if (ret < 0)
            goto fail_out;
    }
    const char *url = e->to_stdout ? "pipe:1" : e->tmp;
    ret = avformat_alloc_output_context2(&e->oc, ofmt, NULL, url);
    if (ret < 0)
        goto fail_out;
    /* y4m above 8 bits (C420p10, C422p10, ...) is what x264, x265 and
     * aomenc read, but FFmpeg's muxer writes it only at "unofficial"
     * compliance (ffmpeg -strict -1); without it 10-bit input failed here. */
    if (!strcmp(ofmt->name, "yuv4mpegpipe"))
        e->oc->strict_std_compliance = FF_COMPLIANCE_UNOFFICIAL;

    /* Streams: video first at the input's position, others copied. */
    e->nb_map = d->fmt->nb_streams;
    e->stream_map = av_calloc(e->nb_map, sizeof(int));
    e->audio = av_calloc(e->nb_map, sizeof(*e->audio));
    e->subs = av_calloc(e->nb_map, sizeof(*e->subs));
    if (!e->stream_map || !e->audio || !e->subs) {
        ret = AVERROR(ENOMEM);
        goto fail_out;
    }
    for (int i = 0; i < e->nb_map; i++) {
        AVStream *ist = d->fmt->streams[i];
        e->stream_map[i] = -1;
        if (i == d->video_index) {
            e->vst = avformat_new_stream(e->oc, NULL);
            if (!e->vst) {
                ret = AVERROR(ENOMEM);
                goto fail_out;
            }
            AV_CHECK(avcodec_parameters_from_context(e->vst->codecpar, e->enc));
            e->vst->time_base = tb;
            e->vst->avg_frame_rate = e->sync.rate;
            e->vst->disposition = ist->disposition;
            av_dict_copy(&e->vst->metadata, ist->metadata, 0);
            /* Rotation (display matrix) and stereo/spherical descriptions
             * travel with the stream; HDR metadata came from the format. */
            for (int k = 0; k < ist->codecpar->nb_coded_side_data; k++) {
                const AVPacketSideData *sd = &ist->codecpar->coded_side_data[k];
                if (sd->type != AV_PKT_DATA_DISPLAYMATRIX && sd->type != AV_PKT_DATA_STEREO3D &&
                    sd->type != AV_PKT_DATA_SPHERICAL)
                    continue;
                AVPacketSideData *nsd = av_packet_side_data_new(&e->vst->codecpar->coded_side_data,
                                                                &e->vst->codecpar->nb_coded_side_data, sd->type,
                                                                sd->size, 0);
                if (!nsd) {
                    ret = AVERROR(ENOMEM);
                    goto fail_out;
                }
                memcpy(nsd->data, sd->data, sd->size);
            }
            e->stream_map[i] = e->vst->index;
            continue;
        }
        enum AVMediaType t = ist->codecpar->codec_type;
        if (t != AVMEDIA_TYPE_AUDIO && t != AVMEDIA_TYPE_SUBTITLE && t != AVMEDIA_TYPE_DATA &&
            t != AVMEDIA_TYPE_ATTACHMENT) {
            ist->discard = AVDISCARD_ALL;
            continue;
        }
        if (!vkcu_demux_picked(d, i, p->job.audio_streams, p->job.subtitle_streams)) {
            LOGV("%s: stream %d (%s %s) not picked (%s)", d->path, i, av_get_media_type_string(t),
                 avcodec_get_name(ist->codecpar->codec_id),
                 VKCU_SETTING(t == AVMEDIA_TYPE_AUDIO ? "audio_streams" : "subtitle_streams"));
            ist->discard = AVDISCARD_ALL;
            continue;
        }
        if (t == AVMEDIA_TYPE_AUDIO && p->job.no_audio) {
            LOGV("%s: stream %d (audio %s) dropped (%s)", d->path, i, avcodec_get_name(ist->codecpar->codec_id),
                 VKCU_SETTING_IS("no_audio", "1"));
            ist->discard = AVDISCARD_ALL;
            continue;
        }
        /* Copied where the container holds the codec; where the muxer
         * does not say (mpegts), where a trial header takes it. */
        int takes = vkcu_muxer_takes(ofmt, ist->codecpar->codec_id);
        int copy = !(ofmt->flags & AVFMT_NOTIMESTAMPS) &&
                   (takes == 1 || (takes < 0 && muxer_trial(ofmt, e->enc, tb, ist) != 0));
        if (t == AVMEDIA_TYPE_AUDIO && (ret = audio_stream(s, ofmt, ist, copy)) != 0) {
            if (ret < 0)
                goto fail_out;
            continue; /* encoded */
        }
        if (!copy && t == AVMEDIA_TYPE_SUBTITLE) {
            subtitle_stream(s, ofmt, ist);
            continue;
        }
        if (!copy) {
            if (vkcu_muxer_is_image(ofmt))
                LOGV("%s: stream %d (%s %s) dropped: images hold no %s", d->path, i, av_get_media_type_string(t),
                     avcodec_get_name(ist->codecpar->codec_id), av_get_media_type_string(t));
            else if (t == AVMEDIA_TYPE_AUDIO)
                LOGW("%s: stream %d (audio %s) cannot go into %s, and no audio encoder of this build can; dropped "
                     "(%s drops audio without this warning)", d->path, i, avcodec_get_name(ist->codecpar->codec_id),
                     ofmt->name, VKCU_SETTING_IS("no_audio", "1"));
            else
                LOGW("%s: stream %d (%s %s) cannot go into %s; dropped", d->path, i, av_get_media_type_string(t),
                     avcodec_get_name(ist->codecpar->codec_id), ofmt->name);
            ist->discard = AVDISCARD_ALL; /* not read: nor does it count for where the output starts */
            continue;
        }
        AVStream *ost = avformat_new_stream(e->oc, NULL);
        if (!ost) {
            ret = AVERROR(ENOMEM);
            goto fail_out;
        }
        AV_CHECK(avcodec_parameters_copy(ost->codecpar, ist->codecpar));
        ost->codecpar->codec_tag = 0;
        ost->time_base = ist->time_base;
        ost->disposition = ist->disposition;
        av_dict_copy(&ost->metadata, ist->metadata, 0);
        e->stream_map[i] = ost->index;
    }
    av_dict_copy(&e->oc->metadata, d->fmt->metadata, 0);
    if (d->fmt->nb_chapters) {
        e->oc->chapters = av_calloc(d->fmt->nb_chapters, sizeof(*e->oc->chapters));
        if (!e->oc->chapters) {
            ret = AVERROR(ENOMEM);
            goto fail_out;
        }
        for (unsigned i = 0; i < d->fmt->nb_chapters; i++) {
            const AVChapter *ic = d->fmt->chapters[i];
            AVChapter *oc = av_mallocz(sizeof(*oc));
            if (!oc) {
                ret = AVERROR(ENOMEM);
                goto fail_out;
            }
            *oc = (AVChapter){ .id = ic->id, .time_base = ic->time_base, .start = ic->start, .end = ic->end };
            av_dict_copy(&oc->metadata, ic->metadata, 0);
            e->oc->chapters[e->oc->nb_chapters++] = oc;
        }
    }
    if (!(ofmt->flags & AVFMT_NOFILE)) {
        ret = avio_open(&e->oc->pb, url, AVIO_FLAG_WRITE);
        if (ret < 0) {
            char buf[128];
            snprintf(s->err, s->errlen, "%s: cannot create output: %s", path, vkcu_err_str(ret, buf, sizeof(buf)));
            ret = VKCU_ERR_OUTPUT;
            goto fail_out;
        }
    }
    /* y4m beyond 8 bits (yuv420p10 ...) is an extension of the format's
     * own definition that FFmpeg writes only when told to; it reads it back. */
    if (!strcmp(ofmt->name, "yuv4mpegpipe"))
        e->oc->strict_std_compliance = FF_COMPLIANCE_UNOFFICIAL;
    AVDictionary *mux_opts = NULL;
    if (p->job.faststart)
        av_dict_set(&mux_opts, "movflags", "+faststart", 0);
    if (e->image == IMAGE_ONE)
        av_dict_set(&mux_opts, "update", "1", 0); /* the name as it is, no number */
    ret = avformat_write_header(e->oc, &mux_opts);
    av_dict_free(&mux_opts);
    if (ret < 0) {
        char buf[128];
        snprintf(s->err, s->errlen, "%s: cannot write the %s header: %s%s", path, ofmt->name,
                 vkcu_err_str(ret, buf, sizeof(buf)), ret == AVERROR(ENOSPC) ? " (disk full)"
                 : e->to_stdout ? " (on standard output, use a container that needs no seeking: nut, y4m, matroska)" : "");
        ret = VKCU_ERR_OUTPUT;
        goto fail_out;
    }
    e->header_written = 1;
    e->pkt = av_packet_alloc();
    e->last_dts = av_malloc_array(e->oc->nb_streams, sizeof(*e->last_dts));
    for (unsigned i = 0; e->last_dts && i < e->oc->nb_streams; i++)
        e->last_dts[i] = AV_NOPTS_VALUE;
    if (!e->pkt || !e->last_dts) {
        ret = AVERROR(ENOMEM);
        goto fail_out;
    }
    pthread_mutex_init(&e->lock, NULL);
    pthread_cond_init(&e->cond, NULL);
    if (vkcu_thread_create(&e->thread, encode_thread_main, s) != 0) {
        pthread_mutex_destroy(&e->lock);
        pthread_cond_destroy(&e->cond);
        snprintf(s->err, s->errlen, "%s: cannot start the encoder thread", path);
        ret = AVERROR(EAGAIN);
        goto fail_out;
    }
    e->thread_running = 1;
    ret = start_workers(s);
    if (ret < 0)
        goto fail_out;
    LOGV("%s: %s in %s, %s", path, codec->name, ofmt->name, av_get_pix_fmt_name(fmt->pix_fmt));
    return 0;
fail:
fail_out:
    s->gpu_frames = NULL;
    if (!s->err[0]) {
        char buf[128];
        snprintf(s->err, s->errlen, "%s: cannot set up the output: %s", path, vkcu_err_str(ret, buf, sizeof(buf)));
    }
    return ret;
}

/* ---- encoder thread: everything below until the queue functions runs on it ---- */

static int thread_fail(vkcu_sink *s, int ret, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int thread_fail(vkcu_sink *s, int ret, const char *fmt, ...)
{
    encode_sink *e = s->priv;
    va_list ap;
    /* The first error wins (workers and the encoder thread may fail together). */
    pthread_mutex_lock(&e->lock);
    if (!e->thread_ret) {
        va_start(ap, fmt);
        vsnprintf(e->thread_err, sizeof(e->thread_err), fmt, ap);
        va_end(ap);
        e->thread_ret = ret;
    }
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
    return ret;
}

/* Timestamps the muxer would refuse are mended as ffmpeg's CLI mends them:
 * a dts after its pts, or a dts not after the previous one (an input with
 * broken timestamps, stream-copied), becomes the nearest valid value. */
static void mend_timestamps(vkcu_sink *s, AVPacket *pkt)
{
    encode_sink *e = s->priv;
    const AVOutputFormat *ofmt = e->oc->oformat;
    int64_t *last = &e->last_dts[pkt->stream_index];
    if (ofmt->flags & AVFMT_NOTIMESTAMPS)
        return;
    if (pkt->dts != AV_NOPTS_VALUE && pkt->pts != AV_NOPTS_VALUE && pkt->dts > pkt->pts) {
        /* The median of pts, dts and the next possible dts. */
        int64_t a = pkt->pts, b = pkt->dts, c = *last != AV_NOPTS_VALUE ? *last + 1 : INT64_MIN / 2;
        pkt->pts = pkt->dts = a + b + c - FFMIN3(a, b, c) - FFMAX3(a, b, c);
    }
    if (pkt->dts != AV_NOPTS_VALUE && *last != AV_NOPTS_VALUE) {
        int64_t min = *last + !(ofmt->flags & AVFMT_TS_NONSTRICT);
        if (pkt->dts < min) {
            LOGV("%s: stream %d: non-monotonic dts %lld after %lld; changed to %lld", s->params->job.output,
                 pkt->stream_index, (long long)pkt->dts, (long long)*last, (long long)min);
            if (pkt->pts >= pkt->dts)
                pkt->pts = FFMAX(pkt->pts, min);
            pkt->dts = min;
        }
    }
    *last = pkt->dts;
}

/* The next image of a sequence, as its own file under the output rule:
 * written under a temporary name and moved into place whole. */
static int write_image(vkcu_sink *s, AVPacket *pkt)
{
    encode_sink *e = s->priv;
    const vkcu_job_params *p = s->params;
    char name[4096], tmp[4200], err[768];
    int number = (int)(e->images + 1);
    if (av_get_frame_filename2(name, sizeof(name), p->job.output, number, 0) < 0)
        return thread_fail(s, VKCU_ERR_OUTPUT, "%s: cannot make the name of image %d from this pattern", p->job.output,
                           number);
    const char *inputs[] = { p->job.input, p->job.pipeline_file, NULL };
    int ret = vkcu_outfile_begin(name, p->job.overwrite, inputs, tmp, sizeof(tmp), err, sizeof(err));
    if (ret < 0)
        return thread_fail(s, ret, "%s", err);
    FILE *f = vkcu_outfile_fopen(tmp, "wb");
    int bad = !f || fwrite(pkt->data, 1, pkt->size, f) != (size_t)pkt->size;
    int en = errno;
    if (f && vkcu_outfile_fclose(f, tmp) != 0 && !bad) {
        bad = 1;
        en = errno;
    }
    if (bad) {
        vkcu_outfile_abort(tmp);
        return thread_fail(s, VKCU_ERR_OUTPUT, "%s: write error: %s%s", name, strerror(en),
                           en == ENOSPC ? " (disk full)" : "");
    }
    if ((ret = vkcu_outfile_commit(tmp, name, err, sizeof(err))) < 0)
        return thread_fail(s, ret, "%s", err);
    e->images++;
    e->video_bytes += pkt->size;
    return 0;
}

static int write_out(vkcu_sink *s, AVPacket *pkt)
{
    encode_sink *e = s->priv;
    double t = vkcu_now();
    int64_t pts = pkt->pts, dts = pkt->dts;
    int index = pkt->stream_index;
    if (index == e->vst->index && e->image == IMAGE_SEQ) {
        int ret = write_image(s, pkt);
        e->t_mux += vkcu_now() - t;
        return ret;
    }
    if (index == e->vst->index && e->image == IMAGE_ONE && e->images++) {
        /* ffmpeg refuses this too ("Cannot write more than one file with the same name"). */
        const char *path = s->params->job.output, *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
        if (!dot || (slash && dot < slash))
            dot = path + strlen(path);
        return thread_fail(s, VKCU_ERR_USAGE, "%s: one image holds one frame, and the input has more: add %s for "
                           "one image (a thumbnail; with %s T, the frame at T), or name a sequence such as "
                           "'%.*s%%03d%s'", path, VKCU_SETTING_IS("max_frames", "1"), VKCU_SETTING("start_time"),
                           (int)(dot - path), path, dot);
    }
    mend_timestamps(s, pkt);
    if (index == e->vst->index)
        e->video_bytes += pkt->size;
    int ret = av_interleaved_write_frame(e->oc, pkt);
    e->t_mux += vkcu_now() - t;
    if (ret == AVERROR(EINVAL) && !(e->oc->pb && e->oc->pb->error < 0)) {
        /* Refused, not failed to write: the input's timestamps are to blame. */
        char buf[128];
        AVRational tb = e->oc->streams[index]->time_base;
        if (index == e->vst->index)
            return thread_fail(s, VKCU_ERR_INPUT, "%s: frame at %.3f s (dts %.3f s): the %s muxer refused its "
                               "timestamps: %s (the input's timestamps are broken)", s->params->job.input,
                               pts * av_q2d(tb), dts * av_q2d(tb), e->oc->oformat->name,
                               vkcu_err_str(ret, buf, sizeof(buf)));
        return thread_fail(s, VKCU_ERR_INPUT, "%s: the %s muxer refused a packet of output stream %d (pts %lld, dts %lld "
                           "in 1/%d s): %s (the input's timestamps are broken)", s->params->job.input,
                           e->oc->oformat->name, index, (long long)pts, (long long)dts, tb.den,
                           vkcu_err_str(ret, buf, sizeof(buf)));
    }
    if (e->to_stdout && (ret == AVERROR(EPIPE) || (e->oc->pb && e->oc->pb->error == AVERROR(EPIPE))))
        return thread_fail(s, VKCU_ERR_PIPE_CLOSED, "standard output closed by its reader");
    if (ret < 0) {
        char buf[128];
        return thread_fail(s, VKCU_ERR_OUTPUT, "%s: write error: %s%s", s->params->job.output,
                           vkcu_err_str(ret, buf, sizeof(buf)), ret == AVERROR(ENOSPC) ? " (disk full)" : "");
    }
    if (e->oc->pb && e->oc->pb->error < 0) {
        char buf[128];
        return thread_fail(s, VKCU_ERR_OUTPUT, "%s: write error: %s%s", s->params->job.output,
                           vkcu_err_str(e->oc->pb->error, buf, sizeof(buf)),
                           e->oc->pb->error == AVERROR(ENOSPC) ? " (disk full)" : "");
    }
    return 0;
}

static int drain(vkcu_sink *s)
{
    encode_sink *e = s->priv;
    for (;;) {
        double t = vkcu_now();
        int ret = avcodec_receive_packet(e->enc, e->pkt);
        e->t_encode += vkcu_now() - t;
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF)
            return 0;
        if (ret < 0) {
            char buf[128];
            return thread_fail(s, ret, "%s: encoder %s failed after frame %lld: %s", s->params->job.output,
                               e->enc->codec->name, (long long)e->frames, vkcu_err_str(ret, buf, sizeof(buf)));
        }
        e->pkt->stream_index = e->vst->index;
        av_packet_rescale_ts(e->pkt, e->enc->time_base, e->vst->time_base);
        ret = write_out(s, e->pkt);
        if (ret < 0)
            return ret;
    }
}

static int encode_one(vkcu_sink *s, AVFrame *frame)
{
    encode_sink *e = s->priv;
    AVFrame *in = frame;
    int ret;
    frame->pict_type = AV_PICTURE_TYPE_NONE;
    /* A frame of the encoder's own frames context (the GPU session's
     * zero-copy path) goes in as it is; host frames are uploaded. */
    if (e->hw_frame && frame->format != AV_PIX_FMT_VULKAN) {
        ret = vkcu_vkencode_upload(e->enc, frame, e->hw_frame);
        if (ret < 0) {
            char buf[128];
            return thread_fail(s, VKCU_ERR_DEVICE, "%s: frame %lld: upload to the Vulkan encoder failed: %s",
                               s->params->job.output, (long long)e->frames, vkcu_err_str(ret, buf, sizeof(buf)));
        }
        in = e->hw_frame;
    }
    double t = vkcu_now();
    vkcu_vkencode_timer_before(e->timer, in);
    ret = avcodec_send_frame(e->enc, in);
    vkcu_vkencode_timer_after(e->timer, in);
    e->t_encode += vkcu_now() - t;
    if (in == e->hw_frame)
        av_frame_unref(e->hw_frame);
    if (ret < 0) {
        char buf[128];
        return thread_fail(s, ret, "%s: encoder %s refused frame %lld: %s", s->params->job.output, e->enc->codec->name,
                           (long long)e->frames, vkcu_err_str(ret, buf, sizeof(buf)));
    }
    e->frames++;
    return drain(s);
}

/* The queue slot holding frame `index`, or -1 (lock held). */
static int find_frame(const encode_sink *e, int64_t index)
{
    for (int i = 0; i < e->q_count; i++) {
        const queue_item *it = &e->queue[(e->q_head + i) % QUEUE_ITEMS];
        if (it->frame && it->index == index)
            return (e->q_head + i) % QUEUE_ITEMS;
    }
    return -1;
}

static void *gop_worker_main(void *arg)
{
    gop_worker *w = arg;
    vkcu_sink *s = w->s;
    encode_sink *e = s->priv;
    for (;;) {
        pthread_mutex_lock(&e->lock);
        int slot;
        while ((slot = find_frame(e, w->next)) < 0 && !e->thread_ret && !e->aborting &&
               !(e->finishing && e->next_index <= w->next))
            pthread_cond_wait(&e->cond, &e->lock);
        if (slot < 0) { /* done, failed or aborted */
            pthread_mutex_unlock(&e->lock);
            break;
        }
        queue_item *it = &e->queue[slot];
        AVFrame *frame = it->frame;
        it->frame = NULL; /* the worker owns it now; the slot still counts as a frame */
        it->state = 1;
        pthread_mutex_unlock(&e->lock);

        double t = vkcu_now();
        frame->pict_type = AV_PICTURE_TYPE_NONE;
        int ret = avcodec_send_frame(w->enc, frame);
        AVPacket *out = NULL;
        if (ret >= 0)
            ret = avcodec_receive_packet(w->enc, w->pkt);
        if (ret >= 0 && !(out = av_packet_alloc()))
            ret = AVERROR(ENOMEM);
        if (out)
            av_packet_move_ref(out, w->pkt);
        av_frame_free(&frame);
        if (ret < 0) {
            char buf[128];
            av_packet_free(&out);
            thread_fail(s, ret, "%s: encoder %s failed at frame %lld: %s", s->params->job.output, w->enc->codec->name,
                        (long long)w->next, vkcu_err_str(ret, buf, sizeof(buf)));
            break;
        }
        pthread_mutex_lock(&e->lock);
        e->t_encode += vkcu_now() - t;
        it->pkt = out;
        it->state = 2;
        w->next++;
        if (w->next % e->gop == 0)
            w->next += (int64_t)(e->nb_gw - 1) * e->gop;
        pthread_cond_broadcast(&e->cond);
        pthread_mutex_unlock(&e->lock);
    }
    return NULL;
}

/* Takes the first queue item (lock held). */
static queue_item pop_head(encode_sink *e)
{
    queue_item it = e->queue[e->q_head];
    e->queue[e->q_head] = (queue_item){ 0 };
    e->q_head = (e->q_head + 1) % QUEUE_ITEMS;
    e->q_count--;
    if (it.index >= 0)
        e->q_frames--;
    pthread_cond_broadcast(&e->cond);
    return it;
}

/* Whether the first item can be written now (lock held): a copied packet, a
 * frame this thread encodes itself, or one its GOP worker has encoded. */
static int head_ready(const encode_sink *e)
{
    const queue_item *h = &e->queue[e->q_head];
    return e->q_count && (h->index < 0 || e->nb_gw < 2 || h->state == 2);
}

/* The encoder thread: takes the queue in order and writes every packet, so
 * the muxer has one writer. With GOP workers it only writes their packets. */
static void *encode_thread_main(void *arg)
{
    vkcu_sink *s = arg;
    encode_sink *e = s->priv;
    const int workers = e->nb_gw > 1;
    int ret = 0;
    for (;;) {
        pthread_mutex_lock(&e->lock);
        double t = vkcu_now();
        int starved = !e->q_count;
        while (!e->thread_ret && !e->aborting && !head_ready(e) && !(e->finishing && !e->q_count))
            pthread_cond_wait(&e->cond, &e->lock);
        if (starved && e->frames) /* waiting for the first frame is set-up, not starvation */
            e->t_idle += vkcu_now() - t;
        if (e->thread_ret || e->aborting || !e->q_count) {
            int finish = !e->thread_ret && !e->aborting;
            pthread_mutex_unlock(&e->lock);
            if (finish && !workers) { /* intra-only workers have nothing left to flush */
                avcodec_send_frame(e->enc, NULL);
                ret = drain(s);
            }
            break;
        }
        queue_item it = pop_head(e);
        pthread_mutex_unlock(&e->lock);
        if (it.index >= 0 && !workers) {
            ret = encode_one(s, it.frame);
        } else {
            if (it.index >= 0) {
                it.pkt->stream_index = e->vst->index;
                av_packet_rescale_ts(it.pkt, e->enc->time_base, e->vst->time_base);
                e->frames++;
            }
            ret = write_out(s, it.pkt);
        }
        av_frame_free(&it.frame);
        av_packet_free(&it.pkt);
        if (ret < 0)
            break;
    }
    pthread_mutex_lock(&e->lock);
    if (!e->thread_ret)
        e->thread_ret = ret;
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
    return NULL;
}

/* Joins the GOP workers (after the encoder thread: they stop on finishing,
 * on an error or on abort, which the encoder thread's end implies). */
static void stop_workers(encode_sink *e)
{
    pthread_mutex_lock(&e->lock);
    if (e->thread_ret || !e->finishing)
        e->aborting = 1;
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
    for (int i = 0; i < e->nb_gw; i++)
        if (e->gw[i].running) {
            pthread_join(e->gw[i].thread, NULL);
            e->gw[i].running = 0;
        }
}

static void free_workers(encode_sink *e)
{
    for (int i = 0; i < e->nb_gw; i++) {
        if (i) /* worker 0 uses e->enc */
            avcodec_free_context(&e->gw[i].enc);
        av_packet_free(&e->gw[i].pkt);
    }
    av_freep(&e->gw);
    e->nb_gw = 0;
}

/* Sets up GOP-parallel encoding where it applies (FFV1, not two-pass, more
 * than one worker wanted, the queue of n GOPs within its bounds); otherwise
 * leaves one encoder. Extra encoders must come out of avcodec_open2 with
 * the first one's extradata, or the idea of "the same packets" fails. */
static int setup_workers(vkcu_sink *s, const AVCodec *codec, const vkcu_video_format *fmt, AVRational tb, int global_header)
{
    encode_sink *e = s->priv;
    const vkcu_job_params *p = s->params;
    int want = p->settings.encode_workers;
    if (want == 1)
        return 0;
    if (codec->id != AV_CODEC_ID_FFV1 || (e->enc->flags & (AV_CODEC_FLAG_PASS1 | AV_CODEC_FLAG_PASS2))) {
        if (want > 1)
            LOGW("%s: %s applies to FFV1 (one pass) only; %s uses its own threads", p->job.output,
                 VKCU_SETTING("encode_workers"), codec->name);
        return 0;
    }
    if (want <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        want = (int)(cpus / 4); /* FFV1 itself uses about 4 slice threads */
    }
    const int gop = e->enc->gop_size > 0 ? e->enc->gop_size : 1;
    int64_t bytes = av_image_get_buffer_size(fmt->pix_fmt, fmt->width, fmt->height, 1);
    int64_t frames = bytes > 0 ? FFMIN(GOP_QUEUE_FRAMES, GOP_QUEUE_BYTES / bytes) : 0;
    int n = FFMIN(FFMIN(want, MAX_GOP_WORKERS), (int)(frames / gop));
    if (n < 2) {
        if (p->settings.encode_workers > 1)
            LOGW("%s: %s %d: GOPs of %d frames of %dx%d do not fit the queue (%d frames, 1 GiB); "
                 "one encoder", p->job.output, VKCU_SETTING("encode_workers"), p->settings.encode_workers, gop, fmt->width,
                 fmt->height, GOP_QUEUE_FRAMES);
        return 0;
    }
    if (!(e->gw = av_calloc(n, sizeof(*e->gw))))
        return AVERROR(ENOMEM);
    e->nb_gw = n;
    for (int i = 0; i < n; i++) {
        gop_worker *w = &e->gw[i];
        w->s = s;
        w->next = (int64_t)i * gop;
        if (!(w->pkt = av_packet_alloc()))
            return AVERROR(ENOMEM);
        if (!i) {
            w->enc = e->enc;
            continue;
        }
        int ret = configure_encoder(s, codec, fmt, tb, global_header, &w->enc);
        if (ret < 0)
            return ret;
        ret = avcodec_open2(w->enc, codec, NULL);
        if (ret < 0 || w->enc->extradata_size != e->enc->extradata_size ||
            (e->enc->extradata_size && memcmp(w->enc->extradata, e->enc->extradata, e->enc->extradata_size))) {
            LOGV("%s: a second %s encoder %s; one encoder", p->job.output, codec->name,
                 ret < 0 ? "does not open" : "has other extradata");
            free_workers(e);
            return 0;
        }
    }
    e->gop = gop;
    e->max_frames = n * gop;
    LOGV("%s: %s: %d GOPs of %d frames encoded at once", p->job.output, codec->name, n, gop);
    return 0;
}

static int start_workers(vkcu_sink *s)
{
    encode_sink *e = s->priv;
    for (int i = 0; i < e->nb_gw; i++) {
        if (vkcu_thread_create(&e->gw[i].thread, gop_worker_main, &e->gw[i]) != 0) {
            snprintf(s->err, s->errlen, "%s: cannot start an encoder thread", s->params->job.output);
            return AVERROR(EAGAIN);
        }
        e->gw[i].running = 1;
    }
    return 0;
}

/* ---- job thread side ---- */

/* Takes ownership of exactly one of frame/pkt. Waits while the queue is full. */
static int enqueue(vkcu_sink *s, AVFrame *frame, AVPacket *pkt)
{
    encode_sink *e = s->priv;
    pthread_mutex_lock(&e->lock);
    while (!e->thread_ret && (e->q_count == QUEUE_ITEMS || (frame && e->q_frames >= e->max_frames)))
        pthread_cond_wait(&e->cond, &e->lock);
    int ret = e->thread_ret;
    if (!ret) {
        e->queue[(e->q_head + e->q_count) % QUEUE_ITEMS] =
            (queue_item){ .frame = frame, .pkt = pkt, .index = frame ? e->next_index++ : -1 };
        e->q_count++;
        if (frame)
            e->q_frames++;
        pthread_cond_broadcast(&e->cond);
    }
    pthread_mutex_unlock(&e->lock);
    if (ret < 0) {
        snprintf(s->err, s->errlen, "%s", e->thread_err);
        av_frame_free(&frame);
        av_packet_free(&pkt);
    }
    return ret;
}

static int encode_emit(void *opaque, AVFrame *frame)
{
    /* A new reference: decoder pool frames and the GPU session's pinned
     * buffers stay alive while the frame waits in the queue. */
    AVFrame *ref = av_frame_clone(frame);
    if (!ref)
        return AVERROR(ENOMEM);
    return enqueue(opaque, ref, NULL);
}

static int encode_write(vkcu_sink *s, AVFrame *frame)
{
    encode_sink *e = s->priv;
    return vkcu_frame_sync_push(&e->sync, frame, encode_emit, s);
}

/* An encoded audio (or converted subtitle) packet, to the queue (enqueue takes it). */
static int audio_emit(void *opaque, AVPacket *pkt)
{
    return enqueue(opaque, NULL, pkt);
}

static int encode_packet(vkcu_sink *s, AVPacket *pkt)
{
    encode_sink *e = s->priv;
    if (pkt->stream_index >= e->nb_map || e->stream_map[pkt->stream_index] < 0)
        return 0;
    if (e->audio[pkt->stream_index]) {
        char why[512] = "";
        int ret = vkcu_audio_enc_send(e->audio[pkt->stream_index], pkt, audio_emit, s, why, sizeof(why));
        if (ret < 0 && !s->err[0])
            snprintf(s->err, s->errlen, "%s: %s", s->params->job.output, why);
        return ret;
    }
    if (e->subs[pkt->stream_index])
        return vkcu_sub_text_send(e->subs[pkt->stream_index], pkt, audio_emit, s);
    AVStream *ist = s->demux->fmt->streams[pkt->stream_index];
    AVPacket *copy = av_packet_clone(pkt);
    if (!copy)
        return AVERROR(ENOMEM);
    copy->stream_index = e->stream_map[pkt->stream_index];
    av_packet_rescale_ts(copy, ist->time_base, e->oc->streams[copy->stream_index]->time_base);
    copy->pos = -1;
    return enqueue(s, NULL, copy);
}

static int encode_close(vkcu_sink *s, int ok)
{
    encode_sink *e = s->priv;
    int ret = 0;
    /* --keep-partial: what was decoded is encoded, flushed and finished
     * (trailer, index), so the partial output plays. */
    int finish = ok || (s->params->job.keep_partial && strcmp(e->tmp, s->params->job.output));
    if (e->thread_running && finish) {
        /* The last frame repeated, where the frame rate wants it. */
        ret = vkcu_frame_sync_push(&e->sync, NULL, encode_emit, s);
        /* The audio encoders' last packets. */
        for (int i = 0; ret >= 0 && e->audio && i < e->nb_map; i++)
            if (e->audio[i]) {
                char why[512] = "";
                if ((ret = vkcu_audio_enc_send(e->audio[i], NULL, audio_emit, s, why, sizeof(why))) < 0 && !s->err[0])
                    snprintf(s->err, s->errlen, "%s: %s", s->params->job.output, why);
            }
        if (ret < 0 && ok)
            finish = 0;
    }
    vkcu_frame_sync_free(&e->sync);
    if (e->thread_running) {
        pthread_mutex_lock(&e->lock);
        if (finish)
            e->finishing = 1;
        else
            e->aborting = 1;
        pthread_cond_broadcast(&e->cond);
        pthread_mutex_unlock(&e->lock);
        pthread_join(e->thread, NULL);
        e->thread_running = 0;
        stop_workers(e);
        if (s->result) {
            s->result->enc_ms_encode = e->t_encode * 1000;
            s->result->enc_ms_mux = e->t_mux * 1000;
            s->result->enc_ms_idle = e->t_idle * 1000;
            s->result->encoded_bytes = e->video_bytes;
            vkcu_vkencode_timer_result(e->timer, &s->result->gpu_ms_encode, &s->result->gpu_encode_frames);
        }
        while (e->q_count) { /* every thread has ended: no lock needed */
            queue_item it = pop_head(e);
            av_frame_free(&it.frame);
            av_packet_free(&it.pkt);
        }
        pthread_mutex_destroy(&e->lock);
        pthread_cond_destroy(&e->cond);
        if (e->thread_ret < 0) {
            if (ok)
                snprintf(s->err, s->errlen, "%s", e->thread_err);
            ret = e->thread_ret;
        }
    }
    if (finish && ret >= 0 && e->header_written) {
        ret = av_write_trailer(e->oc);
        if (ret < 0 && e->to_stdout && (ret == AVERROR(EPIPE) || (e->oc->pb && e->oc->pb->error == AVERROR(EPIPE)))) {
            ret = VKCU_ERR_PIPE_CLOSED;
        } else if (ret < 0) {
            char buf[128];
            snprintf(s->err, s->errlen, "%s: cannot finish the output: %s%s", s->params->job.output,
                     vkcu_err_str(ret, buf, sizeof(buf)), ret == AVERROR(ENOSPC) ? " (disk full)" : "");
            ret = VKCU_ERR_OUTPUT;
        }
    }
    if (e->oc && e->oc->pb && !(e->oc->oformat->flags & AVFMT_NOFILE)) {
        avio_flush(e->oc->pb);
        if (ok && ret >= 0 && e->to_stdout && e->oc->pb->error == AVERROR(EPIPE)) {
            ret = VKCU_ERR_PIPE_CLOSED;
        } else if (ok && ret >= 0 && e->oc->pb->error < 0) {
            char buf[128];
            snprintf(s->err, s->errlen, "%s: write error: %s%s", s->params->job.output,
                     vkcu_err_str(e->oc->pb->error, buf, sizeof(buf)),
                     e->oc->pb->error == AVERROR(ENOSPC) ? " (disk full)" : "");
            ret = VKCU_ERR_OUTPUT;
        }
        avio_closep(&e->oc->pb);
    }
    avformat_free_context(e->oc);
    e->oc = NULL;
    free_workers(e);
    s->gpu_frames = NULL;
    vkcu_vkencode_timer_free(&e->timer);
    avcodec_free_context(&e->enc);
    av_frame_free(&e->hw_frame);
    av_buffer_unref(&e->vk_device);
    av_packet_free(&e->pkt);
    for (int i = 0; e->audio && i < e->nb_map; i++)
        vkcu_audio_enc_close(&e->audio[i]);
    av_freep(&e->audio);
    for (int i = 0; e->subs && i < e->nb_map; i++)
        vkcu_sub_text_close(&e->subs[i]);
    av_freep(&e->subs);
    av_freep(&e->stream_map);
    av_freep(&e->last_dts);
    e->header_written = 0;
    int published = 0;
    if (e->tmp[0]) {
        published = ok && ret >= 0;
        if (ok && ret >= 0 && s->params->before_publish &&
            (ret = s->params->before_publish(s->params->publish_opaque, e->tmp, s->params->job.output, s->err,
                                             s->errlen)) < 0)
            vkcu_outfile_abort(e->tmp);
        else if (ok && ret >= 0)
            ret = vkcu_outfile_commit(e->tmp, s->params->job.output, s->err, s->errlen);
        else if (s->params->job.keep_partial && strcmp(e->tmp, s->params->job.output)) {
            char err[512];
            if (vkcu_outfile_commit(e->tmp, s->params->job.output, err, sizeof(err)) >= 0)
                LOGW("%s: partial output kept (%s)", s->params->job.output, VKCU_SETTING_IS("keep_partial", "1"));
        } else
            vkcu_outfile_abort(e->tmp);
        e->tmp[0] = 0;
    } else {
        published = ok && ret >= 0; /* standard output */
    }
    /* The encoder's own files (closed with the encoder above) follow the output. */
    if (published && ret >= 0)
        ret = vkcu_encoder_files_commit(&e->files, s->err, s->errlen);
    else
        vkcu_encoder_files_abort(&e->files);
    if (ret >= 0)
        return 0;
    return ret;
}

const vkcu_sink_class vkcu_sink_encode = {
    .name = "encode",
    .priv_size = sizeof(encode_sink),
    .open = encode_open,
    .write_frame = encode_write,
    .write_packet = encode_packet,
    .close = encode_close,
};
