/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu public API: the context and the jobs run through it.
 *
 * A job takes one video stream of one input through decode (Vulkan Video
 * on the GPU, or FFmpeg's software decoders), an operator chain (CUDA or
 * the CPU reference, byte-identical) and a sink: an encoded file, a hash
 * list, nothing, or a frame callback.
 *
 * Life cycle:
 *     vkcu_settings s;
 *     vkcu_default_settings(&s);
 *     s.log_callback = my_log;             // optional
 *     vkcu_context *ctx = NULL;
 *     int ret = vkcu_open(&ctx, &s);       // validates s; -EINVAL names the setting
 *     vkcu_job job;
 *     vkcu_default_job(&job);
 *     job.input = "in.mkv";
 *     job.output = "out.mkv";
 *     vkcu_job_result res;
 *     ret = vkcu_run(ctx, &job, &res);     // 0, or a negative error and res.error
 *     vkcu_close(&ctx);                    // ctx is NULL afterwards
 *
 * Threading: a context may run several jobs at once, each vkcu_run() call
 * on its own thread; the GPU devices are shared between them. vkcu_open()
 * and vkcu_close() are not to be called concurrently with other calls on
 * the same context. Callbacks run on library threads (see each one).
 */
#ifndef VKCU_JOB_H
#define VKCU_JOB_H

#include <stdint.h>
#include <stdio.h>

#include "chain.h"
#include "common.h"
#include "hash.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkcu_context vkcu_context;

enum vkcu_backend {
    VKCU_BACKEND_AUTO = 0, /* the GPU when a Vulkan device and a CUDA device match by UUID, else the CPU */
    VKCU_BACKEND_CPU,      /* software decode and the CPU reference operators */
    VKCU_BACKEND_GPU,      /* the GPU or an error (VKCU_ERR_DEVICE) */
};

/* Which way a job's frames took. */
enum vkcu_path {
    VKCU_PATH_NONE = 0,
    VKCU_PATH_CPU,            /* software decode, CPU reference operators */
    VKCU_PATH_VULKAN_CUDA,    /* Vulkan Video decode, on-GPU copy into the interop ring, CUDA */
    VKCU_PATH_SW_UPLOAD_CUDA, /* software decode, one upload into the interop ring, CUDA */
    VKCU_PATH_VULKAN_COMPUTE_CUDA, /* FFmpeg's Vulkan compute decoder (FFV1, ProRes, DPX), on-GPU copy into the
                                      interop ring, CUDA */
};

/**
 * @return a short static name for a path ("cpu", "vulkan-decode+cuda", ...).
 * @note Thread-safe.
 */
VKCU_API const char *vkcu_path_name(enum vkcu_path path);

/* What a job does with the processed frames. */
enum vkcu_sink_kind {
    VKCU_SINK_ENCODE = 0, /* encode and mux to vkcu_job.output */
    VKCU_SINK_HASH,       /* per-frame hashes as text to vkcu_job.hash_out */
    VKCU_SINK_NULL,       /* decode and process only */
    VKCU_SINK_CALLBACK,   /* each processed frame to vkcu_job.on_frame */
};

/* Which decoded frames a hash list holds, and at what size (docs/regression.md). */
enum vkcu_timing {
    /* As `ffmpeg -i IN -f framemd5` makes them: timestamps onto 1/frame rate,
     * a frame whose timestamp falls on an earlier one's dropped, and frames of
     * another size or pixel format than the first scaled to the first's
     * (swscale bicubic, as ffmpeg's automatic scaler). The job's warnings and
     * result count what was dropped and scaled. */
    VKCU_TIMING_FFMPEG = 0,
    /* Every frame as it leaves the decoder, at its own size and pixel format,
     * its timestamp onto 1/frame rate as it is (one that goes backward is
     * raised to the previous one's): `ffmpeg -fps_mode passthrough -noautoscale
     * -f framemd5`, except that ffmpeg converts frames of another pixel format
     * to the first one's, where this keeps each frame's own. */
    VKCU_TIMING_DECODED,
};

