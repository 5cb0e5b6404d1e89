/*
 * vkcu command line: `vkcu [options] INPUT -o OUTPUT` and the verbs.
 * Parses arguments and calls the library; nothing else lives here.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "regress/compare.h"
#include "util/log.h"
#include "util/number.h"
#include "batch/preset.h"
#include "core/stage.h"
#include "gpu/probe.h"

#define VKCU_VERSION "0.1.0"

const cli_verb cli_verbs[] = {
    { "probe", "list Vulkan and CUDA devices and which pairs match", cli_main_probe },
    { "formats", "list the codecs and containers this build reads; which decode on the GPU here", cli_main_formats },
    { "hash", "per-frame hashes (md5, sha256, crc32, xxh64, blake3) of decoded (and processed) frames", cli_main_hash },
    { "compare", "compare two videos or hash lists frame by frame (PSNR, SSIM, max diff)", cli_main_compare },
    { "verify", "run a regression manifest: expected hashes or metric limits per case", cli_main_verify },
    { "batch", "process a folder: presets, concurrent streams, resume, report, shards", cli_main_batch },
    { "pipelines", "list the pipeline presets (--pipeline NAME)", cli_main_pipelines },
    { NULL, NULL, NULL },
};

int cli_usage_error(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "vkcu: error: %s (see vkcu --help)\n", msg);
    return VKCU_EXIT_USAGE;
}

/* Ctrl-C, kill, a closed ssh session (HUP) and Ctrl-\ all stop the job
 * the same way: the first lets it finish cleanly (partial outputs
 * removed); a second one leaves at once, but only after removing them. */
static void on_signal(int sig)
{
    (void)sig;
    if (vkcu_stop_requested()) {
        vkcu_outfile_abort_all(); /* async-signal-safe */
        _exit(VKCU_EXIT_INTERRUPT);
    }
    vkcu_request_stop();
}

