/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job's frame loop (vkcu_job_run, pipeline.c): packets read and
 * decoded, the decoder's damage marked, each frame timed, trimmed and fed
 * to the operators (the CPU reference, or the GPU session) at the first
 * frame's format (set up again when the stream changes format), finished
 * frames scaled where the sink takes one size, packets of other streams
 * passed on, and at the end everything flushed into the sink.
 */
#include <stdlib.h>
#include <string.h>
#include <libavutil/avstring.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include "gpu/vk.h"
#include "util/log.h"
#include "encoders.h"
#include "pipeline_priv.h"

static int trim_packet(job *j, AVPacket *pkt);

/* Whether frames reach this sink at the size and layout it was opened
 * with, as the ffmpeg CLI's automatic scaler gives them to its encoder and
 * to framemd5: encoders take one size, and hash lists follow ffmpeg unless
 * every decoded frame is asked for (VKCU_TIMING_DECODED). The callback sink
 * gives frames as decoded unless its job follows a hash list's timing
 * (compare). */
int vkcu_pipeline_sink_takes_one_format(const job *j)
{
    const vkcu_job_params *p = j->p;
    switch (p->job.sink) {
    case VKCU_SINK_ENCODE: return 1;
    case VKCU_SINK_HASH: return p->job.timing == VKCU_TIMING_FFMPEG;
    case VKCU_SINK_CALLBACK: return p->callback_timing && p->job.timing == VKCU_TIMING_FFMPEG;
    default: return 0;
    }
}

/* The chroma siting swscale gets, as FFmpeg's scale filter gives it when
 * nothing is set (7.1 and 8.1 alike: neither takes the frame's siting):
 * the centre of the subsampled sample, in 1/256 of a luma sample. */
static int centre_siting(int log2_sub)
{
    return 128 * ((1 << log2_sub) - 1);
}

/* A frame of another size or layout than the sink's, scaled to it as the
 * ffmpeg CLI's automatic scaler does (the scale filter it inserts before
 * the encoder: swscale bicubic, centre chroma siting, the frames' ranges
 * and matrices). *out is f, or j->scaled holding the scaled picture. */
static int reformat_for_sink(job *j, AVFrame *f, AVFrame **out)
{
    const vkcu_video_format *to = &j->sink_fmt;
    *out = f;
    if (!f->data[0] || f->hw_frames_ctx || (f->format == to->pix_fmt && f->width == to->width && f->height == to->height))
        return 0; /* digests and GPU frames were made for the sink already */
    const AVPixFmtDescriptor *din = av_pix_fmt_desc_get(f->format), *dout = av_pix_fmt_desc_get(to->pix_fmt);
    vkcu_video_format from;
    vkcu_format_from_frame(&from, f, f->format);
    from.matrix = f->colorspace; /* what the scaler's tables depend on */
    int ret = 0;
    if (!din || !dout)
        return AVERROR(EINVAL);
    if (j->sws && !vkcu_format_change(&j->sws_from, &from))
        goto scale;
    sws_freeContext(j->sws);
    j->sws_from = from;
    j->sws = sws_alloc_context();
    if (!j->sws)
        return AVERROR(ENOMEM);
    av_opt_set_int(j->sws, "srcw", f->width, 0);
    av_opt_set_int(j->sws, "srch", f->height, 0);
    av_opt_set_int(j->sws, "src_format", f->format, 0);
    av_opt_set_int(j->sws, "dstw", to->width, 0);
    av_opt_set_int(j->sws, "dsth", to->height, 0);
    av_opt_set_int(j->sws, "dst_format", to->pix_fmt, 0);
    av_opt_set_int(j->sws, "sws_flags", SWS_BICUBIC, 0);
    av_opt_set_int(j->sws, "threads", 1, 0);
    if (f->color_range != AVCOL_RANGE_UNSPECIFIED)
        av_opt_set_int(j->sws, "src_range", f->color_range == AVCOL_RANGE_JPEG, 0);
    if (to->range != AVCOL_RANGE_UNSPECIFIED)
        av_opt_set_int(j->sws, "dst_range", to->range == AVCOL_RANGE_JPEG, 0);
    av_opt_set_int(j->sws, "src_h_chr_pos", centre_siting(din->log2_chroma_w), 0);
    av_opt_set_int(j->sws, "src_v_chr_pos", centre_siting(din->log2_chroma_h), 0);
    av_opt_set_int(j->sws, "dst_h_chr_pos", centre_siting(dout->log2_chroma_w), 0);
    av_opt_set_int(j->sws, "dst_v_chr_pos", centre_siting(dout->log2_chroma_h), 0);
    if ((ret = sws_init_context(j->sws, NULL, NULL)) < 0)
        goto fail;
    const int *inv_table, *table;
    int in_full, out_full, brightness, contrast, saturation;
    sws_getColorspaceDetails(j->sws, (int **)&inv_table, &in_full, (int **)&table, &out_full, &brightness, &contrast,
                             &saturation);
    inv_table = sws_getCoefficients(f->colorspace);
    table = to->matrix != AVCOL_SPC_UNSPECIFIED ? sws_getCoefficients(to->matrix) : inv_table;
    sws_setColorspaceDetails(j->sws, inv_table, in_full, table, out_full, brightness, contrast, saturation);
scale:
    if (!j->scaled && !(j->scaled = av_frame_alloc()))
        return AVERROR(ENOMEM);
    av_frame_unref(j->scaled);
    j->scaled->format = to->pix_fmt;
    j->scaled->width = to->width;
    j->scaled->height = to->height;
    if ((ret = av_frame_get_buffer(j->scaled, 0)) < 0 || (ret = av_frame_copy_props(j->scaled, f)) < 0)
        goto fail;
    if ((ret = sws_scale(j->sws, (const uint8_t *const *)f->data, f->linesize, 0, f->height, j->scaled->data,
                         j->scaled->linesize)) < 0)
        goto fail;
    j->scaled->color_range = to->range;
    j->r->frames_rescaled++;
    *out = j->scaled;
    return 0;
fail:
    sws_freeContext(j->sws);
    j->sws = NULL;
    snprintf(j->err, j->errlen, "%s: cannot scale a %s %dx%d frame to %s %dx%d", j->p->job.input,
             av_get_pix_fmt_name(f->format), f->width, f->height, av_get_pix_fmt_name(to->pix_fmt), to->width,
             to->height);
    return ret < 0 ? ret : AVERROR(EINVAL);
}

