/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The devices FFmpeg's Vulkan encoders run on: the Vulkan Video encoders'
 * (the shared device when it has their encode queue, else one made beside
 * it; without CUDA, the first device with one) and the compute encoders'
 * (ffv1_vulkan, prores_ks_vulkan: the shared device itself).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>

#include "vkdev_priv.h"
#include "vkinstance.h"
#include "util/log.h"

static int has_encode(const AVVulkanDeviceContext *hw, uint32_t op)
{
    for (int i = 0; i < hw->nb_qf; i++)
        if ((hw->qf[i].flags & VK_QUEUE_VIDEO_ENCODE_BIT_KHR) && (hw->qf[i].video_caps & op))
            return 1;
    return 0;
}

static const char *op_name(uint32_t op)
{
    return op == VK_VIDEO_CODEC_OPERATION_ENCODE_H265_BIT_KHR ? "HEVC" : "H.264";
}

/* A compute and an encode queue on vi->devs[index], or -1 with why. */
static int make_encoder(const vkcu_vk_instance *vi, int index, uint32_t op, AVBufferRef **out, char *why, size_t len)
{
    const vkcu_vk_caps *caps = vkcu_vk_caps_get(vi, index);
    if (!caps)
        return AVERROR(ENOMEM);
    vkcu_vk_plan plan;
    vkcu_vk_plan_want want = { .compute = 1, .encode = op };
    if (vkcu_vk_plan_device(caps->qf, caps->nqf, caps->exts, caps->nb_exts, &want, &plan, why, len) < 0)
        return -1;
    return vkcu_vk_device_create(vi, index, &plan, out, NULL, why, len) < 0 ? VKCU_ERR_DEVICE : 0;
}

/* Encode devices of the CPU backend, one per codec operation. */
static AVBufferRef *cpu_encoder[2];

int vkcu_vkdev_acquire_encode(int cuda_device, uint32_t encode_op, AVBufferRef **out, char *err, size_t errlen)
{
    *out = NULL;
    char why[512] = "";
    int ret = 0;
    if (encode_op != VK_VIDEO_CODEC_OPERATION_ENCODE_H264_BIT_KHR &&
        encode_op != VK_VIDEO_CODEC_OPERATION_ENCODE_H265_BIT_KHR) {
        snprintf(err, errlen, "internal: no Vulkan encode operation %#x", (unsigned)encode_op);
        return AVERROR_BUG;
    }
    const vkcu_vk_instance *vi = vkcu_vk_instance_get(NULL, why, sizeof(why));
    pthread_mutex_lock(&vkcu_vkdev_registry_lock);
    if (cuda_device >= 0) {
        shared_device *sd;
        if ((ret = vkcu_vkdev_ready(cuda_device, &sd, err, errlen)) < 0)
            goto done;
        AVHWDeviceContext *m = (AVHWDeviceContext *)sd->master->data;
        if (has_encode(m->hwctx, encode_op)) {
            *out = av_buffer_ref(sd->master);
        } else if (sd->encoder && sd->encoder_op == encode_op) {
            *out = av_buffer_ref(sd->encoder);
        } else {
            int index = vi ? vkcu_vk_find_uuid(vi, sd->uuid) : -1;
            const char *name = index >= 0 ? vi->devs[index].name : "the CUDA device's GPU";
            if (index < 0 || (ret = make_encoder(vi, index, encode_op, &sd->encoder, why, sizeof(why))) < 0) {
                snprintf(err, errlen, "no Vulkan video encode queue for %s on %s%s%s", op_name(encode_op), name,
                         why[0] && !strstr(why, "no Vulkan video encode queue") ? ": " : "",
                         why[0] && !strstr(why, "no Vulkan video encode queue") ? why : "");
                ret = VKCU_ERR_DEVICE;
                goto done;
            }
            sd->encoder_op = encode_op;
            *out = av_buffer_ref(sd->encoder);
        }
    } else {
        AVBufferRef **slot = &cpu_encoder[encode_op == VK_VIDEO_CODEC_OPERATION_ENCODE_H265_BIT_KHR];
        if (!*slot) {
            if (!vi) {
                snprintf(err, errlen, "%s", why);
                ret = VKCU_ERR_DEVICE;
                goto done;
            }
            char names[512] = "";
            for (int i = 0; i < vi->nb_devs && !*slot; i++) {
                char dev_why[256] = "";
                snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", names[0] ? ", " : "",
                         vi->devs[i].name);
                if (make_encoder(vi, i, encode_op, slot, dev_why, sizeof(dev_why)) < 0)
                    LOGV("Vulkan device %s: %s", vi->devs[i].name, dev_why);
            }
            if (!*slot) {
                if (!vi->nb_devs)
                    snprintf(err, errlen, "no Vulkan device on this machine");
                else
                    snprintf(err, errlen, "no Vulkan video encode queue for %s on %s", op_name(encode_op), names);
                ret = VKCU_ERR_DEVICE;
                goto done;
            }
        }
        *out = av_buffer_ref(*slot);
    }
    if (!*out)
        ret = AVERROR(ENOMEM);
done:
    pthread_mutex_unlock(&vkcu_vkdev_registry_lock);
    return ret;
}