/* What a progress callback receives. */
typedef struct vkcu_progress_info {
    const char *input;   /* the job's input */
    int64_t frames;      /* frames handed to the sink so far */
    int64_t expected;    /* frames the job is expected to produce; 0 when unknown */
    double elapsed;      /* seconds since the job started */
    double fps;          /* frames / elapsed */
    double rate;         /* the output's nominal frame rate (for "times realtime"); 0 when unknown */
    int final;           /* 1 on the last call of a job that finished */
    uint64_t reserved[16]; /* zero (version.h: room to grow) */
} vkcu_progress_info;

/**
 * Reports a job's progress: at most four times a second while frames flow,
 * and once more with final = 1 when the job succeeds.
 *
 * @param opaque the settings' progress_opaque.
 * @param info   valid only during the call.
 * @note Called on the thread that runs the job. Keep it short: the job
 *       waits for it.
 */
typedef void (*vkcu_progress_callback)(void *opaque, const vkcu_progress_info *info);

/**
 * Reports that a job's GPU decoder produced no frame for stall_timeout_ms.
 *
 * A driver call that hangs cannot be interrupted or unwound, so the library
 * cannot end such a job by itself: it logs the stall, calls this callback,
 * and fails the job with VKCU_ERR_DEVICE if the stuck call ever returns.
 * The job's thread may stay blocked for good; a program that cannot
 * tolerate that ends the process here, after vkcu_abandon_outputs()
 * (common.h) so that no partial file is left.
 *
 * @param opaque          the settings' watchdog_opaque.
 * @param input           the stalled job's input.
 * @param stalled_seconds how long no frame came.
 * @note Called on the job's watchdog thread, not the job's thread.
 */
typedef void (*vkcu_watchdog_callback)(void *opaque, const char *input, double stalled_seconds);

/* Interop ring slots on the GPU (frames in flight between Vulkan and
 * CUDA): the one place that says what vkcu_settings.ring_size may be. */
#define VKCU_RING_SIZE_MIN 3
#define VKCU_RING_SIZE_MAX 16
#define VKCU_RING_SIZE_DEFAULT 4

/* The highest vkcu_settings.decode_queue (queues of one Vulkan family a
 * process may name). */
#define VKCU_DECODE_QUEUE_MAX 63

/* The highest vkcu_job.crf and vkcu_job.gop (presets and the command line
 * take the same ranges). */
#define VKCU_CRF_MAX 63
#define VKCU_GOP_MAX 100000
/* vkcu_job's audio_streams and subtitle_streams: every stream of the kind
 * (the default), none, or the Nth alone (from 0, up to VKCU_STREAM_INDEX_MAX). */
#define VKCU_STREAMS_ALL 0
#define VKCU_STREAMS_NONE (-1)
#define VKCU_STREAM_NTH(n) ((n) + 1)
#define VKCU_STREAM_INDEX_MAX 1023
/* vkcu_settings' decode_parallel: decoders by the cores (the default), and
 * the most a setting may ask for. */
#define VKCU_DECODE_PARALLEL_AUTO (-1)
#define VKCU_DECODE_PARALLEL_MAX 64

/* Settings of a context: how jobs run, whatever they do. Fill with
 * vkcu_default_settings() first, then change fields; vkcu_open() refuses
 * out-of-range values with -EINVAL (never clamps). */
