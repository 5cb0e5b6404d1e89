/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One table per vocabulary, one file reader:
 * - every hash function the help and messages list (VKCU_HASH_ALGOS_PIPE,
 *   VKCU_HASH_ALGOS, VKCU_HASH_ALGOS_UPPER, spliced from VKCU_HASH_NAMED) is
 *   one the parser accepts, in either case, and names back to the same id
 *   and framemd5 header name; nothing else parses;
 * - the same for hash-list formats (VKCU_HASH_FORMATS_PIPE), with the
 *   extensions presets give their outputs;
 * - vkcu_read_file returns the exact bytes (NUL-terminated) of an empty
 *   file, of files at and around its buffer's growth, and of a pipe longer
 *   than its first buffer; it refuses past `max`, a folder when only
 *   regular files are asked for, and names a missing file's errno.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/file.h"
#include "util/hash_algo.h"

static int failures;
#define CHECK(c, ...)                                                                                              \
    do {                                                                                                           \
        if (!(c)) {                                                                                                \
            printf("FAIL line %d: ", __LINE__);                                                                    \
            printf(__VA_ARGS__);                                                                                   \
            printf("\n");                                                                                          \
            failures++;                                                                                            \
        }                                                                                                          \
    } while (0)

/* Splits "a|b|c" (or "a, b or c") into words. */
static int words(const char *list, char out[][32], int max)
{
    int n = 0;
    const char *p = list;
    while (*p && n < max) {
        while (*p == '|' || *p == ',' || *p == ' ')
            p++;
        if (!strncmp(p, "or ", 3)) {
            p += 3;
            continue;
        }
        size_t k = strcspn(p, "|, ");
        if (!k)
            break;
        snprintf(out[n++], 32, "%.*s", (int)k, p);
        p += k;
    }
    return n;
}

static void hash_names(void)
{
    char pipe[16][32], ids[16][32], upper[16][32];
    int np = words(VKCU_HASH_ALGOS_PIPE, pipe, 16), ni = words(VKCU_HASH_ALGOS, ids, 16);
    int nu = words(VKCU_HASH_ALGOS_UPPER, upper, 16);
    CHECK(np == 5 && ni == np && nu == np, "lists of %d, %d, %d names", np, ni, nu);
    /* the texts help and messages printed before the table */
    CHECK(!strcmp(VKCU_HASH_ALGOS, "md5, sha256, crc32, xxh64 or blake3"), "message list '%s'", VKCU_HASH_ALGOS);
    CHECK(!strcmp(VKCU_HASH_ALGOS_UPPER, "MD5, SHA256, CRC32, XXH64 or BLAKE3"), "'%s'", VKCU_HASH_ALGOS_UPPER);
    CHECK(!strcmp(VKCU_HASH_ALGOS_LIST, "md5, sha256, crc32, xxh64, blake3"), "'%s'", VKCU_HASH_ALGOS_LIST);
    CHECK(!strcmp(VKCU_HASH_ALGOS_PIPE, "md5|sha256|crc32|xxh64|blake3"), "'%s'", VKCU_HASH_ALGOS_PIPE);
    for (int i = 0; i < np && i < ni && i < nu; i++) {
        enum vkcu_hash_algo a, b;
        CHECK(!strcmp(pipe[i], ids[i]), "help says %s, messages %s", pipe[i], ids[i]);
        CHECK(vkcu_hash_algo_parse(pipe[i], &a) == 0, "'%s' in the help does not parse", pipe[i]);
        CHECK(vkcu_hash_algo_parse(upper[i], &b) == 0 && b == a, "'%s' does not parse to %s", upper[i], pipe[i]);
        CHECK(!strcmp(vkcu_hash_algo_id(a), pipe[i]), "%s names back as %s", pipe[i], vkcu_hash_algo_id(a));
        CHECK(!strcmp(vkcu_hash_algo_name(a), upper[i]), "%s's header name %s", pipe[i], vkcu_hash_algo_name(a));
        CHECK(!strcasecmp(upper[i], pipe[i]), "%s vs %s", upper[i], pipe[i]);
    }
    enum vkcu_hash_algo a;
    CHECK(vkcu_hash_algo_parse("adler32", &a) < 0, "adler32 (framecrc's) parses");
    CHECK(vkcu_hash_algo_parse("sha1", &a) < 0 && vkcu_hash_algo_parse("", &a) < 0, "an unlisted name parses");
    CHECK(!strcmp(vkcu_hash_algo_name(VKCU_HASH_ADLER32), "ADLER32"), "adler32's header name");
}

