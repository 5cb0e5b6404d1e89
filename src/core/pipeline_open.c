/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job's opening (vkcu_job_run, pipeline.c): the operator chain parsed,
 * the demuxer, the outputs checked against the input before anything is
 * decoded, the backend (the GPU session, or the CPU reference) and the
 * decoder, the trim window and its seek, the sink's class, and the stall
 * watchdog that runs beside a GPU job.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpu/vkdev.h"
#include "gpu/vk.h"
#include "gpu/vkencode.h"
#include "util/array.h"
#include "util/log.h"
#include "util/thread.h"
#include "outfile.h"
#include "pipeline_priv.h"

/* The GPU ring holds every ring_size the library takes. */
_Static_assert(VKCU_RING_SIZE_MAX <= VKCU_GPU_MAX_SLOTS, "ring_size beyond the GPU ring's capacity");

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
        if (idle > j->p->settings.stall_timeout_ms && !atomic_load(&j->in_sink)) {
            LOGE("%s: decoder stalled: no frame for %.1f s (GPU driver or FFmpeg hang); giving up", j->p->job.input,
                 j->p->settings.stall_timeout_ms / 1000.0);
            atomic_store(&j->stalled, 1);
            if (j->p->settings.watchdog_callback)
                j->p->settings.watchdog_callback(j->p->settings.watchdog_opaque, j->p->job.input, idle / 1000.0);
            break;
        }
    }
    return NULL;
}

/* gpu/'s question to the job: does its hash sink take GPU digests? Not
 * for frames it must scale first (a format change mid-stream). */
static int digest_instead(void *opaque, enum AVPixelFormat host_fmt)
{
    const job *j = opaque;
    if (j->sink_ready && vkcu_pipeline_sink_takes_one_format(j) &&
        (host_fmt != j->sink_fmt.pix_fmt || j->out_fmt.width != j->sink_fmt.width ||
         j->out_fmt.height != j->sink_fmt.height))
        return 0;
    return vkcu_hash_on_gpu(j->p, host_fmt);
}

/* Decoders in parallel on the GPU's decode engines (decode_par.c on
 * Vulkan decoders), the device having a queue per engine: asked for before
 * the device is made, so by the input's size (its stream is not known yet).
 * An explicit decode_parallel N asks for them. The automatic mode decodes
 * with one Vulkan decoder: pieces held to a small budget for the frames
 * that wait (where they keep pace with the caller) gave wrong frames in 4
 * of 17 runs of an HEVC Main10 1080p file on an H100 (docs/performance.md,
 * "A race under a small budget"), and a long 4K file fills the default
 * budget. For measurements and tests, VKCU_GPU_PIECES_MIN_PIXELS set (to
 * the smallest picture that takes pieces) brings the automatic mode back:
 * for a file of at least VKCU_GPU_PIECES_MIN_MIB (default 32) MiB (below
 * that, the queues' set-up and the decoders' sessions cost about what the
 * engines save). Strict jobs and frame-threaded decoders decode in
 * sequence. */
#define GPU_PIECES_QUEUES 7 /* Hopper's decode queues (NVDEC engines); a device with fewer makes fewer */
#define GPU_PIECES_COMPUTE_QUEUES 0 /* compute queues asked for with them (0: the default) */
#define GPU_PIECES_AUTO_MIN_PIXELS (3840 * 2160 / 2) /* the automatic mode's smallest picture: 4K (1080p was slower in pieces: docs/performance.md) */

