# SPDX-License-Identifier: GPL-2.0-or-later
"""Golden-frame regression checks for test suites (the pytest plugin's
``vkcu_golden`` fixture uses this; any test runner may).

A golden folder holds, per case NAME:

- ``NAME.framemd5``: the expected frames' hashes, as ``vkcu hash`` writes
  them (the authority: a check passes when every frame's hash, timestamp and
  size is equal);
- ``NAME.mkv``: the expected frames themselves, FFV1 (lossless, several
  times smaller than raw frames), so that a failing check can say by how
  much each frame differs (PSNR, the largest sample difference) and draw the
  difference. Layouts FFV1 does not take (packed RGB) are kept as rawvideo in
  ``NAME.nut``, as every golden was before; such goldens are still read.
  With ``keep_frames=False`` only the hashes are kept (a check that asks for
  identity needs no more; a failure then names the frames without PSNR);
- ``golden.manifest``: every case as a vkcu manifest (docs/regression.md),
  so that ``vkcu verify golden/golden.manifest`` checks the same goldens
  without Python, in CI or by hand.

``Golden(dir, update=True)`` records (or re-records) a case; without update
a missing golden fails the check and says how to record it. ``start``,
``duration`` and ``frames`` golden a part of a clip: ``start`` and
``duration`` as ``vkcu.open`` takes them (seconds, or ``"NNNf"``), ``frames``
the first N frames of the chain's output (a manifest's ``frames`` key).
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import re
import struct
import zlib
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from . import _lib
from ._args import parse_time, trim_args, whole
from ._context import Context, run_interruptible
from ._errors import MismatchError, UsageError, from_code
from ._regress import _hash
from ._regress import compare as _compare

MANIFEST = "golden.manifest"
#: golden frames, in the order looked for: FFV1 (compact), then rawvideo NUT (other layouts, older goldens)
FRAME_FILES = (".mkv", ".nut")


class GoldenMismatch(MismatchError, AssertionError):
    """A clip's frames differ from its golden. ``frames`` lists each
    differing frame; the message names each one with its PSNR and the path of
    its difference image."""

    def __init__(self, message: str, frames: List["FrameDiff"]):
        MismatchError.__init__(self, message)
        self.frames = frames


@dataclass(frozen=True)
class FrameDiff:
    """One frame that is not as its golden: ``kind`` "changed", "missing" (in
    the golden, not produced) or "extra" (produced, not in the golden)."""

    index: int                    #: in the golden (changed, missing) or in the output (extra)
    pts: int                      #: in the hash list's time base
    kind: str
    expected: Optional[str] = None
    got: Optional[str] = None
    psnr: Optional[float] = None  #: dB over the planes; None: unknown (no golden frames) or not paired
    max_diff: Optional[int] = None
    image: Optional[str] = None   #: the difference image (PNG)

    def describe(self) -> str:
        if self.kind != "changed":
            return f"frame {self.index} (pts {self.pts}): {self.kind}"
        s = f"frame {self.index} (pts {self.pts}): hash {self.got}, golden {self.expected}"
        if self.psnr is not None:
            s += f"; PSNR {self.psnr:.2f} dB, max diff {self.max_diff}"
        elif self.max_diff is not None:
            s += f"; max diff {self.max_diff}"
        if self.image:
            s += f"; diff image {self.image}"
        return s


@dataclass
class GoldenResult:
    name: str
    frames: int
    recorded: bool = False
    diffs: List[FrameDiff] = field(default_factory=list)


def _read_framemd5(path: str) -> Tuple[str, List[Tuple[int, int, int, str]]]:
    """(algo, [(pts, duration, size, hash)]) of a framemd5 file."""
    algo, rows = "md5", []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("#hash:"):
                algo = line.split(":", 1)[1].strip().lower()
            elif line.strip() and not line.startswith("#"):
                c = [x.strip() for x in line.split(",")]
                if len(c) >= 6 and c[0] == "0":
                    rows.append((int(c[2]), int(c[3]), int(c[4]), c[5]))
    return algo, rows


def _safe_name(name: str) -> str:
    n = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.")
    return n or "case"


@dataclass(frozen=True)
class _Part:
    """Which frames of the clip a golden holds: the trim, and the first N
    output frames."""

    start: object = None
    duration: object = None
    frames: Optional[int] = None

    @classmethod
    def of(cls, start, duration, frames) -> "_Part":
        trim_args(start, duration, None)  # checked now, with the package's words
        return cls(start, duration, whole("frames", frames) if frames is not None else None)

    def manifest_lines(self) -> str:
        out = ""
        for key, value in (("start", self.start), ("duration", self.duration)):
            if value is None:
                continue
            seconds, frames = parse_time(key, value)
            out += f"{key} = {frames}f\n" if frames >= 0 else f"{key} = {seconds!r}\n"
        if self.frames is not None:
            out += f"frames = {self.frames}\n"
        return out

    def job(self, job) -> None:
        job.start_time, job.duration, job.start_frame, job.frame_count = trim_args(self.start, self.duration, None)
        if self.frames is not None:
            job.max_frames = self.frames


def _manifest_update(directory: str, name: str, input_path: str, chain: Optional[str], part: _Part) -> None:
    """Adds or replaces NAME's case in DIR/golden.manifest, keeping the others."""
    path = os.path.join(directory, MANIFEST)
    blocks: Dict[str, str] = {}
    order: List[str] = []
    if os.path.exists(path):
        cur = None
        for line in open(path, encoding="utf-8"):
            m = re.match(r"\[case (\S+)\]", line)
            if m:
                cur = m.group(1)
                order.append(cur)
                blocks[cur] = ""
            if cur:
                blocks[cur] += line
    rel = os.path.relpath(os.path.abspath(input_path), os.path.abspath(directory))
    block = f"[case {name}]\ninput = {rel}\n"
    if chain:
        block += f"chain = {chain}\n"
    block += part.manifest_lines()
    block += f"hashes = {name}.framemd5\n\n"
    if name not in blocks:
        order.append(name)
    blocks[name] = block
    text = ("# Golden frames recorded by vkcu's pytest plugin (pytest --vkcu-update);\n"
            "# `vkcu verify` runs the same checks.\nvkcu-manifest 1\n\n")
    text += "".join(blocks[n] if blocks[n].endswith("\n\n") else blocks[n] + "\n" for n in order)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _run(ctx: Context, job) -> None:
    res = _lib.JobResult()
    ret = run_interruptible(ctx, lambda: _lib.lib.vkcu_run(ctx.handle, ctypes.byref(job), ctypes.byref(res)))
    if ret < 0:
        raise from_code(ret, _lib.text(res.error))


