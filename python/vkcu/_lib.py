# SPDX-License-Identifier: GPL-2.0-or-later
"""The ctypes layer: libvkcu.so found and loaded, the public structs laid out
as include/vkcu/*.h declares them (checked against vkcu_struct_size at load),
and the prototypes of the calls the package makes.

Nothing here is public API; the modules above wrap it in Python objects.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import threading
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char, c_char_p, c_double, c_int, c_int64, c_size_t,
                    c_ssize_t, c_uint, c_uint8, c_uint64, c_void_p)
from pathlib import Path
from typing import List, Optional

# ---- constants: every enumerator and VKCU_ macro of include/vkcu/*.h, under
# the headers' names (tests/cli/python-abi.sh compares them with the headers) ----
# common.h
VKCU_ERR_USAGE = -0x56430001
VKCU_ERR_INPUT = -0x56430002
VKCU_ERR_OUTPUT = -0x56430003
VKCU_ERR_DEVICE = -0x56430004
VKCU_ERR_MISMATCH = -0x56430005
VKCU_ERR_INTERRUPT = -0x56430006
VKCU_ERR_PIPE_CLOSED = -0x56430007
(VKCU_EXIT_OK, VKCU_EXIT_FAIL, VKCU_EXIT_USAGE, VKCU_EXIT_INPUT, VKCU_EXIT_OUTPUT, VKCU_EXIT_DEVICE,
 VKCU_EXIT_MISMATCH) = range(7)
VKCU_EXIT_INTERRUPT = 130
VKCU_LOG_QUIET, VKCU_LOG_ERROR, VKCU_LOG_WARNING, VKCU_LOG_INFO, VKCU_LOG_VERBOSE, VKCU_LOG_DEBUG = range(-1, 5)
# version.h
VKCU_VERSION_MAJOR, VKCU_VERSION_MINOR, VKCU_VERSION_PATCH = 1, 2, 0
VKCU_VERSION_INT_CURRENT = (VKCU_VERSION_MAJOR << 16) | (VKCU_VERSION_MINOR << 8) | VKCU_VERSION_PATCH
# job.h
VKCU_BACKEND_AUTO, VKCU_BACKEND_CPU, VKCU_BACKEND_GPU = range(3)
(VKCU_PATH_NONE, VKCU_PATH_CPU, VKCU_PATH_VULKAN_CUDA, VKCU_PATH_SW_UPLOAD_CUDA,
 VKCU_PATH_VULKAN_COMPUTE_CUDA) = range(5)
VKCU_SINK_ENCODE, VKCU_SINK_HASH, VKCU_SINK_NULL, VKCU_SINK_CALLBACK = range(4)
VKCU_TIMING_FFMPEG, VKCU_TIMING_DECODED = range(2)
VKCU_RING_SIZE_MIN, VKCU_RING_SIZE_MAX, VKCU_RING_SIZE_DEFAULT = 3, 16, 4
VKCU_DECODE_QUEUE_MAX = 63
VKCU_DECODE_PARALLEL_AUTO, VKCU_DECODE_PARALLEL_MAX = -1, 64
VKCU_CRF_MAX, VKCU_GOP_MAX = 63, 100000
VKCU_STREAMS_ALL, VKCU_STREAMS_NONE, VKCU_STREAM_INDEX_MAX = 0, -1, 1023
# hash.h
VKCU_HASH_MD5, VKCU_HASH_CRC32, VKCU_HASH_XXH64, VKCU_HASH_SHA256, VKCU_HASH_ADLER32, VKCU_HASH_BLAKE3 = range(6)
VKCU_HASH_FORMAT_FRAMEMD5, VKCU_HASH_FORMAT_JSON, VKCU_HASH_FORMAT_FRAMECRC, VKCU_HASH_FORMAT_WHOLE = range(4)
VKCU_HASH_ALGOS = "md5, sha256, crc32, xxh64 or blake3"
VKCU_HASH_ALGOS_UPPER = "MD5, SHA256, CRC32, XXH64 or BLAKE3"
VKCU_HASH_ALGOS_LIST = "md5, sha256, crc32, xxh64, blake3"
VKCU_HASH_ALGOS_PIPE = "md5|sha256|crc32|xxh64|blake3"
VKCU_HASH_FORMATS = "framemd5, framecrc or json"
VKCU_HASH_FORMATS_PIPE = "framemd5|framecrc|json"
# regress.h
VKCU_ALIGN_START, VKCU_ALIGN_PTS, VKCU_ALIGN_INDEX = range(3)
# batch.h
VKCU_BATCH_MAX_DEVICES, VKCU_BATCH_MAX_JOBS, VKCU_BATCH_MAX_SHARDS = 64, 256, 1000000
VKCU_BATCH_DONE, VKCU_BATCH_SKIPPED, VKCU_BATCH_FAILED, VKCU_BATCH_INTERRUPTED, VKCU_BATCH_PLANNED = range(5)
(VKCU_BATCH_REASON_NONE, VKCU_BATCH_REASON_JOB, VKCU_BATCH_REASON_SAME_OUTPUT, VKCU_BATCH_REASON_EXISTS,
 VKCU_BATCH_REASON_EXISTS_CHANGED, VKCU_BATCH_REASON_UP_TO_DATE, VKCU_BATCH_REASON_BUSY,
 VKCU_BATCH_REASON_NOT_MEDIA) = range(8)
# preset.h
VKCU_PRESET_EXT = ".pipe"
# probe.h
VKCU_GPU_DECODE_NONE, VKCU_GPU_DECODE_VIDEO, VKCU_GPU_DECODE_COMPUTE = range(3)
# reader.h
VKCU_READER_TIMING_VFR, VKCU_READER_TIMING_DECODED, VKCU_READER_TIMING_CFR = range(3)
VKCU_MEMORY_HOST, VKCU_MEMORY_CUDA = range(2)
VKCU_READER_MAX_HELD_LIMIT, VKCU_READER_MAX_HELD_DEFAULT = 1024, 32
# number.h
VKCU_BITRATE_MIN, VKCU_BITRATE_MAX = 1000, 10000000000

# The package's words for them (PATHS, the library's names, comes after the library is loaded)
BACKENDS = {"auto": VKCU_BACKEND_AUTO, "cpu": VKCU_BACKEND_CPU, "gpu": VKCU_BACKEND_GPU}
SINK_HASH, SINK_NULL, SINK_CALLBACK = VKCU_SINK_HASH, VKCU_SINK_NULL, VKCU_SINK_CALLBACK
HASH_ALGOS = {"md5": VKCU_HASH_MD5, "crc32": VKCU_HASH_CRC32, "xxh64": VKCU_HASH_XXH64, "sha256": VKCU_HASH_SHA256,
              "adler32": VKCU_HASH_ADLER32, "blake3": VKCU_HASH_BLAKE3}
HASH_FORMAT_JSON = VKCU_HASH_FORMAT_JSON
TIMINGS = {"decoded": VKCU_READER_TIMING_DECODED, "vfr": VKCU_READER_TIMING_VFR, "cfr": VKCU_READER_TIMING_CFR}
ALIGNS = {"start": VKCU_ALIGN_START, "pts": VKCU_ALIGN_PTS, "index": VKCU_ALIGN_INDEX}
MEMORY_CUDA = VKCU_MEMORY_CUDA
LOG_QUIET, LOG_ERROR, LOG_WARNING, LOG_INFO, LOG_VERBOSE, LOG_DEBUG = (VKCU_LOG_QUIET, VKCU_LOG_ERROR, VKCU_LOG_WARNING,
                                                                       VKCU_LOG_INFO, VKCU_LOG_VERBOSE, VKCU_LOG_DEBUG)

LogCallback = CFUNCTYPE(None, c_void_p, c_int, c_char_p)
# The namer returns a pointer into the buffer it was given (or NULL).
SettingNameCallback = CFUNCTYPE(c_void_p, c_void_p, c_char_p, c_char_p, c_void_p, c_size_t)


class ProgressInfo(Structure):
    _fields_ = [
        ("input", c_char_p), ("frames", c_int64), ("expected", c_int64), ("elapsed", c_double), ("fps", c_double),
        ("rate", c_double), ("final", c_int),
    ]


ProgressCallback = CFUNCTYPE(None, c_void_p, POINTER(ProgressInfo))


class Settings(Structure):
    _fields_ = [
        ("log_callback", LogCallback), ("log_opaque", c_void_p), ("log_level", c_int),
        ("setting_name_callback", SettingNameCallback), ("backend", c_int), ("device", c_int),
        ("ring_size", c_int), ("stall_timeout_ms", c_int), ("timeline_handoff", c_int),
        ("vulkan_download", c_int), ("decode_threads", c_int), ("encode_workers", c_int),
        ("progress_callback", c_void_p), ("progress_opaque", c_void_p),
        ("watchdog_callback", c_void_p), ("watchdog_opaque", c_void_p), ("decode_queue", c_int),
        ("decode_parallel", c_int), ("decode_segment_min", c_int), ("reserved", c_uint64 * 31),
    ]


class Job(Structure):
    _fields_ = [
        ("input", c_char_p), ("video_stream", c_int), ("chain", c_char_p), ("sink", c_int),
        ("output", c_char_p), ("output_format", c_char_p), ("encoder", c_char_p), ("crf", c_int),
        ("bitrate", c_int64), ("preset", c_char_p), ("gop", c_int), ("encoder_opts", c_char_p),
        ("faststart", c_int), ("overwrite", c_int), ("keep_partial", c_int),
        ("hash_out", c_void_p), ("hash_out_name", c_char_p), ("hash_path", c_char_p),
        ("hash_algo", c_int), ("hash_format", c_int),
        ("on_open", c_void_p), ("on_frame", c_void_p), ("callback_opaque", c_void_p),
        ("start_time", c_double), ("duration", c_double), ("start_frame", c_int64), ("frame_count", c_int64),
        ("max_frames", c_int), ("strict", c_int), ("require_gpu_decode", c_int), ("decode_only", c_int),
        ("pipeline_file", c_char_p), ("no_audio", c_int), ("audio_encoder", c_char_p), ("timing", c_int),
        ("gpu_encoder", c_char_p), ("audio_streams", c_int), ("subtitle_streams", c_int),
        ("reserved", c_uint64 * 31),
    ]


class JobResult(Structure):
    _fields_ = [
        ("frames_in", c_int64), ("frames_out", c_int64), ("frames_corrupt", c_int64),
        ("seconds", c_double), ("fps", c_double), ("fps_steady", c_double), ("setup_seconds", c_double),
        ("path", c_int), ("error", c_char * 512),
        ("imports", c_int64), ("dtod_copies", c_int64), ("htod_bytes", c_int64), ("dtoh_bytes", c_int64),
        ("vk_readbacks", c_int64), ("max_in_flight", c_int),
        ("gpu_ms_copy", c_double), ("gpu_ms_ops", c_double), ("gpu_ms_download", c_double),
        ("enc_ms_encode", c_double), ("enc_ms_mux", c_double), ("enc_ms_idle", c_double),
        ("setup_ms_demux", c_double), ("setup_ms_gpu_open", c_double), ("setup_ms_decoder", c_double),
        ("setup_ms_first_frame", c_double), ("setup_ms_vk_instance", c_double), ("setup_ms_vk_device", c_double),
        ("setup_ms_cuda", c_double), ("setup_vk_device", c_char * 64), ("setup_timeline", c_char * 512),
        ("frames_concealed", c_int64), ("frames_dropped", c_int64), ("frames_duplicated", c_int64),
        ("frames_rescaled", c_int64), ("format_changes", c_int64),
        ("encoder", c_char * 32), ("encoded_bytes", c_int64), ("gpu_ms_encode", c_double),
        ("gpu_encode_frames", c_int64), ("cpu_seconds", c_double),
        ("encode_instances", c_int), ("reserved32", c_int), ("reserved", c_uint64 * 31),
    ]


class CompareJob(Structure):
    _fields_ = [
        ("a", c_char_p), ("b", c_char_p), ("chain", c_char_p), ("chain_a", c_char_p), ("chain_b", c_char_p),
        ("start_time", c_double), ("duration", c_double), ("start_frame", c_int64), ("frame_count", c_int64),
        ("max_frames", c_int), ("strict", c_int), ("max_diff", c_int), ("min_psnr", c_double),
        ("min_vmaf", c_double), ("vmaf", c_int), ("align", c_int), ("scale", c_int), ("report", c_void_p),
        ("per_frame", c_int), ("diff_image", c_char_p), ("csv", c_char_p), ("json", c_char_p),
        ("report_html", c_char_p), ("overwrite", c_int),
        ("pipeline_file", c_char_p), ("timing", c_int), ("exclude_concealed", c_int),
        ("reserved", c_uint64 * 32),
    ]


class FrameMetrics(Structure):
    _fields_ = [
        ("nb_comps", c_int), ("comp_names", c_char * 5), ("mse", c_double * 4), ("psnr", c_double * 4),
        ("ssim", c_double * 4), ("mse_avg", c_double), ("psnr_avg", c_double), ("ssim_all", c_double),
        ("max_diff", c_int), ("max_diff_comp", c_int), ("max_diff_x", c_int), ("max_diff_y", c_int),
        ("peak", c_int), ("vmaf", c_double),
        ("reserved", c_uint64 * 16),
    ]


class CompareResult(Structure):
    _fields_ = [
        ("frames_a", c_int64), ("frames_b", c_int64), ("paired", c_int64), ("differing", c_int64),
        ("over_limit", c_int64), ("only_a", c_int64), ("only_b", c_int64), ("ts_mismatch", c_int64),
        ("format_mismatch", c_int64), ("first_diff", c_int64), ("first_diff_time", c_double),
        ("metrics", c_int), ("worst", FrameMetrics), ("worst_index", c_int64), ("max_diff", c_int),
        ("nb_comps", c_int), ("comp_names", c_char * 5), ("psnr", c_double * 4), ("psnr_avg", c_double),
        ("psnr_min", c_double), ("ssim", c_double * 4), ("ssim_all", c_double), ("vmaf", c_int),
        ("vmaf_mean", c_double), ("vmaf_min", c_double), ("vmaf_min_index", c_int64), ("pass_", c_int),
        ("verdict", c_char * 512), ("error", c_char * 512),
        ("max_diff_index", c_int64), ("concealed", c_int64), ("concealed_differing", c_int64),
        ("gpu_pairs", c_int64), ("frames_dtoh_bytes", c_int64),
        ("reserved", c_uint64 * 30),
    ]


class VerifyJob(Structure):
    _fields_ = [
        ("manifests", POINTER(c_char_p)), ("nb_manifests", c_int), ("override_backend", c_int),
        ("cases", POINTER(c_char_p)), ("nb_cases", c_int), ("out", c_void_p), ("jobs", c_int),
        ("timeout", c_double), ("fail_fast", c_int), ("update", c_int), ("allow_outside", c_int),
        ("junit", c_char_p), ("summary", c_char_p), ("html", c_char_p), ("overwrite", c_int),
        ("timing", c_int), ("exclude_concealed", c_int),
        ("reserved", c_uint64 * 32),
    ]


class ReaderParams(Structure):
    _fields_ = [
        ("input", c_char_p), ("video_stream", c_int), ("chain", c_char_p),
        ("start_time", c_double), ("duration", c_double), ("start_frame", c_int64), ("frame_count", c_int64),
        ("timing", c_int), ("max_held", c_int), ("cuda_frames", c_int), ("detach", c_int), ("strict", c_int),
        ("require_gpu_decode", c_int),
        ("reserved", c_uint64 * 32),
    ]


class ReaderInfo(Structure):
    _fields_ = [
        ("width", c_int), ("height", c_int), ("codec", c_char_p), ("fps_num", c_int), ("fps_den", c_int),
        ("tb_num", c_int), ("tb_den", c_int), ("duration", c_double), ("frames", c_int64), ("seekable", c_int),
        ("reserved", c_uint64 * 16),
    ]


class FrameStruct(Structure):
    _fields_ = [
        ("width", c_int), ("height", c_int), ("format", c_char_p), ("nb_planes", c_int),
        ("data", c_void_p * 4), ("linesize", c_ssize_t * 4), ("row_bytes", c_int * 4), ("rows", c_int * 4),
        ("bytes_per_sample", c_int), ("components", c_int), ("index", c_int64), ("pts", c_int64),
        ("duration", c_int64), ("tb_num", c_int), ("tb_den", c_int), ("key_frame", c_int), ("interlaced", c_int),
        ("top_field_first", c_int), ("corrupt", c_int), ("memory", c_int), ("device", c_int), ("priv", c_void_p),
        ("reserved", c_uint64 * 16),
    ]


class ReaderStats(Structure):
    _fields_ = [
        ("frames", c_int64), ("cuda_frames", c_int64), ("host_copies", c_int64), ("detached", c_int64),
        ("held", c_int), ("max_held_seen", c_int), ("random_decoded", c_int64), ("random_seeks", c_int64),
        ("random_setups", c_int), ("path", c_int), ("imports", c_int64), ("dtod_copies", c_int64),
        ("htod_bytes", c_int64), ("dtoh_bytes", c_int64), ("fps_steady", c_double),
        ("reserved", c_uint64 * 32),
    ]


# The structs the package does not use yet: mirrored all the same, so that
# every layout is checked (at load, and by tests/cli/python-abi.sh).
class FFmpegInfo(Structure):
    _fields_ = [
        ("version", c_char_p), ("avcodec", c_uint), ("avformat", c_uint), ("avutil", c_uint),
        ("configuration", c_char_p), ("nb_decoders", c_int), ("nb_encoders", c_int), ("nb_demuxers", c_int),
        ("nb_muxers", c_int),
        ("reserved", c_uint64 * 16),
    ]


class StreamInfo(Structure):
    _fields_ = [
        ("tb_num", c_int), ("tb_den", c_int), ("fps_num", c_int), ("fps_den", c_int), ("start", c_int64),
        ("width", c_int), ("height", c_int), ("format", c_char_p), ("pix_fmt", c_int),
        ("reserved", c_uint64 * 16),
    ]


class Picture(Structure):
    _fields_ = [
        ("width", c_int), ("height", c_int), ("format", c_char_p), ("nb_planes", c_int), ("data", c_void_p * 4),
        ("linesize", c_ssize_t * 4), ("row_bytes", c_int * 4), ("rows", c_int * 4), ("pts", c_int64),
        ("duration", c_int64), ("key_frame", c_int), ("interlaced", c_int), ("top_field_first", c_int),
        ("avframe", c_void_p),
        ("reserved", c_uint64 * 16),
    ]


class ProgressInfo(Structure):
    _fields_ = [
        ("input", c_char_p), ("frames", c_int64), ("expected", c_int64), ("elapsed", c_double), ("fps", c_double),
        ("rate", c_double), ("final", c_int),
        ("reserved", c_uint64 * 16),
    ]


class BatchFile(Structure):
    _fields_ = [
        ("index", c_int), ("file", c_char_p), ("input", c_char_p), ("output", c_char_p), ("status", c_int),
        ("reason", c_int), ("detail", c_char_p), ("error", c_int), ("message", c_char_p),
        ("job", POINTER(JobResult)), ("device", c_int),
        ("reserved", c_uint64 * 16),
    ]


class BatchProgress(Structure):
    _fields_ = [
        ("total", c_int), ("finished", c_int), ("running", c_int), ("failed", c_int), ("frames", c_int64),
        ("elapsed", c_double), ("fps", c_double), ("eta", c_double), ("final", c_int), ("frames_running", c_int64),
        ("reserved", c_uint64 * 16),
    ]


class BatchSettings(Structure):
    _fields_ = [
        ("in_dir", c_char_p), ("out_dir", c_char_p), ("job", Job), ("extension", c_char_p), ("pipeline", c_char_p),
        ("jobs", c_int), ("recursive", c_int), ("include", POINTER(c_char_p)), ("nb_include", c_int),
        ("exclude", POINTER(c_char_p)), ("nb_exclude", c_int), ("resume", c_int), ("overwrite", c_int),
        ("report_path", c_char_p), ("dry_run", c_int), ("shard_index", c_int), ("shard_count", c_int),
        ("devices", c_int * VKCU_BATCH_MAX_DEVICES), ("nb_devices", c_int), ("file_callback", c_void_p),
        ("file_opaque", c_void_p), ("progress_callback", c_void_p), ("progress_opaque", c_void_p),
        ("all_files", c_int), ("worker_command", POINTER(c_char_p)),
        ("reserved", c_uint64 * 31),
    ]


class BatchResult(Structure):
    _fields_ = [
        ("total", c_int), ("done", c_int), ("skipped", c_int), ("failed", c_int), ("interrupted", c_int),
        ("not_started", c_int), ("planned", c_int), ("frames", c_int64), ("seconds", c_double),
        ("error", c_char * 512), ("worker", c_int), ("processes", c_int),
        ("reserved", c_uint64 * 31),
    ]


class Preset(Structure):
    _fields_ = [
        ("name", c_char * 128), ("path", c_char * 4096), ("description", c_char * 256), ("chain", c_char * 4096),
        ("sink", c_int), ("encoder", c_char * 64), ("crf", c_int), ("encoder_preset", c_char * 64),
        ("bitrate", c_int64), ("gop", c_int), ("faststart", c_int), ("encoder_opts", c_char * 1024),
        ("extension", c_char * 16), ("hash_algo", c_int), ("hash_format", c_int), ("gpu_encoder", c_char * 32),
        ("reserved", c_uint64 * 32),
    ]


class ProbeInfo(Structure):
    _fields_ = [
        ("vulkan_loader", c_int), ("vulkan_instance", c_int), ("nb_vulkan", c_int),
        ("vulkan_devices", c_char * 1024), ("nb_cuda", c_int), ("cuda_error", c_char * 128), ("nb_pairs", c_int),
        ("gpu_decode_ops", c_uint),
        ("reserved", c_uint64 * 16),
    ]


class EncoderInfo(Structure):
    _fields_ = [
        ("name", c_char_p), ("media", c_char_p), ("codec", c_char_p), ("description", c_char_p), ("gpu", c_char_p),
        ("pix_fmts", c_char * 512),
        ("reserved", c_uint64 * 16),
    ]


class ContainerInfo(Structure):
    _fields_ = [("name", c_char_p), ("description", c_char_p), ("extensions", c_char_p), ("encoder", c_char_p),
                ("reserved", c_uint64 * 16)]


class DecoderInfo(Structure):
    _fields_ = [("codec", c_char_p), ("description", c_char_p), ("codec_id", c_int), ("decoders", c_char * 256),
                ("reserved", c_uint64 * 16)]


# DLPack (dlpack.h): only what the capsule destructor needs to call the deleter.
class _DLManagedTensor(Structure):
    pass


class _DLManagedTensorVersioned(Structure):
    pass


_DLDeleter = CFUNCTYPE(None, c_void_p)
_DLManagedTensor._fields_ = [("dl_tensor", c_uint8 * 48), ("manager_ctx", c_void_p), ("deleter", _DLDeleter)]
_DLManagedTensorVersioned._fields_ = [("major", c_uint), ("minor", c_uint), ("manager_ctx", c_void_p),
                                      ("deleter", _DLDeleter), ("flags", c_uint64),
                                      ("dl_tensor", c_uint8 * 48)]

# Every typedef struct of include/vkcu/ (but the opaque ones), by its C name.
_STRUCTS = {
    "vkcu_ffmpeg_info": FFmpegInfo, "vkcu_stream_info": StreamInfo, "vkcu_picture": Picture,
    "vkcu_progress_info": ProgressInfo, "vkcu_settings": Settings, "vkcu_job": Job, "vkcu_job_result": JobResult,
    "vkcu_batch_file": BatchFile, "vkcu_batch_progress": BatchProgress, "vkcu_batch_settings": BatchSettings,
    "vkcu_batch_result": BatchResult, "vkcu_frame_metrics": FrameMetrics, "vkcu_compare_job": CompareJob,
    "vkcu_compare_result": CompareResult, "vkcu_verify_job": VerifyJob, "vkcu_preset": Preset,
    "vkcu_probe_info": ProbeInfo, "vkcu_encoder_info": EncoderInfo, "vkcu_container_info": ContainerInfo,
    "vkcu_decoder_info": DecoderInfo, "vkcu_reader_params": ReaderParams, "vkcu_reader_info": ReaderInfo,
    "vkcu_frame": FrameStruct, "vkcu_reader_stats": ReaderStats,
}


class LibraryNotFound(ImportError):
    pass


# The library of the ABI these declarations describe (version.h: a new major, a new soname).
SONAME = f"libvkcu.so.{VKCU_VERSION_MAJOR}"


def _candidates() -> List[str]:
    """Where libvkcu.so may be, in the order tried (docs/python.md)."""
    here = Path(__file__).resolve().parent
    out = []
    env = os.environ.get("VKCU_LIBRARY")
    if env:
        out.append(env)
    for name in ("libvkcu.so", SONAME):
        out.append(str(here / name))
    try:
        from . import _paths  # written by make install and by the in-tree build backend
        for d in getattr(_paths, "LIBDIRS", ()):
            out.append(os.path.join(d, SONAME))
    except ImportError:
        pass
    # a checkout: python/vkcu/ beside build/
    out.append(str(here.parent.parent / "build" / SONAME))
    found = ctypes.util.find_library("vkcu")
    out.append(found or SONAME)
    return out


def _load() -> ctypes.CDLL:
    tried = []
    for c in _candidates():
        if os.sep in c and not os.path.exists(c):
            tried.append(c + " (missing)")
            continue
        try:
            return ctypes.CDLL(c)
        except OSError as e:
            tried.append(f"{c} ({e})")
    raise LibraryNotFound("vkcu: cannot load libvkcu.so; set VKCU_LIBRARY=/path/to/" + SONAME + " "
                          "(tried: " + "; ".join(tried) + ")")


lib = _load()


def _proto(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


_proto("vkcu_version", c_char_p)
_proto("vkcu_version_api", c_uint)
_proto("vkcu_struct_size", c_size_t, c_char_p)
_proto("vkcu_path_name", c_char_p, c_int)
_proto("vkcu_error_string", c_char_p, c_int, c_char_p, c_size_t)
_proto("vkcu_default_settings", None, POINTER(Settings))
_proto("vkcu_open", c_int, POINTER(c_void_p), POINTER(Settings))
_proto("vkcu_close", None, POINTER(c_void_p))
_proto("vkcu_context_stop", None, c_void_p, c_int)
_proto("vkcu_parse_int", c_int, c_char_p, c_int64, c_int64, POINTER(c_int64))
_proto("vkcu_parse_number", c_int, c_char_p, c_double, c_double, POINTER(c_double))
_proto("vkcu_default_job", None, POINTER(Job))
_proto("vkcu_run", c_int, c_void_p, POINTER(Job), POINTER(JobResult))
_proto("vkcu_chain_check", c_int, c_char_p, c_char_p, c_size_t)
_proto("vkcu_cuda_device_count", c_int)
_proto("vkcu_operator_name", c_char_p, c_int)
_proto("vkcu_hash_algo_parse", c_int, c_char_p, POINTER(c_int))
_proto("vkcu_default_compare_job", None, POINTER(CompareJob))
_proto("vkcu_compare", c_int, c_void_p, POINTER(CompareJob), POINTER(CompareResult))
_proto("vkcu_default_verify_job", None, POINTER(VerifyJob))
_proto("vkcu_verify", c_int, c_void_p, POINTER(VerifyJob))
_proto("vkcu_default_reader_params", None, POINTER(ReaderParams))
_proto("vkcu_reader_open", c_int, c_void_p, POINTER(ReaderParams), POINTER(c_void_p), c_char_p, c_size_t)
_proto("vkcu_reader_info_get", None, c_void_p, POINTER(ReaderInfo))
_proto("vkcu_reader_next", c_int, c_void_p, POINTER(POINTER(FrameStruct)), c_char_p, c_size_t)
_proto("vkcu_reader_rewind", None, c_void_p)
_proto("vkcu_reader_frame_count", c_int, c_void_p, POINTER(c_int64), c_char_p, c_size_t)
_proto("vkcu_reader_frames_at", c_int, c_void_p, POINTER(c_int64), c_int, POINTER(POINTER(FrameStruct)), c_char_p,
       c_size_t)
_proto("vkcu_reader_frame_at_time", c_int, c_void_p, c_double, POINTER(c_int64), c_char_p, c_size_t)
_proto("vkcu_reader_frames_in_time", c_int, c_void_p, c_double, c_double, POINTER(c_int64), POINTER(c_int64), c_char_p,
       c_size_t)
_proto("vkcu_reader_stats_get", None, c_void_p, POINTER(ReaderStats))
_proto("vkcu_reader_close", None, POINTER(c_void_p))
_proto("vkcu_frame_ref", POINTER(FrameStruct), POINTER(FrameStruct))
_proto("vkcu_frame_unref", None, POINTER(POINTER(FrameStruct)))
_proto("vkcu_frame_detach", c_int, POINTER(FrameStruct), POINTER(POINTER(FrameStruct)), c_char_p, c_size_t)
_proto("vkcu_frame_dlpack", c_int, POINTER(FrameStruct), c_int, c_int, c_int64, POINTER(c_void_p), c_char_p,
       c_size_t)


def _check_layouts() -> None:
    bad = []
    for name, cls in _STRUCTS.items():
        theirs = lib.vkcu_struct_size(name.encode())
        if theirs != ctypes.sizeof(cls):
            bad.append(f"{name}: library {theirs} bytes, package {ctypes.sizeof(cls)}")
    if bad:
        raise ImportError("vkcu: this package and libvkcu.so (" + lib.vkcu_version().decode() + ") disagree on the "
                          "public structs: " + "; ".join(bad) + " (install the package of the same vkcu build)")


_check_layouts()

# The names of enum vkcu_path, as the library and the command line print them.
PATHS = {p: lib.vkcu_path_name(p).decode() for p in range(VKCU_PATH_NONE, VKCU_PATH_VULKAN_COMPUTE_CUDA + 1)}

# ---- libc: memory streams for the library's FILE * outputs ----
_libc = ctypes.CDLL(None)
_libc.open_memstream.restype = c_void_p
_libc.open_memstream.argtypes = [POINTER(c_void_p), POINTER(c_size_t)]
_libc.fclose.restype = c_int
_libc.fclose.argtypes = [c_void_p]
_libc.free.restype = None
_libc.free.argtypes = [c_void_p]


class MemStream:
    """A FILE * whose bytes land in memory: for hash lines and verify's lines."""

    def __init__(self):
        self._buf = c_void_p()
        self._size = c_size_t()
        self.file = _libc.open_memstream(ctypes.byref(self._buf), ctypes.byref(self._size))
        if not self.file:
            raise MemoryError("open_memstream failed")

    def close(self) -> bytes:
        if self.file:
            _libc.fclose(self.file)
            self.file = None
        data = ctypes.string_at(self._buf, self._size.value) if self._buf else b""
        if self._buf:
            _libc.free(self._buf)
            self._buf = c_void_p()
        return data

    def __del__(self):
        self.close()


