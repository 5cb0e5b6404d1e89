/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu public API: what this build reads and writes. The video codecs it
 * decodes (with their decoders) and the containers it reads (demuxers);
 * its encoders (for video: the pixel formats each takes, and whether it
 * runs on a GPU), its containers (muxers), which encoders a container
 * takes, and the named presets and tunes of an encoder. The library's own checks read the same lists: a job
 * whose container cannot hold its encoder, or whose encoder preset is not
 * one of the encoder's, is refused before anything is opened (vkcu_run's
 * -EINVAL). None of these calls needs a context; every one is thread-safe.
 *
 *     vkcu_encoder_info e;
 *     for (int i = 0; vkcu_encoder_get(i, &e) == 0; i++)
 *         if (!strcmp(e.media, "video"))
 *             printf("%s %s%s\n", e.name, e.pix_fmts, e.gpu ? " (GPU)" : "");
 */
#ifndef VKCU_FORMATS_H
#define VKCU_FORMATS_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One encoder of this build. */
typedef struct vkcu_encoder_info {
    const char *name;        /* FFmpeg's encoder name, as vkcu_job.encoder takes it ("libx264"); static */
    const char *media;       /* "video", "audio" or "subtitle"; vkcu_job.encoder takes video encoders */
    const char *codec;       /* the format it writes, FFmpeg's codec name ("h264"); static */
    const char *description; /* one line ("libx264 H.264 / AVC / ..."); static */
    const char *gpu;         /* the GPU API it runs on ("vulkan"), from FFmpeg's description of the encoder
                              * (its hardware configurations); NULL: it runs on the CPU */
    char pix_fmts[512];      /* video: the pixel formats it takes, FFmpeg's names, space-separated ("yuv420p nv12
                              * ..."); "" when the encoder does not say (checked at the job's start), and for audio */
    uint64_t reserved[16];   /* zero (version.h: room to grow) */
} vkcu_encoder_info;

/**
 * Enumerates the encoders of this build (video, audio, subtitle), in
 * FFmpeg's order.
 *
 * @param index 0, 1, 2 ...
 * @param info  receives the encoder; the caller's struct.
 * @return 0; -ENOENT past the last one; -EINVAL when info is NULL.
 * @note Thread-safe.
 */
VKCU_API int vkcu_encoder_get(int index, vkcu_encoder_info *info);

/* One container (muxer) of this build. */
typedef struct vkcu_container_info {
    const char *name;        /* FFmpeg's muxer name, as vkcu_job.output_format takes it ("matroska"); static */
    const char *description; /* one line; static */
    const char *extensions;  /* the file extensions that pick it, comma-separated ("mkv"); "" when none; static */
    const char *encoder;     /* the video encoder vkcu_job.encoder "auto" picks for it ("libx264"); NULL when
                              * it holds no video, or not the video of that pick (name an encoder); static */
    uint64_t reserved[16];   /* zero (version.h: room to grow) */
} vkcu_container_info;

/**
 * Enumerates the containers (muxers) of this build, in FFmpeg's order.
 *
 * @param index 0, 1, 2 ...
 * @param info  receives the container; the caller's struct.
 * @return 0; -ENOENT past the last one; -EINVAL when info is NULL.
 * @note Thread-safe.
 */
VKCU_API int vkcu_container_get(int index, vkcu_container_info *info);

/**
 * Enumerates the containers (demuxers) this build reads, in FFmpeg's order.
 *
 * @param index 0, 1, 2 ...
 * @param info  receives the container (its encoder is NULL: it is read,
 *              not written); the caller's struct.
 * @return 0; -ENOENT past the last one; -EINVAL when info is NULL.
 * @note Thread-safe.
 */
VKCU_API int vkcu_demuxer_get(int index, vkcu_container_info *info);

/* One video codec this build decodes. */
typedef struct vkcu_decoder_info {
    const char *codec;       /* FFmpeg's codec name ("h264"); static */
    const char *description; /* its long name ("H.264 / AVC / MPEG-4 AVC / MPEG-4 part 10"); "" when FFmpeg gives
                              * none; static */
    int codec_id;            /* FFmpeg's enum AVCodecID (for vkcu_probe_gpu_decodes, probe.h) */
    char decoders[256];      /* its software decoders, FFmpeg's names, ", "-separated ("vp9, libvpx-vp9") */
    uint64_t reserved[16];   /* zero (version.h: room to grow) */
} vkcu_decoder_info;

/**
 * Enumerates the video codecs this build decodes in software, in the order
 * of FFmpeg's codec descriptors. (Which of them a GPU decodes too is
 * vkcu_probe_gpu_decodes's answer.) Decoders that run only on other
 * hardware (NVDEC's *_cuvid) are not vkcu's decode path and are left out.
 *
 * @param index 0, 1, 2 ...
 * @param info  receives the codec; the caller's struct.
 * @return 0; -ENOENT past the last one; -EINVAL when info is NULL.
 * @note Thread-safe.
 */
VKCU_API int vkcu_decoder_get(int index, vkcu_decoder_info *info);

/**
 * The container an output file name picks by its extension, as a job with
 * no output_format picks it.
 *
 * @param path a file name ("out.mkv"); only its extension is read.
 * @return FFmpeg's muxer name (a static string), or NULL when no container
 *         of this build has the extension (or path is NULL).
 * @note Thread-safe.
 */
VKCU_API const char *vkcu_container_of(const char *path);

/**
 * Whether a container holds the video an encoder writes.
 *
 * @param container a muxer name, as vkcu_container_info.name.
 * @param encoder   a video encoder name, as vkcu_encoder_info.name.
 * @return 1 when it does; 0 when it does not (a job with the two is
 *         refused); -1 when the container does not say (the muxer decides
 *         when the job starts); -EINVAL when either name is not in this
 *         build.
 * @note Thread-safe.
 */
VKCU_API int vkcu_container_takes(const char *container, const char *encoder);

/**
 * Enumerates the names an encoder's option takes, where the encoder has a
 * fixed list of them: its speed presets (vkcu_job.preset, "preset") and
 * tunings (the "tune" encoder option). A job whose preset or tune is not
 * in the list is refused before anything is opened.
 *
 * @param encoder a video encoder name ("libx264").
 * @param option  "preset" or "tune".
 * @param index   0, 1, 2 ...
 * @return the index-th name (a static string); NULL past the last, and
 *         when the encoder has no such option or no list of names for it
 *         (a number, free text).
 * @note Thread-safe.
 */
VKCU_API const char *vkcu_encoder_choice(const char *encoder, const char *option, int index);

#ifdef __cplusplus
}
#endif
#endif