void cli_install_signals(void)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    for (int i = 0; i < (int)(sizeof(sigs) / sizeof(sigs[0])); i++)
        sigaction(sigs[i], &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

int cli_operand(const char *a, int *opts_done)
{
    if (*opts_done)
        return 1;
    if (!strcmp(a, "--")) {
        *opts_done = 1;
        return -1;
    }
    return a[0] != '-' || !a[1];
}

int cli_parse_int(const char *opt, const char *v, long lo, long hi, long *out)
{
    int64_t x;
    if (vkcu_parse_int(v, lo, hi, &x) < 0) {
        cli_usage_error("%s: '%s' is not an integer in [%ld, %ld]", opt, v, lo, hi);
        return -1;
    }
    *out = (long)x;
    return 0;
}

int cli_parse_number(const char *opt, const char *v, double lo, double hi, double *out)
{
    if (vkcu_parse_number(v, lo, hi, out) < 0) {
        cli_usage_error("%s: '%s' is not a number in [%g, %g]", opt, v, lo, hi);
        return -1;
    }
    return 0;
}

int cli_parse_bitrate(const char *opt, const char *v, int64_t *out)
{
    if (vkcu_parse_bitrate(v, out) < 0) {
        cli_usage_error("%s: '%s' is not a bitrate in [1k, %lldM] bit/s (e.g. 4M, 800k)", opt, v,
                        VKCU_BITRATE_MAX / 1000000);
        return -1;
    }
    return 0;
}

/* Times are at most this many seconds (about 31 years): far past any
 * input, and small enough that seconds * 1e6 stays an exact int64. */
#define TIME_MAX_SECONDS 1e9

/* Copies text[0, len) into buf as a string; 0 when it does not fit. */
static int copy_part(char *buf, size_t size, const char *text, size_t len)
{
    if (len >= size)
        return 0;
    memcpy(buf, text, len);
    buf[len] = 0;
    return 1;
}

/* "12.5" seconds, "1:02.5", "01:02:03" or "250f" (a frame number). */
static int parse_time(const char *opt, const char *v, double *seconds, int64_t *frames)
{
    char part[64];
    size_t n = strlen(v);
    if (n > 1 && v[n - 1] == 'f') {
        int64_t f;
        if (!copy_part(part, sizeof(part), v, n - 1) || vkcu_parse_int(part, 0, INT64_MAX, &f) < 0)
            return cli_usage_error("%s: '%s' is not a frame number in [0, %lld] (e.g. 250f)", opt, v,
                                   (long long)INT64_MAX), -1;
        *frames = f;
        return 0;
    }
    double total = 0;
    const char *p = v;
    for (int k = 0; k < 3; k++) {
        size_t len = strcspn(p, ":");
        double x;
        if (!copy_part(part, sizeof(part), p, len) || vkcu_parse_number(part, 0, TIME_MAX_SECONDS, &x) < 0)
            break;
        total = total * 60 + x;
        if (!p[len]) {
            if (total > TIME_MAX_SECONDS)
                break;
            *seconds = total;
            return 0;
        }
        p += len + 1;
    }
    return cli_usage_error("%s: '%s' is not a time in [0, %.0f] s (seconds, MM:SS or HH:MM:SS, or NNNf for frames)",
                           opt, v, TIME_MAX_SECONDS), -1;
}

/* Integer options: where each goes in vkcu_job_params, its range, and the
 * factor from the value given to the value stored. */
typedef struct int_option {
    const char *name;
    long lo, hi;
    int scale;
    size_t offset;
} int_option;

static const int_option job_int_options[] = {
    { "--device", 0, 63, 1, offsetof(vkcu_job_params, device) },
    { "--frames", 1, 2147483647, 1, offsetof(vkcu_job_params, max_frames) },
    { "--ring-size", 3, 16, 1, offsetof(vkcu_job_params, ring_size) },
    { "--decode-threads", 1, 256, 1, offsetof(vkcu_job_params, decode_threads) },
    { "--stall-timeout", 0, 3600, 1000, offsetof(vkcu_job_params, stall_timeout_ms) },
    { "--video-stream", 0, 1023, 1, offsetof(vkcu_job_params, video_stream) },
};

static const int_option encode_int_options[] = {
    { "--crf", 0, 63, 1, offsetof(vkcu_job_params, crf) },
    { "--gop", 0, 100000, 1, offsetof(vkcu_job_params, gop) },
    { "--encode-workers", 1, 64, 1, offsetof(vkcu_job_params, encode_workers) },
};

/* 2 when `a` is one of the n options (value v parsed and stored), -1 after a
 * usage error, 0 when `a` is none of them. */
static int parse_int_option(const int_option *opts, int n, vkcu_job_params *p, const char *a, const char *v)
{
    for (int k = 0; k < n; k++) {
        if (strcmp(a, opts[k].name))
            continue;
        long x;
        if (!v)
            return cli_usage_error("%s needs a value", a), -1;
        if (cli_parse_int(a, v, opts[k].lo, opts[k].hi, &x) < 0)
            return -1;
        *(int *)((char *)p + opts[k].offset) = (int)x * opts[k].scale;
        return 2;
    }
    return 0;
}

int cli_job_option(vkcu_job_params *p, int argc, char **argv, int i)
{
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int n = parse_int_option(job_int_options, (int)(sizeof(job_int_options) / sizeof(job_int_options[0])), p, a, v);
    if (n)
        return n;
#define NEED_VALUE()                                                \
    do {                                                            \
        if (!v) {                                                   \
            cli_usage_error("%s needs a value", a);                 \
            return -1;                                              \
        }                                                           \
    } while (0)
    if (!strcmp(a, "--backend")) {
        NEED_VALUE();
        if (!strcmp(v, "cpu"))
            p->backend = VKCU_BACKEND_CPU;
        else if (!strcmp(v, "gpu"))
            p->backend = VKCU_BACKEND_GPU;
        else if (!strcmp(v, "auto"))
            p->backend = VKCU_BACKEND_AUTO;
        else
            return cli_usage_error("--backend: '%s' is not cpu, gpu or auto", v), -1;
        return 2;
    }
    if (!strcmp(a, "--chain")) {
        NEED_VALUE();
        p->chain = v;
        return 2;
    }
    if (!strcmp(a, "--pipeline")) {
        NEED_VALUE(); /* a preset: chain, encoder and hash settings; options after it override */
        return cli_pipeline_option(p, v) < 0 ? -1 : 2;
    }
    if (!strcmp(a, "--handoff")) {
        NEED_VALUE();
        if (!strcmp(v, "binary"))
            p->timeline_handoff = 0;
        else if (!strcmp(v, "timeline"))
            p->timeline_handoff = 1;
        else
            return cli_usage_error("--handoff: '%s' is not binary or timeline", v), -1;
        return 2;
    }
    if (!strcmp(a, "--start") || !strcmp(a, "--duration")) {
        NEED_VALUE();
        double sec = -1;
        int64_t fr = -1;
        if (parse_time(a, v, &sec, &fr) < 0)
            return -1;
        if (!strcmp(a, "--start")) {
            p->start_time = sec;
            p->start_frame = fr;
        } else {
            p->duration = sec;
            p->frame_count = fr;
        }
        return 2;
    }
    if (!strcmp(a, "--strict")) {
        p->strict = 1;
        return 1;
    }
    if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
        p->progress = 0;
        vkcu_set_log_level(VKCU_LOG_ERROR);
        return 1;
    }
    if (!strcmp(a, "--require-gpu-decode")) {
        p->require_gpu_decode = 1;
        return 1;
    }
    if (!strcmp(a, "--stats")) {
        p->stats = 1;
        return 1;
    }
    if (!strcmp(a, "--log-level")) {
        NEED_VALUE();
        static const char *levels[] = { "error", "warning", "info", "verbose", "debug" };
        for (int l = 0; l < 5; l++)
            if (!strcmp(v, levels[l])) {
                vkcu_set_log_level((enum vkcu_log_level)l);
                return 2;
            }
        return cli_usage_error("--log-level: '%s' is not error, warning, info, verbose or debug", v), -1;
    }
    return 0;
#undef NEED_VALUE
}

