/*
 * GPU session: the Vulkan device matched to the CUDA device by UUID, the
 * interop ring, and the per-frame handoff (DESIGN.md "The interop protocol").
 *
 * Per frame, on the Vulkan side (one submission, no CPU wait):
 *   wait the decoded frame's timeline at sem_value and, from the slot's
 *   second use on, the slot's `done`; barrier the decoded image to
 *   TRANSFER_SRC and the slot's interop images to TRANSFER_DST; copy each
 *   plane; barrier the interop images to GENERAL, released to
 *   VK_QUEUE_FAMILY_EXTERNAL; signal the frame's timeline at sem_value + 1
 *   (the decoder may reuse its image at once) and the slot's `ready`.
 * On the CUDA stream: wait `ready`, run the chain reading the interop arrays
 * through texture objects, write the planar host layout into the slot's
 * device staging buffer, signal `done`, copy the staging buffer into a pinned
 * host buffer, record an event. pop() waits only on that event.
 * When the hash sink takes BLAKE3 digests (vkcu_hash_on_gpu), the staging
 * buffer holds the frame's hashed byte string (rows packed), the digest is
 * computed there, and only its 32 bytes are copied to the host.
 *
 * Everything imported into CUDA is imported once per slot, at start-up.
 * A successful import hands the FD to CUDA; we close an FD only when its
 * import failed. Teardown frees CUDA's side first, then Vulkan's.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <cuda_runtime_api.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>

#include "blake3.h"
#include "gpu/device.h"
#include "gpu/gpu.h"
#include "gpu/kernels.h"
#include "gpu/interop_vk.h"
#include "gpu/vkfn.h"
#include "log.h"
#include "stage.h"

#define MAX_SLOTS 16
#define MAX_PENDING 64

typedef struct interop_plane {
    VkImage image;
    VkDeviceMemory memory;
    VkDeviceSize size;
    cudaExternalMemory_t ext;
    cudaMipmappedArray_t mipmap;
    cudaArray_t array;
    cudaTextureObject_t tex;
    cudaSurfaceObject_t surf;
    int width, height;
} interop_plane;

typedef struct frame_slot {
    interop_plane plane[4];
    int nb_planes;
    VkSemaphore ready, done;            /* binary: Vulkan -> CUDA, CUDA -> Vulkan */
    cudaExternalSemaphore_t cu_ready, cu_done;
    VkCommandBuffer cmd;
    VkFence fence;
    int submitted;                      /* fence pending */
    int used;                           /* a CUDA `done` signal is pending */
    uint8_t *staging;                   /* device: planar host layout */
} frame_slot;

typedef struct pending_frame {
    AVBufferRef *host;                  /* pinned buffer from the pool */
    cudaEvent_t ev_start, ev_ops, ev_end;
    int slot;                           /* -1: flushed from the chain */
    int64_t pts, duration;
    int vk_timed;
} pending_frame;

struct vkcu_gpu {
    const vkcu_job_params *p;
    int cuda_device;
    int lane;                           /* decode queue lane (gpu/device.c) */
    vkcu_vkdev_times setup;             /* how the shared device was made */
    double setup_open_ms;               /* vkcu_gpu_open on the job's thread */
    int bound, bind_ret;                /* gpu_bind ran; its result */
    char bind_err[512];
    cudaStream_t stream;
    AVBufferRef *vk_device;
    AVHWDeviceContext *dev;
    AVVulkanDeviceContext *hwctx;
    vkcu_vkfn vk;
    uint32_t qf, queue_index;
    VkQueue queue;
    VkCommandPool pool;
    VkQueryPool timestamps;
    float ts_period;
    int ts_valid;
    /* ring */
    int nb_slots;
    frame_slot slot[MAX_SLOTS];
    int ring_ready;
    enum AVPixelFormat ring_fmt;        /* sw format of the frames in the ring */
    int ring_w, ring_h;
    int64_t frame_no;
    /* timeline variant */
    VkSemaphore timeline;
    cudaExternalSemaphore_t cu_timeline;
    uint64_t tl_frames;                 /* frames handed over on the timeline */
    /* host side */
    enum AVPixelFormat host_fmt;
    int host_linesize[4];
    size_t host_offset[4], host_size;
    AVBufferPool *host_pool;
    /* Frames hashed on the GPU (vkcu_hash_on_gpu): digests instead of frames. */
    int digest;
    void *b3_scratch;                   /* device: the tree's chaining values */
    uint8_t *b3_digest;                 /* device: the last frame's digest */
    uint8_t *digests;                   /* pinned: one digest per pending frame */
    vkcu_chain *chain;
    pending_frame pending[MAX_PENDING];
    int64_t pend_head, pend_tail;       /* pop side (caller), push side (handoff thread) */
    /* The handoff thread: Vulkan submissions and CUDA launches run beside
     * the decoder's thread, which only queues decoded frames. */
    pthread_t worker;
    int worker_running, worker_busy, quit, sync_ready;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct { AVFrame *frame; int flush; } inq[MAX_SLOTS + 2];
    int64_t inq_head, inq_tail;
    int werr;
    char werrmsg[512];
    cudaEvent_t events[MAX_PENDING][3];
    /* stats */
    int64_t imports, dtod, htod_bytes, dtoh_bytes;
    int max_in_flight;
    double ms_copy, ms_ops, ms_download;
};

#define CU_CHECK(call)                                                                    \
    do {                                                                                  \
        cudaError_t cu_err_ = (call);                                                     \
        if (cu_err_ != cudaSuccess) {                                                     \
            snprintf(err, errlen, "CUDA: %s failed: %s (%s:%d)", #call, cudaGetErrorString(cu_err_), \
                     __FILE__, __LINE__);                                                 \
            ret = VKCU_ERR_DEVICE;                                                        \
            goto fail;                                                                    \
        }                                                                                 \
    } while (0)

#define VK_CHECK(call)                                                                    \
    do {                                                                                  \
        VkResult vk_res_ = (call);                                                        \
        if (vk_res_ != VK_SUCCESS) {                                                      \
            snprintf(err, errlen, "Vulkan: %s failed: %s (%s:%d)", #call, vkcu_vk_result_str(vk_res_), \
                     __FILE__, __LINE__);                                                 \
            ret = VKCU_ERR_DEVICE;                                                        \
            goto fail;                                                                    \
        }                                                                                 \
    } while (0)

int vkcu_gpu_available(void)
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

enum AVPixelFormat vkcu_gpu_host_format(enum AVPixelFormat f)
{
    if (f == AV_PIX_FMT_NV12)
        return AV_PIX_FMT_YUV420P;
    if (f == AV_PIX_FMT_P010)
        return AV_PIX_FMT_YUV420P10LE;
    return f;
}

