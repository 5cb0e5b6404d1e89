/* SPDX-License-Identifier: GPL-2.0-or-later */
/* FFmpeg's Vulkan shaders' device features (see vkshader.h). */
#include <stdio.h>
#include <string.h>

#include "vkshader.h"

enum { L10, L11, L12, L13 };

/* The features FFmpeg 8.1's own device enables where offered
 * (hwcontext_vulkan.c, device_features_copy_needed) that shaders use, and
 * which of FFmpeg 8.1's compute encoders need each: the SPIR-V capabilities
 * their precompiled shaders declare (spirv-dis of libavcodec/vulkan/
 * ffv1_enc*.comp.spv and prores_ks_*.comp.spv): Int8/16/64, the 8- and
 * 16-bit storage and push constant capabilities, StorageImageRead/
 * WriteWithoutFormat, RuntimeDescriptorArray, VulkanMemoryModel,
 * PhysicalStorageBufferAddresses; their scalar block layouts need
 * scalarBlockLayout. (ffv1_vulkan also declares ExpectAssumeKHR,
 * prores_ks_vulkan subgroup operations: checked apart.) */
#define FFV1 VKCU_SHADERS_FFV1
#define PRORES VKCU_SHADERS_PRORES
#define BOTH VKCU_SHADERS_ALL
#define SHADER_FEATURES(X)                                                        \
    X(L10, VkPhysicalDeviceFeatures, shaderInt64, BOTH)                           \
    X(L10, VkPhysicalDeviceFeatures, shaderInt16, BOTH)                           \
    X(L10, VkPhysicalDeviceFeatures, shaderFloat64, 0)                            \
    X(L10, VkPhysicalDeviceFeatures, shaderImageGatherExtended, 0)                \
    X(L10, VkPhysicalDeviceFeatures, shaderStorageImageReadWithoutFormat, BOTH)   \
    X(L10, VkPhysicalDeviceFeatures, shaderStorageImageWriteWithoutFormat, FFV1)  \
    X(L11, VkPhysicalDeviceVulkan11Features, storagePushConstant16, FFV1)         \
    X(L11, VkPhysicalDeviceVulkan11Features, storageBuffer16BitAccess, BOTH)      \
    X(L11, VkPhysicalDeviceVulkan11Features, uniformAndStorageBuffer16BitAccess, BOTH) \
    X(L12, VkPhysicalDeviceVulkan12Features, scalarBlockLayout, BOTH)             \
    X(L12, VkPhysicalDeviceVulkan12Features, bufferDeviceAddress, BOTH)           \
    X(L12, VkPhysicalDeviceVulkan12Features, storagePushConstant8, 0)             \
    X(L12, VkPhysicalDeviceVulkan12Features, shaderInt8, BOTH)                    \
    X(L12, VkPhysicalDeviceVulkan12Features, storageBuffer8BitAccess, BOTH)       \
    X(L12, VkPhysicalDeviceVulkan12Features, uniformAndStorageBuffer8BitAccess, FFV1) \
    X(L12, VkPhysicalDeviceVulkan12Features, shaderFloat16, 0)                    \
    X(L12, VkPhysicalDeviceVulkan12Features, shaderBufferInt64Atomics, 0)         \
    X(L12, VkPhysicalDeviceVulkan12Features, shaderSharedInt64Atomics, 0)         \
    X(L12, VkPhysicalDeviceVulkan12Features, vulkanMemoryModel, BOTH)             \
    X(L12, VkPhysicalDeviceVulkan12Features, vulkanMemoryModelDeviceScope, 0)     \
    X(L12, VkPhysicalDeviceVulkan12Features, vulkanMemoryModelAvailabilityVisibilityChains, 0) \
    X(L12, VkPhysicalDeviceVulkan12Features, uniformBufferStandardLayout, 0)      \
    X(L12, VkPhysicalDeviceVulkan12Features, runtimeDescriptorArray, FFV1)        \
    X(L12, VkPhysicalDeviceVulkan12Features, shaderSubgroupExtendedTypes, 0)      \
    X(L12, VkPhysicalDeviceVulkan12Features, shaderUniformBufferArrayNonUniformIndexing, 0) \
    X(L12, VkPhysicalDeviceVulkan12Features, shaderSampledImageArrayNonUniformIndexing, 0)  \
    X(L12, VkPhysicalDeviceVulkan12Features, shaderStorageBufferArrayNonUniformIndexing, 0) \
    X(L12, VkPhysicalDeviceVulkan12Features, shaderStorageImageArrayNonUniformIndexing, 0)  \
    X(L13, VkPhysicalDeviceVulkan13Features, maintenance4, 0)                     \
    X(L13, VkPhysicalDeviceVulkan13Features, computeFullSubgroups, 0)             \
    X(L13, VkPhysicalDeviceVulkan13Features, subgroupSizeControl, 0)              \
    X(L13, VkPhysicalDeviceVulkan13Features, shaderZeroInitializeWorkgroupMemory, 0)

typedef struct feature {
    int level;
    size_t offset;
    const char *name;
    int need;            /* FFV1, PRORES: the encoders that cannot run without it */
} feature;

static const feature features[] = {
#define X(level, type, field, need) { level, offsetof(type, field), #field, need },
    SHADER_FEATURES(X)
#undef X
};

static size_t level_offset(int level)
{
    return level == L10   ? offsetof(vkcu_vk_features, f10)
           : level == L11 ? offsetof(vkcu_vk_features, f11)
           : level == L12 ? offsetof(vkcu_vk_features, f12)
                          : offsetof(vkcu_vk_features, f13);
}

