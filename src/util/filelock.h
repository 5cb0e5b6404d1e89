/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Locks on files that several processes share: output claims and
 * temporaries (core/outfile.c), GPU queue claims (gpu/qclaim.c). Both kinds
 * belong to the open file description, not to the process or the thread:
 * another open of the file, even in the same process, is another holder;
 * closing the descriptor drops the lock; the kernel drops every lock when
 * the process ends, however it ends. Two kinds, because one file holds
 * either one holder or many:
 * - whole-file locks (flock): one holder. Every claim file and temporary
 *   of vkcu has been locked so, and a file must keep its kind: Linux's
 *   flock and fcntl locks do not see each other, so a vkcu of another
 *   version sharing an output folder would miss the other kind's locks;
 * - byte locks (OFD, F_OFD_SETLK): one holder per byte, so one file counts
 *   many (a GPU queue's claims: byte k is the k-th holder).
 */
#ifndef VKCU_UTIL_FILELOCK_H
#define VKCU_UTIL_FILELOCK_H

#include <sys/types.h>

/* Locks the whole of fd's file, exclusively. wait 0: 0, or -1 with errno
 * EWOULDBLOCK when another description holds it; wait 1: waits until it is
 * free (a wait a signal interrupts goes on). -1 with errno on other
 * errors. */
int vkcu_file_lock(int fd, int wait);

/* Locks byte `at` of fd's file, exclusively, without waiting: 0, or -1 with
 * errno EAGAIN or EACCES when another description holds it. */
int vkcu_file_lock_byte(int fd, off_t at);

/* A byte lock of another description over [lo, hi): 1 with its range in
 * *start and *len (len 0: to the end of the file), 0 when there is none,
 * -1 with errno on error. */
int vkcu_file_lock_find(int fd, off_t lo, off_t hi, off_t *start, off_t *len);

#endif
