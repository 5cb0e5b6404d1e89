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
        assert (golden / f"{n}.framemd5").exists() and (golden / f"{n}.mkv").exists(), n
        assert not (golden / f"{n}.nut").exists(), n
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


PART_SUITE = '''
CLIP = {clip!r}

def test_part(vkcu_golden):
    vkcu_golden(CLIP, chain={chain!r}, start="100f", frames=10)

def test_seconds(vkcu_golden):
    vkcu_golden(CLIP, chain={chain!r}, start=2.0, duration="5f", name="seconds")

def test_limit(vkcu_golden):
    vkcu_golden(CLIP, chain={chain!r}, frames=6, name="limit", min_psnr=45)
'''


def test_plugin_goldens_of_a_part_of_a_clip(tmp_path):
    """frames=, start= and duration= golden a part of a clip: the golden
    holds exactly those frames, `vkcu verify` checks the same part through
    the manifest, and a failure under min_psnr says the limit and the worst
    frame before it lists the frames."""
    long_clip = clip("long.mp4")
    suite = tmp_path / "suite"
    suite.mkdir()

    def write(chain):
        (suite / "test_part.py").write_text(PART_SUITE.format(clip=long_clip, chain=chain))

    write("scale=w=160:h=120")
    r = run_pytest(suite, "--vkcu-update")
    assert r.returncode == 0, r.stdout[-2000:]
    golden = suite / "golden"
    full = vkcu.hash(long_clip, chain="scale=w=160:h=120", backend="cpu")
    for name, first, count in (("test_part", 100, 10), ("seconds", None, 5), ("limit", 0, 6)):
        _, rows = vkcu.testing._read_framemd5(str(golden / f"{name}.framemd5"))
        assert len(rows) == count, (name, len(rows))
        if first is None:  # 2.0 s in, whatever the frame rate
            first = next(i for i, h in enumerate(full) if h.hash == rows[0][3])
            assert first > 0
        assert [row[3] for row in rows] == [h.hash for h in full[first:first + count]], name
        with vkcu.open(str(golden / f"{name}.mkv"), backend="cpu") as g:
            assert g.info.codec == "ffv1" and len(g) == count
    text = (golden / "golden.manifest").read_text()
    assert "start = 100f\nframes = 10\n" in text and "start = 2.0\nduration = 5f\n" in text, text
    r = run_pytest(suite)
    assert r.returncode == 0 and "3 passed" in r.stdout, r.stdout[-2000:]
    v = subprocess.run([VKCU, "verify", str(golden / "golden.manifest"), "--backend", "cpu"], capture_output=True,
                       text=True)
    assert v.returncode == 0 and "3 passed, 0 failed" in v.stdout, v.stdout + v.stderr

    # the frames change a little: each test fails; the limit's says the limit and its worst frame first
    write("scale=w=160:h=120:filter=bilinear")
    r = run_pytest(suite)
    out = r.stdout
    assert r.returncode == 1 and "3 failed" in out, out[-3000:]
    block = out[out.index("6 of 6 frames differ from the golden 'limit'"):]
    rows = re.findall(r"frame (\d+) \(pts \d+\): hash [0-9a-f]{32}, golden [0-9a-f]{32}; PSNR ([0-9.]+) dB", block)
    assert len(rows) >= 6, block[:3000]
    worst_frame, worst = min(((int(i), float(p)) for i, p in rows[:6]), key=lambda x: x[1])
    assert worst < 45
    limit = re.search(r"min_psnr 45 dB: (\d+) of the 6 differing frames fail it; the worst is frame (\d+) "
                      r"\(pts \d+\) at ([0-9.]+) dB, max diff \d+", block)
    assert limit, block[:2000]
    assert int(limit.group(2)) == worst_frame and abs(float(limit.group(3)) - worst) < 0.006
    assert int(limit.group(1)) == sum(1 for _, p in rows[:6] if float(p) < 45)
    assert block.index("min_psnr 45 dB") < block.index("frame 0 (pts"), "the limit comes after the frames"
    # the part's images are of its own frames: 8 at most, from the golden's first
    images = sorted(set(re.findall(r"diff image (\S+test_part-frame\d+\.png)", out)))
    assert 1 <= len(images) <= 8 and all(Path(i).read_bytes().startswith(b"\x89PNG") for i in images)


