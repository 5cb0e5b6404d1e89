/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The decode stage (decode.c): libavcodec on a demuxed video stream, with
 * the Vulkan Video (or compute) hwaccel on a Vulkan device or in software.
 * Errors are one user-facing line in `err`, naming the file.
 */
#ifndef VKCU_CORE_DECODE_H
#define VKCU_CORE_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <libavcodec/avcodec.h>
#include <vkcu/job.h>

#include "demux.h"

typedef struct vkcu_par vkcu_par;
typedef struct vkcu_par_class vkcu_par_class;

typedef struct vkcu_decoder {
    AVCodecContext *avctx;  /* with par: opened, decodes nothing; framerate is the last frame's decoder's */
    const char *path;
    int hw;                 /* 1: Vulkan Video hwaccel active */
    int64_t packets_rejected; /* packets the decoder refused as invalid data */
    /* The container's crop window (Matroska PixelCrop, MP4 'clap'), applied
     * after the codec's: top, bottom, left, right. */
    uint32_t container_crop[4];
    int container_crop_warned;
    vkcu_par *par;          /* non-NULL: the stream is decoded by segments in parallel (decode_par.c) */
    const vkcu_par_class *par_cls; /* what the calls below do on it */
} vkcu_decoder;

/* hw_device: a Vulkan AVHWDeviceContext, or NULL for software decode.
 * With hw_device set, fails with AVERROR(ENOSYS) when the device cannot
 * decode this stream (codec, profile or size), so the caller can fall back. */
int vkcu_decoder_open(const vkcu_demux *d, AVBufferRef *hw_device, int threads,
                      vkcu_decoder **out, char *err, size_t errlen);
/* A Vulkan decoder that reuses the frames (the images) of the decoder
 * before it: r->frames (NULL at first) holds the last frames context made;
 * when this stream asks for the same (device, size, formats, usage and
 * video profile), its frames come from that pool, else from a new context
 * that replaces r->frames. A new frames context creates, binds and prepares
 * every image afresh, so decoders opened one after another on one lane
 * (decode_par.c's segments) keep their images this way. The decoder also
 * adds the time its frame allocations take to r (its thread only). The
 * caller owns r->frames and unrefs it when done. */
typedef struct vkcu_frames_reuse {
    AVBufferRef *frames;
    double t_get_buffer;    /* seconds in get_buffer2 (pool, or new images) */
    int64_t get_buffers;
} vkcu_frames_reuse;
int vkcu_decoder_open_reuse(const vkcu_demux *d, AVBufferRef *hw_device, vkcu_frames_reuse *r,
                            vkcu_decoder **out, char *err, size_t errlen);
/* A software decoder with one thread whose frames come from get_buffer2
 * (with opaque as the context's), where the codec lets the caller allocate. */
int vkcu_decoder_open_pooled(const vkcu_demux *d, int (*get_buffer2)(AVCodecContext *, AVFrame *, int),
                             void *opaque, vkcu_decoder **out, char *err, size_t errlen);
/* Whether a Vulkan device can decode this stream (codec, profile, depth,
 * chroma format, size): VKCU_VK_DECODE_VIDEO (a video decode queue) or
 * VKCU_VK_DECODE_COMPUTE (FFmpeg's compute hwaccels), 0 no (reason in why). */
int vkcu_decoder_vulkan_supported(const vkcu_demux *d, AVBufferRef *hw_device, char *why, size_t whylen);
/* pkt NULL: drain. Invalid packets are counted and skipped unless strict. */
int vkcu_decoder_send(vkcu_decoder *dec, const AVPacket *pkt, int strict, char *err, size_t errlen);
/* 0 with a frame, AVERROR(EAGAIN), AVERROR_EOF, or an error. */
int vkcu_decoder_receive(vkcu_decoder *dec, AVFrame *frame);
void vkcu_decoder_close(vkcu_decoder **dec);
/* Forgets the stream so far (a seek): avcodec_flush_buffers, or the parallel
 * decoder's segments. 0 or an error. */
int vkcu_decoder_flush(vkcu_decoder *dec);

/* Parallel decoding (decode_par.c, like the calls after it): a decoder whose stream is cut
 * into segments at its independent access units (segment.h), each decoded
 * by a fresh decoder on one of n worker threads (hw NULL: in software; else
 * the Vulkan device of the job, each worker decoding on a decode lane of
 * its own of CUDA device cuda_device's shared device), the frames given back in
 * order: the frames and timestamps of one decoder from the start (see
 * decode_par.c for how damage, CRA leading pictures and packets without
 * timestamps keep it so). A segment holds at least min_packets packets; the
 * frames decoded ahead of the one being taken hold at most about budget
 * bytes. A codec without cut points opens a plain decoder (-v says why).
 * Strict jobs decode in sequence: a refused packet must stop them at once. */
int vkcu_decoder_open_parallel(const vkcu_demux *d, AVBufferRef *hw, int cuda_device, int n, int64_t min_packets,
                               int64_t budget, vkcu_decoder **out, char *err, size_t errlen);
/* The parallel decode wanted: n decoders (>= 2), or 0 for one, from the
 * setting (VKCU_DECODE_PARALLEL_AUTO, 0 or 1: none, N) and the cores; share
 * (vkcu_job_params' decode_share, 0 or 1: alone) the decodes that split the
 * cores between them. */
int vkcu_decode_parallel_count(int setting, int share);
/* The same on the GPU, from the decode queues the process claimed (lanes)
 * and the GPU parallel decoders running. */
int vkcu_decode_parallel_count_gpu(int setting, int share, int lanes);
/* The defaults: packets a segment holds at least, and the bytes of frames
 * that wait (VKCU_DECODE_SEGMENT_MIN, VKCU_DECODE_PARALLEL_MIB override). */
int64_t vkcu_decode_segment_min(int64_t setting);
int64_t vkcu_decode_parallel_budget(void);
/* The GPU's: a quarter of its memory (gpu_memory bytes), at most 32 GiB. */
int64_t vkcu_decode_parallel_budget_gpu(int64_t gpu_memory);

/* What vkcu_decoder's calls do on a parallel decoder, set by
 * vkcu_decoder_open_parallel (decode_par.c): decode.c calls through it, so
 * that decode_par.c, which is made of plain decoders, is the one that calls
 * the other. */
struct vkcu_par_class {
    int (*send)(vkcu_par *p, const AVPacket *pkt);
    int (*receive)(vkcu_par *p, vkcu_decoder *parent, AVFrame *frame);
    int (*flush)(vkcu_par *p);
    AVRational (*framerate)(const vkcu_par *p);
    /* Its figures at -v, then freed; *p is cleared. */
    void (*close)(vkcu_par **p, const char *path);
};

/* The software pixel format of decoded frames (resolves hardware frames). */
enum AVPixelFormat vkcu_frame_sw_format(const AVFrame *frame);

#endif
