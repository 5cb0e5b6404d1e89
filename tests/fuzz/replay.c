/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main() for the fuzz targets without libFuzzer: runs the target once on
 * every file named (folders: every file in them, in name order) and prints
 * how many. `make test` replays tests/fuzz/regress/TARGET and the seed
 * corpus this way (tests/cli/fuzz-regress.sh); a crash or a failed check
 * aborts, so the test fails.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf)
            abort();
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        buf = realloc(buf, cap *= 2);
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "%s: read error\n", path);
        free(buf);
        return -1;
    }
    /* libFuzzer hands a target a buffer of exactly the input's size: copy
     * into one so that ASan sees reads past the end here too. */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact)
        abort();
    memcpy(exact, buf, n);
    free(buf);
    fprintf(stderr, "replay %s\n", path);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    long count = 0;
    int failed = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) < 0) {
            fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
            failed = 1;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            failed |= replay_file(argv[i]) < 0;
            count++;
            continue;
        }
        DIR *dir = opendir(argv[i]);
        if (!dir) {
            fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
            failed = 1;
            continue;
        }
        char **names = NULL;
        size_t nb = 0;
        for (struct dirent *e; (e = readdir(dir));) {
            if (e->d_name[0] == '.')
                continue;
            names = realloc(names, (nb + 1) * sizeof(*names));
            if (!names || !(names[nb] = malloc(strlen(argv[i]) + strlen(e->d_name) + 2)))
                abort();
            sprintf(names[nb++], "%s/%s", argv[i], e->d_name);
        }
        closedir(dir);
        if (nb)
            qsort(names, nb, sizeof(*names), by_name);
        for (size_t k = 0; k < nb; k++) {
            if (stat(names[k], &st) == 0 && S_ISREG(st.st_mode)) {
                failed |= replay_file(names[k]) < 0;
                count++;
            }
            free(names[k]);
        }
        free(names);
    }
    printf("replayed %ld inputs\n", count);
    return failed;
}
