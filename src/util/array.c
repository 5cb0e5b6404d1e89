/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Growable arrays (array.h). The block pointer is read and written through
 * memcpy: the caller's T * is reached as bytes, never as a void *, which C
 * does not let a T ** be used as.
 */
#include <stdlib.h>
#include <string.h>

#include "util/array.h"

int vkcu_array_grow(void *block, int64_t nb, int64_t *room, size_t size, int64_t first)
{
    if (nb < *room)
        return 0;
    int64_t want = *room > 0 ? *room : first > 0 ? first : 1;
    if (*room > 0) {
        if (want > INT64_MAX / 2)
            return -1;
        want *= 2;
    }
    if (want <= nb)
        want = nb + 1;
    if (!size || (uint64_t)want > SIZE_MAX / size)
        return -1;
    void *old, *grown;
    memcpy(&old, block, sizeof(old));
    grown = realloc(old, (size_t)want * size);
    if (!grown)
        return -1;
    memcpy(block, &grown, sizeof(grown));
    *room = want;
    return 0;
}

int vkcu_i64_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int64_t vkcu_i64_count_le(const int64_t *v, int64_t n, int64_t t)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (v[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