def test_goldens_are_compact_and_lossless(tmp_path):
    """The golden frames are FFV1 (several times smaller than the raw frames
    the goldens held before), decode to exactly the hashed frames, and
    layouts FFV1 does not take fall back to lossless rawvideo NUT;
    keep_frames=False keeps the hashes alone."""
    src = clip("h264-aac.mp4")
    g = vkcu.testing.Golden(str(tmp_path / "golden"), update=True, backend="cpu")
    g.check(src, name="yuv", chain="convert=format=yuv420p10")
    g.check(src, name="rgb", chain="scale=w=80:h=60,convert=format=rgb24")
    g.check(src, name="ids", chain="crop=w=64:h=64", keep_frames=False)
    d = tmp_path / "golden"
    hashes = vkcu.hash(src, chain="convert=format=yuv420p10", backend="cpu")
    raw = sum(h.size for h in hashes)
    size = (d / "yuv.mkv").stat().st_size
    assert size * 3 < raw, f"FFV1 golden {size} bytes for {raw} bytes of frames"
    with vkcu.open(str(d / "yuv.mkv"), backend="cpu") as r:
        assert r.info.codec == "ffv1"
        import hashlib
        assert [hashlib.md5(f.tobytes()).hexdigest() for f in r] == [h.hash for h in hashes]
    with vkcu.open(str(d / "rgb.nut"), backend="cpu") as r:
        assert r.info.codec == "rawvideo" and next(iter(r)).format == "rgb24"
    assert not (d / "rgb.mkv").exists()
    assert (d / "ids.framemd5").exists() and not (d / "ids.mkv").exists() and not (d / "ids.nut").exists()
    check = vkcu.testing.Golden(str(d), backend="cpu", out_dir=str(tmp_path / "img"))
    for name, chain in (("yuv", "convert=format=yuv420p10"), ("rgb", "scale=w=80:h=60,convert=format=rgb24"),
                        ("ids", "crop=w=64:h=64")):
        check.check(src, name=name, chain=chain)
    try:
        check.check(src, name="ids", chain="crop=w=64:h=64:x=2")
    except vkcu.testing.GoldenMismatch as e:
        assert len(e.frames) == 50 and all(f.psnr is None for f in e.frames)
        assert "no golden frames ids.mkv" in str(e)
    else:
        raise AssertionError("a changed crop passed its hash-only golden")


def test_old_nut_goldens_are_still_read(tmp_path):
    """A golden recorded before (rawvideo NUT beside the hashes) checks and
    measures as it did."""
    src = clip("h264-aac.mp4")
    d = tmp_path / "golden"
    d.mkdir()
    chain = "crop=w=64:h=64"
    subprocess.run([VKCU, "hash", src, "--backend", "cpu", "--chain", chain, "-o", str(d / "old.framemd5")],
                   check=True, capture_output=True)
    subprocess.run([VKCU, src, "--backend", "cpu", "--chain", chain, "--encoder", "rawvideo", "--no-audio", "-o",
                    str(d / "old.nut")], check=True, capture_output=True)
    g = vkcu.testing.Golden(str(d), backend="cpu", out_dir=str(tmp_path / "img"))
    assert g.frames_file("old") == str(d / "old.nut")
    g.check(src, name="old", chain=chain)
    try:
        g.check(src, name="old", chain=chain + ":x=2")
    except vkcu.testing.GoldenMismatch as e:
        assert len(e.frames) == 50 and all(f.psnr is not None for f in e.frames)
    else:
        raise AssertionError("a changed crop passed an old golden")