static int pick_queue(vkcu_gpu *g)
{
    /* Prefer a compute family (FFmpeg's own transfers use the transfer one). */
    int best = -1;
    for (int i = 0; i < g->hwctx->nb_qf; i++) {
        const AVVulkanDeviceQueueFamily *q = &g->hwctx->qf[i];
        if ((q->flags & VK_QUEUE_COMPUTE_BIT) && best < 0)
            best = i;
    }
    for (int i = 0; best < 0 && i < g->hwctx->nb_qf; i++)
        if (g->hwctx->qf[i].flags & (VK_QUEUE_TRANSFER_BIT | VK_QUEUE_GRAPHICS_BIT))
            best = i;
    if (best < 0)
        return -1;
    g->qf = g->hwctx->qf[best].idx;
    /* From the last queue down, one per stream: FFmpeg's own work starts at 0. */
    g->queue_index = (uint32_t)(g->hwctx->qf[best].num - 1 - g->lane % g->hwctx->qf[best].num);
    return 0;
}

static void *handoff_main(void *arg);

int vkcu_gpu_open(const vkcu_job_params *p, vkcu_gpu **out, char *err, size_t errlen)
{
    int ret = 0, n = 0;
    vkcu_gpu *g = NULL;
    *out = NULL;
    double t0 = vkcu_now();
    /* The Vulkan device on its own thread (if the job has not started it
     * already) while this one starts CUDA. */
    vkcu_vkdev_prepare(p->device);
    cudaError_t ce = cudaGetDeviceCount(&n);
    if (ce != cudaSuccess || n == 0) {
        snprintf(err, errlen, "no CUDA device (%s)", ce != cudaSuccess ? cudaGetErrorString(ce) : "none found");
        return VKCU_ERR_DEVICE;
    }
    if (p->device < 0 || p->device >= n) {
        snprintf(err, errlen, "--device %d: there are %d CUDA device(s) (0..%d)", p->device, n, n - 1);
        return VKCU_ERR_DEVICE;
    }
    g = av_mallocz(sizeof(*g));
    if (!g)
        return AVERROR(ENOMEM);
    g->p = p;
    g->cuda_device = p->device;
    g->nb_slots = p->ring_size < 3 ? 3 : p->ring_size > MAX_SLOTS ? MAX_SLOTS : p->ring_size;
    /* No cudaSetDevice here: it waits for the primary context, which
     * vkcu_vkdev_prepare's thread is making while the decoder opens and
     * decodes its first frame (gpu_bind, at the first frame). */
    struct cudaDeviceProp prop;
    CU_CHECK(cudaGetDeviceProperties(&prop, p->device));
    double t1 = vkcu_now();
    int lane = 0;
    ret = vkcu_vkdev_acquire(p->device, &g->vk_device, &lane, err, errlen);
    LOGD("GPU set-up: CUDA runtime %.0f ms, then %.0f ms more for the Vulkan device", (t1 - t0) * 1e3,
         (vkcu_now() - t1) * 1e3);
    if (ret < 0)
        goto fail;
    vkcu_vkdev_times_get(p->device, &g->setup);
    g->lane = lane;
    g->dev = (AVHWDeviceContext *)g->vk_device->data;
    g->hwctx = g->dev->hwctx;
    const char *missing = NULL;
    if (vkcu_vk_load(&g->vk, g->hwctx->get_proc_addr, g->hwctx->inst, g->hwctx->act_dev, &missing) < 0) {
        snprintf(err, errlen, "Vulkan device lacks %s", missing);
        ret = VKCU_ERR_DEVICE;
        goto fail;
    }
    VkPhysicalDeviceProperties2 pr = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2 };
    g->vk.vkGetPhysicalDeviceProperties2(g->hwctx->phys_dev, &pr);
    if (pick_queue(g) < 0) {
        snprintf(err, errlen, "Vulkan device has no compute or transfer queue");
        ret = VKCU_ERR_DEVICE;
        goto fail;
    }
    g->vk.vkGetDeviceQueue(g->hwctx->act_dev, g->qf, g->queue_index, &g->queue);
    VkCommandPoolCreateInfo pci = { .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                    .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                    .queueFamilyIndex = g->qf };
    VK_CHECK(g->vk.vkCreateCommandPool(g->hwctx->act_dev, &pci, NULL, &g->pool));
    /* Timestamps for --stats, where the queue family has them. */
    uint32_t nqf = 0;
    g->vk.vkGetPhysicalDeviceQueueFamilyProperties2(g->hwctx->phys_dev, &nqf, NULL);
    VkQueueFamilyProperties2 qfp[32];
    if (nqf > 32)
        nqf = 32;
    for (uint32_t i = 0; i < nqf; i++)
        qfp[i] = (VkQueueFamilyProperties2){ .sType = VK_STRUCTURE_TYPE_QUEUE_FAMILY_PROPERTIES_2 };
    g->vk.vkGetPhysicalDeviceQueueFamilyProperties2(g->hwctx->phys_dev, &nqf, qfp);
    if (g->qf < nqf && qfp[g->qf].queueFamilyProperties.timestampValidBits) {
        VkQueryPoolCreateInfo qci = { .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                      .queryType = VK_QUERY_TYPE_TIMESTAMP, .queryCount = 2 * MAX_SLOTS };
        if (g->vk.vkCreateQueryPool(g->hwctx->act_dev, &qci, NULL, &g->timestamps) == VK_SUCCESS) {
            g->ts_valid = 1;
            g->ts_period = pr.properties.limits.timestampPeriod;
        }
    }
    LOGV("GPU: CUDA device %d (%s): decode lane %d, handoff queue family %u index %u; ring of %d slots",
         p->device, prop.name, g->lane, g->qf, g->queue_index, g->nb_slots);
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->cond, NULL);
    g->sync_ready = 1;
    if (pthread_create(&g->worker, NULL, handoff_main, g)) {
        snprintf(err, errlen, "cannot start the handoff thread");
        ret = AVERROR(EAGAIN);
        goto fail;
    }
    g->worker_running = 1;
    g->setup_open_ms = (vkcu_now() - t0) * 1e3;
    *out = g;
    return 0;
fail:
    vkcu_gpu_close(&g);
    return ret;
}

/* The CUDA side on the calling (job) thread: its current device, the stream
 * and events. Done at the first frame rather than in vkcu_gpu_open, so the
 * wait for the CUDA context overlaps the decoder's start. */
static int gpu_bind(vkcu_gpu *g, char *err, size_t errlen)
{
    int ret = 0;
    if (g->bound)
        return g->bind_ret;
    g->bound = 1;
    double t0 = vkcu_now();
    CU_CHECK(cudaSetDevice(g->cuda_device));
    CU_CHECK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    for (int i = 0; i < MAX_PENDING; i++)
        for (int k = 0; k < 3; k++)
            CU_CHECK(cudaEventCreate(&g->events[i][k]));
    LOGD("GPU set-up: CUDA context, stream and events %.0f ms at the first frame", (vkcu_now() - t0) * 1e3);
    return 0;
fail:
    g->bind_ret = ret;
    snprintf(g->bind_err, sizeof(g->bind_err), "%s", err);
    return ret;
}

void vkcu_gpu_prepare(int device) { vkcu_vkdev_prepare(device); }
void vkcu_gpu_prepare_wait(int device) { vkcu_vkdev_prepare_wait(device); }
AVBufferRef *vkcu_gpu_vulkan_device(vkcu_gpu *g) { return g->vk_device; }
void vkcu_gpu_set_chain(vkcu_gpu *g, vkcu_chain *chain)
{
    g->chain = chain;
    /* The first frame: bind now, before the sink opens (a failure shows at push). */
    char err[512];
    gpu_bind(g, err, sizeof(err));
}
/* Frames queued for, being handled by, or finished by the handoff thread. */
static int in_flight(const vkcu_gpu *g)
{
    return (int)(g->inq_tail - g->inq_head) + g->worker_busy + (int)(g->pend_tail - g->pend_head);
}

