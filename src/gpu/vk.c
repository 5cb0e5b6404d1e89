/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vkcu's own Vulkan device for FFmpeg's Vulkan Video decoder and the CUDA
 * interop (see vk.h for why).
 *
 * What FFmpeg 8.1 (as 7.1) needs from a device it did not create (hwcontext_vulkan.c,
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
#include <stdlib.h>
#include <string.h>
#include <libavcodec/avcodec.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>
#include <libavutil/mem.h>
#include <libavutil/pixdesc.h>

#include "vk.h"
#include "util/ffv1_header.h"
#include "util/log.h"

/* Vulkan Video decode codecs: operation, extension, the extension's feature
 * struct (0: none). VP9 needs FFmpeg 8.1 and headers of 1.4.317 or newer. */
#ifdef VK_KHR_video_decode_vp9
#define DECODE_VP9 X(VK_VIDEO_CODEC_OPERATION_DECODE_VP9_BIT_KHR, VK_KHR_VIDEO_DECODE_VP9_EXTENSION_NAME, \
                     VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VIDEO_DECODE_VP9_FEATURES_KHR)
#else
#define DECODE_VP9
#endif
#define DECODE_CODECS                                                                                   \
    X(VK_VIDEO_CODEC_OPERATION_DECODE_H264_BIT_KHR, VK_KHR_VIDEO_DECODE_H264_EXTENSION_NAME, 0)         \
    X(VK_VIDEO_CODEC_OPERATION_DECODE_H265_BIT_KHR, VK_KHR_VIDEO_DECODE_H265_EXTENSION_NAME, 0)         \
    X(VK_VIDEO_CODEC_OPERATION_DECODE_AV1_BIT_KHR, VK_KHR_VIDEO_DECODE_AV1_EXTENSION_NAME, 0)           \
    DECODE_VP9

/* What FFmpeg 8.1's compute shaders (its FFV1, ProRes, ProRes RAW and DPX
 * decoders, its FFV1 and ProRes encoders, its Vulkan filters) use where the
 * device offers it: its own device enables these (hwcontext_vulkan.c,
 * optional_device_exts), and its codecs read the physical device's features,
 * not the enabled ones, so a device that lacked them would run shaders using
 * capabilities it never enabled. Each with the feature struct that turns it
 * on; every feature the device supports in that struct is enabled. Left out:
 * VK_EXT_host_image_copy (FFmpeg would give every frame image host-transfer
 * usage, which vkcu never uses and which can cost images their compressed
 * layouts) and the extensions for other platforms and for DRM. */
#define OPT(name, stype) X(name, stype)
#ifdef VK_KHR_shader_relaxed_extended_instruction
#define COMPUTE_RELAXED OPT(VK_KHR_SHADER_RELAXED_EXTENDED_INSTRUCTION_EXTENSION_NAME, \
                            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_RELAXED_EXTENDED_INSTRUCTION_FEATURES_KHR)
#else
#define COMPUTE_RELAXED
#endif
#ifdef VK_EXT_shader_replicated_composites
#define COMPUTE_REPLICATED OPT(VK_EXT_SHADER_REPLICATED_COMPOSITES_EXTENSION_NAME, \
                               VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_REPLICATED_COMPOSITES_FEATURES_EXT)
#else
#define COMPUTE_REPLICATED
#endif
#ifdef VK_KHR_shader_expect_assume
#define COMPUTE_EXPECT OPT(VK_KHR_SHADER_EXPECT_ASSUME_EXTENSION_NAME, \
                           VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_EXPECT_ASSUME_FEATURES_KHR)
#else
#define COMPUTE_EXPECT
#endif
#ifdef VK_EXT_shader_long_vector
#define COMPUTE_LONG_VECTOR OPT(VK_EXT_SHADER_LONG_VECTOR_EXTENSION_NAME, \
                                VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_LONG_VECTOR_FEATURES_EXT)