# ---- PyCapsule, for DLPack ----
# A handle of our own on the interpreter's API: prototypes set here do not
# change ctypes.pythonapi's for other packages.
_py = ctypes.PyDLL(None)
_py.PyCapsule_New.restype = ctypes.py_object
_py.PyCapsule_New.argtypes = [c_void_p, c_char_p, c_void_p]
# Raw pointers on purpose: the destructor runs while the capsule is being
# freed, when no new reference to it may be made.
_py.PyCapsule_IsValid.restype = c_int
_py.PyCapsule_IsValid.argtypes = [c_void_p, c_char_p]
_py.PyCapsule_GetPointer.restype = c_void_p
_py.PyCapsule_GetPointer.argtypes = [c_void_p, c_char_p]
_py.Py_IncRef.restype = None
_py.Py_IncRef.argtypes = [ctypes.py_object]

_CAPSULE_PLAIN = b"dltensor"
_CAPSULE_VERSIONED = b"dltensor_versioned"


def _capsule_destructor(capsule, _py=_py,
                        _kinds=((_CAPSULE_PLAIN, _DLManagedTensor), (_CAPSULE_VERSIONED, _DLManagedTensorVersioned))):
    """An unconsumed capsule dies: the tensor's deleter runs (a consumer
    renames the capsule it takes, and calls the deleter itself later).
    Everything it needs is bound here, for a capsule that dies while the
    interpreter shuts down."""
    for name, cls in _kinds:
        if _py.PyCapsule_IsValid(capsule, name):
            ptr = _py.PyCapsule_GetPointer(capsule, name)
            if ptr:
                cls.from_address(ptr).deleter(ptr)
            return


