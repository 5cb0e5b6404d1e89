/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * JSON output through jansson, for every JSON vkcu writes (hash lines,
 * batch reports). One object per line.
 *
 * File names are bytes, not text: jansson holds only well-formed UTF-8, so
 * a name that is not is given back with each stray byte as \udcXX (the lone
 * surrogate U+DC00 + byte of Python's "surrogateescape"; docs/batch.md).
 */
#ifndef VKCU_JSON_H
#define VKCU_JSON_H

#include <stdio.h>
#include <jansson.h>

/* Length of the well-formed UTF-8 sequence at u (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or 0. Reads no further
 * than a NUL. */
int vkcu_utf8_length(const unsigned char *u);

/* Sets obj[key] to the string holding exactly the bytes of `s` (NULL: null).
 * Returns 0, or -1 on allocation failure. */
int vkcu_json_set_bytes(json_t *obj, const char *key, const char *s);

/* Sets obj[key] to `v` rounded to `decimals` places, written in the
 * shortest form that reads back as that value (3.412, not 3.41199999). */
int vkcu_json_set_fixed(json_t *obj, const char *key, double v, int decimals);

/* The object as one line (no newline) in a malloc'd string, or NULL.
 * compact: no spaces ({"a":1,"b":2}); else {"a": 1, "b": 2}. */
char *vkcu_json_line(const json_t *obj, int compact);

/* Any jansson dump (flags as json_dumps': JSON_INDENT(1) for a file a
 * person reads) with stray name bytes as \udcXX; malloc'd, or NULL. */
char *vkcu_json_text(const json_t *obj, size_t flags);

/* Writes the object as one line and a newline; -1 on an output or
 * allocation error. Takes the object's reference. */
int vkcu_json_write_line(FILE *f, json_t *obj, int compact);

#endif
