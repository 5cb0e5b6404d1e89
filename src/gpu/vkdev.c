/*
 * vkcu's own Vulkan device for FFmpeg's Vulkan Video decoder and the CUDA
 * interop (see vkdev.h for why).
 *
 * What FFmpeg 7.1 needs from a device it did not create (hwcontext_vulkan.c,
 * vulkan_decode.c): the instance, physical and logical device and
 * vkGetInstanceProcAddr; the enabled device extensions by name (it derives
 * its extension mask from them: the decoder refuses to start without
 * VK_KHR_video_decode_queue); queue families in qf[] with a COMPUTE and a
 * TRANSFER entry (it asserts both exist) and the decode family with its
 * codec operations; the deprecated fixed-queue fields, which its init still
 * checks; timeline semaphores and synchronization2 enabled (its frames and
 * command submission use both). The feature chain in device_features is
 * what we enabled, for API users that read it.
 *
 * One compute queue serves transfers too: compute families accept transfer
 * commands, and FFmpeg only uses these queues to set up frames.
 */
#include <string.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>
#include <libavutil/mem.h>

#include "vkdev.h"
#include "util/log.h"

#define DECODE_CODECS                                                                                   \
    X(VK_VIDEO_CODEC_OPERATION_DECODE_H264_BIT_KHR, VK_KHR_VIDEO_DECODE_H264_EXTENSION_NAME)            \
    X(VK_VIDEO_CODEC_OPERATION_DECODE_H265_BIT_KHR, VK_KHR_VIDEO_DECODE_H265_EXTENSION_NAME)            \
    X(VK_VIDEO_CODEC_OPERATION_DECODE_AV1_BIT_KHR, VK_KHR_VIDEO_DECODE_AV1_EXTENSION_NAME)

static int offers(const char *const *avail, int navail, const char *name)
{
    for (int i = 0; i < navail; i++)
        if (!strcmp(avail[i], name))
            return 1;
    return 0;
}

static int nb_codecs(VkVideoCodecOperationFlagsKHR ops)
{
    int n = 0;
#define X(bit, ext) n += !!(ops & bit);
    DECODE_CODECS
#undef X
    return n;
}

int vkcu_vk_plan_device(const vkcu_vk_queue_family *qf, int nqf, const char *const *avail, int navail,
                        unsigned flags, uint32_t want_compute, uint32_t max_decode, vkcu_vk_plan *plan, char *err,
                        size_t errlen)
{
    memset(plan, 0, sizeof(*plan));
    plan->compute_family = plan->decode_family = -1;
    const VkQueueFlags video = VK_QUEUE_VIDEO_DECODE_BIT_KHR | VK_QUEUE_VIDEO_ENCODE_BIT_KHR;
    /* A compute family without graphics or video: FFmpeg's pick too, and
     * on NVIDIA the graphics family's queues are the costly ones to create. */
    for (int pass = 0; pass < 2 && plan->compute_family < 0; pass++)
        for (int i = 0; i < nqf && plan->compute_family < 0; i++)
            if ((qf[i].flags & VK_QUEUE_COMPUTE_BIT) && qf[i].count &&
                (pass || !(qf[i].flags & (VK_QUEUE_GRAPHICS_BIT | video))))
                plan->compute_family = i;
    if (plan->compute_family < 0) {
        snprintf(err, errlen, "no compute queue family");
        return -1;
    }
    uint32_t have = qf[plan->compute_family].count;
    plan->nb_compute = want_compute < 1 ? 1 : want_compute > have ? have : want_compute;

    int video_exts = offers(avail, navail, VK_KHR_VIDEO_QUEUE_EXTENSION_NAME) &&
                     offers(avail, navail, VK_KHR_VIDEO_DECODE_QUEUE_EXTENSION_NAME);
    int best = 0;
    for (int i = 0; video_exts && i < nqf; i++) {
        VkVideoCodecOperationFlagsKHR ops = 0;
        if (!(qf[i].flags & VK_QUEUE_VIDEO_DECODE_BIT_KHR) || !qf[i].count)
            continue;
#define X(bit, ext) if ((qf[i].video_ops & bit) && offers(avail, navail, ext)) ops |= bit;
        DECODE_CODECS
#undef X
        if (nb_codecs(ops) > best) {
            best = nb_codecs(ops);
            plan->decode_family = i;
            plan->decode_ops = ops;
        }
    }
    if (plan->decode_family >= 0) {
        have = qf[plan->decode_family].count;
        plan->nb_decode = max_decode < 1 ? 1 : max_decode > have ? have : max_decode;
    } else if (flags & VKCU_PLAN_DECODE) {
        snprintf(err, errlen, "no Vulkan video decode queue family (H.264, HEVC or AV1)");
        return -1;
    }

    const char *interop[] = { VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME };
    for (int i = 0; i < 2; i++) {
        if (offers(avail, navail, interop[i]))
            plan->exts[plan->nb_exts++] = interop[i];
        else if (flags & VKCU_PLAN_INTEROP) {
            snprintf(err, errlen, "the device lacks %s (needed to hand frames to CUDA)", interop[i]);
            return -1;
        }
    }
    /* FFmpeg's frame transfers (av_hwframe_transfer_data) map host memory
     * with it; without it they take a staging-buffer path that FFmpeg's own
     * device never takes where the extension is offered (and that returned
     * wrong bytes on lavapipe: test_vkdev). */
    if (offers(avail, navail, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME))
        plan->exts[plan->nb_exts++] = VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME;
    if (plan->decode_family >= 0) {
        plan->exts[plan->nb_exts++] = VK_KHR_VIDEO_QUEUE_EXTENSION_NAME;
        plan->exts[plan->nb_exts++] = VK_KHR_VIDEO_DECODE_QUEUE_EXTENSION_NAME;
#define X(bit, ext) if (plan->decode_ops & bit) plan->exts[plan->nb_exts++] = ext;
        DECODE_CODECS
#undef X
        /* FFmpeg's own device enables it where offered, and its decoder then
         * creates profile-independent images: keep the decode path the same. */
        if (offers(avail, navail, VK_KHR_VIDEO_MAINTENANCE_1_EXTENSION_NAME)) {
            plan->exts[plan->nb_exts++] = VK_KHR_VIDEO_MAINTENANCE_1_EXTENSION_NAME;
            plan->video_maintenance1 = 1;
        }
    }
    return 0;
}

