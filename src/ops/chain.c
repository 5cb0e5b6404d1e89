/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Operator chains: parsing `name=k=v:k=v,name2=...` strictly (unknown names,
 * keys and values are rejected with their column), and the one driver of
 * the frame flow contract (both backends plug into it: the CPU's below, the
 * GPU's in gpu/chainrun.c). The operators read their values through
 * op_value.c, so that they and the registry never call back into here.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/mem.h>

#include "util/log.h"
#include "util/near.h"
#include "util/number.h"
#include "op.h"
#include "util/pool.h"

const vkcu_op_class *vkcu_op_find(const char *name)
{
    for (int i = 0; vkcu_op_classes[i]; i++)
        if (!strcmp(vkcu_op_classes[i]->name, name))
            return vkcu_op_classes[i];
    return NULL;
}

/* The choice `value` names under another name (an alias of key `key`), or NULL. */
static const char *alias_choice(const vkcu_op_class *cls, const char *key, const char *value)
{
    for (const vkcu_op_alias *a = cls->aliases; a && a->key; a++)
        if (!strcmp(a->key, key) && !strcmp(a->alias, value))
            return a->choice;
    return NULL;
}

/* Checks a value against its key's type; returns 0 or writes why not. */
static int check_value(const vkcu_op_class *cls, const vkcu_op_key *k, const char *v, char *why, size_t whylen)
{
    switch (k->type) {
    case VKCU_KEY_INT: {
        int64_t x;
        if (vkcu_parse_int(v, (int64_t)k->min, (int64_t)k->max, &x) < 0) {
            snprintf(why, whylen, "%s='%s' is not an integer in [%g, %g]", k->name, v, k->min, k->max);
            return -1;
        }
        return 0;
    }
    case VKCU_KEY_FLOAT: {
        double x;
        if (vkcu_parse_number(v, k->min, k->max, &x) < 0) {
            snprintf(why, whylen, "%s='%s' is not a number in [%g, %g]", k->name, v, k->min, k->max);
            return -1;
        }
        return 0;
    }
    case VKCU_KEY_ENUM:
        if (vkcu_op_choice_index(k->choices, v) < 0) {
            int n = snprintf(why, whylen, "%s=%s: expected one of %s", k->name, v, k->choices);
            /* and the other names the key takes (convert's format=: FFmpeg's) */
            const char *sep = " (also ";
            for (const vkcu_op_alias *a = cls->aliases; a && a->key && n >= 0 && (size_t)n < whylen; a++)
                if (!strcmp(a->key, k->name)) {
                    n += snprintf(why + n, whylen - (size_t)n, "%s%s", sep, a->alias);
                    sep = "|";
                }
            if (*sep == '|' && n >= 0 && (size_t)n < whylen)
                snprintf(why + n, whylen - (size_t)n, ")");
            return -1;
        }
        return 0;
    case VKCU_KEY_STRING:
        return 0;
    }
    return -1;
}

static void op_free(vkcu_op **pop)
{
    vkcu_op *op = *pop;
    if (!op)
        return;
    if (op->cls && op->cls->uninit && op->priv)
        op->cls->uninit(op);
    av_freep(&op->priv);
    free(op->text);
    free(op);
    *pop = NULL;
}

void vkcu_chain_free(vkcu_chain *chain)
{
    for (int i = 0; i < chain->nb_ops; i++)
        op_free(&chain->ops[i]);
    chain->nb_ops = 0;
}

#define PARSE_ERR(col, ...)                                             \
    do {                                                                \
        char why_[512];                                                 \
        snprintf(why_, sizeof(why_), __VA_ARGS__);                      \
        snprintf(err, errlen, "chain: column %d: %.480s", (int)(col) + 1, why_); \
        goto fail;                                                      \
    } while (0)

/* One left-to-right scan of the chain's text into its operators.
 * Long: the scan's steps share the cursor, whose column every refusal names,
 * and the operator being built. */
int vkcu_chain_parse(const char *text, vkcu_chain *chain, char *err, size_t errlen)
{
    memset(chain, 0, sizeof(*chain));
    if (!text || !*text)
        return 0;
    size_t len = strlen(text);
    size_t pos = 0;
    /* Messages quote the text: a newline or escape in it would break the
     * one-line error (or the terminal), and no name or value has one. */
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
            PARSE_ERR(i, "control character 0x%02x (a chain is one line of text)", (unsigned char)text[i]);
    while (pos <= len) {
        /* operator name */
        size_t start = pos;
        while (pos < len && text[pos] != '=' && text[pos] != ',')
            pos++;
        if (pos == start)
            PARSE_ERR(start, "expected an operator name");
        char name[64];
        if (pos - start >= sizeof(name))
            PARSE_ERR(start, "operator name too long");
        memcpy(name, text + start, pos - start);
        name[pos - start] = 0;
        const vkcu_op_class *cls = vkcu_op_find(name);
        if (!cls) {
            char known[256] = "";
            const char *names[64];
            int nb_names = 0;
            for (int i = 0; vkcu_op_classes[i]; i++) {
                snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s", i ? ", " : "",
                         vkcu_op_classes[i]->name);
                if (nb_names < 64)
                    names[nb_names++] = vkcu_op_classes[i]->name;
            }
            const char *near = vkcu_nearest_word(name, names, nb_names);
            if (near)
                PARSE_ERR(start, "unknown operator '%s': did you mean '%s'? (known: %s)", name, near, known);
            PARSE_ERR(start, "unknown operator '%s' (known: %s)", name, known);
        }
        if (chain->nb_ops >= (int)(sizeof(chain->ops) / sizeof(chain->ops[0])))
            PARSE_ERR(start, "too many operators");
        vkcu_op *op = calloc(1, sizeof(*op));
        if (!op)
            return AVERROR(ENOMEM);
        op->cls = cls;
        op->threads = 1;
        op->text = strdup(text);
        if (!op->text) {
            free(op);
            return AVERROR(ENOMEM);
        }
        chain->ops[chain->nb_ops++] = op;
        for (int i = 0; cls->keys && cls->keys[i].name; i++)
            op->value[i] = cls->keys[i].def;

        if (pos < len && text[pos] == '=') {
            pos++;
            /* key=value pairs joined by ':' until ',' or the end; values
             * without a key come first and take the keys in their order, as
             * ffmpeg's filters take them ("scale=320:180", "denoise=tnr:sigma=6") */
            int positional = 0, named = 0, nb_keys = 0;
            unsigned given = 0;
            char keys[512] = "";
            for (int i = 0; cls->keys && cls->keys[i].name; i++, nb_keys++)
                snprintf(keys + strlen(keys), sizeof(keys) - strlen(keys), "%s%s", i ? ", " : "", cls->keys[i].name);
            for (;;) {
                size_t kstart = pos;
                while (pos < len && text[pos] != '=' && text[pos] != ':' && text[pos] != ',')
                    pos++;
                int ki;
                const char *key;
                if (!nb_keys) {
                    PARSE_ERR(kstart, "%s has no keys (write just '%s')", name, name);
                } else if ((pos >= len || text[pos] != '=') && named) {
                    PARSE_ERR(kstart, "expected key=value after '%s=': a value without its key comes only before "
                              "the first key=value (keys in order: %s)", name, keys);
                } else if (pos >= len || text[pos] != '=') {
                    if (positional >= nb_keys)
                        PARSE_ERR(kstart, "%s takes %d value%s in order (%s): one too many", name, nb_keys,
                                  nb_keys > 1 ? "s" : "", keys);
                    ki = positional++;
                    key = cls->keys[ki].name;
                    pos = kstart - 1;
                } else {
                    op->text[pos] = 0;
                    key = op->text + kstart;
                    ki = vkcu_op_key_index(cls, key);
                    named = 1;
                }
                if (ki < 0)
                    PARSE_ERR(kstart, "%s has no key '%s' (keys: %s)", name, key, keys);
                if (ki < 32 && (given & (1u << ki)))
                    PARSE_ERR(kstart, "%s: %s is given twice", name, key);
                if (ki < 32)
                    given |= 1u << ki;
                pos++;
                size_t vstart = pos;
                while (pos < len && text[pos] != ':' && text[pos] != ',')
                    pos++;
                int end_of_op = pos >= len || text[pos] == ',';
                op->text[pos] = 0;
                const char *value = op->text + vstart;
                const char *choice = cls->keys[ki].type == VKCU_KEY_ENUM ? alias_choice(cls, cls->keys[ki].name, value)
                                                                         : NULL;
                if (choice)
                    value = choice;
                char why[512];
                if (check_value(cls, &cls->keys[ki], value, why, sizeof(why)) < 0)
                    PARSE_ERR(vstart, "%s: %.400s", name, why);
                op->value[ki] = value;
                if (end_of_op)
                    break;
                pos++;
            }
        }
        char why[256];
        if (cls->check && cls->check(op, why, sizeof(why)) < 0)
            PARSE_ERR(start, "%s: %.180s", name, why);
        if (pos >= len)
            break;
        pos++; /* ',' */
        if (pos >= len)
            PARSE_ERR(pos, "expected an operator after ','");
    }
    return 0;
fail:
    vkcu_chain_free(chain);
    return VKCU_ERR_USAGE;
}

