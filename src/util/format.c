/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Picture formats: reading a frame's colour description and writing it back. */
#include <stdio.h>
#include <string.h>
#include <libavcodec/defs.h>
#include <libavutil/frame.h>
#include <libavutil/pixdesc.h>

#include "format.h"

void vkcu_frame_visible_size(const AVFrame *frame, int *width, int *height)
{
    *width = frame->width - (int)frame->crop_left;
    *height = frame->height - (int)frame->crop_top;
}

void vkcu_format_from_frame(vkcu_video_format *f, const AVFrame *frame, enum AVPixelFormat sw_fmt)
{
    memset(f, 0, sizeof(*f));
    f->pix_fmt = sw_fmt;
    vkcu_frame_visible_size(frame, &f->width, &f->height);
    f->matrix = frame->colorspace;
    f->range = frame->color_range;
    f->primaries = frame->color_primaries;
    f->transfer = frame->color_trc;
    f->chroma_loc = frame->chroma_location;
    f->sar = frame->sample_aspect_ratio;
    f->field_order = !(frame->flags & AV_FRAME_FLAG_INTERLACED)          ? AV_FIELD_PROGRESSIVE
                     : (frame->flags & AV_FRAME_FLAG_TOP_FIELD_FIRST) ? AV_FIELD_TT
                                                                      : AV_FIELD_BB;
    const AVFrameSideData *sd = av_frame_get_side_data(frame, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA);
    if (sd && sd->size >= sizeof(AVMasteringDisplayMetadata)) {
        f->has_mastering = 1;
        memcpy(&f->mastering, sd->data, sizeof(f->mastering));
    }
    sd = av_frame_get_side_data(frame, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL);
    if (sd && sd->size >= sizeof(AVContentLightMetadata)) {
        f->has_cll = 1;
        memcpy(&f->cll, sd->data, sizeof(f->cll));
    }
}

int vkcu_format_to_frame(const vkcu_video_format *f, AVFrame *frame)
{
    frame->colorspace = f->matrix;
    frame->color_range = f->range;
    frame->color_primaries = f->primaries;
    frame->color_trc = f->transfer;
    frame->chroma_location = f->chroma_loc;
    av_frame_remove_side_data(frame, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA);
    av_frame_remove_side_data(frame, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL);
    if (f->has_mastering) {
        AVFrameSideData *sd = av_frame_new_side_data(frame, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA,
                                                     sizeof(AVMasteringDisplayMetadata));
        if (!sd)
            return AVERROR(ENOMEM);
        memcpy(sd->data, &f->mastering, sizeof(f->mastering));
    }
    if (f->has_cll) {
        AVFrameSideData *sd = av_frame_new_side_data(frame, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL,
                                                     sizeof(AVContentLightMetadata));
        if (!sd)
            return AVERROR(ENOMEM);
        memcpy(sd->data, &f->cll, sizeof(f->cll));
    }
    return 0;
}

void vkcu_frame_plain_layout(AVFrame *frame)
{
    static const enum AVPixelFormat twins[][2] = {
        { AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUV420P }, { AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUV422P },
        { AV_PIX_FMT_YUVJ444P, AV_PIX_FMT_YUV444P }, { AV_PIX_FMT_YUVJ440P, AV_PIX_FMT_YUV440P },
        { AV_PIX_FMT_YUVJ411P, AV_PIX_FMT_YUV411P },
    };
    for (size_t i = 0; i < sizeof(twins) / sizeof(twins[0]); i++)
        if (frame->format == twins[i][0]) {
            frame->format = twins[i][1];
            frame->color_range = AVCOL_RANGE_JPEG;
            return;
        }
}

const char *vkcu_layout_unsupported(const AVPixFmtDescriptor *d)
{
    if (!d)
        return "unknown layout";
    if (d->flags & AV_PIX_FMT_FLAG_PAL)
        return "palette colours";
    if (d->flags & (AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_BAYER))
        return "samples not in whole bytes";
    if (d->flags & AV_PIX_FMT_FLAG_FLOAT)
        return "floating-point samples";
    if (d->flags & AV_PIX_FMT_FLAG_BE)
        return "big-endian samples";
    return NULL;
}

int vkcu_format_gpu_carries(enum AVPixelFormat fmt, char *why, size_t whylen)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    const char *name = d ? d->name : "unknown";
    const char *reason = NULL;
    int per_plane[4] = { 0 };
    if (d && (d->flags & AV_PIX_FMT_FLAG_HWACCEL))
        return 1; /* hardware frames: their software layout is checked */
    reason = vkcu_layout_unsupported(d);
    if (!reason && d->nb_components > 1 && !(d->flags & AV_PIX_FMT_FLAG_PLANAR))
        reason = "packed samples (one plane)";
    for (int c = 0; d && !reason && c < d->nb_components; c++) {
        const AVComponentDescriptor *cd = &d->comp[c];
        int bytes = cd->depth > 8 ? 2 : 1;
        if (cd->depth > 16 || cd->depth < 8)
            reason = "samples outside 8 to 16 bits";
        else if (++per_plane[cd->plane] > 2 || cd->step % bytes || cd->step / bytes > 2)
            reason = "more than two samples interleaved in a plane";
    }
    if (!reason)
        return 1;
    snprintf(why, whylen, "the GPU interop ring cannot carry %s frames (%s)", name, reason);
    return 0;
}

int vkcu_format_change(const vkcu_video_format *from, const vkcu_video_format *to)
{
    int change = 0;
    if (from->width != to->width || from->height != to->height)
        change |= VKCU_CHANGE_SIZE;
    if (from->pix_fmt != to->pix_fmt)
        change |= VKCU_CHANGE_LAYOUT;
    if (from->matrix != to->matrix || from->range != to->range || from->primaries != to->primaries ||
        from->transfer != to->transfer || from->chroma_loc != to->chroma_loc)
        change |= VKCU_CHANGE_COLOUR;
    return change;
}

const char *vkcu_format_describe(const vkcu_video_format *f, char *buf, size_t size)
{
    const char *name = av_get_pix_fmt_name(f->pix_fmt);
    int n = snprintf(buf, size, "%s %dx%d", name ? name : "unknown", f->width, f->height);
    if (n >= 0 && (size_t)n < size && (f->matrix != AVCOL_SPC_UNSPECIFIED || f->range != AVCOL_RANGE_UNSPECIFIED))
        snprintf(buf + n, size - (size_t)n, ", %s %s", av_color_space_name(f->matrix), av_color_range_name(f->range));
    return buf;
}
