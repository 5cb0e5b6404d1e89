/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * "Did you mean": the word of a vocabulary that a typed word is a typo of,
 * for the library's messages (operator names, encoder presets).
 */
#ifndef VKCU_UTIL_NEAR_H
#define VKCU_UTIL_NEAR_H

/* Optimal string alignment distance: insertions, deletions, substitutions
 * and adjacent transpositions; words over 63 bytes are 99 apart. */
int vkcu_edit_distance(const char *a, const char *b);

/* The word of words[0..n) (n < 0: up to a NULL entry) nearest to `typed`,
 * when it is near enough to be a typo of it (at most 2 edits, fewer than
 * half its letters; a prefix of three or more letters counts as one edit);
 * else NULL. */
const char *vkcu_nearest_word(const char *typed, const char *const *words, int n);

#endif