static void format_names(void)
{
    char pipe[8][32], msg[8][32];
    int np = words(VKCU_HASH_FORMATS_PIPE, pipe, 8), nm = words(VKCU_HASH_FORMATS, msg, 8);
    CHECK(np == 3 && nm == 3, "format lists of %d and %d names", np, nm);
    CHECK(!strcmp(VKCU_HASH_FORMATS, "framemd5, framecrc or json"), "'%s'", VKCU_HASH_FORMATS);
    CHECK(!strcmp(VKCU_HASH_FORMATS_PIPE, "framemd5|framecrc|json"), "'%s'", VKCU_HASH_FORMATS_PIPE);
    static const char *ext[] = { ".framemd5", ".framecrc", ".jsonl" };
    for (int i = 0; i < np && i < nm; i++) {
        enum vkcu_hash_format f;
        CHECK(!strcmp(pipe[i], msg[i]), "help says %s, messages %s", pipe[i], msg[i]);
        CHECK(vkcu_hash_format_parse(pipe[i], &f) == 0, "'%s' does not parse", pipe[i]);
        CHECK(!strcmp(vkcu_hash_format_id(f), pipe[i]), "%s names back as %s", pipe[i], vkcu_hash_format_id(f));
        CHECK(!strcmp(vkcu_hash_format_extension(f), ext[i]), "%s: extension %s", pipe[i], vkcu_hash_format_extension(f));
    }
    enum vkcu_hash_format f;
    CHECK(vkcu_hash_format_parse("JSON", &f) < 0 && vkcu_hash_format_parse("md5", &f) < 0, "a wrong name parses");
    CHECK(!strcmp(vkcu_hash_format_id(VKCU_HASH_FORMAT_WHOLE), "framemd5"), "--whole's name");
}

static char dir[PATH_MAX];

static void put(const char *path, const char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, n, f);
        fclose(f);
    }
}

static char *pattern(size_t n)
{
    char *p = malloc(n + 1);
    for (size_t i = 0; p && i < n; i++)
        p[i] = (char)('a' + (i * 7 + i / 251) % 26);
    return p;
}

static void read_exact(const char *what, const char *path, const char *want, size_t n)
{
    char *data = NULL;
    size_t len = 1;
    int e = -1;
    enum vkcu_read_status st = vkcu_read_file(path, 0, 0, &data, &len, &e);
    CHECK(st == VKCU_READ_OK && len == n && data && !memcmp(data, want, n) && data[n] == 0,
          "%s: status %d, %zu bytes of %zu", what, st, len, n);
    free(data);
}

typedef struct writer {
    int fd;
    const char *data;
    size_t n;
} writer;

static void *write_all(void *arg)
{
    writer *w = arg;
    size_t done = 0;
    while (done < w->n) {
        ssize_t k = write(w->fd, w->data + done, w->n - done);
        if (k <= 0)
            break;
        done += (size_t)k;
    }
    close(w->fd);
    return NULL;
}

static void reader(void)
{
    snprintf(dir, sizeof(dir), "%s/vkcu-test-names-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    char path[PATH_MAX + 32];
    static const size_t sizes[] = { 0, 1, 4095, 65535, 65536, 65537, 300000 };
    char *big = pattern(300000);
    for (size_t i = 0; big && i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        snprintf(path, sizeof(path), "%s/f%zu", dir, sizes[i]);
        put(path, big, sizes[i]);
        char what[64];
        snprintf(what, sizeof(what), "a %zu-byte file", sizes[i]);
        read_exact(what, path, big, sizes[i]);
    }
    /* a pipe, longer than the first buffer (its size is unknown) */
    int fds[2];
    if (big && pipe(fds) == 0) {
        writer w = { fds[1], big, 300000 };
        pthread_t t;
        pthread_create(&t, NULL, write_all, &w);
        snprintf(path, sizeof(path), "/dev/fd/%d", fds[0]);
        read_exact("a 300000-byte pipe", path, big, 300000);
        pthread_join(t, NULL);
        close(fds[0]);
    }
    char *data;
    size_t len;
    int e;
    snprintf(path, sizeof(path), "%s/f65537", dir);
    CHECK(vkcu_read_file(path, 65536, 0, &data, &len, &e) == VKCU_READ_TOO_BIG && !data, "65537 bytes past max 65536");
    CHECK(vkcu_read_file(path, 65537, VKCU_READ_REGULAR, &data, &len, &e) == VKCU_READ_OK && len == 65537,
          "65537 bytes within max 65537");
    free(data);
    CHECK(vkcu_read_file(dir, 0, VKCU_READ_REGULAR, &data, &len, &e) == VKCU_READ_NOT_REGULAR, "a folder as regular");
    CHECK(vkcu_read_file(dir, 0, 0, &data, &len, &e) == VKCU_READ_IO, "a folder read");
    snprintf(path, sizeof(path), "%s/missing", dir);
    CHECK(vkcu_read_file(path, 0, 0, &data, &len, &e) == VKCU_READ_OPEN && e == ENOENT, "a missing file: errno %d", e);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        snprintf(path, sizeof(path), "%s/f%zu", dir, sizes[i]);
        unlink(path);
    }
    rmdir(dir);
    free(big);
}

int main(void)
{
    hash_names();
    format_names();
    reader();
    if (failures) {
        printf("test_names: %d checks FAILED\n", failures);
        return 1;
    }
    printf("test_names: hash and hash-list format names from one table each (help, messages, parser); "
           "the file reader's bytes and refusals: ok\n");
    return 0;
}
