# SPDX-License-Identifier: GPL-2.0-or-later
"""Keyword arguments checked before they reach ctypes.

ctypes stores a Python integer into a C field by keeping its low bits:
``2**64 + 5`` becomes 5 and ``2**32 + 1`` becomes 1, with no error. So every
number is range-checked here, against the range the command line gives the
option of the same meaning (src/cli/table.c, `vkcu VERB --dump-options`) or,
for the settings it has no option for, the C API's (include/vkcu/*.h), and
refused in the command line's words: ``frames=0 is not an integer in [1,
2147483647]``. test_args.py holds this table against the command line's.
Times are read as the command line reads ``--start`` (src/cli/opts.c,
parse_time), with the library's own number parsers (vkcu/number.h).
"""
from __future__ import annotations

import ctypes
import math
import operator
from typing import Optional, Tuple, Union

from . import _lib
from ._errors import UsageError

INT64_MAX = 2**63 - 1
#: the longest time a start or duration may give (src/cli/opts.c; vkcu_check_trim's [0, 1e9] s)
TIME_MAX_SECONDS = 1e9

#: keyword argument: (smallest, largest), and the command-line option it shares them with (None: the C API's)
RANGES = {
    "device": (0, 63, "--device"),
    "ring_size": (3, 16, "--ring-size"),
    "decode_threads": (1, 256, "--decode-threads"),
    "decode_parallel": (1, 64, "--decode-parallel"),
    "stall_timeout": (0, 3600, "--stall-timeout"),
    "video_stream": (0, 1023, "--video-stream"),
    "frames": (1, 2147483647, "--frames"),
    "max_diff": (0, 65535, "--max-diff"),
    "min_psnr": (0, 1000, "--min-psnr"),
    "min_vmaf": (0, 100, "--min-vmaf"),
    "jobs": (1, 64, "verify --jobs"),
    "timeout": (0.001, 1e6, "verify --timeout"),
    "max_held": (1, 1024, None),  # vkcu_reader_params.max_held: 1..VKCU_READER_MAX_HELD_LIMIT
}


def _fail(name: str, value, what: str) -> UsageError:
    return UsageError(f"{name}={value!r} is not {what}", -22)


def whole(name: str, value, lo: Optional[int] = None, hi: Optional[int] = None) -> int:
    """An integer argument in [lo, hi] (RANGES[name] when not given)."""
    if lo is None:
        lo, hi, _ = RANGES[name]
    if isinstance(value, bool):
        raise _fail(name, value, f"an integer in [{lo}, {hi}]")
    try:
        v = operator.index(value)
    except TypeError:
        raise _fail(name, value, f"an integer in [{lo}, {hi}]") from None
    if not lo <= v <= hi:
        raise _fail(name, value, f"an integer in [{lo}, {hi}]")
    return v


def number(name: str, value, lo: Optional[float] = None, hi: Optional[float] = None) -> float:
    """A finite number argument in [lo, hi] (RANGES[name] when not given)."""
    if lo is None:
        lo, hi, _ = RANGES[name]
    what = f"a number in [{lo:.15g}, {hi:.15g}]"
    if isinstance(value, bool):
        raise _fail(name, value, what)
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        raise _fail(name, value, what) from None
    if not (math.isfinite(v) and lo <= v <= hi):
        raise _fail(name, value, what)
    return v


def _parse_int(text: str, lo: int, hi: int) -> Optional[int]:
    out = ctypes.c_int64()
    raw = text.encode("utf-8", "surrogateescape")
    if b"\0" in raw or _lib.lib.vkcu_parse_int(raw, lo, hi, ctypes.byref(out)) < 0:
        return None
    return out.value


def _parse_number(text: str, lo: float, hi: float) -> Optional[float]:
    out = ctypes.c_double()
    raw = text.encode("utf-8", "surrogateescape")
    if b"\0" in raw or _lib.lib.vkcu_parse_number(raw, lo, hi, ctypes.byref(out)) < 0:
        return None
    return out.value


def parse_time(name: str, value: Union[None, int, float, str]) -> Tuple[float, int]:
    """``start``/``duration``: seconds (a number, ``"SS.s"``, ``"MM:SS"``,
    ``"HH:MM:SS"``) or a frame number ``"NNNf"``, as ``--start`` takes them.
    Returns (seconds, frames), each -1 when not given."""
    time_words = (f"a time in [0, {TIME_MAX_SECONDS:.0f}] s (seconds, 'MM:SS' or 'HH:MM:SS', or 'NNNf' for "
                  "frames)")
    if value is None:
        return -1.0, -1
    if isinstance(value, bool):
        raise _fail(name, value, time_words)
    if isinstance(value, (int, float)):
        if value != value:  # NaN: no time at all, not a negative one
            raise UsageError(f"{name}={value!r}: not a number; give {time_words}", -22)
        # compared as given: an int too large for a float is out of range, not an OverflowError
        if not (0 <= value <= TIME_MAX_SECONDS):
            raise _fail(name, value, time_words)
        return float(value), -1
    if not isinstance(value, str):
        raise _fail(name, value, time_words)
    if len(value) > 1 and value.endswith("f"):
        f = _parse_int(value[:-1], 0, INT64_MAX)
        if f is None:
            raise _fail(name, value, f"a frame number in [0, {INT64_MAX}] (e.g. '250f')")
        return -1.0, f
    fields = value.split(":")
    if len(fields) <= 3:
        total = 0.0
        for k, part in enumerate(fields):
            x = _parse_number(part, 0, TIME_MAX_SECONDS)
            if x is None:
                break
            # "1:99" is a typo, not 159 s: only the first field may pass 59
            if k > 0 and x >= 60:
                raise UsageError(f"{name}={value!r} has {'seconds' if k == len(fields) - 1 else 'minutes'} above 59 "
                                 "(in 'HH:MM:SS' only the first field may be; or give the time in seconds)", -22)
            total = total * 60 + x
        else:
            if total <= TIME_MAX_SECONDS:
                return total, -1
    raise _fail(name, value, time_words)


def trim_args(start, duration, frames) -> Tuple[float, float, int, int]:
    """(start_time, duration, start_frame, frame_count) for the C structs."""
    st, sf = parse_time("start", start)
    dt, df = parse_time("duration", duration)
    if frames is not None:
        if df >= 0:
            raise UsageError("duration in frames and frames are both given; give one", -22)
        if dt >= 0:
            raise UsageError("duration and frames are both given; give one", -22)
        df = whole("frames", frames)
    return st, dt, sf, df
