/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The options every job verb shares (processing and encoder options, the
 * --pipeline preset) stored into a cli_job, and the signal set-up
 * every verb that runs jobs installs. The verbs' own apply functions hand
 * these ids here.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* The preset of this process's command line. Job params point into it,
 * so it lives as long as the process. */
static vkcu_preset cli_preset;
static int cli_preset_loaded;

const vkcu_preset *cli_job_preset(void)
{
    return cli_preset_loaded ? &cli_preset : NULL;
}

static int pipeline_option(cli_job *p, enum cli_verb_id verb, const char *arg)
{
    char err[1024];
    if (vkcu_preset_load(arg, &cli_preset, err, sizeof(err)) < 0) {
        fprintf(stderr, "vkcu: error: %s\n", err);
        return VKCU_EXIT_USAGE;
    }
    if (cli_preset.sink == VKCU_SINK_HASH && verb == CLI_TRANSCODE)
        return cli_usage_error("--pipeline %s writes frame hashes, not video: use 'vkcu hash INPUT --pipeline %s' "
                               "or 'vkcu batch IN_DIR OUT_DIR --pipeline %s'", arg, arg, arg);
    vkcu_preset_apply(&cli_preset, &p->j);
    cli_preset_loaded = 1;
    return 0;
}

int cli_job_apply(cli_job *p, enum cli_verb_id verb, const cli_option *o, const char *arg,
                  const cli_value *v)
{
    static const enum vkcu_backend backends[] = { VKCU_BACKEND_CPU, VKCU_BACKEND_GPU, VKCU_BACKEND_AUTO };
    switch (o->id) {
    case OPT_BACKEND: p->s.backend = backends[v->i]; break;
    case OPT_DEVICE: p->s.device = (int)v->i; break;
    case OPT_CHAIN: p->j.chain = arg; break;
    case OPT_PIPELINE: return pipeline_option(p, verb, arg); /* options after it override it */
    case OPT_START: p->j.start_time = v->seconds; p->j.start_frame = v->frame; break;
    case OPT_DURATION: p->j.duration = v->seconds; p->j.frame_count = v->frame; break;
    case OPT_FRAMES: p->j.max_frames = (int)v->i; break;
    case OPT_VIDEO_STREAM: p->j.video_stream = (int)v->i; break;
    case OPT_STRICT: p->j.strict = 1; break;
    case OPT_RING_SIZE: p->s.ring_size = (int)v->i; break;
    case OPT_HANDOFF: p->s.timeline_handoff = v->i == 1; break;
    case OPT_DOWNLOAD: p->s.vulkan_download = v->i == 1; break;
    case OPT_DECODE_THREADS: p->s.decode_threads = (int)v->i; break;
    case OPT_DECODE_QUEUE: p->s.decode_queue = (int)v->i; break;
    case OPT_DECODE_PARALLEL: /* auto, off, N */
        p->s.decode_parallel = v->i == -1 ? VKCU_DECODE_PARALLEL_AUTO : v->i == -2 ? 0 : (int)v->i;
        break;
    case OPT_STALL_TIMEOUT: p->s.stall_timeout_ms = (int)v->i * 1000; break;
    case OPT_REQUIRE_GPU_DECODE: p->j.require_gpu_decode = 1; break;
    case OPT_STATS: p->stats = 1; break;
    case OPT_QUIET:
        p->progress = 0;
        p->s.log_level = VKCU_LOG_ERROR;
        break;
    case OPT_LOG_LEVEL: p->s.log_level = (enum vkcu_log_level)v->i; break; /* the choices in enum order */
    case OPT_ENCODER: /* the encoder named, also over a preset's gpu-encoder */
        p->j.encoder = arg;
        p->j.gpu_encoder = NULL;
        break;
    case OPT_CRF: p->j.crf = (int)v->i; break;
    case OPT_BITRATE: p->j.bitrate = v->i; break;
    case OPT_PRESET: p->j.preset = arg; break;
    case OPT_GOP: p->j.gop = (int)v->i; break;
    case OPT_ENCODER_OPT: p->j.encoder_opts = arg; break;
    case OPT_FASTSTART: p->j.faststart = 1; break;
    case OPT_ENCODE_WORKERS: p->s.encode_workers = (int)v->i; break;
    case OPT_NO_AUDIO:
        p->j.no_audio = 1;
        p->j.audio_streams = VKCU_STREAMS_ALL;
        break;
    case OPT_AUDIO_ENCODER: p->j.audio_encoder = arg; break;
    /* v->i: N, or -1 for all, -2 for none (the choices' order); the last
     * of --no-audio and --audio-stream counts */
    case OPT_AUDIO_STREAM:
        p->j.audio_streams = v->i >= 0 ? VKCU_STREAM_NTH((int)v->i) : v->i == -1 ? VKCU_STREAMS_ALL : VKCU_STREAMS_NONE;
        p->j.no_audio = 0;
        break;
    case OPT_SUBTITLE_STREAM:
        p->j.subtitle_streams = v->i >= 0 ? VKCU_STREAM_NTH((int)v->i) : v->i == -1 ? VKCU_STREAMS_ALL
                                                                                    : VKCU_STREAMS_NONE;
        break;
    default: {
        /* the table gives a verb an option its apply function forgot */
        char name[64];
        fprintf(stderr, "vkcu: internal error: 'vkcu %s' does not handle %s\n", cli_verb_docs[verb].name,
                cli_option_spelling(o, name, sizeof(name)));
        return VKCU_EXIT_FAIL;
    }
    }
    return 0;
}

/* Ctrl-C, kill, a closed ssh session (HUP) and Ctrl-\ all stop the job
 * the same way: the first lets it finish cleanly (partial outputs
 * removed); a second one leaves at once, but only after removing them.
 * Signals within SIGNAL_BURST_NS of the first are the same interruption:
 * `timeout -s INT` and CI runners signal the process and then its group,
 * microseconds apart; a person's second Ctrl-C comes much later. */
#define SIGNAL_BURST_NS (50 * 1000000LL)
static _Atomic long long first_signal_ns;

static void on_signal(int sig)
{
    (void)sig;
    struct timespec now; /* clock_gettime is async-signal-safe */
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long ns = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
    if (vkcu_stop_requested()) {
        if (ns - first_signal_ns < SIGNAL_BURST_NS)
            return;
        vkcu_abandon_outputs(); /* async-signal-safe */
        _exit(VKCU_EXIT_INTERRUPT);
    }
    first_signal_ns = ns; /* before the stop: a handler on another thread sees both */
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
    /* Past a file size limit (ulimit -f) a write fails with EFBIG, which the
     * job reports naming the file, instead of the process dying (as ffmpeg). */
    signal(SIGXFSZ, SIG_IGN);
}
