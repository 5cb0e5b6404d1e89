/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the shared device is made with: the streams and encode operation
 * the process said it will run, and the queues it takes on the GPU.
 *
 * Across processes: each process has its own VkDevice, and queue i of the
 * decode family is the same engine in every one of them, so processes that
 * all used queues 0 and 1 shared two engines. Before making the device, a
 * process therefore claims as many decode queues as it runs streams, and
 * its compute queues, on the least-claimed queues of the GPU (gpu/qclaim.c:
 * locks the kernel drops when the process ends), creates queues up to the
 * highest one claimed, and its lanes go round the queues it claimed. Where
 * claims cannot be taken it falls back to queues 0, 1, ... (a -v line).
 * A pinned decode queue (the decode_queue setting) is claimed and used by
 * every decoder of its jobs.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>

#include "vkdev_priv.h"
#include "util/log.h"

static const char *const role_names[NB_ROLES] = { "decode", "compute" };

/* The number of compute queues: one unless VKCU_VK_COMPUTE_QUEUES says
 * otherwise (each stream's handoff takes queue `n - 1 - lane % n`). */
/* Compute queues asked for by the process (vkcu_vkdev_expect_compute). */
static atomic_uint expect_compute;

void vkcu_vkdev_expect_compute(unsigned queues)
{
    unsigned cur = atomic_load(&expect_compute);
    while (queues > cur && !atomic_compare_exchange_weak(&expect_compute, &cur, queues))
        ;
}

static uint32_t compute_queues_wanted(void)
{
    const char *e = getenv("VKCU_VK_COMPUTE_QUEUES");
    int n = e ? atoi(e) : 1;
    if (!e && (int)atomic_load(&expect_compute) > n)
        n = (int)atomic_load(&expect_compute);
    return n < 1 ? 1 : n > 64 ? 64 : (uint32_t)n;
}

/* What the process said it will run (vkcu_vkdev_expect): the most of each. */
static atomic_uint expect_streams;
static atomic_uint expect_encode;

void vkcu_vkdev_expect(unsigned streams, uint32_t encode_op)
{
    unsigned cur = atomic_load(&expect_streams);
    while (streams > cur && !atomic_compare_exchange_weak(&expect_streams, &cur, streams))
        ;
    atomic_fetch_or(&expect_encode, encode_op);
}

/* Decode queues: each costs vkCreateDevice about as much as the next (on
 * the H200 every queue of every family took 563-657 ms, one decode and one
 * compute queue 82-98 ms), so as many as the streams the process expects,
 * and at least two: FFmpeg's decoder submits its two execution contexts on
 * queues 0 and 1 (i % queues), and a single stream keeps the two queues it
 * had when the device had every one. VKCU_VK_DECODE_QUEUES=N overrides it
 * (measurements). */
static uint32_t decode_queues_wanted(void)
{
    const char *e = getenv("VKCU_VK_DECODE_QUEUES");
    int n = e ? atoi(e) : (int)atomic_load(&expect_streams);
    if (!e && n < 2)
        n = 2;
    return n < 1 ? 1 : n > MAX_LANE_QUEUES ? MAX_LANE_QUEUES : (uint32_t)n;
}

/* Decode claims: one per stream the process expects (VKCU_VK_DECODE_QUEUES
 * when set), so that other processes see how loaded each queue is. */
static uint32_t decode_claims_wanted(void)
{
    const char *e = getenv("VKCU_VK_DECODE_QUEUES");
    int n = e ? atoi(e) : (int)atomic_load(&expect_streams);
    return n < 1 ? 1 : n > VKCU_QCLAIM_MAX_CLAIMS ? VKCU_QCLAIM_MAX_CLAIMS : (uint32_t)n;
}

/* The decode queue the process's jobs pin (the decode_queue setting), for
 * the device's creation; -1: none. The first one said wins. */
static atomic_int expect_pin = -1;

void vkcu_vkdev_expect_decode_queue(int queue)
{
    int none = -1;
    if (queue >= 0)
        atomic_compare_exchange_strong(&expect_pin, &none, queue);
}

/* Fills qc with the queues of one role this process uses on the GPU
 * `uuid`, in family `family` of `have` queues: `claims` claims on the
 * least-claimed queues (all on `pin` when pin >= 0), or, where claims
 * cannot be taken, queues 0..fallback-1 (or the pin). Returns how many
 * queues the device needs in that family: the highest chosen + 1. */
