/*
 * `vkcu probe`: what Vulkan and CUDA devices this machine has, what each
 * can do for vkcu, and which Vulkan/CUDA pairs are the same GPU (by UUID).
 * Also the short form behind `vkcu --version` and `vkcu formats`: whether
 * CUDA and Vulkan work here, and which codecs decode on a matched GPU.
 */
#include <stdio.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include <libavcodec/avcodec.h>

#include "vkfn.h"
#include "util/log.h"
#include "probe.h"

#define MAX_DEV 16

static void uuid_str(const uint8_t *u, char *out)
{
    static const int dash[] = { 4, 6, 8, 10 };
    int o = 0;
    for (int i = 0, d = 0; i < 16; i++) {
        if (d < 4 && i == dash[d]) {
            out[o++] = '-';
            d++;
        }
        o += sprintf(out + o, "%02x", u[i]);
    }
    out[o] = 0;
}

static const char *codec_ops(VkVideoCodecOperationFlagsKHR ops, char *buf, size_t n)
{
    buf[0] = 0;
    struct { VkVideoCodecOperationFlagsKHR bit; const char *name; } t[] = {
        { VK_VIDEO_CODEC_OPERATION_DECODE_H264_BIT_KHR, "decode:h264" },
        { VK_VIDEO_CODEC_OPERATION_DECODE_H265_BIT_KHR, "decode:hevc" },
        { VK_VIDEO_CODEC_OPERATION_DECODE_AV1_BIT_KHR, "decode:av1" },
        { VK_VIDEO_CODEC_OPERATION_ENCODE_H264_BIT_KHR, "encode:h264" },
        { VK_VIDEO_CODEC_OPERATION_ENCODE_H265_BIT_KHR, "encode:hevc" },
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (ops & t[i].bit)
            snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", buf[0] ? " " : "", t[i].name);
    return buf[0] ? buf : "none";
}

/* A Vulkan 1.3 instance, or VK_NULL_HANDLE (fn then holds what loaded). */
static VkInstance probe_instance(vkcu_vkfn *fn, PFN_vkGetInstanceProcAddr gipa, uint32_t *api)
{
    const char *missing = NULL;
    VkInstance inst = VK_NULL_HANDLE;
    vkcu_vk_load(fn, gipa, NULL, NULL, &missing);
    *api = VK_API_VERSION_1_0;
    if (fn->vkEnumerateInstanceVersion)
        fn->vkEnumerateInstanceVersion(api);
    VkApplicationInfo app = { .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "vkcu-probe",
                              .apiVersion = VK_API_VERSION_1_3 };
    VkInstanceCreateInfo ci = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app };
    if (!fn->vkCreateInstance || fn->vkCreateInstance(&ci, NULL, &inst) != VK_SUCCESS)
        return VK_NULL_HANDLE;
    if (vkcu_vk_load(fn, gipa, inst, NULL, &missing) < 0) {
        if (fn->vkDestroyInstance)
            fn->vkDestroyInstance(inst, NULL);
        return VK_NULL_HANDLE;
    }
    return inst;
}

