/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * BLAKE3 (src/util/blake3.c, kernels/blake3_math.h): digests of the spec's
 * test-vector inputs (byte i is i % 251) at the lengths around block, chunk
 * and tree boundaries, against digests from Debian's b3sum 1.2.0 (the
 * outside oracle); the same digests whatever pieces the input is fed in;
 * and the GPU hasher's order of work (chunks hashed independently, then
 * groups of 64 and 256 nodes reduced level by level) replayed on the CPU,
 * which must give the streaming hasher's digest for every chunk count.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/blake3.h"
#include "kernels/blake3_math.h"
#include "test_util.h"

/* printf '%s' "$(python3 -c '...bytes(i % 251 for i in range(N))')" | b3sum */
static const struct { size_t len; const char *hex; } vectors[] = {
    { 0, "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262" },
    { 1, "2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213" },
    { 63, "e9bc37a594daad83be9470df7f7b3798297c3d834ce80ba85d6e207627b7db7b" },
    { 64, "4eed7141ea4a5cd4b788606bd23f46e212af9cacebacdc7d1f4c6dc7f2511b98" },
    { 65, "de1e5fa0be70df6d2be8fffd0e99ceaa8eb6e8c93a63f2d8d1c30ecb6b263dee" },
    { 1023, "10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11" },
    { 1024, "42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7" },
    { 1025, "d00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444" },
    { 2048, "e776b6028c7cd22a4d0ba182a8bf62205d2ef576467e838ed6f2529b85fba24a" },
    { 2049, "5f4d72f40d7a5f82b15ca2b2e44b1de3c2ef86c426c95c1af0b6879522563030" },
    { 3072, "b98cb0ff3623be03326b373de6b9095218513e64f1ee2edd2525c7ad1e5cffd2" },
    { 3073, "7124b49501012f81cc7f11ca069ec9226cecb8a2c850cfe644e327d22d3e1cd3" },
    { 4096, "015094013f57a5277b59d8475c0501042c0b642e531b0a1c8f58d2163229e969" },
    { 4097, "9b4052b38f1c5fc8b1f9ff7ac7b27cd242487b3d890d15c96a1c25b8aa0fb995" },
    { 5120, "9cadc15fed8b5d854562b26a9536d9707cadeda9b143978f319ab34230535833" },
    { 5121, "628bd2cb2004694adaab7bbd778a25df25c47b9d4155a55f8fbd79f2fe154cff" },
    { 6144, "3e2e5b74e048f3add6d21faab3f83aa44d3b2278afb83b80b3c35164ebeca205" },
    { 6145, "f1323a8631446cc50536a9f705ee5cb619424d46887f3c376c695b70e0f0507f" },
    { 7168, "61da957ec2499a95d6b8023e2b0e604ec7f6b50e80a9678b89d2628e99ada77a" },
    { 7169, "a003fc7a51754a9b3c7fae0367ab3d782dccf28855a03d435f8cfe74605e7817" },
    { 8192, "aae792484c8efe4f19e2ca7d371d8c467ffb10748d8a5a1ae579948f718a2a63" },
    { 8193, "bab6c09cb8ce8cf459261398d2e7aef35700bf488116ceb94a36d0f5f1b7bc3b" },
    { 16384, "f875d6646de28985646f34ee13be9a576fd515f76b5b0a26bb324735041ddde4" },
    { 31744, "62b6960e1a44bcc1eb1a611a8d6235b6b4b78f32e7abc4fb4c6cdcce94895c47" },
    { 102400, "bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085" },
    { 1048577, "2f053cd7472cf0cd2f9adaf45c1180255b91b9a865404a63671a0ee5f792ed33" },
};

