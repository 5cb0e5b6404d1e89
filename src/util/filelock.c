/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Locks on files that several processes share, whole-file (flock) and byte
 * (OFD) locks: util/filelock.h says which is for what and why.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>

#include "filelock.h"

int vkcu_file_lock(int fd, int wait)
{
    int r;
    while ((r = flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB))) < 0 && wait && errno == EINTR)
        ;
    return r;
}

int vkcu_file_lock_byte(int fd, off_t at)
{
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = at, .l_len = 1 };
    return fcntl(fd, F_OFD_SETLK, &fl);
}

int vkcu_file_lock_find(int fd, off_t lo, off_t hi, off_t *start, off_t *len)
{
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = lo, .l_len = hi - lo };
    if (fcntl(fd, F_OFD_GETLK, &fl) < 0)
        return -1;
    if (fl.l_type == F_UNLCK)
        return 0;
    *start = fl.l_start;
    *len = fl.l_len;
    return 1;
}
