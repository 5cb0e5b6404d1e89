/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Imports into CUDA: one exportable Vulkan image (single plane, dedicated
 * memory) mapped as a CUDA mipmapped array with a texture and a surface
 * object, or one exportable semaphore (binary or timeline). Both rings use
 * these: everything is imported once per slot, at start-up, because an
 * import is expensive. A successful import hands the FD to CUDA; we close
 * an FD only when its import failed.
 */
#include <string.h>
#include <unistd.h>

#include "interop_vk.h"
#include "session_priv.h"

/* One exportable single-plane image, imported into CUDA as a mipmapped array. */
int vkcu_gpu_import_plane(vkcu_gpu *g, interop_plane *pl, VkFormat format, int w, int h, int bytes, int comps,
                          char *err, size_t errlen)
{
    int ret = 0, fd = -1;
    VkDevice dev = g->hwctx->act_dev;
    pl->width = w;
    pl->height = h;
    ret = vkcu_vk_export_image(&g->vk, g->hwctx->phys_dev, dev, format, w, h, &pl->image, &pl->memory, &pl->size,
                               &fd, err, errlen);
    if (ret < 0)
        goto fail;
    struct cudaExternalMemoryHandleDesc md = { .type = cudaExternalMemoryHandleTypeOpaqueFd,
                                               .handle.fd = fd, .size = pl->size, .flags = cudaExternalMemoryDedicated };
    CU_CHECK(cudaImportExternalMemory(&pl->ext, &md));
    fd = -1; /* CUDA owns it now */
    g->imports++;
    int bits = bytes * 8;
    struct cudaExternalMemoryMipmappedArrayDesc ad = {
        .offset = 0,
        .formatDesc = cudaCreateChannelDesc(bits, comps > 1 ? bits : 0, 0, 0, cudaChannelFormatKindUnsigned),
        .extent = { (size_t)w, (size_t)h, 0 },
        .flags = cudaArraySurfaceLoadStore,
        .numLevels = 1,
    };
    CU_CHECK(cudaExternalMemoryGetMappedMipmappedArray(&pl->mipmap, pl->ext, &ad));
    CU_CHECK(cudaGetMipmappedArrayLevel(&pl->array, pl->mipmap, 0));
    struct cudaResourceDesc rd = { .resType = cudaResourceTypeArray, .res.array.array = pl->array };
    struct cudaTextureDesc td = { .addressMode = { cudaAddressModeClamp, cudaAddressModeClamp },
                                  .filterMode = cudaFilterModePoint, .readMode = cudaReadModeElementType,
                                  .normalizedCoords = 0 };
    CU_CHECK(cudaCreateTextureObject(&pl->tex, &rd, &td, NULL));
    CU_CHECK(cudaCreateSurfaceObject(&pl->surf, &rd));
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    return ret;
}

int vkcu_gpu_import_semaphore(vkcu_gpu *g, VkSemaphore *sem, cudaExternalSemaphore_t *cu, int timeline,
                              char *err, size_t errlen)
{
    int ret = 0, fd = -1;
    ret = vkcu_vk_export_semaphore(&g->vk, g->hwctx->act_dev, timeline, sem, &fd, err, errlen);
    if (ret < 0)
        goto fail;
    struct cudaExternalSemaphoreHandleDesc sd = {
        .type = timeline ? cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd : cudaExternalSemaphoreHandleTypeOpaqueFd,
        .handle.fd = fd,
    };
    CU_CHECK(cudaImportExternalSemaphore(cu, &sd));
    fd = -1;
    g->imports++;
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    return ret;
}

void vkcu_gpu_plane_free_cuda(interop_plane *pl)
{
    if (pl->tex)
        cudaDestroyTextureObject(pl->tex);
    if (pl->surf)
        cudaDestroySurfaceObject(pl->surf);
    if (pl->mipmap)
        cudaFreeMipmappedArray(pl->mipmap);
    if (pl->ext)
        cudaDestroyExternalMemory(pl->ext);
}

void vkcu_gpu_plane_free_vk(vkcu_gpu *g, interop_plane *pl)
{
    VkDevice dev = g->hwctx->act_dev;
    if (pl->image)
        g->vk.vkDestroyImage(dev, pl->image, NULL);
    if (pl->memory)
        g->vk.vkFreeMemory(dev, pl->memory, NULL);
}