int vkcu_gpu_pending(const vkcu_gpu *g)
{
    vkcu_gpu *m = (vkcu_gpu *)g;
    pthread_mutex_lock(&m->lock);
    int n = in_flight(g);
    pthread_mutex_unlock(&m->lock);
    return n;
}

int vkcu_gpu_full(const vkcu_gpu *g)
{
    return vkcu_gpu_pending(g) >= g->nb_slots;
}

/* One exportable single-plane image, imported into CUDA as a mipmapped array. */
static int create_interop_plane(vkcu_gpu *g, interop_plane *pl, VkFormat format, int w, int h, int bytes, int comps,
                                char *err, size_t errlen)
{
    int ret = 0, fd = -1;
    VkDevice dev = g->hwctx->act_dev;
    pl->width = w;
    pl->height = h;
    ret = vkcu_vk_export_image(&g->vk, g->hwctx->phys_dev, dev, format, w, h, &pl->image, &pl->memory, &pl->size,
                               &fd, err, errlen);
    if (ret < 0)
        goto fail;
    struct cudaExternalMemoryHandleDesc md = { .type = cudaExternalMemoryHandleTypeOpaqueFd,
                                               .handle.fd = fd, .size = pl->size, .flags = cudaExternalMemoryDedicated };
    CU_CHECK(cudaImportExternalMemory(&pl->ext, &md));
    fd = -1; /* CUDA owns it now */
    g->imports++;
    int bits = bytes * 8;
    struct cudaExternalMemoryMipmappedArrayDesc ad = {
        .offset = 0,
        .formatDesc = cudaCreateChannelDesc(bits, comps > 1 ? bits : 0, 0, 0, cudaChannelFormatKindUnsigned),
        .extent = { (size_t)w, (size_t)h, 0 },
        .flags = cudaArraySurfaceLoadStore,
        .numLevels = 1,
    };
    CU_CHECK(cudaExternalMemoryGetMappedMipmappedArray(&pl->mipmap, pl->ext, &ad));
    CU_CHECK(cudaGetMipmappedArrayLevel(&pl->array, pl->mipmap, 0));
    struct cudaResourceDesc rd = { .resType = cudaResourceTypeArray, .res.array.array = pl->array };
    struct cudaTextureDesc td = { .addressMode = { cudaAddressModeClamp, cudaAddressModeClamp },
                                  .filterMode = cudaFilterModePoint, .readMode = cudaReadModeElementType,
                                  .normalizedCoords = 0 };
    CU_CHECK(cudaCreateTextureObject(&pl->tex, &rd, &td, NULL));
    CU_CHECK(cudaCreateSurfaceObject(&pl->surf, &rd));
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    return ret;
}

static int create_semaphore(vkcu_gpu *g, VkSemaphore *sem, cudaExternalSemaphore_t *cu, int timeline,
                            char *err, size_t errlen)
{
    int ret = 0, fd = -1;
    ret = vkcu_vk_export_semaphore(&g->vk, g->hwctx->act_dev, timeline, sem, &fd, err, errlen);
    if (ret < 0)
        goto fail;
    struct cudaExternalSemaphoreHandleDesc sd = {
        .type = timeline ? cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd : cudaExternalSemaphoreHandleTypeOpaqueFd,
        .handle.fd = fd,
    };
    CU_CHECK(cudaImportExternalSemaphore(cu, &sd));
    fd = -1;
    g->imports++;
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    return ret;
}

static void plane_formats(enum AVPixelFormat sw, int plane, VkFormat *f, int *bytes, int *comps, int *w, int *h,
                          int width, int height)
{
    int lw, lh;
    vkcu_plane_layout(sw, plane, bytes, comps, &lw, &lh);
    *w = AV_CEIL_RSHIFT(width, lw);
    *h = AV_CEIL_RSHIFT(height, lh);
    if (*bytes == 1)
        *f = *comps == 2 ? VK_FORMAT_R8G8_UNORM : VK_FORMAT_R8_UNORM;
    else
        *f = *comps == 2 ? VK_FORMAT_R16G16_UNORM : VK_FORMAT_R16_UNORM;
}

/* align: row pitch of the staging buffer (64 for the host's consumers; 1,
 * rows packed, when the staging buffer is hashed on the GPU). */
static int host_layout(vkcu_gpu *g, enum AVPixelFormat fmt, int w, int h, int align)
{
    g->host_fmt = fmt;
    int ret = av_image_fill_linesizes(g->host_linesize, fmt, w);
    if (ret < 0)
        return ret;
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(fmt);
    size_t off = 0;
    for (int p = 0; p < 4; p++) {
        g->host_offset[p] = off;
        if (!g->host_linesize[p])
            continue;
        g->host_linesize[p] = FFALIGN(g->host_linesize[p], align);
        int ph = (p == 1 || p == 2) ? AV_CEIL_RSHIFT(h, d->log2_chroma_h) : h;
        off += (size_t)g->host_linesize[p] * ph;
    }
    g->host_size = off;
    return 0;
}

static void pinned_pool_free(void *opaque, uint8_t *data)
{
    (void)opaque;
    cudaFreeHost(data);
}

static AVBufferRef *pinned_pool_alloc(void *opaque, size_t size)
{
    void *ptr = NULL;
    (void)opaque;
    if (cudaHostAlloc(&ptr, size, cudaHostAllocDefault) != cudaSuccess)
        return NULL;
    AVBufferRef *b = av_buffer_create(ptr, size, pinned_pool_free, NULL, 0);
    if (!b)
        cudaFreeHost(ptr);
    return b;
}