int vkcu_vk_device_exts(const vkcu_vkfn *fn, VkPhysicalDevice pd, VkExtensionProperties *store, const char **names,
                        int max)
{
    uint32_t n = (uint32_t)max;
    if (fn->vkEnumerateDeviceExtensionProperties(pd, NULL, &n, store) < 0)
        return 0;
    for (uint32_t i = 0; i < n; i++)
        names[i] = store[i].extensionName;
    return (int)n;
}

VkInstance vkcu_vk_instance_create(vkcu_vkfn *fn, char *err, size_t errlen)
{
    PFN_vkGetInstanceProcAddr gipa = vkcu_vk_loader();
    const char *missing = NULL;
    VkInstance inst = VK_NULL_HANDLE;
    if (!gipa) {
        snprintf(err, errlen, "no Vulkan loader (libvulkan.so.1) on this machine");
        return VK_NULL_HANDLE;
    }
    vkcu_vk_load(fn, gipa, NULL, NULL, &missing);
    VkApplicationInfo app = { .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "vkcu",
                              .apiVersion = VK_API_VERSION_1_3 };
    VkInstanceCreateInfo ci = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app };
    VkResult r = fn->vkCreateInstance ? fn->vkCreateInstance(&ci, NULL, &inst) : VK_ERROR_INITIALIZATION_FAILED;
    if (r != VK_SUCCESS) {
        snprintf(err, errlen, "cannot create a Vulkan 1.3 instance (%s; no Vulkan driver?)", vkcu_vk_result_str(r));
        return VK_NULL_HANDLE;
    }
    if (vkcu_vk_load(fn, gipa, inst, NULL, &missing) < 0) {
        snprintf(err, errlen, "the Vulkan loader lacks %s", missing);
        PFN_vkDestroyInstance destroy = (PFN_vkDestroyInstance)gipa(inst, "vkDestroyInstance");
        if (destroy)
            destroy(inst, NULL);
        return VK_NULL_HANDLE;
    }
    return inst;
}

/* Everything the AVHWDeviceContext points into, and what its free destroys. */
typedef struct own_device {
    PFN_vkDestroyDevice destroy_device;
    PFN_vkDestroyInstance destroy_instance;
    VkInstance inst;
    int owns_instance;
    VkDevice dev;
    const char *exts[VKCU_VK_MAX_EXTS];
    VkPhysicalDeviceVulkan11Features f11;
    VkPhysicalDeviceVulkan12Features f12;
    VkPhysicalDeviceVulkan13Features f13;
    VkPhysicalDeviceVideoMaintenance1FeaturesKHR vm1;
} own_device;