int cli_encode_option(vkcu_job_params *p, int argc, char **argv, int i)
{
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int n = parse_int_option(encode_int_options, (int)(sizeof(encode_int_options) / sizeof(encode_int_options[0])), p,
                             a, v);
    if (n)
        return n;
    if (!strcmp(a, "--faststart")) {
        p->faststart = 1;
        return 1;
    }
    if (strcmp(a, "--encoder") && strcmp(a, "--bitrate") && strcmp(a, "--preset") && strcmp(a, "--encoder-opt"))
        return 0;
    if (!v)
        return cli_usage_error("%s needs a value", a), -1;
    if (!strcmp(a, "--encoder"))
        p->encoder = v;
    else if (!strcmp(a, "--preset"))
        p->preset = v;
    else if (!strcmp(a, "--encoder-opt"))
        p->encoder_opts = v;
    else if (cli_parse_bitrate(a, v, &p->bitrate) < 0)
        return -1;
    return 2;
}

void cli_job_options_help(FILE *out)
{
    fputs("Processing options:\n"
          "  --backend gpu|cpu|auto   where frames are processed (default auto: GPU if usable)\n"
          "  --device N               CUDA device ordinal; the Vulkan device is matched by UUID\n"
          "  --chain TEXT             operators, e.g. 'convert=format=rgba,denoise=mode=tnr:sigma=6'\n"
          "  --pipeline NAME|FILE     preset: chain, encoder and options (vkcu pipelines lists them)\n"
          "  --start T, --duration T  trim: seconds, [HH:]MM:SS, or NNNf for a frame number\n"
          "  --frames N               stop after N output frames\n"
          "  --video-stream N         process the Nth video stream, from 0 (default: FFmpeg's best)\n"
          "  --strict                 a corrupt frame is an error (default: skipped with a warning)\n"
          "  --ring-size K            interop slots (frames in flight) on the GPU, 3..16 (default 4)\n"
          "  --handoff binary|timeline  Vulkan->CUDA synchronisation (default binary)\n"
          "  --decode-threads N       software decoder threads (default: one per core; hash, verify and compare\n"
          "                           use 1, so that damaged streams decode the same on every run)\n"
          "  --stall-timeout S        fail a stream whose decoder yields nothing for S seconds (default 10)\n"
          "  --require-gpu-decode     fail (exit 5) instead of decoding in software when the GPU cannot\n"
          "                           decode the stream (conformance runs of the GPU decoder)\n"
          "  --stats                  per-stage statistics at the end\n"
          "  -q, --quiet              no progress line, errors only\n"
          "  --log-level LEVEL        error, warning, info (default), verbose, debug\n"
          "  --                       end of options: what follows are files, even '-y' or '--help'\n",
          out);
}

static void exit_codes_help(FILE *out)
{
    fputs("Exit codes:\n"
          "  0 success   1 other failure   2 bad usage/options   3 bad input file\n"
          "  4 output not writable   5 GPU unavailable, lost or stalled   6 mismatch (compare/verify)\n"
          "  130 interrupted (Ctrl-C)\n",
          out);
}

