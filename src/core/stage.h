/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The stages a job strings together: demux -> decode -> (CPU operators |
 * GPU session) -> sink. Each stage writes a one-line, user-facing error into
 * the `err` buffer it is given; the pipeline prefixes nothing (messages
 * already name the file).
 */
#ifndef VKCU_STAGE_H
#define VKCU_STAGE_H

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>

#include "ops/op.h"
#include "gpu/gpu.h"
#include "util/log.h" /* vkcu_now */
#include "vkcu.h"

/* ---- demux (demux.c) ---- */
typedef struct vkcu_demux {
    AVFormatContext *fmt;
    AVStream *video;        /* the stream processed */
    int video_index;
    const char *path;
    AVRational frame_rate;  /* best guess; {0,1} when unknown */
    int64_t frames_estimate; /* for progress and ETA; 0 when unknown */
} vkcu_demux;

/* video_stream: the Nth video stream (from 0), or -1 for FFmpeg's best. */
int vkcu_demux_open(const char *path, int video_stream, vkcu_demux **out, char *err, size_t errlen);
/* The same over caller-supplied I/O (a memory buffer, for the fuzz target),
 * with FFmpeg's best video stream: `path` only names the input in messages;
 * pb stays the caller's to free, after vkcu_demux_close. */
int vkcu_demux_open_io(const char *path, AVIOContext *pb, vkcu_demux **out, char *err, size_t errlen);
/* 0, AVERROR_EOF at the end, or an error (err filled). */
int vkcu_demux_read(vkcu_demux *d, AVPacket *pkt, char *err, size_t errlen);
/* Seeks to the keyframe at or before `ts` (video stream time base). */
int vkcu_demux_seek(vkcu_demux *d, int64_t ts);
void vkcu_demux_close(vkcu_demux **d);

/* ---- decode (decode.c) ---- */
typedef struct vkcu_decoder {
    AVCodecContext *avctx;
    const char *path;
    int hw;                 /* 1: Vulkan Video hwaccel active */
    int64_t packets_rejected; /* packets the decoder refused as invalid data */
    /* The container's crop window (Matroska PixelCrop, MP4 'clap'), applied
     * after the codec's: top, bottom, left, right. */
    uint32_t container_crop[4];
    int container_crop_warned;
} vkcu_decoder;

/* hw_device: a Vulkan AVHWDeviceContext, or NULL for software decode.
 * With hw_device set, fails with AVERROR(ENOSYS) when the device cannot
 * decode this stream (codec, profile or size), so the caller can fall back. */
int vkcu_decoder_open(const vkcu_demux *d, AVBufferRef *hw_device, int threads,
                      vkcu_decoder **out, char *err, size_t errlen);
/* Whether a Vulkan device can decode this stream (codec, profile, depth,
 * chroma format, size): VKCU_VK_DECODE_VIDEO (a video decode queue) or
 * VKCU_VK_DECODE_COMPUTE (FFmpeg's compute hwaccels), 0 no (reason in why). */
int vkcu_decoder_vulkan_supported(const vkcu_demux *d, AVBufferRef *hw_device, char *why, size_t whylen);
/* pkt NULL: drain. Invalid packets are counted and skipped unless strict. */
int vkcu_decoder_send(vkcu_decoder *dec, const AVPacket *pkt, int strict, char *err, size_t errlen);
/* 0 with a frame, AVERROR(EAGAIN), AVERROR_EOF, or an error. */
int vkcu_decoder_receive(vkcu_decoder *dec, AVFrame *frame);
void vkcu_decoder_close(vkcu_decoder **dec);
/* The software pixel format of decoded frames (resolves hardware frames). */
enum AVPixelFormat vkcu_frame_sw_format(const AVFrame *frame);

/* ---- sinks (sink_hash.c, sink_null.c, sink_encode.c, sink_callback.c) ---- */
typedef struct vkcu_sink vkcu_sink;
typedef struct vkcu_sink_class {
    const char *name;
    size_t priv_size;
    /* fmt: format of the frames that will arrive; tb: their time base. */
    int (*open)(vkcu_sink *s, const vkcu_video_format *fmt, AVRational tb);
    int (*write_frame)(vkcu_sink *s, AVFrame *frame);
    /* Non-video packets of the input (stream copy); may be NULL. */
    int (*write_packet)(vkcu_sink *s, AVPacket *pkt);
    /* ok = 0: the job failed; discard partial output. */
    int (*close)(vkcu_sink *s, int ok);
} vkcu_sink_class;

struct vkcu_sink {
    const vkcu_sink_class *cls;
    void *priv;
    const vkcu_job_params *params;
    vkcu_job_result *result;  /* sinks may add their statistics at close */
    vkcu_demux *demux;
    char *err;
    size_t errlen;
    int opened;
    /* Set by open where the sink also takes AV_PIX_FMT_VULKAN frames of this
     * frames context (the Vulkan encoder's; the sink's reference, valid
     * until close): the GPU session may hand it frames filled on the GPU. */
    AVBufferRef *gpu_frames;
};

extern const vkcu_sink_class vkcu_sink_hash, vkcu_sink_encode, vkcu_sink_null, vkcu_sink_callback;

/* The frame hash definition (docs/hash.md): planes in order, each row's
 * visible samples packed without padding, 16-bit samples little-endian. */
int vkcu_frame_hash(const AVFrame *frame, enum vkcu_hash_algo algo, char *hex, size_t hexlen, int *size);