/* Builds the ring for frames of this format and size (first frame). */
static int ring_create(vkcu_gpu *g, enum AVPixelFormat sw, int w, int h, char *err, size_t errlen)
{
    int ret = 0;
    const vkcu_video_format *out_fmt = g->chain && g->chain->nb_ops ? &g->chain->ops[g->chain->nb_ops - 1]->out : NULL;
    g->ring_fmt = sw;
    g->ring_w = w;
    g->ring_h = h;
    int nb_planes = vkcu_nb_planes(sw);
    for (int s = 0; s < g->nb_slots; s++) {
        frame_slot *sl = &g->slot[s];
        sl->nb_planes = nb_planes;
        for (int p = 0; p < nb_planes; p++) {
            VkFormat vf;
            int bytes, comps, pw, ph;
            plane_formats(sw, p, &vf, &bytes, &comps, &pw, &ph, w, h);
            ret = create_interop_plane(g, &sl->plane[p], vf, pw, ph, bytes, comps, err, errlen);
            if (ret < 0)
                goto fail;
        }
        if (!g->p->timeline_handoff) {
            if ((ret = create_semaphore(g, &sl->ready, &sl->cu_ready, 0, err, errlen)) < 0 ||
                (ret = create_semaphore(g, &sl->done, &sl->cu_done, 0, err, errlen)) < 0)
                goto fail;
        }
        VkCommandBufferAllocateInfo cai = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                            .commandPool = g->pool, .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                            .commandBufferCount = 1 };
        VK_CHECK(g->vk.vkAllocateCommandBuffers(g->hwctx->act_dev, &cai, &sl->cmd));
        VkFenceCreateInfo fci = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
        VK_CHECK(g->vk.vkCreateFence(g->hwctx->act_dev, &fci, NULL, &sl->fence));
    }
    if (g->p->timeline_handoff &&
        (ret = create_semaphore(g, &g->timeline, &g->cu_timeline, 1, err, errlen)) < 0)
        goto fail;
    /* Host layout: the chain's output, planar. */
    enum AVPixelFormat dev_out = out_fmt ? out_fmt->pix_fmt : sw;
    int ow = out_fmt ? out_fmt->width : w, oh = out_fmt ? out_fmt->height : h;
    g->digest = vkcu_hash_on_gpu(g->p, vkcu_gpu_host_format(dev_out));
    ret = host_layout(g, vkcu_gpu_host_format(dev_out), ow, oh, g->digest ? 1 : 64);
    if (ret < 0)
        goto fail;
    for (int s = 0; s < g->nb_slots; s++)
        CU_CHECK(cudaMalloc((void **)&g->slot[s].staging, g->host_size));
    if (g->digest) {
        CU_CHECK(cudaMalloc(&g->b3_scratch, vkcu_cuda_blake3_scratch(g->host_size)));
        CU_CHECK(cudaMalloc((void **)&g->b3_digest, VKCU_BLAKE3_LEN));
        CU_CHECK(cudaHostAlloc((void **)&g->digests, MAX_PENDING * VKCU_BLAKE3_LEN, cudaHostAllocDefault));
    } else {
        g->host_pool = av_buffer_pool_init2(g->host_size, NULL, pinned_pool_alloc, NULL);
        if (!g->host_pool) {
            ret = AVERROR(ENOMEM);
            goto fail;
        }
    }
    g->ring_ready = 1;
    LOGV("GPU: interop ring: %d slots x %d planes (%s %dx%d), %lld CUDA imports%s", g->nb_slots, nb_planes,
         av_get_pix_fmt_name(sw), w, h, (long long)g->imports, g->digest ? "; frames hashed on the GPU (BLAKE3)" : "");
    return 0;
fail:
    return ret;
}

static void slot_gpu_frame(const vkcu_gpu *g, const frame_slot *sl, vkcu_gpu_frame *f, const AVFrame *src)
{
    memset(f, 0, sizeof(*f));
    vkcu_format_from_frame(&f->fmt, src, g->ring_fmt);
    f->fmt.width = g->ring_w;
    f->fmt.height = g->ring_h;
    f->nb_planes = sl->nb_planes;
    for (int p = 0; p < sl->nb_planes; p++) {
        f->plane[p].tex = sl->plane[p].tex;
        f->plane[p].surf = sl->plane[p].surf;
        f->plane[p].width = sl->plane[p].width;
        f->plane[p].height = sl->plane[p].height;
    }
    f->pts = src->pts;
    f->duration = src->duration;
    f->flags = src->flags;
    f->repeat_pict = src->repeat_pict;
}

