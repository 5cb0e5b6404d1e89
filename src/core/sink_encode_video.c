/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The encode sink's video encoder: which one (the job's, a preset's GPU
 * encoder tried first, the container's default), checked against the
 * frames and the container before anything is written, and configured
 * with every setting of the job (sink_encode_priv.h).
 */
#include <stdlib.h>
#include <string.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>

#include "util/log.h"
#include "encoders.h"
#include "sink_encode_priv.h"
#include "gpu/vkfn.h"

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

/* An encoder context with every setting of the job (several identical ones
 * for GOP-parallel encoding). Errors go to s->err. */
int vkcu_encsink_configure_encoder(vkcu_sink *s, const AVCodec *codec, const vkcu_video_format *fmt, AVRational tb,
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
    if (p->job.preset && *p->job.preset && vkcu_encoder_check_choice(codec, "preset", p->job.preset, why, sizeof(why)) < 0) {
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

int vkcu_compute_instance_queues(const char *encoder)
{
    /* Off by default: instances on queues of their own ran 1.5-3.5x faster
     * on an H100, but now and then one of them encoded a wrong picture
     * (ProRes at 1080p with 4 and 8 queues; two FFV1 round trips of 30 and
     * 50 frames), whatever vkcu did (docs/performance.md, "Issue 36", steps
     * 3-6); FFmpeg's encoders alone do the same. On one queue every run was
     * one instance's output. The likely cause is an NVIDIA driver bug of two
     * queues of a device submitting at once (step 7): with one lock over the
     * submissions (VKCU_VK_SUBMIT_LOCK=1) the instances take queues of their
     * own, so that the lock is measured as the default would be.
     * VKCU_ENCODE_INSTANCE_QUEUES=all (or any other value: one queue)
     * decides it either way. */
    const char *env = getenv("VKCU_ENCODE_INSTANCE_QUEUES");
    if (env)
        return encoder && !strcmp(env, "all");
    return encoder && vkcu_vk_submit_lock_wanted();
}

int vkcu_compute_instance_lanes(const vkcu_job_params *p, const char *encoder)
{
    return vkcu_compute_instance_queues(encoder) ? vkcu_compute_instances(p, encoder) : 1;
}

int vkcu_compute_instances(const vkcu_job_params *p, const char *encoder)
{
    int want = p->settings.encode_workers;
    const vkcu_vkencoder *vke = encoder ? vkcu_vkencode_find(encoder) : NULL;
    if (!vke || vke->video_op || want == 1)
        return 1;
    if (want <= 0) {
        /* One instance has one frame on the GPU and waits for it (FFV1 reads
         * its slice sizes back before it writes the packet): a few would keep
         * the GPU busy through each other's waits. VKCU_ENCODE_INSTANCES=N
         * sets the default, for measurements. */
        const char *env = getenv("VKCU_ENCODE_INSTANCES");
        want = env && atoi(env) > 0 ? atoi(env) : COMPUTE_INSTANCES_AUTO;
    }
    return FFMIN(want, MAX_GOP_WORKERS);
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

/* Why avcodec_open2 refused encoder `codec` (ret), in words that say what
 * to change, into s->err; returns the job's error code. */
static int open_failure(vkcu_sink *s, const AVCodec *codec, const vkcu_vkencoder *vke, const vkcu_video_format *fmt,
                        int ret)
{
    encode_sink *e = s->priv;
    const char *path = s->params->job.output;
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
    return ret;
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
        ret = vkcu_encoder_files_begin(&e->files, p->job.encoder_opts, codec->name, path, p->job.overwrite, inputs, s->err,
                                       s->errlen);
        if (ret < 0)
            goto fail;
    }
    ret = vkcu_encsink_configure_encoder(s, codec, fmt, *tb, !!(ofmt->flags & AVFMT_GLOBALHEADER), &e->enc);
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
    /* Instances of a compute encoder each keep one frame in flight (the
     * GOP workers take a packet for every frame they send). */
    if (e->hw_frame && vkcu_compute_instances(s->params, codec->name) > 1)
        av_opt_set_int(e->enc->priv_data, "async_depth", 1, 0);
    ret = avcodec_open2(e->enc, codec, NULL);
    if (ret < 0) {
        ret = open_failure(s, codec, vke, fmt, ret);
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

int vkcu_encsink_pick_encoder(vkcu_sink *s, const vkcu_video_format *fmt, const AVOutputFormat *ofmt,
                              AVRational *tb, const AVCodec **out)
{
    encode_sink *e = s->priv;
    const vkcu_job_params *p = s->params;
    const char *path = p->job.output;
    int ret;
    const char *encname = p->job.encoder && *p->job.encoder && strcmp(p->job.encoder, "auto") ? p->job.encoder : vkcu_default_encoder(ofmt, path, !!p->job.output_format);
    /* A GPU encoder the job prefers (a preset's gpu-encoder), tried first on
     * the GPU backend; where it cannot take the frames, `encname`. */
    const char *gpu_pick = p->job.gpu_encoder && *p->job.gpu_encoder && s->result->path != VKCU_PATH_CPU &&
                                   strcmp(p->job.gpu_encoder, encname) ? p->job.gpu_encoder : NULL;
    const AVCodec *codec = NULL;
    AVRational tb_in = *tb;
    for (int pick = !gpu_pick; pick < 2; pick++) {
        const char *name = pick ? encname : gpu_pick;
        *tb = tb_in;
        ret = open_encoder(s, name, fmt, ofmt, tb, &codec);
        if (ret >= 0)
            break;
        if (!pick) {
            LOGV("%s: %s not used (%s); %s instead", path, name, s->err, encname);
            s->err[0] = 0;
            continue;
        }
        return ret;
    }
    snprintf(s->result->encoder, sizeof(s->result->encoder), "%s", codec->name);
    hdr_depth_warning(s, fmt);
    if (e->vk_device) {
        LOGV("%s: %s encodes on the GPU%s", path, codec->name, vkcu_vkencode_op(codec->name) ? "'s video encode queue"
                                                                                          : "'s compute queue");
        e->timer = vkcu_vkencode_timer_new(e->vk_device);
    }
    *out = codec;
    return 0;
}
