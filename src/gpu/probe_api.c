/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The public probe calls (include/vkcu/probe.h) that probe.c's text and
 * CUDA's device count do not give directly: the report line by line to a
 * callback, so that the library writes to no stream of its own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>

#include <libavutil/error.h>

#include "probe.h"

int vkcu_probe(vkcu_line_callback cb, void *opaque)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        return AVERROR(ENOMEM);
    int ret = vkcu_probe_write(f);
    if (fclose(f) != 0 || !text) {
        free(text);
        return AVERROR(ENOMEM);
    }
    for (char *line = text, *end; *line; line = end + 1) {
        end = strchr(line, '\n');
        if (!end) {
            cb(opaque, line);
            break;
        }
        *end = 0;
        cb(opaque, line);
    }
    free(text);
    return ret;
}

int vkcu_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess)
        n = 0; /* no driver or no GPU: nothing to spread over */
    return n;
}
