/* SPDX-License-Identifier: GPL-2.0-or-later */
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

#include "cuda_absent.h"
#include "outring_vk.h"
#include "qclaim.h"
#include "vk.h"
#include "vkencode.h"
#include "vkinstance.h"
#include "vkshader.h"
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

void vkcu_probe_summary(vkcu_probe_info *info)
{
    uint8_t vk_uuid[MAX_DEV][16];
    VkVideoCodecOperationFlagsKHR vk_ops[MAX_DEV];
    int nvk = 0;
    memset(info, 0, sizeof(*info));
    char why[256];
    const vkcu_vk_instance *vi = vkcu_vk_instance_get(&info->vulkan_loader, why, sizeof(why));
    info->vulkan_instance = vi != NULL;
    for (int i = 0; vi && i < vi->nb_devs && nvk < MAX_DEV; i++) {
        const vkcu_vk_caps *caps = vkcu_vk_caps_get(vi, i);
        VkVideoCodecOperationFlagsKHR ops = 0;
        for (int q = 0; caps && q < caps->nqf; q++)
            if (caps->qf[q].flags & VK_QUEUE_VIDEO_DECODE_BIT_KHR)
                ops |= caps->qf[q].video_ops;
        memcpy(vk_uuid[nvk], vi->devs[i].uuid, 16);
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
                 vi->devs[i].name, codecs[0] ? "video decode:" : "no video decode", codecs);
    }
    info->nb_vulkan = nvk;
    int n = 0;
    cudaError_t ce = cudaGetDeviceCount(&n);
    if (ce != cudaSuccess) {
        vkcu_cuda_absent_text(ce, info->cuda_error, sizeof(info->cuda_error));
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
    VkVideoCodecOperationFlagsKHR op;
    switch (vkcu_vk_decode_kind(codec_id, &op)) {
    case VKCU_VK_DECODE_VIDEO: return (info->gpu_decode_ops & op) ? VKCU_GPU_DECODE_VIDEO : VKCU_GPU_DECODE_NONE;
    case VKCU_VK_DECODE_COMPUTE: {
        char why[256];
        return info->nb_pairs > 0 && vkcu_vk_compute_decode_ok(codec_id, -1, NULL, 0, why, sizeof(why))
                   ? VKCU_GPU_DECODE_COMPUTE
                   : VKCU_GPU_DECODE_NONE;
    }
    default: return VKCU_GPU_DECODE_NONE;
    }
}

/* Claims listing: one line per GPU, role and family, its queues' claims. */
typedef struct claims_out {
    FILE *out;
    const vkcu_vk_instance *vi;
    char head[160]; /* the line being written (GPU role family) */
    int lines;
} claims_out;

static void claims_line(void *opaque, const char *gpu, const char *role, uint32_t family, uint32_t queue, uint32_t n)
{
    claims_out *c = opaque;
    char head[160];
    snprintf(head, sizeof(head), "%s %s %u", gpu, role, family);
    if (strcmp(head, c->head)) {
        if (c->head[0])
            fputc('\n', c->out);
        snprintf(c->head, sizeof(c->head), "%s", head);
        uint8_t uuid[16];
        for (int i = 0; i < 16; i++) {
            unsigned b = 0;
            sscanf(gpu + 2 * i, "%2x", &b);
            uuid[i] = (uint8_t)b;
        }
        char u[40];
        uuid_str(uuid, u);
        int dev = c->vi ? vkcu_vk_find_uuid(c->vi, uuid) : -1;
        fprintf(c->out, "  %s%s%s%s, %s queue family %u:", u, dev >= 0 ? " (" : "", dev >= 0 ? c->vi->devs[dev].name : "",
                dev >= 0 ? ")" : "", role, family);
        c->lines++;
    } else {
        fputc(',', c->out);
    }
    fprintf(c->out, " queue %u: %u claim%s", queue, n, n == 1 ? "" : "s");
}

/* The queues vkcu processes hold now (gpu/qclaim.h), per GPU. */
static void write_claims(FILE *out, const vkcu_vk_instance *vi)
{
    char dir[512], why[512];
    if (vkcu_qclaim_dir(dir, sizeof(dir), 0, why, sizeof(why)) < 0) {
        fprintf(out, "Queue claims: none kept (%s); processes sharing a GPU then all start at queue 0\n", why);
        return;
    }
    fprintf(out, "Queue claims of running vkcu processes (%s):\n", dir);
    claims_out c = { .out = out, .vi = vi };
    int n = vkcu_qclaim_list(dir, claims_line, &c);
    if (c.lines)
        fputc('\n', out);
    if (n < 0)
        fprintf(out, "  cannot read the folder\n");
    else if (!n)
        fprintf(out, "  none\n");
}

