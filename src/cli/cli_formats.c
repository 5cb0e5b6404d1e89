/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `vkcu --version` and `vkcu formats`: what this build and this machine can
 * do. The FFmpeg build decides which inputs open at all; the GPU here
 * decides which of them decode in Vulkan Video rather than in software.
 * What the build reads and writes (codecs and their decoders, demuxers,
 * encoders, muxers) comes from the library's lists (vkcu/formats.h), the
 * ones its checks and the completion use, and FFmpeg's version from
 * vkcu_ffmpeg_info_get (vkcu/version.h): the library's FFmpeg is inside it.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* v: VKCU_VERSION_INT(major, minor, micro), as FFmpeg packs its own. */
static void print_lib(const char *name, unsigned v)
{
    printf(" %s %u.%u.%u", name, v >> 16, (v >> 8) & 0xff, v & 0xff);
}

/* FFmpeg's configure line lists every enabled component: too long to read.
 * What tells builds apart is the external libraries and licence switches;
 * the components are counted instead. */
static void print_configuration(const vkcu_ffmpeg_info *ff)
{
    char conf[8192];
    snprintf(conf, sizeof(conf), "%s", ff->configuration);
    printf("FFmpeg configuration:");
    int shown = 0;
    for (char *save = NULL, *tok = strtok_r(conf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        if (!strncmp(tok, "--enable-lib", 12) || !strcmp(tok, "--enable-gpl") || !strcmp(tok, "--enable-version3") ||
            !strcmp(tok, "--enable-nonfree") || !strcmp(tok, "--enable-vulkan") || !strcmp(tok, "--disable-everything") ||
            !strcmp(tok, "--enable-static") || !strcmp(tok, "--enable-shared")) {
            printf(" %s", tok + 2);
            shown++;
        }
    }
    printf("%s\n", shown ? "" : " (default)");
    printf("FFmpeg components: %d decoders, %d encoders, %d demuxers, %d muxers ('vkcu formats' lists them)\n",
           ff->nb_decoders, ff->nb_encoders, ff->nb_demuxers, ff->nb_muxers);
}

static void print_devices(const vkcu_probe_info *info)
{
    if (info->nb_cuda > 0)
        printf("CUDA: %d device(s)\n", info->nb_cuda);
    else
        printf("CUDA: unavailable (%s)\n", info->cuda_error[0] ? info->cuda_error : "no device");
    if (!info->vulkan_loader)
        printf("Vulkan: unavailable (no loader, libvulkan.so.1)\n");
    else if (!info->vulkan_instance)
        printf("Vulkan: loader present, but no Vulkan 1.3 instance could be created\n");
    else if (!info->nb_vulkan)
        printf("Vulkan: loader present, no devices\n");
    else
        printf("Vulkan: %d device(s): %s\n", info->nb_vulkan, info->vulkan_devices);
    printf("GPU backend: %s\n", info->nb_pairs ? "available (a CUDA device and its Vulkan twin)"
                                               : "unavailable here; the CPU backend runs every job");
}

int cli_print_version(const char *vkcu_version)
{
    vkcu_probe_info info;
    vkcu_ffmpeg_info ff;
    vkcu_ffmpeg_info_get(&ff);
    printf("vkcu %s\n", vkcu_version);
    printf("FFmpeg %s:", ff.version);
    print_lib("libavcodec", ff.avcodec);
    print_lib("libavformat", ff.avformat);
    print_lib("libavutil", ff.avutil);
    putchar('\n');
    print_configuration(&ff);
    char vmaf[256];
    vkcu_vmaf_describe(vmaf, sizeof(vmaf));
    printf("VMAF: %s\n", vmaf);
    vkcu_probe_summary(&info);
    print_devices(&info);
    return 0;
}

/* One line per codec: decoders of a codec are listed together. */
static void list_video_codecs(const vkcu_probe_info *info)
{
    vkcu_decoder_info d;
    int n = 0, gpu = 0;
    printf("Video codecs this build decodes (GPU: decoded on this machine's GPU, on its video decode engines\n"
           "(video) or by FFmpeg's Vulkan compute decoder (compute); others decode in software, then the CPU\n"
           "backend, or one upload into the GPU's interop ring):\n");
    for (int i = 0; vkcu_decoder_get(i, &d) == 0; i++) {
        int on_gpu = vkcu_probe_gpu_decodes(info, d.codec_id);
        printf("  %-4s %-16s %s [%s]%s\n", on_gpu ? "GPU" : "", d.codec, d.description, d.decoders,
               on_gpu == VKCU_GPU_DECODE_VIDEO ? " (video)" : on_gpu == VKCU_GPU_DECODE_COMPUTE ? " (compute)" : "");
        n++;
        gpu += on_gpu != VKCU_GPU_DECODE_NONE;
    }
    printf("%d video codecs, %d of them decode on the GPU here\n\n", n, gpu);
}

static void list_containers(void)
{
    vkcu_container_info f;
    int n = 0;
    printf("Containers this build reads (demuxers):\n");
    for (int i = 0; vkcu_demuxer_get(i, &f) == 0; i++) {
        printf("  %-24s %s\n", f.name, f.description);
        n++;
    }
    printf("%d demuxers\n", n);
}

/* "label word word ...", wrapped at 79 columns under column 24. */
static void print_wrapped(const char *label, const char *words)
{
    int col = printf("%23s %s", "", label);
    for (const char *p = words; *p;) {
        p += strspn(p, " ");
        int len = (int)strcspn(p, " ");
        if (!len)
            break;
        if (col + 1 + len > 79)
            col = printf("\n%*s", 24 + (int)strlen(label), "") - 1;
        col += printf(" %.*s", len, p);
        p += len;
    }
    putchar('\n');
}

/* What this build writes, from the library's lists (vkcu/formats.h): the
 * encoders --encoder takes, each with its pixel formats and whether it runs
 * on a GPU (FFmpeg's own description of the encoder), then the others. */
static void list_encoders(void)
{
    vkcu_encoder_info e;
    int n = 0, gpu = 0;
    printf("Video encoders (--encoder NAME; GPU: runs on the GPU, through FFmpeg's device named after it; the\n"
           "others run on the CPU):\n");
    for (int i = 0; vkcu_encoder_get(i, &e) == 0; i++) {
        if (strcmp(e.media, "video"))
            continue;
        printf("  %-4s %-16s %-12s %s%s%s%s\n", e.gpu ? "GPU" : "", e.name, e.codec, e.description, e.gpu ? " [" : "",
               e.gpu ? e.gpu : "", e.gpu ? "]" : "");
        print_wrapped("pixel formats:", e.pix_fmts[0] ? e.pix_fmts : "(not listed by the encoder)");
        n++;
        gpu += e.gpu != NULL;
    }
    printf("%d video encoders, %d of them on the GPU\n", n, gpu);
    for (int pass = 0; pass < 2; pass++) {
        const char *media = pass ? "subtitle" : "audio";
        int shown = 0;
        for (int i = 0; vkcu_encoder_get(i, &e) == 0; i++)
            if (!strcmp(e.media, media))
                printf("%s%s", shown++ ? ", " : pass ? "Subtitle encoders: " : "Audio encoders: ", e.name);
        if (shown)
            putchar('\n');
    }
    putchar('\n');
}

static void list_muxers(void)
{
    vkcu_container_info c;
    int n = 0;
    printf("Containers this build writes (muxers: -o FILE picks one by its extension, -f NAME by name;\n"
           "auto: the encoder --encoder auto picks for it, -: none, name one or it holds no video):\n");
    printf("  %-16s %-20s %-16s %s\n", "name", "extensions", "auto", "description");
    for (int i = 0; vkcu_container_get(i, &c) == 0; i++) {
        char ext[21];
        size_t len = strlen(c.extensions);
        int cut = 16; /* a long list: its first names, cut at a comma */
        while (len > 20 && cut > 0 && c.extensions[cut] != ',')
            cut--;
        snprintf(ext, sizeof(ext), len > 20 ? "%.*s,..." : "%.*s", len > 20 ? cut : 20, len ? c.extensions : "-");
        printf("  %-16s %-20s %-16s %s\n", c.name, ext, c.encoder ? c.encoder : "-", c.description);
        n++;
    }
    printf("%d muxers\n", n);
}

static int cli_main_formats(int argc, char **argv)
{
    int ret = cli_parse(CLI_FORMATS, argc, argv, cli_apply_no_operands, "formats");
    if (ret >= 0)
        return ret;
    vkcu_probe_info info;
    vkcu_probe_summary(&info);
    list_video_codecs(&info);
    list_containers();
    putchar('\n');
    list_encoders();
    list_muxers();
    return 0;
}

const cli_verb_main cli_formats_verbs[CLI_NB_VERBS] = { [CLI_FORMATS] = cli_main_formats };
