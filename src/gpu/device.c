/*
 * Vulkan devices shared by every stream of the process, one per CUDA device
 * (matched by UUID, never by ordinal), and the spreading of decoders over
 * the decode queues.
 *
 * FFmpeg 7.1's Vulkan decoder submits on queue `i % nb_queues` of the decode
 * family for its two execution contexts i = 0, 1, so every decoder lands on
 * decode queues 0 and 1 (DESIGN.md). Each stream therefore gets its own
 * AVHWDeviceContext wrapping the shared VkDevice, with a `lane`: that
 * context's vkGetDeviceQueue and lock_queue map decode queue i to physical
 * queue (i + lane) % nb_queues, so N concurrent decoders spread evenly over
 * the queues (each queue serves two execution contexts). The mapping is done by a get_proc_addr wrapper per lane (the
 * Vulkan entry points carry no user pointer, so each lane has its own
 * trampolines) and by our lock_queue, which locks the physical queue through
 * the shared context, so all users of one queue share one mutex.
 * VKCU_DECODE_QUEUE_SPREAD=0 turns the spreading off (for measurements).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>

#include "gpu/device.h"
#include "gpu/vkfn.h"
#include "log.h"
#include "stage.h"

#define MAX_DEVICES 16
#define MAX_LANES 8

typedef struct shared_device {
    int used;
    int cuda_device;
    AVBufferRef *master;           /* created by FFmpeg; owns the VkDevice */
    uint32_t decode_qf, nb_decode; /* decode family and its queue count */
    unsigned next_lane;
} shared_device;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static shared_device devices[MAX_DEVICES];

/* Process-wide: the real entry points (the same loader for every device). */
static PFN_vkGetInstanceProcAddr real_gipa;
static PFN_vkGetDeviceProcAddr real_gdpa;
static PFN_vkGetDeviceQueue real_gdq;
static uint32_t lane_decode_qf[MAX_LANES], lane_nb_decode[MAX_LANES];

static uint32_t remap(int lane, uint32_t qf, uint32_t index)
{
    if (qf != lane_decode_qf[lane] || !lane_nb_decode[lane])
        return index;
    return (index + (uint32_t)lane) % lane_nb_decode[lane];
}

#define LANE_FNS(k)                                                                                     \
    static VKAPI_ATTR void VKAPI_CALL gdq_##k(VkDevice d, uint32_t qf, uint32_t i, VkQueue *q)          \
    {                                                                                                   \
        real_gdq(d, qf, remap(k, qf, i), q);                                                            \
    }                                                                                                   \
    static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL gdpa_##k(VkDevice d, const char *name)             \
    {                                                                                                   \
        if (!strcmp(name, "vkGetDeviceQueue"))                                                          \
            return (PFN_vkVoidFunction)gdq_##k;                                                         \
        return real_gdpa(d, name);                                                                      \
    }                                                                                                   \
    static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL gipa_##k(VkInstance inst, const char *name)        \
    {                                                                                                   \
        if (!strcmp(name, "vkGetDeviceProcAddr"))                                                       \
            return (PFN_vkVoidFunction)gdpa_##k;                                                        \
        if (!strcmp(name, "vkGetDeviceQueue"))                                                          \
            return (PFN_vkVoidFunction)gdq_##k;                                                         \
        return real_gipa(inst, name);                                                                   \
    }
LANE_FNS(0)
LANE_FNS(1)
LANE_FNS(2)
LANE_FNS(3)
LANE_FNS(4)
LANE_FNS(5)
LANE_FNS(6)
LANE_FNS(7)
static const PFN_vkGetInstanceProcAddr lane_gipa[MAX_LANES] = { gipa_0, gipa_1, gipa_2, gipa_3,
                                                                gipa_4, gipa_5, gipa_6, gipa_7 };

typedef struct lane_ctx {
    AVBufferRef *master;
    int lane;
} lane_ctx;

static void lane_lock(AVHWDeviceContext *ctx, uint32_t qf, uint32_t index)
{
    lane_ctx *l = ctx->user_opaque;
    AVHWDeviceContext *m = (AVHWDeviceContext *)l->master->data;
    AVVulkanDeviceContext *mh = m->hwctx;
    mh->lock_queue(m, qf, remap(l->lane, qf, index));
}

static void lane_unlock(AVHWDeviceContext *ctx, uint32_t qf, uint32_t index)
{
    lane_ctx *l = ctx->user_opaque;
    AVHWDeviceContext *m = (AVHWDeviceContext *)l->master->data;
    AVVulkanDeviceContext *mh = m->hwctx;
    mh->unlock_queue(m, qf, remap(l->lane, qf, index));
}