#else
#define COMPUTE_LONG_VECTOR
#endif
#define COMPUTE_EXTS                                                                                    \
    OPT(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME, 0)                                                       \
    OPT(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT) \
    OPT(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR) \
    OPT(VK_EXT_SHADER_OBJECT_EXTENSION_NAME, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_OBJECT_FEATURES_EXT) \
    OPT(VK_KHR_SHADER_SUBGROUP_ROTATE_EXTENSION_NAME,                                                   \
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SUBGROUP_ROTATE_FEATURES_KHR)                          \
    OPT(VK_KHR_WORKGROUP_MEMORY_EXPLICIT_LAYOUT_EXTENSION_NAME,                                         \
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_WORKGROUP_MEMORY_EXPLICIT_LAYOUT_FEATURES_KHR)                \
    COMPUTE_RELAXED COMPUTE_REPLICATED COMPUTE_EXPECT COMPUTE_LONG_VECTOR

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
#define X(bit, ext, stype) n += !!(ops & bit);
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

int vkcu_vk_decode_kind(int codec_id, VkVideoCodecOperationFlagsKHR *op)
{
    *op = 0;
    int hwaccel = 0;
    const AVCodec *c;
    void *it = NULL;
    while (!hwaccel && (c = av_codec_iterate(&it))) {
        if ((int)c->id != codec_id || !av_codec_is_decoder(c))
            continue;
        const AVCodecHWConfig *cfg;
        for (int i = 0; (cfg = avcodec_get_hw_config(c, i)); i++)
            if (cfg->device_type == AV_HWDEVICE_TYPE_VULKAN && (cfg->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX))
                hwaccel = 1;
    }
    if (!hwaccel)
        return VKCU_VK_DECODE_NONE;
    switch (codec_id) {
    case AV_CODEC_ID_H264: *op = VK_VIDEO_CODEC_OPERATION_DECODE_H264_BIT_KHR; break;
    case AV_CODEC_ID_HEVC: *op = VK_VIDEO_CODEC_OPERATION_DECODE_H265_BIT_KHR; break;
    case AV_CODEC_ID_AV1: *op = VK_VIDEO_CODEC_OPERATION_DECODE_AV1_BIT_KHR; break;
#ifdef VK_KHR_video_decode_vp9
    case AV_CODEC_ID_VP9: *op = VK_VIDEO_CODEC_OPERATION_DECODE_VP9_BIT_KHR; break;
#endif
    default: return VKCU_VK_DECODE_COMPUTE;
    }
    return VKCU_VK_DECODE_VIDEO;
}

int vkcu_vk_compute_decode_ok(int codec_id, int sw_format, const uint8_t *extradata, int extradata_size, char *why,
                              size_t whylen)
{
    const char *mode = getenv("VKCU_COMPUTE_DECODE");
    if (mode && !strcmp(mode, "off")) {
        snprintf(why, whylen, "VKCU_COMPUTE_DECODE=off");
        return 0;
    }
    if (mode && !strcmp(mode, "all"))
        return 1;
    /* FFmpeg 8.1's ProRes and ProRes RAW shaders transform in floating
     * point (libavcodec/vulkan/dct.glsl), the software decoders in integers:
     * the H200 gave other bytes on every ProRes frame of the corpus. */
    if (codec_id == AV_CODEC_ID_PRORES || codec_id == AV_CODEC_ID_PRORES_RAW) {
        snprintf(why, whylen, "FFmpeg's Vulkan %s decoder is not bit-exact to its software decoder (floating-point "
                 "IDCT)", avcodec_get_name(codec_id));
        return 0;
    }
    /* FFmpeg 8.1's Vulkan FFV1 decoder never finishes a Golomb-Rice coded
     * picture on the H200 (NVIDIA 580; its own command line hangs the same
     * way), while range-coded streams decode bit-exact. Golomb-Rice is the
     * FFV1 encoder's default at 8 bits. The coder is in the global header;
     * versions 0 and 1 have none and FFmpeg's Vulkan decoder refuses them. */
    int version, coder;
    if (codec_id == AV_CODEC_ID_FFV1 && extradata &&
        vkcu_ffv1_header_read(extradata, (size_t)extradata_size, &version, &coder) == 0 && coder == VKCU_FFV1_GOLOMB) {
        snprintf(why, whylen, "FFmpeg 8.1's Vulkan FFV1 decoder hangs on Golomb-Rice coded streams (seen with NVIDIA's driver 580)");
        return 0;
    }
    /* FFmpeg's compute decoders hand these formats out in another layout
     * than the software decoder does (ff_vk_frame_params: packed RGB for
     * planar 10-bit RGB, RGB0 for RGB24/BGR0, GBRP16 for RGB48, ...). */
    static const enum AVPixelFormat remapped[] = {
        AV_PIX_FMT_GBRAP16LE, AV_PIX_FMT_GBRAP16BE, AV_PIX_FMT_GBRP10LE, AV_PIX_FMT_GBRP10BE, AV_PIX_FMT_RGB24,
        AV_PIX_FMT_BGR0, AV_PIX_FMT_RGB48LE, AV_PIX_FMT_RGB48BE, AV_PIX_FMT_RGBA64BE, AV_PIX_FMT_GRAY16BE,
    };
    for (size_t i = 0; i < sizeof(remapped) / sizeof(remapped[0]); i++)
        if (sw_format == remapped[i]) {
            snprintf(why, whylen, "FFmpeg's Vulkan %s decoder gives %s frames in another layout",
                     avcodec_get_name(codec_id), av_get_pix_fmt_name(sw_format));
            return 0;
        }
    return 1;
}

