/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Growable arrays: the one way the library grows an array it appends to.
 * An array is a pointer to a malloc'ed block (NULL while empty), a count
 * and a room (the elements the block holds). The room doubles when the
 * count reaches it, so n appends cost O(n) copies. The block stays the
 * caller's: free() it.
 */
#ifndef VKCU_UTIL_ARRAY_H
#define VKCU_UTIL_ARRAY_H

#include <stddef.h>
#include <stdint.h>

/* Makes room for element `nb` of the array whose block pointer lies at
 * `block` (a T ** passed as void *): when nb has reached *room, the block
 * grows to twice *room elements of `size` bytes (`first` of them while
 * *room is 0). Returns 0, or -1 when memory runs out or the size would not
 * fit, leaving the block and *room as they were. */
int vkcu_array_grow(void *block, int64_t nb, int64_t *room, size_t size, int64_t first);

/* vkcu_array_grow for the array `v` (a T * lvalue) and its room `room` (an
 * int64_t lvalue): if (VKCU_ARRAY_GROW(l->v, l->n, l->room, 64) < 0) ... */
#define VKCU_ARRAY_GROW(v, nb, room, first) vkcu_array_grow(&(v), (nb), &(room), sizeof(*(v)), (first))

/* Sorted int64_t lists (timestamps): vkcu_i64_cmp orders them for qsort;
 * vkcu_i64_count_le is how many of the n sorted values are <= t (the index
 * of the first one above t), by bisection. */
int vkcu_i64_cmp(const void *a, const void *b);
int64_t vkcu_i64_count_le(const int64_t *v, int64_t n, int64_t t);

#endif
