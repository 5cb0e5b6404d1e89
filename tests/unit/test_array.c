/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The growable array (util/array.h) that the hash lists, the manifests, the
 * batch's file list, the preset list, compare's rows and the trim's timestamp lists append
 * to: the first block holds `first` elements and the room doubles from
 * there; every element appended is still there, in order; a size that
 * cannot be allocated fails with the array and its room as they were; a
 * zero `first` still gives a block (of one).
 */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "util/array.h"

typedef struct row {
    int64_t frame;
    double value;
} row;

static void check_appends(void)
{
    row *v = NULL;
    int64_t nb = 0, room = 0, grew = 0, rooms[8] = { 0 };
    for (int i = 0; i < 1000; i++) {
        int64_t before = room;
        if (VKCU_ARRAY_GROW(v, nb, room, 64) < 0) {
            CHECK(0, "append %d: out of memory", i);
            break;
        }
        if (room != before && grew < 8)
            rooms[grew++] = room;
        v[nb++] = (row){ i, i * 0.5 };
    }
    CHECK(grew == 5 && rooms[0] == 64 && rooms[1] == 128 && rooms[2] == 256 && rooms[3] == 512 && rooms[4] == 1024,
          "the room grew %lld times: %lld %lld %lld %lld %lld (expected 64 128 256 512 1024)", (long long)grew,
          (long long)rooms[0], (long long)rooms[1], (long long)rooms[2], (long long)rooms[3], (long long)rooms[4]);
    int bad = 0;
    for (int64_t i = 0; i < nb; i++)
        bad += v[i].frame != i || v[i].value != i * 0.5;
    CHECK(nb == 1000 && !bad, "%lld elements, %d changed", (long long)nb, bad);
    /* room left: nothing moves */
    row *same = v;
    int64_t r = room;
    CHECK(VKCU_ARRAY_GROW(v, 10, room, 64) == 0 && v == same && room == r, "growing with room left moved the block");
    CHECK(VKCU_ARRAY_GROW(v, room - 1, room, 64) == 0 && v == same && room == r,
          "the last free element (%lld of %lld) grew the block", (long long)(r - 1), (long long)r);
    free(v);
}

static void check_failures(void)
{
    char *v = NULL;
    int64_t room = 0;
    CHECK(VKCU_ARRAY_GROW(v, 0, room, 16) == 0 && v && room == 16, "first block: room %lld", (long long)room);
    memset(v, 'x', 16);
    char *keep = v;
    /* a room that would not fit in memory (2^62 elements of 8 bytes) */
    int64_t huge = INT64_C(1) << 61;
    CHECK(vkcu_array_grow(&v, huge, &huge, 8, 16) < 0 && v == keep && huge == INT64_C(1) << 61,
          "an impossible size was not refused, or changed the array");
    int64_t most = INT64_MAX - 1;
    CHECK(vkcu_array_grow(&v, most, &most, 1, 16) < 0 && v == keep, "a room that cannot double was not refused");
    CHECK(v[15] == 'x', "the block's bytes changed on a refusal");
    free(v);
    int *w = NULL;
    room = 0;
    CHECK(VKCU_ARRAY_GROW(w, 0, room, 0) == 0 && w && room == 1, "first 0: room %lld, expected 1", (long long)room);
    free(w);
}

/* The sorted-timestamp helpers: qsort order, and the count of values <= t
 * against a linear count, around every value and at both ends, with
 * repeats. */
static void check_sorted(void)
{
    int64_t v[] = { 40, -3, 7, 7, 1000, 0, 7, INT64_MIN, INT64_MAX, 12 };
    const int64_t n = (int64_t)(sizeof(v) / sizeof(v[0]));
    qsort(v, (size_t)n, sizeof(v[0]), vkcu_i64_cmp);
    for (int64_t i = 1; i < n; i++)
        CHECK(v[i - 1] <= v[i], "sorted: v[%lld]=%lld after %lld", (long long)i, (long long)v[i], (long long)v[i - 1]);
    for (int64_t i = 0; i < n; i++)
        for (int64_t d = -1; d <= 1; d++) {
            if ((d < 0 && v[i] == INT64_MIN) || (d > 0 && v[i] == INT64_MAX))
                continue;
            int64_t t = v[i] + d, want = 0;
            for (int64_t k = 0; k < n; k++)
                want += v[k] <= t;
            CHECK(vkcu_i64_count_le(v, n, t) == want, "count_le(%lld) = %lld, want %lld", (long long)t,
                     (long long)vkcu_i64_count_le(v, n, t), (long long)want);
        }
    CHECK(vkcu_i64_count_le(v, 0, 5) == 0, "an empty list counts 0");
}

int main(void)
{
    check_appends();
    check_failures();
    check_sorted();
    if (tu_failures)
        return 1;
    printf("array: 1000 appends in order, the room doubling from 64, impossible sizes refused; sorted timestamps counted by bisection as by hand\n");
    return 0;
}
