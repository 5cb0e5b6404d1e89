#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Frames of video clips into tensors, side by side in one run
(tools/bench-python.sh runs it on the GPU machine):

  vkcu        vkcu's own steady decode + chain rate: a job with the null sink
              (nothing leaves the GPU), the reference of the first target;
  iterator    the package's iterator, every plane taken with torch.from_dlpack
              (CUDA tensors on the GPU backend; numpy.from_dlpack without torch);
  opencv      cv2.VideoCapture, each frame then .cuda() (host decode, upload);
  torchvision torchvision.io where this torchvision still decodes video;
  random10    get_frames_at of 10 random frames on a fresh reader (index,
              set-up and decode from the keyframes), then 10 more on the same
              reader (the decoder kept), against decoding the whole clip on a
              fresh reader.

Targets (issue 29): iterator >= 0.9 x vkcu's steady rate; random10 faster
than the whole clip. Prints one table and the ratios; --json writes them.
"""
import argparse
import ctypes
import json
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import vkcu  # noqa: E402
from vkcu import _lib  # noqa: E402

try:
    import torch
    HAVE_CUDA = torch.cuda.is_available()
except ImportError:
    torch = None
    HAVE_CUDA = False


def sync():
    if HAVE_CUDA:
        torch.cuda.synchronize()


def take(frame):
    """What a consumer does with a frame: its planes as tensors (no copy)."""
    if torch is not None and (frame.is_cuda or not HAVE_CUDA):
        return [torch.from_dlpack(p) for p in frame.planes]
    import numpy
    return [numpy.from_dlpack(p) for p in frame.planes]


def vkcu_null_rate(path, chain, ctx):
    """A job with the null sink: decode and chain only (vkcu_job_result.fps_steady)."""
    job = _lib.Job()
    _lib.lib.vkcu_default_job(ctypes.byref(job))
    keep = [_lib.path_arg("path", path), _lib.text_arg("chain", chain) if chain else None]
    job.input, job.chain = keep
    job.sink = _lib.SINK_NULL
    res = _lib.JobResult()
    ret = _lib.lib.vkcu_run(ctx.handle, ctypes.byref(job), ctypes.byref(res))
    if ret < 0:
        raise RuntimeError(_lib.text(res.error))
    return {"frames": res.frames_out, "fps_steady": res.fps_steady, "fps": res.fps,
            "path": _lib.PATHS.get(res.path, "?"), "setup_s": res.setup_seconds}


def iterate(path, chain, backend):
    t0 = time.perf_counter()
    n, t_first = 0, None
    with vkcu.open(path, backend=backend, chain=chain) as r:
        for f in r:
            planes = take(f)
            del planes, f
            n += 1
            if n == 1:
                sync()
                t_first = time.perf_counter()
        sync()
        t_end = time.perf_counter()
        s = r.stats
    steady = (n - 1) / (t_end - t_first) if n > 1 and t_end > t_first else 0.0
    return {"frames": n, "fps_steady": steady, "fps": n / (t_end - t0), "seconds": t_end - t0,
            "cuda_frames": s.cuda_frames, "dtoh_bytes": s.dtoh_bytes, "path": s.path}


def opencv(path):
    try:
        import cv2
    except ImportError:
        return {"error": "no cv2"}
    t0 = time.perf_counter()
    cap = cv2.VideoCapture(path)
    if not cap.isOpened():
        return {"error": "cv2.VideoCapture cannot open it"}
    n = 0
    while True:
        ok, img = cap.read()
        if not ok:
            break
        if HAVE_CUDA:
            t = torch.from_numpy(img).cuda()
            del t
        n += 1
    sync()
    cap.release()
    dt = time.perf_counter() - t0
    return {"frames": n, "fps": n / dt if dt > 0 else 0.0, "seconds": dt,
            "threads": cv2.getNumThreads(), "upload": "cuda" if HAVE_CUDA else "none"}


def torchvision_io(path):
    try:
        import torchvision
        import torchvision.io as tio
    except ImportError:
        return {"error": "no torchvision"}
    ver = torchvision.__version__
    t0 = time.perf_counter()
    n = 0
    try:
        if hasattr(tio, "VideoReader"):
            for fr in tio.VideoReader(path, "video"):
                t = fr["data"].cuda() if HAVE_CUDA else fr["data"]
                del t
                n += 1
        elif hasattr(tio, "read_video"):
            v, _, _ = tio.read_video(path, pts_unit="sec", output_format="TCHW")
            n = v.shape[0]
            if HAVE_CUDA:
                v = v.cuda()
        else:
            return {"error": f"torchvision {ver} has no video decoding (moved to TorchCodec)"}
    except Exception as e:  # noqa: BLE001 - report whatever this torchvision says
        return {"error": f"torchvision {ver}: {type(e).__name__}: {str(e)[:120]}"}
    sync()
    dt = time.perf_counter() - t0
    if not n:
        return {"error": f"torchvision {ver} decoded no frames"}
    return {"frames": n, "fps": n / dt, "seconds": dt, "version": ver}


def random10(path, backend, seed=29):
    rng = random.Random(seed)
    t0 = time.perf_counter()
    with vkcu.open(path, backend=backend, max_held=16) as r:
        n = len(r)
        picks = rng.sample(range(n), 10)
        frames = r.get_frames_at(picks)
        planes = [take(f) for f in frames]
        sync()
        t1 = time.perf_counter()
        first = r.stats
        del frames, planes
        again = rng.sample(range(n), 10)
        t2 = time.perf_counter()
        frames = r.get_frames_at(again)
        planes = [take(f) for f in frames]
        sync()
        t3 = time.perf_counter()
        del frames, planes
        s = r.stats
    return {"frames": n, "first_s": t1 - t0, "again_s": t3 - t2, "picks": sorted(picks),
            "decoded": first.random_decoded, "seeks": first.random_seeks, "setups": s.random_setups,
            "decoded_again": s.random_decoded - first.random_decoded}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("clips", nargs="+")
    ap.add_argument("--backend", default="gpu", choices=("gpu", "cpu", "auto"))
    ap.add_argument("--chain", default="copy", help="the chain of the vkcu and iterator rows (default copy)")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--skip-others", action="store_true", help="no OpenCV or torchvision rows")
    a = ap.parse_args()
    ctx = vkcu.Context(a.backend)
    print(f"# vkcu {vkcu.library_version}, Python {sys.version.split()[0]}, "
          f"torch {torch.__version__ if torch else 'none'} (CUDA {'yes' if HAVE_CUDA else 'no'}), backend {a.backend}, "
          f"chain {a.chain!r}")
    results, verdicts = [], []
    for clip in a.clips:
        name = os.path.basename(clip)
        vkcu_null_rate(clip, a.chain, ctx)  # set-up of the process's devices, outside the figures
        ref = vkcu_null_rate(clip, a.chain, ctx)
        it = iterate(clip, a.chain, a.backend)
        full = iterate(clip, None, a.backend)
        rnd = random10(clip, a.backend)
        cv = {"error": "skipped"} if a.skip_others else opencv(clip)
        tv = {"error": "skipped"} if a.skip_others else torchvision_io(clip)
        ratio_iter = it["fps_steady"] / ref["fps_steady"] if ref["fps_steady"] else 0.0
        ratio_rand = full["seconds"] / rnd["first_s"] if rnd["first_s"] else 0.0
        row = {"clip": name, "vkcu": ref, "iterator": it, "whole_clip": full, "random10": rnd, "opencv": cv,
               "torchvision": tv, "iterator_vs_vkcu": ratio_iter, "whole_vs_random10": ratio_rand}
        results.append(row)
        print(f"\n## {name}: {ref['frames']} frames, path {it['path']}")
        print(f"  vkcu null sink (decode + chain)  {ref['fps_steady']:9.1f} fps steady ({ref['fps']:.1f} whole job)")
        print(f"  vkcu iterator -> tensors         {it['fps_steady']:9.1f} fps steady ({it['fps']:.1f} with set-up); "
              f"{it['cuda_frames']} CUDA frames, {it['dtoh_bytes']} bytes to the host")
        for label, r in (("OpenCV VideoCapture + .cuda()", cv), ("torchvision.io + .cuda()", tv)):
            if "error" in r:
                print(f"  {label:32s} n/a ({r['error']})")
            else:
                print(f"  {label:32s} {r['fps']:9.1f} fps; vkcu iterator {it['fps'] / r['fps']:.2f}x it")
        print(f"  get_frames_at(10 random)         {rnd['first_s']:9.3f} s fresh (index + set-up + decode: "
              f"{rnd['decoded']} frames decoded, {rnd['seeks']} seeks), {rnd['again_s']:.3f} s for 10 more "
              f"(decoder kept, {rnd['decoded_again']} decoded, {rnd['setups']} set-up in all)")
        print(f"  whole clip through the iterator  {full['seconds']:9.3f} s fresh")
        print(f"  RATIO iterator / vkcu steady     {ratio_iter:9.3f}  (target >= 0.9: "
              f"{'PASS' if ratio_iter >= 0.9 else 'FAIL'})")
        print(f"  RATIO whole clip / random10      {ratio_rand:9.3f}  (target > 1: {'PASS' if ratio_rand > 1 else 'FAIL'})")
        verdicts += [ratio_iter >= 0.9, ratio_rand > 1]
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    print(f"\n# targets: {sum(verdicts)} of {len(verdicts)} met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
