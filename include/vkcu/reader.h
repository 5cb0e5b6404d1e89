/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu public API: frames pulled one at a time (a reader), random access to
 * exact frames, and frames handed to other libraries as DLPack tensors
 * without a copy.
 *
 * A job with the callback sink (job.h) pushes frames into a function of
 * the caller's, on the job's thread, and takes them back when it returns.
 * A reader turns that around: the caller asks for the next frame and keeps
 * it as long as it likes, on any thread:
 *
 *     vkcu_reader_params rp;
 *     vkcu_default_reader_params(&rp);
 *     rp.input = "in.mkv";
 *     rp.chain = "scale=h=720";
 *     vkcu_reader *r = NULL;
 *     char err[512];
 *     if (vkcu_reader_open(ctx, &rp, &r, err, sizeof(err)) < 0) ...  // the input is opened and checked here
 *     vkcu_frame *f;
 *     while (vkcu_reader_next(r, &f, err, sizeof(err)) == 0 && f) {
 *         ... f->data[p], f->linesize[p], f->rows[p], f->row_bytes[p] ...
 *         vkcu_frame_unref(&f);                                      // its buffer goes back to the pool
 *     }
 *     vkcu_reader_close(&r);
 *
 * Frames and memory. Frames come in the planar layout vkcu hashes
 * (docs/hash.md): planes in order, samples of more than 8 bits as 16-bit
 * little-endian words; a plane's visible rows, packed one after the other,
 * are exactly the bytes `vkcu hash` hashes for that plane. NV12 and P010
 * arrive as yuv420p and yuv420p10le on both backends. On the GPU backend a
 * frame's planes are CUDA device memory (cuda_frames, default): the chain's
 * last step writes them straight into a pitched buffer of the reader's pool
 * on the device, and nothing crosses to the host. On the CPU backend, and
 * with cuda_frames = 0, they are host memory: each frame is copied once
 * into a buffer of the pool, so that nothing a program writes there can
 * reach the decoder's or an operator's reference frames.
 *
 * The pool and back-pressure. The library decodes ahead of the caller by a
 * few frames and then waits: a reader never runs away from a slow consumer.
 * The caller may hold at most max_held frames at once (a frame is held from
 * vkcu_reader_next or vkcu_reader_frames_at until its last reference, its
 * own or a DLPack tensor's, is released); asking for more while that many
 * are held fails at once with -ENOBUFS rather than waiting for a
 * release that a single-threaded caller would never make. A frame copied
 * out with vkcu_frame_detach, or every frame with detach = 1, is the
 * caller's memory and counts against nothing.
 *
 * Random access. vkcu_reader_frames_at decodes exact frames by number (the
 * n-th frame in presentation order, from 0, as start_frame numbers them),
 * seeking to the keyframe before each and decoding from there as a job with
 * start_frame does. Its demuxer, decoder and (on the GPU) interop ring are
 * made at the first call and kept, so later calls pay no set-up; targets in
 * the same group of pictures share one decode. The chain must consist of
 * operators that look at one frame at a time (no denoise, deinterlace or
 * fps): otherwise frame n would depend on where decoding started.
 *
 * Threading. One reader is used by one thread at a time (calls on it are
 * serialised by a lock, but interleaving iteration from several threads
 * gives each a share of the frames). Frames, their references and their
 * DLPack tensors may be released on any thread, also after the reader is
 * closed: the pool lives until its last buffer is back.
 */
#ifndef VKCU_READER_H
#define VKCU_READER_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "job.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkcu_reader vkcu_reader;

/* How iterated frames are timed (random access frames are always timed as
 * decoded). VFR and DECODED answer the two timings of hash lists and take
 * their values, in their order: VKCU_TIMING_FFMPEG's frames (each at its
 * own size, where a hash list scales them to the first's) and every
 * decoded frame (each at its own time in the stream's time base, where a
 * hash list puts it onto 1/frame rate); a reader also offers CFR. The
 * default is DECODED (vkcu_default_reader_params), not 0. */
enum vkcu_reader_timing {
    VKCU_READER_TIMING_VFR = VKCU_TIMING_FFMPEG,         /* as `vkcu hash` and `ffmpeg -f framemd5`: 1/frame rate
                                                           * units, frames whose times collide moved or dropped
                                                           * (variable frame rate) */
    VKCU_READER_TIMING_DECODED = VKCU_TIMING_DECODED,    /* every frame the chain gives, pts in the stream's time
                                                           * base, from the input's start */
    VKCU_READER_TIMING_CFR,                              /* constant frame rate, 1/frame rate units: frames repeated
                                                           * or dropped onto the grid, as an MP4 output of ffmpeg's
                                                           * command line (a repeated frame is the same picture) */
};

/* Where a frame's planes are. */
enum vkcu_memory {
    VKCU_MEMORY_HOST = 0, /* system memory */
    VKCU_MEMORY_CUDA,     /* CUDA device memory of vkcu_frame.device */
};

#define VKCU_READER_MAX_HELD_LIMIT 1024
#define VKCU_READER_MAX_HELD_DEFAULT 32

/* What to read. Fill with vkcu_default_reader_params() first; strings are
 * copied by vkcu_reader_open. The context gives the rest (backend, device,
 * ring size, decoder threads, log callback). */
typedef struct vkcu_reader_params {
    const char *input;        /* file path; required (random access also needs it seekable) */
    int video_stream;         /* the Nth video stream, from 0; -1 (default): FFmpeg's best */
    const char *chain;        /* operator chain (chain.h); NULL or "": frames as decoded */
    /* which frames iteration gives, as vkcu_job's: start_time/duration in
     * seconds or start_frame/frame_count in frames; each -1 (default): not set */
    double start_time, duration;
    int64_t start_frame, frame_count;
    enum vkcu_reader_timing timing; /* iteration's timing; default VKCU_READER_TIMING_DECODED */
    int max_held;             /* frames the caller may hold at once, 1..VKCU_READER_MAX_HELD_LIMIT;
                               * default VKCU_READER_MAX_HELD_DEFAULT */
    int cuda_frames;          /* 1 (default): on the GPU backend, planes in CUDA device memory; 0: host memory */
    int detach;               /* 1: every frame handed out is a copy of its own (vkcu_frame_detach), not held
                               * against max_held; default 0 */
    int strict;               /* 1: a corrupt frame fails (as vkcu_job.strict); default 0: skipped */
    int require_gpu_decode;   /* 1: a software decode fails with VKCU_ERR_DEVICE (as vkcu_job's) */
    uint64_t reserved[32];    /* zero (version.h: room to grow) */
} vkcu_reader_params;

/**
 * Fills reader parameters with the defaults given beside each field.
 * @note Thread-safe.
 */
VKCU_API void vkcu_default_reader_params(vkcu_reader_params *p);

/* The input, as opened (before the chain). */
typedef struct vkcu_reader_info {
    int width, height;       /* decoded picture size */
    const char *codec;       /* FFmpeg's codec name ("h264", "hevc" ...), static */
    int fps_num, fps_den;    /* FFmpeg's guess of the frame rate; 0/1 unknown */
    int tb_num, tb_den;      /* the stream's time base (random access frames' pts) */
    double duration;         /* seconds; 0 when unknown */
    int64_t frames;          /* frames by the container; -1 unknown (vkcu_reader_frame_count counts them) */
    int seekable;            /* 1: random access works on this input */
    uint64_t reserved[16];   /* zero (version.h: room to grow) */
} vkcu_reader_info;

/**
 * Opens a reader: checks the parameters, opens and probes the input, and
 * prepares nothing else (decoding starts at the first frame asked for).
 *
 * @param ctx    an open context; it must outlive the reader.
 * @param p      the parameters; read during the call only.
 * @param reader receives the reader (NULL on failure); must not be NULL.
 * @param err    receives the one-line reason on failure (the log callback
 *               gets it too); may be NULL.
 * @param errlen size of err.
 * @return 0; -EINVAL for a bad parameter (err names it), also for an input
 *         that is standard input, a FIFO, a socket or a character device
 *         (nothing is opened then); -ENOENT when the
 *         input does not exist; VKCU_ERR_INPUT when it cannot be read or
 *         holds no video; VKCU_ERR_USAGE for a bad video_stream; -ENOMEM.
 * @note Thread-safe for distinct readers.
 */
VKCU_API int vkcu_reader_open(vkcu_context *ctx, const vkcu_reader_params *p, vkcu_reader **reader, char *err,
                              size_t errlen);

/**
 * Describes the input.
 * @param info receives the description (strings static or the reader's).
 */
VKCU_API void vkcu_reader_info_get(const vkcu_reader *r, vkcu_reader_info *info);

/* A frame handed out by a reader. The fields are the library's: read them,
 * never write them. Release it with vkcu_frame_unref(). */
typedef struct vkcu_frame {
    int width, height;        /* visible size in pixels */
    const char *format;       /* FFmpeg's name of the layout ("yuv420p", "yuv420p10le", "rgb24", "gbrp" ...) */
    int nb_planes;            /* planes in data[]: 1 (packed RGB, gray) to 4 */
    uint8_t *data[4];         /* first byte of each plane's first row; NULL past nb_planes */
    ptrdiff_t linesize[4];    /* bytes from one row to the next (a multiple of the sample size) */
    int row_bytes[4];         /* bytes of one row's samples, padding excluded */
    int rows[4];              /* rows of each plane */
    int bytes_per_sample;     /* 1 or 2 (16-bit little-endian words; half floats for rgbaf16le) */
    int components;           /* samples per pixel in each plane: 1 for planar layouts, 3 or 4 for packed RGB */
    int64_t index;            /* the frame's number in presentation order from the stream's start (as
                               * start_frame counts); -1 when unknown (a chain that retimes, a start_time) */
    int64_t pts;              /* presentation time in tb_num/tb_den units, from the input's start */
    int64_t duration;         /* in the same units; 0 unknown */
    int tb_num, tb_den;
    int key_frame;            /* 1: the input coded it as a key frame */
    int interlaced;           /* 1: two fields (no deinterlacer in the chain) */
    int top_field_first;      /* with interlaced */
    int corrupt;              /* 1: the decoder reported errors it concealed (such frames are kept only
                               * where the job keeps them; today they are skipped unless strict stops) */
    enum vkcu_memory memory;
    int device;               /* with VKCU_MEMORY_CUDA: the CUDA device ordinal; else -1 */
    struct vkcu_frame_priv *priv; /* the library's */
    uint64_t reserved[16];    /* zero (version.h: room to grow) */
} vkcu_frame;

/**
 * The next frame of the iteration (the reader's start/duration window, its
 * timing), decoding as needed.
 *
 * @param frame receives a new reference to the frame, or NULL after the
 *              last one (then every later call gives NULL again).
 * @return 0 (with a frame or NULL at the end); -ENOBUFS when max_held
 *         frames are held (release one, or detach frames); the
 *         job's own error when decoding failed (err names the file, frame or
 *         setting: VKCU_ERR_INPUT, VKCU_ERR_DEVICE, -EINVAL for a chain
 *         that does not fit the input ...). After an error the iteration is
 *         over; vkcu_reader_rewind starts it again.
 */
VKCU_API int vkcu_reader_next(vkcu_reader *r, vkcu_frame **frame, char *err, size_t errlen);

/**
 * Ends the current iteration (dropping frames decoded ahead, not frames
 * held) and makes the next vkcu_reader_next start again at the window's
 * first frame.
 */
VKCU_API void vkcu_reader_rewind(vkcu_reader *r);

/**
 * Counts the input's frames by reading its packets (no decoding), once;
 * random access does the same at its first call.
 *
 * @param count receives the number of frames: the numbers
 *              vkcu_reader_frames_at takes are 0..count-1.
 * @return 0; -ENOSYS when the input has no timestamps to number frames by
 *         (raw streams, pipes); VKCU_ERR_INPUT on a read error.
 */
VKCU_API int vkcu_reader_frame_count(vkcu_reader *r, int64_t *count, char *err, size_t errlen);

/**
 * Decodes the frames with the given numbers (presentation order from 0).
 *
 * @param indices frame numbers, in any order, repeats allowed.
 * @param count   how many (1..VKCU_READER_MAX_HELD_LIMIT); without detach,
 *                the distinct ones plus the frames already held must not
 *                exceed max_held.
 * @param frames  receives count new references, frames[i] for indices[i]
 *                (a repeated number gives the same frame twice: two
 *                references). Nothing is written on failure.
 * @return 0; -EINVAL for a number outside [0, count of frames) (err names
 *         it) or a chain with an operator that looks at several frames;
 *         -ENOBUFS when the frames would exceed max_held; -ENOSYS
 *         when the input cannot be sought (raw streams, pipes);
 *         VKCU_ERR_INPUT when a frame cannot be decoded; other job errors.
 */
VKCU_API int vkcu_reader_frames_at(vkcu_reader *r, const int64_t *indices, int count, vkcu_frame **frames, char *err,
                                   size_t errlen);

/**
 * The number of the frame shown at a time: the last frame whose pts is at
 * or before `seconds` (from the input's start, as frame pts count).
 *
 * @return 0 with *index set; -EINVAL when `seconds` lies before the first
 *         frame or at or after the end of the last one; -ENOSYS as
 *         vkcu_reader_frame_count.
 */
VKCU_API int vkcu_reader_frame_at_time(vkcu_reader *r, double seconds, int64_t *index, char *err, size_t errlen);

/**
 * The frames that start in a time range: those whose pts lies in
 * [start_seconds, stop_seconds) (seconds from the input's start, as
 * vkcu_reader_frame_at_time counts them; a frame at a bound to within a
 * microsecond of a tick is at it). They are the frames numbered
 * *first .. *first + *count - 1.
 *
 * @param first receives the number of the first frame starting at or after
 *              start_seconds.
 * @param count receives how many start before stop_seconds (0 when
 *              start_seconds == stop_seconds, or no frame starts between).
 * @return 0; -EINVAL when stop_seconds < start_seconds, start_seconds lies
 *         before the first frame or at or after the end of the last one, or
 *         stop_seconds after that end; -ENOSYS as vkcu_reader_frame_count.
 */
VKCU_API int vkcu_reader_frames_in_time(vkcu_reader *r, double start_seconds, double stop_seconds, int64_t *first,
                                        int64_t *count, char *err, size_t errlen);

/* What a reader did. */
typedef struct vkcu_reader_stats {
    int64_t frames;          /* frames handed out (iteration and random access) */
    int64_t cuda_frames;     /* of them, in CUDA device memory */
    int64_t host_copies;     /* of them, copied into a host buffer of the pool */
    int64_t detached;        /* copies handed out by detach = 1, and made by vkcu_frame_detach */
    int held;                /* frames held now */
    int max_held_seen;       /* the most held at once */
    int64_t random_decoded;  /* frames random access decoded (the pre-roll from each keyframe included) */
    int64_t random_seeks;    /* seeks random access made */
    int random_setups;       /* decoders random access opened (1 after any number of calls: they are reused) */
    enum vkcu_path path;     /* the way the last frames took */
    /* GPU counters (job.h's vkcu_job_result): of every finished iteration
     * and of random access so far */
    int64_t imports, dtod_copies, htod_bytes, dtoh_bytes;
    double fps_steady;       /* of the last finished iteration: frames after the first / time after the first */
    uint64_t reserved[32];   /* zero (version.h: room to grow) */
} vkcu_reader_stats;

/** Fills *s. */
VKCU_API void vkcu_reader_stats_get(vkcu_reader *r, vkcu_reader_stats *s);

/**
 * Closes a reader and clears the pointer (NULL and *r == NULL are fine).
 * Frames still held stay valid until released.
 */
VKCU_API void vkcu_reader_close(vkcu_reader **r);

/**
 * @return a new reference to the same frame (the same memory).
 * @note Thread-safe.
 */
VKCU_API vkcu_frame *vkcu_frame_ref(vkcu_frame *f);

/**
 * Releases a reference and clears the pointer (NULL and *f == NULL are
 * fine). With the last reference the frame's buffer goes back to its pool.
 * @note Thread-safe; also after the reader is closed.
 */
VKCU_API void vkcu_frame_unref(vkcu_frame **f);

/**
 * Copies a frame into memory of its own on the same device (host, or the
 * same CUDA device), outside the pool: it counts against no limit.
 *
 * @param copy receives the copy (a frame like any other: unref it).
 * @return 0; -ENOMEM; VKCU_ERR_DEVICE when the GPU copy fails.
 * @note Thread-safe.
 */
VKCU_API int vkcu_frame_detach(const vkcu_frame *f, vkcu_frame **copy, char *err, size_t errlen);

/**
 * Hands a plane, or the whole frame, to another library as a DLPack tensor
 * sharing the frame's memory (https://dmlc.github.io/dlpack/).
 *
 * Shapes (rows, then samples; element type uint8, uint16, or float16 for
 * rgbaf16le; strides in elements, so the row pitch shows as the first
 * stride):
 *   plane p of a planar layout         (rows[p], row_bytes[p] / bytes_per_sample)
 *   plane 0 of a packed layout         (height, width, components)
 *   plane -1 (the frame): a one-plane layout as its plane; a planar layout
 *   whose planes all share one size (4:4:4, gbrp) as (planes, height,
 *   width); other layouts have no frame tensor (-EINVAL).
 *
 * @param plane     0..nb_planes-1, or -1 for the whole frame.
 * @param versioned 1: a DLManagedTensorVersioned (DLPack 1.x, version 1.0,
 *                  flags 0); 0: a DLManagedTensor (the unversioned ABI of
 *                  DLPack 0.x, which numpy before 2.1 takes).
 * @param stream    CUDA frames: the stream the consumer will use the
 *                  tensor on, as DLPack numbers it (1: the legacy default
 *                  stream, 2: the per-thread default stream, else a
 *                  cudaStream_t; 0 and -1: unknown, taken as the legacy
 *                  default stream). The frame's pixels are complete when it
 *                  is handed out, so no wait is needed before use; when the
 *                  tensor is deleted, the buffer is reused only after the
 *                  work queued on this stream until then. Host frames: 0.
 * @param tensor    receives the DLManagedTensor(Versioned) *. It holds a
 *                  reference to the frame; its deleter (to be called once,
 *                  from any thread, by whoever consumed it) releases that
 *                  reference and frees the tensor.
 * @return 0; -EINVAL for a plane the frame has no tensor for (err says
 *         why); -ENOMEM.
 * @note Thread-safe.
 */
VKCU_API int vkcu_frame_dlpack(vkcu_frame *f, int plane, int versioned, int64_t stream, void **tensor, char *err,
                               size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
