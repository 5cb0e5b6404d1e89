/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The process's one Vulkan instance and the physical devices it sees, each
 * with its UUID. `vkcu probe`, the shared decode device (gpu/vkdev_open.c) and
 * Vulkan Video encode all find their device here, by UUID, never by
 * ordinal: an ordinal of one instance means nothing to another, and each
 * instance costs the driver tens of milliseconds (docs/performance.md).
 *
 * Made once, on first use, with no layers and no instance extensions. Only
 * the IDs and names of the devices are read up front; queue families and
 * extension lists (what choosing queues needs) are read per device when
 * first asked for, so a machine with several drivers pays for the one the
 * job uses. Everything here lives until the process ends.
 */
#ifndef VKCU_GPU_VKINSTANCE_H
#define VKCU_GPU_VKINSTANCE_H

#include <stddef.h>
#include <stdint.h>

#include "vkfn.h"

#define VKCU_VK_MAX_PHYSDEVS 16
#define VKCU_VK_MAX_DEVICE_EXTS 512
#define VKCU_VK_NVIDIA_VENDOR 0x10de

/* What choosing queues and extensions needs to know of a device. */
typedef struct vkcu_vk_caps {
    vkcu_vk_queue_family qf[32];
    int nqf;
    const char *exts[VKCU_VK_MAX_DEVICE_EXTS]; /* names, into store */
    int nb_exts;
    VkExtensionProperties store[VKCU_VK_MAX_DEVICE_EXTS];
    double query_ms;
} vkcu_vk_caps;

typedef struct vkcu_vk_physdev {
    VkPhysicalDevice pd;
    uint8_t uuid[16];
    char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
    uint32_t vendor_id, api_version;
    VkPhysicalDeviceType type;
} vkcu_vk_physdev;

typedef struct vkcu_vk_instance {
    vkcu_vkfn fn; /* instance-level entry points (no device-level ones) */
    VkInstance inst;
    uint32_t loader_api; /* what vkEnumerateInstanceVersion reports */
    int nb_devs;
    vkcu_vk_physdev devs[VKCU_VK_MAX_PHYSDEVS];
    /* vkcu_now() stamps: the making started, vkCreateInstance returned,
     * the devices and their IDs were read. */
    double t_start, t_created, t_enumerated;
} vkcu_vk_instance;

/* The instance, made on the first call (later and concurrent callers wait
 * for that one and get the same); NULL with a one-line reason in err when
 * there is no loader or no driver will make one (asked once per process:
 * the same reason comes back). `loader` (may be NULL) is set to whether
 * libvulkan.so.1 was found at all. Thread-safe. */
const vkcu_vk_instance *vkcu_vk_instance_get(int *loader, char *err, size_t errlen);

/* Index into vi->devs of the device with this UUID, or -1. */
int vkcu_vk_find_uuid(const vkcu_vk_instance *vi, const uint8_t uuid[16]);

/* The queue families (with their video codec operations) and extension
 * names of vi->devs[index], read on the first call for that device and kept.
 * NULL only for an index out of range or without memory. Thread-safe. */
const vkcu_vk_caps *vkcu_vk_caps_get(const vkcu_vk_instance *vi, int index);

/* Whether caps lists the extension. */
int vkcu_vk_caps_has(const vkcu_vk_caps *caps, const char *name);

#endif