/* Records and submits the Vulkan half of the handoff for a decoded frame. */
static int vulkan_handoff(vkcu_gpu *g, int s, AVFrame *frame, char *err, size_t errlen)
{
    int ret = 0;
    frame_slot *sl = &g->slot[s];
    VkDevice dev = g->hwctx->act_dev;
    AVHWFramesContext *hwfc = (AVHWFramesContext *)frame->hw_frames_ctx->data;
    AVVulkanFramesContext *vkfc = hwfc->hwctx;
    AVVkFrame *vkf = (AVVkFrame *)frame->data[0];
    int locked = 0;

    if (sl->submitted) {
        /* Complete long ago in practice: it waited only on decode and CUDA K frames back. */
        VkResult r = g->vk.vkWaitForFences(dev, 1, &sl->fence, VK_TRUE, (uint64_t)g->p->stall_timeout_ms * 1000000ull);
        if (r != VK_SUCCESS) {
            snprintf(err, errlen, "Vulkan: handoff of slot %d did not complete (%s)", s, vkcu_vk_result_str(r));
            return VKCU_ERR_DEVICE;
        }
        g->vk.vkResetFences(dev, 1, &sl->fence);
        sl->submitted = 0;
    }
    VkCommandBuffer cmd = sl->cmd;
    VkCommandBufferBeginInfo bi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                    .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT };
    VK_CHECK(g->vk.vkBeginCommandBuffer(cmd, &bi));
    if (g->ts_valid) {
        g->vk.vkCmdResetQueryPool(cmd, g->timestamps, 2 * s, 2);
        g->vk.vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT, g->timestamps, 2 * s);
    }

    vkfc->lock_frame(hwfc, vkf);
    locked = 1;
    int multiplane = !vkf->img[1];
    VkImageMemoryBarrier2 bar[1 + 4 + 4];
    int nb = 0;
    for (int p = 0; p < (multiplane ? 1 : sl->nb_planes); p++)
        bar[nb++] = (VkImageMemoryBarrier2){
            .sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2,
            .srcStageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,
            .srcAccessMask = VK_ACCESS_2_MEMORY_WRITE_BIT,
            .dstStageMask = VK_PIPELINE_STAGE_2_TRANSFER_BIT,
            .dstAccessMask = VK_ACCESS_2_TRANSFER_READ_BIT,
            .oldLayout = vkf->layout[p],
            .newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
            .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
            .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
            .image = vkf->img[p],
            .subresourceRange = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1 },
        };
    for (int p = 0; p < sl->nb_planes; p++)
        bar[nb++] = (VkImageMemoryBarrier2){
            .sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2,
            .srcStageMask = VK_PIPELINE_STAGE_2_TOP_OF_PIPE_BIT,
            .dstStageMask = VK_PIPELINE_STAGE_2_TRANSFER_BIT,
            .dstAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT,
            /* previous contents are not needed: no acquire from EXTERNAL */
            .oldLayout = VK_IMAGE_LAYOUT_UNDEFINED,
            .newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
            .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
            .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
            .image = sl->plane[p].image,
            .subresourceRange = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1 },
        };
    VkDependencyInfo di = { .sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO, .imageMemoryBarrierCount = (uint32_t)nb,
                            .pImageMemoryBarriers = bar };
    g->vk.vkCmdPipelineBarrier2(cmd, &di);

    /* The ring holds the visible picture only: hardware frames keep
     * crop_left/crop_top (FFmpeg trims only right and bottom), so each plane
     * is copied from that offset, in the plane's own texels. A subsampled
     * plane starts at the offset rounded down and spans the rounded-up
     * width, as av_frame_apply_cropping crops software frames; an odd luma
     * offset is therefore still one whole-texel copy, the same bytes as
     * the CPU path. The extent fits: floor(cl/2) + ceil((w-cl)/2) <= ceil(w/2). */
    int cl = (int)frame->crop_left, ct = (int)frame->crop_top;
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(g->ring_fmt);
    for (int p = 0; p < sl->nb_planes; p++) {
        int sx = p ? cl >> desc->log2_chroma_w : cl, sy = p ? ct >> desc->log2_chroma_h : ct;
        VkImageAspectFlags aspect = multiplane ? (p == 0 ? VK_IMAGE_ASPECT_PLANE_0_BIT
                                                         : p == 1 ? VK_IMAGE_ASPECT_PLANE_1_BIT
                                                                  : VK_IMAGE_ASPECT_PLANE_2_BIT)
                                               : VK_IMAGE_ASPECT_COLOR_BIT;
        VkImageCopy region = {
            .srcSubresource = { aspect, 0, 0, 1 },
            .srcOffset = { sx, sy, 0 },
            .dstSubresource = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1 },
            .extent = { (uint32_t)sl->plane[p].width, (uint32_t)sl->plane[p].height, 1 },
        };
        g->vk.vkCmdCopyImage(cmd, vkf->img[multiplane ? 0 : p], VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                             sl->plane[p].image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
    }
    nb = 0;
    for (int p = 0; p < sl->nb_planes; p++)
        bar[nb++] = (VkImageMemoryBarrier2){
            .sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER_2,
            .srcStageMask = VK_PIPELINE_STAGE_2_TRANSFER_BIT,
            .srcAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT,
            .dstStageMask = VK_PIPELINE_STAGE_2_BOTTOM_OF_PIPE_BIT,
            .oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
            .newLayout = VK_IMAGE_LAYOUT_GENERAL,
            .srcQueueFamilyIndex = g->qf,
            .dstQueueFamilyIndex = VK_QUEUE_FAMILY_EXTERNAL,
            .image = sl->plane[p].image,
            .subresourceRange = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1 },
        };
    di.imageMemoryBarrierCount = (uint32_t)nb;
    g->vk.vkCmdPipelineBarrier2(cmd, &di);
    if (g->ts_valid)
        g->vk.vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_BOTTOM_OF_PIPE_BIT, g->timestamps, 2 * s + 1);
    VK_CHECK(g->vk.vkEndCommandBuffer(cmd));

    VkSemaphoreSubmitInfo waits[2], signals[2];
    int nw = 0, ns = 0;
    waits[nw++] = (VkSemaphoreSubmitInfo){ .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO, .semaphore = vkf->sem[0],
                                           .value = vkf->sem_value[0], .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT };
    if (g->p->timeline_handoff) {
        /* One timeline, two signalling queues: values must rise in order, so
         * frame n's copy (signal 2n+1) waits CUDA's release of frame n-1 (2n).
         * That also covers the reuse of this slot, K frames back. */
        if (g->tl_frames > 0)
            waits[nw++] = (VkSemaphoreSubmitInfo){ .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                                   .semaphore = g->timeline, .value = 2 * g->tl_frames,
                                                   .stageMask = VK_PIPELINE_STAGE_2_TRANSFER_BIT };
    } else if (sl->used) {
        waits[nw++] = (VkSemaphoreSubmitInfo){ .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO, .semaphore = sl->done,
                                               .stageMask = VK_PIPELINE_STAGE_2_TRANSFER_BIT };
    }
    signals[ns++] = (VkSemaphoreSubmitInfo){ .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO, .semaphore = vkf->sem[0],
                                             .value = vkf->sem_value[0] + 1,
                                             .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT };
    if (g->p->timeline_handoff)
        signals[ns++] = (VkSemaphoreSubmitInfo){ .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                                 .semaphore = g->timeline, .value = 2 * g->tl_frames + 1,
                                                 .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT };
    else
        signals[ns++] = (VkSemaphoreSubmitInfo){ .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
                                                 .semaphore = sl->ready, .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT };
    VkCommandBufferSubmitInfo cbi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO, .commandBuffer = cmd };
    VkSubmitInfo2 si = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2, .waitSemaphoreInfoCount = (uint32_t)nw,
                         .pWaitSemaphoreInfos = waits, .commandBufferInfoCount = 1, .pCommandBufferInfos = &cbi,
                         .signalSemaphoreInfoCount = (uint32_t)ns, .pSignalSemaphoreInfos = signals };
    g->hwctx->lock_queue(g->dev, g->qf, g->queue_index);
    VkResult r = g->vk.vkQueueSubmit2(g->queue, 1, &si, sl->fence);
    g->hwctx->unlock_queue(g->dev, g->qf, g->queue_index);
    if (r != VK_SUCCESS) {
        snprintf(err, errlen, "Vulkan: handoff submission failed: %s%s", vkcu_vk_result_str(r),
                 r == VK_ERROR_DEVICE_LOST ? " (GPU lost)" : "");
        ret = VKCU_ERR_DEVICE;
        goto fail;
    }
    sl->submitted = 1;
    for (int p = 0; p < (multiplane ? 1 : sl->nb_planes); p++) {
        vkf->layout[p] = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
        vkf->access[p] = VK_ACCESS_TRANSFER_READ_BIT;
    }
    vkf->sem_value[0]++;
    vkfc->unlock_frame(hwfc, vkf);
    g->dtod++;
    return 0;
fail:
    if (locked)
        vkfc->unlock_frame(hwfc, vkf);
    return ret;
}

/* Software fallback: one upload of each plane into the slot's interop arrays. */
static int upload(vkcu_gpu *g, int s, const AVFrame *frame, char *err, size_t errlen)
{
    int ret = 0;
    frame_slot *sl = &g->slot[s];
    for (int p = 0; p < sl->nb_planes; p++) {
        int bytes, comps, lw, lh;
        vkcu_plane_layout(g->ring_fmt, p, &bytes, &comps, &lw, &lh);
        size_t row = (size_t)sl->plane[p].width * bytes * comps;
        CU_CHECK(cudaMemcpy2DToArrayAsync(sl->plane[p].array, 0, 0, frame->data[p], frame->linesize[p], row,
                                          sl->plane[p].height, cudaMemcpyHostToDevice, g->stream));
        g->htod_bytes += (int64_t)row * sl->plane[p].height;
    }
    return 0;
fail:
    return ret;
}

static int start_download(vkcu_gpu *g, int s, const vkcu_gpu_frame *out, int pend_idx, char *err, size_t errlen)
{
    int ret = 0;
    pending_frame *pf = &g->pending[pend_idx];
    uint8_t *staging = s >= 0 ? g->slot[s].staging : g->slot[0].staging;
    /* No CPU consumer (null sink): frames end on the GPU. */
    int e = g->p->sink == VKCU_SINK_NULL ? 0
                                         : vkcu_cuda_to_planar(out, g->host_fmt, staging, g->host_offset,
                                                               g->host_linesize, g->stream);
    if (!e && g->digest)
        e = vkcu_cuda_blake3(staging, g->host_size, g->b3_scratch, g->b3_digest, g->stream);
    if (e) {
        snprintf(err, errlen, "CUDA: download kernel failed: %s", cudaGetErrorString((cudaError_t)e));
        return VKCU_ERR_DEVICE;
    }
    CU_CHECK(cudaEventRecord(pf->ev_ops, g->stream));
    (void)pf;
    return 0;
fail:
    return ret;
}