static void main_help(FILE *out)
{
    fprintf(out, "vkcu %s: GPU video post-processing (Vulkan Video decode -> CUDA)\n\n"
                 "Usage: vkcu [options] INPUT -o OUTPUT\n"
                 "       vkcu VERB [options] ...   (vkcu VERB --help for each)\n\n"
                 "Verbs:\n",
            VKCU_VERSION);
    for (const cli_verb *v = cli_verbs; v->name; v++)
        fprintf(out, "  %-10s %s\n", v->name, v->summary);
    fputs("\nOutput options:\n"
          "  -o FILE                  output; the container follows the extension (.mkv .mp4 .nut .y4m ...)\n"
          "  -o - -f FORMAT           write to standard output in container FORMAT (nut, yuv4mpegpipe, matroska)\n"
          "  -f FORMAT                container by name instead of by extension\n"
          "  -y / -n                  overwrite / never overwrite an existing output (default: refuse)\n"
          "  --encoder NAME           auto (default: by extension), libx264, libx265, libsvtav1, ffv1, rawvideo,\n"
          "                           h264_vulkan/hevc_vulkan (GPUs with a Vulkan video encode queue; exit 5 if none)\n"
          "  --crf N, --bitrate B[k|M|G], --preset P, --gop N\n"
          "  --encoder-opt k=v[:k=v]  options passed to the encoder\n"
          "  --faststart              MP4/MOV: the index before the media data (playback starts before\n"
          "                           the whole file is downloaded; the file is rewritten once at the end)\n"
          "  --encode-workers N       FFV1: encode N GOPs at once, output identical to one encoder\n"
          "                           (default: auto, about one per 4 cores; 1: one encoder)\n"
          "  --keep-partial           keep what was written when the job fails or is interrupted\n"
          "  --null                   process but write nothing; --decode-only: decode and drop (benchmarks)\n\n",
          out);
    cli_job_options_help(out);
    fputc('\n', out);
    exit_codes_help(out);
}

void cli_print_stats(const vkcu_job_params *p, const vkcu_job_result *r, FILE *out)
{
    fprintf(out, "stats: path=%s frames_in=%lld frames_out=%lld corrupt=%lld time=%.3fs fps=%.1f fps_steady=%.1f\n",
            vkcu_path_name(r->path), (long long)r->frames_in, (long long)r->frames_out, (long long)r->frames_corrupt,
            r->seconds, r->fps, r->fps_steady);
    fprintf(out, "stats: setup=%.3fs (job start to first decoded frame)\n", r->setup_seconds);
    if (r->setup_vk_device[0])
        fprintf(out, "stats: setup ms: vk_instance=%.0f vk_device=%.0f cuda=%.0f (on their own threads, beside) "
                "demux=%.0f gpu_open=%.0f decoder=%.0f first_frame=%.0f; Vulkan device: %s\n",
                r->setup_ms_vk_instance, r->setup_ms_vk_device, r->setup_ms_cuda, r->setup_ms_demux,
                r->setup_ms_gpu_open, r->setup_ms_decoder, r->setup_ms_first_frame, r->setup_vk_device);
    if (r->path == VKCU_PATH_VULKAN_CUDA || r->path == VKCU_PATH_SW_UPLOAD_CUDA) {
        double n = r->frames_out > 0 ? (double)r->frames_out : 1;
        fprintf(out, "stats: gpu ms/frame: vk_copy=%.4f cuda_ops=%.4f download=%.4f; max_in_flight=%d\n",
                r->gpu_ms_copy / n, r->gpu_ms_ops / n, r->gpu_ms_download / n, r->max_in_flight);
        fprintf(out, "stats: imports=%lld dtod_copies=%lld htod_bytes=%lld dtoh_bytes=%lld\n", (long long)r->imports,
                (long long)r->dtod_copies, (long long)r->htod_bytes, (long long)r->dtoh_bytes);
    }
    if (p->sink == VKCU_SINK_ENCODE && r->frames_out > 0) {
        double n = (double)r->frames_out;
        fprintf(out, "stats: encoder thread ms/frame: encode=%.3f mux=%.3f idle=%.3f\n", r->enc_ms_encode / n,
                r->enc_ms_mux / n, r->enc_ms_idle / n);
    }
}

static int report(const vkcu_job_params *p, const vkcu_job_result *r, int ret)
{
    vkcu_progress_break_line();
    if (p->stats)
        cli_print_stats(p, r, stderr);
    if (ret == VKCU_ERR_PIPE_CLOSED)
        return 0; /* the reader has what it wanted (| head): nothing to report */
    if (ret < 0) {
        fprintf(stderr, "vkcu: error: %s\n", r->error[0] ? r->error : "failed");
        return vkcu_exit_code(ret);
    }
    return 0;
}

