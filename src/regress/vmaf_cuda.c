/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libvmaf's CUDA backend in vkcu's CUDA context (vmaf.h, vmaf_priv.h):
 * the model's features (integer VIF, ADM and motion, luma only) run on the
 * GPU, on pictures libvmaf allocated there.
 *
 * The context. vkcu's CUDA work runs in the CUDA runtime's primary context
 * of its device; libvmaf takes a CUcontext (vmaf_cuda_state_init) and
 * reaches the driver through libcuda loaded at run time (ffnvcodec's
 * dynlink loader), as the CUDA runtime does. So the driver API is reached
 * without linking libcuda (the CI machines that build and test vkcu have
 * no driver): cuDeviceGet and cuDevicePrimaryCtxRetain/Release come from
 * cudaGetDriverEntryPointByVersion, and the retained reference keeps the
 * primary context alive while libvmaf works in it.
 *
 * Device pairs (vkcu_vmaf_add_device). libvmaf's ring of 4 preallocated
 * device pictures (vmaf_cuda_preallocate_pictures, DEVICE) receives each
 * frame's luma plane, the only one its features read, by a device to
 * device copy (or, for P010/P012, the shift of kernels/vmaf_luma.cu) on the
 * caller's stream; an event then makes the legacy default stream wait for
 * the copies. libvmaf 3.2.0 creates each picture's stream blocking
 * (CU_STREAM_DEFAULT, cuda/picture_cuda.c) and starts a frame's kernels
 * there, so they wait for the legacy stream's earlier work: the copies.
 * FFmpeg's libvmaf_cuda filter relies on the same ordering (its cuMemcpy2D
 * is on the legacy stream). Fetching a picture waits (on the host) until
 * libvmaf is done with that slot's previous frame, so a slot is never
 * overwritten while read. Inside libvmaf, the VIF and motion extractors
 * zeroed their sums on their own non-blocking stream with nothing ordering
 * the kernels that add into them (on the picture's stream) after it: the
 * build patches that (tools/libvmaf-cuda-reset-order.patch).
 *
 * libvmaf aborts the process (an assert in its CHECK_CUDA) when one of its
 * own CUDA calls fails. vkcu_vmaf_cuda_open checks what can be checked
 * first: a driver and the device, the context, a compute capability libvmaf
 * has code for (7.5 and newer: sm_75, 80, 90, 100, 120 and PTX of 120 in
 * its meson.build for CUDA 13), and libvmaf's own set-up.
 */
#if defined(HAVE_LIBVMAF) && defined(HAVE_LIBVMAF_CUDA)

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <libavutil/error.h>
#include <libavutil/pixdesc.h>
#include <libvmaf/libvmaf_cuda.h>

#include "core/vkcu.h"
#include "kernels/vmaf_luma.h"
#include "util/log.h"
#include "vmaf_priv.h"

/* The compute capability libvmaf's fatbins start at (its meson.build). */
#define VMAF_CUDA_MIN_CC 75

typedef CUresult (*device_get_fn)(CUdevice *device, int ordinal);
typedef CUresult (*primary_retain_fn)(CUcontext *ctx, CUdevice device);
typedef CUresult (*primary_release_fn)(CUdevice device);

struct vkcu_vmaf_cuda {
    int device;                 /* CUDA runtime ordinal */
    CUdevice cu_device;
    CUcontext ctx;              /* the primary context, retained */
    primary_release_fn release;
    VmafCudaState *state;       /* libvmaf's (malloc'd by vmaf_cuda_state_init) */
    int imported;               /* given to a VmafContext, whose vmaf_close destroys its stream */
    cudaEvent_t copied;         /* recorded after a pair's copies on the caller's stream */
    char name[256];
};

/* A driver function through the runtime, for the driver API of CUDA 12.0
 * (what the function's signature above is). */
static int driver_fn(const char *name, void **fn)
{
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    *fn = NULL;
    return cudaGetDriverEntryPointByVersion(name, fn, 12000, cudaEnableDefault, &q) == cudaSuccess &&
                   q == cudaDriverEntryPointSuccess && *fn
               ? 0
               : -1;
}

int vkcu_vmaf_cuda_open(vkcu_vmaf_cuda **out, int device, char *why, size_t whylen)
{
    *out = NULL;
    int n = 0, old = -1;
    cudaError_t ce = cudaGetDeviceCount(&n);
    if (ce != cudaSuccess || n <= 0) {
        snprintf(why, whylen, "no usable CUDA device (cudaGetDeviceCount: %s)", ce != cudaSuccess ? cudaGetErrorString(ce) : "0 devices");
        return -1;
    }
    if (device < 0 || device >= n) {
        snprintf(why, whylen, "there is no CUDA device %d (%d device%s)", device, n, n == 1 ? "" : "s");
        return -1;
    }
    struct cudaDeviceProp prop;
    if ((ce = cudaGetDeviceProperties(&prop, device)) != cudaSuccess) {
        snprintf(why, whylen, "CUDA device %d: %s", device, cudaGetErrorString(ce));
        return -1;
    }
    if (prop.major * 10 + prop.minor < VMAF_CUDA_MIN_CC) {
        snprintf(why, whylen, "CUDA device %d (%s) has compute capability %d.%d, and libvmaf's CUDA code needs %d.%d or "
                 "newer", device, prop.name, prop.major, prop.minor, VMAF_CUDA_MIN_CC / 10, VMAF_CUDA_MIN_CC % 10);
        return -1;
    }
    vkcu_vmaf_cuda *c = calloc(1, sizeof(*c));
    if (!c) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    c->device = device;
    snprintf(c->name, sizeof(c->name), "%s", prop.name);
    cudaGetDevice(&old);
    device_get_fn device_get;
    primary_retain_fn retain;
    if (driver_fn("cuDeviceGet", (void **)&device_get) < 0 || driver_fn("cuDevicePrimaryCtxRetain", (void **)&retain) < 0 ||
        driver_fn("cuDevicePrimaryCtxRelease", (void **)&c->release) < 0) {
        snprintf(why, whylen, "the CUDA driver does not give cuDeviceGet/cuDevicePrimaryCtxRetain/Release");
        goto fail;
    }
    CUresult cr;
    if ((cr = device_get(&c->cu_device, device)) != CUDA_SUCCESS || (cr = retain(&c->ctx, c->cu_device)) != CUDA_SUCCESS) {
        c->ctx = NULL;
        snprintf(why, whylen, "cannot retain the CUDA context of device %d (CUresult %d)", device, (int)cr);
        goto fail;
    }
    if ((ce = cudaSetDevice(device)) != cudaSuccess ||
        (ce = cudaEventCreateWithFlags(&c->copied, cudaEventDisableTiming)) != cudaSuccess) {
        c->copied = NULL;
        snprintf(why, whylen, "CUDA device %d: %s", device, cudaGetErrorString(ce));
        goto fail;
    }
    VmafCudaConfiguration cfg = { .cu_ctx = c->ctx };
    if (vmaf_cuda_state_init(&c->state, cfg) < 0) {
        /* Its failures before a stream exists: libcuda.so.1's functions not
         * loaded (a driver older than libvmaf's needs) or cuInit. */
        snprintf(why, whylen, "libvmaf could not start CUDA on device %d (loading libcuda.so.1's functions or cuInit "
                 "failed)", device);
        goto fail;
    }
    if (old >= 0)
        cudaSetDevice(old);
    *out = c;
    return 0;
fail:
    if (old >= 0)
        cudaSetDevice(old);
    vkcu_vmaf_cuda_close(&c);
    return -1;
}

void vkcu_vmaf_cuda_import(vkcu_vmaf_cuda *c, VmafContext *ctx)
{
    /* Copies the state; it only checks its arguments. */
    vmaf_cuda_import_state(ctx, c->state);
    c->imported = 1;
}

void vkcu_vmaf_cuda_close(vkcu_vmaf_cuda **pc)
{
    vkcu_vmaf_cuda *c = *pc;
    if (!c)
        return;
    if (c->copied)
        cudaEventDestroy(c->copied);
    /* vmaf_close released the stream of the VmafContext's copy of the state,
     * which is this one's; a state never imported (vmaf_init failed) keeps
     * its stream until the context goes. Its table of driver functions is
     * libvmaf's and is not freed by any libvmaf call: a few hundred bytes
     * per scorer. */
    free(c->state);
    if (c->ctx)
        c->release(c->cu_device);
    free(c);
    *pc = NULL;
}

const char *vkcu_vmaf_cuda_device_name(const vkcu_vmaf_cuda *c)
{
    return c->name;
}

/* The luma plane of f into libvmaf's device picture pic, on stream. */
static cudaError_t copy_luma(const vkcu_vmaf_device_frame *f, const VmafPicture *pic, cudaStream_t stream)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    int shift = d->comp[0].shift;
    if (shift)
        return (cudaError_t)vkcu_cuda_luma_to_lsb(f->data[0], f->pitch[0], pic->data[0], (size_t)pic->stride[0], f->width,
                                                  f->height, shift, stream);
    size_t row = (size_t)f->width * (d->comp[0].depth > 8 ? 2 : 1);
    return cudaMemcpy2DAsync(pic->data[0], (size_t)pic->stride[0], f->data[0], f->pitch[0], row, (size_t)f->height,
                             cudaMemcpyDeviceToDevice, stream);
}

