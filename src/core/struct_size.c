/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu_struct_size (include/vkcu/reader.h): the sizes of the public structs
 * in this build, for bindings that lay them out themselves (python/vkcu's
 * ctypes layer refuses a library whose structs differ from its own).
 */
#include <string.h>

#include <vkcu/vkcu.h>

size_t vkcu_struct_size(const char *name)
{
    static const struct {
        const char *name;
        size_t size;
    } sizes[] = {
#define S(t) { #t, sizeof(t) }
        S(vkcu_ffmpeg_info), S(vkcu_stream_info), S(vkcu_picture), S(vkcu_progress_info), S(vkcu_settings),
        S(vkcu_job), S(vkcu_job_result), S(vkcu_batch_file), S(vkcu_batch_progress), S(vkcu_batch_settings),
        S(vkcu_batch_result), S(vkcu_frame_metrics), S(vkcu_compare_job), S(vkcu_compare_result),
        S(vkcu_verify_job), S(vkcu_preset), S(vkcu_probe_info), S(vkcu_encoder_info), S(vkcu_container_info),
        S(vkcu_decoder_info), S(vkcu_reader_params), S(vkcu_reader_info), S(vkcu_frame), S(vkcu_reader_stats),
#undef S
    };
    for (size_t i = 0; name && i < sizeof(sizes) / sizeof(sizes[0]); i++)
        if (!strcmp(sizes[i].name, name))
            return sizes[i].size;
    return 0;
}
