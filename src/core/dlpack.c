/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Frames as DLPack tensors (vkcu_frame_dlpack, include/vkcu/reader.h), so
 * that PyTorch, CuPy, NumPy and any DLPack consumer take a reader's frames
 * without a copy.
 *
 * The structs below are DLPack's ABI (dlpack.h, https://dmlc.github.io/dlpack/),
 * written out here because Debian has no dlpack headers: DLManagedTensor
 * (the unversioned struct of DLPack 0.x, which NumPy before 2.1 reads) and
 * DLManagedTensorVersioned (DLPack 1.x, which PyTorch, CuPy and NumPy 2 ask
 * for with max_version). Their layout is fixed by the specification; the
 * unit test reads the fields back at the offsets dlpack.h gives them.
 *
 * The tensor holds a reference to the frame; the deleter, a C function (no
 * Python in it: a consumer may call it on any thread, with or without the
 * interpreter's lock), first orders the CUDA buffer's reuse after the work
 * the consumer queued on its stream, then drops the reference.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/pixdesc.h>

#include "gpu/gpu.h"
#include "reader_priv.h"

enum { DL_CPU = 1, DL_CUDA = 2 };           /* DLDeviceType: kDLCPU, kDLCUDA */
enum { DL_UINT = 1, DL_FLOAT = 2 };         /* DLDataTypeCode: kDLUInt, kDLFloat */

typedef struct dl_device {
    int32_t device_type;
    int32_t device_id;
} dl_device;

typedef struct dl_dtype {
    uint8_t code, bits;
    uint16_t lanes;
} dl_dtype;

typedef struct dl_tensor {
    void *data;
    dl_device device;
    int32_t ndim;
    dl_dtype dtype;
    int64_t *shape;
    int64_t *strides;       /* in elements */
    uint64_t byte_offset;
} dl_tensor;

typedef struct dl_managed {
    dl_tensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct dl_managed *self);
} dl_managed;

typedef struct dl_version {
    uint32_t major, minor;
} dl_version;

typedef struct dl_managed_versioned {
    dl_version version;
    void *manager_ctx;
    void (*deleter)(struct dl_managed_versioned *self);
    uint64_t flags;
    dl_tensor dl_tensor;
} dl_managed_versioned;

/* One allocation per tensor; the managed struct first, so that the pointer
 * handed out is the export's. */
typedef struct dl_export {
    union {
        dl_managed plain;
        dl_managed_versioned versioned;
    } m;
    int64_t shape[3], strides[3];
    vkcu_frame *frame;
    int64_t stream;
} dl_export;

_Static_assert(sizeof(dl_tensor) == 48, "DLTensor is 48 bytes on LP64");
_Static_assert(sizeof(dl_managed) == 64, "DLManagedTensor is 64 bytes on LP64");
_Static_assert(sizeof(dl_managed_versioned) == 80, "DLManagedTensorVersioned is 80 bytes on LP64");
_Static_assert(offsetof(dl_export, m) == 0, "the managed struct starts the export");

static void release(dl_export *e)
{
    if (e->frame->memory == VKCU_MEMORY_CUDA)
        vkcu_frame_cuda_release_after(e->frame->priv->av, e->stream);
    vkcu_frame_unref(&e->frame);
    free(e);
}

static void delete_plain(dl_managed *m)
{
    if (m)
        release((dl_export *)m->manager_ctx);
}

static void delete_versioned(dl_managed_versioned *m)
{
    if (m)
        release((dl_export *)m->manager_ctx);
}

static int refuse(char *err, size_t errlen, const char *why, const vkcu_frame *f)
{
    if (err && errlen)
        snprintf(err, errlen, "no DLPack tensor: %s (%s frame of %d planes)", why, f->format, f->nb_planes);
    return AVERROR(EINVAL);
}

int vkcu_frame_dlpack(vkcu_frame *f, int plane, int versioned, int64_t stream, void **tensor, char *err,
                      size_t errlen)
{
    if (!tensor)
        return AVERROR(EINVAL);
    *tensor = NULL;
    if (!f)
        return AVERROR(EINVAL);
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->priv->av->format);
    if (plane < -1 || plane >= f->nb_planes)
        return refuse(err, errlen, "no such plane", f);
    int bps = f->bytes_per_sample;
    if (plane == -1 && f->nb_planes == 1)
        plane = 0;
    dl_export *e = calloc(1, sizeof(*e));
    if (!e) {
        if (err && errlen)
            snprintf(err, errlen, "out of memory");
        return AVERROR(ENOMEM);
    }
    int ndim;
    uint8_t *data;
    if (plane >= 0) {
        data = f->data[plane];
        if (f->components > 1) {
            ndim = 3;
            e->shape[0] = f->rows[plane];
            e->shape[1] = f->row_bytes[plane] / (bps * f->components);
            e->shape[2] = f->components;
            e->strides[0] = f->linesize[plane] / bps;
            e->strides[1] = f->components;
            e->strides[2] = 1;
        } else {
            ndim = 2;
            e->shape[0] = f->rows[plane];
            e->shape[1] = f->row_bytes[plane] / bps;
            e->strides[0] = f->linesize[plane] / bps;
            e->strides[1] = 1;
        }
    } else {
        /* (planes, rows, samples): only where the planes are alike and evenly spaced. */
        ptrdiff_t step = f->data[1] - f->data[0];
        for (int p = 1; p < f->nb_planes; p++)
            if (f->rows[p] != f->rows[0] || f->row_bytes[p] != f->row_bytes[0] ||
                f->linesize[p] != f->linesize[0] || f->data[p] - f->data[p - 1] != step || step <= 0 || step % bps) {
                free(e);
                return refuse(err, errlen, "its planes differ in size (take them one by one)", f);
            }
        data = f->data[0];
        ndim = 3;
        e->shape[0] = f->nb_planes;
        e->shape[1] = f->rows[0];
        e->shape[2] = f->row_bytes[0] / bps;
        e->strides[0] = step / bps;
        e->strides[1] = f->linesize[0] / bps;
        e->strides[2] = 1;
    }
    if (f->linesize[plane >= 0 ? plane : 0] % bps) {
        free(e);
        return refuse(err, errlen, "its rows are not whole samples apart", f);
    }
    dl_tensor t = {
        .data = data,
        .device = { f->memory == VKCU_MEMORY_CUDA ? DL_CUDA : DL_CPU, f->memory == VKCU_MEMORY_CUDA ? f->device : 0 },
        .ndim = ndim,
        .dtype = { (d->flags & AV_PIX_FMT_FLAG_FLOAT) ? DL_FLOAT : DL_UINT, (uint8_t)(8 * bps), 1 },
        .shape = e->shape,
        .strides = e->strides,
        .byte_offset = 0,
    };
    e->frame = vkcu_frame_ref(f);
    e->stream = stream;
    if (versioned) {
        e->m.versioned.version = (dl_version){ 1, 0 };
        e->m.versioned.manager_ctx = e;
        e->m.versioned.deleter = delete_versioned;
        e->m.versioned.flags = 0;
        e->m.versioned.dl_tensor = t;
    } else {
        e->m.plain.dl_tensor = t;
        e->m.plain.manager_ctx = e;
        e->m.plain.deleter = delete_plain;
    }
    *tensor = e;
    return 0;
}
