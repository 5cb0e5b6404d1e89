/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Hash-list format names (hash_algo.h): the vocabulary of hash --format and the
 * preset key hash-format, and the extensions presets give their lists. */
#include <stddef.h>
#include <string.h>

#include "hash_algo.h"

#define ROW(e, id, ext) [e] = { id, ext },
static const struct {
    const char *id, *ext;
} hash_formats[] = { VKCU_HASH_FORMATS_NAMED(ROW, ROW, ROW) };
#undef ROW

const char *vkcu_hash_format_id(enum vkcu_hash_format f)
{
    return (unsigned)f < sizeof(hash_formats) / sizeof(hash_formats[0]) && hash_formats[f].id ? hash_formats[f].id
                                                                                              : "framemd5";
}

const char *vkcu_hash_format_name(enum vkcu_hash_format f)
{
    return vkcu_hash_format_id(f);
}

const char *vkcu_hash_format_extension(enum vkcu_hash_format f)
{
    return (unsigned)f < sizeof(hash_formats) / sizeof(hash_formats[0]) && hash_formats[f].ext
               ? hash_formats[f].ext
               : ".framemd5";
}

int vkcu_hash_format_parse(const char *name, enum vkcu_hash_format *f)
{
    for (size_t i = 0; i < sizeof(hash_formats) / sizeof(hash_formats[0]); i++)
        if (hash_formats[i].id && !strcmp(name, hash_formats[i].id)) {
            *f = (enum vkcu_hash_format)i;
            return 0;
        }
    return -1;
}