_DESTRUCTOR = CFUNCTYPE(None, c_void_p)(_capsule_destructor)
# Kept alive for the life of the process: a capsule may die during the
# interpreter's shutdown, after this module's globals are gone.
_py.Py_IncRef(_DESTRUCTOR)
_DESTRUCTOR_ADDRESS = ctypes.cast(_DESTRUCTOR, c_void_p).value


def capsule(tensor: int, versioned: bool):
    return _py.PyCapsule_New(tensor, _CAPSULE_VERSIONED if versioned else _CAPSULE_PLAIN, _DESTRUCTOR_ADDRESS)


# ---- strings ----
# A C string ends at its first NUL, and ctypes passes a Python string's
# bytes up to there without a word: "mid.mkv\0.png" would open mid.mkv.
# Every string the package hands the library comes through here.
def _no_nul(name: str, value, raw: bytes) -> bytes:
    if b"\0" in raw:
        from ._errors import UsageError
        raise UsageError(f"{name}={value!r}: contains a NUL character, where the library's text would end; "
                         "remove it", -22)
    return raw


def path_arg(name: str, value) -> Optional[bytes]:
    """A file name for the library: str, bytes or os.PathLike (None: not given)."""
    if value is None:
        return None
    if isinstance(value, (str, bytes, os.PathLike)):
        raw = os.fsencode(value)
        if isinstance(raw, bytes):
            return _no_nul(name, value, raw)
    raise TypeError(f"{name}={value!r}: give a path (str, bytes or os.PathLike), not {type(value).__name__}")


def text_arg(name: str, value, what: str = "text") -> Optional[bytes]:
    """A setting written as text (a chain, an algorithm, a case name): str or
    bytes (None: not given)."""
    if value is None:
        return None
    if isinstance(value, str):
        return _no_nul(name, value, value.encode("utf-8", "surrogateescape"))
    if isinstance(value, bytes):
        return _no_nul(name, value, value)
    raise TypeError(f"{name}={value!r}: give {what} as a str, not {type(value).__name__}")


def text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def error_string(code: int) -> str:
    buf = ctypes.create_string_buffer(256)
    return text(lib.vkcu_error_string(code, buf, len(buf)) or b"")


version = text(lib.vkcu_version())
lock = threading.Lock()
