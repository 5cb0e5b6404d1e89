/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Operators: the processing steps of a chain (`convert`, `denoise`, ...).
 *
 * An operator class declares its name, its keys (typed, with defaults and
 * ranges) and two implementations of the same math: run_cpu on AVFrames
 * (the CPU reference backend) and run_gpu on device frames (CUDA). The
 * per-pixel math lives once in the kernels/ headers, compiled by gcc and nvcc.
 *
 * Frame flow contract (both backends): run(op, in, out)
 *   - in != NULL: consume one input frame; returns 0 when `out` was
 *     written, VKCU_OP_MORE when `out` was written and more output is
 *     ready (frame duplication, one frame per field), AVERROR(EAGAIN) when
 *     the operator needs more input first (temporal look-ahead), or a
 *     negative error;
 *   - in == NULL: no new input. After VKCU_OP_MORE the driver calls again
 *     with in == NULL, once per ready output, before it feeds the next input:
 *     each such call writes the next ready frame and returns VKCU_OP_MORE
 *     again or 0 with the last one. Otherwise (nothing ready) in == NULL is
 *     the end of the stream: flush, returning 0 or VKCU_OP_MORE for each
 *     buffered frame, then AVERROR_EOF. So an operator tells the two apart
 *     by its own state, and one that never returns VKCU_OP_MORE sees in ==
 *     NULL only at the end, as before.
 * An operator that keeps an input beyond the call references or copies it
 * (the driver frees the AVFrame, and on the GPU reuses the input's slot,
 * once the call and every ready output of it are done). One driver,
 * vkcu_chain_drive, runs the contract for both backends.
 * The operator copies timestamps and side data of the frame it outputs
 * (av_frame_copy_props on the CPU; pts/duration on the GPU). Timestamps are
 * in the format's time_base; an operator that retimes frames (fps) sets its
 * output format's time_base and frame_rate.
 *
 * Threading: one operator instance is used by one job thread. run_cpu may
 * use op->threads worker threads internally (vkcu_parallel_rows).
 */
#ifndef VKCU_OP_H
#define VKCU_OP_H

#include <stddef.h>
#include <stdint.h>
#include <libavutil/frame.h>
#include <libavutil/pixfmt.h>
#include <libavutil/mastering_display_metadata.h>

#include "kernels/frame.h"
#include "util/format.h"

