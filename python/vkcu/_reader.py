# SPDX-License-Identifier: GPL-2.0-or-later
"""Readers, frames and planes (include/vkcu/reader.h): iteration, random
access and DLPack export."""
from __future__ import annotations

import ctypes
import logging
import operator
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from . import _lib
from ._args import whole
from ._context import Context, register, trim_args
from ._errors import FrameIndexError, NotSeekableError, UsageError, _NoLength, from_code

log = logging.getLogger("vkcu")

_ERRLEN = 640
_DL_CPU, _DL_CUDA = 1, 2
_FLAG_IS_COPIED = 1 << 1


def _err() -> ctypes.Array:
    return ctypes.create_string_buffer(_ERRLEN)


@dataclass(frozen=True)
class FrameFlags:
    """What the decoder said of a frame."""

    key: bool              #: coded as a key frame
    interlaced: bool       #: two fields (no deinterlacer in the chain)
    top_field_first: bool  #: with interlaced
    concealed: bool        #: the decoder concealed errors in it (such frames are skipped unless kept)


@dataclass(frozen=True)
class StreamInfo:
    """The input as opened, before the chain (vkcu_reader_info)."""

    width: int
    height: int
    codec: str
    fps: Optional[Fraction]
    time_base: Fraction
    duration: float          #: seconds; 0.0 unknown
    frames: Optional[int]    #: as the container says (None unknown); ``len(reader)`` counts them
    seekable: bool           #: random access works


@dataclass(frozen=True)
class ReaderStats:
    """What a reader did (vkcu_reader_stats). On the GPU backend with CUDA
    frames, ``dtoh_bytes`` stays 0 (no frame crossed to the host) and
    ``cuda_frames == frames``."""

    frames: int
    cuda_frames: int
    host_copies: int
    detached: int
    held: int
    max_held_seen: int
    random_decoded: int
    random_seeks: int
    random_setups: int
    path: str
    imports: int
    dtod_copies: int
    htod_bytes: int
    dtoh_bytes: int
    fps_steady: float


class Plane:
    """One plane of a frame: rows of samples, ``linesize`` bytes apart.

    Implements ``__dlpack__``/``__dlpack_device__``: ``torch.from_dlpack``,
    ``cupy.from_dlpack`` and ``numpy.from_dlpack`` take it without a copy, as
    a (rows, samples) array (uint8, uint16, or float16 for rgbaf16le), or
    (rows, width, components) for packed RGB; the first stride is the pitch.
    The tensor keeps the frame's buffer out of the pool until it is freed."""

    __slots__ = ("_frame", "index")

    def __init__(self, frame: "Frame", index: int):
        self._frame = frame
        self.index = index

    @property
    def rows(self) -> int:
        return self._frame._s.rows[self.index]

    @property
    def row_bytes(self) -> int:
        """Bytes of one row's samples, padding excluded."""
        return self._frame._s.row_bytes[self.index]

    @property
    def linesize(self) -> int:
        """Bytes from one row to the next."""
        return self._frame._s.linesize[self.index]

    @property
    def data_ptr(self) -> int:
        """Address of the first row (host or CUDA memory: see ``frame.device``)."""
        return self._frame._s.data[self.index] or 0

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return self._frame._dlpack(self.index, stream, max_version, dl_device, copy)

    def __dlpack_device__(self) -> Tuple[int, int]:
        return self._frame.__dlpack_device__()

    def tobytes(self) -> bytes:
        """The visible rows, packed one after the other: the bytes ``vkcu hash``
        hashes for this plane (host frames)."""
        self._frame._need_host("tobytes")
        base, ls, rb = self.data_ptr, self.linesize, self.row_bytes
        return b"".join(ctypes.string_at(base + y * ls, rb) for y in range(self.rows))

    def numpy(self):
        """This plane as a numpy array sharing the frame's memory (host frames)."""
        self._frame._need_host("numpy")
        import numpy
        return numpy.from_dlpack(self)

    def __repr__(self) -> str:
        if not getattr(self._frame, "_ptr", None):
            return f"<vkcu.Plane {self.index} of a released frame>"
        return f"<vkcu.Plane {self.index} of {self._frame!r}: {self.rows} rows of {self.row_bytes} bytes>"


