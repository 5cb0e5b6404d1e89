/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The first fields of an FFV1 global header (version 2 and later: the
 * codec's extradata, RFC 9043 section 4.2), read without a decoder: the
 * version and the coder type. vkcu needs the coder type before it opens a
 * decoder: FFmpeg 8.1's Vulkan FFV1 decoder hangs on Golomb-Rice coded
 * streams on NVIDIA's driver (its own command line too), so such streams are
 * decoded in software (gpu/vk.c, vkcu_vk_compute_decode_ok).
 */
#ifndef VKCU_FFV1_HEADER_H
#define VKCU_FFV1_HEADER_H

#include <stddef.h>
#include <stdint.h>

enum {
    VKCU_FFV1_GOLOMB = 0,       /* Golomb-Rice coding */
    VKCU_FFV1_RANGE = 1,        /* range coding, the default state transition table */
    VKCU_FFV1_RANGE_CUSTOM = 2, /* range coding, a table given in the header */
};

/* Reads the version and coder type of an FFV1 global header. Returns 0, or
 * -1 when the bytes are not one (too short, a version outside 2..4, a
 * symbol that does not end). Pure and thread-safe. */
int vkcu_ffv1_header_read(const uint8_t *data, size_t size, int *version, int *coder);

#endif