static int sink_write(job *j, AVFrame *f)
{
    vkcu_job_result *r = j->r;
    if (j->p->job.max_frames > 0 && r->frames_out >= j->p->job.max_frames)
        return 0;
    if (vkcu_pipeline_sink_takes_one_format(j)) {
        int ret = reformat_for_sink(j, f, &f);
        if (ret < 0)
            return ret;
    }
    if (f->flags & AV_FRAME_FLAG_CORRUPT)
        r->frames_concealed++;
    /* Time spent waiting for the sink is not the decoder stalling. */
    atomic_store(&j->in_sink, 1);
    int ret = j->sink.cls->write_frame(&j->sink, f);
    atomic_store(&j->last_frame_ms, now_ms());
    atomic_store(&j->in_sink, 0);
    if (ret < 0)
        return ret;
    r->frames_out++;
    vkcu_progress_update(&j->progress, r->frames_out, 0);
    return 0;
}

static int cpu_emit(void *opaque, AVFrame *f)
{
    job *j = opaque;
    int ret = vkcu_format_to_frame(&j->out_fmt, f);
    return ret < 0 ? ret : sink_write(j, f);
}

/* Feeds `in` (NULL: flush) through the CPU operators into the sink. */
static int cpu_chain_feed(job *j, AVFrame *in)
{
    const vkcu_op *failed = NULL;
    int ret = vkcu_chain_feed_cpu(&j->chain, 0, in, cpu_emit, j, &failed);
    if (ret < 0 && failed) {
        char buf[128];
        snprintf(j->err, j->errlen, "%s: operator %s failed: %s", j->p->job.input, failed->cls->name,
                 vkcu_err_str(ret, buf, sizeof(buf)));
    }
    return ret;
}

static int gpu_drain(job *j, int wait_all)
{
    AVFrame *host = av_frame_alloc();
    if (!host)
        return AVERROR(ENOMEM);
    int ret = 0;
    for (;;) {
        int wait = wait_all ? vkcu_gpu_pending(j->gpu) > 0 : vkcu_gpu_full(j->gpu);
        ret = vkcu_gpu_pop(j->gpu, host, wait, j->err, j->errlen);
        if (ret == AVERROR(EAGAIN)) {
            ret = 0;
            break;
        }
        if (ret < 0)
            break;
        ret = vkcu_format_to_frame(&j->out_fmt, host);
        if (ret >= 0)
            ret = sink_write(j, host);
        av_frame_unref(host);
        if (ret < 0)
            break;
    }
    av_frame_free(&host);
    return ret;
}