class Frame:
    """A frame handed out by a reader. Its memory belongs to vkcu: the buffer
    returns to the reader's pool when this object and every tensor made from
    it are gone (or at ``release()``). Use ``copy()`` for a frame of its own.

    Frames come in the planar layout ``vkcu hash`` hashes: a plane's visible
    rows, packed, are the bytes hashed for that plane (NV12 and P010 come as
    yuv420p and yuv420p10le). On the GPU backend the planes are CUDA memory
    (``device == "cuda:N"``), with no host copy; else host memory.
    ``__dlpack__`` works on the frame itself for one-plane layouts (gray,
    packed RGB) and for planar layouts whose planes share a size (4:4:4,
    gbrp), the latter as (planes, rows, samples)."""

    __slots__ = ("_ptr", "_contents", "__weakref__")

    def __init__(self, ptr):
        self._ptr = ptr
        self._contents = ptr.contents

    @property
    def _s(self) -> _lib.FrameStruct:
        """The library's struct: every attribute reads it, and after
        ``release()`` it may be freed memory, so nothing reads it then."""
        if not self._ptr:
            raise UsageError("the frame was released")
        return self._contents

    # ---- what the frame is ----
    @property
    def width(self) -> int:
        return self._s.width

    @property
    def height(self) -> int:
        return self._s.height

    @property
    def format(self) -> str:
        """FFmpeg's name of the layout: yuv420p, yuv420p10le, rgb24, gbrp ..."""
        return self._s.format.decode()

    @property
    def pts(self) -> int:
        """Presentation time in ``time_base`` units, from the input's start (or
        from the cut when the reader has a start)."""
        return self._s.pts

    @property
    def duration(self) -> int:
        return self._s.duration

    @property
    def time_base(self) -> Fraction:
        return Fraction(self._s.tb_num, self._s.tb_den) if self._s.tb_den else Fraction(0)

    @property
    def time(self) -> float:
        """pts in seconds."""
        return float(self._s.pts * self.time_base)

    @property
    def index(self) -> Optional[int]:
        """The frame's number in presentation order from the stream's start (as
        ``get_frames_at`` numbers frames); None when unknown."""
        return self._s.index if self._s.index >= 0 else None

    @property
    def flags(self) -> FrameFlags:
        s = self._s
        return FrameFlags(bool(s.key_frame), bool(s.interlaced), bool(s.top_field_first), bool(s.corrupt))

    @property
    def key_frame(self) -> bool:
        return bool(self._s.key_frame)

    @property
    def bytes_per_sample(self) -> int:
        return self._s.bytes_per_sample

    @property
    def device(self) -> str:
        """"cpu", or "cuda:N" when the planes are CUDA device memory."""
        return f"cuda:{self._s.device}" if self._s.memory == _lib.MEMORY_CUDA else "cpu"

    @property
    def is_cuda(self) -> bool:
        return self._s.memory == _lib.MEMORY_CUDA

    @property
    def planes(self) -> List[Plane]:
        return [Plane(self, p) for p in range(self._s.nb_planes)]

    # ---- memory ----
    def copy(self) -> "Frame":
        """A copy in memory of its own on the same device (host or the same GPU),
        outside the pool: it counts against no limit."""
        self._alive()
        out = ctypes.POINTER(_lib.FrameStruct)()
        err = _err()
        ret = _lib.lib.vkcu_frame_detach(self._ptr, ctypes.byref(out), err, len(err))
        if ret < 0:
            raise from_code(ret, _lib.text(err.value))
        return Frame(out)

    def release(self, _unref=_lib.lib.vkcu_frame_unref, _byref=ctypes.byref) -> None:
        """Drops this object's reference now (tensors made from it keep theirs);
        every attribute then raises ``UsageError("the frame was released")``.
        (The defaults keep what it needs for frames freed at shutdown.)"""
        if getattr(self, "_ptr", None):
            _unref(_byref(self._ptr))
            self._ptr = None
            self._contents = None

    def __del__(self):
        self.release()

    def _alive(self) -> None:
        self._s  # noqa: B018 - raises when released

    def _need_host(self, what: str) -> None:
        self._alive()
        if self.is_cuda:
            raise UsageError(f"{what}: the frame is in CUDA memory ({self.device}); take it with torch.from_dlpack "
                             "or cupy.from_dlpack, or read it with cuda=False")

    # ---- DLPack ----
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return self._dlpack(-1, stream, max_version, dl_device, copy)

    def __dlpack_device__(self) -> Tuple[int, int]:
        return (_DL_CUDA, self._s.device) if self.is_cuda else (_DL_CPU, 0)

    def _dlpack(self, plane, stream, max_version, dl_device, copy):
        self._alive()
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"the frame is on {self.device}; it cannot be exported to DLPack device {dl_device}")
        if self.is_cuda:
            s = 0 if stream is None else int(stream)
        else:
            if stream not in (None, -1):
                raise BufferError("a host frame takes no stream")
            s = 0
        versioned = max_version is not None and tuple(max_version)[0] >= 1
        src = self.copy() if copy else self
        out = ctypes.c_void_p()
        err = _err()
        ret = _lib.lib.vkcu_frame_dlpack(src._ptr, plane, int(versioned), s, ctypes.byref(out), err, len(err))
        if ret < 0:
            raise BufferError(_lib.text(err.value)) if ret == -22 else from_code(ret, _lib.text(err.value))
        if copy and versioned:
            _lib._DLManagedTensorVersioned.from_address(out.value).flags |= _FLAG_IS_COPIED
        return _lib.capsule(out.value, versioned)

    # ---- host conveniences ----
    def numpy(self):
        """numpy arrays sharing the frame's memory (host frames): one array for
        a frame that has a frame tensor, else a tuple with one per plane."""
        self._need_host("numpy")
        import numpy
        try:
            return numpy.from_dlpack(self)
        except BufferError:
            return tuple(numpy.from_dlpack(p) for p in self.planes)

    def tobytes(self) -> bytes:
        """Every plane's packed rows, in order: what ``vkcu hash`` hashes."""
        return b"".join(p.tobytes() for p in self.planes)

    @property
    def duration_seconds(self) -> float:
        return float(self._s.duration * self.time_base)

    def __repr__(self) -> str:
        if not getattr(self, "_ptr", None):
            return "<vkcu.Frame (released)>"
        idx = f" #{self.index}" if self.index is not None else ""
        return f"<vkcu.Frame{idx} {self.width}x{self.height} {self.format} pts {self.pts} on {self.device}>"