/* feature: the extension's feature struct (0: none), whose supported
 * features vkcu_vk_device_create enables. */
static void add_ext_features(vkcu_vk_plan *plan, const char *name, VkStructureType feature)
{
    for (int i = 0; i < plan->nb_exts; i++)
        if (!strcmp(plan->exts[i], name))
            return;
    if (plan->nb_exts < VKCU_VK_MAX_EXTS) {
        plan->feature[plan->nb_exts] = feature;
        plan->exts[plan->nb_exts++] = name;
    }
}

static void add_ext(vkcu_vk_plan *plan, const char *name)
{
    add_ext_features(plan, name, (VkStructureType)0);
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
#define X(bit, ext, stype) if ((qf[i].video_ops & bit) && offers(avail, navail, ext)) ops |= bit;
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
    if (plan->decode_family >= 0) {
        add_ext(plan, VK_KHR_VIDEO_QUEUE_EXTENSION_NAME);
        add_ext(plan, VK_KHR_VIDEO_DECODE_QUEUE_EXTENSION_NAME);
#define X(bit, ext, stype) if (plan->decode_ops & bit) add_ext_features(plan, ext, stype);
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
        add_ext_features(plan, VK_KHR_VIDEO_MAINTENANCE_1_EXTENSION_NAME,
                         VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VIDEO_MAINTENANCE_1_FEATURES_KHR);
        plan->video_maintenance1 = 1;
    }
#ifdef VK_KHR_video_maintenance2
    if ((plan->decode_family >= 0 || plan->encode_family >= 0) &&
        offers(avail, navail, VK_KHR_VIDEO_MAINTENANCE_2_EXTENSION_NAME))
        add_ext_features(plan, VK_KHR_VIDEO_MAINTENANCE_2_EXTENSION_NAME,
                         VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VIDEO_MAINTENANCE_2_FEATURES_KHR);
#endif
#define X(name, stype) if (offers(avail, navail, name)) add_ext_features(plan, name, stype);
    COMPUTE_EXTS
#undef X
    return 0;
}

/* An extension's feature struct: sType, pNext, then VkBool32 features
 * only (true of every struct the extension tables above name). Queried as
 * the device supports it, then handed to vkCreateDevice as it is: every
 * supported feature of the extension on. */
typedef struct feature_block {
    VkStructureType sType;
    void *pNext;
    VkBool32 f[32];
} feature_block;

