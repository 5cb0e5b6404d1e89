/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job runner: demux -> decode -> operators (CPU reference, or the GPU
 * session) -> sink, with trimming, progress, the stall watchdog, and one
 * error line that names the file when anything goes wrong.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <libavutil/pixdesc.h>
#include <libavutil/avstring.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>

#include "gpu/vkdev.h"
#include "gpu/enginestats.h"
#include "gpu/gpu.h"
#include "gpu/vk.h"
#include "util/log.h"
#include "decode.h"
#include "encoders.h"
#include "sink.h"
#include "outfile.h"
#include "progress.h"
#include "timing.h"
#include "gpu/vkencode.h"
#include "util/array.h"
#include "util/pool.h"

/* The GPU ring holds every ring_size the library takes. */
_Static_assert(VKCU_RING_SIZE_MAX <= VKCU_GPU_MAX_SLOTS, "ring_size beyond the GPU ring's capacity");

void vkcu_job_params_default(vkcu_job_params *p)
{
    memset(p, 0, sizeof(*p));
    p->backend = VKCU_BACKEND_AUTO;
    p->crf = -1;
    p->start_time = -1;
    p->duration = -1;
    p->start_frame = -1;
    p->frame_count = -1;
    p->video_stream = -1;
    p->hash_out = stdout;
    p->ring_size = VKCU_RING_SIZE_DEFAULT;
    p->stall_timeout_ms = 10000;
    p->decode_queue = -1;
    p->decode_parallel = VKCU_DECODE_PARALLEL_AUTO;
    p->progress = 1;
}

#define CONCEALED_LISTED 5 /* damaged pictures the end-of-job warning names */

typedef struct job {
    const vkcu_job_params *p;
    vkcu_job_result *r;
    vkcu_demux *demux;
    vkcu_decoder *dec;
    vkcu_gpu *gpu;
    int vk_decode;           /* VKCU_VK_DECODE_*: how the Vulkan decoder decodes, when it is open */
    vkcu_chain chain;
    vkcu_sink sink;
    int sink_ready;
    vkcu_video_format in_fmt, out_fmt;
    vkcu_video_format sink_fmt;  /* what the sink was opened for: frames of another size or layout are scaled to it */
    struct SwsContext *sws;      /* that scaling (reformat_for_sink), for frames of sws_from */
    vkcu_video_format sws_from;
    AVFrame *scaled;
    int64_t marked_since_key;    /* frames marked damaged since the last key frame (-1: none) */
    int64_t concealed_pictures;  /* pictures the decoder concealed errors in (kept) */
    int64_t concealed_first[CONCEALED_LISTED]; /* the first of them, by frame number: one warning names them at the end */
    AVRational tb;
    int threads;
    vkcu_progress progress;
    /* trimming, in the video stream's time base */
    int64_t trim_start, trim_end;
    vkcu_frame_clock clock;  /* decoded frames' timestamps, as ffmpeg's CLI makes them */
    int64_t frames_seen;     /* decoded frames, counted from the stream start */
    int trimmed_done;
    double t_first;          /* when the first frame left the decoder */
    double t_backend;        /* when the backend and decoder were open */
    double ms_backend;       /* how long opening them took */
    int gpu_prepared;        /* vkcu_gpu_prepare was called: wait for it before returning */
    char *err;
    size_t errlen;
    /* watchdog */
    _Atomic long long last_frame_ms;
    _Atomic int watchdog_stop;
    _Atomic int stalled;     /* the watchdog gave up on the decoder */
    _Atomic int in_sink;     /* the job waits for its sink (a slow encoder, a reader's consumer), not the decoder */
    /* packets of other streams that arrive before the sink opens */
    AVPacket *early[512];
    int nb_early;
    pthread_t watchdog;
    int watchdog_running;
} job;

const char *vkcu_path_name(enum vkcu_path path)
{
    switch (path) {
    case VKCU_PATH_CPU: return "cpu";
    case VKCU_PATH_VULKAN_CUDA: return "vulkan-decode+cuda";
    case VKCU_PATH_SW_UPLOAD_CUDA: return "sw-decode+upload+cuda";
    case VKCU_PATH_VULKAN_COMPUTE_CUDA: return "vulkan-compute-decode+cuda";
    default: return "none";
    }
}

static long long now_ms(void)
{
    return (long long)(vkcu_now() * 1000.0);
}

/* FFmpeg's Vulkan decode can stall inside a driver call that no signal
 * interrupts (docs/architecture.md, "Threads"). Nothing can unwind that
 * thread, so the watchdog reports the stall and hands the decision to the program's watchdog
 * callback (the CLI removes partial outputs and ends the process there);
 * the library itself never exits. If the stuck call ever returns,
 * the job fails with VKCU_ERR_DEVICE. */
static void *watchdog_main(void *arg)
{
    job *j = arg;
    while (!atomic_load(&j->watchdog_stop)) {
        usleep(100 * 1000);
        long long idle = now_ms() - atomic_load(&j->last_frame_ms);
        if (idle > j->p->stall_timeout_ms && !atomic_load(&j->in_sink)) {
            LOGE("%s: decoder stalled: no frame for %.1f s (GPU driver or FFmpeg hang); giving up", j->p->input,
                 j->p->stall_timeout_ms / 1000.0);
            atomic_store(&j->stalled, 1);
            if (j->p->watchdog_cb)
                j->p->watchdog_cb(j->p->watchdog_opaque, j->p->input, idle / 1000.0);
            break;
        }
    }
    return NULL;
}

/* Whether frames reach this sink at the size and layout it was opened
 * with, as the ffmpeg CLI's automatic scaler gives them to its encoder and
 * to framemd5: encoders take one size, and hash lists follow ffmpeg unless
 * every decoded frame is asked for (VKCU_TIMING_DECODED). The callback sink
 * gives frames as decoded unless its job follows a hash list's timing
 * (compare). */