static int signal_done(vkcu_gpu *g, int s, char *err, size_t errlen)
{
    int ret = 0;
    frame_slot *sl = &g->slot[s];
    struct cudaExternalSemaphoreSignalParams sp;
    memset(&sp, 0, sizeof(sp));
    if (g->p->timeline_handoff) {
        sp.params.fence.value = 2 * g->tl_frames + 2;
        CU_CHECK(cudaSignalExternalSemaphoresAsync(&g->cu_timeline, &sp, 1, g->stream));
        g->tl_frames++;
    } else {
        CU_CHECK(cudaSignalExternalSemaphoresAsync(&sl->cu_done, &sp, 1, g->stream));
    }
    sl->used = 1;
    return 0;
fail:
    return ret;
}

static int finish_host_copy(vkcu_gpu *g, int s, const vkcu_gpu_frame *out, char *err, size_t errlen)
{
    int ret = 0;
    int idx = (int)(g->pend_tail % MAX_PENDING);
    pending_frame *pf = &g->pending[idx];
    if (g->digest) {
        CU_CHECK(cudaMemcpyAsync(g->digests + (size_t)idx * VKCU_BLAKE3_LEN, g->b3_digest, VKCU_BLAKE3_LEN,
                                 cudaMemcpyDeviceToHost, g->stream));
        g->dtoh_bytes += VKCU_BLAKE3_LEN;
    } else if (g->p->sink != VKCU_SINK_NULL) {
        pf->host = av_buffer_pool_get(g->host_pool);
        if (!pf->host) {
            snprintf(err, errlen, "cannot allocate pinned host memory");
            return AVERROR(ENOMEM);
        }
        uint8_t *staging = s >= 0 ? g->slot[s].staging : g->slot[0].staging;
        CU_CHECK(cudaMemcpyAsync(pf->host->data, staging, g->host_size, cudaMemcpyDeviceToHost, g->stream));
        g->dtoh_bytes += (int64_t)g->host_size;
    }
    CU_CHECK(cudaEventRecord(pf->ev_end, g->stream));
    pf->slot = s;
    pf->pts = out->pts;
    pf->duration = out->duration;
    pthread_mutex_lock(&g->lock);
    g->pend_tail++;
    if (in_flight(g) > g->max_in_flight)
        g->max_in_flight = in_flight(g);
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
    return 0;
fail:
    av_buffer_unref(&pf->host);
    return ret;
}

/* Where the outputs of one run of the chain go. */
typedef struct chain_sink {
    int slot;        /* the input's ring slot, -1 when flushing */
    int nb_out;      /* outputs so far */
} chain_sink;

/* Waits for room in the output queue: an operator that multiplies frames
 * (fps, one frame per field) can give more outputs for one input than the
 * queue holds. The caller pops while the queue is full, so the wait ends;
 * closing the session ends it too. */
static int reserve_pending(vkcu_gpu *g, char *err, size_t errlen)
{
    pthread_mutex_lock(&g->lock);
    while (g->pend_tail - g->pend_head >= MAX_PENDING - 1 && !g->quit && !g->werr)
        pthread_cond_wait(&g->cond, &g->lock);
    int stop = g->pend_tail - g->pend_head >= MAX_PENDING - 1;
    pthread_mutex_unlock(&g->lock);
    if (stop) {
        snprintf(err, errlen, "GPU session closed with output pending");
        return AVERROR_EXIT;
    }
    return 0;
}

/* One frame leaving the chain: its own pending entry and pinned host
 * buffer. All outputs of one run (and all flushed ones) go through the same
 * device staging buffer: the download kernel, the copy to the host and the
 * next output's kernel are ordered on the one stream, so none overwrites
 * what the previous copy has not read yet. */
static int chain_emit(vkcu_gpu *g, chain_sink *cs, const vkcu_gpu_frame *out, char *err, size_t errlen)
{
    int ret = 0;
    if (cs->nb_out++ > 0 || cs->slot < 0) {
        /* The first output of an input has its entry taken and its start
         * recorded (with the Vulkan copy) before the chain ran; a further
         * output, or a flushed one, starts here. */
        if ((ret = reserve_pending(g, err, errlen)) < 0)
            return ret;
        int i = (int)(g->pend_tail % MAX_PENDING);
        g->pending[i].ev_start = g->events[i][0];
        g->pending[i].ev_ops = g->events[i][1];
        g->pending[i].ev_end = g->events[i][2];
        g->pending[i].vk_timed = 0;
        CU_CHECK(cudaEventRecord(g->pending[i].ev_start, g->stream));
    }
    int idx = (int)(g->pend_tail % MAX_PENDING);
    if ((ret = start_download(g, cs->slot, out, idx, err, errlen)) < 0)
        return ret;
    return finish_host_copy(g, cs->slot, out, err, errlen);
fail:
    return ret;
}

/* The GPU driver of the frame flow contract (op.h), as vkcu_chain_feed_cpu:
 * runs `in` (NULL: flush) through operators [i, nb_ops), each frame leaving
 * the chain to chain_emit. */
static int run_chain(vkcu_gpu *g, int i, const vkcu_gpu_frame *in, chain_sink *cs, char *err, size_t errlen)
{
    if (!g->chain || i >= g->chain->nb_ops)
        return in ? chain_emit(g, cs, in, err, errlen) : 0;
    vkcu_op *op = g->chain->ops[i];
    const int flushing = !in;
    for (;;) {
        vkcu_gpu_frame mid;
        int ret = op->cls->run_gpu(op, in, &mid, g->stream);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF)
            break;
        if (ret < 0) {
            snprintf(err, errlen, "operator %s failed on the GPU: %s", op->cls->name, av_err2str(ret));
            return ret;
        }
        const int more = ret == VKCU_OP_MORE;
        ret = run_chain(g, i + 1, &mid, cs, err, errlen);
        if (ret < 0 || (!flushing && !more))
            return ret;
        in = NULL; /* the ready outputs, or the rest of the flush */
    }
    return flushing ? run_chain(g, i + 1, NULL, cs, err, errlen) : 0;
}