def _frames_from(array, n: int) -> List[Frame]:
    # cast: a pointer object of its own (release() clears it, not the array)
    return [Frame(ctypes.cast(array[i], ctypes.POINTER(_lib.FrameStruct))) for i in range(n)]


class FrameBatch(list):
    """Frames asked for together, in the order asked (``get_frames_at``,
    ``get_frames_in_range``, ``get_frames_played_at``,
    ``get_frames_played_in_range``, ``reader[a:b:c]``): a list of Frame, with
    their numbers and times side by side as TorchCodec's FrameBatch has them.
    The frames keep their own memory (no stacked copy is made); stack planes
    yourself where you want one tensor, e.g.
    ``torch.stack([torch.from_dlpack(f.planes[0]) for f in batch])``."""

    @property
    def indices(self) -> List[Optional[int]]:
        """Each frame's number (presentation order from 0)."""
        return [f.index for f in self]

    @property
    def pts_seconds(self) -> List[float]:
        return [f.time for f in self]

    @property
    def duration_seconds(self) -> List[float]:
        return [f.duration_seconds for f in self]

    def __repr__(self) -> str:
        return f"<vkcu.FrameBatch of {len(self)} frames: {self.indices}>"


_MAX_HELD_LIMIT = 1024  # VKCU_READER_MAX_HELD_LIMIT (vkcu/reader.h)


def _seconds(name: str, value) -> float:
    if isinstance(value, bool):
        raise TypeError(f"{name}={value!r}: give seconds as a number")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name}={value!r}: give seconds as a number") from None