/* The path of Vulkan-decoded frames: on a video queue or on compute. */
static enum vkcu_path vulkan_path(const job *j)
{
    return j->vk_decode == VKCU_VK_DECODE_COMPUTE ? VKCU_PATH_VULKAN_COMPUTE_CUDA : VKCU_PATH_VULKAN_CUDA;
}

/* Sets up operators and the sink from the first decoded frame. */
/* The end of a stretch of one format (a format change, the end): the
 * operators give what they hold back and every frame reaches the sink. */
static int flush_chain(job *j)
{
    if (!j->gpu)
        return cpu_chain_feed(j, NULL);
    int ret = vkcu_gpu_push(j->gpu, NULL, j->err, j->errlen);
    return ret < 0 ? ret : gpu_drain(j, 1);
}

static int first_frame(job *j, const AVFrame *f)
{
    const vkcu_job_params *p = j->p;
    enum AVPixelFormat sw = vkcu_frame_sw_format(f);
    char why[256];
    if (j->gpu && !vkcu_format_gpu_carries(sw, why, sizeof(why))) {
        /* The same job, on the CPU reference: both backends accept the same inputs. */
        LOGI("%s: %s; processing on the CPU", p->job.input, why);
        vkcu_gpu_close(&j->gpu);
        j->r->path = VKCU_PATH_CPU;
    }
    vkcu_format_from_frame(&j->in_fmt, f, sw);
    j->in_fmt.time_base = j->tb;
    j->in_fmt.frame_rate = j->demux->frame_rate;
    int ret = vkcu_chain_init(&j->chain, &j->in_fmt, &j->out_fmt, j->err, j->errlen);
    char conv[64];
    if (ret >= 0 && p->job.sink == VKCU_SINK_ENCODE &&
        vkcu_image_convert(p->job.output, p->job.output_format, p->job.encoder, j->out_fmt.pix_fmt, j->out_fmt.range,
                           conv, sizeof(conv))) {
        /* An image output: its encoder's pixel format, converted by the
         * chain's own operator (as ffmpeg converts for the encoder). */
        char *text = av_asprintf("%s%s%s", p->job.chain && *p->job.chain ? p->job.chain : "",
                                 p->job.chain && *p->job.chain ? "," : "", conv);
        vkcu_chain_free(&j->chain);
        ret = text ? vkcu_chain_parse(text, &j->chain, j->err, j->errlen) : AVERROR(ENOMEM);
        av_free(text);
        for (int i = 0; ret >= 0 && i < j->chain.nb_ops; i++)
            j->chain.ops[i]->threads = j->threads;
        if (ret >= 0)
            ret = vkcu_chain_init(&j->chain, &j->in_fmt, &j->out_fmt, j->err, j->errlen);
        if (ret >= 0)
            LOGV("%s: %s added to the chain (the image encoder's format)", p->job.output, conv);
    }
    if (ret < 0) {
        char tmp[512];
        snprintf(tmp, sizeof(tmp), "%s: %s", p->job.input, j->err);
        snprintf(j->err, j->errlen, "%s", tmp);
        return ret;
    }
    AVRational rin = j->in_fmt.frame_rate, rout = j->out_fmt.frame_rate;
    if (rin.num > 0 && rout.num > 0 && av_cmp_q(rin, rout)) {
        /* A chain that changes the frame rate (fps) writes that many more or fewer frames. */
        j->progress.total = (int64_t)llrint((double)j->progress.total * av_q2d(rout) / av_q2d(rin));
        j->progress.rate = av_q2d(rout);
    }
    vkcu_video_format sink_fmt = j->out_fmt;
    if (j->gpu) {
        if (f->format != AV_PIX_FMT_VULKAN && p->job.require_gpu_decode) {
            snprintf(j->err, j->errlen, "%s: the Vulkan decoder gave a software frame (%s); refused by %s", p->job.input,
                     av_get_pix_fmt_name(sw), VKCU_SETTING_IS("require_gpu_decode", "1"));
            return VKCU_ERR_DEVICE;
        }
        if (f->format != AV_PIX_FMT_VULKAN) {
            j->r->path = VKCU_PATH_SW_UPLOAD_CUDA;
            LOGI("%s: the GPU cannot decode this stream (%s %s); software decode + upload to CUDA",
                 p->job.input, avcodec_get_name(j->demux->video->codecpar->codec_id), av_get_pix_fmt_name(sw));
        } else {
            j->r->path = vulkan_path(j);
        }
        vkcu_gpu_set_chain(j->gpu, &j->chain);
        sink_fmt.pix_fmt = vkcu_gpu_host_format(j->out_fmt.pix_fmt);
        j->out_fmt.pix_fmt = sink_fmt.pix_fmt;
    }
    j->sink_fmt = sink_fmt;
    ret = j->sink.cls->open(&j->sink, &sink_fmt, sink_fmt.time_base);
    j->sink_ready = 1;
    if (ret >= 0 && j->gpu && j->sink.gpu_frames &&
        vkcu_gpu_encode_into(j->gpu, j->sink.gpu_frames, why, sizeof(why)))
        LOGV("%s: frames reach the Vulkan encoder through the host: %s", p->job.output, why);
    /* The sink has discarded the streams it does not take: where a
     * container's start is that of the streams read, it may have moved. */
    j->clock.origin = av_rescale_q(vkcu_demux_input_start(j->demux->fmt), AV_TIME_BASE_Q, j->tb);
    for (int i = 0; i < j->nb_early && ret >= 0; i++)
        if (trim_packet(j, j->early[i]))
            ret = j->sink.cls->write_packet(&j->sink, j->early[i]);
    for (int i = 0; i < j->nb_early; i++)
        av_packet_free(&j->early[i]);
    j->nb_early = 0;
    return ret;
}

