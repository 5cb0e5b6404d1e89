/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu public API: run a video job (decode -> operators -> sink) on the GPU
 * (Vulkan Video decode, CUDA operators) or on the CPU reference backend.
 *
 * Conventions: functions return 0 on success or a negative error code
 * (AVERROR/negative errno, or one of VKCU_ERR_*). Objects are opaque;
 * `create` takes a params struct initialised from its defaults function;
 * `destroy` takes a pointer to the handle, accepts NULL and clears it.
 * One job runs on one thread; distinct jobs may run on distinct threads.
 */
#ifndef VKCU_H
#define VKCU_H

#include <stdint.h>
#include <stdio.h>

#include "util/log.h"
#include "util/hash_algo.h"

#ifdef __cplusplus
extern "C" {
#endif

struct AVFrame;

enum vkcu_backend {
    VKCU_BACKEND_AUTO = 0, /* GPU when a matching Vulkan+CUDA device works, else CPU */
    VKCU_BACKEND_CPU,
    VKCU_BACKEND_GPU,
};


/* The last leg of GPU frames bound for the host: a CUDA copy into pinned
 * memory, or the output ring (CUDA writes exportable Vulkan buffers, a
 * Vulkan transfer reads them back; binary semaphores both ways). */
enum vkcu_download {
    VKCU_DOWNLOAD_CUDA = 0,
    VKCU_DOWNLOAD_VULKAN,
};

/* Which way frames took; reported by --stats and batch reports. */
enum vkcu_path {
    VKCU_PATH_NONE = 0,
    VKCU_PATH_CPU,          /* software decode, CPU reference operators */
    VKCU_PATH_VULKAN_CUDA,  /* Vulkan Video decode, on-GPU copy into the interop ring, CUDA */
    VKCU_PATH_SW_UPLOAD_CUDA, /* software decode, one upload into the interop ring, CUDA */
};
const char *vkcu_path_name(enum vkcu_path path);

/* What a job does with the processed frames. */
enum vkcu_sink_kind {
    VKCU_SINK_ENCODE = 0, /* encode and mux to `output` (format from its extension) */
    VKCU_SINK_HASH,       /* per-frame hashes in framemd5 or JSON text to `hash_out` */
    VKCU_SINK_NULL,       /* decode and process only (benchmarks) */
    VKCU_SINK_CALLBACK,   /* hand each processed frame to on_frame (in-process consumers) */
};

/* FRAMECRC: FFmpeg FATE's framecrc lines (adler32, whatever hash_algo says);
 * WHOLE: one hash of all frames' bytes in order, as `ffmpeg -f md5` prints it */
enum vkcu_hash_format { VKCU_HASH_FORMAT_FRAMEMD5 = 0, VKCU_HASH_FORMAT_JSON, VKCU_HASH_FORMAT_FRAMECRC,
                        VKCU_HASH_FORMAT_WHOLE };

/* What a callback consumer learns before the first frame. */
typedef struct vkcu_stream_info {
    int tb_num, tb_den;          /* time base of the frames' pts */
    int fps_num, fps_den;        /* frame rate; 0/1 when unknown */
    int64_t start;               /* 0: frame times count from the input's start */
    int width, height;
    int pix_fmt;                 /* enum AVPixelFormat of the frames */
} vkcu_stream_info;

/* Interop ring slots on the GPU (frames in flight between Vulkan and
 * CUDA): the one place that says what ring_size may be. */
#define VKCU_RING_SIZE_MIN 3
#define VKCU_RING_SIZE_MAX 16
#define VKCU_RING_SIZE_DEFAULT 4

typedef struct vkcu_job_params {
    const char *input;           /* file path, or "-" for stdin */
    int video_stream;            /* the Nth video stream (from 0); -1: FFmpeg's best */
    const char *output;          /* VKCU_SINK_ENCODE: path ("-" for stdout, with output_format) */
    const char *output_format;   /* container name (nut, matroska, ...); NULL: from the output's extension */
    enum vkcu_sink_kind sink;
    enum vkcu_backend backend;
    int device;                  /* CUDA ordinal (the Vulkan device is matched by UUID) */
    const char *chain;           /* operator chain text, NULL or "" for none */
    /* encode */
    const char *encoder;         /* NULL/"auto": from the output extension */
    int crf;                     /* -1: encoder default */
    int64_t bitrate;             /* bits/s, 0: encoder default */
    const char *preset;
    int gop;                     /* 0: encoder default */
    const char *encoder_opts;    /* "k=v:k=v" passed to the encoder */
    int faststart;               /* 1: MP4/MOV index (moov) moved before the media data, for web playback */
    int decode_threads;          /* software decoder threads; 0: one per core, or 1 for hash/compare sinks */
    int encode_workers;          /* intra-GOP encoders (FFV1): GOPs encoded at once; 0: auto, 1: one encoder */
    int overwrite;               /* 1: replace an existing output */
    int keep_partial;            /* 1: keep the partial output on failure */
    int strict;                  /* 1: a corrupt frame is fatal */
    /* trimming: <0 unset; time in seconds or frame numbers */
    double start_time, duration;
    int64_t start_frame, frame_count;
    /* hash */
    FILE *hash_out;
    enum vkcu_hash_algo hash_algo;
    enum vkcu_hash_format hash_format;
    /* GPU */
    int ring_size;               /* interop ring slots, VKCU_RING_SIZE_MIN..MAX (vkcu_job_run: -EINVAL otherwise) */
    int stall_timeout_ms;        /* watchdog: no frame out of the decoder for this long fails */
    int timeline_handoff;        /* 1: one timeline semaphore instead of binary ready/done */
    enum vkcu_download download; /* how GPU frames reach the host (frames hashed on the GPU stay a CUDA copy) */
    int max_frames;              /* >0: stop after this many output frames */
    int require_gpu_decode;      /* 1: a software decode (CPU path or GPU fallback) is an error (VKCU_ERR_DEVICE) */
    double deadline;             /* >0: vkcu_now() after which the job stops and fails (verify's timeout) */
    int decode_only;             /* 1: decode and drop frames (benchmarks: no handoff, no operators) */
    /* VKCU_SINK_CALLBACK: called on the job's thread. on_open once, before the
     * first frame; on_frame per frame in output order (the frame is the
     * caller's to reference with av_frame_ref, not to keep). A negative
     * return ends the job with that error. */
    int (*on_open)(void *opaque, const struct vkcu_stream_info *info);
    int (*on_frame)(void *opaque, const struct AVFrame *frame);
    void *cb_opaque;
    /* reporting */
    int progress;                /* 1: progress line on stderr (only if a terminal) */
    int stats;                   /* 1: print per-stage statistics at the end */
} vkcu_job_params;

void vkcu_job_params_default(vkcu_job_params *p);

typedef struct vkcu_job_result {
    int64_t frames_in;      /* frames out of the decoder */
    int64_t frames_out;     /* frames handed to the sink */
    int64_t frames_corrupt; /* frames the decoder flagged and vkcu skipped */
    double seconds;         /* wall time */
    double fps;
    double fps_steady;      /* frames after the first / time after the first frame (no set-up) */
    double setup_seconds;   /* from the start of the job to the first decoded frame */
    enum vkcu_path path;
    char error[512];        /* one-line error text when the job failed */
    /* GPU statistics (zero on the CPU path) */
    int64_t imports;        /* external memory + semaphore imports into CUDA */
    int64_t dtod_copies;    /* on-GPU frame copies (decoded image -> interop ring) */
    int64_t htod_bytes, dtoh_bytes;
    int64_t vk_readbacks;   /* frames read back from the output ring by Vulkan (--download vulkan) */
    int max_in_flight;
    double gpu_ms_copy, gpu_ms_ops, gpu_ms_download; /* per-stage GPU time */
    /* encode sink: the encoder thread's time encoding, muxing and waiting for frames */
    double enc_ms_encode, enc_ms_mux, enc_ms_idle;
    /* set-up, ms: the job thread's demux, GPU session open (waiting for the
     * devices) and decoder open, then up to the first decoded frame; the
     * Vulkan instance and device and CUDA's start ran beside them on their
     * own threads (in the process's first job on that GPU; later jobs share
     * the devices and report how they were made) */
    double setup_ms_demux, setup_ms_gpu_open, setup_ms_decoder, setup_ms_first_frame;
    double setup_ms_vk_instance, setup_ms_vk_device, setup_ms_cuda;
    char setup_vk_device[64]; /* whose Vulkan device: "vkcu (...)" or "ffmpeg"; empty on the CPU path */
    char setup_timeline[512]; /* "step=start-end ..." in ms from the job's start (GPU jobs; see --stats) */
} vkcu_job_result;

/* Runs one job to completion. Returns 0 or a negative error; on error,
 * result->error holds a one-line message naming the file. Thread-safe for
 * distinct params/results. */
int vkcu_job_run(const vkcu_job_params *p, vkcu_job_result *result);



#ifdef __cplusplus
}
#endif
#endif