typedef struct vkcu_settings {
    vkcu_log_callback log_callback; /* NULL: messages to standard error, "vkcu: " first */
    void *log_opaque;
    enum vkcu_log_level log_level;  /* threshold; default VKCU_LOG_INFO */
    vkcu_setting_name_callback setting_name_callback; /* NULL: text names settings by their field names (common.h) */
    enum vkcu_backend backend;      /* default VKCU_BACKEND_AUTO */
    int device;                     /* CUDA device ordinal, 0..63 (the Vulkan device is matched by UUID); default 0 */
    int ring_size;                  /* interop slots (GPU frames in flight), VKCU_RING_SIZE_MIN..MAX; default VKCU_RING_SIZE_DEFAULT */
    int stall_timeout_ms;           /* GPU decoder watchdog, 0..3600000 ms; 0: none; default 10000 */
    int timeline_handoff;           /* 1: one timeline semaphore per slot instead of binary ready/done; default 0 */
    int vulkan_download;            /* 1: GPU frames reach the host through the output ring (CUDA writes exported
                                     * Vulkan buffers, a Vulkan transfer reads them back); 0: a CUDA copy; default 0 */
    int decode_threads;             /* software decoder threads, 0..256; 0 (default): one, in every sink, so that a
                                     * damaged stream gives the same frames on every run; N > 1: FFmpeg's frame
                                     * and slice threads, faster, the same frames on clean streams only */
    int encode_workers;             /* encoders run at once, 0..64: FFV1's intra GOPs on the CPU, or instances of a
                                     * GPU compute encoder (ffv1_vulkan, prores_ks_vulkan), the same bytes as one;
                                     * 0: automatic (CPU: one per 4 cores; GPU: 4 instances) */
    vkcu_progress_callback progress_callback; /* NULL: no progress reports */
    void *progress_opaque;
    vkcu_watchdog_callback watchdog_callback; /* NULL: the stall is only logged and the job fails */
    void *watchdog_opaque;
    /* The Vulkan video decode queue (of the GPU's decode family) every decoder
     * of the context's GPU jobs submits on, 0..VKCU_DECODE_QUEUE_MAX; -1
     * (default): the next of the queues the process claimed. Without a pin,
     * each process claims its decode and compute queues on the least-claimed
     * queues of its GPU (claims of all of the user's vkcu processes, kept in
     * $XDG_RUNTIME_DIR or /dev/shm and dropped when a process ends), so
     * processes sharing a GPU spread over its decode engines. A pinned queue
     * is claimed too. A queue the GPU does not have fails the job with
     * VKCU_ERR_DEVICE. */
    int decode_queue;
    /* Since 1.2. One stream on several software decoders at once: cut at its
     * independent pictures (H.264 IDR; HEVC IDR, BLA, CRA), the pieces
     * decoded in parallel and the frames given back in order, the same
     * frames and timestamps as one decoder (damage is decoded on in
     * sequence). VKCU_DECODE_PARALLEL_AUTO (vkcu_default_settings): as many
     * decoders as the process has cores, up to 16, where the stream can be
     * cut, decode_threads is 0 or 1 and the job is not strict; 0 or 1: one
     * decoder (what 1.1 did); 2..64: that many. On the GPU the
     * pieces are Vulkan decoders, each on a decode queue of its own, cut at
     * IDR pictures only (a Vulkan decoder started at a CRA or BLA refers to
     * pictures it never decoded: docs/performance.md), for 2..64 only:
     * VKCU_DECODE_PARALLEL_AUTO there is one Vulkan decoder. */
    int decode_parallel;
    int decode_segment_min;         /* packets a piece holds at least, 0..1000000; 0: 48 */
    uint64_t reserved[31];          /* zero (version.h: room to grow) */
} vkcu_settings;

/**
 * Fills settings with the defaults given beside each field.
 *
 * @param s the caller's struct; every field is written.
 * @note Thread-safe.
 */
VKCU_API void vkcu_default_settings(vkcu_settings *s);

/**
 * Creates a context.
 *
 * @param ctx receives the new context; set to NULL on failure. Must not be
 *            NULL. The context is the caller's until vkcu_close().
 * @param s   the settings, copied: the caller may free or reuse them once
 *            the call returns (callbacks' opaque pointers must stay valid
 *            for the context's life).
 * @return 0; -EINVAL when a setting is out of range (the log callback gets
 *         which one and the allowed range); -ENOMEM.
 * @note Opens no device: the first GPU job opens and shares them. Thread-safe
 *       for distinct ctx pointers.
 * @note The first context with a log_callback installs FFmpeg's process-wide
 *       av_log callback (once), to send FFmpeg's lines about a job to its
 *       context's callback (common.h); threads that run no job keep
 *       FFmpeg's printing to standard error. A program that sets its own
 *       av_log callback afterwards keeps it, and FFmpeg's lines go there.
 * @note What FFmpeg prints itself (on threads that run no job, such as its
 *       own decoder threads with decode_threads > 1, and where no log
 *       callback is set) follows FFmpeg's threshold, which is process-wide:
 *       each vkcu_open sets it from log_level, as the callback receives
 *       FFmpeg's lines (fatal ones from VKCU_LOG_ERROR, errors from
 *       VKCU_LOG_VERBOSE, the rest to FFmpeg's verbose at VKCU_LOG_DEBUG).
 *       Before any context is opened it is VKCU_LOG_INFO's: fatal lines only.
 */