static int frame_is_corrupt(const AVFrame *f)
{
    return (f->flags & AV_FRAME_FLAG_CORRUPT) || f->decode_error_flags;
}

/* Damage the decoder reported: a picture it concealed errors in (frame
 * flags, decode_error_flags), or a packet or picture it could not decode.
 * Frames decoded after it, up to the next key frame, may rest on the
 * concealed pictures, and other decoders (the GPU's) conceal differently:
 * all of them are kept and marked, so that hash lists and comparisons
 * name them (AV_FRAME_FLAG_CORRUPT travels with the frame through the
 * operators and the GPU session to the sink). */
static void damage_seen(job *j)
{
    if (j->marked_since_key < 0)
        j->marked_since_key = 0;
}

/* Marks f when it is damaged or follows damage; returns VKCU_ERR_INPUT
 * (err filled) when the job is strict and f is damaged itself. */
static int mark_damage(job *j, AVFrame *f)
{
    const vkcu_job_params *p = j->p;
    int concealed = frame_is_corrupt(f);
    if ((f->flags & AV_FRAME_FLAG_KEY) && !concealed)
        j->marked_since_key = -1; /* a fresh start: nothing before it is referred to */
    if (concealed) {
        j->r->frames_corrupt++;
        if (p->job.strict) {
            snprintf(j->err, j->errlen, "%s: frame %lld: damaged picture (the decoder concealed errors in it)",
                     p->job.input, (long long)j->frames_seen);
            return VKCU_ERR_INPUT;
        }
        /* One line a picture is a flood on a damaged file (a third of its
         * frames): warn_damage says how many at the end, naming the first. */
        LOGV("%s: frame %lld: damaged picture, concealed by the decoder; kept and marked", p->job.input,
             (long long)j->frames_seen);
        if (j->concealed_pictures < CONCEALED_LISTED)
            j->concealed_first[j->concealed_pictures] = j->frames_seen;
        j->concealed_pictures++;
        damage_seen(j);
    }
    if (j->marked_since_key >= 0) {
        f->flags |= AV_FRAME_FLAG_CORRUPT;
        j->marked_since_key++;
    }
    return 0;
}

/* The decoded frames change size, layout or colour mid-stream (a joined
 * recording, new parameter sets): what the operators hold is flushed to the
 * sink, then they are set up again for the new format, as at the first
 * frame; on the GPU the session also makes its rings again (gpu.h). The
 * sink keeps its format: frames reach it scaled where it takes one
 * (reformat_for_sink). */
