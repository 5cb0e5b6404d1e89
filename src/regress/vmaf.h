/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * VMAF scores through libvmaf, with its default model (vmaf_v0.6.1).
 *
 * libvmaf is optional: Debian has no package of it, so it is built apart
 * (docs/regression.md, "VMAF") and the Makefile compiles this file with
 * HAVE_LIBVMAF only when pkg-config finds it. Without it every entry point
 * below still exists and fails with the one line vkcu_vmaf_missing writes,
 * so callers need no conditional code.
 *
 * A scorer runs on the CPU (libvmaf's integer features, on worker threads)
 * or, when libvmaf was built with its CUDA backend (HAVE_LIBVMAF_CUDA:
 * tools/deps.sh builds it where nvcc is) and the GPU can run it, on the GPU
 * in vkcu's own CUDA context (vmaf_cuda.c). Both take host frames
 * (vkcu_vmaf_add); a GPU scorer also takes frames already in device memory
 * (vkcu_vmaf_add_device), which never cross to the host.
 *
 * Thread-safety: a scorer is used by one thread at a time.
 */
#ifndef VKCU_VMAF_H
#define VKCU_VMAF_H

#include <stddef.h>
#include <stdint.h>
#include <libavutil/frame.h>
#include <libavutil/pixfmt.h>

#define VKCU_VMAF_MODEL "vmaf_v0.6.1"

/* 1 when libvmaf is built in, else 0. */
int vkcu_vmaf_available(void);
/* 1 when the libvmaf built in has its CUDA backend, else 0. */
int vkcu_vmaf_cuda_built(void);
/* vkcu_vmaf_describe() is public (vkcu/regress.h). */
/* The error for a build without libvmaf: `what` (an option or manifest key)
 * needs libvmaf, and how to build vkcu with it. */
void vkcu_vmaf_missing(const char *what, char *err, size_t errlen);

typedef struct vkcu_vmaf vkcu_vmaf;

/* Where a scorer runs. */
typedef struct vkcu_vmaf_params {
    int gpu;     /* 1: libvmaf's CUDA backend on CUDA device `device` when this build has it and that
                  * device can run it; otherwise (or 0) the CPU. vkcu_vmaf_engine says which, and why */
    int device;  /* CUDA ordinal, for gpu */
    int threads; /* CPU: 0, one libvmaf worker per CPU this process may run on (sched_getaffinity);
                  * 1, none (every feature on the calling thread); N, N workers. Scores do not
                  * depend on it: libvmaf gives each frame's features to one worker */
} vkcu_vmaf_params;

#define VKCU_VMAF_PARAMS_DEFAULT ((vkcu_vmaf_params){ .gpu = 0, .device = 0, .threads = 0 })

/* Loads the model and sets up the scorer as p says (NULL: the defaults,
 * the CPU on every core). A GPU that cannot run libvmaf's CUDA backend is
 * not an error: the scorer runs on the CPU and vkcu_vmaf_engine says why.
 * VKCU_ERR_USAGE (vkcu_vmaf_missing's text) without libvmaf; another error
 * when libvmaf cannot start. */
int vkcu_vmaf_open(vkcu_vmaf **v, const vkcu_vmaf_params *p, char *err, size_t errlen);
/* One line saying where the scores come from: "libvmaf 3.2.0 on the GPU
 * (CUDA device 0, NVIDIA H200)", "libvmaf 3.2.0 on the CPU, 16 threads",
 * or, when the GPU was asked for and cannot be used, "libvmaf 3.2.0 on the
 * CPU, 16 threads (libvmaf's CUDA backend is not available: REASON)".
 * Valid while v is open. */
const char *vkcu_vmaf_engine(const vkcu_vmaf *v);
/* 1 when v scores on the GPU, else 0. */
int vkcu_vmaf_on_gpu(const vkcu_vmaf *v);

/* Scores one more pair: ref and dist have the same size and pixel format.
 * Planar YUV 4:2:0, 4:2:2 and 4:4:4 of 8, 10, 12 or 16 bits go to libvmaf as
 * they are; other layouts are converted first, as FFmpeg's libvmaf filter
 * has its input converted (see docs/regression.md). On a GPU scorer libvmaf
 * uploads the luma plane, the only one its features read. */
int vkcu_vmaf_add(vkcu_vmaf *v, const AVFrame *ref, const AVFrame *dist, char *err, size_t errlen);

/* A picture in CUDA device memory on the scorer's device: the planes of a
 * software pixel format (FFmpeg's plane order for `format`), as the GPU
 * decodes into (NV12, P010) or as kernels write them (planar YUV). */
typedef struct vkcu_vmaf_device_frame {
    const void *data[4]; /* device pointers; only the luma plane (data[0]) is read, so the others may be NULL */
    size_t pitch[4];     /* bytes from one row to the next */
    int width, height;
    enum AVPixelFormat format;
} vkcu_vmaf_device_frame;

/* 1 when vkcu_vmaf_add_device takes frames of format f: YUV (planar or
 * semi-planar, any subsampling) and grey whose luma is 8, 10, 12 or 16 bits
 * in one sample per byte or per little-endian 16-bit word, least or most
 * significant bits (P010, P012: shifted down on the GPU, which is what the
 * CPU path's conversion to planar does). Else 0: download such frames and
 * use vkcu_vmaf_add. */
int vkcu_vmaf_device_format_supported(enum AVPixelFormat f);
/* Scores one more pair held in device memory, on a GPU scorer
 * (vkcu_vmaf_on_gpu; VKCU_ERR_USAGE on a CPU one). The luma planes are
 * copied device to device (and shifted for P010/P012) into libvmaf's own
 * preallocated device pictures with work enqueued on `stream` (a
 * cudaStream_t of the scorer's device; NULL: the legacy default stream),
 * after whatever the caller enqueued there before, so the frames may come
 * straight from a kernel or decoder on that stream. The source planes must
 * stay valid until work enqueued on `stream` after this call runs (or the
 * stream is synchronised): recycle them through the stream. libvmaf's
 * kernels wait for the copies on the GPU; the call itself waits only when
 * libvmaf's ring of device pictures (4) is full, i.e. for libvmaf. All
 * pairs of a scorer are device pairs or all host pairs, of one size and
 * format. Frames of a format vkcu_vmaf_device_format_supported refuses:
 * VKCU_ERR_USAGE. */
int vkcu_vmaf_add_device(vkcu_vmaf *v, const vkcu_vmaf_device_frame *ref, const vkcu_vmaf_device_frame *dist,
                         void *stream, char *err, size_t errlen);

/* After the last pair: the score of pair i in scores[i] (an array of *n the
 * caller frees; NULL when no pair was added) and libvmaf's pooled mean. */
int vkcu_vmaf_finish(vkcu_vmaf *v, double **scores, int64_t *n, double *mean, char *err, size_t errlen);
void vkcu_vmaf_close(vkcu_vmaf **v);

#endif
