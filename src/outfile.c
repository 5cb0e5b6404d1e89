/*
 * Output files appear only complete: jobs write to a hidden temporary name
 * in the destination folder and rename it over the final name at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stage.h"

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
    return 0;
}

int vkcu_outfile_commit(const char *tmp, const char *path, char *err, size_t errlen)
{
    if (!strcmp(tmp, path))
        return 0;
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
    if (tmp && *tmp && lstat(tmp, &st) == 0 && S_ISREG(st.st_mode))
        unlink(tmp);
}