void vkcu_probe_summary(vkcu_probe_info *info)
{
    uint8_t vk_uuid[MAX_DEV][16];
    VkVideoCodecOperationFlagsKHR vk_ops[MAX_DEV];
    int nvk = 0;
    memset(info, 0, sizeof(*info));
    PFN_vkGetInstanceProcAddr gipa = vkcu_vk_loader();
    info->vulkan_loader = !!gipa;
    if (gipa) {
        vkcu_vkfn fn;
        uint32_t api;
        VkInstance inst = probe_instance(&fn, gipa, &api);
        info->vulkan_instance = inst != VK_NULL_HANDLE;
        uint32_t n = MAX_DEV;
        VkPhysicalDevice devs[MAX_DEV];
        if (inst && fn.vkEnumeratePhysicalDevices(inst, &n, devs) < 0)
            n = 0;
        for (uint32_t i = 0; inst && i < n; i++) {
            VkPhysicalDeviceIDProperties id = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES };
            VkPhysicalDeviceProperties2 pr = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &id };
            fn.vkGetPhysicalDeviceProperties2(devs[i], &pr);
            vkcu_vk_queue_family qf[32];
            int nq = vkcu_vk_queue_families(&fn, devs[i], qf, 32);
            VkVideoCodecOperationFlagsKHR ops = 0;
            for (int q = 0; q < nq; q++)
                if (qf[q].flags & VK_QUEUE_VIDEO_DECODE_BIT_KHR)
                    ops |= qf[q].video_ops;
            memcpy(vk_uuid[nvk], id.deviceUUID, 16);
            vk_ops[nvk++] = ops;
            char codecs[64] = "";
            if (ops & VK_VIDEO_CODEC_OPERATION_DECODE_H264_BIT_KHR)
                strcat(codecs, " h264");
            if (ops & VK_VIDEO_CODEC_OPERATION_DECODE_H265_BIT_KHR)
                strcat(codecs, " hevc");
            if (ops & VK_VIDEO_CODEC_OPERATION_DECODE_AV1_BIT_KHR)
                strcat(codecs, " av1");
            size_t len = strlen(info->vulkan_devices);
            snprintf(info->vulkan_devices + len, sizeof(info->vulkan_devices) - len, "%s%s (%s%s)", len ? "; " : "",
                     pr.properties.deviceName, codecs[0] ? "video decode:" : "no video decode", codecs);
        }
        info->nb_vulkan = nvk;
        if (inst)
            fn.vkDestroyInstance(inst, NULL);
    }
    int n = 0;
    cudaError_t ce = cudaGetDeviceCount(&n);
    if (ce != cudaSuccess) {
        snprintf(info->cuda_error, sizeof(info->cuda_error), "%s", cudaGetErrorString(ce));
        n = 0;
    }
    info->nb_cuda = n;
    for (int c = 0; c < n && c < MAX_DEV; c++) {
        struct cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, c) != cudaSuccess)
            continue;
        for (int v = 0; v < nvk; v++)
            if (!memcmp(prop.uuid.bytes, vk_uuid[v], 16)) {
                info->nb_pairs++;
                info->gpu_decode_ops |= vk_ops[v];
            }
    }
}

int vkcu_probe_gpu_decodes(const vkcu_probe_info *info, int codec_id)
{
    switch (codec_id) {
    case AV_CODEC_ID_H264: return !!(info->gpu_decode_ops & VK_VIDEO_CODEC_OPERATION_DECODE_H264_BIT_KHR);
    case AV_CODEC_ID_HEVC: return !!(info->gpu_decode_ops & VK_VIDEO_CODEC_OPERATION_DECODE_H265_BIT_KHR);
    case AV_CODEC_ID_AV1: return !!(info->gpu_decode_ops & VK_VIDEO_CODEC_OPERATION_DECODE_AV1_BIT_KHR);
    default: return 0;
    }
}

