/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The monotonic clock (clock.h). */
#include <time.h>

#include "clock.h"

double vkcu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