def _frames_job(input_path: str, chain: Optional[str], out: str, part: _Part, encoder: bytes):
    job = _lib.Job()
    _lib.lib.vkcu_default_job(ctypes.byref(job))
    keep = [_lib.path_arg("input", input_path), _lib.text_arg("chain", chain, "the operators") or None,
            _lib.path_arg("output", out), encoder]
    job.input, job.chain, job.output, job.encoder = keep
    job.no_audio = 1
    job.overwrite = 1
    part.job(job)
    return job, keep


def _frame_md5s(path: str) -> List[str]:
    from ._reader import Reader
    with Reader(path, backend="cpu", copy=True) as r:
        return [hashlib.md5(f.tobytes()).hexdigest() for f in r]


def _record_frames(ctx: Context, input_path: str, chain: Optional[str], stem: str, part: _Part,
                   expect: Optional[List[str]] = None) -> str:
    """The chain's frames, losslessly, into STEM.mkv (FFV1), or STEM.nut
    (rawvideo) for the layouts FFV1 does not take, or where its frames would
    not hash as `expect` (md5s) says: the path written. The other file of
    the two is removed, so that no stale golden frames stay beside them."""
    mkv, nut = stem + ".mkv", stem + ".nut"
    written = None
    try:
        job, _keep = _frames_job(input_path, chain, mkv, part, b"ffv1")
        _run(ctx, job)
        if expect is None or _frame_md5s(mkv) == expect:
            written = mkv
    except UsageError:  # a layout the encoder refuses: rgb24, rgba ...
        pass
    if written is None:
        job, _keep = _frames_job(input_path, chain, nut, part, b"rawvideo")
        _run(ctx, job)
        written = nut
    for other in (mkv, nut):
        if other != written and os.path.exists(other):
            os.unlink(other)
    return written