#ifdef __cplusplus
extern "C" {
#endif




enum vkcu_key_type { VKCU_KEY_INT, VKCU_KEY_FLOAT, VKCU_KEY_ENUM, VKCU_KEY_STRING };

/* run_cpu/run_gpu: out written, and another output is ready (see above). */
#define VKCU_OP_MORE 1

typedef struct vkcu_op_key {
    const char *name;
    enum vkcu_key_type type;
    const char *def;       /* default value as text, NULL: unset ("from the stream") */
    double min, max;       /* INT/FLOAT range */
    const char *choices;   /* ENUM: '|'-separated values */
    const char *help;
} vkcu_op_key;

/* Another name an ENUM key takes for one of its choices (convert's format=
 * takes FFmpeg's pixel format names, yuv420p10le for yuv420p10). The chain
 * stores the choice itself, so vkcu_op_enum and every listing see it. */
typedef struct vkcu_op_alias {
    const char *key;    /* the ENUM key */
    const char *alias;  /* the other name */
    const char *choice; /* one of the key's choices */
} vkcu_op_alias;

#define VKCU_OP_MAX_KEYS 32

typedef struct vkcu_op vkcu_op;

typedef struct vkcu_op_class {
    const char *name;
    const char *help;            /* one line */
    /* One line: how exact the output is and against what (backends, an
     * outside oracle); `vkcu pipelines` lists it with the keys. */
    const char *accuracy;
    const vkcu_op_key *keys;     /* terminated by a zero entry */
    size_t priv_size;
    /* 1: each output is made from one input frame alone, one for one, at its
     * time (no neighbours, no state between frames, no retiming), so the
     * operator may run on any frame by itself: random access (reader.h)
     * takes only chains of such operators. 0 (the safe default): it may
     * look at other frames. */
    int per_frame;
    /* Checks key values against each other, whatever the input: limits no
     * single key's range expresses. vkcu_chain_parse calls it, so a preset
     * check (`vkcu pipelines FILE`) refuses exactly the chains a job start
     * refuses. NULL: nothing to check. Returns 0, or -1 with why filled. */
    int (*check)(const vkcu_op *op, char *why, size_t whylen);
    /* Checks the option values against the input and fills *out. Called once
     * before the first frame on either backend. Errors name the key. */
    int (*init)(vkcu_op *op, const vkcu_video_format *in, vkcu_video_format *out);
    int (*run_cpu)(vkcu_op *op, const AVFrame *in, AVFrame *out);
    /* stream: cudaStream_t. Output planes are owned by the operator and stay
     * valid until its next run_gpu call (work is ordered on the stream). */
    int (*init_gpu)(vkcu_op *op);
    int (*run_gpu)(vkcu_op *op, const vkcu_gpu_frame *in, vkcu_gpu_frame *out, void *stream);
    void (*uninit)(vkcu_op *op);
    /* Other names of ENUM choices, terminated by a zero entry; NULL: none. */
    const vkcu_op_alias *aliases;
} vkcu_op_class;

struct vkcu_op {
    const vkcu_op_class *cls;
    void *priv;
    int threads;                    /* CPU worker threads for run_cpu */
    int nb_values;
    const char *value[VKCU_OP_MAX_KEYS]; /* per key index of cls->keys; NULL: unset */
    char *text;                     /* owns the value strings */
    vkcu_video_format in, out;
};

/* Option access by key name (the name must exist in cls->keys). */
int vkcu_op_int(const vkcu_op *op, const char *key);
double vkcu_op_float(const vkcu_op *op, const char *key);
/* ENUM: index into choices; -1 when unset and without default. */
int vkcu_op_enum(const vkcu_op *op, const char *key);
const char *vkcu_op_str(const vkcu_op *op, const char *key);
int vkcu_op_is_set(const vkcu_op *op, const char *key);
/* The index of key `name` in cls->keys, or -1. */
int vkcu_op_key_index(const vkcu_op_class *cls, const char *name);
/* The index of `value` in a '|'-separated list of choices, or -1. */
int vkcu_op_choice_index(const char *choices, const char *value);

/* The registry of operator classes, NULL-terminated. */
extern const vkcu_op_class *const vkcu_op_classes[];
const vkcu_op_class *vkcu_op_find(const char *name);

/* 1: convert's format= writes frames of pf (by vkcu's name or FFmpeg's,
 * av_get_pix_fmt_name(pf), which it takes too); 0: it cannot. */
int vkcu_convert_writes(enum AVPixelFormat pf);
/* 1: convert (and tonemap) read frames of pf; 0: they refuse them. */
int vkcu_convert_reads(enum AVPixelFormat pf);

/* A parsed chain. */
#define VKCU_CHAIN_MAX_OPS 16
typedef struct vkcu_chain {
    int nb_ops;
    vkcu_op *ops[VKCU_CHAIN_MAX_OPS];
} vkcu_chain;

/* Parses "name=k=v:k=v,name2=..." into *chain. On error returns
 * VKCU_ERR_USAGE and writes a message with the column of the mistake. */
int vkcu_chain_parse(const char *text, vkcu_chain *chain, char *err, size_t errlen);
/* Runs init over the chain; *out is the last operator's output format. */
int vkcu_chain_init(vkcu_chain *chain, const vkcu_video_format *in, vkcu_video_format *out,
                    char *err, size_t errlen);
/* A format change mid-stream: every operator is set up again from scratch
 * for the new input format (its state dropped: tnr's history, fps's clock,
 * scale's weights), as at the first frame. The caller flushes the chain
 * first, so no frame it held is lost, and on the GPU has no work of the
 * chain in flight: uninit frees GPU memory too. The parsed options stay. */
int vkcu_chain_reinit(vkcu_chain *chain, const vkcu_video_format *in, vkcu_video_format *out, char *err,
                      size_t errlen);
void vkcu_chain_free(vkcu_chain *chain);
/* A backend of the chain driver: how one operator runs and where its frames
 * come from and go. A frame is the backend's own type (AVFrame on the CPU,
 * vkcu_gpu_frame on the GPU), passed as void *. */
typedef struct vkcu_chain_backend {
    /* op->cls->run_cpu or run_gpu on the backend's frames (in NULL: see the
     * contract above). */
    int (*run)(void *opaque, vkcu_op *op, void *in, void *out);
    /* Room for the next output of ops[index] (NULL: out of memory), given
     * back by frame_release once it and everything downstream of it ran. */
    void *(*frame_alloc)(void *opaque, vkcu_op *op, int index);
    void (*frame_release)(void *opaque, void *frame);
    /* A frame leaving the chain (lent: emit may keep a reference). */
    int (*emit)(void *opaque, void *frame);
    void *opaque;
} vkcu_chain_backend;

/* The driver of the frame flow contract: runs `in` (NULL: the end of the
 * stream, flushing every operator in order) through operators [i, nb_ops)
 * and hands each frame that leaves the chain to be->emit. Every output of
 * an operator is taken downstream before it gets the next input. Returns 0,
 * emit's error, or an operator's error with *failed_op set to that operator
 * (else left alone). */
int vkcu_chain_drive(const vkcu_chain *chain, int i, void *in, const vkcu_chain_backend *be,
                     const vkcu_op **failed_op);
/* vkcu_chain_drive on the CPU backend: AVFrames, run_cpu. */
int vkcu_chain_feed_cpu(vkcu_chain *chain, int i, AVFrame *in, int (*emit)(void *opaque, AVFrame *f),
                        void *opaque, const vkcu_op **failed_op);

/* Splits rows [0, height) over `threads` workers and calls fn on each band. */
typedef void (*vkcu_rows_fn)(void *ctx, int y0, int y1);
void vkcu_parallel_rows(int threads, int height, vkcu_rows_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
