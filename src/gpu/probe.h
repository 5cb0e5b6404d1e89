/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the machine offers the GPU backend, inside the library: the summary
 * type and the public calls are include/vkcu/probe.h's. */
#ifndef VKCU_GPU_PROBE_H
#define VKCU_GPU_PROBE_H

#include <stdio.h>

#include <vkcu/probe.h>

/* The full report behind vkcu_probe() to out; VKCU_ERR_DEVICE when no GPU
 * pair matched (the report is still written). */
int vkcu_probe_write(FILE *out);

#endif
