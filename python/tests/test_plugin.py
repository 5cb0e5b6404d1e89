# SPDX-License-Identifier: GPL-2.0-or-later
"""The pytest plugin on a passing and a failing golden: a test suite of a
user's (run by pytest in a subprocess) records its goldens with
--vkcu-update, passes against them, and fails when the frames change,
naming each differing frame with its PSNR and the path of a difference
image that exists; `vkcu verify` agrees with both through the golden
manifest the plugin writes."""
import os
import re
import subprocess
import sys
from pathlib import Path

import vkcu
import vkcu.testing
from vkcutest import VKCU, clip

SUITE = '''
CLIP = {clip!r}

def test_scaled(vkcu_golden):
    vkcu_golden(CLIP, chain={chain!r})

def test_two_cases(vkcu_golden):
    vkcu_golden(CLIP, chain="crop=w=64:h=64", name="crop64")
    vkcu_golden(CLIP, chain="crop=w=32:h=32")
'''


def plugin_args():
    """-p for a package run from the tree; an installed one registers itself."""
    from importlib.metadata import entry_points
    eps = entry_points()
    group = eps.select(group="pytest11") if hasattr(eps, "select") else eps.get("pytest11", [])
    return [] if any(e.name == "vkcu" for e in group) else ["-p", "vkcu.pytest_plugin"]


def run_pytest(suite: Path, *args: str) -> subprocess.CompletedProcess:
    # pytest shows a failure's whole message again in its short summary when
    # it believes it runs under CI (CI or BUILD_NUMBER set), and cuts it to
    # the terminal's width otherwise: the user's suite runs the same anywhere
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "BUILD_NUMBER")}
    pkg = str(Path(vkcu.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = pkg + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "pytest", *plugin_args(), "-p", "no:cacheprovider",
                           "-q", "--basetemp", str(suite / "tmp"), "--vkcu-backend", "cpu", *args, str(suite)],
                          capture_output=True, text=True, env=env, cwd=str(suite))


def write_suite(suite: Path, chain: str) -> None:
    (suite / "test_user.py").write_text(SUITE.format(clip=clip("h264-aac.mp4"), chain=chain))


def test_plugin_passing_and_failing_goldens(tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    write_suite(suite, "scale=w=160:h=120")
    r = run_pytest(suite)
    assert r.returncode == 1 and "no golden 'test_scaled'" in r.stdout, r.stdout[-2000:]

    r = run_pytest(suite, "--vkcu-update")
    assert r.returncode == 0, r.stdout[-2000:]
    golden = suite / "golden"
    for n in ("test_scaled", "crop64", "test_two_cases"):
        assert (golden / f"{n}.framemd5").exists() and (golden / f"{n}.nut").exists(), n
    manifest = golden / "golden.manifest"
    assert manifest.read_text().count("[case ") == 3

    r = run_pytest(suite)
    assert r.returncode == 0 and "2 passed" in r.stdout, r.stdout[-2000:]
    v = subprocess.run([VKCU, "verify", str(manifest), "--backend", "cpu"], capture_output=True, text=True)
    assert v.returncode == 0 and "3 passed, 0 failed" in v.stdout, v.stdout + v.stderr

    # the frames change: the test fails and says where, by how much, with pictures
    write_suite(suite, "scale=w=160:h=120:filter=bilinear")
    r = run_pytest(suite)
    out = r.stdout
    assert r.returncode == 1 and "1 failed, 1 passed" in out, out[-3000:]
    rows = re.findall(r"frame (\d+) \(pts (\d+)\): hash [0-9a-f]{32}, golden [0-9a-f]{32}; "
                      r"PSNR ([0-9.]+) dB, max diff (\d+)(?:; diff image (\S+\.png))?", out)
    # every frame differs, each is named (a summary line may repeat them)
    assert sorted({int(r[0]) for r in rows}) == list(range(50)), out[-3000:]
    images = sorted({Path(img) for *_, img in rows if img})
    assert len(images) == 8, "difference images for the first 8 frames"
    for img in images:
        data = img.read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and b"IHDR" in data[:16] and len(data) > 500
    for _, _, psnr, diff, _ in rows:
        assert 20 < float(psnr) < 60 and int(diff) > 0
    assert "--vkcu-update" in out
    # the manifest still describes the recorded frames; the changed chain is the test's
    v = subprocess.run([VKCU, "verify", str(manifest), "--backend", "cpu"], capture_output=True, text=True)
    assert v.returncode == 0


def test_golden_failing_manifest_for_verify(tmp_path):
    """A golden whose recorded frames no longer match: vkcu verify fails the
    same case the plugin fails."""
    g = vkcu.testing.Golden(str(tmp_path / "golden"), update=True, backend="cpu")
    g.check(clip("h264-aac.mp4"), name="flip", chain="crop=w=64:h=64")
    text = (tmp_path / "golden" / "golden.manifest").read_text().replace("crop=w=64:h=64", "crop=w=64:h=64:x=2")
    (tmp_path / "golden" / "golden.manifest").write_text(text)
    v = vkcu.verify(str(tmp_path / "golden" / "golden.manifest"), backend="cpu")
    assert not v and v.failures[0].name == "flip" and "differ" in v.failures[0].message
    check = vkcu.testing.Golden(str(tmp_path / "golden"), backend="cpu", out_dir=str(tmp_path / "img"))
    try:
        check.check(clip("h264-aac.mp4"), name="flip", chain="crop=w=64:h=64:x=2")
    except vkcu.testing.GoldenMismatch as e:
        assert len(e.frames) == 50 and all(d.psnr is not None for d in e.frames)
        assert sum(1 for d in e.frames if d.image and os.path.exists(d.image)) == 8
        assert isinstance(e, AssertionError) and isinstance(e, vkcu.MismatchError)
    else:
        raise AssertionError("a changed crop passed its golden")