static int format_change(job *j, const AVFrame *f)
{
    const vkcu_job_params *p = j->p;
    vkcu_video_format now;
    vkcu_format_from_frame(&now, f, vkcu_frame_sw_format(f));
    int change = vkcu_format_change(&j->in_fmt, &now);
    if (!change)
        return 0;
    char was[96], is[96], why[256];
    const long long at = (long long)j->frames_seen - 1; /* in_window has counted this frame */
    LOGI("%s: frame %lld: the stream changes format mid-way (%s -> %s)%s", p->job.input, at,
         vkcu_format_describe(&j->in_fmt, was, sizeof(was)), vkcu_format_describe(&now, is, sizeof(is)),
         j->gpu ? "; the GPU rings and the operators start again"
         : j->chain.nb_ops ? "; the operators start again" : "");
    j->r->format_changes++;
    if (j->gpu && !vkcu_format_gpu_carries(now.pix_fmt, why, sizeof(why))) {
        snprintf(j->err, j->errlen, "%s: frame %lld: the stream changes to %s mid-way: %s; use %s", p->job.input, at, is,
                 why, VKCU_SETTING_IS("backend", "cpu"));
        return VKCU_ERR_INPUT;
    }
    int ret = flush_chain(j);
    if (ret < 0)
        return ret;
    now.time_base = j->in_fmt.time_base;
    now.frame_rate = j->in_fmt.frame_rate;
    j->in_fmt = now;
    ret = vkcu_chain_reinit(&j->chain, &j->in_fmt, &j->out_fmt, j->err, j->errlen);
    if (ret < 0) {
        char tmp[512];
        snprintf(tmp, sizeof(tmp), "%s: after the format change at frame %lld: %s", p->job.input, at, j->err);
        snprintf(j->err, j->errlen, "%s", tmp);
        return ret;
    }
    if (j->gpu) {
        j->out_fmt.pix_fmt = vkcu_gpu_host_format(j->out_fmt.pix_fmt);
        vkcu_gpu_chain_reinit(j->gpu);
    }
    return 0;
}

/* Returns 1 when the frame lies inside the trim window [trim_start,
 * trim_end), counting at most frame_count frames. Frames before the window
 * are the pre-roll decoded from the keyframe before the cut. */
static int in_window(job *j, const AVFrame *f)
{
    int64_t idx = j->frames_seen++;
    const vkcu_job_params *p = j->p;
    int64_t ts = f->pts;
    if (j->trimmed_done)
        return 0;
    if (p->job.start_frame > 0 && j->trim_start == AV_NOPTS_VALUE) {
        /* No timestamps to find frame N by (raw streams, pipes): count
         * from the stream start; the first frame kept sets the time shift. */
        if (idx < p->job.start_frame)
            return 0;
        j->trim_start = ts;
    }
    if (ts != AV_NOPTS_VALUE && j->trim_start != AV_NOPTS_VALUE && ts < j->trim_start)
        return 0;
    if ((p->job.frame_count >= 0 && j->r->frames_in >= p->job.frame_count) ||
        (ts != AV_NOPTS_VALUE && j->trim_end != AV_NOPTS_VALUE && ts >= j->trim_end)) {
        j->trimmed_done = 1;
        return 0;
    }
    if (!j->r->frames_in && j->trim_start != AV_NOPTS_VALUE)
        LOGV("%s: trim: first frame at pts %lld, after %lld pre-roll frame(s) decoded from the keyframe before it",
             p->job.input, (long long)ts, (long long)idx);
    return 1;
}

/* Packets of other streams follow the video cut: those outside the window
 * are dropped (cut at packet boundaries), the rest shifted like the video.
 * Returns 1 to keep the packet. */
static int trim_packet(job *j, AVPacket *pkt)
{
    AVRational vtb = j->demux->video->time_base, tb = j->demux->fmt->streams[pkt->stream_index]->time_base;
    int64_t ts = pkt->pts != AV_NOPTS_VALUE ? pkt->pts : pkt->dts;
    if (j->trim_start == AV_NOPTS_VALUE) {
        /* Every stream moves with the video: the output starts at zero. */
        int64_t shift = av_rescale_q(j->clock.origin, vtb, tb);
        if (pkt->pts != AV_NOPTS_VALUE)
            pkt->pts -= shift;
        if (pkt->dts != AV_NOPTS_VALUE)
            pkt->dts -= shift;
    }
    if (ts == AV_NOPTS_VALUE || (j->trim_start == AV_NOPTS_VALUE && j->trim_end == AV_NOPTS_VALUE))
        return 1;
    if (j->trim_end != AV_NOPTS_VALUE && av_compare_ts(ts, tb, j->trim_end, vtb) >= 0)
        return 0;
    if (j->trim_start != AV_NOPTS_VALUE) {
        int64_t shift = av_rescale_q(j->trim_start, vtb, tb);
        if (ts < shift)
            return 0;
        if (pkt->pts != AV_NOPTS_VALUE)
            pkt->pts -= shift;
        if (pkt->dts != AV_NOPTS_VALUE)
            pkt->dts -= shift;
    }
    return 1;
}

