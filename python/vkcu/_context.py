# SPDX-License-Identifier: GPL-2.0-or-later
"""Contexts (vkcu_settings, include/vkcu/job.h): how jobs run whatever they
do, the log callback that sends the library's lines to the ``logging``
module (logger ``vkcu``), and the namer that makes the library's messages
name this package's keyword arguments (``start='300f'``, ``copy=True``)
instead of the C fields."""
from __future__ import annotations

import atexit
import ctypes
import logging
import threading
import weakref
from dataclasses import dataclass
from typing import Callable, Optional, Union

from . import _lib
from ._args import number, parse_time, trim_args, whole  # noqa: F401 - parse_time, trim_args: used from here
from ._errors import UsageError, from_code

log = logging.getLogger("vkcu")

_LEVELS = {
    _lib.LOG_ERROR: logging.DEBUG,   # failures are raised as exceptions with the same line
    _lib.LOG_WARNING: logging.WARNING,
    _lib.LOG_INFO: logging.INFO,
    _lib.LOG_VERBOSE: logging.DEBUG,
    _lib.LOG_DEBUG: logging.DEBUG,
}
_LOG_LEVEL_NAMES = {"quiet": _lib.LOG_QUIET, "error": _lib.LOG_ERROR, "warning": _lib.LOG_WARNING,
                    "info": _lib.LOG_INFO, "verbose": _lib.LOG_VERBOSE, "debug": _lib.LOG_DEBUG}

_last_error = threading.local()


def _on_log(opaque, level, message, _log=log, _levels=_LEVELS, _last=_last_error):
    line = message.decode("utf-8", "replace") if message else ""
    if level == _lib.LOG_ERROR:
        _last.line = line
    _log.log(_levels.get(level, logging.DEBUG), "%s", line)


# Settings named as this package's keyword arguments. value None: the name
# alone; else how the value is written.
_NAMES = {
    "start_time": "start", "start_frame": "start", "duration": "duration", "frame_count": "frames",
    "max_held": "max_held", "detach": "copy", "cuda_frames": "cuda", "backend": "backend", "device": "device",
    "ring_size": "ring_size", "decode_threads": "decode_threads", "decode_parallel": "decode_parallel",
    "strict": "strict",
    "require_gpu_decode": "require_gpu_decode", "video_stream": "video_stream", "timing": "timing",
    "overwrite": "overwrite", "update": "update", "fail_fast": "fail_fast", "allow_outside": "allow_outside",
    "align": "align", "max_diff": "max_diff", "min_psnr": "min_psnr", "min_vmaf": "min_vmaf", "scale": "scale",
    "vmaf": "vmaf", "stall_timeout_ms": "stall_timeout_ms", "chain": "chain",
}
_FLAGS = {"detach", "strict", "require_gpu_decode", "overwrite", "update", "fail_fast", "allow_outside", "scale",
          "vmaf", "cuda_frames"}


def _setting_text(setting: str, value: Optional[str]) -> Optional[str]:
    name = _NAMES.get(setting)
    if name is None:
        return None
    if value is None:
        return name
    if setting in _FLAGS and value in ("0", "1"):
        return f"{name}={value == '1'}"
    if setting == "start_frame" and value.lstrip("-").isdigit():
        return f"{name}='{value}f'"
    if setting in ("backend", "align", "timing"):
        return f"{name}={value!r}"
    return f"{name}={value}"


def _on_setting_name(opaque, setting, value, buf, size, _text=_setting_text):
    try:
        t = _text(setting.decode(), value.decode() if value else None)
    except Exception:  # noqa: BLE001 - never raise into C
        return None
    if t is None:
        return None
    raw = t.encode()[: size - 1] + b"\0"
    ctypes.memmove(buf, raw, len(raw))
    return buf


_LOG_CB = _lib.LogCallback(_on_log)
_NAME_CB = _lib.SettingNameCallback(_on_setting_name)
# Library threads may log while the interpreter shuts down: the callbacks live as long as the process.
_lib._py.Py_IncRef(_LOG_CB)
_lib._py.Py_IncRef(_NAME_CB)


