/*
 * Output files appear only complete: jobs write to a hidden temporary name
 * in the destination folder and rename it over the final name at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <pthread.h>
#include <unistd.h>

#include "stage.h"

/* Temporary outputs in progress, so that a process that must end at once
 * (the stall watchdog) can still remove them. */
#define MAX_TEMPS 256
static pthread_mutex_t temps_lock = PTHREAD_MUTEX_INITIALIZER;
static char *temps[MAX_TEMPS];

static void temps_set(const char *path, int add)
{
    pthread_mutex_lock(&temps_lock);
    for (int i = 0; i < MAX_TEMPS; i++) {
        if (add && !temps[i]) {
            temps[i] = strdup(path);
            break;
        }
        if (!add && temps[i] && !strcmp(temps[i], path)) {
            free(temps[i]);
            temps[i] = NULL;
            break;
        }
    }
    pthread_mutex_unlock(&temps_lock);
}

void vkcu_outfile_abort_all(void)
{
    pthread_mutex_lock(&temps_lock);
    for (int i = 0; i < MAX_TEMPS; i++)
        if (temps[i]) {
            struct stat st;
            if (lstat(temps[i], &st) == 0 && S_ISREG(st.st_mode))
                unlink(temps[i]);
        }
    pthread_mutex_unlock(&temps_lock);
}

int vkcu_outfile_begin(const char *path, int overwrite, char *tmp, size_t tmplen, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        /* A device or pipe: written in place, nothing to rename or remove. */
        snprintf(tmp, tmplen, "%s", path);
        return 0;
    }
    if (!overwrite && stat(path, &st) == 0) {
        snprintf(err, errlen, "%s: already exists (use -y to overwrite)", path);
        return VKCU_ERR_OUTPUT;
    }
    char dirbuf[4096], basebuf[4096];
    snprintf(dirbuf, sizeof(dirbuf), "%s", path);
    snprintf(basebuf, sizeof(basebuf), "%s", path);
    const char *dir = dirname(dirbuf), *base = basename(basebuf);
    if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: output folder %s does not exist", path, dir);
        return VKCU_ERR_OUTPUT;
    }
    if (access(dir, W_OK) < 0) {
        snprintf(err, errlen, "%s: output folder %s is not writable", path, dir);
        return VKCU_ERR_OUTPUT;
    }
    /* Keep the extension last: some muxers look at it. */
    const char *dot = strrchr(base, '.');
    snprintf(tmp, tmplen, "%s/.%.*s.vkcu-%d.part%s", dir, dot ? (int)(dot - base) : (int)strlen(base), base,
             (int)getpid(), dot ? dot : "");
    temps_set(tmp, 1);
    return 0;
}

int vkcu_outfile_commit(const char *tmp, const char *path, char *err, size_t errlen)
{
    if (!strcmp(tmp, path))
        return 0;
    temps_set(tmp, 0);
    if (rename(tmp, path) < 0) {
        snprintf(err, errlen, "%s: cannot rename the finished output into place: %s", path, strerror(errno));
        unlink(tmp);
        return VKCU_ERR_OUTPUT;
    }
    return 0;
}

void vkcu_outfile_abort(const char *tmp)
{
    struct stat st;
    if (!tmp || !*tmp)
        return;
    temps_set(tmp, 0);
    if (lstat(tmp, &st) == 0 && S_ISREG(st.st_mode))
        unlink(tmp);
}
