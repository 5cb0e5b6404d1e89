/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The output ring's CUDA side (see outring_cuda.h). A successful import
 * hands the FD to CUDA: we close one only when its import failed. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "outring_cuda.h"
#include "check.h"
#include "util/error.h"

static int import_semaphore(vkcu_outring_cuda *oc, cudaExternalSemaphore_t *sem, int *fd, char *err, size_t errlen)
{
    int ret = VKCU_ERR_DEVICE;
    struct cudaExternalSemaphoreHandleDesc sd = { .type = cudaExternalSemaphoreHandleTypeOpaqueFd, .handle.fd = *fd };
    CU_CHECK(cudaImportExternalSemaphore(sem, &sd));
    *fd = -1;
    oc->imports++;
    return 0;
fail:
    return ret;
}

int vkcu_outring_cuda_import(vkcu_outring_cuda *oc, vkcu_outring *ring, size_t frame_size, char *err, size_t errlen)
{
    int ret = VKCU_ERR_DEVICE;
    int mem_fd = -1, filled_fd = -1, drained_fd = -1;
    memset(oc, 0, sizeof(*oc));
    oc->ring = ring;
    for (int s = 0; s < vkcu_outring_nb_slots(ring); s++) {
        vkcu_outring_cuda_slot *cs = &oc->slot[s];
        const vkcu_outring_slot *vs = vkcu_outring_slot_get(ring, s);
        oc->nb_slots = s + 1;
        if (vkcu_outring_export_memory(ring, s, &mem_fd, err, errlen) < 0)
            goto fail;
        struct cudaExternalMemoryHandleDesc md = { .type = cudaExternalMemoryHandleTypeOpaqueFd,
                                                   .handle.fd = mem_fd, .size = vs->alloc_size,
                                                   .flags = cudaExternalMemoryDedicated };
        CU_CHECK(cudaImportExternalMemory(&cs->memory, &md));
        mem_fd = -1;
        oc->imports++;
        struct cudaExternalMemoryBufferDesc bd = { .offset = 0, .size = frame_size };
        CU_CHECK(cudaExternalMemoryGetMappedBuffer((void **)&cs->ptr, cs->memory, &bd));
        if (vkcu_outring_export_semaphores(ring, s, &filled_fd, &drained_fd, err, errlen) < 0 ||
            import_semaphore(oc, &cs->filled, &filled_fd, err, errlen) < 0 ||
            import_semaphore(oc, &cs->drained, &drained_fd, err, errlen) < 0)
            goto fail;
    }
    return 0;
fail:
    if (mem_fd >= 0)
        close(mem_fd);
    if (filled_fd >= 0)
        close(filled_fd);
    if (drained_fd >= 0)
        close(drained_fd);
    return ret;
}

int vkcu_outring_cuda_begin(vkcu_outring_cuda *oc, cudaStream_t stream, int *slot, uint8_t **dst, char *err,
                            size_t errlen)
{
    int ret = VKCU_ERR_DEVICE;
    int s = (int)(oc->frames++ % oc->nb_slots);
    vkcu_outring_cuda_slot *cs = &oc->slot[s];
    if (cs->used) {
        struct cudaExternalSemaphoreWaitParams wp;
        memset(&wp, 0, sizeof(wp));
        CU_CHECK(cudaWaitExternalSemaphoresAsync(&cs->drained, &wp, 1, stream));
    }
    *slot = s;
    *dst = cs->ptr;
    return 0;
fail:
    return ret;
}

int vkcu_outring_cuda_end(vkcu_outring_cuda *oc, int slot, cudaStream_t stream, char *err, size_t errlen)
{
    int ret = VKCU_ERR_DEVICE;
    struct cudaExternalSemaphoreSignalParams sp;
    memset(&sp, 0, sizeof(sp));
    CU_CHECK(cudaSignalExternalSemaphoresAsync(&oc->slot[slot].filled, &sp, 1, stream));
    oc->slot[slot].used = 1;
    return 0;
fail:
    return ret;
}

void vkcu_outring_cuda_release(vkcu_outring_cuda *oc)
{
    for (int s = 0; s < oc->nb_slots; s++) {
        vkcu_outring_cuda_slot *cs = &oc->slot[s];
        if (cs->filled)
            cudaDestroyExternalSemaphore(cs->filled);
        if (cs->drained)
            cudaDestroyExternalSemaphore(cs->drained);
        if (cs->ptr)
            cudaFree(cs->ptr); /* a mapped buffer is freed with cudaFree */
        if (cs->memory)
            cudaDestroyExternalMemory(cs->memory);
    }
    memset(oc, 0, sizeof(*oc));
}
