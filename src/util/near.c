/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * "Did you mean" for the library's messages: the nearest word of a
 * vocabulary by edit distance (util/near.h).
 */
#include <string.h>

#include "near.h"

int vkcu_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 99;
    int d[64][64];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

const char *vkcu_nearest_word(const char *typed, const char *const *words, int n)
{
    const char *best = NULL;
    int best_d = 3;
    size_t len = strlen(typed);
    for (int i = 0; n < 0 ? words[i] != NULL : i < n; i++) {
        const char *w = words[i];
        size_t wl = strlen(w);
        int d = vkcu_edit_distance(typed, w);
        if (len >= 3 && len < wl && !strncmp(w, typed, len) && d > 1)
            d = 1; /* "scal" for scale, "superf" for superfast */
        if (d < best_d && (size_t)d * 2 < (len > wl ? len : wl)) {
            best = w;
            best_d = d;
        }
    }
    return best;
}