static void lane_free(AVHWDeviceContext *ctx)
{
    lane_ctx *l = ctx->user_opaque;
    if (l) {
        av_buffer_unref(&l->master);
        av_free(l);
    }
    ctx->user_opaque = NULL;
}

/* Index (in vkEnumeratePhysicalDevices order) of the device whose UUID is `uuid`. */
static int vulkan_index_for_uuid(const uint8_t uuid[16], char *err, size_t errlen)
{
    PFN_vkGetInstanceProcAddr gipa = vkcu_vk_loader();
    if (!gipa) {
        snprintf(err, errlen, "no Vulkan loader (libvulkan.so.1) on this machine");
        return -1;
    }
    vkcu_vkfn fn;
    const char *missing = NULL;
    vkcu_vk_load(&fn, gipa, NULL, NULL, &missing);
    VkApplicationInfo app = { .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "vkcu",
                              .apiVersion = VK_API_VERSION_1_3 };
    VkInstanceCreateInfo ci = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app };
    VkInstance inst;
    if (fn.vkCreateInstance(&ci, NULL, &inst) != VK_SUCCESS) {
        snprintf(err, errlen, "cannot create a Vulkan 1.3 instance (no Vulkan driver?)");
        return -1;
    }
    int found = -1;
    if (vkcu_vk_load(&fn, gipa, inst, NULL, &missing) == 0) {
        uint32_t n = 0;
        fn.vkEnumeratePhysicalDevices(inst, &n, NULL);
        VkPhysicalDevice devs[16];
        if (n > 16)
            n = 16;
        fn.vkEnumeratePhysicalDevices(inst, &n, devs);
        for (uint32_t i = 0; i < n && found < 0; i++) {
            VkPhysicalDeviceIDProperties id = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES };
            VkPhysicalDeviceProperties2 pr = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &id };
            fn.vkGetPhysicalDeviceProperties2(devs[i], &pr);
            if (!memcmp(id.deviceUUID, uuid, 16))
                found = (int)i;
        }
    }
    fn.vkDestroyInstance(inst, NULL);
    if (found < 0)
        snprintf(err, errlen, "no Vulkan device has the UUID of CUDA device (is the NVIDIA Vulkan driver installed?)");
    return found;
}

static int has_ext(const AVVulkanDeviceContext *hw, const char *name)
{
    for (int i = 0; i < hw->nb_enabled_dev_extensions; i++)
        if (!strcmp(hw->enabled_dev_extensions[i], name))
            return 1;
    return 0;
}

/* Creates the shared device for a CUDA ordinal (registry locked). */
static int open_master(shared_device *sd, int cuda_device, char *err, size_t errlen)
{
    struct cudaDeviceProp prop;
    cudaError_t ce = cudaGetDeviceProperties(&prop, cuda_device);
    if (ce != cudaSuccess) {
        snprintf(err, errlen, "CUDA device %d: %s", cuda_device, cudaGetErrorString(ce));
        return VKCU_ERR_DEVICE;
    }
    double t0 = vkcu_now();
    int vk_index = vulkan_index_for_uuid((const uint8_t *)prop.uuid.bytes, err, errlen);
    if (vk_index < 0)
        return VKCU_ERR_DEVICE;
    char idx[16];
    snprintf(idx, sizeof(idx), "%d", vk_index);
    AVBufferRef *master = NULL;
    double t1 = vkcu_now();
    int ret = av_hwdevice_ctx_create(&master, AV_HWDEVICE_TYPE_VULKAN, idx, NULL, 0);
    LOGD("GPU set-up: Vulkan device by CUDA UUID %.0f ms, FFmpeg's Vulkan device %.0f ms", (t1 - t0) * 1e3,
         (vkcu_now() - t1) * 1e3);
    if (ret < 0) {
        snprintf(err, errlen, "cannot create Vulkan device %d for FFmpeg: %s", vk_index, av_err2str(ret));
        return VKCU_ERR_DEVICE;
    }
    AVVulkanDeviceContext *hw = ((AVHWDeviceContext *)master->data)->hwctx;
    /* Never trust the ordinal: check that FFmpeg opened the device we matched. */
    PFN_vkGetPhysicalDeviceProperties2 gpp2 =
        (PFN_vkGetPhysicalDeviceProperties2)hw->get_proc_addr(hw->inst, "vkGetPhysicalDeviceProperties2");
    VkPhysicalDeviceIDProperties id = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES };
    VkPhysicalDeviceProperties2 pr = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &id };
    gpp2(hw->phys_dev, &pr);
    if (memcmp(id.deviceUUID, prop.uuid.bytes, 16)) {
        snprintf(err, errlen, "FFmpeg opened Vulkan device %d (%s), which is not CUDA device %d", vk_index,
                 pr.properties.deviceName, cuda_device);
        av_buffer_unref(&master);
        return VKCU_ERR_DEVICE;
    }
    if (!has_ext(hw, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME) || !has_ext(hw, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME)) {
        snprintf(err, errlen, "Vulkan device %s lacks external memory/semaphore FD support", pr.properties.deviceName);
        av_buffer_unref(&master);
        return VKCU_ERR_DEVICE;
    }
    sd->master = master;
    sd->cuda_device = cuda_device;
    sd->used = 1;
    for (int i = 0; i < hw->nb_qf; i++)
        if (hw->qf[i].flags & VK_QUEUE_VIDEO_DECODE_BIT_KHR) {
            sd->decode_qf = hw->qf[i].idx;
            sd->nb_decode = hw->qf[i].num;
            break;
        }
    if (!real_gipa) {
        real_gipa = hw->get_proc_addr;
        real_gdpa = (PFN_vkGetDeviceProcAddr)real_gipa(hw->inst, "vkGetDeviceProcAddr");
        real_gdq = (PFN_vkGetDeviceQueue)real_gdpa(hw->act_dev, "vkGetDeviceQueue");
    }
    LOGV("GPU: CUDA device %d (%s) = Vulkan device %d; %u decode queues in family %u", cuda_device, prop.name,
         vk_index, sd->nb_decode, sd->decode_qf);
    return 0;
}