def _record_hashes(ctx: Context, input_path: str, chain: Optional[str], out: str, algo: str, part: _Part) -> None:
    job = _lib.Job()
    _lib.lib.vkcu_default_job(ctypes.byref(job))
    code = ctypes.c_int()
    if _lib.lib.vkcu_hash_algo_parse(_lib.text_arg("algo", algo, "the algorithm's name"), ctypes.byref(code)) < 0:
        raise UsageError(f"algo={algo!r}: give md5, sha256, crc32, xxh64 or blake3")
    keep = [_lib.path_arg("input", input_path), _lib.text_arg("chain", chain, "the operators") or None,
            _lib.path_arg("output", out)]
    job.input, job.chain, job.hash_path = keep
    job.sink = _lib.SINK_HASH
    job.hash_algo = code.value
    job.overwrite = 1
    part.job(job)
    _run(ctx, job)


# ---- difference images ----

def _png(path: str, rgb) -> None:
    h, w = rgb.shape[:2]
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def _depth(fmt: str, dtype) -> int:
    m = re.search(r"p(\d+)", fmt) or re.search(r"(\d+)(?:le|be)$", fmt)
    if m and int(m.group(1)) in (9, 10, 12, 14, 16):
        return int(m.group(1))
    return 16 if dtype.itemsize == 2 else 8