static int handoff_frame(vkcu_gpu *g, AVFrame *frame, char *err, size_t errlen)
{
    int ret = 0;
    vkcu_gpu_frame in;
    if (!frame) {
        /* Flush operators holding frames back; their outputs need no slot. */
        if (!g->ring_ready)
            return 0;
        chain_sink cs = { .slot = -1 };
        return run_chain(g, 0, NULL, &cs, err, errlen);
    }
    enum AVPixelFormat sw = frame->format == AV_PIX_FMT_VULKAN
                                ? ((AVHWFramesContext *)frame->hw_frames_ctx->data)->sw_format
                                : frame->format;
    int vis_w, vis_h;
    vkcu_frame_visible_size(frame, &vis_w, &vis_h);
    if (!g->ring_ready) {
        ret = ring_create(g, sw, vis_w, vis_h, err, errlen);
        if (ret < 0)
            goto fail;
        for (int i = 0; g->chain && i < g->chain->nb_ops; i++) {
            vkcu_op *op = g->chain->ops[i];
            if (!op->cls->run_gpu) {
                snprintf(err, errlen, "operator %s has no GPU implementation", op->cls->name);
                ret = VKCU_ERR_USAGE;
                goto fail;
            }
            if (op->cls->init_gpu && (ret = op->cls->init_gpu(op)) < 0) {
                snprintf(err, errlen, "operator %s: GPU set-up failed", op->cls->name);
                goto fail;
            }
        }
    } else if (sw != g->ring_fmt || vis_w != g->ring_w || vis_h != g->ring_h) {
        snprintf(err, errlen, "the stream changes format mid-way (%s %dx%d -> %s %dx%d); not supported on the GPU path",
                 av_get_pix_fmt_name(g->ring_fmt), g->ring_w, g->ring_h, av_get_pix_fmt_name(sw), vis_w, vis_h);
        ret = VKCU_ERR_INPUT;
        goto fail;
    }
    if ((ret = reserve_pending(g, err, errlen)) < 0)
        goto fail;
    int s = (int)(g->frame_no++ % g->nb_slots);
    frame_slot *sl = &g->slot[s];
    int idx = (int)(g->pend_tail % MAX_PENDING);
    pending_frame *pf = &g->pending[idx];
    pf->ev_start = g->events[idx][0];
    pf->ev_ops = g->events[idx][1];
    pf->ev_end = g->events[idx][2];
    pf->vk_timed = 0;
    int vulkan = frame->format == AV_PIX_FMT_VULKAN;
    if (vulkan) {
        ret = vulkan_handoff(g, s, frame, err, errlen);
        if (ret < 0)
            goto fail;
        pf->vk_timed = g->ts_valid;
        struct cudaExternalSemaphoreWaitParams wp;
        memset(&wp, 0, sizeof(wp));
        if (g->p->timeline_handoff) {
            wp.params.fence.value = 2 * g->tl_frames + 1;
            CU_CHECK(cudaWaitExternalSemaphoresAsync(&g->cu_timeline, &wp, 1, g->stream));
        } else {
            CU_CHECK(cudaWaitExternalSemaphoresAsync(&sl->cu_ready, &wp, 1, g->stream));
        }
    } else {
        ret = upload(g, s, frame, err, errlen);
        if (ret < 0)
            goto fail;
    }
    CU_CHECK(cudaEventRecord(pf->ev_start, g->stream));
    slot_gpu_frame(g, sl, &in, frame);
    av_frame_free(&frame);
    /* None (an operator holds the frame back), one or several outputs. */
    chain_sink cs = { .slot = s };
    ret = run_chain(g, 0, &in, &cs, err, errlen);
    if (ret < 0)
        return ret;
    /* The chain and the download kernels have read the slot: release it. */
    if (vulkan && (ret = signal_done(g, s, err, errlen)) < 0)
        return ret;
    return 0;
fail:
    av_frame_free(&frame);
    return ret;
}

