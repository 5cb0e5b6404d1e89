/* Picture formats: reading a frame's colour description and writing it back. */
#include <string.h>
#include <libavutil/frame.h>

#include "op.h"

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
