/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of the encode sink share (sink.h is its face): the queue
 * between the job thread and the encoder thread, the GOP workers and the
 * sink's state. sink_encode.c opens the output, feeds the queue and closes
 * it; sink_encode_video.c finds and opens the video encoder;
 * sink_encode_streams.c maps the input's other streams onto the output;
 * sink_encode_thread.c is the encoder thread, which encodes and writes;
 * sink_encode_gop.c holds the GOP-parallel workers. Internal to src/core/.
 */
#ifndef VKCU_CORE_SINK_ENCODE_PRIV_H
#define VKCU_CORE_SINK_ENCODE_PRIV_H

#include <pthread.h>
#include <stdint.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>

#include "audio_encode.h"
#include "encoder_files.h"
#include "sink.h"
#include "subtitle_text.h"
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
/* A compute encoder's instances by default: 4 (H100, 600 frames: ffv1_vulkan
 * 135 fps against 100-110 with one at 1080p, 52-54 against 46 at 4K;
 * prores_ks_vulkan +2% and +8%, the same bytes; docs/performance.md, "The
 * compute encoders' instances"). */
#define COMPUTE_INSTANCES_AUTO 4
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
 * one encoder would have made; the encoder thread writes them in order.
 * FFmpeg's compute encoders (ffv1_vulkan, prores_ks_vulkan) run the same
 * way: n instances on the GPU, each with one frame in flight (ProRes codes
 * every frame alone: its GOP is one frame). */
typedef struct gop_worker {
    vkcu_sink *s;
    AVCodecContext *enc;
    AVPacket *pkt;
    AVFrame *hw_frame;      /* a compute encoder's instance: a host frame uploaded (else NULL) */
    pthread_t thread;
    int running;
    int64_t next;           /* the next frame number this worker encodes */
    int queue;              /* a compute encoder's instance: its own compute queue (0: the first's) */
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
    AVBufferRef *vk_device; /* Vulkan encode: the GPU's shared device (gpu/vkdev_encode.c) */
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

/* ---- the video encoder (sink_encode_video.c) ---- */

/* An encoder context with every setting of the job (several identical ones
 * for GOP-parallel encoding). Errors go to s->err. */
int vkcu_encsink_configure_encoder(vkcu_sink *s, const AVCodec *codec, const vkcu_video_format *fmt, AVRational tb,
                                   int global_header, AVCodecContext **out);

/* The video encoder of the job, opened for frames of `fmt` in container
 * `ofmt`: the GPU encoder the job prefers where it can take them, else the
 * one named or the container's default. *tb in: the frames' time base,
 * out: the encoder's. Errors go to s->err; what was made is undone. */
int vkcu_encsink_pick_encoder(vkcu_sink *s, const vkcu_video_format *fmt, const AVOutputFormat *ofmt,
                              AVRational *tb, const AVCodec **out);

/* ---- the other streams (sink_encode_streams.c) ---- */

/* The output's streams (the video at the input's position; audio,
 * subtitles and data copied, encoded, converted or dropped), its metadata
 * and chapters, onto e->oc. tb: the video encoder's time base. <0: the job
 * fails (s->err set where the cause is the user's). */
int vkcu_encsink_map_streams(vkcu_sink *s, const AVOutputFormat *ofmt, AVRational tb);

/* ---- the encoder thread (sink_encode_thread.c) ---- */

/* The encoder thread: takes the queue in order and writes every packet, so
 * the muxer has one writer. With GOP workers it only writes their packets. */
void *vkcu_encsink_thread_main(void *arg);

/* Records the first error of the encoder thread or a worker and wakes the
 * job thread; returns ret. */
int vkcu_encsink_thread_fail(vkcu_sink *s, int ret, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Takes the first queue item (lock held). */
queue_item vkcu_encsink_pop_head(encode_sink *e);

/* ---- GOP-parallel workers (sink_encode_gop.c) ---- */

/* Sets up GOP-parallel encoding where it applies, else leaves one encoder. */
int vkcu_encsink_setup_workers(vkcu_sink *s, const AVCodec *codec, const vkcu_video_format *fmt, AVRational tb,
                               int global_header);
int vkcu_encsink_start_workers(vkcu_sink *s);
void vkcu_encsink_stop_workers(encode_sink *e);
void vkcu_encsink_free_workers(encode_sink *e);

#endif