static uint32_t choose_queues(queue_choice *qc, int role, const uint8_t uuid[16], uint32_t family, uint32_t have,
                              uint32_t claims, uint32_t fallback, int pin)
{
    memset(qc, 0, sizeof(*qc));
    qc->family = family;
    qc->have = have;
    if (have > MAX_LANE_QUEUES)
        have = MAX_LANE_QUEUES;
    if (have < 1)
        return 0;
    if (pin >= (int)have)
        pin = -1; /* the job that pinned it says why it cannot run (vkcu_vkdev_acquire) */
    char dir[512], why[512] = "";
    if (vkcu_qclaim_dir(dir, sizeof(dir), 1, why, sizeof(why)) == 0 &&
        vkcu_qclaim_take(dir, uuid, role_names[role], family, have, claims, pin, &qc->claim, why, sizeof(why)) == 0) {
        char list[128] = "";
        for (uint32_t k = 0; k < vkcu_qclaim_count(qc->claim); k++) {
            uint32_t q = vkcu_qclaim_queue(qc->claim, k), seen = 0;
            for (uint32_t i = 0; i < qc->nb; i++)
                seen |= qc->queue[i] == q;
            if (!seen && qc->nb < MAX_LANE_QUEUES) {
                qc->queue[qc->nb++] = q;
                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%u", qc->nb > 1 ? " " : "", q);
            }
        }
        LOGV("GPU: %s queue%s %s of family %u (%u claim%s in %s: the least-claimed queues of this GPU%s)",
             role_names[role], qc->nb > 1 ? "s" : "", list, family, vkcu_qclaim_count(qc->claim),
             vkcu_qclaim_count(qc->claim) > 1 ? "s" : "", dir, pin >= 0 ? "; pinned" : "");
    } else {
        if (pin >= 0)
            qc->queue[qc->nb++] = (uint32_t)pin;
        else
            for (uint32_t q = 0; q < fallback && q < have; q++)
                qc->queue[qc->nb++] = q;
        LOGV("GPU: no %s queue claims (%s): %s queues from 0, whatever other processes use", role_names[role], why,
             role_names[role]);
    }
    uint32_t top = 0;
    for (uint32_t i = 0; i < qc->nb; i++)
        if (qc->queue[i] + 1 > top)
            top = qc->queue[i] + 1;
    return top;
}

void vkcu_vkdev_release_choice(queue_choice qc[NB_ROLES])
{
    for (int r = 0; r < NB_ROLES; r++) {
        vkcu_qclaim_release(&qc[r].claim);
        qc[r].nb = 0;
    }
}

/* Our device's plan: interop, and the compute and decode queues and the
 * encode operation wanted. */
void vkcu_vkdev_plan_want(vkcu_vk_plan_want *want)
{
    *want = (vkcu_vk_plan_want){ .flags = VKCU_PLAN_INTEROP, .compute = compute_queues_wanted(),
                                 .decode = decode_queues_wanted(), .encode = atomic_load(&expect_encode) };
}

/* Our device's queues: up to the highest one this process claims
 * (vkCreateDevice makes queues 0..n-1 of a family). */
void vkcu_vkdev_choose_in_plan(queue_choice qc[NB_ROLES], const uint8_t uuid[16], const vkcu_vk_caps *caps,
                               vkcu_vk_plan *plan)
{
    if (plan->decode_family >= 0)
        plan->nb_decode = choose_queues(&qc[ROLE_DECODE], ROLE_DECODE, uuid, (uint32_t)plan->decode_family,
                                        caps->qf[plan->decode_family].count, decode_claims_wanted(),
                                        plan->nb_decode, atomic_load(&expect_pin));
    uint32_t nb_compute = choose_queues(&qc[ROLE_COMPUTE], ROLE_COMPUTE, uuid, (uint32_t)plan->compute_family,
                                        caps->qf[plan->compute_family].count, compute_queues_wanted(),
                                        plan->nb_compute, -1);
    if (nb_compute)
        plan->nb_compute = nb_compute;
}

/* FFmpeg's device has every queue: the choice only picks among them. */
void vkcu_vkdev_choose_in_device(queue_choice qc[NB_ROLES], const AVVulkanDeviceContext *hw,
                                 const uint8_t uuid[16])
{
    int dec = -1, comp = -1;
    for (int i = 0; i < hw->nb_qf; i++) {
        if (dec < 0 && (hw->qf[i].flags & VK_QUEUE_VIDEO_DECODE_BIT_KHR))
            dec = i;
        if (comp < 0 && (hw->qf[i].flags & VK_QUEUE_COMPUTE_BIT))
            comp = i;
    }
    if (dec >= 0)
        choose_queues(&qc[ROLE_DECODE], ROLE_DECODE, uuid, (uint32_t)hw->qf[dec].idx, (uint32_t)hw->qf[dec].num,
                      decode_claims_wanted(), decode_queues_wanted(), atomic_load(&expect_pin));
    if (comp >= 0)
        choose_queues(&qc[ROLE_COMPUTE], ROLE_COMPUTE, uuid, (uint32_t)hw->qf[comp].idx, (uint32_t)hw->qf[comp].num,
                      compute_queues_wanted(), compute_queues_wanted(), -1);
}