static VkBool32 get_field(const vkcu_vk_features *f, const feature *d)
{
    VkBool32 v;
    memcpy(&v, (const char *)f + level_offset(d->level) + d->offset, sizeof(v));
    return v;
}


static int has(const char *const *exts, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (!strcmp(exts[i], name))
            return 1;
    return 0;
}

const char *vkcu_vk_shader_extension(void)
{
#ifdef VK_KHR_shader_expect_assume
    return VK_KHR_SHADER_EXPECT_ASSUME_EXTENSION_NAME;
#else
    return NULL;
#endif
}

/* The subgroup operations compute shaders have (a property, not a feature). */
static void subgroup_ops(PFN_vkGetInstanceProcAddr gipa, VkInstance inst, VkPhysicalDevice pd, vkcu_vk_features *out)
{
    PFN_vkGetPhysicalDeviceProperties2 props =
        gipa ? (PFN_vkGetPhysicalDeviceProperties2)gipa(inst, "vkGetPhysicalDeviceProperties2") : NULL;
    out->subgroup_ops = 0;
    if (!props)
        return;
    VkPhysicalDeviceVulkan11Properties p11 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES };
    VkPhysicalDeviceProperties2 p2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &p11 };
    props(pd, &p2);
    if (p11.subgroupSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT)
        out->subgroup_ops = p11.subgroupSupportedOperations;
}

void vkcu_vk_features_query(PFN_vkGetInstanceProcAddr gipa, VkInstance inst, VkPhysicalDevice pd,
                            const char *const *exts, int nb_exts, vkcu_vk_features *out)
{
    memset(out, 0, sizeof(*out));
    PFN_vkGetPhysicalDeviceFeatures2 get =
        gipa ? (PFN_vkGetPhysicalDeviceFeatures2)gipa(inst, "vkGetPhysicalDeviceFeatures2") : NULL;
    if (!get)
        return;
    VkPhysicalDeviceVulkan13Features f13 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES };
    VkPhysicalDeviceVulkan12Features f12 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                             .pNext = &f13 };
    VkPhysicalDeviceVulkan11Features f11 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
                                             .pNext = &f12 };
    VkPhysicalDeviceFeatures2 f2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f11 };
#ifdef VK_KHR_shader_expect_assume
    VkPhysicalDeviceShaderExpectAssumeFeaturesKHR ea = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_EXPECT_ASSUME_FEATURES_KHR };
    if (has(exts, nb_exts, VK_KHR_SHADER_EXPECT_ASSUME_EXTENSION_NAME))
        f13.pNext = &ea;
#endif
    get(pd, &f2);
    subgroup_ops(gipa, inst, pd, out);
    out->f10 = f2.features;
    out->f11 = f11;
    out->f12 = f12;
    out->f13 = f13;
    out->f11.pNext = out->f12.pNext = out->f13.pNext = NULL;
#ifdef VK_KHR_shader_expect_assume
    out->expect_assume = f13.pNext && ea.shaderExpectAssume;
#else
    (void)exts, (void)nb_exts;
#endif
}

void vkcu_vk_features_enabled(PFN_vkGetInstanceProcAddr gipa, VkInstance inst, VkPhysicalDevice pd,
                              const VkPhysicalDeviceFeatures2 *chain, const char *const *exts, int nb_exts,
                              vkcu_vk_features *out)
{
    memset(out, 0, sizeof(*out));
    subgroup_ops(gipa, inst, pd, out);
    out->f10 = chain->features;
    for (const VkBaseInStructure *s = chain->pNext; s; s = s->pNext) {
        if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES)
            out->f11 = *(const VkPhysicalDeviceVulkan11Features *)s;
        else if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES)
            out->f12 = *(const VkPhysicalDeviceVulkan12Features *)s;
        else if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES)
            out->f13 = *(const VkPhysicalDeviceVulkan13Features *)s;
#ifdef VK_KHR_shader_expect_assume
        else if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_EXPECT_ASSUME_FEATURES_KHR)
            out->expect_assume = ((const VkPhysicalDeviceShaderExpectAssumeFeaturesKHR *)s)->shaderExpectAssume &&
                                 has(exts, nb_exts, VK_KHR_SHADER_EXPECT_ASSUME_EXTENSION_NAME);
#endif
    }
    out->f11.pNext = out->f12.pNext = out->f13.pNext = NULL;
#ifndef VK_KHR_shader_expect_assume
    (void)exts, (void)nb_exts;
#endif
}

static void add_name(char *missing, size_t len, int *n, const char *name)
{
    size_t used = strlen(missing);
    if (used < len)
        snprintf(missing + used, len - used, "%s%s", *n ? ", " : "", name);
    (*n)++;
}

int vkcu_vk_encoder_features_missing(const vkcu_vk_features *f, unsigned shaders, char *missing, size_t len)
{
    int n = 0, which = (int)shaders;
    if (len)
        missing[0] = 0;
    for (size_t i = 0; i < sizeof(features) / sizeof(features[0]); i++)
        if ((features[i].need & which) && !get_field(f, &features[i]))
            add_name(missing, len, &n, features[i].name);
    if ((which & FFV1) && !f->expect_assume)
        add_name(missing, len, &n, "VK_KHR_shader_expect_assume");
    const VkSubgroupFeatureFlags sub = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT |
                                       VK_SUBGROUP_FEATURE_SHUFFLE_BIT | VK_SUBGROUP_FEATURE_CLUSTERED_BIT;
    if ((which & PRORES) && (f->subgroup_ops & sub) != sub)
        add_name(missing, len, &n, "subgroup basic/arithmetic/shuffle/clustered operations in compute shaders");
    return n;
}