static void to_hex(const uint8_t d[32], char hex[65])
{
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

static void stream_hex(const uint8_t *p, size_t n, char hex[65])
{
    vkcu_blake3 h;
    uint8_t d[32];
    vkcu_blake3_init(&h);
    vkcu_blake3_update(&h, p, n);
    vkcu_blake3_final(&h, d);
    to_hex(d, hex);
}

/* The GPU's order: every chunk alone, then aligned groups reduced level by
 * level (pairs of neighbours, an odd last node carried up), ROOT on the
 * single group's last parent (or on the chunk, when it is the only one). */
static void reduce_group(uint32_t (*cv)[8], size_t n, int root)
{
    while (n > 1) {
        size_t half = n / 2;
        for (size_t t = 0; t < half; t++)
            b3_parent(cv[2 * t], cv[2 * t + 1], root && n == 2 ? B3_ROOT : 0, cv[t]);
        if (n & 1)
            memcpy(cv[half], cv[n - 1], sizeof(cv[0]));
        n = half + (n & 1);
    }
}

static void gpu_order_hex(const uint8_t *p, size_t len, char hex[65])
{
    size_t chunks = len ? (len + B3_CHUNK_LEN - 1) / B3_CHUNK_LEN : 1;
    uint32_t (*cv)[8] = malloc(chunks * sizeof(*cv));
    for (size_t c = 0; c < chunks; c++) {
        size_t n = len - c * B3_CHUNK_LEN < B3_CHUNK_LEN ? len - c * B3_CHUNK_LEN : B3_CHUNK_LEN;
        b3_chunk(p + c * B3_CHUNK_LEN, (uint32_t)n, c, chunks == 1, cv[c]);
    }
    size_t n = chunks, group = B3_GPU_CHUNKS_PER_BLOCK;
    for (;;) {
        size_t groups = (n + group - 1) / group;
        for (size_t g = 0; g < groups; g++) {
            size_t m = n - g * group < group ? n - g * group : group;
            reduce_group(cv + g * group, m, groups == 1);
            memcpy(cv[g], cv[g * group], sizeof(cv[0]));
        }
        n = groups;
        if (n == 1)
            break;
        group = B3_GPU_NODES_PER_BLOCK;
    }
    uint8_t d[32];
    b3_words_to_bytes(cv[0], d);
    to_hex(d, hex);
    free(cv);
}

int main(int argc, char **argv)
{
    size_t max = 0;
    for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++)
        max = vectors[i].len > max ? vectors[i].len : max;
    /* Large enough for the multi-pass GPU order: 64 * 256 chunks + 1. */
    size_t big = (size_t)B3_CHUNK_LEN * B3_GPU_CHUNKS_PER_BLOCK * B3_GPU_NODES_PER_BLOCK + 1;
    size_t size = big > max ? big : max;
    uint8_t *in = malloc(size);
    for (size_t i = 0; i < size; i++)
        in[i] = (uint8_t)(i % 251);
    char hex[65], hex2[65];

    for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
        size_t n = vectors[i].len;
        stream_hex(in, n, hex);
        CHECK(!strcmp(hex, vectors[i].hex), "%zu bytes: %s, b3sum gives %s", n, hex, vectors[i].hex);
        gpu_order_hex(in, n, hex2);
        CHECK(!strcmp(hex2, vectors[i].hex), "%zu bytes in the GPU's order: %s, b3sum gives %s", n, hex2,
              vectors[i].hex);
    }

    /* Fed in pieces of every awkward size, the digest is the same. */
    uint64_t seed = 7;
    const size_t n = 70000;
    stream_hex(in, n, hex);
    for (int round = 0; round < 200; round++) {
        vkcu_blake3 h;
        vkcu_blake3_init(&h);
        size_t at = 0;
        while (at < n) {
            size_t piece = round < 130 ? (size_t)round : (size_t)(tu_rand(&seed) % 3000);
            if (piece > n - at)
                piece = n - at;
            vkcu_blake3_update(&h, in + at, piece);
            at += piece;
            if (!piece && round == 0)
                break; /* zero-length updates alone never finish */
        }
        if (at < n)
            vkcu_blake3_update(&h, in + at, n - at);
        uint8_t d[32];
        vkcu_blake3_final(&h, d);
        to_hex(d, hex2);
        CHECK(!strcmp(hex, hex2), "fed in pieces (round %d): %s, at once %s", round, hex2, hex);
    }

    /* Every tree shape up to 300 chunks, and the GPU's multi-pass shapes. */
    size_t lens[] = { big, big - 1, big - B3_CHUNK_LEN, (size_t)B3_CHUNK_LEN * B3_GPU_CHUNKS_PER_BLOCK * 3 + 17 };
    for (size_t c = 1; c <= 300 + sizeof(lens) / sizeof(lens[0]); c++) {
        size_t len = c <= 300 ? c * B3_CHUNK_LEN - (c % 3) * 341 : lens[c - 301];
        stream_hex(in, len, hex);
        gpu_order_hex(in, len, hex2);
        CHECK(!strcmp(hex, hex2), "%zu bytes: streaming %s, GPU order %s", len, hex, hex2);
    }
    /* A digest taken part way (the hasher fed on afterwards) is the prefix's. */
    for (size_t cut = 1; cut < 40000; cut = cut * 3 + 1) {
        vkcu_blake3 h;
        uint8_t d[32];
        vkcu_blake3_init(&h);
        vkcu_blake3_update(&h, in, cut);
        vkcu_blake3_final(&h, d);
        to_hex(d, hex2);
        stream_hex(in, cut, hex);
        CHECK(!strcmp(hex, hex2), "%zu bytes, digest taken then fed on: %s, at once %s", cut, hex2, hex);
        vkcu_blake3_update(&h, in + cut, 40000 - cut);
        vkcu_blake3_final(&h, d);
        to_hex(d, hex2);
        stream_hex(in, 40000, hex);
        CHECK(!strcmp(hex, hex2), "40000 bytes fed on after a digest at %zu: %s, at once %s", cut, hex2, hex);
    }
    free(in);
    if (tu_failures)
        return 1;
    /* The same checks once more on the portable path (blake3.c takes eight
     * chunks at a time with AVX2 unless VKCU_BLAKE3_PORTABLE=1). */
    const char *portable = getenv("VKCU_BLAKE3_PORTABLE");
    if (!(portable && !strcmp(portable, "1")) && argc > 0) {
        fflush(stdout);
        setenv("VKCU_BLAKE3_PORTABLE", "1", 1);
        execv("/proc/self/exe", argv);
        fprintf(stderr, "blake3: cannot run again on the portable path\n");
        return 1;
    }
#if defined(__x86_64__) && defined(__GNUC__)
    const char *paths = __builtin_cpu_supports("avx2") ? "the AVX2 eight-chunk path and the portable one"
                                                        : "the portable path (no AVX2 here)";
#else
    const char *paths = "the portable path";
#endif
    printf("PASS blake3: %zu b3sum vectors (streaming and GPU order), pieces, 304 tree shapes, digests part way; %s\n",
           sizeof(vectors) / sizeof(vectors[0]), paths);
    return 0;
}