int vkcu_probe(FILE *out)
{
    uint8_t vk_uuid[MAX_DEV][16], cu_uuid[MAX_DEV][16];
    char vk_name[MAX_DEV][256];
    int nvk = 0, ncu = 0;
    char u[40], buf[256];

    fprintf(out, "Vulkan:\n");
    PFN_vkGetInstanceProcAddr gipa = vkcu_vk_loader();
    vkcu_vkfn fn;
    VkInstance inst = VK_NULL_HANDLE;
    if (!gipa) {
        fprintf(out, "  no Vulkan loader (libvulkan.so.1): install libvulkan1 and a driver\n");
    } else {
        uint32_t api;
        inst = probe_instance(&fn, gipa, &api);
        if (!inst) {
            fprintf(out, "  cannot create a Vulkan instance (loader API %u.%u)\n", VK_API_VERSION_MAJOR(api),
                    VK_API_VERSION_MINOR(api));
        } else {
            uint32_t n = MAX_DEV;
            VkPhysicalDevice devs[MAX_DEV];
            fn.vkEnumeratePhysicalDevices(inst, &n, devs);
            if (!n)
                fprintf(out, "  no Vulkan devices\n");
            for (uint32_t i = 0; i < n; i++) {
                VkPhysicalDeviceIDProperties id = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES };
                VkPhysicalDeviceProperties2 pr = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &id };
                fn.vkGetPhysicalDeviceProperties2(devs[i], &pr);
                memcpy(vk_uuid[nvk], id.deviceUUID, 16);
                snprintf(vk_name[nvk], sizeof(vk_name[nvk]), "%s", pr.properties.deviceName);
                nvk++;
                uuid_str(id.deviceUUID, u);
                uint32_t v = pr.properties.apiVersion;
                const char *type = pr.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? "CPU" :
                                   pr.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ? "discrete GPU" :
                                   pr.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? "integrated GPU" : "other";
                fprintf(out, "  [%u] %s (%s), Vulkan %u.%u.%u, UUID %s\n", i, pr.properties.deviceName, type,
                        VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v), u);
                int mem_fd = vkcu_vk_has_device_ext(&fn, devs[i], VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
                int sem_fd = vkcu_vk_has_device_ext(&fn, devs[i], VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
                int vq = vkcu_vk_has_device_ext(&fn, devs[i], VK_KHR_VIDEO_QUEUE_EXTENSION_NAME);
                fprintf(out, "      external memory FD: %s, external semaphore FD: %s, video queue: %s\n",
                        mem_fd ? "yes" : "no", sem_fd ? "yes" : "no", vq ? "yes" : "no");
                vkcu_vk_queue_family qf[32];
                int nq = vkcu_vk_queue_families(&fn, devs[i], qf, 32);
                for (int q = 0; q < nq; q++) {
                    VkQueueFlags f = qf[q].flags;
                    fprintf(out, "      queue family %d: %u queue(s):%s%s%s%s%s", q, qf[q].count,
                            f & VK_QUEUE_GRAPHICS_BIT ? " graphics" : "", f & VK_QUEUE_COMPUTE_BIT ? " compute" : "",
                            f & VK_QUEUE_TRANSFER_BIT ? " transfer" : "",
                            f & VK_QUEUE_VIDEO_DECODE_BIT_KHR ? " video-decode" : "",
                            f & VK_QUEUE_VIDEO_ENCODE_BIT_KHR ? " video-encode" : "");
                    if (f & (VK_QUEUE_VIDEO_DECODE_BIT_KHR | VK_QUEUE_VIDEO_ENCODE_BIT_KHR))
                        fprintf(out, " [%s]", codec_ops(qf[q].video_ops, buf, sizeof(buf)));
                    fputc('\n', out);
                }
            }
            fn.vkDestroyInstance(inst, NULL);
        }
    }

    fprintf(out, "CUDA:\n");
    int n = 0;
    cudaError_t ce = cudaGetDeviceCount(&n);
    if (ce != cudaSuccess || n == 0) {
        fprintf(out, "  no CUDA device (%s): no NVIDIA GPU/driver here; vkcu uses the CPU backend\n",
                ce != cudaSuccess ? cudaGetErrorString(ce) : "none found");
    }
    for (int i = 0; ce == cudaSuccess && i < n && i < MAX_DEV; i++) {
        struct cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess)
            continue;
        int timeline = 0;
        cudaDeviceGetAttribute(&timeline, cudaDevAttrTimelineSemaphoreInteropSupported, i);
        memcpy(cu_uuid[ncu++], prop.uuid.bytes, 16);
        uuid_str((const uint8_t *)prop.uuid.bytes, u);
        fprintf(out, "  [%d] %s, compute capability %d.%d, %.1f GiB, UUID %s, timeline semaphore interop: %s\n", i,
                prop.name, prop.major, prop.minor, prop.totalGlobalMem / 1073741824.0, u, timeline ? "yes" : "no");
    }

    fprintf(out, "Pairs (matched by UUID):\n");
    int pairs = 0;
    for (int c = 0; c < ncu; c++)
        for (int v = 0; v < nvk; v++)
            if (!memcmp(cu_uuid[c], vk_uuid[v], 16)) {
                fprintf(out, "  CUDA %d = Vulkan %d (%s): GPU backend usable with --device %d\n", c, v, vk_name[v], c);
                pairs++;
            }
    if (!pairs)
        fprintf(out, "  none: the GPU backend is unavailable; --backend auto uses the CPU reference\n");
    fprintf(out, "Decode paths: Vulkan Video where a device lists the codec above; otherwise software decode%s\n",
            pairs ? " + one upload into the CUDA interop ring" : " on the CPU backend");
    return pairs ? 0 : VKCU_ERR_DEVICE;
}
