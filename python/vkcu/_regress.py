# SPDX-License-Identifier: GPL-2.0-or-later
"""The regression toolkit (include/vkcu/regress.h) as Python objects: per-frame
hashes, frame-by-frame comparisons and manifest verdicts."""
from __future__ import annotations

import ctypes
import json
import math
import os
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Dict, Iterable, List, Optional, Sequence, Union

from . import _lib
from ._args import number, whole
from ._context import Context, run_interruptible, take_last_error, trim_args
from ._errors import UsageError, from_code

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class FrameHash:
    """One frame's line of ``vkcu hash``: pts and duration in the list's time
    base (1/frame rate, as ``ffmpeg -f framemd5``), the bytes hashed, the hash."""

    index: int
    pts: int
    duration: int
    size: int
    hash: str
    concealed: bool = False  # decoded from damaged data (docs/regression.md, damaged streams)


class HashList(list):
    """``vkcu hash`` as a list of FrameHash, with the header's facts."""

    def __init__(self, frames: Iterable[FrameHash], *, algo: str, time_base: Fraction, pix_fmt: str, width: int,
                 height: int, input: str):
        super().__init__(frames)
        self.algo = algo
        self.time_base = time_base
        self.pix_fmt = pix_fmt
        self.width = width
        self.height = height
        self.input = input
        # what became of the decoded frames: decoded, dropped, duplicated, rescaled, concealed, format_changes,
        # timing (the closing line of the JSON list)
        self.summary: dict = {}

    def framemd5(self) -> str:
        """The list as framemd5 frame lines (what ``vkcu hash`` prints after its header)."""
        return "".join(f"0, {h.pts:10d}, {h.pts:10d}, {h.duration:8d}, {h.size:8d}, {h.hash}\n" for h in self)


@dataclass(frozen=True)
class FramePair:
    """One paired frame of a comparison (a row of ``vkcu compare --json``)."""

    frame_a: int
    frame_b: int
    pts_a: float
    pts_b: float
    psnr: Dict[str, Optional[float]]   #: per component and "avg"; None: identical (infinite)
    ssim: Dict[str, Optional[float]]
    max_diff: int
    vmaf: Optional[float] = None

    @property
    def identical(self) -> bool:
        return self.max_diff == 0


@dataclass
class Comparison:
    """What ``vkcu compare`` found. ``bool(c)`` is the verdict."""

    passed: bool
    verdict: str
    frames_a: int
    frames_b: int
    paired: int
    differing: int
    over_limit: int
    only_a: int
    only_b: int
    ts_mismatch: int
    format_mismatch: int
    first_diff: Optional[int]
    first_diff_time: Optional[float]
    max_diff: int
    psnr: Dict[str, float]
    psnr_avg: float
    psnr_min: float
    ssim: Dict[str, float]
    ssim_all: float
    worst_index: Optional[int]
    vmaf_mean: Optional[float]
    frames: List[FramePair] = field(default_factory=list)  #: every paired frame (media inputs on both sides)
    report: str = ""                                         #: the per-frame lines and summary vkcu prints
    diff_image: Optional[str] = None
    gpu_pairs: int = 0           #: pairs measured on the GPU (both frames stayed in device memory)
    frames_dtoh_bytes: int = 0   #: picture bytes that came from the GPU to the host

    def __bool__(self) -> bool:
        return self.passed

    @property
    def differing_frames(self) -> List[FramePair]:
        return [f for f in self.frames if not f.identical]


@dataclass(frozen=True)
class CaseResult:
    """One case of a verify run: status "pass", "fail" or "skip", and why."""

    manifest: str
    name: str
    status: str
    message: str
    seconds: float

    @property
    def passed(self) -> bool:
        return self.status == "pass"


@dataclass
class Verification:
    """What ``vkcu verify`` found. ``bool(v)`` is True when every case passed."""

    passed: bool
    cases: List[CaseResult]
    lines: str

    def __bool__(self) -> bool:
        return self.passed

    @property
    def failures(self) -> List[CaseResult]:
        return [c for c in self.cases if c.status == "fail"]


def _context(context, backend, device) -> Context:
    return context or Context(backend, device)


def _finite(x: float) -> Optional[float]:
    return None if x is None or math.isinf(x) or math.isnan(x) else float(x)