static int handle_frame(job *j, AVFrame *f)
{
    atomic_store(&j->last_frame_ms, now_ms());
    if (!j->t_first)
        j->t_first = vkcu_now();
    vkcu_frame_clock_stamp(&j->clock, j->dec->avctx, f);
    vkcu_frame_plain_layout(f);
    int ret = mark_damage(j, f);
    if (ret < 0) {
        av_frame_unref(f);
        return ret;
    }
    if (!in_window(j, f)) {
        av_frame_unref(f);
        return 0;
    }
    if (j->p->job.decode_only) {
        j->r->frames_in++;
        j->r->frames_out++;
        if (!j->sink_ready && j->gpu)
            j->r->path = f->format == AV_PIX_FMT_VULKAN ? vulkan_path(j) : VKCU_PATH_SW_UPLOAD_CUDA;
        j->sink_ready = 1;
        av_frame_unref(f);
        vkcu_progress_update(&j->progress, j->r->frames_out, 0);
        return 0;
    }
    ret = !j->sink_ready ? first_frame(j, f) : format_change(j, f);
    if (ret < 0) {
        av_frame_unref(f);
        return ret;
    }
    /* The output starts at zero: at the cut, or at the input's start. */
    f->pts -= j->trim_start != AV_NOPTS_VALUE ? j->trim_start : j->clock.origin;
    j->r->frames_in++;
    if (j->gpu) {
        ret = gpu_drain(j, 0);
        if (ret < 0) {
            av_frame_unref(f);
            return ret;
        }
        AVFrame *owned = av_frame_clone(f);
        av_frame_unref(f);
        if (!owned)
            return AVERROR(ENOMEM);
        ret = vkcu_gpu_push(j->gpu, owned, j->err, j->errlen);
        return ret;
    }
    ret = cpu_chain_feed(j, f);
    av_frame_unref(f);
    return ret;
}

/* With the frames asked for out (--frames), what a parallel decoder's
 * pieces still hold is not wanted: taking it (or draining them) would decode
 * them to their ends for nothing, 2 s of a 1080p file for 30 frames on 2
 * cores. One decoder holds a few frames: it is drained as before. */
static int pieces_done(const job *j)
{
    return j->p->job.max_frames > 0 && j->r->frames_out >= j->p->job.max_frames && j->dec && j->dec->par;
}

static int decode_packet(job *j, const AVPacket *pkt, AVFrame *frame)
{
    int64_t rejected = j->dec->packets_rejected;
    int ret = vkcu_decoder_send(j->dec, pkt, j->p->job.strict, j->err, j->errlen);
    if (j->dec->packets_rejected != rejected)
        damage_seen(j);
    if (ret == AVERROR_EOF)
        ret = 0;
    if (ret < 0 && ret != AVERROR(EAGAIN))
        return ret;
    for (;;) {
        rejected = j->dec->packets_rejected;
        int r = vkcu_decoder_receive(j->dec, frame);
        if (j->dec->packets_rejected != rejected) /* a parallel decoder tells of its packets here */
            damage_seen(j);
        if (r == AVERROR(EAGAIN) || r == AVERROR_EOF)
            break;
        if (r < 0) {
            if (r == AVERROR_INVALIDDATA && !j->p->job.strict) {
                j->r->frames_corrupt++;
                damage_seen(j);
                LOGW("%s: undecodable frame skipped (use %s to stop)", j->p->job.input, VKCU_SETTING_IS("strict", "1"));
                continue;
            }
            char buf[128];
            snprintf(j->err, j->errlen, "%s: decode error: %s", j->p->job.input, vkcu_err_str(r, buf, sizeof(buf)));
            return r == AVERROR_INVALIDDATA ? VKCU_ERR_INPUT : r;
        }
        r = handle_frame(j, frame);
        if (r < 0)
            return r;
        if (pieces_done(j))
            return 0;
        if (vkcu_job_stop_requested())
            return VKCU_ERR_INTERRUPT;
        if (j->p->deadline > 0 && vkcu_now() > j->p->deadline)
            return AVERROR(ETIMEDOUT);
    }
    if (ret == AVERROR(EAGAIN)) /* the decoder was full: the packet is still ours */
        return decode_packet(j, pkt, frame);
    return 0;
}