int vkcu_vmaf_add_device(vkcu_vmaf *v, const vkcu_vmaf_device_frame *ref, const vkcu_vmaf_device_frame *dist,
                         void *stream_ptr, char *err, size_t errlen)
{
    vkcu_vmaf_cuda *c = v->cuda;
    if (!c) {
        snprintf(err, errlen, "%s: this scorer runs on the CPU (%s): give it host frames", VKCU_SETTING("vmaf"), v->engine);
        return VKCU_ERR_USAGE;
    }
    if (v->pairs == VMAF_PAIRS_HOST) {
        snprintf(err, errlen, "%s: pair %" PRId64 " is in device memory and earlier pairs were host frames: one scorer "
                 "takes one kind", VKCU_SETTING("vmaf"), v->n);
        return VKCU_ERR_USAGE;
    }
    if (!vkcu_vmaf_device_format_supported(ref->format)) {
        snprintf(err, errlen, "%s: libvmaf's CUDA path cannot take %s frames in device memory (download them)",
                 VKCU_SETTING("vmaf"), av_get_pix_fmt_name(ref->format));
        return VKCU_ERR_USAGE;
    }
    if (v->n == 0) {
        enum AVPixelFormat planar;
        int direct;
        if (vkcu_vmaf_pick_layout(ref->format, &planar, &v->vfmt, &v->bpc, &direct) < 0) {
            snprintf(err, errlen, "%s: libvmaf cannot score %s frames", VKCU_SETTING("vmaf"), av_get_pix_fmt_name(ref->format));
            return VKCU_ERR_USAGE;
        }
        v->w = ref->width;
        v->h = ref->height;
        v->in_fmt = v->fmt = ref->format;
        VmafCudaPictureConfiguration pc = {
            .pic_params = { .w = (unsigned)v->w, .h = (unsigned)v->h, .bpc = (unsigned)v->bpc, .pix_fmt = v->vfmt },
            .pic_prealloc_method = VMAF_CUDA_PICTURE_PREALLOCATION_METHOD_DEVICE,
        };
        if (vmaf_cuda_preallocate_pictures(v->ctx, pc) < 0) {
            snprintf(err, errlen, "%s: libvmaf cannot allocate its %dx%d pictures on CUDA device %d", VKCU_SETTING("vmaf"),
                     v->w, v->h, c->device);
            return AVERROR(ENOMEM);
        }
        v->pairs = VMAF_PAIRS_DEVICE;
    }
    if (ref->width != v->w || ref->height != v->h || ref->format != v->in_fmt || dist->width != v->w ||
        dist->height != v->h || dist->format != v->in_fmt) {
        snprintf(err, errlen, "%s: pair %" PRId64 " is %dx%d %s; earlier pairs were %dx%d %s, and libvmaf scores one "
                 "picture format per run", VKCU_SETTING("vmaf"), v->n, ref->width, ref->height,
                 av_get_pix_fmt_name(ref->format), v->w, v->h, av_get_pix_fmt_name(v->in_fmt));
        return VKCU_ERR_INPUT;
    }
    if (!ref->data[0] || !dist->data[0]) {
        snprintf(err, errlen, "%s: pair %" PRId64 " has no luma plane", VKCU_SETTING("vmaf"), v->n);
        return VKCU_ERR_USAGE;
    }
    cudaStream_t stream = (cudaStream_t)stream_ptr;
    VmafPicture pr = { 0 }, pd = { 0 };
    int old = -1, have_ref = 0, have_dist = 0;
    cudaError_t ce = cudaSuccess;
    cudaGetDevice(&old);
    if (old != c->device)
        cudaSetDevice(c->device);
    /* Each fetch waits until libvmaf is done with the slot's previous frame. */
    have_ref = vmaf_cuda_fetch_preallocated_picture(v->ctx, &pr) >= 0;
    have_dist = have_ref && vmaf_cuda_fetch_preallocated_picture(v->ctx, &pd) >= 0;
    if (have_dist && (ce = copy_luma(ref, &pr, stream)) == cudaSuccess && (ce = copy_luma(dist, &pd, stream)) == cudaSuccess &&
        (ce = cudaEventRecord(c->copied, stream)) == cudaSuccess)
        ce = cudaStreamWaitEvent(cudaStreamLegacy, c->copied, 0);
    if (old >= 0 && old != c->device)
        cudaSetDevice(old);
    if (!have_dist || ce != cudaSuccess) {
        if (!have_dist)
            snprintf(err, errlen, "%s: libvmaf gave no device picture for pair %" PRId64, VKCU_SETTING("vmaf"), v->n);
        else
            snprintf(err, errlen, "%s: copying pair %" PRId64 " to libvmaf on CUDA device %d: %s", VKCU_SETTING("vmaf"), v->n,
                     c->device, cudaGetErrorString(ce));
        if (have_ref)
            vmaf_picture_unref(&pr);
        if (have_dist)
            vmaf_picture_unref(&pd);
        return have_dist ? VKCU_ERR_DEVICE : AVERROR(ENOMEM);
    }
    /* libvmaf owns both pictures' references from here on. */
    if (vmaf_read_pictures(v->ctx, &pr, &pd, (unsigned)v->n) < 0) {
        snprintf(err, errlen, "%s: libvmaf failed on pair %" PRId64 " (%dx%d %s, on CUDA device %d)", VKCU_SETTING("vmaf"),
                 v->n, v->w, v->h, av_get_pix_fmt_name(v->in_fmt), c->device);
        return AVERROR(EINVAL);
    }
    v->n++;
    return 0;
}

#endif