VKCU_API int vkcu_open(vkcu_context **ctx, const vkcu_settings *s);

/**
 * Destroys a context and clears the pointer.
 *
 * @param ctx pointer to the context; *ctx may be NULL (then nothing
 *            happens); ctx itself may be NULL.
 * @note Every vkcu_run() on the context must have returned.
 */
VKCU_API void vkcu_close(vkcu_context **ctx);

/**
 * Asks the jobs of one context to stop, or withdraws that request.
 *
 * With stop = 1, every job running on the context (vkcu_run,
 * vkcu_compare, vkcu_verify, vkcu_batch_run, a reader's iteration) stops
 * at its next frame, as vkcu_request_stop() (common.h) makes every job of
 * the process stop: it removes its partial outputs and returns
 * VKCU_ERR_INTERRUPT. Jobs started on the context while the request stands
 * stop at once. Unlike the process-wide request, this one can be
 * withdrawn: stop = 0 lets the context's later jobs run, so a program that
 * goes on after an interrupt (an interactive session, a binding that turns
 * Ctrl-C into an exception) keeps its context usable. Other contexts' jobs
 * are not affected.
 *
 * @param ctx  an open context; NULL does nothing.
 * @param stop 1 to ask, 0 to withdraw.
 * @note Async-signal-safe and thread-safe.
 */
VKCU_API void vkcu_context_stop(vkcu_context *ctx, int stop);

/* One job: what to read, what to do, where to put it. Fill with
 * vkcu_default_job() first. Strings and streams stay the caller's; the
 * library reads them during vkcu_run() only. */