@dataclass(frozen=True)
class Progress:
    """A job's progress report (vkcu_progress_info): at most four a second
    while frames flow, and a last one (``final``) when the job succeeds."""

    input: str
    frames: int     #: frames handed to the sink so far
    expected: int   #: frames the job is expected to give; 0 unknown
    elapsed: float  #: seconds since the job started
    fps: float
    rate: float     #: the output's nominal frame rate; 0 unknown
    final: bool


_progress_of = {}  # id of a context's callback box -> the Python callable


def _on_progress(opaque, info, _log=log):
    fn = _progress_of.get(opaque)
    if fn is None:
        return
    i = info.contents
    try:
        fn(Progress(_lib.text(i.input or b""), i.frames, i.expected, i.elapsed, i.fps, i.rate, bool(i.final)))
    except Exception:  # noqa: BLE001 - never raise into C: the job goes on
        _log.exception("vkcu: the progress callback raised")


_PROGRESS_CB = _lib.ProgressCallback(_on_progress)
_lib._py.Py_IncRef(_PROGRESS_CB)

_live_readers = weakref.WeakSet()
_live_contexts = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    """Readers and contexts left open end before the interpreter does, so no
    library thread calls into Python after it: readers first, then the
    contexts they run on."""
    for group in (_live_readers, _live_contexts):
        for obj in list(group):
            try:
                obj.close()
            except Exception:  # noqa: BLE001
                pass


def register(obj) -> None:
    (_live_contexts if isinstance(obj, Context) else _live_readers).add(obj)


def take_last_error(default: str = "") -> str:
    line = getattr(_last_error, "line", "") or default
    _last_error.line = ""
    return line


class Context:
    """How jobs run: backend (``"auto"``, ``"cpu"``, ``"gpu"``), CUDA device
    (the Vulkan device is the one with its UUID), interop ring size, decoder
    threads, log level. Opening one opens no device; GPU devices are shared by
    every context of the process. Readers and the regression calls make one
    for themselves unless given ``context=``.

    ``decode_parallel``: ``"auto"`` (the default: one software decoder per
    core where the stream can be cut at its IDR pictures), ``"off"``, or N
    decoders (1..64) decoding pieces of one stream at once; the frames and
    timestamps are one decoder's either way."""

    def __init__(self, backend: str = "auto", device: int = 0, *, ring_size: Optional[int] = None,
                 decode_threads: Optional[int] = None, decode_parallel: Union[None, int, str] = None,
                 log_level: str = "warning", stall_timeout: Optional[float] = None, progress: Optional[Callable[[Progress], None]] = None):
        self._ptr = ctypes.c_void_p()
        s = _lib.Settings()
        _lib.lib.vkcu_default_settings(ctypes.byref(s))
        if not isinstance(backend, str) or backend not in _lib.BACKENDS:
            raise UsageError(f"backend={backend!r}: give 'auto', 'cpu' or 'gpu'")
        if not isinstance(log_level, str) or log_level not in _LOG_LEVEL_NAMES:
            raise UsageError(f"log_level={log_level!r}: give one of {', '.join(_LOG_LEVEL_NAMES)}")
        if progress is not None and not callable(progress):
            raise TypeError(f"progress={progress!r}: give a function taking a vkcu.Progress")
        s.backend = _lib.BACKENDS[backend]
        s.device = whole("device", device)
        if ring_size is not None:
            s.ring_size = whole("ring_size", ring_size)
        if decode_threads is not None:
            s.decode_threads = whole("decode_threads", decode_threads)
        if isinstance(decode_parallel, str):
            if decode_parallel not in ("auto", "off"):
                raise UsageError(f"decode_parallel={decode_parallel!r}: give 'auto', 'off' or a number of decoders "
                                 f"in [1, {_lib.VKCU_DECODE_PARALLEL_MAX}]")
            s.decode_parallel = _lib.VKCU_DECODE_PARALLEL_AUTO if decode_parallel == "auto" else 0
        elif decode_parallel is not None:
            s.decode_parallel = whole("decode_parallel", decode_parallel)
        if stall_timeout is not None:
            s.stall_timeout_ms = int(round(number("stall_timeout", stall_timeout) * 1000))
        s.log_callback = _LOG_CB
        s.log_level = _LOG_LEVEL_NAMES[log_level]
        s.setting_name_callback = _NAME_CB
        # Set when Ctrl-C asked this context's job to stop (run_interruptible).
        self._stop_requested = threading.Event()
        self._progress_key = None
        if progress is not None:
            self._progress_key = id(self._stop_requested)  # an id that lives as long as this context
            _progress_of[self._progress_key] = progress
            s.progress_callback = ctypes.cast(_PROGRESS_CB, ctypes.c_void_p)
            s.progress_opaque = self._progress_key
        self.backend = backend
        self.device = s.device
        take_last_error()
        ret = _lib.lib.vkcu_open(ctypes.byref(self._ptr), ctypes.byref(s))
        if ret < 0:
            _progress_of.pop(self._progress_key, None)
            raise from_code(ret, take_last_error("cannot open a vkcu context"))
        register(self)

    @property
    def handle(self) -> ctypes.c_void_p:
        if not self._ptr:
            raise UsageError("the vkcu context is closed")
        return self._ptr

    def close(self, _close=_lib.lib.vkcu_close, _byref=ctypes.byref, _progress=_progress_of) -> None:
        if getattr(self, "_ptr", None):
            _close(_byref(self._ptr))
            _progress.pop(getattr(self, "_progress_key", None), None)

    def __enter__(self) -> "Context":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        self.close()