int vkcu_probe_write(FILE *out)
{
    uint8_t vk_uuid[MAX_DEV][16], cu_uuid[MAX_DEV][16];
    char vk_name[MAX_DEV][256];
    int nvk = 0, ncu = 0;
    char u[40], buf[256];

    fprintf(out, "Vulkan:\n");
    int loader = 0;
    char why[256];
    const vkcu_vk_instance *vi = vkcu_vk_instance_get(&loader, why, sizeof(why));
    if (!loader)
        fprintf(out, "  no Vulkan loader (libvulkan.so.1): install libvulkan1 and a driver\n");
    else if (!vi)
        fprintf(out, "  %s\n", why);
    else if (!vi->nb_devs)
        fprintf(out, "  no Vulkan devices\n");
    for (int i = 0; vi && i < vi->nb_devs && nvk < MAX_DEV; i++) {
        const vkcu_vk_physdev *d = &vi->devs[i];
        const vkcu_vk_caps *caps = vkcu_vk_caps_get(vi, i);
        if (!caps)
            continue;
        memcpy(vk_uuid[nvk], d->uuid, 16);
        snprintf(vk_name[nvk], sizeof(vk_name[nvk]), "%s", d->name);
        nvk++;
        uuid_str(d->uuid, u);
        uint32_t v = d->api_version;
        const char *type = d->type == VK_PHYSICAL_DEVICE_TYPE_CPU              ? "CPU"
                           : d->type == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU   ? "discrete GPU"
                           : d->type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? "integrated GPU"
                                                                               : "other";
        fprintf(out, "  [%d] %s (%s), Vulkan %u.%u.%u, UUID %s\n", i, d->name, type, VK_API_VERSION_MAJOR(v),
                VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v), u);
        fprintf(out, "      external memory FD: %s, external semaphore FD: %s, video queue: %s\n",
                vkcu_vk_caps_has(caps, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME) ? "yes" : "no",
                vkcu_vk_caps_has(caps, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME) ? "yes" : "no",
                vkcu_vk_caps_has(caps, VK_KHR_VIDEO_QUEUE_EXTENSION_NAME) ? "yes" : "no");
        /* Which of FFmpeg's compute encoders this build has, and the shader
         * features each needs that the device lacks. */
        vkcu_vk_features feats;
        vkcu_vk_features_query(vi->fn.vkGetInstanceProcAddr, vi->inst, d->pd, caps->exts, caps->nb_exts, &feats);
        vkcu_outring_compute comp[4];
        char missing[4][512];
        int nc = 0;
        for (int e = 0; vkcu_vkencode_get(e) && nc < 4; e++) {
            const vkcu_vkencoder *ve = vkcu_vkencode_get(e);
            if (ve->video_op || !avcodec_find_encoder_by_name(ve->name))
                continue;
            vkcu_vk_encoder_features_missing(&feats, ve->shaders, missing[nc], sizeof(missing[nc]));
            comp[nc] = (vkcu_outring_compute){ ve->name, missing[nc] };
            nc++;
        }
        char ring_caps[1536];
        vkcu_outring_caps(caps->qf, caps->nqf, caps->exts, caps->nb_exts, comp, nc, ring_caps, sizeof(ring_caps));
        fprintf(out, "      %s\n", ring_caps);
        for (int q = 0; q < caps->nqf; q++) {
            VkQueueFlags f = caps->qf[q].flags;
            fprintf(out, "      queue family %d: %u queue(s):%s%s%s%s%s", q, caps->qf[q].count,
                    f & VK_QUEUE_GRAPHICS_BIT ? " graphics" : "", f & VK_QUEUE_COMPUTE_BIT ? " compute" : "",
                    f & VK_QUEUE_TRANSFER_BIT ? " transfer" : "", f & VK_QUEUE_VIDEO_DECODE_BIT_KHR ? " video-decode" : "",
                    f & VK_QUEUE_VIDEO_ENCODE_BIT_KHR ? " video-encode" : "");
            if (f & (VK_QUEUE_VIDEO_DECODE_BIT_KHR | VK_QUEUE_VIDEO_ENCODE_BIT_KHR))
                fprintf(out, " [%s]", codec_ops(caps->qf[q].video_ops, buf, sizeof(buf)));
            fputc('\n', out);
        }
    }

    fprintf(out, "CUDA:\n");
    int n = 0;
    cudaError_t ce = cudaGetDeviceCount(&n);
    if (ce != cudaSuccess || n == 0) {
        char cuda_why[256];
        fprintf(out, "  %s: vkcu uses the CPU backend\n", vkcu_cuda_absent_text(ce, cuda_why, sizeof(cuda_why)));
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
                char ordinal[16];
                snprintf(ordinal, sizeof(ordinal), "%d", c);
                fprintf(out, "  CUDA %d = Vulkan %d (%s): GPU backend usable with %s\n", c, v, vk_name[v],
                        VKCU_SETTING_IS("device", ordinal));
                pairs++;
            }
    if (!pairs)
        fprintf(out, "  none: the GPU backend is unavailable; %s uses the CPU reference\n",
                VKCU_SETTING_IS("backend", "auto"));
    fprintf(out, "Decode paths: Vulkan Video where a device lists the codec above; otherwise software decode%s\n",
            pairs ? " + one upload into the CUDA interop ring" : " on the CPU backend");
    write_claims(out, vi);
    return pairs ? 0 : VKCU_ERR_DEVICE;
}