static int block_any(const feature_block *b)
{
    for (int i = 0; i < 32; i++)
        if (b->f[i])
            return 1;
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
    feature_block ext_features[VKCU_VK_MAX_EXTS];
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

/* What we enable on pd: the planned extensions' feature structs and the
 * core ones are queried (the former in place, o->ext_features), and of
 * them what FFmpeg's own device enables goes to *core and o->f11..f13.
 * 0, or AVERROR(ENOSYS) with err filled when the decoder's needs are not
 * met. */
static int choose_features(own_device *o, PFN_vkGetPhysicalDeviceFeatures2 features2, VkPhysicalDevice pd,
                           const vkcu_vk_plan *plan, VkPhysicalDeviceFeatures *core, char *err, size_t errlen)
{
    /* What the device supports: the core structs, then each planned
     * extension's feature struct, queried in place. */
    void *ext_chain = NULL;
    for (int i = plan->nb_exts - 1; i >= 0; i--)
        if (plan->feature[i]) {
            o->ext_features[i] = (feature_block){ .sType = plan->feature[i], .pNext = ext_chain };
            ext_chain = &o->ext_features[i];
        }
    VkPhysicalDeviceVulkan13Features f13 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
                                             .pNext = ext_chain };
    VkPhysicalDeviceVulkan12Features f12 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                             .pNext = &f13 };
    VkPhysicalDeviceVulkan11Features f11 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
                                             .pNext = &f12 };
    VkPhysicalDeviceFeatures2 supported = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f11 };
    features2(pd, &supported);
    if (!f12.timelineSemaphore || !f13.synchronization2) {
        snprintf(err, errlen, "the Vulkan device lacks %s (FFmpeg's Vulkan decoder needs it)",
                 !f12.timelineSemaphore ? "timeline semaphores" : "synchronization2");
        return AVERROR(ENOSYS);
    }
    /* What we turn on: what FFmpeg's own device turns on where supported
     * (hwcontext_vulkan.c, device_features_copy_needed), so that its
     * decoders, encoders and filters find the device they were written for. */
    const VkPhysicalDeviceFeatures *c = &supported.features;
    *core = (VkPhysicalDeviceFeatures){
        .shaderImageGatherExtended = c->shaderImageGatherExtended,
        .shaderStorageImageReadWithoutFormat = c->shaderStorageImageReadWithoutFormat,
        .shaderStorageImageWriteWithoutFormat = c->shaderStorageImageWriteWithoutFormat,
        .fragmentStoresAndAtomics = c->fragmentStoresAndAtomics,
        .vertexPipelineStoresAndAtomics = c->vertexPipelineStoresAndAtomics,
        .shaderInt64 = c->shaderInt64,
        .shaderInt16 = c->shaderInt16,
        .shaderFloat64 = c->shaderFloat64,
    };
    o->f13 = (VkPhysicalDeviceVulkan13Features){
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
        .synchronization2 = VK_TRUE,
        .dynamicRendering = f13.dynamicRendering,
        .maintenance4 = f13.maintenance4,
        .computeFullSubgroups = f13.computeFullSubgroups,
        .subgroupSizeControl = f13.subgroupSizeControl,
        .shaderZeroInitializeWorkgroupMemory = f13.shaderZeroInitializeWorkgroupMemory,
    };
    o->f12 = (VkPhysicalDeviceVulkan12Features){
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
        .pNext = &o->f13,
        .timelineSemaphore = VK_TRUE,
        .hostQueryReset = f12.hostQueryReset,
        .scalarBlockLayout = f12.scalarBlockLayout,
        .bufferDeviceAddress = f12.bufferDeviceAddress,
        .storagePushConstant8 = f12.storagePushConstant8,
        .shaderInt8 = f12.shaderInt8,
        .storageBuffer8BitAccess = f12.storageBuffer8BitAccess,
        .uniformAndStorageBuffer8BitAccess = f12.uniformAndStorageBuffer8BitAccess,
        .shaderFloat16 = f12.shaderFloat16,
        .shaderBufferInt64Atomics = f12.shaderBufferInt64Atomics,
        .shaderSharedInt64Atomics = f12.shaderSharedInt64Atomics,
        .vulkanMemoryModel = f12.vulkanMemoryModel,
        .vulkanMemoryModelDeviceScope = f12.vulkanMemoryModelDeviceScope,
        .vulkanMemoryModelAvailabilityVisibilityChains = f12.vulkanMemoryModelAvailabilityVisibilityChains,
        .uniformBufferStandardLayout = f12.uniformBufferStandardLayout,
        .runtimeDescriptorArray = f12.runtimeDescriptorArray,
        .shaderSubgroupExtendedTypes = f12.shaderSubgroupExtendedTypes,
        .shaderUniformBufferArrayNonUniformIndexing = f12.shaderUniformBufferArrayNonUniformIndexing,
        .shaderSampledImageArrayNonUniformIndexing = f12.shaderSampledImageArrayNonUniformIndexing,
        .shaderStorageBufferArrayNonUniformIndexing = f12.shaderStorageBufferArrayNonUniformIndexing,
        .shaderStorageImageArrayNonUniformIndexing = f12.shaderStorageImageArrayNonUniformIndexing,
    };
    o->f11 = (VkPhysicalDeviceVulkan11Features){
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
        .pNext = &o->f12,
        .samplerYcbcrConversion = f11.samplerYcbcrConversion,
        .storagePushConstant16 = f11.storagePushConstant16,
        .storageBuffer16BitAccess = f11.storageBuffer16BitAccess,
        .uniformAndStorageBuffer16BitAccess = f11.uniformAndStorageBuffer16BitAccess,
    };
    return 0;
}