/* Whether the GPU session hands this job's hash sink digests
 * (vkcu_frame_digest, gpu/gpu.h) instead of frames, given the planar layout
 * `host_fmt` frames would be downloaded in:
 * per-frame BLAKE3 lines (not --whole, not framecrc) of a layout hashed as
 * stored (semi-planar layouts are rearranged on the CPU, so they download). */
int vkcu_hash_on_gpu(const vkcu_job_params *p, enum AVPixelFormat host_fmt);

/* ---- output file handling (outfile.c) ---- */
/* Every file vkcu writes follows one rule (outfile.c): an existing file
 * is refused unless `overwrite`; a file that is one of `inputs` (NULL-
 * terminated paths; the same file under any name or link) is refused
 * even with `overwrite`; the file appears only complete. "-" is standard
 * output (tmp is set to "-": open it with vkcu_outfile_fopen); files that
 * are not regular are written in place (tmp is set to path). A dangling
 * symbolic link is refused without overwrite.
 * Errors are VKCU_ERR_OUTPUT with a one-line message in err. */
int vkcu_outfile_check(const char *path, int overwrite, const char *const *inputs, char *err, size_t errlen);
/* 1 when path exists and is one of inputs (*which: the input's name). */
int vkcu_outfile_is_input(const char *path, const char *const *inputs, const char **which);
/* A short temporary name beside `path` (created, empty) to write to;
 * also removes dead processes' leftovers in that folder. */
int vkcu_outfile_begin(const char *path, int overwrite, const char *const *inputs, char *tmp, size_t tmplen,
                       char *err, size_t errlen);
/* The same, but the temporary is only named, not created: for a file that
 * another library creates under that name (an encoder's statistics). */
int vkcu_outfile_reserve(const char *path, int overwrite, const char *const *inputs, char *tmp, size_t tmplen,
                         char *err, size_t errlen);
/* Registers the temporary name `tmp` (not created) for `path`, checked by
 * the rule; path NULL: a name removed on failure or signal, never
 * published (an encoder's own scratch files beside a reserved name). */
int vkcu_outfile_reserve_as(const char *tmp, const char *path, int overwrite, const char *const *inputs, char *err,
                            size_t errlen);
/* fopen() of what vkcu_outfile_begin returned; "-": a new stream on a
 * duplicate of standard output. NULL with errno on failure. */
FILE *vkcu_outfile_fopen(const char *tmp, const char *mode);
/* fclose() of a vkcu_outfile_fopen stream: 0, or -1 with errno when what
 * was written did not all arrive. On standard output a reader that went
 * away (| head) is no error: it has what it wanted. */
int vkcu_outfile_fclose(FILE *f, const char *tmp);
/* VKCU_ERR_USAGE (err names `what`) when path is "-" and standard output
 * is a terminal: for binary outputs (PNG). Else 0. */
int vkcu_outfile_not_terminal(const char *path, const char *what, char *err, size_t errlen);
/* fsync, move into place (never replacing a file without overwrite: a
 * file that appeared meanwhile fails the commit), fsync the folder. On
 * failure the temporary is removed. */
int vkcu_outfile_commit(const char *tmp, const char *path, char *err, size_t errlen);
void vkcu_outfile_abort(const char *tmp);
/* A confined writer: `len` bytes of `data` to `rel`, a path relative to the
 * folder rootfd (held open by the caller), under the rule above. The
 * file's folder is resolved below rootfd when the file is written, so a
 * link swapped in meanwhile cannot lead the write out of it (EXDEV: an
 * error naming `shown`, what messages call the file). */
int vkcu_outfile_write_at(int rootfd, const char *rel, const char *shown, const void *data, size_t len, int overwrite,
                          const char *const *inputs, char *err, size_t errlen);
/* Removes every temporary output and claim of the process. Async-signal-
 * safe: for signal handlers and immediate exits. */
void vkcu_outfile_abort_all(void);
/* Removes temporaries of processes that no longer exist from the folder
 * of `path` (once per folder and process), with a warning naming each. */
void vkcu_outfile_clean_beside(const char *path);
/* Batch claims: 1 when this process now owns the work of writing `path`
 * (*fd set), 0 when another process does (*holder: its pid, 0 unknown),
 * <0 on error. The claim ends with vkcu_outfile_release, or with the
 * process (an flock). */
int vkcu_outfile_claim(const char *path, int *fd, long *holder, char *err, size_t errlen);
void vkcu_outfile_release(const char *path, int fd);

/* Hash-list format names: util/hash_algo.h. */

/* ---- progress (progress.c) ---- */
/* A job's progress reports, at most 4 a second, to the job's progress
 * callback (none: nothing is reported). */
typedef struct vkcu_progress {
    int enabled;
    vkcu_progress_callback callback; /* set before vkcu_progress_init; NULL: no reports */
    void *opaque;
    double start, last;
    int64_t total;
    const char *label;
    /* Set before vkcu_progress_init (by the trim set-up); init keeps them. */
    double rate;            /* frames per second of the input; 0: unknown (no speed) */
    int64_t expected;       /* frames the trimmed job will write; 0: use init's total */
} vkcu_progress;
void vkcu_progress_init(vkcu_progress *p, int enabled, int64_t total, const char *label);
void vkcu_progress_update(vkcu_progress *p, int64_t frames, int final);

#endif
