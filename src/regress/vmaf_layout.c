/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The picture layouts libvmaf takes (vmaf.h, vmaf_priv.h): which frames
 * can go to its CUDA path as they are in device memory, and the planar
 * layout host frames are scored in. Shared by the scorer's CPU path
 * (vmaf.c) and its GPU path (vmaf_cuda.c).
 */
#include <libavutil/pixdesc.h>

#include "vmaf.h"

int vkcu_vmaf_device_format_supported(enum AVPixelFormat f)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f);
    if (!d || (d->flags & (AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_PAL |
                           AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_BE | AV_PIX_FMT_FLAG_FLOAT)))
        return 0;
    const AVComponentDescriptor *y = &d->comp[0];
    if (y->depth != 8 && y->depth != 10 && y->depth != 12 && y->depth != 16)
        return 0;
    int bytes = y->depth > 8 ? 2 : 1;
    /* Luma alone in plane 0, one sample per element, in the low or the
     * high bits: planar, semi-planar and grey, not packed YUYV. */
    if (y->plane != 0 || y->offset != 0 || y->step != bytes || (y->shift != 0 && y->shift + y->depth != 8 * bytes))
        return 0;
    for (int i = 1; i < d->nb_components; i++)
        if (d->comp[i].plane == 0)
            return 0;
    return 1;
}

#ifdef HAVE_LIBVMAF
#include "vmaf_priv.h"

/* vmaf_priv.h. The layouts FFmpeg's libvmaf filter takes. Full-range
 * (yuvj) formats pass as they are: libvmaf scores samples, as the vmaf tool
 * reads a y4m file. */
int vkcu_vmaf_pick_layout(enum AVPixelFormat f, enum AVPixelFormat *to, enum VmafPixelFormat *vf, int *bpc,
                          int *direct)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f);
    if (!d || (d->flags & (AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_PAL)))
        return -1;
    int depth = d->comp[0].depth;
    *bpc = depth <= 8 ? 8 : depth <= 10 ? 10 : depth <= 12 ? 12 : 16;
    int rgb = !!(d->flags & AV_PIX_FMT_FLAG_RGB), cw = d->log2_chroma_w, ch = d->log2_chroma_h;
    int sub = rgb || d->nb_components < 3 ? (rgb ? 444 : 420)
            : cw == 0 && ch == 0 ? 444 : cw == 1 && ch == 0 ? 422 : cw == 0 ? 444 : 420;
    static const enum AVPixelFormat table[3][4] = {
        { AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV420P10LE, AV_PIX_FMT_YUV420P12LE, AV_PIX_FMT_YUV420P16LE },
        { AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUV422P10LE, AV_PIX_FMT_YUV422P12LE, AV_PIX_FMT_YUV422P16LE },
        { AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUV444P10LE, AV_PIX_FMT_YUV444P12LE, AV_PIX_FMT_YUV444P16LE },
    };
    int row = sub == 420 ? 0 : sub == 422 ? 1 : 2, col = *bpc == 8 ? 0 : *bpc == 10 ? 1 : *bpc == 12 ? 2 : 3;
    *to = table[row][col];
    *vf = sub == 420 ? VMAF_PIX_FMT_YUV420P : sub == 422 ? VMAF_PIX_FMT_YUV422P : VMAF_PIX_FMT_YUV444P;
    /* Planar YUV of the same layout (yuvj, or with an alpha plane libvmaf ignores) needs no conversion. */
    const AVPixFmtDescriptor *t = av_pix_fmt_desc_get(*to);
    *direct = !rgb && d->nb_components >= 3 && !(d->flags & AV_PIX_FMT_FLAG_BE) && (d->flags & AV_PIX_FMT_FLAG_PLANAR) &&
              cw == t->log2_chroma_w && ch == t->log2_chroma_h && depth == *bpc;
    for (int i = 0; i < 3 && *direct; i++)
        *direct = d->comp[i].plane == i && d->comp[i].shift == 0 && d->comp[i].offset == 0 &&
                  d->comp[i].step == (*bpc > 8 ? 2 : 1) && d->comp[i].depth == depth;
    return 0;
}
#endif
