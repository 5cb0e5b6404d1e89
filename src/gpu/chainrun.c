/*
 * The operator chain on the CUDA stream: the GPU driver of the frame flow
 * contract (op.h), each frame leaving the chain going to the download.
 */
#include <libavutil/error.h>

#include "session_priv.h"

/* Where the outputs of one run of the chain go. */
typedef struct chain_sink {
    int slot;        /* the input's ring slot, -1 when flushing */
    int nb_out;      /* outputs so far */
} chain_sink;

/* One frame leaving the chain: its own pending entry and pinned host
 * buffer. All outputs of one run (and all flushed ones) go through the same
 * device staging buffer: the download kernel, the copy to the host and the
 * next output's kernel are ordered on the one stream, so none overwrites
 * what the previous copy has not read yet. */
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
    return vkcu_gpu_download(g, cs->slot, out, err, errlen);
fail:
    return ret;
}

/* The GPU driver of the frame flow contract (op.h), as vkcu_chain_feed_cpu:
 * runs `in` (NULL: flush) through operators [i, nb_ops), each frame leaving
 * the chain to chain_emit. */
static int run_chain(vkcu_gpu *g, int i, const vkcu_gpu_frame *in, chain_sink *cs, char *err, size_t errlen)
{
    if (!g->chain || i >= g->chain->nb_ops)
        return in ? chain_emit(g, cs, in, err, errlen) : 0;
    vkcu_op *op = g->chain->ops[i];
    const int flushing = !in;
    for (;;) {
        vkcu_gpu_frame mid;
        int ret = op->cls->run_gpu(op, in, &mid, g->stream);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF)
            break;
        if (ret < 0) {
            snprintf(err, errlen, "operator %s failed on the GPU: %s", op->cls->name, av_err2str(ret));
            return ret;
        }
        const int more = ret == VKCU_OP_MORE;
        ret = run_chain(g, i + 1, &mid, cs, err, errlen);
        if (ret < 0 || (!flushing && !more))
            return ret;
        in = NULL; /* the ready outputs, or the rest of the flush */
    }
    return flushing ? run_chain(g, i + 1, NULL, cs, err, errlen) : 0;
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

int vkcu_gpu_chain_run(vkcu_gpu *g, int slot, const vkcu_gpu_frame *in, char *err, size_t errlen)
{
    chain_sink cs = { .slot = slot };
    return run_chain(g, 0, in, &cs, err, errlen);
}