/* Whether FFmpeg makes frames of this size: av_frame_get_buffer refuses
 * what av_image_check_size refuses (today (8 w + 1024) (h + 128) below
 * 2^31, about 268 million pixels), well inside the keys' ranges (scale's
 * 16384x16384, pad's 32768x8192). Its own line is logged as debug: the
 * chain names the operator instead. */
static int frame_size_fits(int w, int h)
{
    return w > 0 && h > 0 &&
           av_image_check_size2((unsigned)w, (unsigned)h, INT64_MAX, AV_PIX_FMT_NONE, AV_LOG_DEBUG - AV_LOG_ERROR,
                                NULL) >= 0;
}

/* The largest side that fits beside `other` (0: none). */
static int largest_fitting_side(int other, int width_given)
{
    int lo = 0, hi = 1 << 24;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (width_given ? frame_size_fits(other, mid) : frame_size_fits(mid, other))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* An operator's output FFmpeg cannot hold: refused at the start, before the
 * sink writes anything (else the first frame's allocation fails, as "out of
 * memory"). Usage: a smaller size is the user's to choose. */
static int check_output_size(const vkcu_op *op, int index, char *err, size_t errlen)
{
    int w = op->out.width, h = op->out.height;
    if (frame_size_fits(w, h))
        return 0;
    int max_h = largest_fitting_side(w, 1), max_w = largest_fitting_side(h, 0);
    int n = snprintf(err, errlen, "operator %d (%s): its output, %dx%d, is larger than FFmpeg's frames can be "
                     "((8 x width + 1024) x (height + 128) must stay below 2^31 - 1, about 268 million pixels)",
                     index + 1, op->cls->name, w, h);
    if (n < 0 || (size_t)n >= errlen)
        return VKCU_ERR_USAGE;
    if (max_h && max_w)
        snprintf(err + n, errlen - (size_t)n, ": at width %d the height can be at most %d, at height %d the width "
                 "at most %d", w, max_h, h, max_w);
    else
        snprintf(err + n, errlen - (size_t)n, ": give a smaller %s", max_h ? "height" : "width");
    return VKCU_ERR_USAGE;
}

int vkcu_chain_init(vkcu_chain *chain, const vkcu_video_format *in, vkcu_video_format *out,
                    char *err, size_t errlen)
{
    vkcu_video_format cur = *in;
    for (int i = 0; i < chain->nb_ops; i++) {
        vkcu_op *op = chain->ops[i];
        op->in = cur;
        if (op->cls->priv_size && !op->priv) {
            op->priv = av_mallocz(op->cls->priv_size);
            if (!op->priv)
                return AVERROR(ENOMEM);
        }
        op->out = cur;
        int ret = op->cls->init ? op->cls->init(op, &cur, &op->out) : 0;
        if (ret < 0) {
            char buf[128];
            snprintf(err, errlen, "operator %d (%s): %s", i + 1, op->cls->name,
                     ret == VKCU_ERR_USAGE ? "invalid options for this input (see above)" : vkcu_err_str(ret, buf, sizeof(buf)));
            return ret;
        }
        if ((ret = check_output_size(op, i, err, errlen)) < 0)
            return ret;
        cur = op->out;
    }
    *out = cur;
    return 0;
}

int vkcu_chain_reinit(vkcu_chain *chain, const vkcu_video_format *in, vkcu_video_format *out, char *err,
                      size_t errlen)
{
    for (int i = 0; i < chain->nb_ops; i++) {
        vkcu_op *op = chain->ops[i];
        if (op->cls->uninit && op->priv)
            op->cls->uninit(op);
        av_freep(&op->priv);
    }
    return vkcu_chain_init(chain, in, out, err, errlen);
}

int vkcu_chain_drive(const vkcu_chain *chain, int i, void *in, const vkcu_chain_backend *be,
                     const vkcu_op **failed_op)
{
    if (i >= chain->nb_ops)
        return in ? be->emit(be->opaque, in) : 0;
    vkcu_op *op = chain->ops[i];
    const int flushing = !in;
    for (;;) {
        void *out = be->frame_alloc(be->opaque, op, i);
        if (!out)
            return AVERROR(ENOMEM);
        int ret = be->run(be->opaque, op, in, out);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF) {
            be->frame_release(be->opaque, out);
            break;
        }
        if (ret < 0) {
            be->frame_release(be->opaque, out);
            if (failed_op)
                *failed_op = op;
            return ret;
        }
        const int more = ret == VKCU_OP_MORE;
        ret = vkcu_chain_drive(chain, i + 1, out, be, failed_op);
        be->frame_release(be->opaque, out);
        if (ret < 0 || (!flushing && !more))
            return ret;
        in = NULL; /* the ready outputs, or the rest of the flush */
    }
    return flushing ? vkcu_chain_drive(chain, i + 1, NULL, be, failed_op) : 0;
}

/* The CPU backend: a fresh AVFrame of the operator's output format per call. */
typedef struct cpu_backend {
    int (*emit)(void *opaque, AVFrame *f);
    void *opaque;
} cpu_backend;

static int cpu_run(void *opaque, vkcu_op *op, void *in, void *out)
{
    (void)opaque;
    return op->cls->run_cpu(op, in, out);
}

static void *cpu_frame_alloc(void *opaque, vkcu_op *op, int index)
{
    (void)opaque;
    (void)index;
    AVFrame *f = av_frame_alloc();
    if (!f)
        return NULL;
    f->format = op->out.pix_fmt;
    f->width = op->out.width;
    f->height = op->out.height;
    if (av_frame_get_buffer(f, 0) < 0)
        av_frame_free(&f);
    return f;
}

static void cpu_frame_release(void *opaque, void *frame)
{
    (void)opaque;
    AVFrame *f = frame;
    av_frame_free(&f);
}

static int cpu_emit(void *opaque, void *frame)
{
    cpu_backend *c = opaque;
    return c->emit(c->opaque, frame);
}

int vkcu_chain_feed_cpu(vkcu_chain *chain, int i, AVFrame *in, int (*emit)(void *opaque, AVFrame *f),
                        void *opaque, const vkcu_op **failed_op)
{
    cpu_backend c = { emit, opaque };
    const vkcu_chain_backend be = { .run = cpu_run, .frame_alloc = cpu_frame_alloc,
                                    .frame_release = cpu_frame_release, .emit = cpu_emit, .opaque = &c };
    return vkcu_chain_drive(chain, i, in, &be, failed_op);
}
