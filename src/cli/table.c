/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The option table: every option of every verb, once per meaning, and each
 * verb's prose (usage, description, exit codes, environment). Data only:
 * the parser (opts.c) and the writers of --help, man pages and completion
 * (doc.c) read it; nothing else defines an option.
 *
 * A new option is one row here and one case in the apply function of each
 * verb that takes it (job.c for the processing and encoder options); its
 * --help line, man page entry and completion follow, and
 * tests/cli/options.sh runs it through the parser for every verb listed
 * (a verb whose apply lacks the case fails there with "internal error").
 */
#include <vkcu/hash.h>
#include <vkcu/job.h>
#include <vkcu/number.h>

#include "opts.h"

/* ring_size's range and default are the library's (vkcu/job.h). */
#define TEXT_OF(x) #x
#define TEXT_OF_VALUE(x) TEXT_OF(x)
#define RING_SIZE_DEFAULT_TEXT TEXT_OF_VALUE(VKCU_RING_SIZE_DEFAULT)

#define ALL_VERBS ((1u << CLI_NB_VERBS) - 1)
#define JOB_VERBS (CLI_V(CLI_TRANSCODE) | CLI_V(CLI_HASH) | CLI_V(CLI_COMPARE) | CLI_V(CLI_BATCH))
/* verify runs the manifest's cases: only the options that say where and how (not what) */
#define RUN_VERBS (JOB_VERBS | CLI_V(CLI_VERIFY))
#define ENCODE_VERBS (CLI_V(CLI_TRANSCODE) | CLI_V(CLI_BATCH))
#define T CLI_V(CLI_TRANSCODE)
#define H CLI_V(CLI_HASH)
#define C CLI_V(CLI_COMPARE)
#define V CLI_V(CLI_VERIFY)
#define B CLI_V(CLI_BATCH)
#define P CLI_V(CLI_PIPELINES)

