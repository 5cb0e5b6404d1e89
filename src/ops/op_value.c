/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the operators read (op.h): their options' values by key name, typed,
 * and the row-band thread helper the CPU reference (and the metrics) use.
 * Apart from chain.c, which parses the values, so that a chain, the
 * registry and the operators call one way: chain -> registry -> operators
 * -> here.
 */
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "util/pool.h"
#include "op.h"

int vkcu_op_key_index(const vkcu_op_class *cls, const char *name)
{
    for (int i = 0; cls->keys && cls->keys[i].name; i++)
        if (!strcmp(cls->keys[i].name, name))
            return i;
    return -1;
}

int vkcu_op_choice_index(const char *choices, const char *value)
{
    size_t n = strlen(value);
    int idx = 0;
    for (const char *p = choices; p && *p; idx++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && !strncmp(p, value, n))
            return idx;
        p = bar ? bar + 1 : NULL;
    }
    return -1;
}

static const char *value_of(const vkcu_op *op, const char *key, const vkcu_op_key **k)
{
    int i = vkcu_op_key_index(op->cls, key);
    if (i < 0) {
        LOGE("internal: operator %s has no key %s", op->cls->name, key);
        abort();
    }
    *k = &op->cls->keys[i];
    return op->value[i];
}

int vkcu_op_is_set(const vkcu_op *op, const char *key)
{
    const vkcu_op_key *k;
    return value_of(op, key, &k) != NULL;
}

int vkcu_op_int(const vkcu_op *op, const char *key)
{
    const vkcu_op_key *k;
    const char *v = value_of(op, key, &k);
    return v ? (int)strtol(v, NULL, 10) : 0;
}

double vkcu_op_float(const vkcu_op *op, const char *key)
{
    const vkcu_op_key *k;
    const char *v = value_of(op, key, &k);
    return v ? strtod(v, NULL) : 0.0;
}

int vkcu_op_enum(const vkcu_op *op, const char *key)
{
    const vkcu_op_key *k;
    const char *v = value_of(op, key, &k);
    return v ? vkcu_op_choice_index(k->choices, v) : -1;
}

const char *vkcu_op_str(const vkcu_op *op, const char *key)
{
    const vkcu_op_key *k;
    return value_of(op, key, &k);
}

/* The bands run on the calling thread's persistent pool (util/pool.h): the
 * workers are made at the first call of a job, not per frame. */
void vkcu_parallel_rows(int threads, int height, vkcu_rows_fn fn, void *ctx)
{
    if (threads > VKCU_POOL_MAX_THREADS)
        threads = VKCU_POOL_MAX_THREADS;
    if (threads <= 1 || height < 2 * threads) {
        fn(ctx, 0, height);
        return;
    }
    vkcu_pool_rows(vkcu_pool_for_thread(threads), height, fn, ctx);
}