def hash(path: PathLike, *, chain: Optional[str] = None, algo: str = "md5", start=None, duration=None,
         frames: Optional[int] = None, strict: bool = False, backend: str = "auto", device: int = 0,
         context: Optional[Context] = None) -> HashList:
    """Per-frame hashes of a clip through a chain, as ``vkcu hash`` writes them
    (docs/hash.md): the same frames, timestamps and hashes on either backend.
    ``algo``: md5, sha256, crc32, xxh64 or blake3."""
    return _hash(path, chain=chain, algo=algo, start=start, duration=duration, frames=frames, strict=strict,
                 backend=backend, device=device, context=context)


def _hash(path: PathLike, *, chain=None, algo="md5", start=None, duration=None, frames=None, max_frames=None,
          strict=False, backend="auto", device=0, context=None) -> HashList:
    """hash(), and the first ``max_frames`` output frames (a manifest's
    ``frames`` key: the golden checks)."""
    keep = [_lib.path_arg("path", path), _lib.text_arg("chain", chain, "the operators") or None]
    raw_algo = _lib.text_arg("algo", algo, "the algorithm's name")
    trim = trim_args(start, duration, frames)
    code = ctypes.c_int()
    if _lib.lib.vkcu_hash_algo_parse(raw_algo, ctypes.byref(code)) < 0:
        raise UsageError(f"algo={algo!r}: give md5, sha256, crc32, xxh64 or blake3")
    ctx = _context(context, backend, device)
    job = _lib.Job()
    _lib.lib.vkcu_default_job(ctypes.byref(job))
    job.input, job.chain = keep
    job.sink = _lib.SINK_HASH
    job.hash_algo = code.value
    job.hash_format = _lib.HASH_FORMAT_JSON
    job.strict = int(bool(strict))
    job.start_time, job.duration, job.start_frame, job.frame_count = trim
    if max_frames is not None:
        job.max_frames = whole("frames", max_frames)
    out = _lib.MemStream()
    job.hash_out = out.file
    res = _lib.JobResult()
    try:
        ret = run_interruptible(ctx, lambda: _lib.lib.vkcu_run(ctx.handle, ctypes.byref(job), ctypes.byref(res)))
    finally:
        data = out.close()
    if ret < 0:
        raise from_code(ret, _lib.text(res.error), filename=str(path))
    header, summary, rows = {}, {}, []
    for line in data.splitlines():
        if not line.strip():
            continue
        obj = json.loads(line)
        if obj.get("type") == "header":
            header = obj
        elif obj.get("type") == "summary":
            summary = obj
        else:
            rows.append(FrameHash(obj["frame"], obj["pts"], obj["duration"], obj["size"], obj["hash"],
                                  bool(obj.get("concealed", False))))
    tb = Fraction(header.get("tb", "0/1")) if header else Fraction(0)
    hl = HashList(rows, algo=header.get("hash", algo.upper()), time_base=tb, pix_fmt=header.get("pix_fmt", ""),
                  width=header.get("width", 0), height=header.get("height", 0), input=str(path))
    hl.summary = {k: v for k, v in summary.items() if k != "type"}
    return hl


def _is_hash_list(path: PathLike) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(64).lstrip()
    except OSError:
        return False
    return head.startswith(b"#") or head.startswith(b"{")