int vkcu_vkdev_acquire(int cuda_device, AVBufferRef **out, int *lane_out, char *err, size_t errlen)
{
    int ret = 0;
    *out = NULL;
    pthread_mutex_lock(&registry_lock);
    shared_device *sd = NULL;
    for (int i = 0; i < MAX_DEVICES && !sd; i++)
        if (devices[i].used && devices[i].cuda_device == cuda_device)
            sd = &devices[i];
    for (int i = 0; i < MAX_DEVICES && !sd; i++)
        if (!devices[i].used) {
            ret = open_master(&devices[i], cuda_device, err, errlen);
            if (ret < 0)
                goto done;
            sd = &devices[i];
        }
    if (!sd) {
        snprintf(err, errlen, "too many GPUs");
        ret = VKCU_ERR_DEVICE;
        goto done;
    }
    const char *spread = getenv("VKCU_DECODE_QUEUE_SPREAD");
    int lanes = sd->nb_decode > 1 ? (int)sd->nb_decode : 1;
    if (lanes > MAX_LANES)
        lanes = MAX_LANES;
    int lane = spread && !strcmp(spread, "0") ? 0 : (int)(sd->next_lane++ % (unsigned)lanes);
    if (real_gdq == NULL || (int)sizeof(lane_gipa) / (int)sizeof(lane_gipa[0]) <= lane) {
        snprintf(err, errlen, "internal: no queue lane");
        ret = AVERROR_BUG;
        goto done;
    }
    lane_decode_qf[lane] = sd->decode_qf;
    lane_nb_decode[lane] = sd->nb_decode;

    AVHWDeviceContext *m = (AVHWDeviceContext *)sd->master->data;
    AVBufferRef *ref = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_VULKAN);
    lane_ctx *l = av_mallocz(sizeof(*l));
    if (!ref || !l) {
        av_buffer_unref(&ref);
        av_free(l);
        ret = AVERROR(ENOMEM);
        goto done;
    }
    AVHWDeviceContext *dc = (AVHWDeviceContext *)ref->data;
    AVVulkanDeviceContext *hw = dc->hwctx;
    /* Same instance, device, features, extensions and queue families. */
    *hw = *(AVVulkanDeviceContext *)m->hwctx;
    hw->get_proc_addr = lane_gipa[lane];
    hw->lock_queue = lane_lock;
    hw->unlock_queue = lane_unlock;
    l->master = av_buffer_ref(sd->master);
    l->lane = lane;
    dc->user_opaque = l;
    dc->free = lane_free;
    if (!l->master) {
        av_buffer_unref(&ref);
        ret = AVERROR(ENOMEM);
        goto done;
    }
    ret = av_hwdevice_ctx_init(ref);
    if (ret < 0) {
        snprintf(err, errlen, "cannot share the Vulkan device with FFmpeg: %s", av_err2str(ret));
        av_buffer_unref(&ref);
        ret = VKCU_ERR_DEVICE;
        goto done;
    }
    *out = ref;
    *lane_out = lane;
done:
    pthread_mutex_unlock(&registry_lock);
    return ret;
}