/* The planned extensions enabled on o (their names in o->exts), their
 * feature structs chained after o->f13. Returns how many; *vm1_on: video
 * maintenance 1 is one of them. */
static int chain_extensions(own_device *o, const vkcu_vk_plan *plan, int *vm1_on)
{
    /* An extension whose struct the device supports none of is left out:
     * enabled, it would change nothing but which paths FFmpeg takes (video
     * maintenance 1 alone changes the images' flags). */
    int nb_exts = 0;
    void **link = &o->f13.pNext;
    for (int i = 0; i < plan->nb_exts && nb_exts < VKCU_VK_MAX_EXTS; i++) {
        if (plan->feature[i]) {
            if (!block_any(&o->ext_features[i]))
                continue;
            o->ext_features[i].pNext = NULL;
            *link = &o->ext_features[i];
            link = &o->ext_features[i].pNext;
        }
        if (!strcmp(plan->exts[i], VK_KHR_VIDEO_MAINTENANCE_1_EXTENSION_NAME))
            *vm1_on = 1;
        o->exts[nb_exts++] = plan->exts[i];
    }
    return nb_exts;
}

/* The queues to create: one entry per family; a family serving two roles
 * (lavapipe's one family) gets the larger count. made[]: the queues
 * created in each role's family (compute, decode, encode). Returns the
 * entries in qci, or -1 with err filled. */
static int queue_infos(const vkcu_vk_plan *plan, const float *prio, VkDeviceQueueCreateInfo qci[3], uint32_t made[3],
                       char *err, size_t errlen)
{
    struct { int family; uint32_t count; } roles[3] = {
        { plan->compute_family, plan->nb_compute },
        { plan->decode_family, plan->nb_decode },
        { plan->encode_family, plan->encode_family >= 0 ? 1 : 0 },
    };
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
            return -1;
        }
    }
    for (int r = 0; r < 3; r++)
        for (uint32_t k = 0; k < nqci; k++)
            if (roles[r].family >= 0 && qci[k].queueFamilyIndex == (uint32_t)roles[r].family)
                made[r] = qci[k].queueCount;
    return (int)nqci;
}

/* The queue families of our device as FFmpeg's context says them (and the
 * fixed-queue fields its init still validates). */
static void set_queue_families(AVVulkanDeviceContext *hw, const vkcu_vk_plan *plan, const uint32_t made[3])
{
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
    /* FFmpeg's init (7.1, and 8.1 while FF_API_VULKAN_FIXED_QUEUES) still validates the fixed-queue fields. */
    hw->queue_family_index = -1;
    hw->nb_graphics_queues = 0;
    hw->queue_family_comp_index = hw->queue_family_tx_index = plan->compute_family;
    hw->nb_comp_queues = hw->nb_tx_queues = (int)made[0];
    hw->queue_family_encode_index = made[2] ? plan->encode_family : -1;
    hw->nb_encode_queues = (int)made[2];
    hw->queue_family_decode_index = made[1] ? plan->decode_family : -1;
    hw->nb_decode_queues = (int)made[1];
#pragma GCC diagnostic pop
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

    VkPhysicalDeviceFeatures core;
    if ((ret = choose_features(o, features2, pd, plan, &core, err, errlen)) < 0)
        goto fail;
    int vm1_on = 0;
    int nb_exts = chain_extensions(o, plan, &vm1_on);

    /* One create entry per family; a family serving two roles (lavapipe's
     * one family) gets the larger count. */
    float prio[64];
    for (int i = 0; i < 64; i++)
        prio[i] = 1.0f;
    VkDeviceQueueCreateInfo qci[3];
    uint32_t made[3] = { 0 }; /* queues created in each role's family */
    int nqci = queue_infos(plan, prio, qci, made, err, errlen);
    if (nqci < 0) {
        ret = AVERROR_BUG;
        goto fail;
    }
    VkPhysicalDeviceFeatures2 enable = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .features = core,
                                         .pNext = &o->f11 };
    VkDeviceCreateInfo dci = { .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                               .pNext = &enable,
                               .queueCreateInfoCount = (uint32_t)nqci,
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
    set_queue_families(hw, plan, made);
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