def compare(a: PathLike, b: PathLike, *, chain: Optional[str] = None, chain_a: Optional[str] = None,
            chain_b: Optional[str] = None, start=None, duration=None, frames: Optional[int] = None,
            max_diff: Optional[int] = None, min_psnr: Optional[float] = None, min_vmaf: Optional[float] = None,
            vmaf: bool = False, align: str = "start", scale: bool = False, diff_image: Optional[PathLike] = None,
            report_html: Optional[PathLike] = None, overwrite: bool = False, strict: bool = False,
            backend: str = "auto", device: int = 0, context: Optional[Context] = None) -> Comparison:
    """Compares two media files or hash lists frame by frame (``vkcu compare``):
    PSNR and SSIM with FFmpeg's definitions, the largest sample difference,
    and a verdict against the limits (neither limit: identical frames
    required). A mismatch is a verdict (``passed`` False), not an exception;
    a missing input, a bad option or an unwritable file raise."""
    if not isinstance(align, str) or align not in _lib.ALIGNS:
        raise UsageError(f"align={align!r}: give 'start', 'pts' or 'index'")
    # Everything checked before anything is opened.
    keep = {"a": _lib.path_arg("a", a), "b": _lib.path_arg("b", b),
            "diff_image": _lib.path_arg("diff_image", diff_image),
            "report_html": _lib.path_arg("report_html", report_html)}
    for k, v in (("chain", chain), ("chain_a", chain_a), ("chain_b", chain_b)):
        keep[k] = _lib.text_arg(k, v, "the operators") or None
    trim = trim_args(start, duration, frames)
    limits = (whole("max_diff", max_diff) if max_diff is not None else None,
              number("min_psnr", min_psnr) if min_psnr is not None else None,
              number("min_vmaf", min_vmaf) if min_vmaf is not None else None)
    ctx = _context(context, backend, device)
    job = _lib.CompareJob()
    _lib.lib.vkcu_default_compare_job(ctypes.byref(job))
    tmp = tempfile.TemporaryDirectory(prefix="vkcu-compare-")
    rows_path = None
    if not _is_hash_list(a) and not _is_hash_list(b):
        rows_path = os.path.join(tmp.name, "rows.json")
    keep["json"] = _lib.path_arg("json", rows_path)
    for k, v in keep.items():
        setattr(job, k, v)
    job.start_time, job.duration, job.start_frame, job.frame_count = trim
    if limits[0] is not None:
        job.max_diff = limits[0]
    if limits[1] is not None:
        job.min_psnr = limits[1]
    if limits[2] is not None:
        job.min_vmaf = limits[2]
    job.vmaf = int(bool(vmaf))
    job.align = _lib.ALIGNS[align]
    job.scale = int(bool(scale))
    job.overwrite = int(bool(overwrite))
    job.strict = int(bool(strict))
    report = _lib.MemStream()
    job.report = report.file
    job.per_frame = 0
    res = _lib.CompareResult()
    try:
        try:
            ret = run_interruptible(ctx, lambda: _lib.lib.vkcu_compare(ctx.handle, ctypes.byref(job),
                                                                       ctypes.byref(res)))
        finally:
            text = _lib.text(report.close())
        if ret < 0 and ret != _lib.VKCU_ERR_MISMATCH:
            raise from_code(ret, _lib.text(res.error) or _lib.text(res.verdict), filename=str(a))
        pairs: List[FramePair] = []
        if rows_path and os.path.exists(rows_path):
            with open(rows_path, encoding="utf-8", errors="surrogateescape") as f:
                doc = json.load(f)
            for r in doc.get("frames", []):
                pairs.append(FramePair(r["frame_a"], r["frame_b"], r["pts_a"], r["pts_b"],
                                       {k: (None if v is None else float(v)) for k, v in r.get("psnr", {}).items()},
                                       {k: (None if v is None else float(v)) for k, v in r.get("ssim", {}).items()},
                                       int(r.get("max_diff", 0)), r.get("vmaf")))
    finally:
        tmp.cleanup()
    names = _lib.text(res.comp_names) if res.nb_comps else ""
    comp = lambda arr: {names[i]: float(arr[i]) for i in range(min(res.nb_comps, len(names)))}  # noqa: E731
    return Comparison(
        passed=ret == 0, verdict=_lib.text(res.verdict), frames_a=res.frames_a, frames_b=res.frames_b,
        paired=res.paired, differing=res.differing, over_limit=res.over_limit, only_a=res.only_a,
        only_b=res.only_b, ts_mismatch=res.ts_mismatch, format_mismatch=res.format_mismatch,
        first_diff=res.first_diff if res.first_diff >= 0 else None,
        first_diff_time=res.first_diff_time if res.first_diff >= 0 else None, max_diff=res.max_diff,
        psnr=comp(res.psnr), psnr_avg=float(res.psnr_avg), psnr_min=float(res.psnr_min), ssim=comp(res.ssim),
        ssim_all=float(res.ssim_all), worst_index=res.worst_index if res.worst_index >= 0 else None,
        vmaf_mean=_finite(res.vmaf_mean) if res.vmaf else None, frames=pairs, report=text,
        diff_image=str(diff_image) if diff_image is not None and os.path.exists(diff_image) else None,
        gpu_pairs=res.gpu_pairs, frames_dtoh_bytes=res.frames_dtoh_bytes)


