/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The operator chain on the CUDA stream: the GPU backend of the one chain
 * driver (vkcu_chain_drive, op.h), each frame leaving the chain going to
 * the session's way out (exit.h).
 */
#include <libavutil/error.h>

#include "session_priv.h"

/* The GPU backend of the chain driver for one run of the chain. */
typedef struct chain_sink {
    vkcu_gpu *g;
    int slot;        /* the input's ring slot, -1 when flushing */
    int nb_out;      /* outputs so far */
    char *err;
    size_t errlen;
    /* Operator i's output: its planes are the operator's own (op.h), so
     * one frame per operator is all the driver needs. */
    vkcu_gpu_frame mid[VKCU_CHAIN_MAX_OPS];
} chain_sink;

/* One frame leaving the chain: its own pending entry, through the way out.
 * All outputs of one run (and all flushed ones) are written on the one
 * stream, so a way out's kernel, its copy and the next output's kernel are
 * ordered: none overwrites what the previous copy has not read yet. */
static int chain_emit(vkcu_gpu *g, chain_sink *cs, const vkcu_gpu_frame *out, char *err, size_t errlen)
{
    int ret = 0;
    if (cs->nb_out++ > 0 || cs->slot < 0) {
        /* The first output of an input has its entry taken and its start
         * recorded (with the Vulkan copy) before the chain ran; a further
         * output, or a flushed one, starts here. */
        if ((ret = vkcu_gpu_reserve_pending(g, err, errlen)) < 0)
            return ret;
        CU_CHECK(cudaEventRecord(vkcu_gpu_pending_next(g)->ev_start, g->stream));
    }
    return vkcu_gpu_exit_frame(g, cs->slot, out, err, errlen);
fail:
    return ret;
}

static int gpu_run(void *opaque, vkcu_op *op, void *in, void *out)
{
    chain_sink *cs = opaque;
    return op->cls->run_gpu(op, in, out, cs->g->stream);
}

static void *gpu_frame_alloc(void *opaque, vkcu_op *op, int index)
{
    chain_sink *cs = opaque;
    (void)op;
    return &cs->mid[index];
}

static void gpu_frame_release(void *opaque, void *frame)
{
    (void)opaque;
    (void)frame;
}

static int gpu_emit(void *opaque, void *frame)
{
    chain_sink *cs = opaque;
    return chain_emit(cs->g, cs, frame, cs->err, cs->errlen);
}

int vkcu_gpu_chain_init(vkcu_gpu *g, char *err, size_t errlen)
{
    int ret = 0;
    for (int i = 0; g->chain && i < g->chain->nb_ops; i++) {
        vkcu_op *op = g->chain->ops[i];
        if (!op->cls->run_gpu) {
            snprintf(err, errlen, "operator %s has no GPU implementation", op->cls->name);
            return VKCU_ERR_USAGE;
        }
        if (op->cls->init_gpu && (ret = op->cls->init_gpu(op)) < 0) {
            snprintf(err, errlen, "operator %s: GPU set-up failed", op->cls->name);
            return ret;
        }
    }
    return 0;
}

int vkcu_gpu_chain_run(vkcu_gpu *g, int slot, vkcu_gpu_frame *in, char *err, size_t errlen)
{
    chain_sink cs = { .g = g, .slot = slot, .err = err, .errlen = errlen };
    if (!g->chain)
        return in ? chain_emit(g, &cs, in, err, errlen) : 0;
    const vkcu_chain_backend be = { .run = gpu_run, .frame_alloc = gpu_frame_alloc,
                                    .frame_release = gpu_frame_release, .emit = gpu_emit, .opaque = &cs };
    const vkcu_op *failed = NULL;
    int ret = vkcu_chain_drive(g->chain, 0, in, &be, &failed);
    if (ret < 0 && failed)
        snprintf(err, errlen, "operator %s failed on the GPU: %s", failed->cls->name, av_err2str(ret));
    return ret;
}