class Reader:
    """Frames of one video stream, decoded, through a chain, one at a time.

    ``vkcu.open(path, ...)`` makes one; use it as a context manager. Iterate
    it for the frames of its window (``start``/``duration``/``frames``), and
    index it for exact frames anywhere: ``reader[10]``, ``reader[-1]``,
    ``reader[10:20:2]``, ``len(reader)``, ``get_frames_at``,
    ``get_frames_in_range``, ``get_frames_played_at``,
    ``get_frames_played_in_range`` (TorchCodec's VideoDecoder names and
    rules).

    The library decodes a few frames ahead of the consumer and then waits (a
    reader never runs away). A frame is held until it and its tensors are
    gone. Frames come from the reader's pool while the caller holds fewer
    than ``max_held`` of them; past that, each further frame (iterated or
    asked for) is copied into memory of its own and its pool buffer given
    back at once, so ``list(reader)`` works on any clip, at the cost of one
    copy and one frame's memory for each frame past the limit. With
    ``copy=True`` every frame is a copy and none is held."""

    def __init__(self, path, *, chain: Optional[str] = None, backend: str = "auto", device: int = 0,
                 start: Union[None, float, str] = None, duration: Union[None, float, str] = None,
                 frames: Optional[int] = None, timing: str = "decoded", max_held: int = 32, copy: bool = False,
                 cuda: bool = True, strict: bool = False, video_stream: Optional[int] = None,
                 require_gpu_decode: bool = False, ring_size: Optional[int] = None,
                 decode_threads: Optional[int] = None, decode_parallel: Union[None, int, str] = None,
                 context: Optional[Context] = None, log_level: str = "warning"):
        self._ptr = ctypes.c_void_p()
        self._path = path
        # Everything checked before anything is opened.
        self._input = _lib.path_arg("path", path)
        self._chain = _lib.text_arg("chain", chain, "the operators") or None
        if not isinstance(timing, str) or timing not in _lib.TIMINGS:
            raise UsageError(f"timing={timing!r}: give 'decoded', 'vfr' or 'cfr'")
        p = _lib.ReaderParams()
        _lib.lib.vkcu_default_reader_params(ctypes.byref(p))
        p.start_time, p.duration, p.start_frame, p.frame_count = trim_args(start, duration, frames)
        # One slot more than the caller's: the frame that comes as a copy
        # once the caller holds max_held is decoded into it, copied and given
        # back (at the library's largest, 1024, that slot is one of them).
        held_limit = whole("max_held", max_held)
        p.max_held = min(held_limit + 1, _MAX_HELD_LIMIT)
        if video_stream is not None:
            p.video_stream = whole("video_stream", video_stream)
        self._ctx = context or Context(backend, device, ring_size=ring_size, decode_threads=decode_threads,
                                       decode_parallel=decode_parallel, log_level=log_level)
        p.input = self._input
        p.chain = self._chain
        p.timing = _lib.TIMINGS[timing]
        p.cuda_frames = int(bool(cuda))
        p.detach = int(bool(copy))
        p.strict = int(bool(strict))
        p.require_gpu_decode = int(bool(require_gpu_decode))
        self._max_held = p.max_held - 1  # pool frames the caller may hold
        self._copy = bool(copy)
        err = _err()
        ret = _lib.lib.vkcu_reader_open(self._ctx.handle, ctypes.byref(p), ctypes.byref(self._ptr), err, len(err))
        if ret < 0:
            raise from_code(ret, _lib.text(err.value), filename=str(path))
        self._iterating = False
        self._copying_said = False
        register(self)

    # ---- the input ----
    @property
    def info(self) -> StreamInfo:
        i = _lib.ReaderInfo()
        _lib.lib.vkcu_reader_info_get(self._handle(), ctypes.byref(i))
        return StreamInfo(i.width, i.height, (i.codec or b"").decode(),
                          Fraction(i.fps_num, i.fps_den) if i.fps_num > 0 and i.fps_den > 0 else None,
                          Fraction(i.tb_num, i.tb_den) if i.tb_den else Fraction(0), i.duration,
                          i.frames if i.frames >= 0 else None, bool(i.seekable))

    def __len__(self) -> int:
        """The number of frames (counted once by reading the packets): the
        numbers random access takes are 0 .. len - 1. An input whose frames
        cannot be numbered (a raw stream) raises NotSeekableError, which is
        also a TypeError, as len() of an object without a length is."""
        n = ctypes.c_int64()
        err = _err()
        ret = _lib.lib.vkcu_reader_frame_count(self._handle(), ctypes.byref(n), err, len(err))
        if ret < 0:
            e = from_code(ret, _lib.text(err.value))
            if isinstance(e, NotSeekableError):
                raise _NoLength(e.message, e.code) from None
            raise e
        return n.value

    # ---- iteration ----
    def __iter__(self) -> Iterator[Frame]:
        if self._iterating:
            _lib.lib.vkcu_reader_rewind(self._handle())
        self._iterating = True
        return self

    def __next__(self) -> Frame:
        out = ctypes.POINTER(_lib.FrameStruct)()
        err = _err()
        ret = _lib.lib.vkcu_reader_next(self._handle(), ctypes.byref(out), err, len(err))
        if ret < 0:
            raise from_code(ret, _lib.text(err.value))
        if not out:
            raise StopIteration
        f = Frame(out)
        if not self._copy and self._held() > self._max_held:
            # The caller keeps its frames (list(reader), say) and holds
            # max_held: this one took the spare slot. A copy goes out instead
            # and the slot back, so that the next frame can be decoded.
            if not self._copying_said:
                log.info("%s: %d frames held (max_held): the frames after them are copies of their own",
                         self._path, self._max_held)
                self._copying_said = True
            c = f.copy()
            f.release()
            return c
        return f

    def rewind(self) -> None:
        """The next frame is the window's first again."""
        _lib.lib.vkcu_reader_rewind(self._handle())

    def _held(self) -> int:
        s = _lib.ReaderStats()
        _lib.lib.vkcu_reader_stats_get(self._handle(), ctypes.byref(s))
        return s.held

    # ---- random access ----
    def _numbers(self, indices: Iterable[int]) -> List[int]:
        """Frame numbers from 0, negative ones counted from the end, checked
        against the input's frames before they reach ctypes (which would keep
        the low 64 bits of a larger number)."""
        idx = []
        for i in indices:
            if isinstance(i, bool):
                raise TypeError(f"frame number {i!r}: give an integer")
            try:
                idx.append(operator.index(i))
            except TypeError:
                raise TypeError(f"frame number {i!r}: give an integer") from None
        if not idx:
            return idx
        n = len(self)
        out = []
        for i in idx:
            j = i + n if i < 0 else i
            if not 0 <= j < n:
                raise FrameIndexError(f"{self._path}: frame {i} does not exist: the input has {n} frames (0 to "
                                      f"{n - 1}, or -{n} to -1 from the end)", -22)
            out.append(j)
        return out

    def _fetch(self, targets: List[int]) -> List[Frame]:
        arr = (ctypes.c_int64 * len(targets))(*targets)
        out = (ctypes.POINTER(_lib.FrameStruct) * len(targets))()
        err = _err()
        ret = _lib.lib.vkcu_reader_frames_at(self._handle(), arr, len(targets), out, err, len(err))
        if ret < 0:
            raise from_code(ret, _lib.text(err.value))
        return _frames_from(out, len(targets))

    def _frames_at(self, idx: List[int]) -> FrameBatch:
        """The frames of these numbers, in this order. A request for more
        distinct frames than the pool has free slots is served in parts, each
        frame copied into memory of its own and its slot given back (as
        iteration does past the limit)."""
        if not idx:
            return FrameBatch()
        distinct = sorted(set(idx))
        if self._copy:
            step, copies = 1024, False  # the library's most at once; its frames are copies already
        else:
            free = self._max_held - self._held()
            # beyond the free slots: in parts of as many as the pool takes (the spare slot too), copied
            step, copies = (len(distinct), False) if len(distinct) <= free else (max(free + 1, 1), True)
            if copies and not self._copying_said:
                log.info("%s: %d frames asked for, %d slots of max_held free: they come as copies of their own",
                         self._path, len(distinct), free)
                self._copying_said = True
        got = {}
        for k in range(0, len(distinct), step):
            part = distinct[k:k + step]
            frames = self._fetch(part)
            if copies:
                kept = []
                for f in frames:
                    kept.append(f.copy())
                    f.release()
                frames = kept
            got.update(zip(part, frames))
        batch, handed = FrameBatch(), set()
        for i in idx:
            f = got[i]
            if i in handed:  # a repeat: the same frame, a reference of its own
                f = Frame(_lib.lib.vkcu_frame_ref(f._ptr))
            handed.add(i)
            batch.append(f)
        return batch

    def get_frames_at(self, indices: Iterable[int]) -> FrameBatch:
        """The frames with these numbers (presentation order from 0; -1 is the
        last), exact: each decoded from the keyframe before it, as
        ``start='Nf'`` does; the decoder (and the GPU) stay set up between
        calls. Any order, repeats allowed (the same frame again). The chain
        must look at one frame at a time (no denoise, deinterlace or fps)."""
        return self._frames_at(self._numbers(indices))

    def get_frame_at(self, index: int) -> Frame:
        return self.get_frames_at([index])[0]

    def get_frames_in_range(self, start: int, stop: int, step: int = 1) -> FrameBatch:
        """Frames start, start + step, ... before stop, as ``range`` counts
        and with a slice's rules: negative numbers count from the end, bounds
        past either end are cut to it (``get_frames_in_range(-10, 1000)``:
        the last ten frames); ``step`` must be positive (TorchCodec's rule)."""
        for name, v in (("start", start), ("stop", stop), ("step", step)):
            if isinstance(v, bool):
                raise TypeError(f"{name}={v!r}: give an integer")
            try:
                operator.index(v)
            except TypeError:
                raise TypeError(f"{name}={v!r}: give an integer") from None
        if operator.index(step) < 1:
            raise UsageError(f"step={step!r} is not a positive integer (frames are given in increasing order)", -22)
        return self._frames_at(list(range(*slice(start, stop, step).indices(len(self)))))

    def __getitem__(self, key: Union[int, slice]) -> Union[Frame, FrameBatch]:
        """``reader[i]``: frame i (negative: from the end; IndexError past
        either end); ``reader[a:b:c]``: a FrameBatch with a slice's rules (a
        negative step gives the frames in decreasing order)."""
        if isinstance(key, slice):
            return self._frames_at(list(range(*key.indices(len(self)))))
        if isinstance(key, bool) or not hasattr(key, "__index__"):
            raise TypeError(f"reader[{key!r}]: give a frame number or a slice")
        return self.get_frame_at(key)

    def _index_at(self, seconds) -> int:
        n = ctypes.c_int64()
        err = _err()
        ret = _lib.lib.vkcu_reader_frame_at_time(self._handle(), _seconds("seconds", seconds), ctypes.byref(n), err,
                                                 len(err))
        if ret < 0:
            raise from_code(ret, _lib.text(err.value))
        return n.value

    def index_at(self, seconds: Union[float, Sequence[float]]) -> Union[int, List[int]]:
        """The number of the frame shown at ``seconds`` (from the input's
        start), or a list of numbers for a list of times."""
        if isinstance(seconds, (int, float)) and not isinstance(seconds, bool):
            return self._index_at(seconds)
        if isinstance(seconds, (str, bytes)) or not hasattr(seconds, "__iter__"):
            return self._index_at(seconds)  # refused there, with the value named
        return [self._index_at(t) for t in seconds]

    def get_frames_played_at(self, seconds: Sequence[float]) -> FrameBatch:
        """The frames shown at these times (seconds from the input's start):
        for each, the last frame that starts at or before it."""
        return self._frames_at([self._index_at(t) for t in seconds])

    def get_frame_played_at(self, seconds: float) -> Frame:
        return self.get_frames_played_at([seconds])[0]

    def get_frames_played_in_range(self, start_seconds: float, stop_seconds: float) -> FrameBatch:
        """The frames that start in [start_seconds, stop_seconds), in order
        (TorchCodec's rule: each frame's time lies in the half-open range;
        ``start_seconds == stop_seconds`` gives none). ValueError when the
        range ends before it starts, starts outside the frames' times, or
        ends after the last frame's end."""
        first, count = ctypes.c_int64(), ctypes.c_int64()
        err = _err()
        ret = _lib.lib.vkcu_reader_frames_in_time(self._handle(), _seconds("start_seconds", start_seconds),
                                                  _seconds("stop_seconds", stop_seconds), ctypes.byref(first),
                                                  ctypes.byref(count), err, len(err))
        if ret < 0:
            raise from_code(ret, _lib.text(err.value))
        return self._frames_at(list(range(first.value, first.value + count.value)))

    # ---- the rest ----
    @property
    def stats(self) -> ReaderStats:
        s = _lib.ReaderStats()
        _lib.lib.vkcu_reader_stats_get(self._handle(), ctypes.byref(s))
        return ReaderStats(s.frames, s.cuda_frames, s.host_copies, s.detached, s.held, s.max_held_seen,
                           s.random_decoded, s.random_seeks, s.random_setups, _lib.PATHS.get(s.path, "none"),
                           s.imports, s.dtod_copies, s.htod_bytes, s.dtoh_bytes, s.fps_steady)

    def _handle(self) -> ctypes.c_void_p:
        if not self._ptr:
            raise UsageError("the reader is closed")
        return self._ptr

    def close(self, _close=_lib.lib.vkcu_reader_close, _byref=ctypes.byref) -> None:
        """Stops decoding; frames still held stay valid until released."""
        if getattr(self, "_ptr", None):
            _close(_byref(self._ptr))

    def __enter__(self) -> "Reader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        self.close()

    def __repr__(self) -> str:
        state = "closed" if not getattr(self, "_ptr", None) else "open"
        return f"<vkcu.Reader {self._path!r} ({state})>"


def open(path, **kwargs) -> Reader:  # noqa: A001 - the package's verb
    """Opens a reader (see ``Reader`` for the keyword arguments)::

        with vkcu.open("in.mp4", chain="scale=h=720") as r:
            for frame in r:
                t = torch.from_dlpack(frame.planes[0])
    """
    return Reader(path, **kwargs)