def _strings(name: str, items: Sequence[PathLike], arg=_lib.path_arg):
    raw = [arg(name, x) for x in items]
    arr = (ctypes.c_char_p * len(raw))(*raw)
    return arr, raw


def verify(manifests: Union[PathLike, Sequence[PathLike]], *, backend: Optional[str] = None,
           cases: Optional[Sequence[str]] = None, jobs: int = 1, timeout: float = 0, fail_fast: bool = False,
           update: bool = False, allow_outside: bool = False, junit: Optional[PathLike] = None,
           summary: Optional[PathLike] = None, html: Optional[PathLike] = None, overwrite: bool = False,
           device: int = 0, context: Optional[Context] = None) -> Verification:
    """Runs every case of the manifests (``vkcu verify``, docs/regression.md):
    one CaseResult per case in manifest order, with the line vkcu prints for
    it. ``backend`` runs every case there (default: each case's own). A
    failing case is a verdict; a manifest that cannot be read, a bad option
    or an unwritable report raise."""
    if isinstance(manifests, (str, bytes, os.PathLike)):
        manifests = [manifests]
    # Everything checked before anything is opened.
    m_arr, m_keep = _strings("manifests", list(manifests))
    c_arr = None
    if cases:
        if isinstance(cases, (str, bytes)):
            cases = [cases]
        c_arr, c_keep = _strings("cases", list(cases), lambda n, v: _lib.text_arg(n, v, "case names"))
    n_jobs = whole("jobs", jobs)
    # 0: no limit (the default); else the command line's range
    seconds = 0.0 if not isinstance(timeout, bool) and timeout == 0 else number("timeout", timeout)
    keep = [_lib.path_arg("junit", junit), _lib.path_arg("summary", summary), _lib.path_arg("html", html)]
    ctx = context or Context(backend or "auto", device)
    job = _lib.VerifyJob()
    _lib.lib.vkcu_default_verify_job(ctypes.byref(job))
    job.manifests = ctypes.cast(m_arr, ctypes.POINTER(ctypes.c_char_p))
    job.nb_manifests = len(m_keep)
    if c_arr is not None:
        job.cases = ctypes.cast(c_arr, ctypes.POINTER(ctypes.c_char_p))
        job.nb_cases = len(c_keep)
    job.override_backend = int(backend is not None)
    job.jobs = n_jobs
    job.timeout = seconds
    job.fail_fast = int(bool(fail_fast))
    job.update = int(bool(update))
    job.allow_outside = int(bool(allow_outside))
    job.overwrite = int(bool(overwrite))
    tmp = tempfile.TemporaryDirectory(prefix="vkcu-verify-")
    junit_path = os.fsdecode(junit) if junit is not None else os.path.join(tmp.name, "junit.xml")
    if junit is None:
        keep[0] = _lib.path_arg("junit", junit_path)
    job.junit, job.summary, job.html = keep
    out = _lib.MemStream()
    job.out = out.file
    try:
        try:
            ret = run_interruptible(ctx, lambda: _lib.lib.vkcu_verify(ctx.handle, ctypes.byref(job)))
        finally:
            lines = _lib.text(out.close())
        if ret < 0 and ret != _lib.VKCU_ERR_MISMATCH:
            raise from_code(ret, take_last_error(lines.strip().splitlines()[-1] if lines.strip() else ""))
        results: List[CaseResult] = []
        if os.path.exists(junit_path):
            root = ET.parse(junit_path).getroot()
            for suite in root.iter("testsuite"):
                for tc in suite.iter("testcase"):
                    fail, skip, out_el = tc.find("failure"), tc.find("skipped"), tc.find("system-out")
                    if fail is not None:
                        status, msg = "fail", fail.get("message", "")
                    elif skip is not None:
                        status, msg = "skip", skip.get("message", "")
                    else:
                        status, msg = "pass", (out_el.text or "") if out_el is not None else ""
                    results.append(CaseResult(suite.get("name", ""), tc.get("name", ""), status, msg,
                                              float(tc.get("time", "0"))))
    finally:
        tmp.cleanup()
    del c_arr
    return Verification(passed=ret == 0, cases=results, lines=lines)