const cli_option cli_options[] = {
    { OPT_HELP, "help", 'h', CLI_ARG_NONE, NULL, 0, 0, NULL, NULL, "show this help and exit", ALL_VERBS, CLI_G_VERB, 0, NULL },
    { OPT_DUMP_OPTIONS, "dump-options", 0, CLI_ARG_NONE, NULL, 0, 0, NULL, NULL,
      "print this verb's option table, one option a line (for tests)", ALL_VERBS, CLI_G_VERB, CLI_HIDDEN, NULL },
    { OPT_VERSION, "version", 0, CLI_ARG_NONE, NULL, 0, 0, NULL, NULL,
      "print the versions of vkcu and FFmpeg, and which devices this machine has", T, CLI_G_VERB, 0, NULL },
    { OPT_GENERATE, "generate", 0, CLI_ARG_TEXT, "man|man:VERB|completion|verbs", 0, 0, NULL, NULL,
      "print a man page, the bash completion or the verb names (make man completion)", T, CLI_G_VERB, CLI_HIDDEN, NULL },

    /* transcode output */
    { OPT_OUTPUT, NULL, 'o', CLI_ARG_FILE, "OUTPUT", 0, 0, NULL, NULL,
      "output file; the container follows the extension (.mkv .mp4 .nut .y4m ...); '-o - -f FORMAT' writes "
      "to standard output", T, CLI_G_OUTPUT, 0, "output" },
    { OPT_FORMAT, NULL, 'f', CLI_ARG_TEXT, "FORMAT", 0, 0, NULL, NULL,
      "container by name instead of by extension (nut, yuv4mpegpipe, matroska, ...)", T, CLI_G_OUTPUT, 0, "output_format" },
    { OPT_OVERWRITE, NULL, 'y', CLI_ARG_NONE, NULL, 0, 0, NULL, NULL,
      "replace an existing output (never an input; default: refuse)", T, CLI_G_OUTPUT, 0, "overwrite" },
    { OPT_NO_OVERWRITE, NULL, 'n', CLI_ARG_NONE, NULL, 0, 0, NULL, NULL,
      "never replace an existing output (the default; refused together with -y, as ffmpeg does)", T, CLI_G_OUTPUT, 0,
      NULL },
    { OPT_KEEP_PARTIAL, "keep-partial", 0, CLI_ARG_NONE, NULL, 0, 0, NULL, NULL,
      "keep what was written when the job fails or is interrupted", T, CLI_G_OUTPUT, 0, "keep_partial" },
    { OPT_NULL, "null", 0, CLI_ARG_NONE, NULL, 0, 0, NULL, NULL, "process but write nothing (benchmarks)", T,
      CLI_G_OUTPUT, 0, NULL },
    { OPT_DECODE_ONLY, "decode-only", 0, CLI_ARG_NONE, NULL, 0, 0, NULL, NULL,
      "decode and drop the frames: no operators, nothing written (benchmarks)", T, CLI_G_OUTPUT, 0, "decode_only" },

    /* encoder (transcode, batch) */
    { OPT_ENCODER, "encoder", 0, CLI_ARG_TEXT, "NAME", 0, 0, NULL, "auto",
      "auto (by the output's extension), or any video encoder 'vkcu formats' lists: libx264, libx265, libsvtav1, "
      "libvpx-vp9, libaom-av1, ffv1, prores_ks, rawvideo, ..., h264_vulkan/hevc_vulkan (GPUs with a Vulkan video "
      "encode queue; exit 5 if none)", ENCODE_VERBS, CLI_G_ENCODE, 0, "encoder" },
    { OPT_CRF, "crf", 0, CLI_ARG_INT, "N", 0, VKCU_CRF_MAX, NULL, NULL, "constant quality (the encoder's default if not given)",
      ENCODE_VERBS, CLI_G_ENCODE, 0, "crf" },
    { OPT_BITRATE, "bitrate", 0, CLI_ARG_BITRATE, "B", 0, 0, NULL, NULL,
      "target bitrate in bit/s, with k, M or G (e.g. 4M, 800k)", ENCODE_VERBS, CLI_G_ENCODE, 0, "bitrate" },
    { OPT_PRESET, "preset", 0, CLI_ARG_TEXT, "P", 0, 0, NULL, NULL,
      "the encoder's speed preset (libx264, libx265: ultrafast ... placebo; checked against the encoder's list)",
      ENCODE_VERBS, CLI_G_ENCODE, 0, "preset" },
    { OPT_GOP, "gop", 0, CLI_ARG_INT, "N", 0, VKCU_GOP_MAX, NULL, "0",
      "frames between key frames; 0: the encoder's default", ENCODE_VERBS, CLI_G_ENCODE, 0, "gop" },
    { OPT_ENCODER_OPT, "encoder-opt", 0, CLI_ARG_TEXT, "K=V[:K=V]", 0, 0, NULL, NULL,
      "options passed to the encoder", ENCODE_VERBS, CLI_G_ENCODE, 0, "encoder_opts" },
    { OPT_FASTSTART, "faststart", 0, CLI_ARG_NONE, NULL, 0, 0, NULL, NULL,
      "MP4/MOV: the index before the media data (playback starts before the whole file is downloaded; the "
      "file is rewritten once at the end)", ENCODE_VERBS, CLI_G_ENCODE, 0, "faststart" },
    { OPT_ENCODE_WORKERS, "encode-workers", 0, CLI_ARG_INT, "N", 1, 64, NULL, NULL,
      "FFV1: encode N GOPs at once; ffv1_vulkan, prores_ks_vulkan: N instances on the GPU; output identical "
      "to one encoder (default: one per 4 cores; GPU: 4; 1: one encoder)", ENCODE_VERBS, CLI_G_ENCODE, 0,
      "encode_workers" },

    { OPT_NO_AUDIO, "no-audio", 0, CLI_ARG_NONE, NULL, 0, 0, NULL, NULL,
      "no audio in the output (ffmpeg's -an)", ENCODE_VERBS, CLI_G_ENCODE, 0, "no_audio" },
    { OPT_AUDIO_ENCODER, "audio-encoder", 0, CLI_ARG_TEXT, "NAME", 0, 0, NULL, "auto",
      "auto: copy the audio where the container holds it, else encode it with one it holds (opus into .webm); "
      "copy: copy or drop; or an audio encoder 'vkcu formats' lists (aac, opus, ac3, pcm_s16le)", ENCODE_VERBS,
      CLI_G_ENCODE, 0, "audio_encoder" },

    { OPT_AUDIO_STREAM, "audio-stream", 0, CLI_ARG_PICK, "N|all|none", 0, VKCU_STREAM_INDEX_MAX, "all or none", "all",
      "which audio streams go into the output (ffmpeg's -map 0:a:N): the Nth, from 0 (as --video-stream counts), "
      "every one, or none", ENCODE_VERBS, CLI_G_ENCODE, 0, "audio_streams" },
    { OPT_SUBTITLE_STREAM, "subtitle-stream", 0, CLI_ARG_PICK, "N|all|none", 0, VKCU_STREAM_INDEX_MAX, "all or none",
      "all", "which subtitle streams go into the output (ffmpeg's -map 0:s:N): the Nth, from 0, every one, or none",
      ENCODE_VERBS, CLI_G_ENCODE, 0, "subtitle_streams" },

    /* processing (job) */
    { OPT_BACKEND, "backend", 0, CLI_ARG_CHOICE, "gpu|cpu|auto", 0, 0, "cpu, gpu or auto", "auto",
      "where frames are processed (auto: the GPU if usable)", RUN_VERBS, CLI_G_PROCESS, 0, "backend" },
    { OPT_DEVICE, "device", 0, CLI_ARG_INT, "N", 0, 63, NULL, "0",
      "CUDA device ordinal; the Vulkan device is matched by UUID", RUN_VERBS, CLI_G_PROCESS, 0, "device" },
    { OPT_CHAIN, "chain", 0, CLI_ARG_TEXT, "TEXT", 0, 0, NULL, NULL,
      "operators, e.g. 'convert=format=rgba,denoise=mode=tnr:sigma=6' (vkcu pipelines lists them)", JOB_VERBS,
      CLI_G_PROCESS, 0, "chain" },
    { OPT_PIPELINE, "pipeline", 0, CLI_ARG_PRESET, "NAME|FILE", 0, 0, NULL, NULL,
      "preset: chain, encoder and hash settings (vkcu pipelines lists them); options after it override it",
      JOB_VERBS, CLI_G_PROCESS, 0, NULL },
    { OPT_START, "start", 0, CLI_ARG_TIME, "T", 0, 0, NULL, NULL,
      "skip to T: seconds, [HH:]MM:SS, or NNNf for a frame number", JOB_VERBS, CLI_G_PROCESS, 0, "start_time start_frame" },
    { OPT_DURATION, "duration", 0, CLI_ARG_TIME, "T", 0, 0, NULL, NULL,
      "process T from the start: seconds, [HH:]MM:SS, or NNNf for a number of frames", JOB_VERBS, CLI_G_PROCESS,
      0, "duration frame_count" },
    { OPT_FRAMES, "frames", 0, CLI_ARG_INT, "N", 1, 2147483647, NULL, NULL, "stop after N output frames",
      JOB_VERBS, CLI_G_PROCESS, 0, "max_frames" },
    { OPT_VIDEO_STREAM, "video-stream", 0, CLI_ARG_INT, "N", 0, 1023, NULL, NULL,
      "process the Nth video stream, from 0 (default: FFmpeg's best)", RUN_VERBS, CLI_G_PROCESS, 0, "video_stream" },
    { OPT_STRICT, "strict", 0, CLI_ARG_NONE, NULL, 0, 0, NULL, NULL,
      "a damaged frame is an error (default: a frame the decoder concealed errors in is kept and marked "
      "'concealed', an undecodable one skipped, each with a warning)", JOB_VERBS, CLI_G_PROCESS, 0, "strict" },
    { OPT_TIMING, "timing", 0, CLI_ARG_CHOICE, "ffmpeg|decoded", 0, 0, "ffmpeg or decoded", "ffmpeg",
      "which frames: ffmpeg, as 'ffmpeg -f framemd5' (frames on colliding timestamps dropped, other sizes scaled "
      "to the first; a warning counts them); decoded, every frame as it leaves the decoder, at its own size "
      "(= ffmpeg -fps_mode passthrough -noautoscale); verify: cases without a 'timing' key", H | C | V,
      CLI_G_PROCESS, 0, "timing" },
    { OPT_EXCLUDE_CONCEALED, "exclude-concealed", 0, CLI_ARG_NONE, NULL, 0, 0, NULL, NULL,
      "frames marked concealed (decoded from damaged data, on either side) do not fail the verdict; they are "
      "counted apart either way (verify: cases without a 'concealed' key)", C | V, CLI_G_PROCESS, 0,
      "exclude_concealed" },
    { OPT_RING_SIZE, "ring-size", 0, CLI_ARG_INT, "K", VKCU_RING_SIZE_MIN, VKCU_RING_SIZE_MAX, NULL,
      RING_SIZE_DEFAULT_TEXT,
      "interop slots (frames in flight) on the GPU", RUN_VERBS, CLI_G_PROCESS, 0, "ring_size" },
    { OPT_HANDOFF, "handoff", 0, CLI_ARG_CHOICE, "binary|timeline", 0, 0, "binary or timeline", "binary",
      "Vulkan->CUDA synchronisation", RUN_VERBS, CLI_G_PROCESS, 0, "timeline_handoff" },
    { OPT_DOWNLOAD, "download", 0, CLI_ARG_CHOICE, "cuda|vulkan", 0, 0, "cuda or vulkan", "cuda",
      "GPU frames to the host: a CUDA copy, or the output ring read back by a Vulkan transfer (CUDA->Vulkan "
      "binary semaphores)", RUN_VERBS, CLI_G_PROCESS, 0, "vulkan_download" },
    { OPT_DECODE_THREADS, "decode-threads", 0, CLI_ARG_INT, "N", 1, 256, NULL, NULL,
      "software decoder threads (default 1, in every verb: a damaged stream gives the same frames on every run; "
      "N > 1 is faster and gives the same frames on clean streams only)", RUN_VERBS, CLI_G_PROCESS, 0,
      "decode_threads" },
    { OPT_DECODE_PARALLEL, "decode-parallel", 0, CLI_ARG_PICK, "N|auto|off", 1, VKCU_DECODE_PARALLEL_MAX,
      "auto or off", "auto",
      "decode one stream on N decoders at once: cut at its IDR (HEVC: IDR, BLA, CRA) pictures, the "
      "pieces decoded in parallel, the same frames and timestamps as one decoder (damage is decoded on in "
      "sequence); auto: one per core (up to 16) where the stream can be cut and --decode-threads and --strict are "
      "not given; on the GPU, Vulkan decoders on a decode queue each, cut at IDR pictures only (N only: auto is "
      "one Vulkan decoder, docs/performance.md); -v lists the pieces", RUN_VERBS, CLI_G_PROCESS, 0, "decode_parallel" },
    { OPT_DECODE_QUEUE, "decode-queue", 0, CLI_ARG_INT, "N", 0, VKCU_DECODE_QUEUE_MAX, NULL, NULL,
      "submit every GPU decode on Vulkan video decode queue N (vkcu probe lists the queues and their claims; "
      "default: the least-claimed queues, so that vkcu processes sharing a GPU use all of its decoders)",
      RUN_VERBS, CLI_G_PROCESS, 0, "decode_queue" },
    { OPT_STALL_TIMEOUT, "stall-timeout", 0, CLI_ARG_INT, "S", 0, 3600, NULL, "10",
      "fail a stream whose decoder yields nothing for S seconds", RUN_VERBS, CLI_G_PROCESS, 0, "stall_timeout_ms" },
    { OPT_REQUIRE_GPU_DECODE, "require-gpu-decode", 0, CLI_ARG_NONE, NULL, 0, 0, NULL, NULL,
      "fail (exit 5) instead of decoding in software when the GPU cannot decode the stream (conformance runs "
      "of the GPU decoder)", RUN_VERBS, CLI_G_PROCESS, 0, "require_gpu_decode" },
    { OPT_STATS, "stats", 0, CLI_ARG_NONE, NULL, 0, 0, NULL, NULL, "per-stage statistics at the end (compare: pairs measured on the GPU, picture bytes brought to the host)",
      T | H | C | B, CLI_G_PROCESS, 0, NULL },
    { OPT_QUIET, "quiet", 'q', CLI_ARG_NONE, NULL, 0, 0, NULL, NULL, "no progress line, errors only", RUN_VERBS,
      CLI_G_PROCESS, 0, NULL },
    { OPT_LOG_LEVEL, "log-level", 0, CLI_ARG_CHOICE, "LEVEL", 0, 0, "error, warning, info, verbose or debug", "info",
      "error, warning, info, verbose or debug", RUN_VERBS, CLI_G_PROCESS, 0, "log_level" },

    /* hash */
    { OPT_ALGO, "algo", 0, CLI_ARG_CHOICE, "ALGO", 0, 0, VKCU_HASH_ALGOS, "md5",
      "hash function: " VKCU_HASH_ALGOS "; blake3 is BLAKE3's 32-byte digest (as b3sum), computed on the GPU there",
      H, CLI_G_VERB, CLI_NOCASE, "hash_algo" },
    { OPT_HASH_FORMAT, "format", 0, CLI_ARG_CHOICE, VKCU_HASH_FORMATS_PIPE, 0, 0, VKCU_HASH_FORMATS,
      "framemd5", "output format; framecrc is FFmpeg FATE's (adler32, as `ffmpeg -flags +bitexact -f framecrc`)", H,
      CLI_G_VERB, 0, "hash_format" },
    { OPT_WHOLE, "whole", 0, CLI_ARG_NONE, NULL, 0, 0, NULL, NULL,
      "one hash of all frames' bytes in order, printed as `ffmpeg -f md5` prints it (MD5=...; fluster's checksum)",
      H, CLI_G_VERB, 0, NULL },
    { OPT_OUTPUT, NULL, 'o', CLI_ARG_FILE, "FILE", 0, 0, NULL, NULL,
      "write to FILE instead of standard output (-o -: standard output)", H, CLI_G_VERB, 0, NULL },
    { OPT_OVERWRITE, NULL, 'y', CLI_ARG_NONE, NULL, 0, 0, NULL, NULL, "replace an existing FILE (never the input)",
      H, CLI_G_VERB, 0, "overwrite" },

    /* compare */
    { OPT_MAX_DIFF, "max-diff", 0, CLI_ARG_INT, "N", 0, 65535, NULL, NULL,
      "pass when no sample differs by more than N code values", C, CLI_G_VERB, 0, "max_diff" },
    { OPT_MIN_PSNR, "min-psnr", 0, CLI_ARG_NUMBER, "DB", 0, 1000, NULL, NULL,
      "pass when every frame's PSNR (all planes) is at least DB", C, CLI_G_VERB, 0, "min_psnr" },
    { OPT_DIFF_IMAGE, "diff-image", 0, CLI_ARG_FILE, "FILE.png", 0, 0, NULL, NULL,
      "draw the worst frame's difference, amplified, with a scale", C, CLI_G_VERB, 0, "diff_image" },
    { OPT_PER_FRAME, "per-frame", 'v', CLI_ARG_NONE, NULL, 0, 0, NULL, NULL,
      "one line per frame (default: the summary, with a line for each frame outside the limits; -q: the verdict "
      "alone)", C, CLI_G_VERB, 0, "per_frame" },
    { OPT_ALIGN, "align", 0, CLI_ARG_CHOICE, "start|pts|index", 0, 0, "start, pts or index", "start",
      "how frames pair: start takes each input's first frame as time zero; pts pairs equal timestamps as "
      "'vkcu hash' prints them; index pairs frame n with frame n", C, CLI_G_VERB, 0, "align" },
    { OPT_CHAIN_A, "chain-a", 0, CLI_ARG_TEXT, "TEXT", 0, 0, NULL, NULL, "operators for A only (after --chain)", C,
      CLI_G_VERB, 0, "chain_a" },
    { OPT_CHAIN_B, "chain-b", 0, CLI_ARG_TEXT, "TEXT", 0, 0, NULL, NULL, "operators for B only (after --chain)", C,
      CLI_G_VERB, 0, "chain_b" },
    { OPT_SCALE, "scale", 0, CLI_ARG_NONE, NULL, 0, 0, NULL, NULL,
      "compare different sizes: B scaled to A's size and format (swscale bicubic, as ffmpeg's "
      "scale=W:H:flags=bicubic+accurate_rnd+bitexact)", C, CLI_G_VERB, 0, "scale" },
    { OPT_CSV, "csv", 0, CLI_ARG_FILE, "FILE", 0, 0, NULL, NULL,
      "one row per paired frame (pts, PSNR, SSIM, max diff, VMAF) as CSV", C, CLI_G_VERB, 0, "csv" },
    { OPT_JSON, "json", 0, CLI_ARG_FILE, "FILE", 0, 0, NULL, NULL,
      "the same rows as one JSON document: {\"a\", \"b\", \"align\", \"result\", \"frames\": [a row per pair]}", C,
      CLI_G_VERB, 0, "json" },
    { OPT_VMAF, "vmaf", 0, CLI_ARG_NONE, NULL, 0, 0, NULL, NULL,
      "score every pair with libvmaf's default model (vmaf_v0.6.1), A the reference; per-frame lines then print "
      "at the end", C, CLI_G_VERB, 0, "vmaf" },
    { OPT_MIN_VMAF, "min-vmaf", 0, CLI_ARG_NUMBER, "SCORE", 0, 100, NULL, NULL,
      "pass when the mean VMAF is at least SCORE (implies --vmaf)", C, CLI_G_VERB, 0, "min_vmaf" },
    { OPT_HTML_REPORT, "report", 0, CLI_ARG_FILE, "FILE.html", 0, 0, NULL, NULL,
      "one self-contained page: per-frame charts, the summary and the worst frames as A/B/difference thumbnails "
      "(no script, no network)", C, CLI_G_VERB, 0, "report_html" },
    { OPT_OVERWRITE, NULL, 'y', CLI_ARG_NONE, NULL, 0, 0, NULL, NULL,
      "replace an existing --diff-image, --csv, --json or --report file (never A or B)", C, CLI_G_VERB, 0, "overwrite" },

    /* verify */
    { OPT_JUNIT, "junit", 0, CLI_ARG_FILE, "FILE", 0, 0, NULL, NULL, "also write the results as JUnit XML", V,
      CLI_G_VERB, 0, "junit" },
    { OPT_SUMMARY, "summary", 0, CLI_ARG_FILE, "FILE.md", 0, 0, NULL, NULL,
      "also write a Markdown summary (CI job pages)", V, CLI_G_VERB, 0, "summary" },
    { OPT_HTML, "html", 0, CLI_ARG_FILE, "FILE.html", 0, 0, NULL, NULL,
      "also write one self-contained page: every case, and each failing case's charts (metric cases) or frames "
      "(hash cases)", V, CLI_G_VERB, 0, "html" },
    { OPT_OVERWRITE, NULL, 'y', CLI_ARG_NONE, NULL, 0, 0, NULL, NULL,
      "replace an existing --junit, --summary or --html FILE", V, CLI_G_VERB, 0, "overwrite" },
    { OPT_JOBS, "jobs", 'j', CLI_ARG_INT, "N", 1, 64, NULL, "1",
      "run N cases at once; results still print in manifest order", V, CLI_G_VERB, 0, "jobs" },
    { OPT_TIMEOUT, "timeout", 0, CLI_ARG_NUMBER, "SECONDS", 0.001, 1e6, NULL, NULL,
      "fail a case that runs longer (a case's 'timeout' key wins)", V, CLI_G_VERB, 0, "timeout" },
    { OPT_FAIL_FAST, "fail-fast", 0, CLI_ARG_NONE, NULL, 0, 0, NULL, NULL, "stop at the first failing case", V,
      CLI_G_VERB, 0, "fail_fast" },
    { OPT_UPDATE, "update", 0, CLI_ARG_NONE, NULL, 0, 0, NULL, NULL,
      "rewrite the expected hashes from this run; prints what changed", V, CLI_G_VERB, 0, "update" },
    { OPT_CASE, "case", 0, CLI_ARG_TEXT, "NAME", 0, 0, NULL, NULL, "run only the cases with this name ('*' globs)",
      V, CLI_G_VERB, CLI_REPEAT, "cases" },
    { OPT_ALLOW_OUTSIDE, "allow-outside", 0, CLI_ARG_NONE, NULL, 0, 0, NULL, NULL,
      "let a case's hashes file lie outside its manifest's folder (refused by default: --update writes there)", V,
      CLI_G_VERB, 0, "allow_outside" },

    /* batch */
    { OPT_JOBS, "jobs", 'j', CLI_ARG_INT, "N", 1, 256, NULL, "1", "concurrent streams", B,
      CLI_G_VERB, 0, "jobs" },
    { OPT_PROCESSES, "processes", 0, CLI_ARG_NONE, NULL, 0, 0, NULL, NULL,
      "run each of the --jobs streams in a worker process of its own instead of a thread (slower on an H100: "
      "docs/batch.md)", B, CLI_G_VERB, 0, "worker_command" },
    { OPT_RECURSIVE, "recursive", 'r', CLI_ARG_NONE, NULL, 0, 0, NULL, NULL, "descend into subfolders", B,
      CLI_G_VERB, 0, NULL },
    { OPT_INCLUDE, "include", 0, CLI_ARG_TEXT, "GLOB", 0, 0, NULL, NULL,
      "only files matching GLOB (no '/': the name, with '/': the path below IN_DIR)", B, CLI_G_VERB, CLI_REPEAT, NULL },
    { OPT_EXCLUDE, "exclude", 0, CLI_ARG_TEXT, "GLOB", 0, 0, NULL, NULL, "leave out matching files and folders", B,
      CLI_G_VERB, CLI_REPEAT, NULL },
    { OPT_RESUME, "resume", 0, CLI_ARG_NONE, NULL, 0, 0, NULL, NULL, "skip files whose output exists (it is complete)",
      B, CLI_G_VERB, 0, NULL },
    { OPT_OVERWRITE, NULL, 'y', CLI_ARG_NONE, NULL, 0, 0, NULL, NULL,
      "replace existing outputs (default: such a file fails)", B, CLI_G_VERB, 0, "overwrite" },
    { OPT_REPORT, "report", 0, CLI_ARG_FILE, "FILE", 0, 0, NULL, NULL, "JSON lines: one per file, then a summary line",
      B, CLI_G_VERB, 0, NULL },
    { OPT_DRY_RUN, "dry-run", 0, CLI_ARG_NONE, NULL, 0, 0, NULL, NULL,
      "print what would be done; write nothing (the exit code is the one the run would have for the planned "
      "failures)", B, CLI_G_VERB, 0, NULL },
    { OPT_ALL_FILES, "all-files", 0, CLI_ARG_NONE, NULL, 0, 0, NULL, NULL,
      "take every file (default: media files only, by extension or by their bytes; the others are skipped, "
      "'not media')", B, CLI_G_VERB, 0, "all_files" },
    { OPT_DEVICES, "devices", 0, CLI_ARG_TEXT, "all|0,1,...", 0, 0, NULL, NULL,
      "stream slot w runs on CUDA device w % count (GPU backend)", B, CLI_G_VERB, 0, NULL },
    { OPT_SHARD, "shard", 0, CLI_ARG_TEXT, "i/N", 0, 0, NULL, NULL,
      "take files i, i+N, i+2N, ... of the sorted list (i from 0); default: SLURM_ARRAY_TASK_ID/"
      "SLURM_ARRAY_TASK_COUNT, or JOB_COMPLETION_INDEX with --shard-count N or VKCU_SHARD_COUNT", B, CLI_G_VERB, 0, NULL },
    { OPT_SHARD_COUNT, "shard-count", 0, CLI_ARG_INT, "N", 1, 1000000, NULL, NULL,
      "shard count for Kubernetes indexed Jobs", B, CLI_G_VERB, 0, NULL },
    { OPT_CONTAINER, "container", 0, CLI_ARG_TEXT, "EXT", 0, 0, NULL, NULL,
      "output extension (mkv, mp4, nut, ...), overrides the pipeline's", B, CLI_G_VERB, 0, NULL },

    /* pipelines */
    { OPT_PATHS, "paths", 0, CLI_ARG_NONE, NULL, 0, 0, NULL, NULL, "also show each preset's file", P, CLI_G_VERB, 0, NULL },
};
const int cli_nb_options = (int)(sizeof(cli_options) / sizeof(cli_options[0]));