int cli_main_transcode(int argc, char **argv)
{
    vkcu_job_params p;
    vkcu_job_params_default(&p);
    p.sink = VKCU_SINK_ENCODE;
    const char *input = NULL;
    int no_overwrite = 0, opts_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int operand = cli_operand(a, &opts_done);
        if (operand < 0)
            continue;
        int n = operand ? 0 : cli_job_option(&p, argc, argv, i);
        if (n < 0)
            return VKCU_EXIT_USAGE;
        if (n > 0) {
            i += n - 1;
            continue;
        }
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (operand) {
            if (input)
                return cli_usage_error("more than one input ('%s' and '%s'); use 'vkcu batch' for many files", input, a);
            input = a;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            main_help(stdout);
            return 0;
        } else if (!strcmp(a, "--version")) {
            return cli_print_version(VKCU_VERSION);
        } else if (!strcmp(a, "-y")) {
            p.overwrite = 1;
        } else if (!strcmp(a, "-n")) {
            no_overwrite = 1;
        } else if (!strcmp(a, "--keep-partial")) {
            p.keep_partial = 1;
        } else if (!strcmp(a, "--null")) {
            p.sink = VKCU_SINK_NULL; /* process, write nothing (benchmarks) */
        } else if (!strcmp(a, "--decode-only")) {
            p.sink = VKCU_SINK_NULL;
            p.decode_only = 1;
        } else if ((n = cli_encode_option(&p, argc, argv, i))) {
            if (n < 0)
                return VKCU_EXIT_USAGE;
            i += n - 1;
        } else if (!strcmp(a, "-f")) {
            if (!v)
                return cli_usage_error("-f needs a value (a container: nut, y4m, matroska, ...)");
            p.output_format = v;
            i++;
        } else if (!strcmp(a, "-o")) {
            if (!v)
                return cli_usage_error("%s needs a value", a);
            i++;
            p.output = v;
        } else {
            return cli_usage_error("unknown option '%s' (a file whose name starts with '-' goes after '--')", a);
        }
    }
    if (!input)
        return cli_usage_error("no input file");
    if (!p.output && p.sink != VKCU_SINK_NULL)
        return cli_usage_error("no output: add -o OUTPUT");
    if (no_overwrite)
        p.overwrite = 0;
    p.input = input;
    cli_install_signals();
    vkcu_job_result r;
    int ret = vkcu_job_run(&p, &r);
    if (ret >= 0 && vkcu_log_level() >= VKCU_LOG_INFO)
        fprintf(stderr, "vkcu: %s -> %s: %lld frames in %.2f s (%.1f fps), path %s\n", input,
                p.output ? p.output : p.decode_only ? "decoded, nothing written" : "processed, nothing written",
                (long long)r.frames_out, r.seconds, r.fps, vkcu_path_name(r.path));
    return report(&p, &r, ret);
}