int vkcu_pipeline_read(job *j)
{
    const vkcu_job_params *p = j->p;
    vkcu_job_result *r = j->r;
    AVPacket *pkt = j->pkt;
    int ret;
    for (;;) {
        if (vkcu_job_stop_requested())
            return VKCU_ERR_INTERRUPT;
        if (atomic_load(&j->stalled)) {
            snprintf(j->err, j->errlen, "%s: decoder stalled: no frame for %.1f s", p->job.input,
                     p->settings.stall_timeout_ms / 1000.0);
            return VKCU_ERR_DEVICE;
        }
        if (p->deadline > 0 && vkcu_now() > p->deadline)
            return AVERROR(ETIMEDOUT);
        int damaged = 0;
        ret = vkcu_demux_read(j->demux, pkt, p->job.strict, &damaged, j->err, j->errlen);
        r->frames_corrupt += damaged; /* the unreadable packet's picture */
        if (ret == AVERROR_EOF)
            return 0;
        if (ret < 0)
            return ret;
        if (pkt->stream_index == j->demux->video_index) {
            vkcu_frame_clock_packet(&j->clock, pkt);
            ret = decode_packet(j, pkt, j->frame);
        } else if (j->sink.cls->write_packet && !p->job.decode_only) {
            if (j->sink_ready) {
                ret = trim_packet(j, pkt) ? j->sink.cls->write_packet(&j->sink, pkt) : 0;
            } else if (j->nb_early < (int)(sizeof(j->early) / sizeof(j->early[0]))) {
                /* Packets before the first video frame wait for the sink. */
                j->early[j->nb_early] = av_packet_clone(pkt);
                ret = j->early[j->nb_early++] ? 0 : AVERROR(ENOMEM);
            } else {
                snprintf(j->err, j->errlen, "%s: more than %d packets of other streams before the first video frame",
                         p->job.input, j->nb_early);
                ret = VKCU_ERR_INPUT;
            }
        }
        av_packet_unref(pkt);
        if (ret < 0)
            return ret;
        if (j->trimmed_done || (p->job.max_frames > 0 && r->frames_out >= p->job.max_frames))
            return 0;
    }
}

int vkcu_pipeline_drain(job *j)
{
    const vkcu_job_params *p = j->p;
    int ret;
    if (!j->trimmed_done && !pieces_done(j) && (ret = decode_packet(j, NULL, j->frame)) < 0)
        return ret;
    if (!j->sink_ready &&
        (p->job.start_time >= 0 || p->job.start_frame > 0 || p->job.duration >= 0 || p->job.frame_count >= 0) &&
        j->frames_seen > 0) {
        /* Frames were decoded, the trim window just holds none of them. */
        const char *start = VKCU_SETTING(p->job.start_frame >= 0 ? "start_frame" : "start_time");
        const char *length = VKCU_SETTING(p->job.frame_count >= 0 ? "frame_count" : "duration");
        snprintf(j->err, j->errlen, "%s: the %s/%s range holds no frame (%lld decoded around it); "
                 "give a longer %s or an earlier %s", p->job.input, start, length,
                 (long long)j->frames_seen, length, start);
        return VKCU_ERR_USAGE;
    }
    if (!j->sink_ready) {
        snprintf(j->err, j->errlen, "%s: no frames could be decoded (corrupt or truncated file%s)", p->job.input,
                 j->r->frames_corrupt ? ", all frames corrupt" : "");
        return VKCU_ERR_INPUT;
    }
    if (!p->job.decode_only && (ret = flush_chain(j)) < 0)
        return ret;
    ret = p->job.decode_only ? 0 : j->sink.cls->close(&j->sink, 1);
    j->sink_ready = 0;
    return ret < 0 ? ret : 0;
}
