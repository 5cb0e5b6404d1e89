/* SPDX-License-Identifier: GPL-2.0-or-later */
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
#include "vkshader.h"
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

static const char *encode_ext(VkVideoCodecOperationFlagsKHR op)
{
    return op == VK_VIDEO_CODEC_OPERATION_ENCODE_H264_BIT_KHR   ? VK_KHR_VIDEO_ENCODE_H264_EXTENSION_NAME
           : op == VK_VIDEO_CODEC_OPERATION_ENCODE_H265_BIT_KHR ? VK_KHR_VIDEO_ENCODE_H265_EXTENSION_NAME
                                                                : NULL;
}

static void add_ext(vkcu_vk_plan *plan, const char *name)
{
    for (int i = 0; i < plan->nb_exts; i++)
        if (!strcmp(plan->exts[i], name))
            return;
    if (plan->nb_exts < VKCU_VK_MAX_EXTS)
        plan->exts[plan->nb_exts++] = name;
}

int vkcu_vk_plan_device(const vkcu_vk_queue_family *qf, int nqf, const char *const *avail, int navail,
                        const vkcu_vk_plan_want *want, vkcu_vk_plan *plan, char *err, size_t errlen)
{
    memset(plan, 0, sizeof(*plan));
    plan->compute_family = plan->decode_family = plan->encode_family = -1;
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
    plan->nb_compute = want->compute < 1 ? 1 : want->compute > have ? have : want->compute;

    int video_exts = offers(avail, navail, VK_KHR_VIDEO_QUEUE_EXTENSION_NAME) &&
                     offers(avail, navail, VK_KHR_VIDEO_DECODE_QUEUE_EXTENSION_NAME);
    int best = 0;
    for (int i = 0; want->decode && video_exts && i < nqf; i++) {
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
        plan->nb_decode = want->decode > have ? have : want->decode;
    } else if (want->flags & VKCU_PLAN_DECODE) {
        snprintf(err, errlen, "no Vulkan video decode queue family (H.264, HEVC or AV1)");
        return -1;
    }

    /* FFmpeg's Vulkan encoders refuse a device without video maintenance 1. */
    const char *enc_ext = encode_ext(want->encode);
    if (want->encode) {
        int exts_ok = enc_ext && offers(avail, navail, VK_KHR_VIDEO_QUEUE_EXTENSION_NAME) &&
                      offers(avail, navail, VK_KHR_VIDEO_ENCODE_QUEUE_EXTENSION_NAME) &&
                      offers(avail, navail, enc_ext) && offers(avail, navail, VK_KHR_VIDEO_MAINTENANCE_1_EXTENSION_NAME);
        for (int i = 0; exts_ok && i < nqf && plan->encode_family < 0; i++)
            if ((qf[i].flags & VK_QUEUE_VIDEO_ENCODE_BIT_KHR) && qf[i].count && (qf[i].video_ops & want->encode))
                plan->encode_family = i;
        if (plan->encode_family < 0) {
            snprintf(err, errlen, "no Vulkan video encode queue for %s",
                     want->encode == VK_VIDEO_CODEC_OPERATION_ENCODE_H265_BIT_KHR ? "HEVC" : "H.264");
            return -1;
        }
        plan->encode_ops = want->encode;
    }

    const char *interop[] = { VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME };
    for (int i = 0; i < 2; i++) {
        if (offers(avail, navail, interop[i]))
            add_ext(plan, interop[i]);
        else if (want->flags & VKCU_PLAN_INTEROP) {
            snprintf(err, errlen, "the device lacks %s (needed to hand frames to CUDA)", interop[i]);
            return -1;
        }
    }
    /* FFmpeg's frame transfers (av_hwframe_transfer_data) map host memory
     * with it; without it they take a staging-buffer path that FFmpeg's own
     * device never takes where the extension is offered (and that returned
     * wrong bytes on lavapipe: test_vkdev). */
    if (offers(avail, navail, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME))
        add_ext(plan, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
    /* FFmpeg's precompiled compute encoder shaders use it where their
     * compiler had it (vkshader.h); FFmpeg's own device enables it. */
    const char *shader_ext = vkcu_vk_shader_extension();
    if (shader_ext && offers(avail, navail, shader_ext))
        add_ext(plan, shader_ext);
    if (plan->decode_family >= 0) {
        add_ext(plan, VK_KHR_VIDEO_QUEUE_EXTENSION_NAME);
        add_ext(plan, VK_KHR_VIDEO_DECODE_QUEUE_EXTENSION_NAME);
#define X(bit, ext) if (plan->decode_ops & bit) add_ext(plan, ext);
        DECODE_CODECS
#undef X
    }
    if (plan->encode_family >= 0) {
        add_ext(plan, VK_KHR_VIDEO_QUEUE_EXTENSION_NAME);
        add_ext(plan, VK_KHR_VIDEO_ENCODE_QUEUE_EXTENSION_NAME);
        add_ext(plan, enc_ext);
    }
    /* FFmpeg's own device enables it where offered, and its decoder then
     * creates profile-independent images: keep the decode path the same. */
    if ((plan->decode_family >= 0 || plan->encode_family >= 0) &&
        offers(avail, navail, VK_KHR_VIDEO_MAINTENANCE_1_EXTENSION_NAME)) {
        add_ext(plan, VK_KHR_VIDEO_MAINTENANCE_1_EXTENSION_NAME);
        plan->video_maintenance1 = 1;
    }
    return 0;
}

/* Everything the AVHWDeviceContext points into, and what its free destroys. */
typedef struct own_device {
    PFN_vkDestroyDevice destroy_device;
    VkDevice dev;
    const char *exts[VKCU_VK_MAX_EXTS];
    VkPhysicalDeviceVulkan11Features f11;
    VkPhysicalDeviceVulkan12Features f12;
    VkPhysicalDeviceVulkan13Features f13;
    VkPhysicalDeviceVideoMaintenance1FeaturesKHR vm1;
#ifdef VK_KHR_shader_expect_assume
    VkPhysicalDeviceShaderExpectAssumeFeaturesKHR expect_assume;
#endif
} own_device;

static void own_device_free(own_device *o)
{
    if (!o)
        return;
    if (o->dev)
        o->destroy_device(o->dev, NULL);
    av_free(o);
}

static void own_device_ctx_free(AVHWDeviceContext *ctx)
{
    own_device_free(ctx->user_opaque);
    ctx->user_opaque = NULL;
}

int vkcu_vk_device_create(const vkcu_vk_instance *vi, int index, const vkcu_vk_plan *plan, AVBufferRef **out,
                          vkcu_vk_device_stamps *stamps, char *err, size_t errlen)
{
    vkcu_vk_device_stamps st = { .start = vkcu_now() };
    *out = NULL;
    if (index < 0 || index >= vi->nb_devs) {
        snprintf(err, errlen, "internal: no Vulkan device %d", index);
        return AVERROR_BUG;
    }
    own_device *o = av_mallocz(sizeof(*o));
    if (!o)
        return AVERROR(ENOMEM);
    PFN_vkGetInstanceProcAddr gipa = vi->fn.vkGetInstanceProcAddr;
    VkInstance inst = vi->inst;
    VkPhysicalDevice pd = vi->devs[index].pd;
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
    /* The shader features FFmpeg's own device enables, where this one has
     * them: its compute encoders and filters run on this device as on its. */
    VkPhysicalDeviceFeatures f10 = { 0 };
    {
        vkcu_vk_features sup, en = { .f10 = f10, .f11 = o->f11, .f12 = o->f12, .f13 = o->f13 };
        vkcu_vk_features_query(gipa, inst, pd, plan->exts, plan->nb_exts, &sup);
        vkcu_vk_shader_features_enable(&sup, &en);
        f10 = en.f10;
        const void *n11 = o->f11.pNext, *n12 = o->f12.pNext, *n13 = o->f13.pNext;
        o->f11 = en.f11;
        o->f12 = en.f12;
        o->f13 = en.f13;
        o->f11.pNext = (void *)n11;
        o->f12.pNext = (void *)n12;
        o->f13.pNext = (void *)n13;
#ifdef VK_KHR_shader_expect_assume
        const char *shader_ext = vkcu_vk_shader_extension();
        int ext_on = 0;
        for (int i = 0; i < nb_exts; i++)
            ext_on |= !strcmp(o->exts[i], shader_ext);
        if (ext_on && en.expect_assume) {
            o->expect_assume = (VkPhysicalDeviceShaderExpectAssumeFeaturesKHR){
                .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_EXPECT_ASSUME_FEATURES_KHR,
                .pNext = o->f13.pNext, .shaderExpectAssume = VK_TRUE };
            o->f13.pNext = &o->expect_assume;
        } else if (ext_on) { /* offered without its feature: leave the extension off */
            for (int i = 0, k = 0; i < nb_exts; i++)
                if (strcmp(o->exts[i], shader_ext))
                    o->exts[k++] = o->exts[i];
            nb_exts--;
        }
#endif
    }

    /* One create entry per family; a family serving two roles (lavapipe's
     * one family) gets the larger count. */
    float prio[64];
    for (int i = 0; i < 64; i++)
        prio[i] = 1.0f;
    struct { int family; uint32_t count; } roles[3] = {
        { plan->compute_family, plan->nb_compute },
        { plan->decode_family, plan->nb_decode },
        { plan->encode_family, plan->encode_family >= 0 ? 1 : 0 },
    };
    VkDeviceQueueCreateInfo qci[3];
    uint32_t nqci = 0;
    for (int r = 0; r < 3; r++) {
        if (roles[r].family < 0 || !roles[r].count)
            continue;
        uint32_t k = 0;
        while (k < nqci && qci[k].queueFamilyIndex != (uint32_t)roles[r].family)
            k++;
        if (k == nqci)
            qci[nqci++] = (VkDeviceQueueCreateInfo){ .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                                     .queueFamilyIndex = (uint32_t)roles[r].family,
                                                     .pQueuePriorities = prio };
        if (roles[r].count > qci[k].queueCount)
            qci[k].queueCount = roles[r].count;
        if (qci[k].queueCount > 64) {
            snprintf(err, errlen, "internal: more than 64 queues asked for");
            ret = AVERROR_BUG;
            goto fail;
        }
    }
    uint32_t made[3] = { 0 }; /* queues created in each role's family */
    for (int r = 0; r < 3; r++)
        for (uint32_t k = 0; k < nqci; k++)
            if (roles[r].family >= 0 && qci[k].queueFamilyIndex == (uint32_t)roles[r].family)
                made[r] = qci[k].queueCount;
    VkPhysicalDeviceFeatures2 enable = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &o->f11,
                                         .features = f10 };
    VkDeviceCreateInfo dci = { .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                               .pNext = &enable,
                               .queueCreateInfoCount = nqci,
                               .pQueueCreateInfos = qci,
                               .enabledExtensionCount = (uint32_t)nb_exts,
                               .ppEnabledExtensionNames = o->exts };
    VkResult vr = create(pd, &dci, NULL, &o->dev);
    st.created = vkcu_now();
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
                                             .num = (int)made[0],
                                             .flags = (VkQueueFlagBits)(VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT) };
    hw->nb_qf = 1;
    if (made[1])
        hw->qf[hw->nb_qf++] = (AVVulkanDeviceQueueFamily){
            .idx = plan->decode_family,
            .num = (int)made[1],
            .flags = VK_QUEUE_VIDEO_DECODE_BIT_KHR,
            .video_caps = (VkVideoCodecOperationFlagBitsKHR)plan->decode_ops };
    if (made[2])
        hw->qf[hw->nb_qf++] = (AVVulkanDeviceQueueFamily){
            .idx = plan->encode_family,
            .num = (int)made[2],
            .flags = VK_QUEUE_VIDEO_ENCODE_BIT_KHR,
            .video_caps = (VkVideoCodecOperationFlagBitsKHR)plan->encode_ops };
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    /* FFmpeg 7.1's init still validates the fixed-queue fields. */
    hw->queue_family_index = -1;
    hw->nb_graphics_queues = 0;
    hw->queue_family_comp_index = hw->queue_family_tx_index = plan->compute_family;
    hw->nb_comp_queues = hw->nb_tx_queues = (int)made[0];
    hw->queue_family_encode_index = made[2] ? plan->encode_family : -1;
    hw->nb_encode_queues = (int)made[2];
    hw->queue_family_decode_index = made[1] ? plan->decode_family : -1;
    hw->nb_decode_queues = (int)made[1];
#pragma GCC diagnostic pop
    ret = av_hwdevice_ctx_init(ref);
    if (ret < 0) {
        snprintf(err, errlen, "FFmpeg did not accept the Vulkan device: %s", av_err2str(ret));
        goto fail;
    }
    st.initialised = vkcu_now();
    if (stamps)
        *stamps = st;
    LOGD("Vulkan device: %d extensions, %u compute queue(s) in family %d, %u decode queue(s) in family %d, %u encode "
         "queue(s) in family %d%s; vkCreateDevice %.0f ms, FFmpeg's init %.0f ms", nb_exts, made[0],
         plan->compute_family, made[1], plan->decode_family, made[2], plan->encode_family,
         vm1_on ? ", video maintenance 1" : "", (st.created - st.start) * 1e3, (st.initialised - st.created) * 1e3);
    *out = ref;
    return 0;
fail:
    if (ref)
        av_buffer_unref(&ref); /* frees the device through own_device_ctx_free */
    else
        own_device_free(o);
    return ret;
}
