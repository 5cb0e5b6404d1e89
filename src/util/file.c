/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The whole-file reader (util/file.h). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "file.h"

enum vkcu_read_status vkcu_read_file(const char *path, size_t max, int flags, char **data, size_t *len, int *os_err)
{
    struct stat st;
    *data = NULL;
    *len = 0;
    *os_err = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        *os_err = errno;
        return VKCU_READ_OPEN;
    }
    enum vkcu_read_status ret = VKCU_READ_OK;
    int have_stat = fstat(fileno(f), &st) == 0;
    if ((flags & VKCU_READ_REGULAR) && (!have_stat || !S_ISREG(st.st_mode)))
        ret = VKCU_READ_NOT_REGULAR;
    else if (max && have_stat && S_ISREG(st.st_mode) && (unsigned long long)st.st_size > max)
        ret = VKCU_READ_TOO_BIG; /* known before reading a byte */
    /* a regular file's size sizes the buffer; a pipe's grows it */
    size_t cap = have_stat && S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 1 << 16, n = 0;
    char *buf = ret == VKCU_READ_OK ? malloc(cap) : NULL;
    if (ret == VKCU_READ_OK && !buf)
        ret = VKCU_READ_NOMEM;
    while (ret == VKCU_READ_OK) {
        if (n == cap - 1) {
            /* full: one byte more tells the end from a file that grew */
            int c = fgetc(f);
            if (c == EOF) {
                if (ferror(f))
                    ret = VKCU_READ_IO;
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                ret = VKCU_READ_NOMEM;
                break;
            }
            buf = nb;
            cap *= 2;
            buf[n++] = (char)c;
        }
        n += fread(buf + n, 1, cap - 1 - n, f);
        if (ferror(f))
            ret = VKCU_READ_IO;
        else if (max && n > max)
            ret = VKCU_READ_TOO_BIG;
        else if (feof(f))
            break;
    }
    fclose(f);
    if (ret != VKCU_READ_OK) {
        free(buf);
        return ret;
    }
    buf[n] = 0;
    *data = buf;
    *len = n;
    return VKCU_READ_OK;
}

int vkcu_stream_reader_gone(FILE *f)
{
    if (errno == EPIPE)
        return 1;
    /* errno may be another call's by now: ask the descriptor. A pipe
     * whose reader closed polls as an error for its writer. */
    struct stat st;
    int fd = fileno(f);
    if (fd < 0 || fstat(fd, &st) < 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
        return 0;
    struct pollfd p = { .fd = fd, .events = POLLOUT };
    return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}