typedef struct vkcu_job {
    const char *input;          /* file path, or "-" for standard input; required */
    int video_stream;           /* the Nth video stream, from 0; -1 (default): FFmpeg's best */
    const char *chain;          /* operator chain (chain.h); NULL or "": frames as decoded */
    enum vkcu_sink_kind sink;   /* default VKCU_SINK_ENCODE */
    /* VKCU_SINK_ENCODE */
    const char *output;         /* path, or "-" for standard output (then output_format is required) */
    const char *output_format;  /* container (matroska, mp4, nut ...); NULL: from output's extension */
    const char *encoder;        /* FFmpeg encoder name; NULL or "auto": from the output's container */
    int crf;                    /* 0..VKCU_CRF_MAX; -1 (default): the encoder's default */
    int64_t bitrate;            /* bits per second; 0 (default): the encoder's default */
    const char *preset;         /* encoder preset (x264 "medium" ...); NULL: its default */
    int gop;                    /* key frame interval in frames, 0..VKCU_GOP_MAX; 0 (default): the encoder's default */
    const char *encoder_opts;   /* "key=value:key=value" for the encoder; NULL: none */
    int faststart;              /* 1: MP4/MOV index before the media data (web playback) */
    int overwrite;              /* 1: an existing output is replaced; 0 (default): refused (VKCU_ERR_OUTPUT) */
    int keep_partial;           /* 1: a failing job keeps what it wrote; 0 (default): nothing is left */
    /* VKCU_SINK_HASH */
    FILE *hash_out;             /* where hash lines go; default stdout */
    const char *hash_out_name;  /* what messages call hash_out (its file name); NULL: not named */
    const char *hash_path;      /* a file for the hash lines instead of hash_out: written under a temporary name
                                 * and renamed when the job succeeds, so that it is never left partial; an existing
                                 * file is replaced only with overwrite, an input never; NULL (default): hash_out */
    enum vkcu_hash_algo hash_algo;
    enum vkcu_hash_format hash_format;
    /* VKCU_SINK_CALLBACK: both on the job's thread (chain.h) */
    vkcu_open_callback on_open; /* may be NULL */
    vkcu_frame_callback on_frame; /* required with VKCU_SINK_CALLBACK */
    void *callback_opaque;
    /* which frames: start_time/duration in seconds, or start_frame/frame_count
     * in decoded frames; each -1 (default): not set. Time and frame forms of
     * the same limit are exclusive. */
    double start_time, duration;
    int64_t start_frame, frame_count;
    int max_frames;             /* >0: stop after this many output frames; 0 (default): all */
    int strict;                 /* 1: a damaged frame (concealed by the decoder, or undecodable) fails the job;
                                 * 0 (default): a concealed frame is kept and marked (hash lists say
                                 * "concealed"), an undecodable one skipped, each with a warning */
    int require_gpu_decode;     /* 1: a software decode (CPU backend or GPU fallback) fails with VKCU_ERR_DEVICE */
    int decode_only;            /* 1: decode and drop frames (no chain, no sink): decoder throughput */
    const char *pipeline_file;  /* the preset file the settings came from (vkcu_preset_apply sets it): read by
                                 * the job like its input, so never written over, even with overwrite; NULL: none */
    /* VKCU_SINK_ENCODE: audio. Each audio stream is copied where the container holds its codec; where it
     * does not, it is encoded with the container's audio codec, or the first of opus, aac, ac3, pcm_s16le
     * the container holds (Opus into WebM; docs/transcode.md); where none fits (y4m), it is dropped with a
     * warning. */
    int no_audio;               /* 1: no audio streams in the output; 0 (default) */
    const char *audio_encoder;  /* NULL or "auto" (default): as above; "copy": copy, or drop where the container
                                 * cannot hold it; an FFmpeg audio encoder name ("aac"): every audio stream
                                 * encoded with it (-EINVAL when the container cannot hold it) */
    enum vkcu_timing timing;    /* VKCU_SINK_HASH: which frames the list holds (default VKCU_TIMING_FFMPEG);
                                 * other sinks take only the default (encoders get frames scaled to the first
                                 * frame's size, the callback every frame as decoded) */
    /* VKCU_SINK_ENCODE */
    const char *gpu_encoder;    /* one of FFmpeg's Vulkan encoders (ffv1_vulkan, prores_ks_vulkan, h264_vulkan,
                                 * hevc_vulkan) to use instead of `encoder` where the job runs on the GPU and that
                                 * encoder can take its frames (in this build, on this GPU, in this format and
                                 * size, with these options); else `encoder` is used, and a verbose line says why.
                                 * The result's `encoder` says which ran. NULL (default): `encoder` alone */
    /* VKCU_SINK_ENCODE: which audio and which subtitle streams go into the output (ffmpeg's -map 0:a:N):
     * VKCU_STREAMS_ALL (0, default): every one; VKCU_STREAMS_NONE: none; VKCU_STREAM_NTH(n): the nth of its
     * kind alone, counted from 0 among the input's streams of that kind as video_stream counts (an n past the
     * last fails the job with VKCU_ERR_USAGE, naming the file and how many it has). no_audio = 1 leaves out
     * every audio stream whatever audio_streams says. */
    int audio_streams;
    int subtitle_streams;
    uint64_t reserved[31];      /* zero (version.h: room to grow) */
} vkcu_job;

/**
 * Fills a job with the defaults given beside each field.
 *
 * @param job the caller's struct; every field is written.
 * @note Thread-safe.
 */
VKCU_API void vkcu_default_job(vkcu_job *job);