static int gpu_pieces_wanted(const vkcu_job_params *p)
{
    int dp = p->settings.decode_parallel;
    if (p->job.strict || p->settings.decode_threads > 1 || dp == 0 || dp == 1)
        return 0;
    if (dp >= 2)
        return 1;
    if (!getenv("VKCU_GPU_PIECES_MIN_PIXELS"))
        return 0;
    struct stat st;
    const char *e = getenv("VKCU_GPU_PIECES_MIN_MIB");
    int64_t min = (e && *e ? atoll(e) : 32) << 20;
    return p->job.input && stat(p->job.input, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= min;
}

/* The Vulkan decoder, in parallel pieces where gpu_pieces says so. */
static int open_vulkan_decoder(job *j, AVBufferRef *vk)
{
    const vkcu_job_params *p = j->p;
    int lanes = vkcu_vkdev_decode_lanes(p->settings.device);
    int share = p->decode_share > p->gpu_share ? p->decode_share : p->gpu_share;
    int n = j->gpu_pieces ? vkcu_decode_parallel_count_gpu(p->settings.decode_parallel, share, lanes) : 0;
    const AVCodecParameters *cp = j->demux->video->codecpar;
    const char *e = getenv("VKCU_GPU_PIECES_MIN_PIXELS"); /* tests and measurements */
    int64_t min_pixels = e && *e ? atoll(e) : GPU_PIECES_AUTO_MIN_PIXELS;
    if (n >= 2 && p->settings.decode_parallel == VKCU_DECODE_PARALLEL_AUTO &&
        (int64_t)cp->width * cp->height < min_pixels) {
        LOGV("%s: one Vulkan decoder (pieces pay at %lld pixels a picture and more; %s asks for them)", p->job.input,
             (long long)min_pixels, VKCU_SETTING_IS("decode_parallel", "N"));
        n = 0;
    }
    if (n >= 2) {
        LOGV("%s: %d Vulkan decoders in parallel (%d decode queue%s claimed)", p->job.input, n, lanes,
             lanes == 1 ? "" : "s");
        return vkcu_decoder_open_parallel(j->demux, vk, p->settings.device, n,
                                          vkcu_decode_segment_min(p->settings.decode_segment_min),
                                          vkcu_decode_parallel_budget_gpu(vkcu_gpu_memory(j->gpu)), &j->dec, j->err,
                                          j->errlen);
    }
    if (!j->gpu_pieces && p->settings.decode_parallel == VKCU_DECODE_PARALLEL_AUTO)
        LOGV("%s: one Vulkan decoder (on the GPU, %s decodes in pieces)", p->job.input,
             VKCU_SETTING_IS("decode_parallel", "N"));
    return vkcu_decoder_open(j->demux, vk, 1, &j->dec, j->err, j->errlen);
}

static int open_backend(job *j)
{
    const vkcu_job_params *p = j->p;
    char why[512] = "";
    int ret;
    if (p->settings.backend != VKCU_BACKEND_CPU) {
        vkcu_gpu_config gc = {
            .device = p->settings.device,
            .ring_size = p->settings.ring_size,
            .timeline_handoff = p->settings.timeline_handoff,
            .stall_timeout_ms = p->settings.stall_timeout_ms,
            .frames_wanted = p->job.sink != VKCU_SINK_NULL,
            .vulkan_download = p->settings.vulkan_download,
            .decode_queue_pin = p->settings.decode_queue + 1,
            .digest_instead = digest_instead,
            .opaque = j,
            .cuda_pool = p->cuda_pool,
        };
        ret = vkcu_gpu_open(&gc, &j->gpu, why, sizeof(why));
        if (ret < 0) {
            /* A GPU that cannot honour a setting (a decode queue it lacks) fails the job on any backend. */
            if (ret == VKCU_ERR_USAGE) {
                snprintf(j->err, j->errlen, "%s: %s", p->job.input, why);
                return VKCU_ERR_DEVICE;
            }
            if (p->settings.backend == VKCU_BACKEND_GPU) {
                /* A machine without the GPU still runs the job: say how. */
                snprintf(j->err, j->errlen, "%s: %s: %s; %s processes it without a GPU", p->job.input,
                         VKCU_SETTING_IS("backend", "gpu"), why, VKCU_SETTING_IS("backend", "cpu"));
                return VKCU_ERR_DEVICE;
            }
            LOGV("no GPU backend (%s); using the CPU reference", why);
        }
    }
    if (j->gpu) {
        AVBufferRef *vk = vkcu_gpu_vulkan_device(j->gpu);
        if ((j->vk_decode = vkcu_decoder_vulkan_supported(j->demux, vk, why, sizeof(why)))) {
            ret = open_vulkan_decoder(j, vk);
            if (ret >= 0)
                return 0;
            LOGV("%s: Vulkan decoder did not open (%s); software decode + upload", p->job.input, j->err);
            j->err[0] = 0;
        } else {
            LOGI("%s: %s; software decode + upload to CUDA", p->job.input, why);
        }
        j->r->path = VKCU_PATH_SW_UPLOAD_CUDA;
    } else {
        j->r->path = VKCU_PATH_CPU;
    }
    if (p->job.require_gpu_decode) {
        snprintf(j->err, j->errlen, "%s: the GPU does not decode this stream (%s); refused by %s "
                 "(drop it to allow the software decoder)", p->job.input,
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
    int n = p->settings.decode_threads <= 1 && !p->job.strict
                ? vkcu_decode_parallel_count(p->settings.decode_parallel, p->decode_share)
                : 0;
    if (n >= 2)
        return vkcu_decoder_open_parallel(j->demux, NULL, -1, n, vkcu_decode_segment_min(p->settings.decode_segment_min),
                                          vkcu_decode_parallel_budget(), &j->dec, j->err, j->errlen);
    return vkcu_decoder_open(j->demux, NULL, p->settings.decode_threads > 0 ? p->settings.decode_threads : 1, &j->dec,
                             j->err, j->errlen);
}

/* Frame start_frame's pts (and, with a frame count, the end's) found by
 * reading the video packets without decoding; scan keeps them for the seek.
 * Packets without timestamps leave the cut to the decoder's frames. */
static int trim_by_frame(job *j, vkcu_packet_scan *scan, int64_t *max_delay)
{
    const vkcu_job_params *p = j->p;
    vkcu_demux *d = j->demux;
    int ret;
    /* Slack past frame N: a frame can come up to 16 (DPB) packets late. */
    int64_t count = p->job.frame_count > 0 ? p->job.frame_count : 0;
    int64_t slack = count > INT64_MAX - 33 ? INT64_MAX : 33 + count;
    int64_t limit = p->job.start_frame > INT64_MAX - slack ? INT64_MAX : p->job.start_frame + slack;
    int64_t *pts = NULL, n = 0;
    ret = vkcu_demux_scan(d, limit, AV_NOPTS_VALUE, scan);
    for (int64_t i = 0; ret >= 0 && i < scan->n; i++)
        if (scan->pts[i] == AV_NOPTS_VALUE)
            ret = AVERROR(ENOSYS);
    if (ret >= 0 && !(pts = malloc(sizeof(*pts) * (size_t)(scan->n ? scan->n : 1))))
        ret = AVERROR(ENOMEM);
    if (ret >= 0) {
        n = scan->n;
        memcpy(pts, scan->pts, sizeof(*pts) * (size_t)n);
        qsort(pts, (size_t)n, sizeof(*pts), vkcu_i64_cmp);
        *max_delay = scan->max_delay;
    }
    if (ret >= 0 && n <= p->job.start_frame) {
        char at[32];
        snprintf(at, sizeof(at), "%lld", (long long)p->job.start_frame);
        snprintf(j->err, j->errlen, "%s: %s is past the end (the input has %lld frames)", p->job.input,
                 VKCU_SETTING_IS("start_frame", at), (long long)n);
        free(pts);
        vkcu_packet_scan_free(scan);
        return VKCU_ERR_USAGE;
    }
    if (ret >= 0) {
        j->trim_start = pts[p->job.start_frame];
        if (p->job.frame_count >= 0 && p->job.frame_count < n - p->job.start_frame)
            j->trim_end = pts[p->job.start_frame + p->job.frame_count];
    }
    free(pts);
    if (ret < 0 && ret != AVERROR(ENOSYS)) {
        char buf[128];
        snprintf(j->err, j->errlen, "%s: cannot read the input to find frame %lld: %s", p->job.input,
                 (long long)p->job.start_frame, vkcu_err_str(ret, buf, sizeof(buf)));
        vkcu_packet_scan_free(scan);
        return VKCU_ERR_INPUT;
    }
    return 0;
}

/* Decode from the keyframe before the cut. With an index, seek by
 * time: some containers (MP4) index decode times, so aim max_delay (and
 * a frame) earlier, and the keyframe found shows at or before the cut.
 * Without one (MPEG-TS: a seek is a search that lands on any packet),
 * go back to the start and skip the video packets before the key frame
 * that the scan found, so decoding starts exactly there. With no cut, a
 * demuxer that scanned goes back to the start. */
static int seek_to_cut(job *j, int seekable, int64_t st, int64_t max_delay, const vkcu_packet_scan *scan,
                       int scanned)
{
    const vkcu_job_params *p = j->p;
    vkcu_demux *d = j->demux;
    AVRational tb = d->video->time_base;
    double rate = d->frame_rate.num > 0 ? av_q2d(d->frame_rate) : 0;
    if (seekable && (j->trim_start != AV_NOPTS_VALUE && j->trim_start > st) && !d->indexed && scan->n) {
        int64_t key = vkcu_packet_scan_key_before(scan, j->trim_start);
        LOGV("%s: no index to seek by: decoding from video packet %lld (a key frame), found by reading from the start",
             p->job.input, (long long)key);
        if (vkcu_demux_seek_packet(d, key) < 0) {
            snprintf(j->err, j->errlen, "%s: cannot seek back to the start after looking for the key frame",
                     p->job.input);
            return VKCU_ERR_INPUT;
        }
    } else if (seekable && (j->trim_start != AV_NOPTS_VALUE && j->trim_start > st)) {
        int64_t frame = rate > 0 ? av_rescale_q(1, av_inv_q(d->frame_rate), tb) : 0;
        int64_t target = j->trim_start - max_delay - frame;
        if (target <= st || vkcu_demux_seek(d, target) < 0)
            avformat_seek_file(d->fmt, d->video_index, INT64_MIN, st, st, 0);
    } else if (seekable && scanned && avformat_seek_file(d->fmt, d->video_index, INT64_MIN, st, st, 0) < 0) {
        snprintf(j->err, j->errlen, "%s: cannot seek back to the start after looking for frame %lld", p->job.input,
                 (long long)p->job.start_frame);
        return VKCU_ERR_INPUT;
    }
    return 0;
}

/* What the progress line counts towards. */
static void trim_progress(job *j, double rate)
{
    const vkcu_job_params *p = j->p;
    const vkcu_demux *d = j->demux;
    if (p->job.frame_count >= 0)
        j->progress.expected = p->job.frame_count;
    else if (p->job.duration >= 0 && rate > 0)
        j->progress.expected = (int64_t)(p->job.duration * rate + 0.5);
    else if (d->frames_estimate > 0 && p->job.start_frame > 0)
        j->progress.expected = FFMAX(d->frames_estimate - p->job.start_frame, 1);
    else if (d->frames_estimate > 0 && p->job.start_time > 0 && rate > 0)
        j->progress.expected = FFMAX(d->frames_estimate - (int64_t)(p->job.start_time * rate), 1);
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
    int seekable =
        d->fmt->pb && (d->fmt->pb->seekable & AVIO_SEEKABLE_NORMAL) && !(d->fmt->iformat->flags & AVFMT_NOTIMESTAMPS);
    double rate = d->frame_rate.num > 0 ? av_q2d(d->frame_rate) : 0;
    int64_t max_delay = 0;
    int ret = 0;
    j->trim_start = j->trim_end = AV_NOPTS_VALUE;
    j->progress.rate = rate;
    if (p->job.start_time < 0 && p->job.start_frame <= 0 && p->job.duration < 0 && p->job.frame_count < 0)
        return 0;
    if (p->job.start_time > 0 && d->fmt->duration > 0 && p->job.start_time * 1e6 >= d->fmt->duration) {
        char at[32];
        snprintf(at, sizeof(at), "%.3f", p->job.start_time);
        snprintf(j->err, j->errlen, "%s: %s is past the end (the input lasts %.3f s)", p->job.input,
                 VKCU_SETTING_IS("start_time", at), d->fmt->duration / 1e6);
        return VKCU_ERR_USAGE;
    }
    vkcu_packet_scan scan = { 0 };
    int scanned = 0;
    if (p->job.start_frame > 0 && seekable && !(d->fmt->iformat->flags & AVFMT_NOTIMESTAMPS)) {
        scanned = 1; /* the demuxer moves: back to the start below, at least */
        if ((ret = trim_by_frame(j, &scan, &max_delay)) < 0)
            return ret;
    } else if (p->job.start_time >= 0) {
        j->trim_start = st + av_rescale_q((int64_t)(p->job.start_time * 1e6 + 0.5), AV_TIME_BASE_Q, tb);
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
    if (p->job.duration >= 0) {
        int64_t s = j->trim_start != AV_NOPTS_VALUE ? j->trim_start : st;
        j->trim_end = s + av_rescale_q((int64_t)(p->job.duration * 1e6 + 0.5), AV_TIME_BASE_Q, tb);
    }
    ret = seek_to_cut(j, seekable, st, max_delay, &scan, scanned);
    vkcu_packet_scan_free(&scan);
    if (ret < 0)
        return ret;
    trim_progress(j, rate);
    return ret;
}

/* The chain parsed (no operator set up before the first frame), an output
 * that is a folder refused, and the GPU's devices started on their own
 * threads beside the demuxer's probing. */
static int open_start(job *j)
{
    const vkcu_job_params *p = j->p;
    int ret = vkcu_chain_parse(p->job.chain, &j->chain, j->err, j->errlen);
    if (ret < 0)
        return ret;
    struct stat st;
    if (p->job.sink == VKCU_SINK_ENCODE && p->job.output && strcmp(p->job.output, "-") && stat(p->job.output, &st) == 0 &&
        S_ISDIR(st.st_mode)) {
        /* Found now, not at the first frame: nothing is decoded for an output that cannot be. */
        snprintf(j->err, j->errlen, "%s: is a folder; the output must be a file name (e.g. %s/out.mkv)", p->job.output,
                 p->job.output);
        return VKCU_ERR_OUTPUT;
    }
    for (int i = 0; i < j->chain.nb_ops; i++)
        j->chain.ops[i]->threads = j->threads;
    if (p->settings.backend != VKCU_BACKEND_CPU) {
        if (p->job.sink == VKCU_SINK_ENCODE) { /* the GPU's device then carries the encoder's queue */
            vkcu_vkdev_expect(1, vkcu_vkencode_op(p->job.encoder) | vkcu_vkencode_op(p->job.gpu_encoder));
            /* and a compute queue for each compute encoder instance beside
             * the first (sink_encode_gop.c), beside the handoff's and queue 0 */
            int n = FFMAX(vkcu_compute_instance_lanes(p, p->job.encoder), vkcu_compute_instance_lanes(p, p->job.gpu_encoder));
            if (n > 1)
                vkcu_vkdev_expect_compute((unsigned)n + 1);
        }
        vkcu_vkdev_expect_decode_queue(p->settings.decode_queue); /* the device then has it, claimed */
        if ((j->gpu_pieces = p->settings.decode_queue < 0 && gpu_pieces_wanted(p))) {
            vkcu_vkdev_expect(GPU_PIECES_QUEUES, 0);
            if (GPU_PIECES_COMPUTE_QUEUES)
                vkcu_vkdev_expect_compute(GPU_PIECES_COMPUTE_QUEUES);
        }
        vkcu_gpu_prepare(p->settings.device);
        j->gpu_prepared = 1;
    }
    return 0;
}

/* The demuxer, then the outputs checked against the input, and the
 * streams the sink does not take left unread. */
static int open_input(job *j)
{
    const vkcu_job_params *p = j->p;
    j->t_demux = vkcu_now();
    int ret = vkcu_demux_open(p->job.input, p->job.video_stream, &j->demux, j->err, j->errlen);
    j->r->setup_ms_demux = (vkcu_now() - j->t_demux) * 1e3;
    if (ret < 0)
        return ret;
    j->tb = j->demux->video->time_base;
    /* Refused now rather than after the decoder and GPU are set up; "-"
     * too, since standard output can be redirected onto the input. */
    const char *inputs[] = { p->job.input, p->job.pipeline_file, NULL };
    if (p->job.sink == VKCU_SINK_ENCODE && p->job.output &&
        (ret = vkcu_outfile_check(p->job.output, p->job.overwrite, inputs, j->err, j->errlen)) < 0)
        return ret;
    if (p->job.sink == VKCU_SINK_HASH && p->job.hash_out &&
        (ret = vkcu_outfile_check_fd(fileno(p->job.hash_out), fileno(p->job.hash_out) == STDOUT_FILENO ? "standard output"
                                     : "the hash output", inputs, j->err, j->errlen)) < 0) {
        j->output_refused = 1;
        return ret;
    }
    /* Audio and subtitle streams picked by number: one past the last is
     * refused before anything is decoded. */
    if (p->job.sink == VKCU_SINK_ENCODE && !p->job.decode_only &&
        (ret = vkcu_demux_check_picks(j->demux, p->job.audio_streams, p->job.subtitle_streams, j->err, j->errlen)) < 0)
        return ret;
    /* Only the encode sink copies other streams: the rest are not read. */
    if (p->job.sink != VKCU_SINK_ENCODE || p->job.decode_only)
        for (unsigned i = 0; i < j->demux->fmt->nb_streams; i++)
            if ((int)i != j->demux->video_index)
                j->demux->fmt->streams[i]->discard = AVDISCARD_ALL;
    return 0;
}

/* The sink's class and private state (first_frame opens it), and the
 * progress reports. */
static int open_sink(job *j)
{
    const vkcu_job_params *p = j->p;
    j->sink.cls = p->job.sink == VKCU_SINK_HASH       ? &vkcu_sink_hash
                  : p->job.sink == VKCU_SINK_NULL     ? &vkcu_sink_null
                  : p->job.sink == VKCU_SINK_CALLBACK ? &vkcu_sink_callback
                                                      : &vkcu_sink_encode;
    j->sink.params = p;
    j->sink.result = j->r;
    j->sink.demux = j->demux;
    j->sink.err = j->err;
    j->sink.errlen = j->errlen;
    if (j->sink.cls->priv_size && !(j->sink.priv = av_mallocz(j->sink.cls->priv_size)))
        return AVERROR(ENOMEM);
    j->progress.callback = p->settings.progress_callback;
    j->progress.opaque = p->settings.progress_opaque;
    vkcu_progress_init(&j->progress, p->progress, p->job.frame_count > 0 ? p->job.frame_count : j->demux->frames_estimate,
                       p->job.input);
    return 0;
}

int vkcu_pipeline_open(job *j)
{
    const vkcu_job_params *p = j->p;
    int ret;
    if ((ret = open_start(j)) < 0 || (ret = open_input(j)) < 0)
        return ret;
    vkcu_frame_clock_init(&j->clock, j->demux->fmt, j->demux->video,
                          av_rescale_q(vkcu_demux_input_start(j->demux->fmt), AV_TIME_BASE_Q, j->tb));
    j->t_open = vkcu_now();
    ret = open_backend(j);
    if (ret < 0)
        return ret;
    j->t_backend = vkcu_now();
    j->ms_backend = (j->t_backend - j->t_open) * 1e3;
    LOGD("%s: set-up: demux %.0f ms, backend and decoder %.0f ms", p->job.input, (j->t_open - j->t0) * 1e3,
         (j->t_backend - j->t_open) * 1e3);
    if ((ret = setup_trim(j)) < 0 || (ret = open_sink(j)) < 0)
        return ret;
    j->pkt = av_packet_alloc();
    j->frame = av_frame_alloc();
    if (!j->pkt || !j->frame)
        return AVERROR(ENOMEM);
    atomic_store(&j->last_frame_ms, now_ms());
    if (j->gpu && p->settings.stall_timeout_ms > 0 && vkcu_thread_create(&j->watchdog, watchdog_main, j) == 0)
        j->watchdog_running = 1;
    return 0;
}
