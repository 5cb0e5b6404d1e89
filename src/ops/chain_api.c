/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The public chain calls (include/vkcu/chain.h): checking a chain's text
 * and describing the operators, from the one registry (op_registry.c) that
 * the parser, the CLI listing and the documentation all read.
 */
#include <errno.h>
#include <stdio.h>
#include <libavutil/error.h>

#include "op.h"
#include "util/error.h"
#include <vkcu/chain.h>

int vkcu_chain_check(const char *chain, char *err, size_t errlen)
{
    char why[512] = "";
    vkcu_chain parsed;
    int ret = vkcu_chain_parse(chain, &parsed, why, sizeof(why));
    vkcu_chain_free(&parsed);
    if (ret < 0 && err && errlen)
        snprintf(err, errlen, "%s", why);
    /* The parser's usage class is the API's -EINVAL: the text is the argument. */
    return ret == VKCU_ERR_USAGE ? AVERROR(EINVAL) : ret;
}

const char *vkcu_operator_name(int index)
{
    if (index < 0)
        return NULL;
    for (int i = 0; vkcu_op_classes[i]; i++)
        if (i == index)
            return vkcu_op_classes[i]->name;
    return NULL;
}

const char *vkcu_operator_key(const char *name, int index)
{
    const vkcu_op_class *cls = name ? vkcu_op_find(name) : NULL;
    if (!cls || index < 0)
        return NULL;
    for (int i = 0; cls->keys && cls->keys[i].name; i++)
        if (i == index)
            return cls->keys[i].name;
    return NULL;
}

int vkcu_operator_describe(const char *name, FILE *out)
{
    static const char *const types[] = { "int", "number", "choice", "text" };
    const vkcu_op_class *cls = name ? vkcu_op_find(name) : NULL;
    if (!cls || !out)
        return AVERROR(EINVAL);
    fprintf(out, "  %-10s %s\n", cls->name, cls->help);
    fprintf(out, "  %-10s accuracy: %s\n", "", cls->accuracy ? cls->accuracy : "(not stated)");
    for (int i = 0; cls->keys && cls->keys[i].name; i++) {
        const vkcu_op_key *k = &cls->keys[i];
        char what[160];
        if (k->type == VKCU_KEY_ENUM)
            snprintf(what, sizeof(what), "%s", k->choices);
        else if (k->type == VKCU_KEY_INT || k->type == VKCU_KEY_FLOAT)
            snprintf(what, sizeof(what), "%s %g..%g", types[k->type], k->min, k->max);
        else
            snprintf(what, sizeof(what), "%s", types[k->type]);
        /* keys without a default say in their help what they follow (the input, the stream) */
        fprintf(out, "  %-10s   %s (%s%s%s): %s\n", "", k->name, what, k->def ? ", default " : "", k->def ? k->def : "",
                k->help);
    }
    return 0;
}