/* What a job did. */
typedef struct vkcu_job_result {
    int64_t frames_in;       /* frames out of the decoder */
    int64_t frames_out;      /* frames handed to the sink */
    int64_t frames_corrupt;  /* pictures the decoder reported damaged: concealed (kept) or undecodable (skipped) */
    double seconds;          /* wall time */
    double fps;
    double fps_steady;       /* frames after the first / time after the first frame (no set-up) */
    double setup_seconds;    /* from the start of the job to the first decoded frame */
    enum vkcu_path path;
    char error[512];         /* one line naming the file and what failed, when the job failed; else "" */
    /* GPU statistics (zero on the CPU path) */
    int64_t imports;         /* external memory and semaphore imports into CUDA */
    int64_t dtod_copies;     /* on-GPU frame copies (decoded image -> interop ring) */
    int64_t htod_bytes, dtoh_bytes;
    int64_t vk_readbacks;    /* frames read back through the Vulkan output ring */
    int max_in_flight;
    double gpu_ms_copy, gpu_ms_ops, gpu_ms_download; /* GPU time per stage */
    /* encode sink: the encoder thread's time encoding, muxing and waiting for frames */
    double enc_ms_encode, enc_ms_mux, enc_ms_idle;
    /* set-up, ms: the job thread's demux, GPU open (waiting for the devices)
     * and decoder open, then up to the first decoded frame; the Vulkan
     * instance and device and CUDA's start ran beside them on their own
     * threads (in the process's first GPU job; later jobs share the devices) */
    double setup_ms_demux, setup_ms_gpu_open, setup_ms_decoder, setup_ms_first_frame;
    double setup_ms_vk_instance, setup_ms_vk_device, setup_ms_cuda;
    char setup_vk_device[64]; /* whose Vulkan device: "vkcu (...)" or "ffmpeg"; "" on the CPU path */
    char setup_timeline[512]; /* GPU jobs: "step=start-end ..." in ms from the job's start; "" otherwise */
    /* What became of the frames handed to the sink (frames_out): */
    int64_t frames_concealed; /* marked concealed: the decoder concealed errors in them, or in a picture before
                               * them since the last key frame (other decoders may give other pixels) */
    int64_t frames_dropped;   /* left out by their timestamps (VKCU_TIMING_FFMPEG; constant-rate containers) */
    int64_t frames_duplicated; /* repeated to fill gaps in the timestamps (constant-rate containers) */
    int64_t frames_rescaled;  /* scaled to the first frame's size and pixel format (the encoder's, or framemd5's) */
    int64_t format_changes;   /* times the decoded frames changed size, pixel format or colour mid-stream */
    /* The encoder */
    char encoder[32];        /* encode sink: the FFmpeg encoder that encoded the video ("ffv1_vulkan", "libx264"...) */
    int64_t encoded_bytes;   /* encode sink: bytes of the encoded video packets. A Vulkan encoder's packets are the
                              * only bytes of the video that reach the host: dtoh_bytes then counts them */
    /* Vulkan encoders: GPU time of the encoder's own work, from timestamps around its submissions (the union of the
     * intervals from each frame ready to its encode done), over gpu_encode_frames frames; 0 where not measured */
    double gpu_ms_encode;
    int64_t gpu_encode_frames;
    double cpu_seconds;      /* the process's CPU time (user + system, all threads) while the job ran: with jobs
                              * running at once on other threads, theirs too */
    int32_t encode_instances; /* encode sink: encoders that ran at once (FFV1's GOP workers, a compute encoder's
                               * instances on the GPU); 1 for one; their summed time is enc_ms_encode */
    int32_t reserved32;       /* zero */
    uint64_t reserved[31];   /* zero (version.h: room to grow) */
} vkcu_job_result;

/**
 * Runs one job to completion on the calling thread.
 *
 * @param ctx    an open context.
 * @param job    the job; read during the call only.
 * @param result receives what the job did, also on failure (then
 *               result->error holds the message that went to the log
 *               callback). Must not be NULL.
 * @return 0; -EINVAL when a job field is out of range or inconsistent
 *         (nothing was opened; the message names the field);
 *         VKCU_ERR_INPUT, VKCU_ERR_OUTPUT, VKCU_ERR_DEVICE,
 *         VKCU_ERR_INTERRUPT; VKCU_ERR_PIPE_CLOSED when the reader of
 *         standard output went away (the job stopped early, not an error
 *         of its own); other negative errno/AVERROR codes.
 *         A failing job leaves no partial output unless keep_partial is set.
 * @note Thread-safe: several threads may run jobs on one context at once.
 */
VKCU_API int vkcu_run(vkcu_context *ctx, const vkcu_job *job, vkcu_job_result *result);

/**
 * Tells, after a write error on a stream, whether its reader went away: a
 * pipe or socket with no reader left (`| head`), or EPIPE. vkcu ends a job
 * whose hash lines or output meet that with VKCU_ERR_PIPE_CLOSED, a quiet
 * end; a program that writes its own lines to the same stream can end the
 * same way.
 *
 * @param f a stream whose last write failed (ferror(f) is set).
 * @return 1 when its reader went away; 0 for any other error (a full disk,
 *         /dev/full, a file size limit).
 * @note Reads errno and polls the stream's descriptor; call it right after
 *       the failing write. Thread-safe.
 */
VKCU_API int vkcu_stream_reader_gone(FILE *f);

#ifdef __cplusplus
}
#endif
#endif
