/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The encode sink's choices, made once and checked up front: the container
 * of an output name, the encoder "auto" picks, whether a container holds an
 * encoder's video, an encoder's named presets and tunes. The public side is
 * include/vkcu/formats.h; vkcu_check_job and the sink read the same calls.
 */
#ifndef VKCU_CORE_ENCODERS_H
#define VKCU_CORE_ENCODERS_H

#include <stddef.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>

#include <vkcu/job.h>

/* The container of an output: output_format by name (y4m and mkv as
 * aliases), else the name's extension. NULL when none of this build. */
const AVOutputFormat *vkcu_output_muxer(const char *path, const char *output_format);
/* The encoder "auto" picks for a container (`named`: chosen by name, not by
 * path's extension). Image outputs (image2: .png, .jpg, .tiff, f%03d.png)
 * get the encoder of the image's extension, as FFmpeg's av_guess_codec
 * picks it; where this build has no such encoder, the codec's name (the
 * checks then say so). */
const char *vkcu_default_encoder(const AVOutputFormat *ofmt, const char *path, int named);
/* 1 when ofmt writes images, one file per frame (image2, image2pipe). */
int vkcu_muxer_is_image(const AVOutputFormat *ofmt);
/* For an image output (others: 0), the `convert` operator that turns
 * frames of pixel format `pix_fmt` and range `range` into what its encoder
 * takes, as ffmpeg converts for it: the encoder's format closest to the
 * frames' (avcodec_find_best_pix_fmt_of_list among those convert writes:
 * rgb24 or rgba for PNG from YUV), in the range it takes (full for MJPEG).
 * 1 with "convert=format=rgb24" (or "convert=range=full") in buf; 0 when
 * the frames go as they are, or the encoder is unknown (its own check
 * says so). */
int vkcu_image_convert(const char *output, const char *output_format, const char *encoder,
                       enum AVPixelFormat pix_fmt, enum AVColorRange range, char *buf, size_t size);
/* 1: ofmt holds codec `id`; 0: it does not; -1: it does not say. FFmpeg's
 * answer, and vkcu's for the muxers FFmpeg leaves unsaid (y4m). */
int vkcu_muxer_takes(const AVOutputFormat *ofmt, enum AVCodecID id);
/* "rawvideo, wrapped_avframe": this build's video encoders ofmt holds. */
void vkcu_muxer_encoders(const AVOutputFormat *ofmt, char *buf, size_t size);
/* This build's video encoders, ", "-separated, and the one `typed` is a
 * typo of, or names without "lib" or by the library FFmpeg wraps ("x264",
 * "aom": libx264, libaom-av1); NULL when none. */
const char *vkcu_video_encoder_names(const char *typed, char *buf, size_t size);
/* Checks `value` of an encoder's option ("preset", "tune": x264's comma list
 * of tunes too) against the encoder's list of names, where it has one.
 * 0, or VKCU_ERR_USAGE with "encoder E has no preset 'V': did you mean ...;
 * its presets: ..." in err. */
int vkcu_encoder_check_choice(const AVCodec *codec, const char *option, const char *value, char *err, size_t errlen);
/* Whether encoder `codec` with options `opts` ("k=v:k=v", --encoder-opt:
 * its profile for libx264 and libx265, whose profiles hold fewer formats
 * than the encoder) takes frames of pf, before its library sees them. 0, or
 * VKCU_ERR_USAGE with one line in err: "encoder E[ with profile=P] takes
 * A, B, not X: add convert=format=A at the end of the chain[, or profile=Q]"
 * (the format of those convert writes closest to X). */
int vkcu_encoder_check_pix_fmt(const AVCodec *codec, const char *opts, enum AVPixelFormat pf, char *err,
                               size_t errlen);
/* The encode sink's checks that need no input: the encoder exists, the
 * container holds it, its preset and tune are its own. 0, or
 * VKCU_ERR_USAGE with the reason (naming job->output) in err. Jobs of other
 * sinks, and outputs whose container is not known yet, pass. */
int vkcu_encode_check(const vkcu_job *job, char *err, size_t errlen);

#endif