#define EXIT_CODES_JOB                                                                                              \
    "  0 success   1 other failure   2 bad usage/options   3 bad input file\n"                                     \
    "  4 output not writable   5 GPU unavailable, lost or stalled\n"                                              \
    "  6 mismatch (compare/verify)   130 interrupted (Ctrl-C)"

const cli_verb_doc cli_verb_docs[CLI_NB_VERBS] = {
    [CLI_TRANSCODE] = {
        "vkcu", "GPU video post-processing (Vulkan Video decode -> CUDA)",
        "vkcu [options] INPUT -o OUTPUT\nvkcu VERB [options] ...   (vkcu VERB --help for each)\nvkcu help [VERB]",
        "Decodes INPUT (Vulkan Video on the GPU when it can, else in software), runs the operator chain "
        "(CUDA on the GPU backend, the same results on the CPU backend) and encodes the frames into OUTPUT. "
        "Nothing replaces an existing file without -y; an interrupted or failed job leaves no partial file.",
        "Without a verb, vkcu transcodes one file. Each verb has its own --help and man page (vkcu-VERB(1)).",
        EXIT_CODES_JOB,
        "VKCU_PIPELINES\t':'-separated folders searched first for --pipeline presets\n"
        "VKCU_VULKAN_DEVICE\tvkcu (its own Vulkan device), ffmpeg (FFmpeg's) or auto (the default)\n",
    },
    [CLI_PROBE] = {
        "probe", "list Vulkan and CUDA devices and which pairs match",
        "vkcu probe",
        "Lists Vulkan devices (video decode/encode queues and codecs, external memory/semaphore FD support), "
        "CUDA devices, and which pairs match by UUID.",
        NULL,
        "  0 at least one Vulkan/CUDA pair matched   5 none did   2 bad usage",
        NULL,
    },
    [CLI_FORMATS] = {
        "formats", "list the codecs and containers this build reads and writes; which run on the GPU",
        "vkcu formats",
        "Lists the video codecs this build decodes, marking those that decode on this machine's GPU (Vulkan "
        "Video), and the containers it reads; then the encoders it has, each video encoder with its pixel "
        "formats and whether it runs on the GPU, and the containers it writes with the encoder --encoder auto "
        "picks for each.",
        NULL,
        "  0 success   2 bad usage",
        NULL,
    },
    [CLI_HASH] = {
        "hash", "per-frame hashes (" VKCU_HASH_ALGOS_LIST ") of decoded (and processed) frames",
        "vkcu hash INPUT [options]",
        "Per-frame hashes of the decoded frames (after --chain, if given), in FFmpeg's framemd5 format "
        "(diffable against `ffmpeg -i INPUT -f framemd5 -`) or JSON lines. A frame's hash covers the visible "
        "picture, planes in order, rows packed, 16-bit samples little-endian; GPU-decoded NV12/P010 hash as "
        "yuv420p/yuv420p10le.",
        NULL,
        EXIT_CODES_JOB,
        NULL,
    },
    [CLI_COMPARE] = {
        "compare", "compare two videos or hash lists frame by frame (PSNR, SSIM, max diff)",
        "vkcu compare A B [options]",
        "Decodes A and B (media files, or hash lists written by 'vkcu hash'), pairs their frames by timestamp "
        "and reports, per frame, PSNR (per plane), SSIM and the largest absolute sample difference, the first "
        "differing frame, and frames or timestamps that do not match. PSNR and SSIM are FFmpeg's psnr and ssim "
        "filters' definitions. Without --max-diff or --min-psnr, any difference fails.",
        "--chain, --backend, --start, --duration, --frames and the other processing options apply to both "
        "inputs; --start and --duration count from each input's own start.",
        "  0 the inputs match (within the limits)   6 they do not\n"
        "  3 an input is missing or unreadable   2 bad usage (or --vmaf in a build without libvmaf)\n"
        "  4 an output file cannot be written (or exists, without -y)",
        NULL,
    },
    [CLI_VERIFY] = {
        "verify", "run a regression manifest: expected hashes or metric limits per case",
        "vkcu verify MANIFEST... [options]",
        "Runs every case of a regression manifest (docs/regression.md): decodes the input, applies its chain or "
        "pipeline, and checks the expectation: exact per-frame hashes, or metric limits against a reference. "
        "Prints one line per case and 'N passed, N failed'.",
        "What a case processes (chain, pipeline, trim, frames, strict) belongs in the manifest; the command line "
        "says where and how the cases run (--backend overrides each case's).",
        "  0 every case passed (or was updated)   6 a case failed\n"
        "  3 a manifest is missing or malformed   2 bad usage (or min-vmaf in a build without libvmaf)\n"
        "  4 an output cannot be written",
        "VKCU_CONFORMANCE\tthe conformance streams' folder, for manifests that name ${VKCU_CONFORMANCE}\n",
    },
    [CLI_BATCH] = {
        "batch", "process a folder: presets, concurrent streams, resume, report, shards",
        "vkcu batch IN_DIR OUT_DIR [options]",
        "Processes every media file of IN_DIR into OUT_DIR (same relative path, the extension the pipeline "
        "implies, else .mkv), several streams at once: a video container's extension, or bytes FFmpeg recognizes "
        "as a container holding video; other files are skipped as 'not media' (--all-files takes them). A failing "
        "file never stops the others; outputs appear only when complete.",
        "Progress (files, frames of done and running files, fps, ETA) shows on a terminal; -q hides it. The "
        "summary line 'batch: N done, N skipped, N failed' ends every run.",
        "  0 no file failed; else the most serious failure's: 130 > 5 > 4 > 2 > 3 > 1",
        "SLURM_ARRAY_TASK_ID\twith SLURM_ARRAY_TASK_COUNT: this task's shard, without --shard\n"
        "JOB_COMPLETION_INDEX\twith --shard-count or VKCU_SHARD_COUNT: this Kubernetes indexed Job's shard\n"
        "VKCU_SHARD_COUNT\tthe shard count for JOB_COMPLETION_INDEX\n"
        "VKCU_PIPELINES\t':'-separated folders searched first for --pipeline presets\n",
    },
    [CLI_PIPELINES] = {
        "pipelines", "list the pipeline presets (--pipeline NAME)",
        "vkcu pipelines [--paths] [NAME|FILE ...]",
        "Without arguments, lists the pipeline presets with one-line descriptions, then the operators with "
        "their keys, defaults and accuracy. With names or files (a path with a '/' or ending in .pipe), checks "
        "each one strictly and shows what it sets (chain, output, encoder, extension); the name of an operator "
        "(crop, pad, ...) shows that operator's keys.\n\n"
        "Presets are searched in $VKCU_PIPELINES (':'-separated folders), then pipelines/ of the source tree, "
        "then PREFIX/share/vkcu/pipelines; the first folder holding a name wins. The format: docs/pipelines.md.",
        NULL,
        "  0 success   2 a preset has a mistake   3 a preset file is missing",
        "VKCU_PIPELINES\t':'-separated folders searched first\n",
    },
};