int cli_main_hash(int argc, char **argv)
{
    vkcu_job_params p;
    vkcu_job_params_default(&p);
    p.sink = VKCU_SINK_HASH;
    p.progress = 0;
    const char *input = NULL, *outpath = NULL;
    int opts_done = 0, overwrite = 0;
    int whole = 0, format_set = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int operand = cli_operand(a, &opts_done);
        if (operand < 0)
            continue;
        int n = operand ? 0 : cli_job_option(&p, argc, argv, i);
        if (n < 0)
            return VKCU_EXIT_USAGE;
        if (n > 0) {
            i += n - 1;
            continue;
        }
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (operand) {
            if (input)
                return cli_usage_error("hash: more than one input");
            input = a;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf("Usage: vkcu hash INPUT [options]\n\n"
                   "Per-frame hashes of the decoded frames (after --chain, if given), in FFmpeg's\n"
                   "framemd5 format (diffable against `ffmpeg -i INPUT -f framemd5 -`) or JSON lines.\n"
                   "A frame's hash covers the visible picture, planes in order, rows packed,\n"
                   "16-bit samples little-endian; GPU-decoded NV12/P010 hash as yuv420p/yuv420p10le.\n\n"
                   "  --algo md5|sha256|crc32|xxh64|blake3  hash function (default md5); blake3 is\n"
                   "                           BLAKE3's 32-byte digest (as b3sum), computed on the GPU there\n"
                   "  --format framemd5|framecrc|json  output format (default framemd5); framecrc is\n"
                   "                           FFmpeg FATE's (adler32, as `ffmpeg -flags +bitexact -f framecrc`)\n"
                   "  --whole                  one hash of all frames' bytes in order, printed as\n"
                   "                           `ffmpeg -f md5` prints it (MD5=...; fluster's checksum)\n"
                   "  -o FILE                  write to FILE instead of standard output (-o -: standard output)\n"
                   "  -y                       replace an existing FILE (never the input)\n\n");
            cli_job_options_help(stdout);
            return 0;
        } else if (!strcmp(a, "-y")) {
            overwrite = 1;
        } else if (!strcmp(a, "--whole")) {
            whole = 1;
        } else if (!strcmp(a, "--algo") || !strcmp(a, "--format") || !strcmp(a, "-o")) {
            if (!v)
                return cli_usage_error("%s needs a value", a);
            i++;
            if (!strcmp(a, "-o"))
                outpath = v;
            else if (!strcmp(a, "--algo")) {
                if (vkcu_hash_algo_parse(v, &p.hash_algo) < 0)
                    return cli_usage_error("--algo: '%s' is not " VKCU_HASH_ALGOS, v);
            } else {
                if (!strcmp(v, "framemd5"))
                    p.hash_format = VKCU_HASH_FORMAT_FRAMEMD5;
                else if (!strcmp(v, "json"))
                    p.hash_format = VKCU_HASH_FORMAT_JSON;
                else if (!strcmp(v, "framecrc"))
                    p.hash_format = VKCU_HASH_FORMAT_FRAMECRC;
                else
                    return cli_usage_error("--format: '%s' is not framemd5, framecrc or json", v);
                format_set = 1;
            }
        } else {
            return cli_usage_error("hash: unknown option '%s' (a file whose name starts with '-' goes after '--')", a);
        }
    }
    if (!input)
        return cli_usage_error("hash: no input file");
    if (whole && format_set)
        return cli_usage_error("hash: --whole prints one line; it takes no --format");
    if (whole)
        p.hash_format = VKCU_HASH_FORMAT_WHOLE;
    if (outpath && !strcmp(outpath, "-"))
        outpath = NULL; /* standard output, as without -o */
    p.input = input;
    char tmp[4200] = "", err[512];
    FILE *f = NULL;
    cli_install_signals(); /* before the temporary exists */
    if (outpath) {
        const char *inputs[] = { input, NULL };
        if (vkcu_outfile_begin(outpath, overwrite, inputs, tmp, sizeof(tmp), err, sizeof(err)) < 0) {
            fprintf(stderr, "vkcu: error: %s\n", err);
            return VKCU_EXIT_OUTPUT;
        }
        f = fopen(tmp, "w");
        if (!f) {
            fprintf(stderr, "vkcu: error: %s: cannot create: %s\n", outpath, strerror(errno));
            vkcu_outfile_abort(tmp);
            return VKCU_EXIT_OUTPUT;
        }
        p.hash_out = f;
    }
    vkcu_job_result r;
    int ret = vkcu_job_run(&p, &r);
    if (f) {
        if (ret == VKCU_ERR_OUTPUT)
            snprintf(r.error, sizeof(r.error), "%s: cannot write the hashes (disk full?)", outpath);
        if (fclose(f) != 0 && ret >= 0) {
            snprintf(r.error, sizeof(r.error), "%s: write error", outpath);
            ret = VKCU_ERR_OUTPUT;
        }
        if (ret >= 0)
            ret = vkcu_outfile_commit(tmp, outpath, r.error, sizeof(r.error));
        else
            vkcu_outfile_abort(tmp);
    }
    return report(&p, &r, ret);
}

int cli_main_probe(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("Usage: vkcu probe\n\nLists Vulkan devices (video decode/encode queues and codecs, external\n"
                   "memory/semaphore FD support), CUDA devices, and which pairs match by UUID.\n"
                   "Exit code 0 when at least one Vulkan/CUDA pair matched, 5 otherwise.\n");
            return 0;
        }
        return cli_usage_error("probe: unknown argument '%s'", argv[i]);
    }
    int ret = vkcu_probe(stdout);
    return ret < 0 ? vkcu_exit_code(ret) : 0;
}

int main(int argc, char **argv)
{
    vkcu_set_log_level(VKCU_LOG_INFO);
    if (argc < 2) {
        main_help(stderr);
        return VKCU_EXIT_USAGE;
    }
    for (const cli_verb *v = cli_verbs; v->name; v++)
        if (!strcmp(argv[1], v->name))
            return v->main(argc - 1, argv + 1);
    return cli_main_transcode(argc, argv);
}