def run_interruptible(ctx: "Context", call: Callable[[], int]) -> int:
    """Runs ``call`` (one blocking library call of a job on ``ctx``) so that
    Ctrl-C ends it: the call runs on a thread of its own while this one
    waits where Python can take the signal; on KeyboardInterrupt the
    context's job is asked to stop (it removes its partial outputs), this
    waits for it to return, withdraws the request so that the context runs
    later jobs, and raises KeyboardInterrupt again. A call made on another
    thread than the main one (where no signal is delivered) runs as it is.
    Returns the call's return value; ``take_last_error`` then gives the line
    the library logged on the call's thread."""
    if threading.current_thread() is not threading.main_thread():
        return call()
    box = {}
    done = threading.Event()
    lock = threading.Lock()
    # "new" -> "running" (the worker took the call) or "abandoned" (Ctrl-C came
    # before it did: it must not start the job). Whoever is first decides,
    # under the lock, so the waiting below never waits for a call that will
    # not run, and never leaves while one runs on the caller's buffers.
    phase = ["new"]

    def work():
        with lock:
            if phase[0] == "abandoned":
                return
            phase[0] = "running"
        try:
            box["ret"] = call()
            box["line"] = take_last_error()
        except BaseException as e:  # noqa: BLE001 - handed to the waiting thread
            box["error"] = e
        finally:
            done.set()

    try:
        threading.Thread(target=work, name="vkcu-job", daemon=True).start()
        # A bounded wait, again and again: a SIGINT that the kernel handed to
        # one of the library's threads is still seen here within a moment.
        while not done.wait(0.25):
            pass
    except KeyboardInterrupt:
        with lock:
            running = phase[0] == "running"
            phase[0] = "abandoned" if not running else phase[0]
        if running:
            ctx._stop_requested.set()
            _lib.lib.vkcu_context_stop(ctx.handle, 1)
            while not done.is_set():
                try:
                    done.wait()
                except KeyboardInterrupt:
                    pass  # stopping already
            _lib.lib.vkcu_context_stop(ctx.handle, 0)
            ctx._stop_requested.clear()
        raise
    if "error" in box:
        raise box["error"]
    _last_error.line = box.get("line", "")
    return box["ret"]