static int sink_takes_one_format(const job *j)
{
    const vkcu_job_params *p = j->p;
    switch (p->sink) {
    case VKCU_SINK_ENCODE: return 1;
    case VKCU_SINK_HASH: return p->timing == VKCU_TIMING_FFMPEG;
    case VKCU_SINK_CALLBACK: return p->callback_timing && p->timing == VKCU_TIMING_FFMPEG;
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
    snprintf(j->err, j->errlen, "%s: cannot scale a %s %dx%d frame to %s %dx%d", j->p->input,
             av_get_pix_fmt_name(f->format), f->width, f->height, av_get_pix_fmt_name(to->pix_fmt), to->width,
             to->height);
    return ret < 0 ? ret : AVERROR(EINVAL);
}

static int sink_write(job *j, AVFrame *f)
{
    vkcu_job_result *r = j->r;
    if (j->p->max_frames > 0 && r->frames_out >= j->p->max_frames)
        return 0;
    if (sink_takes_one_format(j)) {
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
        snprintf(j->err, j->errlen, "%s: operator %s failed: %s", j->p->input, failed->cls->name,
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

static int trim_packet(job *j, AVPacket *pkt);

/* The path of Vulkan-decoded frames: on a video queue or on compute. */
static enum vkcu_path vulkan_path(const job *j)
{
    return j->vk_decode == VKCU_VK_DECODE_COMPUTE ? VKCU_PATH_VULKAN_COMPUTE_CUDA : VKCU_PATH_VULKAN_CUDA;
}

/* Sets up operators and the sink from the first decoded frame. */
static int first_frame(job *j, const AVFrame *f)
{
    const vkcu_job_params *p = j->p;
    enum AVPixelFormat sw = vkcu_frame_sw_format(f);
    char why[256];
    if (j->gpu && !vkcu_format_gpu_carries(sw, why, sizeof(why))) {
        /* The same job, on the CPU reference: both backends accept the same inputs. */
        LOGI("%s: %s; processing on the CPU", p->input, why);
        vkcu_gpu_close(&j->gpu);
        j->r->path = VKCU_PATH_CPU;
    }
    vkcu_format_from_frame(&j->in_fmt, f, sw);
    j->in_fmt.time_base = j->tb;
    j->in_fmt.frame_rate = j->demux->frame_rate;
    int ret = vkcu_chain_init(&j->chain, &j->in_fmt, &j->out_fmt, j->err, j->errlen);
    char conv[64];
    if (ret >= 0 && p->sink == VKCU_SINK_ENCODE &&
        vkcu_image_convert(p->output, p->output_format, p->encoder, j->out_fmt.pix_fmt, j->out_fmt.range, conv,
                           sizeof(conv))) {
        /* An image output: its encoder's pixel format, converted by the
         * chain's own operator (as ffmpeg converts for the encoder). */
        char *text = av_asprintf("%s%s%s", p->chain && *p->chain ? p->chain : "", p->chain && *p->chain ? "," : "",
                                 conv);
        vkcu_chain_free(&j->chain);
        ret = text ? vkcu_chain_parse(text, &j->chain, j->err, j->errlen) : AVERROR(ENOMEM);
        av_free(text);
        for (int i = 0; ret >= 0 && i < j->chain.nb_ops; i++)
            j->chain.ops[i]->threads = j->threads;
        if (ret >= 0)
            ret = vkcu_chain_init(&j->chain, &j->in_fmt, &j->out_fmt, j->err, j->errlen);
        if (ret >= 0)
            LOGV("%s: %s added to the chain (the image encoder's format)", p->output, conv);
    }
    if (ret < 0) {
        char tmp[512];
        snprintf(tmp, sizeof(tmp), "%s: %s", p->input, j->err);
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
        if (f->format != AV_PIX_FMT_VULKAN && p->require_gpu_decode) {
            snprintf(j->err, j->errlen, "%s: the Vulkan decoder gave a software frame (%s); refused by %s", p->input,
                     av_get_pix_fmt_name(sw), VKCU_SETTING_IS("require_gpu_decode", "1"));
            return VKCU_ERR_DEVICE;
        }
        if (f->format != AV_PIX_FMT_VULKAN) {
            j->r->path = VKCU_PATH_SW_UPLOAD_CUDA;
            LOGI("%s: the GPU cannot decode this stream (%s %s); software decode + upload to CUDA",
                 p->input, avcodec_get_name(j->demux->video->codecpar->codec_id), av_get_pix_fmt_name(sw));
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
        LOGV("%s: frames reach the Vulkan encoder through the host: %s", p->output, why);
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
        if (p->strict) {
            snprintf(j->err, j->errlen, "%s: frame %lld: damaged picture (the decoder concealed errors in it)",
                     p->input, (long long)j->frames_seen);
            return VKCU_ERR_INPUT;
        }
        /* One line a picture is a flood on a damaged file (a third of its
         * frames): warn_damage says how many at the end, naming the first. */
        LOGV("%s: frame %lld: damaged picture, concealed by the decoder; kept and marked", p->input,
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
    LOGI("%s: frame %lld: the stream changes format mid-way (%s -> %s)%s", p->input, at,
         vkcu_format_describe(&j->in_fmt, was, sizeof(was)), vkcu_format_describe(&now, is, sizeof(is)),
         j->gpu ? "; the GPU rings and the operators start again"
         : j->chain.nb_ops ? "; the operators start again" : "");
    j->r->format_changes++;
    if (j->gpu && !vkcu_format_gpu_carries(now.pix_fmt, why, sizeof(why))) {
        snprintf(j->err, j->errlen, "%s: frame %lld: the stream changes to %s mid-way: %s; use %s", p->input, at, is,
                 why, VKCU_SETTING_IS("backend", "cpu"));
        return VKCU_ERR_INPUT;
    }
    int ret;
    if (j->gpu) {
        ret = vkcu_gpu_push(j->gpu, NULL, j->err, j->errlen);
        if (ret >= 0)
            ret = gpu_drain(j, 1);
    } else {
        ret = cpu_chain_feed(j, NULL);
    }
    if (ret < 0)
        return ret;
    now.time_base = j->in_fmt.time_base;
    now.frame_rate = j->in_fmt.frame_rate;
    j->in_fmt = now;
    ret = vkcu_chain_reinit(&j->chain, &j->in_fmt, &j->out_fmt, j->err, j->errlen);
    if (ret < 0) {
        char tmp[512];
        snprintf(tmp, sizeof(tmp), "%s: after the format change at frame %lld: %s", p->input, at, j->err);
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
    if (p->start_frame > 0 && j->trim_start == AV_NOPTS_VALUE) {
        /* No timestamps to find frame N by (raw streams, pipes): count
         * from the stream start; the first frame kept sets the time shift. */
        if (idx < p->start_frame)
            return 0;
        j->trim_start = ts;
    }
    if (ts != AV_NOPTS_VALUE && j->trim_start != AV_NOPTS_VALUE && ts < j->trim_start)
        return 0;
    if ((p->frame_count >= 0 && j->r->frames_in >= p->frame_count) ||
        (ts != AV_NOPTS_VALUE && j->trim_end != AV_NOPTS_VALUE && ts >= j->trim_end)) {
        j->trimmed_done = 1;
        return 0;
    }
    if (!j->r->frames_in && j->trim_start != AV_NOPTS_VALUE)
        LOGV("%s: trim: first frame at pts %lld, after %lld pre-roll frame(s) decoded from the keyframe before it",
             p->input, (long long)ts, (long long)idx);
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
    if (j->p->decode_only) {
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

static int decode_packet(job *j, const AVPacket *pkt, AVFrame *frame)
{
    int64_t rejected = j->dec->packets_rejected;
    int ret = vkcu_decoder_send(j->dec, pkt, j->p->strict, j->err, j->errlen);
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
            if (r == AVERROR_INVALIDDATA && !j->p->strict) {
                j->r->frames_corrupt++;
                damage_seen(j);
                LOGW("%s: undecodable frame skipped (use %s to stop)", j->p->input, VKCU_SETTING_IS("strict", "1"));
                continue;
            }
            char buf[128];
            snprintf(j->err, j->errlen, "%s: decode error: %s", j->p->input, vkcu_err_str(r, buf, sizeof(buf)));
            return r == AVERROR_INVALIDDATA ? VKCU_ERR_INPUT : r;
        }
        r = handle_frame(j, frame);
        if (r < 0)
            return r;
        if (vkcu_job_stop_requested())
            return VKCU_ERR_INTERRUPT;
        if (j->p->deadline > 0 && vkcu_now() > j->p->deadline)
            return AVERROR(ETIMEDOUT);
    }
    if (ret == AVERROR(EAGAIN)) /* the decoder was full: the packet is still ours */
        return decode_packet(j, pkt, frame);
    return 0;
}

/* VKCU_ENGINE_STATS=1 (gpu/enginestats.h): the process's engine figures
 * so far, one log line per queue and a summary, at the end of each GPU job. */
static void log_engine_stats(void)
{
    vkcu_engine_stats s;
    size_t len = 16384;
    char *text = av_malloc(len);
    if (!text)
        return;
    vkcu_engine_stats_get(&s);
    vkcu_engine_stats_text(&s, text, len);
    for (char *line = text, *end; *line; line = end + 1) {
        if (!(end = strchr(line, '\n')))
            break;
        *end = 0;
        LOGI("%s", line);
    }
    av_free(text);
}

/* gpu/'s question to the job: does its hash sink take GPU digests? Not
 * for frames it must scale first (a format change mid-stream). */
static int digest_instead(void *opaque, enum AVPixelFormat host_fmt)
{
    const job *j = opaque;
    if (j->sink_ready && sink_takes_one_format(j) &&
        (host_fmt != j->sink_fmt.pix_fmt || j->out_fmt.width != j->sink_fmt.width ||
         j->out_fmt.height != j->sink_fmt.height))
        return 0;
    return vkcu_hash_on_gpu(j->p, host_fmt);
}

static int open_backend(job *j)
{
    const vkcu_job_params *p = j->p;
    char why[512] = "";
    int ret;
    if (p->backend != VKCU_BACKEND_CPU) {
        vkcu_gpu_config gc = {
            .device = p->device,
            .ring_size = p->ring_size,
            .timeline_handoff = p->timeline_handoff,
            .stall_timeout_ms = p->stall_timeout_ms,
            .frames_wanted = p->sink != VKCU_SINK_NULL,
            .vulkan_download = p->download == VKCU_DOWNLOAD_VULKAN,
            .decode_queue_pin = p->decode_queue + 1,
            .digest_instead = digest_instead,
            .opaque = j,
            .cuda_pool = p->cuda_pool,
        };
        ret = vkcu_gpu_open(&gc, &j->gpu, why, sizeof(why));
        if (ret < 0) {
            /* A GPU that cannot honour a setting (a decode queue it lacks) fails the job on any backend. */
            if (ret == VKCU_ERR_USAGE) {
                snprintf(j->err, j->errlen, "%s: %s", p->input, why);
                return VKCU_ERR_DEVICE;
            }
            if (p->backend == VKCU_BACKEND_GPU) {
                /* A machine without the GPU still runs the job: say how. */
                snprintf(j->err, j->errlen, "%s: %s: %s; %s processes it without a GPU", p->input,
                         VKCU_SETTING_IS("backend", "gpu"), why, VKCU_SETTING_IS("backend", "cpu"));
                return VKCU_ERR_DEVICE;
            }
            LOGV("no GPU backend (%s); using the CPU reference", why);
        }
    }
    if (j->gpu) {
        AVBufferRef *vk = vkcu_gpu_vulkan_device(j->gpu);
        if ((j->vk_decode = vkcu_decoder_vulkan_supported(j->demux, vk, why, sizeof(why)))) {
            ret = vkcu_decoder_open(j->demux, vk, 1, &j->dec, j->err, j->errlen);
            if (ret >= 0)
                return 0;
            LOGV("%s: Vulkan decoder did not open (%s); software decode + upload", p->input, j->err);
            j->err[0] = 0;
        } else {
            LOGI("%s: %s; software decode + upload to CUDA", p->input, why);
        }
        j->r->path = VKCU_PATH_SW_UPLOAD_CUDA;
    } else {
        j->r->path = VKCU_PATH_CPU;
    }
    if (p->require_gpu_decode) {
        snprintf(j->err, j->errlen, "%s: the GPU does not decode this stream (%s); refused by %s "
                 "(drop it to allow the software decoder)", p->input,
                 j->gpu ? (why[0] ? why : "the Vulkan decoder did not open") : "no GPU backend",
                 VKCU_SETTING_IS("require_gpu_decode", "1"));
        return VKCU_ERR_DEVICE;
    }
    /* One decode policy for every sink, so that hash, compare, verify and
     * transcode give the same frames of the same input on every run:
     * FFmpeg's threaded decoders (frame and slice threads alike) conceal a
     * damaged picture from whatever another thread has finished by then,
     * so a damaged stream decodes differently from run to run (and frame
     * counts change) unless the decoder has one thread. More threads are
     * the caller's choice (decode_threads), for clean streams. */
    int n = p->decode_threads <= 1 && !p->strict ? vkcu_decode_parallel_count(p->decode_parallel) : 0;
    if (n >= 2)
        return vkcu_decoder_open_parallel(j->demux, n, vkcu_decode_segment_min(p->decode_segment_min),
                                          vkcu_decode_parallel_budget(), &j->dec, j->err, j->errlen);
    return vkcu_decoder_open(j->demux, NULL, p->decode_threads > 0 ? p->decode_threads : 1, &j->dec, j->err,
                             j->errlen);
}

/* Turns --start/--duration into a window of presentation timestamps and
 * seeks to the keyframe before the cut. A frame number N means the N-th
 * frame in presentation order (from 0), as `vkcu hash` numbers them: its pts
 * is found by reading packets (no decoding) when the input is seekable. */
static int setup_trim(job *j)
{
    const vkcu_job_params *p = j->p;
    vkcu_demux *d = j->demux;
    AVRational tb = d->video->time_base;
    int64_t st = d->video->start_time != AV_NOPTS_VALUE ? d->video->start_time : 0;
    /* A raw stream (no timestamps of its own: the decoder's frames are timed as they come) is
     * trimmed by decoding from its start, as a pipe is. */
    int seekable = d->fmt->pb && (d->fmt->pb->seekable & AVIO_SEEKABLE_NORMAL) && !(d->fmt->iformat->flags & AVFMT_NOTIMESTAMPS);
    double rate = d->frame_rate.num > 0 ? av_q2d(d->frame_rate) : 0;
    int64_t max_delay = 0;
    int ret = 0;
    j->trim_start = j->trim_end = AV_NOPTS_VALUE;
    j->progress.rate = rate;
    if (p->start_time < 0 && p->start_frame <= 0 && p->duration < 0 && p->frame_count < 0)
        return 0;
    if (p->start_time > 0 && d->fmt->duration > 0 && p->start_time * 1e6 >= d->fmt->duration) {
        char at[32];
        snprintf(at, sizeof(at), "%.3f", p->start_time);
        snprintf(j->err, j->errlen, "%s: %s is past the end (the input lasts %.3f s)", p->input,
                 VKCU_SETTING_IS("start_time", at), d->fmt->duration / 1e6);
        return VKCU_ERR_USAGE;
    }
    vkcu_packet_scan scan = { 0 };
    int scanned = 0;
    if (p->start_frame > 0 && seekable && !(d->fmt->iformat->flags & AVFMT_NOTIMESTAMPS)) {
        /* Slack past frame N: a frame can come up to 16 (DPB) packets late. */
        int64_t count = p->frame_count > 0 ? p->frame_count : 0;
        int64_t slack = count > INT64_MAX - 33 ? INT64_MAX : 33 + count;
        int64_t limit = p->start_frame > INT64_MAX - slack ? INT64_MAX : p->start_frame + slack;
        int64_t *pts = NULL, n = 0;
        ret = vkcu_demux_scan(d, limit, AV_NOPTS_VALUE, &scan);
        scanned = 1; /* the demuxer has moved: back to the start below, at least */
        for (int64_t i = 0; ret >= 0 && i < scan.n; i++)
            if (scan.pts[i] == AV_NOPTS_VALUE)
                ret = AVERROR(ENOSYS);
        if (ret >= 0 && !(pts = malloc(sizeof(*pts) * (size_t)(scan.n ? scan.n : 1))))
            ret = AVERROR(ENOMEM);
        if (ret >= 0) {
            n = scan.n;
            memcpy(pts, scan.pts, sizeof(*pts) * (size_t)n);
            qsort(pts, (size_t)n, sizeof(*pts), vkcu_i64_cmp);
            max_delay = scan.max_delay;
        }
        if (ret >= 0 && n <= p->start_frame) {
            char at[32];
            snprintf(at, sizeof(at), "%lld", (long long)p->start_frame);
            snprintf(j->err, j->errlen, "%s: %s is past the end (the input has %lld frames)", p->input,
                     VKCU_SETTING_IS("start_frame", at), (long long)n);
            free(pts);
            vkcu_packet_scan_free(&scan);
            return VKCU_ERR_USAGE;
        }
        if (ret >= 0) {
            j->trim_start = pts[p->start_frame];
            if (p->frame_count >= 0 && p->frame_count < n - p->start_frame)
                j->trim_end = pts[p->start_frame + p->frame_count];
        }
        free(pts);
        if (ret < 0 && ret != AVERROR(ENOSYS)) {
            char buf[128];
            snprintf(j->err, j->errlen, "%s: cannot read the input to find frame %lld: %s", p->input,
                     (long long)p->start_frame, vkcu_err_str(ret, buf, sizeof(buf)));
            vkcu_packet_scan_free(&scan);
            return VKCU_ERR_INPUT;
        }
        ret = 0;
    } else if (p->start_time >= 0) {
        j->trim_start = st + av_rescale_q((int64_t)(p->start_time * 1e6 + 0.5), AV_TIME_BASE_Q, tb);
        if (j->trim_start > st && seekable) {
            /* Where the key frames lie: up to the cut (and past it by the
             * reordering) where seeks are searches; a few packets to learn
             * the reordering where the container's index finds them. */
            if (vkcu_demux_scan(d, d->indexed ? 64 : INT64_MAX, d->indexed ? AV_NOPTS_VALUE : j->trim_start,
                                &scan) >= 0) {
                max_delay = scan.max_delay;
                scanned = 1;
            }
        }
    }
    if (p->duration >= 0) {
        int64_t s = j->trim_start != AV_NOPTS_VALUE ? j->trim_start : st;
        j->trim_end = s + av_rescale_q((int64_t)(p->duration * 1e6 + 0.5), AV_TIME_BASE_Q, tb);
    }
    /* Decode from the keyframe before the cut. With an index, seek by
     * time: some containers (MP4) index decode times, so aim max_delay (and
     * a frame) earlier, and the keyframe found shows at or before the cut.
     * Without one (MPEG-TS: a seek is a search that lands on any packet),
     * go back to the start and skip the video packets before the key frame
     * that the scan found, so decoding starts exactly there. */
    if (seekable && (j->trim_start != AV_NOPTS_VALUE && j->trim_start > st) && !d->indexed && scan.n) {
        int64_t key = vkcu_packet_scan_key_before(&scan, j->trim_start);
        LOGV("%s: no index to seek by: decoding from video packet %lld (a key frame), found by reading from the start",
             p->input, (long long)key);
        if (vkcu_demux_seek_packet(d, key) < 0) {
            snprintf(j->err, j->errlen, "%s: cannot seek back to the start after looking for the key frame", p->input);
            vkcu_packet_scan_free(&scan);
            return VKCU_ERR_INPUT;
        }
    } else if (seekable && (j->trim_start != AV_NOPTS_VALUE && j->trim_start > st)) {
        int64_t frame = rate > 0 ? av_rescale_q(1, av_inv_q(d->frame_rate), tb) : 0;
        int64_t target = j->trim_start - max_delay - frame;
        if (target <= st || vkcu_demux_seek(d, target) < 0)
            avformat_seek_file(d->fmt, d->video_index, INT64_MIN, st, st, 0);
    } else if (seekable && scanned && avformat_seek_file(d->fmt, d->video_index, INT64_MIN, st, st, 0) < 0) {
        snprintf(j->err, j->errlen, "%s: cannot seek back to the start after looking for frame %lld", p->input,
                 (long long)p->start_frame);
        vkcu_packet_scan_free(&scan);
        return VKCU_ERR_INPUT;
    }
    vkcu_packet_scan_free(&scan);
    /* What the progress line counts towards. */
    if (p->frame_count >= 0)
        j->progress.expected = p->frame_count;
    else if (p->duration >= 0 && rate > 0)
        j->progress.expected = (int64_t)(p->duration * rate + 0.5);
    else if (d->frames_estimate > 0 && p->start_frame > 0)
        j->progress.expected = FFMAX(d->frames_estimate - p->start_frame, 1);
    else if (d->frames_estimate > 0 && p->start_time > 0 && rate > 0)
        j->progress.expected = FFMAX(d->frames_estimate - (int64_t)(p->start_time * rate), 1);
    return ret;
}

/* --stats: when each step of the set-up ran, in ms from the job's start:
 * the shared device's threads (gpu/device.c), then this job's own. */
static void setup_timeline(job *j, double t0, double t_demux, double t_open)
{
    vkcu_job_result *r = j->r;
    char *buf = r->setup_timeline;
    size_t len = sizeof(r->setup_timeline), used;
    vkcu_vkdev_timeline(j->p->device, t0, buf, len);
    if (!buf[0]) /* no GPU device was made */
        return;
    const struct { const char *name; double a, b; } steps[] = {
        { "demux", t_demux, t_demux + r->setup_ms_demux / 1e3 },
        { "gpu_open", t_open, t_open + r->setup_ms_gpu_open / 1e3 },
        { "decoder", t_open + r->setup_ms_gpu_open / 1e3, j->t_backend },
        { "first_frame", j->t_backend, j->t_first },
    };
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
        if (steps[i].a > 0 && steps[i].b >= steps[i].a && (used = strlen(buf)) < len)
            snprintf(buf + used, len - used, "%s%s=%.0f-%.0f", used ? " " : "", steps[i].name, (steps[i].a - t0) * 1e3,
                     (steps[i].b - t0) * 1e3);
}

/* User and system time of the whole process so far. */
static double process_cpu_seconds(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) < 0)
        return 0;
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

/* The pictures the decoder concealed errors in, said once: how many and
 * the first few (each is a verbose line as it comes). */
static void warn_damage(const job *j)
{
    const int64_t n = j->concealed_pictures;
    const int listed = n < CONCEALED_LISTED ? (int)n : CONCEALED_LISTED;
    char frames[128] = "";
    if (!n)
        return;
    for (int k = 0; k < listed; k++) {
        size_t len = strlen(frames);
        snprintf(frames + len, sizeof(frames) - len, "%s%lld", k ? ", " : "", (long long)j->concealed_first[k]);
    }
    LOGW("%s: %lld damaged picture%s, concealed by the decoder: frame%s %s%s (%s lists each); kept and marked (use "
         "%s to stop)", j->p->input, (long long)n, n > 1 ? "s" : "", n > 1 ? "s" : "", frames, n > listed ? ", ..." : "",
         VKCU_SETTING_IS("log_level", "verbose"), VKCU_SETTING_IS("strict", "1"));
}

/* What became of the decoded frames, said once at the end of a job that
 * did not hand every one of them to the sink as it was decoded. */
static void warn_frame_counts(const job *j)
{
    const vkcu_job_params *p = j->p;
    const vkcu_job_result *r = j->r;
    const int hashes = p->sink == VKCU_SINK_HASH || (p->sink == VKCU_SINK_CALLBACK && p->callback_timing);
    char size[64];
    snprintf(size, sizeof(size), "%s %dx%d", av_get_pix_fmt_name(j->sink_fmt.pix_fmt), j->sink_fmt.width,
             j->sink_fmt.height);
    if (hashes && p->timing == VKCU_TIMING_FFMPEG) {
        if (r->frames_dropped)
            LOGW("%s: %lld of %lld decoded frames were dropped by their timestamps, as ffmpeg's framemd5 drops them; "
                 "%s takes every decoded frame", p->input, (long long)r->frames_dropped, (long long)r->frames_out,
                 VKCU_SETTING_IS("timing", "decoded"));
        if (r->frames_duplicated)
            LOGW("%s: %lld frames were repeated to fill gaps in their timestamps; %s takes each decoded frame once",
                 p->input, (long long)r->frames_duplicated, VKCU_SETTING_IS("timing", "decoded"));
        if (r->frames_rescaled)
            LOGW("%s: %lld of %lld frames were scaled to the first frame's %s, as ffmpeg's framemd5 scales them; "
                 "%s keeps every frame's own size", p->input, (long long)r->frames_rescaled, (long long)r->frames_out,
                 size, VKCU_SETTING_IS("timing", "decoded"));
    } else if (p->sink == VKCU_SINK_ENCODE && r->frames_rescaled) {
        LOGW("%s: %lld of %lld frames were scaled to the first frame's %s for the encoder: the stream changes "
             "format mid-way", p->input, (long long)r->frames_rescaled, (long long)r->frames_out, size);
    }
    if (r->frames_concealed)
        LOGW("%s: %lld frames decoded from damaged data (the decoder concealed errors in them or in the pictures "
             "they refer to, up to the next key frame): kept and marked as concealed; other decoders conceal "
             "differently", p->input, (long long)r->frames_concealed);
}

int vkcu_job_run(const vkcu_job_params *p, vkcu_job_result *r)
{
    job j_ = { 0 }, *j = &j_;
    AVPacket *pkt = NULL;
    AVFrame *frame = NULL;
    int ret, output_refused = 0; /* the output is an input: that line stands, not a write error's */
    memset(r, 0, sizeof(*r));
    j->p = p;
    j->r = r;
    j->marked_since_key = -1;
    j->err = r->error;
    j->errlen = sizeof(r->error);
    j->threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (j->threads < 1)
        j->threads = 1;
    double t0 = vkcu_now(), t_demux = 0, t_open = 0, cpu0 = process_cpu_seconds();
    /* Checked here, whatever the backend, and never clamped below. */
    if (p->ring_size < VKCU_RING_SIZE_MIN || p->ring_size > VKCU_RING_SIZE_MAX) {
        snprintf(j->err, j->errlen, "ring_size %d is not in [%d, %d] (interop ring slots)", p->ring_size,
                 VKCU_RING_SIZE_MIN, VKCU_RING_SIZE_MAX);
        return AVERROR(EINVAL);
    }

    ret = vkcu_chain_parse(p->chain, &j->chain, j->err, j->errlen);
    if (ret < 0)
        goto fail;
    struct stat st;
    if (p->sink == VKCU_SINK_ENCODE && p->output && strcmp(p->output, "-") && stat(p->output, &st) == 0 &&
        S_ISDIR(st.st_mode)) {
        /* Found now, not at the first frame: nothing is decoded for an output that cannot be. */
        snprintf(j->err, j->errlen, "%s: is a folder; the output must be a file name (e.g. %s/out.mkv)", p->output,
                 p->output);
        ret = VKCU_ERR_OUTPUT;
        goto fail;
    }
    for (int i = 0; i < j->chain.nb_ops; i++)
        j->chain.ops[i]->threads = j->threads;
    /* The GPU's devices are made beside the demuxer's probing. */
    if (p->backend != VKCU_BACKEND_CPU) {
        if (p->sink == VKCU_SINK_ENCODE) /* the GPU's device then carries the encoder's queue */
            vkcu_vkdev_expect(1, vkcu_vkencode_op(p->encoder) | vkcu_vkencode_op(p->gpu_encoder));
        vkcu_vkdev_expect_decode_queue(p->decode_queue); /* the device then has it, claimed */
        vkcu_gpu_prepare(p->device);
        j->gpu_prepared = 1;
    }
    t_demux = vkcu_now();
    ret = vkcu_demux_open(p->input, p->video_stream, &j->demux, j->err, j->errlen);
    r->setup_ms_demux = (vkcu_now() - t_demux) * 1e3;
    if (ret < 0)
        goto fail;
    j->tb = j->demux->video->time_base;
    {
        /* Refused now rather than after the decoder and GPU are set up; "-"
         * too, since standard output can be redirected onto the input. */
        const char *inputs[] = { p->input, p->pipeline_file, NULL };
        if (p->sink == VKCU_SINK_ENCODE && p->output &&
            (ret = vkcu_outfile_check(p->output, p->overwrite, inputs, j->err, j->errlen)) < 0)
            goto fail;
        if (p->sink == VKCU_SINK_HASH && p->hash_out &&
            (ret = vkcu_outfile_check_fd(fileno(p->hash_out), fileno(p->hash_out) == STDOUT_FILENO ? "standard output"
                                         : "the hash output", inputs, j->err, j->errlen)) < 0) {
            output_refused = 1;
            goto fail;
        }
    }
    /* Audio and subtitle streams picked by number: one past the last is
     * refused before anything is decoded. */
    if (p->sink == VKCU_SINK_ENCODE && !p->decode_only &&
        (ret = vkcu_demux_check_picks(j->demux, p->audio_streams, p->subtitle_streams, j->err, j->errlen)) < 0)
        goto fail;
    /* Only the encode sink copies other streams: the rest are not read. */
    if (p->sink != VKCU_SINK_ENCODE || p->decode_only)
        for (unsigned i = 0; i < j->demux->fmt->nb_streams; i++)
            if ((int)i != j->demux->video_index)
                j->demux->fmt->streams[i]->discard = AVDISCARD_ALL;
    vkcu_frame_clock_init(&j->clock, j->demux->fmt, j->demux->video,
                          av_rescale_q(vkcu_demux_input_start(j->demux->fmt), AV_TIME_BASE_Q, j->tb));
    t_open = vkcu_now();
    ret = open_backend(j);
    if (ret < 0)
        goto fail;
    j->t_backend = vkcu_now();
    j->ms_backend = (j->t_backend - t_open) * 1e3;
    LOGD("%s: set-up: demux %.0f ms, backend and decoder %.0f ms", p->input, (t_open - t0) * 1e3,
         (j->t_backend - t_open) * 1e3);
    ret = setup_trim(j);
    if (ret < 0)
        goto fail;

    j->sink.cls = p->sink == VKCU_SINK_HASH       ? &vkcu_sink_hash
                  : p->sink == VKCU_SINK_NULL     ? &vkcu_sink_null
                  : p->sink == VKCU_SINK_CALLBACK ? &vkcu_sink_callback
                                                  : &vkcu_sink_encode;
    j->sink.params = p;
    j->sink.result = r;
    j->sink.demux = j->demux;
    j->sink.err = j->err;
    j->sink.errlen = j->errlen;
    if (j->sink.cls->priv_size && !(j->sink.priv = av_mallocz(j->sink.cls->priv_size))) {
        ret = AVERROR(ENOMEM);
        goto fail;
    }
    j->progress.callback = p->progress_cb;
    j->progress.opaque = p->progress_opaque;
    vkcu_progress_init(&j->progress, p->progress, p->frame_count > 0 ? p->frame_count : j->demux->frames_estimate,
                       p->input);

    pkt = av_packet_alloc();
    frame = av_frame_alloc();
    if (!pkt || !frame) {
        ret = AVERROR(ENOMEM);
        goto fail;
    }
    atomic_store(&j->last_frame_ms, now_ms());
    if (j->gpu && p->stall_timeout_ms > 0 && vkcu_thread_create(&j->watchdog, watchdog_main, j) == 0)
        j->watchdog_running = 1;

    for (;;) {
        if (vkcu_job_stop_requested()) {
            ret = VKCU_ERR_INTERRUPT;
            goto fail;
        }
        if (atomic_load(&j->stalled)) {
            snprintf(j->err, j->errlen, "%s: decoder stalled: no frame for %.1f s", p->input,
                     p->stall_timeout_ms / 1000.0);
            ret = VKCU_ERR_DEVICE;
            goto fail;
        }
        if (p->deadline > 0 && vkcu_now() > p->deadline) {
            ret = AVERROR(ETIMEDOUT);
            goto fail;
        }
        int damaged = 0;
        ret = vkcu_demux_read(j->demux, pkt, p->strict, &damaged, j->err, j->errlen);
        r->frames_corrupt += damaged; /* the unreadable packet's picture */
        if (ret == AVERROR_EOF)
            break;
        if (ret < 0)
            goto fail;
        if (pkt->stream_index == j->demux->video_index) {
            vkcu_frame_clock_packet(&j->clock, pkt);
            ret = decode_packet(j, pkt, frame);
        } else if (j->sink.cls->write_packet && !p->decode_only) {
            if (j->sink_ready) {
                ret = trim_packet(j, pkt) ? j->sink.cls->write_packet(&j->sink, pkt) : 0;
            } else if (j->nb_early < (int)(sizeof(j->early) / sizeof(j->early[0]))) {
                /* Packets before the first video frame wait for the sink. */
                j->early[j->nb_early] = av_packet_clone(pkt);
                ret = j->early[j->nb_early++] ? 0 : AVERROR(ENOMEM);
            } else {
                snprintf(j->err, j->errlen, "%s: more than %d packets of other streams before the first video frame",
                         p->input, j->nb_early);
                ret = VKCU_ERR_INPUT;
            }
        }
        av_packet_unref(pkt);
        if (ret < 0)
            goto fail;
        if (j->trimmed_done || (p->max_frames > 0 && r->frames_out >= p->max_frames))
            break;
    }
    if (!j->trimmed_done) {
        ret = decode_packet(j, NULL, frame);
        if (ret < 0)
            goto fail;
    }
    if (!j->sink_ready && (p->start_time >= 0 || p->start_frame > 0 || p->duration >= 0 || p->frame_count >= 0) &&
        j->frames_seen > 0) {
        /* Frames were decoded, the trim window just holds none of them. */
        const char *start = VKCU_SETTING(p->start_frame >= 0 ? "start_frame" : "start_time");
        const char *length = VKCU_SETTING(p->frame_count >= 0 ? "frame_count" : "duration");
        snprintf(j->err, j->errlen, "%s: the %s/%s range holds no frame (%lld decoded around it); "
                 "give a longer %s or an earlier %s", p->input, start, length,
                 (long long)j->frames_seen, length, start);
        ret = VKCU_ERR_USAGE;
        goto fail;
    }
    if (!j->sink_ready) {
        snprintf(j->err, j->errlen, "%s: no frames could be decoded (corrupt or truncated file%s)", p->input,
                 r->frames_corrupt ? ", all frames corrupt" : "");
        ret = VKCU_ERR_INPUT;
        goto fail;
    }
    if (p->decode_only) {
        ret = 0;
    } else if (j->gpu) {
        ret = vkcu_gpu_push(j->gpu, NULL, j->err, j->errlen);
        if (ret >= 0)
            ret = gpu_drain(j, 1);
    } else {
        ret = cpu_chain_feed(j, NULL);
    }
    if (ret < 0)
        goto fail;
    ret = p->decode_only ? 0 : j->sink.cls->close(&j->sink, 1);
    j->sink_ready = 0;
    if (ret < 0)
        goto fail;
    warn_damage(j);
    warn_frame_counts(j);
    vkcu_progress_update(&j->progress, r->frames_out, 1);
    ret = 0;
fail:
    /* a failed job says its damage too (it may be why), a stopped one not */
    if (ret < 0 && ret != VKCU_ERR_INTERRUPT && ret != VKCU_ERR_PIPE_CLOSED)
        warn_damage(j);
    if (j->watchdog_running) {
        atomic_store(&j->watchdog_stop, 1);
        pthread_join(j->watchdog, NULL);
    }
    if (ret < 0 && j->sink.cls && j->sink.priv && j->sink.cls->close)
        j->sink.cls->close(&j->sink, 0);
    if (ret < 0 && !j->err[0]) {
        char buf[128];
        snprintf(j->err, j->errlen, "%s: %s", p->input, vkcu_err_str(ret, buf, sizeof(buf)));
    }
    /* A write or an open cut short by a stop signal (an output FIFO that
     * nobody reads) is the stop, not a failure of the output. */
    if (ret == VKCU_ERR_OUTPUT && vkcu_job_stop_requested())
        ret = VKCU_ERR_INTERRUPT;
    if (ret == VKCU_ERR_OUTPUT && p->sink == VKCU_SINK_HASH && p->hash_out_name && !output_refused)
        snprintf(j->err, j->errlen, "%s: cannot write the hashes (disk full, or over the file size limit?)", p->hash_out_name);
    if (ret == AVERROR(ETIMEDOUT) && p->deadline > 0)
        snprintf(j->err, j->errlen, "%s: stopped at its time limit after %" PRId64 " frames", p->input, r->frames_out);
    if (ret == VKCU_ERR_INTERRUPT)
        snprintf(j->err, j->errlen, "%s: interrupted; partial output %s%s%s", p->input,
                 p->keep_partial && p->sink == VKCU_SINK_ENCODE ? "kept (" : "removed",
                 p->keep_partial && p->sink == VKCU_SINK_ENCODE ? VKCU_SETTING_IS("keep_partial", "1") : "",
                 p->keep_partial && p->sink == VKCU_SINK_ENCODE ? ")" : "");
    if (j->gpu) {
        vkcu_gpu_counters c;
        vkcu_gpu_stats(j->gpu, &c);
        r->imports = c.imports;
        r->dtod_copies = c.dtod_copies;
        r->htod_bytes = c.htod_bytes;
        /* A Vulkan encoder's packets are the bytes of the video that come back. */
        r->dtoh_bytes = c.dtoh_bytes + (vkcu_vkencode_is_vulkan(r->encoder) ? r->encoded_bytes : 0);
        r->vk_readbacks = c.vk_readbacks;
        r->max_in_flight = c.max_in_flight;
        r->gpu_ms_copy = c.ms_copy;
        r->gpu_ms_ops = c.ms_ops;
        r->gpu_ms_download = c.ms_download;
        r->setup_ms_vk_instance = c.setup_ms_vk_instance;
        r->setup_ms_vk_device = c.setup_ms_vk_device;
        r->setup_ms_cuda = c.setup_ms_cuda;
        r->setup_ms_gpu_open = c.setup_ms_open;
        snprintf(r->setup_vk_device, sizeof(r->setup_vk_device), "%s", c.setup_vk_device);
    }
    r->seconds = vkcu_now() - t0;
    r->cpu_seconds = process_cpu_seconds() - cpu0;
    r->setup_seconds = j->t_first ? j->t_first - t0 : r->seconds;
    if (j->t_backend) {
        r->setup_ms_decoder = FFMAX(j->ms_backend - r->setup_ms_gpu_open, 0);
        r->setup_ms_first_frame = j->t_first ? (j->t_first - j->t_backend) * 1e3 : 0;
    }
    r->fps = r->seconds > 0 ? r->frames_out / r->seconds : 0;
    if (j->t_first && r->frames_out > 1)
        r->fps_steady = (r->frames_out - 1) / (vkcu_now() - j->t_first);
    av_packet_free(&pkt);
    av_frame_free(&frame);
    av_frame_free(&j->scaled);
    sws_freeContext(j->sws);
    for (int i = 0; i < j->nb_early; i++)
        av_packet_free(&j->early[i]);
    /* The handoff thread may still run operators: stop it before freeing them. */
    vkcu_gpu_close(&j->gpu);
    vkcu_decoder_close(&j->dec);
    vkcu_chain_free(&j->chain);
    vkcu_pool_thread_release(); /* the operators' row workers end with the job */
    vkcu_demux_close(&j->demux);
    av_freep(&j->sink.priv);
    if (j->gpu_prepared) { /* no set-up thread outlives the job (the process may exit next) */
        vkcu_gpu_prepare_wait(p->device);
        setup_timeline(j, t0, t_demux, t_open);
        if (vkcu_engine_stats_on())
            log_engine_stats();
    }
    return ret;
}
