/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one clock of the library's own timings (job and stage times, fps,
 * progress intervals, watchdogs): monotonic, so that a change of the
 * wall clock never makes a time negative.
 */
#ifndef VKCU_UTIL_CLOCK_H
#define VKCU_UTIL_CLOCK_H

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds on the monotonic clock (CLOCK_MONOTONIC). Thread-safe. */
double vkcu_now(void);

#ifdef __cplusplus
}
#endif

#endif