static void own_device_free(own_device *o)
{
    if (!o)
        return;
    if (o->dev)
        o->destroy_device(o->dev, NULL);
    if (o->owns_instance && o->inst)
        o->destroy_instance(o->inst, NULL);
    av_free(o);
}

static void own_device_ctx_free(AVHWDeviceContext *ctx)
{
    own_device_free(ctx->user_opaque);
    ctx->user_opaque = NULL;
}

int vkcu_vk_device_create(const vkcu_vkfn *fn, VkInstance inst, int owns_instance, VkPhysicalDevice pd,
                          const vkcu_vk_plan *plan, AVBufferRef **out, char *err, size_t errlen)
{
    *out = NULL;
    own_device *o = av_mallocz(sizeof(*o));
    if (!o) {
        if (owns_instance)
            fn->vkDestroyInstance(inst, NULL);
        return AVERROR(ENOMEM);
    }
    PFN_vkGetInstanceProcAddr gipa = fn->vkGetInstanceProcAddr;
    o->inst = inst;
    o->owns_instance = owns_instance;
    o->destroy_instance = fn->vkDestroyInstance;
    o->destroy_device = (PFN_vkDestroyDevice)gipa(inst, "vkDestroyDevice");
    PFN_vkCreateDevice create = (PFN_vkCreateDevice)gipa(inst, "vkCreateDevice");
    PFN_vkGetPhysicalDeviceFeatures2 features2 =
        (PFN_vkGetPhysicalDeviceFeatures2)gipa(inst, "vkGetPhysicalDeviceFeatures2");
    AVBufferRef *ref = NULL;
    int ret;
    if (!o->destroy_device || !create || !features2) {
        snprintf(err, errlen, "the Vulkan loader lacks vkCreateDevice or vkGetPhysicalDeviceFeatures2");
        ret = AVERROR(ENOSYS);
        goto fail;
    }

    /* What the device supports, then what we turn on. */
    VkPhysicalDeviceVideoMaintenance1FeaturesKHR vm1 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VIDEO_MAINTENANCE_1_FEATURES_KHR };
    VkPhysicalDeviceVulkan13Features f13 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
                                             .pNext = plan->video_maintenance1 ? &vm1 : NULL };
    VkPhysicalDeviceVulkan12Features f12 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                             .pNext = &f13 };
    VkPhysicalDeviceVulkan11Features f11 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
                                             .pNext = &f12 };
    VkPhysicalDeviceFeatures2 supported = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f11 };
    features2(pd, &supported);
    if (!f12.timelineSemaphore || !f13.synchronization2) {
        snprintf(err, errlen, "the Vulkan device lacks %s (FFmpeg's Vulkan decoder needs it)",
                 !f12.timelineSemaphore ? "timeline semaphores" : "synchronization2");
        ret = AVERROR(ENOSYS);
        goto fail;
    }
    o->vm1 = (VkPhysicalDeviceVideoMaintenance1FeaturesKHR){
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VIDEO_MAINTENANCE_1_FEATURES_KHR,
        .videoMaintenance1 = vm1.videoMaintenance1 };
    o->f13 = (VkPhysicalDeviceVulkan13Features){ .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
                                                 .synchronization2 = VK_TRUE };
    o->f12 = (VkPhysicalDeviceVulkan12Features){ .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                                 .pNext = &o->f13,
                                                 .timelineSemaphore = VK_TRUE,
                                                 .hostQueryReset = f12.hostQueryReset };
    o->f11 = (VkPhysicalDeviceVulkan11Features){ .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
                                                 .pNext = &o->f12,
                                                 .samplerYcbcrConversion = f11.samplerYcbcrConversion };
    int nb_exts = 0;
    for (int i = 0; i < plan->nb_exts && nb_exts < VKCU_VK_MAX_EXTS; i++) {
        /* The extension without its feature would change nothing but the images' flags FFmpeg asks for. */
        if (!strcmp(plan->exts[i], VK_KHR_VIDEO_MAINTENANCE_1_EXTENSION_NAME) && !vm1.videoMaintenance1)
            continue;
        o->exts[nb_exts++] = plan->exts[i];
    }
    int vm1_on = plan->video_maintenance1 && vm1.videoMaintenance1;
    if (vm1_on)
        o->f13.pNext = &o->vm1;

    float prio[64];
    for (int i = 0; i < 64; i++)
        prio[i] = 1.0f;
    VkDeviceQueueCreateInfo qci[2] = {
        { .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = (uint32_t)plan->compute_family,
          .queueCount = plan->nb_compute, .pQueuePriorities = prio },
        { .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = (uint32_t)plan->decode_family,
          .queueCount = plan->nb_decode, .pQueuePriorities = prio },
    };
    uint32_t nqci = plan->decode_family >= 0 ? 2 : 1;
    if (plan->decode_family == plan->compute_family) { /* one family does both: one entry, the larger count */
        qci[0].queueCount = plan->nb_compute > plan->nb_decode ? plan->nb_compute : plan->nb_decode;
        nqci = 1;
    }
    if (qci[0].queueCount > 64 || qci[1].queueCount > 64) {
        snprintf(err, errlen, "internal: more than 64 queues asked for");
        ret = AVERROR_BUG;
        goto fail;
    }
    VkPhysicalDeviceFeatures2 enable = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &o->f11 };
    VkDeviceCreateInfo dci = { .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                               .pNext = &enable,
                               .queueCreateInfoCount = nqci,
                               .pQueueCreateInfos = qci,
                               .enabledExtensionCount = (uint32_t)nb_exts,
                               .ppEnabledExtensionNames = o->exts };
    VkResult vr = create(pd, &dci, NULL, &o->dev);
    if (vr != VK_SUCCESS) {
        o->dev = VK_NULL_HANDLE;
        snprintf(err, errlen, "vkCreateDevice failed: %s", vkcu_vk_result_str(vr));
        ret = AVERROR_EXTERNAL;
        goto fail;
    }

    ref = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_VULKAN);
    if (!ref) {
        ret = AVERROR(ENOMEM);
        goto fail;
    }
    AVHWDeviceContext *dc = (AVHWDeviceContext *)ref->data;
    AVVulkanDeviceContext *hw = dc->hwctx;
    dc->user_opaque = o;
    dc->free = own_device_ctx_free;
    o = NULL; /* the context owns it now */
    own_device *own = dc->user_opaque;
    hw->get_proc_addr = gipa;
    hw->inst = inst;
    hw->phys_dev = pd;
    hw->act_dev = own->dev;
    hw->device_features = enable;
    hw->enabled_dev_extensions = own->exts;
    hw->nb_enabled_dev_extensions = nb_exts;
    hw->qf[0] = (AVVulkanDeviceQueueFamily){ .idx = plan->compute_family,
                                             .num = (int)qci[0].queueCount,
                                             .flags = (VkQueueFlagBits)(VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT) };
    hw->nb_qf = 1;
    if (plan->decode_family >= 0)
        hw->qf[hw->nb_qf++] = (AVVulkanDeviceQueueFamily){
            .idx = plan->decode_family,
            .num = (int)(nqci == 2 ? qci[1].queueCount : qci[0].queueCount),
            .flags = VK_QUEUE_VIDEO_DECODE_BIT_KHR,
            .video_caps = (VkVideoCodecOperationFlagBitsKHR)plan->decode_ops };
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    /* FFmpeg 7.1's init still validates the fixed-queue fields. */
    hw->queue_family_index = -1;
    hw->nb_graphics_queues = 0;
    hw->queue_family_comp_index = hw->queue_family_tx_index = plan->compute_family;
    hw->nb_comp_queues = hw->nb_tx_queues = hw->qf[0].num;
    hw->queue_family_encode_index = -1;
    hw->nb_encode_queues = 0;
    hw->queue_family_decode_index = plan->decode_family;
    hw->nb_decode_queues = plan->decode_family >= 0 ? hw->qf[hw->nb_qf - 1].num : 0;
#pragma GCC diagnostic pop
    ret = av_hwdevice_ctx_init(ref);
    if (ret < 0) {
        snprintf(err, errlen, "FFmpeg did not accept the Vulkan device: %s", av_err2str(ret));
        goto fail;
    }
    LOGD("Vulkan device: %d extensions, %u compute queue(s) in family %d, %u decode queue(s) in family %d%s", nb_exts,
         hw->qf[0].num, plan->compute_family, plan->decode_family >= 0 ? plan->nb_decode : 0, plan->decode_family,
         vm1_on ? ", video maintenance 1" : "");
    *out = ref;
    return 0;
fail:
    if (ref)
        av_buffer_unref(&ref); /* frees the device (and instance) through own_device_ctx_free */
    else
        own_device_free(o);
    return ret;
}