def diff_image(path: str, expected, got) -> int:
    """Draws how frame `got` differs from `expected` (vkcu Frames in host
    memory, same layout): the expected picture's luma, dimmed, and every
    differing pixel on a heat scale (black, blue, red, yellow, white at the
    largest difference). Returns the largest difference."""
    import numpy as np
    pa, pb = [p.numpy() for p in expected.planes], [p.numpy() for p in got.planes]
    h, w = pa[0].shape[:2]
    diff = np.zeros((h, w), np.int64)
    for a, b in zip(pa, pb):
        d = np.abs(a.astype(np.int64) - b.astype(np.int64))
        if d.ndim == 3:
            d = d.max(axis=2)
        ry, rx = -(-h // d.shape[0]), -(-w // d.shape[1])
        d = np.repeat(np.repeat(d, ry, axis=0), rx, axis=1)[:h, :w]
        diff = np.maximum(diff, d)
    base = pa[0].astype(np.float64)
    if base.ndim == 3:
        base = base[..., :3].mean(axis=2)
    depth = _depth(expected.format, pa[0].dtype)
    back = (base * (255.0 / ((1 << depth) - 1)) * 0.35).astype(np.uint8)
    rgb = np.repeat(back[..., None], 3, axis=2)
    dmax = int(diff.max())
    if dmax:
        stops = np.array([[0, 0, 0], [0, 0, 255], [255, 0, 0], [255, 255, 0], [255, 255, 255]], np.float64)
        t = diff[diff > 0] / dmax * 4.0
        i = np.minimum(t.astype(np.int64), 3)
        f = (t - i)[:, None]
        rgb[diff > 0] = (stops[i] * (1 - f) + stops[i + 1] * f).astype(np.uint8)
    _png(path, rgb)
    return dmax


class Golden:
    """Checks clips' frames against the goldens of one folder (see the module
    docstring for what it holds)."""

    def __init__(self, directory: str, *, update: bool = False, backend: str = "auto", device: int = 0,
                 out_dir: Optional[str] = None, max_images: int = 8):
        self.directory = str(directory)
        self.update = update
        self.backend = backend
        self.device = device
        self.out_dir = str(out_dir) if out_dir else self.directory
        self.max_images = max_images
        self._ctx: Optional[Context] = None

    @property
    def context(self) -> Context:
        if self._ctx is None:
            self._ctx = Context(self.backend, self.device)
        return self._ctx

    def frames_file(self, name: str) -> Optional[str]:
        """The golden frames of NAME (FFV1 .mkv, or rawvideo .nut), None when
        there are none."""
        for ext in FRAME_FILES:
            path = os.path.join(self.directory, _safe_name(name) + ext)
            if os.path.exists(path):
                return path
        return None

    def record(self, input_path: str, *, name: str, chain: Optional[str] = None, algo: str = "md5", start=None,
               duration=None, frames: Optional[int] = None, keep_frames: bool = True) -> GoldenResult:
        name = _safe_name(name)
        part = _Part.of(start, duration, frames)
        os.makedirs(self.directory, exist_ok=True)
        hashes = os.path.join(self.directory, f"{name}.framemd5")
        _record_hashes(self.context, input_path, chain, hashes, algo, part)
        got_algo, rows = _read_framemd5(hashes)
        stem = os.path.join(self.directory, name)
        if keep_frames:
            # FFV1 is kept only where its frames are the hashed ones, bit for bit.
            _record_frames(self.context, input_path, chain, stem, part,
                           [r[3] for r in rows] if got_algo == "md5" else None)
        else:
            for ext in FRAME_FILES:
                if os.path.exists(stem + ext):
                    os.unlink(stem + ext)
        _manifest_update(self.directory, name, input_path, chain, part)
        return GoldenResult(name, len(rows), recorded=True)

    def check(self, input_path: str, *, name: str, chain: Optional[str] = None, min_psnr: Optional[float] = None,
              start=None, duration=None, frames: Optional[int] = None, keep_frames: bool = True) -> GoldenResult:
        """Passes (returns) when the clip's frames through the chain (those of
        ``start``/``duration``/``frames`` when given) equal the golden NAME;
        raises GoldenMismatch naming every differing frame with its PSNR and
        the path of its difference image. With ``min_psnr``, frames that
        differ but reach it pass; a failure then says the limit and the worst
        frame first. ``keep_frames=False`` records the hashes alone."""
        name = _safe_name(name)
        if min_psnr is not None:
            from ._args import number
            min_psnr = number("min_psnr", min_psnr)
        part = _Part.of(start, duration, frames)
        if self.update:
            return self.record(input_path, name=name, chain=chain, start=start, duration=duration, frames=frames,
                               keep_frames=keep_frames)
        hashes = os.path.join(self.directory, f"{name}.framemd5")
        if not os.path.exists(hashes):
            raise GoldenMismatch(f"no golden '{name}' in {self.directory}: record it with pytest --vkcu-update "
                                 f"(or Golden(..., update=True))", [])
        algo, want = _read_framemd5(hashes)
        got = _hash(input_path, chain=chain, algo=algo, start=part.start, duration=part.duration,
                    max_frames=part.frames, context=self.context)
        have = {h.pts: (i, h) for i, h in enumerate(got)}
        diffs: List[FrameDiff] = []
        seen = set()
        for i, (pts, dur, size, h) in enumerate(want):
            seen.add(pts)
            if pts not in have:
                diffs.append(FrameDiff(i, pts, "missing", expected=h))
            elif have[pts][1].hash != h or have[pts][1].size != size or have[pts][1].duration != dur:
                diffs.append(FrameDiff(i, pts, "changed", expected=h, got=have[pts][1].hash))
        for pts, (i, h) in have.items():
            if pts not in seen:
                diffs.append(FrameDiff(i, pts, "extra", got=h.hash))
        result = GoldenResult(name, len(got), diffs=diffs)
        if not diffs:
            return result
        gold_frames = self.frames_file(name)
        if gold_frames:
            diffs = self._measure(name, gold_frames, input_path, chain, part, diffs)
        result.diffs = diffs
        if min_psnr is not None and all(d.kind == "changed" and d.psnr is not None and d.psnr >= min_psnr
                                        for d in diffs):
            return result
        lines = [f"{input_path}{' | ' + chain if chain else ''}: {len(diffs)} of {len(want)} frames differ from "
                 f"the golden '{name}' ({hashes})"]
        if min_psnr is not None:
            lines.append("  " + _limit_line(min_psnr, diffs, gold_frames is not None))
        lines += ["  " + d.describe() for d in diffs]
        if not gold_frames:
            lines.append(f"  (no golden frames {name}.mkv beside the hashes: PSNR and images need them; "
                         "re-record with --vkcu-update)")
        lines.append(f"  if intended: pytest --vkcu-update (rewrites {self.directory}/{name}.*), "
                     "then review the diff")
        raise GoldenMismatch("\n".join(lines), diffs)

    __call__ = check

    def _measure(self, name: str, gold_frames: str, input_path: str, chain: Optional[str], part: "_Part",
                 diffs: List[FrameDiff]) -> List[FrameDiff]:
        """PSNR of each changed frame against the golden frames, and its image:
        the frames made now are recorded beside the images (as the golden's
        were, the same part of the clip), then the two files are compared
        frame by frame."""
        os.makedirs(self.out_dir, exist_ok=True)
        now = _record_frames(self.context, input_path, chain, os.path.join(self.out_dir, f"{name}-now"), part)
        try:
            return self._measure_against(name, gold_frames, now, diffs)
        finally:
            os.unlink(now)  # the images stay; the frames they were drawn from go

    def _measure_against(self, name: str, gold_frames: str, now: str, diffs: List[FrameDiff]) -> List[FrameDiff]:
        cmp = _compare(gold_frames, now, align="index", context=self.context)
        by_a = {p.frame_a: p for p in cmp.frames}
        out = []
        want_images = {}
        for d in diffs:
            p = by_a.get(d.index) if d.kind == "changed" else None
            if p is None:
                out.append(d)
                continue
            psnr = p.psnr.get("avg")
            nd = FrameDiff(d.index, d.pts, d.kind, d.expected, d.got, psnr, p.max_diff)
            if len(want_images) < self.max_images:
                want_images[p.frame_b] = (p.frame_a, len(out))
            out.append(nd)
        try:
            import numpy  # noqa: F401
        except ImportError:
            return out
        if want_images:
            self._draw(name, gold_frames, now, want_images, out)
        return out

    def _draw(self, name, gold_frames, now, want_images, out):
        from ._reader import Reader
        last = max(want_images)
        gold_idx = {a: b for b, (a, _) in want_images.items()}
        gold = {}
        with Reader(gold_frames, backend="cpu", copy=True) as g:
            for i, f in enumerate(g):
                if i in gold_idx:
                    gold[i] = f
                if i >= max(gold_idx):
                    break
        with Reader(now, backend="cpu", copy=True) as r:
            for j, f in enumerate(r):
                if j in want_images:
                    a, k = want_images[j]
                    if a in gold:
                        path = os.path.join(self.out_dir, f"{name}-frame{a}.png")
                        diff_image(path, gold[a], f)
                        d = out[k]
                        out[k] = FrameDiff(d.index, d.pts, d.kind, d.expected, d.got, d.psnr, d.max_diff, path)
                if j >= last:
                    break


def _limit_line(min_psnr: float, diffs: List[FrameDiff], measured: bool) -> str:
    """The limit and the frame furthest from it, said before the list."""
    below = [d for d in diffs if d.kind != "changed" or d.psnr is None or d.psnr < min_psnr]
    scored = [d for d in diffs if d.kind == "changed" and d.psnr is not None]
    text = f"min_psnr {min_psnr:g} dB: {len(below)} of the {len(diffs)} differing frames fail it"
    if scored:
        w = min(scored, key=lambda d: d.psnr)
        text += f"; the worst is frame {w.index} (pts {w.pts}) at {w.psnr:.2f} dB, max diff {w.max_diff}"
    elif not measured:
        text += " (no golden frames to measure PSNR against)"
    others = sum(1 for d in diffs if d.kind != "changed")
    if others:
        text += f"; {others} missing or extra"
    return text
