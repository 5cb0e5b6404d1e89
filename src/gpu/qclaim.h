/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Queue claims across processes: which queues of a GPU's queue family
 * the vkcu processes of this user have taken, so that N processes spread
 * over the engines as N streams of one process do.
 *
 * A claim is an advisory lock (an OFD byte lock) on one byte of a file per
 * GPU, queue family and queue in a runtime folder; the kernel drops it when
 * the process exits or dies (kill -9 included), so no claim outlives its
 * holder. A process takes its claims one at a time on the least-claimed
 * queue (ties: the lowest index), while holding the GPU's lock file, so
 * that processes starting at once still spread. Pure POSIX: no Vulkan, so
 * tests drive it with made-up GPUs and queue counts.
 */
#ifndef VKCU_GPU_QCLAIM_H
#define VKCU_GPU_QCLAIM_H

#include <stddef.h>
#include <stdint.h>

#define VKCU_QCLAIM_MAX_QUEUES 64  /* queues of one family that claims can name */
#define VKCU_QCLAIM_MAX_CLAIMS 64  /* claims one process holds in one family */
#define VKCU_QCLAIM_MAX_HOLDERS 1024 /* claims on one queue, all processes together */

typedef struct vkcu_qclaim vkcu_qclaim;

/**
 * The folder the claims live in: $VKCU_QUEUE_CLAIMS when set (a folder, or
 * "off": no claims), else $XDG_RUNTIME_DIR/vkcu-queues, else
 * /dev/shm/vkcu-queues-UID. make: 1 makes it (mode 0700) when missing and
 * checks that it is writable (to take claims); 0 only names it (to read
 * claims: a missing folder holds none).
 * @return 0 with the path in dir; -1 with the reason in why (no usable
 *         folder, or claims off).
 * @note Thread-safe.
 */
int vkcu_qclaim_dir(char *dir, size_t len, int make, char *why, size_t whylen);

/**
 * Takes `want` claims (1..VKCU_QCLAIM_MAX_CLAIMS) on the queues
 * 0..nb_queues-1 of family `family` of the GPU `uuid`: each on the queue
 * with the fewest claims at that moment, counting every process's and the
 * ones taken before it, ties to the lowest index; all on queue `pin` when
 * pin >= 0 (which must be < nb_queues). role names the family's use in
 * the file names and in vkcu_qclaim_list ("decode", "compute").
 * @return 0 with *out (release with vkcu_qclaim_release); -1 with the
 *         reason in why (folder not writable, no OFD locks, bad argument):
 *         the caller then chooses its queues without claims.
 * @note Thread-safe: claims of two threads of one process count against
 *       each other as two processes' do.
 */
int vkcu_qclaim_take(const char *dir, const uint8_t uuid[16], const char *role, uint32_t family, uint32_t nb_queues,
                     uint32_t want, int pin, vkcu_qclaim **out, char *why, size_t whylen);

/* Claims held, and the queue of claim i (0 <= i < count), in the order taken. */
uint32_t vkcu_qclaim_count(const vkcu_qclaim *c);
uint32_t vkcu_qclaim_queue(const vkcu_qclaim *c, uint32_t i);

/* Drops the claims (the other processes see them gone at once) and clears
 * the pointer; NULL and *c == NULL do nothing. */
void vkcu_qclaim_release(vkcu_qclaim **c);

/**
 * Claims held now by all processes (this one included) on queues
 * 0..nb_queues-1 of a family, into counts[].
 * @return 0; -1 when the folder cannot be read.
 */
int vkcu_qclaim_counts(const char *dir, const uint8_t uuid[16], const char *role, uint32_t family, uint32_t nb_queues,
                       uint32_t *counts);

/* One queue with claims, for vkcu_qclaim_list: the GPU's UUID as 32 hex
 * digits, the role and family from the file name, the queue and its claims. */
typedef void (*vkcu_qclaim_list_cb)(void *opaque, const char *gpu, const char *role, uint32_t family, uint32_t queue,
                                    uint32_t claims);

/**
 * Calls cb for every queue that has claims now, sorted by GPU, role,
 * family and queue; writes nothing.
 * @return the number of queues reported; -1 when the folder cannot be read.
 */
int vkcu_qclaim_list(const char *dir, vkcu_qclaim_list_cb cb, void *opaque);

#endif
