/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The process's one Vulkan instance (see vkinstance.h for why one). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vkinstance.h"
#include "util/log.h"

static pthread_once_t instance_once = PTHREAD_ONCE_INIT;
static vkcu_vk_instance instance;
static int instance_loader;
static char instance_err[256];

static pthread_mutex_t caps_lock = PTHREAD_MUTEX_INITIALIZER;
static vkcu_vk_caps *caps_of[VKCU_VK_MAX_PHYSDEVS];

static void make_instance(void)
{
    vkcu_vk_instance *vi = &instance;
    const char *missing = NULL;
    vi->t_start = vkcu_now();
    PFN_vkGetInstanceProcAddr gipa = vkcu_vk_loader();
    instance_loader = !!gipa;
    if (!gipa) {
        snprintf(instance_err, sizeof(instance_err), "no Vulkan loader (libvulkan.so.1) on this machine");
        return;
    }
    vkcu_vk_load(&vi->fn, gipa, NULL, NULL, &missing);
    vi->loader_api = VK_API_VERSION_1_0;
    if (vi->fn.vkEnumerateInstanceVersion)
        vi->fn.vkEnumerateInstanceVersion(&vi->loader_api);
    /* No layers and no instance extensions: each one the loader or driver
     * sets up is time on the way to the first frame, and device-level
     * external memory/semaphore and video are all vkcu asks for. */
    VkApplicationInfo app = { .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "vkcu",
                              .apiVersion = VK_API_VERSION_1_3 };
    VkInstanceCreateInfo ci = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app };
    VkInstance inst = VK_NULL_HANDLE;
    VkResult r = vi->fn.vkCreateInstance ? vi->fn.vkCreateInstance(&ci, NULL, &inst) : VK_ERROR_INITIALIZATION_FAILED;
    vi->t_created = vkcu_now();
    if (r != VK_SUCCESS) {
        snprintf(instance_err, sizeof(instance_err), "cannot create a Vulkan 1.3 instance (%s; loader API %u.%u; no "
                 "Vulkan driver?)", vkcu_vk_result_str(r), VK_API_VERSION_MAJOR(vi->loader_api),
                 VK_API_VERSION_MINOR(vi->loader_api));
        return;
    }
    if (vkcu_vk_load(&vi->fn, gipa, inst, NULL, &missing) < 0) {
        snprintf(instance_err, sizeof(instance_err), "the Vulkan loader lacks %s", missing);
        PFN_vkDestroyInstance destroy = (PFN_vkDestroyInstance)gipa(inst, "vkDestroyInstance");
        if (destroy)
            destroy(inst, NULL);
        return;
    }
    uint32_t n = VKCU_VK_MAX_PHYSDEVS;
    VkPhysicalDevice pds[VKCU_VK_MAX_PHYSDEVS];
    VkResult er = vi->fn.vkEnumeratePhysicalDevices(inst, &n, pds);
    if (er < 0)
        n = 0;
    for (uint32_t i = 0; i < n; i++) {
        vkcu_vk_physdev *d = &vi->devs[i];
        VkPhysicalDeviceIDProperties id = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES };
        VkPhysicalDeviceProperties2 pr = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &id };
        vi->fn.vkGetPhysicalDeviceProperties2(pds[i], &pr);
        d->pd = pds[i];
        memcpy(d->uuid, id.deviceUUID, 16);
        snprintf(d->name, sizeof(d->name), "%s", pr.properties.deviceName);
        d->vendor_id = pr.properties.vendorID;
        d->api_version = pr.properties.apiVersion;
        d->type = pr.properties.deviceType;
    }
    vi->nb_devs = (int)n;
    vi->inst = inst;
    vi->t_enumerated = vkcu_now();
    LOGD("Vulkan instance: %.0f ms, %d device(s) and their IDs %.0f ms more", (vi->t_created - vi->t_start) * 1e3,
         vi->nb_devs, (vi->t_enumerated - vi->t_created) * 1e3);
}

const vkcu_vk_instance *vkcu_vk_instance_get(int *loader, char *err, size_t errlen)
{
    pthread_once(&instance_once, make_instance);
    if (loader)
        *loader = instance_loader;
    if (!instance.inst) {
        snprintf(err, errlen, "%s", instance_err);
        return NULL;
    }
    return &instance;
}

int vkcu_vk_find_uuid(const vkcu_vk_instance *vi, const uint8_t uuid[16])
{
    for (int i = 0; i < vi->nb_devs; i++)
        if (!memcmp(vi->devs[i].uuid, uuid, 16))
            return i;
    return -1;
}

int vkcu_vk_caps_has(const vkcu_vk_caps *caps, const char *name)
{
    for (int i = 0; i < caps->nb_exts; i++)
        if (!strcmp(caps->exts[i], name))
            return 1;
    return 0;
}

const vkcu_vk_caps *vkcu_vk_caps_get(const vkcu_vk_instance *vi, int index)
{
    if (index < 0 || index >= vi->nb_devs)
        return NULL;
    pthread_mutex_lock(&caps_lock);
    vkcu_vk_caps *c = caps_of[index];
    if (!c && (c = calloc(1, sizeof(*c)))) {
        double t0 = vkcu_now();
        VkPhysicalDevice pd = vi->devs[index].pd;
        uint32_t n = VKCU_VK_MAX_DEVICE_EXTS;
        if (vi->fn.vkEnumerateDeviceExtensionProperties(pd, NULL, &n, c->store) < 0)
            n = 0;
        for (uint32_t i = 0; i < n; i++)
            c->exts[i] = c->store[i].extensionName;
        c->nb_exts = (int)n;
        c->nqf = vkcu_vk_queue_families(&vi->fn, pd, vkcu_vk_caps_has(c, VK_KHR_VIDEO_QUEUE_EXTENSION_NAME), c->qf,
                                        (int)(sizeof(c->qf) / sizeof(c->qf[0])));
        c->query_ms = (vkcu_now() - t0) * 1e3;
        caps_of[index] = c;
    }
    pthread_mutex_unlock(&caps_lock);
    return c;
}
