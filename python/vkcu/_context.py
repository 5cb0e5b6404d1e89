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
import re
import threading
import weakref
from typing import Optional, Tuple, Union

from . import _lib
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
    "ring_size": "ring_size", "decode_threads": "decode_threads", "strict": "strict",
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
    if setting == "start_frame" and re.fullmatch(r"-?\d+", value):
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
    for themselves unless given ``context=``."""

    def __init__(self, backend: str = "auto", device: int = 0, *, ring_size: Optional[int] = None,
                 decode_threads: Optional[int] = None, log_level: str = "warning",
                 stall_timeout: Optional[float] = None):
        s = _lib.Settings()
        _lib.lib.vkcu_default_settings(ctypes.byref(s))
        if backend not in _lib.BACKENDS:
            raise UsageError(f"backend={backend!r}: give 'auto', 'cpu' or 'gpu'")
        if log_level not in _LOG_LEVEL_NAMES:
            raise UsageError(f"log_level={log_level!r}: give one of {', '.join(_LOG_LEVEL_NAMES)}")
        s.backend = _lib.BACKENDS[backend]
        s.device = _int("device", device)
        if ring_size is not None:
            s.ring_size = _int("ring_size", ring_size)
        if decode_threads is not None:
            s.decode_threads = _int("decode_threads", decode_threads)
        if stall_timeout is not None:
            s.stall_timeout_ms = int(round(float(stall_timeout) * 1000))
        s.log_callback = _LOG_CB
        s.log_level = _LOG_LEVEL_NAMES[log_level]
        s.setting_name_callback = _NAME_CB
        self.backend = backend
        self.device = s.device
        self._ptr = ctypes.c_void_p()
        take_last_error()
        ret = _lib.lib.vkcu_open(ctypes.byref(self._ptr), ctypes.byref(s))
        if ret < 0:
            raise from_code(ret, take_last_error("cannot open a vkcu context"))
        register(self)

    @property
    def handle(self) -> ctypes.c_void_p:
        if not self._ptr:
            raise UsageError("the vkcu context is closed")
        return self._ptr

    def close(self, _close=_lib.lib.vkcu_close, _byref=ctypes.byref) -> None:
        if getattr(self, "_ptr", None):
            _close(_byref(self._ptr))

    def __enter__(self) -> "Context":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        self.close()


def _int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            import operator
            return operator.index(value)
        except TypeError:
            raise UsageError(f"{name}={value!r}: give a whole number") from None
    return value


_TIME = re.compile(r"(?:(\d+):)?(?:(\d+):)?(\d+(?:\.\d*)?|\.\d+)")


def parse_time(name: str, value: Union[None, int, float, str]) -> Tuple[float, int]:
    """``start``/``duration``: seconds (a number, ``"SS.s"``, ``"MM:SS"``,
    ``"HH:MM:SS"``) or a frame count ``"NNNf"``. Returns (seconds, frames),
    each -1 when not given."""
    if value is None:
        return -1.0, -1
    if isinstance(value, bool):
        raise UsageError(f"{name}={value!r}: give seconds or a frame number such as '300f'")
    if isinstance(value, (int, float)):
        if value != value:
            raise UsageError(f"{name}={value!r}: not a number; give seconds (12.5) or a frame number ('300f')")
        if not value >= 0:
            raise UsageError(f"{name}={value!r}: must not be negative")
        return float(value), -1
    if isinstance(value, str):
        v = value.strip()
        if v.endswith("f") and v[:-1].isdigit():
            return -1.0, int(v[:-1])
        m = _TIME.fullmatch(v)
        if m:
            parts = [p for p in m.groups() if p is not None]
            secs = 0.0
            for p in parts:
                secs = secs * 60 + float(p)
            return secs, -1
    raise UsageError(f"{name}={value!r}: give seconds (12.5, '1:02.5') or a frame number ('300f')")


def trim_args(start, duration, frames) -> Tuple[float, float, int, int]:
    """(start_time, duration, start_frame, frame_count) for the C structs."""
    st, sf = parse_time("start", start)
    dt, df = parse_time("duration", duration)
    if frames is not None:
        if df >= 0:
            raise UsageError("duration in frames and frames are both given; give one")
        if dt >= 0:
            raise UsageError("duration and frames are both given; give one")
        df = _int("frames", frames)
        if df < 0:
            raise UsageError(f"frames={frames}: must not be negative")
    return st, dt, sf, df