static void *handoff_main(void *arg)
{
    vkcu_gpu *g = arg;
    char err[512];
    cudaSetDevice(g->cuda_device);
    pthread_mutex_lock(&g->lock);
    for (;;) {
        if (g->inq_head == g->inq_tail) {
            if (g->quit)
                break;
            pthread_cond_wait(&g->cond, &g->lock);
            continue;
        }
        int i = (int)(g->inq_head % (MAX_SLOTS + 2));
        AVFrame *frame = g->inq[i].frame;
        int flush = g->inq[i].flush;
        g->inq[i].frame = NULL;
        g->inq_head++;
        g->worker_busy = 1;
        int failed = g->werr < 0;
        pthread_mutex_unlock(&g->lock);
        int ret = 0;
        err[0] = 0;
        if (failed)
            av_frame_free(&frame); /* after an error, frames are only released */
        else
            ret = handoff_frame(g, flush ? NULL : frame, err, sizeof(err));
        pthread_mutex_lock(&g->lock);
        g->worker_busy = 0;
        if (ret < 0 && !g->werr) {
            g->werr = ret;
            snprintf(g->werrmsg, sizeof(g->werrmsg), "%s", err[0] ? err : av_err2str(ret));
        }
        pthread_cond_broadcast(&g->cond);
    }
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

int vkcu_gpu_push(vkcu_gpu *g, AVFrame *frame, char *err, size_t errlen)
{
    if (gpu_bind(g, err, errlen) < 0) {
        snprintf(err, errlen, "%s", g->bind_err);
        av_frame_free(&frame);
        return g->bind_ret;
    }
    pthread_mutex_lock(&g->lock);
    /* At most ring-size frames in flight; the caller normally pops first. */
    while (!g->werr && g->inq_tail - g->inq_head >= MAX_SLOTS + 1)
        pthread_cond_wait(&g->cond, &g->lock);
    if (g->werr) {
        int ret = g->werr;
        snprintf(err, errlen, "%s", g->werrmsg);
        pthread_mutex_unlock(&g->lock);
        av_frame_free(&frame);
        return ret;
    }
    int i = (int)(g->inq_tail % (MAX_SLOTS + 2));
    g->inq[i].frame = frame;
    g->inq[i].flush = !frame;
    g->inq_tail++;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
    return 0;
}

int vkcu_gpu_pop(vkcu_gpu *g, AVFrame *out, int wait, char *err, size_t errlen)
{
    int ret = 0;
    pthread_mutex_lock(&g->lock);
    while (g->pend_tail == g->pend_head) {
        if (g->werr) {
            ret = g->werr;
            snprintf(err, errlen, "%s", g->werrmsg);
            pthread_mutex_unlock(&g->lock);
            return ret;
        }
        if (!wait || (g->inq_head == g->inq_tail && !g->worker_busy)) {
            pthread_mutex_unlock(&g->lock);
            return AVERROR(EAGAIN);
        }
        pthread_cond_wait(&g->cond, &g->lock);
    }
    pending_frame *pf = &g->pending[g->pend_head % MAX_PENDING];
    pthread_mutex_unlock(&g->lock);
    if (gpu_bind(g, err, errlen) < 0) { /* bound at the first push: only the error is read here */
        snprintf(err, errlen, "%s", g->bind_err);
        return g->bind_ret;
    }
    cudaError_t q = cudaEventQuery(pf->ev_end);
    if (q == cudaErrorNotReady) {
        if (!wait)
            return AVERROR(EAGAIN);
        CU_CHECK(cudaEventSynchronize(pf->ev_end));
    } else if (q != cudaSuccess) {
        snprintf(err, errlen, "CUDA: %s (GPU lost?)", cudaGetErrorString(q));
        return VKCU_ERR_DEVICE;
    }
    float ms = 0;
    if (cudaEventElapsedTime(&ms, pf->ev_start, pf->ev_ops) == cudaSuccess)
        g->ms_ops += ms;
    if (cudaEventElapsedTime(&ms, pf->ev_ops, pf->ev_end) == cudaSuccess)
        g->ms_download += ms;
    if (pf->vk_timed && pf->slot >= 0) {
        uint64_t ts[2];
        if (g->vk.vkGetQueryPoolResults(g->hwctx->act_dev, g->timestamps, 2 * pf->slot, 2, sizeof(ts), ts,
                                        sizeof(uint64_t), VK_QUERY_RESULT_64_BIT) == VK_SUCCESS)
            g->ms_copy += (double)(ts[1] - ts[0]) * g->ts_period * 1e-6;
    }
    out->format = g->host_fmt;
    const vkcu_video_format *of = g->chain && g->chain->nb_ops ? &g->chain->ops[g->chain->nb_ops - 1]->out : NULL;
    out->width = of ? of->width : g->ring_w;
    out->height = of ? of->height : g->ring_h;
    out->buf[0] = pf->host;
    pf->host = NULL;
    for (int p = 0; p < 4 && out->buf[0]; p++) {
        out->data[p] = g->host_linesize[p] ? out->buf[0]->data + g->host_offset[p] : NULL;
        out->linesize[p] = g->host_linesize[p];
    }
    if (g->digest) {
        AVBufferRef *d = av_buffer_allocz(sizeof(vkcu_frame_digest));
        if (!d) {
            snprintf(err, errlen, "out of memory");
            return AVERROR(ENOMEM);
        }
        vkcu_frame_digest *fd = (vkcu_frame_digest *)d->data;
        fd->algo = VKCU_HASH_BLAKE3;
        fd->size = (int)g->host_size;
        memcpy(fd->digest, g->digests + (g->pend_head % MAX_PENDING) * VKCU_BLAKE3_LEN, VKCU_BLAKE3_LEN);
        av_buffer_unref(&out->opaque_ref);
        out->opaque_ref = d;
    }
    out->pts = pf->pts;
    out->duration = pf->duration;
    pthread_mutex_lock(&g->lock);
    g->pend_head++;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
    return 0;
fail:
    return ret;
}

void vkcu_gpu_stats(const vkcu_gpu *g, vkcu_job_result *r)
{
    r->imports = g->imports;
    r->dtod_copies = g->dtod;
    r->htod_bytes = g->htod_bytes;
    r->dtoh_bytes = g->dtoh_bytes;
    r->max_in_flight = g->max_in_flight;
    r->gpu_ms_copy = g->ms_copy;
    r->gpu_ms_ops = g->ms_ops;
    r->gpu_ms_download = g->ms_download;
    vkcu_vkdev_times t;
    if (vkcu_vkdev_times_get(g->cuda_device, &t) < 0) /* by now with the CUDA context's time */
        t = g->setup;
    r->setup_ms_vk_instance = t.instance_ms;
    r->setup_ms_vk_device = t.device_ms;
    r->setup_ms_cuda = t.cuda_ms + t.cuda_context_ms;
    r->setup_ms_gpu_open = g->setup_open_ms;
    if (t.own)
        snprintf(r->setup_vk_device, sizeof(r->setup_vk_device), "vkcu (%u decode + %u compute queues%s)",
                 t.nb_decode, t.nb_compute, t.speculative ? ", before CUDA's UUID" : "");
    else
        snprintf(r->setup_vk_device, sizeof(r->setup_vk_device), "ffmpeg");
}

void vkcu_gpu_close(vkcu_gpu **pg)
{
    vkcu_gpu *g = *pg;
    if (!g)
        return;
    if (g->worker_running) {
        pthread_mutex_lock(&g->lock);
        g->quit = 1;
        g->werr = g->werr ? g->werr : AVERROR_EXIT; /* release queued frames unprocessed */
        pthread_cond_broadcast(&g->cond);
        pthread_mutex_unlock(&g->lock);
        pthread_join(g->worker, NULL);
        g->worker_running = 0;
    }
    for (int i = 0; i < MAX_SLOTS + 2; i++)
        av_frame_free(&g->inq[i].frame);
    if (g->bound) /* CUDA objects exist only past the bind; freed with this thread's device current */
        cudaSetDevice(g->cuda_device);
    if (g->stream)
        cudaStreamSynchronize(g->stream);
    VkDevice dev = g->hwctx ? g->hwctx->act_dev : VK_NULL_HANDLE;
    if (dev && g->vk.vkDeviceWaitIdle) {
        /* Our submissions only: wait on the slot fences rather than the whole device. */
        for (int s = 0; s < g->nb_slots; s++)
            if (g->slot[s].submitted)
                g->vk.vkWaitForFences(dev, 1, &g->slot[s].fence, VK_TRUE, 5000000000ull);
    }
    for (int i = 0; i < MAX_PENDING; i++)
        av_buffer_unref(&g->pending[i].host);
    av_buffer_pool_uninit(&g->host_pool);
    /* CUDA's side first, then the Vulkan objects it mapped. */
    for (int s = 0; s < g->nb_slots; s++) {
        frame_slot *sl = &g->slot[s];
        for (int p = 0; p < 4; p++) {
            interop_plane *pl = &sl->plane[p];
            if (pl->tex)
                cudaDestroyTextureObject(pl->tex);
            if (pl->surf)
                cudaDestroySurfaceObject(pl->surf);
            if (pl->mipmap)
                cudaFreeMipmappedArray(pl->mipmap);
            if (pl->ext)
                cudaDestroyExternalMemory(pl->ext);
        }
        if (sl->cu_ready)
            cudaDestroyExternalSemaphore(sl->cu_ready);
        if (sl->cu_done)
            cudaDestroyExternalSemaphore(sl->cu_done);
        if (sl->staging)
            cudaFree(sl->staging);
    }
    if (g->b3_scratch)
        cudaFree(g->b3_scratch);
    if (g->b3_digest)
        cudaFree(g->b3_digest);
    if (g->digests)
        cudaFreeHost(g->digests);
    if (g->cu_timeline)
        cudaDestroyExternalSemaphore(g->cu_timeline);
    for (int i = 0; i < MAX_PENDING; i++)
        for (int k = 0; k < 3; k++)
            if (g->events[i][k])
                cudaEventDestroy(g->events[i][k]);
    if (g->stream)
        cudaStreamDestroy(g->stream);
    if (dev) {
        for (int s = 0; s < g->nb_slots; s++) {
            frame_slot *sl = &g->slot[s];
            for (int p = 0; p < 4; p++) {
                if (sl->plane[p].image)
                    g->vk.vkDestroyImage(dev, sl->plane[p].image, NULL);
                if (sl->plane[p].memory)
                    g->vk.vkFreeMemory(dev, sl->plane[p].memory, NULL);
            }
            if (sl->ready)
                g->vk.vkDestroySemaphore(dev, sl->ready, NULL);
            if (sl->done)
                g->vk.vkDestroySemaphore(dev, sl->done, NULL);
            if (sl->fence)
                g->vk.vkDestroyFence(dev, sl->fence, NULL);
        }
        if (g->timeline)
            g->vk.vkDestroySemaphore(dev, g->timeline, NULL);
        if (g->timestamps)
            g->vk.vkDestroyQueryPool(dev, g->timestamps, NULL);
        if (g->pool)
            g->vk.vkDestroyCommandPool(dev, g->pool, NULL);
    }
    av_buffer_unref(&g->vk_device);
    if (g->sync_ready) {
        pthread_mutex_destroy(&g->lock);
        pthread_cond_destroy(&g->cond);
    }
    av_freep(pg);
}
