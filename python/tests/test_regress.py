# SPDX-License-Identifier: GPL-2.0-or-later
"""vkcu.hash, vkcu.compare and vkcu.verify return Python objects that say
what the command line says: the same hashes and timestamps, the same
verdicts and per-frame measures, a line and a status per manifest case."""
import re

import pytest

import vkcu
from vkcutest import CONFORMANCE, ROOT, cli_hashes, clip, vkcu_cli


@pytest.mark.parametrize("algo", ["md5", "sha256", "xxh64", "blake3"])
def test_hash_equals_the_command_line(algo):
    path = clip("hevc10.mkv")
    hl = vkcu.hash(path, algo=algo, backend="cpu", chain="crop=w=64:h=32")
    want = cli_hashes(path, "--algo", algo, "--chain", "crop=w=64:h=32")
    assert [(h.hash, h.pts) for h in hl] == want
    assert [h.index for h in hl] == list(range(len(want)))
    assert hl.pix_fmt == "yuv420p10le" and (hl.width, hl.height) == (64, 32) and hl.algo.lower() == algo
    assert all(h.size == 64 * 32 * 2 * 3 // 2 for h in hl)
    text = vkcu_cli("hash", path, "--backend", "cpu", "--algo", algo, "--chain", "crop=w=64:h=32").stdout
    frame_lines = "".join(l + "\n" for l in text.splitlines() if l and not l.startswith("#"))
    assert hl.framemd5() == frame_lines


def test_hash_trims_as_the_command_line():
    path = clip("long.mp4")
    hl = vkcu.hash(path, start="100f", frames=5, backend="cpu")
    assert [(h.hash, h.pts) for h in hl] == cli_hashes(path, "--start", "100f", "--frames", "5")


def test_compare_identical_and_different():
    a = clip("h264-aac.mp4")
    same = vkcu.compare(a, a, backend="cpu")
    assert same and same.passed and same.differing == 0 and same.paired == 50
    assert same.gpu_pairs == 0 and same.frames_dtoh_bytes == 0  # the CPU backend measured them; nothing was on a GPU
    assert "IDENTICAL" in same.verdict and len(same.frames) == 50 and all(f.identical for f in same.frames)
    diff = vkcu.compare(a, a, chain_b="scale=w=320:h=240:filter=bilinear,convert=range=full", backend="cpu")
    assert not diff and "MISMATCH" in diff.verdict and diff.differing > 0
    assert diff.first_diff == 0 and diff.max_diff > 0
    worst = min(diff.frames, key=lambda f: f.psnr["avg"] or 1e9)
    assert worst.frame_a == diff.worst_index and 10 < worst.psnr["avg"] < 60
    loose = vkcu.compare(a, a, chain_b="convert=range=full", min_psnr=5, backend="cpu")
    assert loose.passed and "PASS" in loose.verdict
    # the command line agrees on the verdict and the PSNR summary
    r = vkcu_cli("compare", a, a, "--chain-b", "scale=w=320:h=240:filter=bilinear,convert=range=full",
                 "--backend", "cpu", check=False)
    assert r.returncode == 6
    m = re.search(r"average:([0-9.]+)", r.stdout)
    assert m and abs(float(m.group(1)) - diff.psnr_avg) < 1e-3


def test_compare_against_a_hash_list(tmp_path):
    a = clip("h264-aac.mp4")
    ref = tmp_path / "ref.framemd5"
    vkcu_cli("hash", a, "--backend", "cpu", "-o", str(ref))
    ok = vkcu.compare(str(ref), a, backend="cpu")
    assert ok.passed and ok.frames == []  # hash lists have no per-frame pictures
    bad = vkcu.compare(str(ref), a, chain="convert=range=full", backend="cpu")
    assert not bad.passed and bad.first_diff == 0


def test_verify_passing_and_failing_manifests(tmp_path):
    conf = ROOT / "media" / "conformance.manifest"
    v = vkcu.verify(str(conf), backend="cpu", cases=["*64x64*"])
    assert v and v.passed and len(v.cases) >= 2
    assert all(c.status == "pass" and c.manifest.endswith("conformance.manifest") for c in v.cases)
    assert all(re.search(r"frames, MD5 hashes equal \(cpu\)", c.message) for c in v.cases), v.cases
    assert "passed, 0 failed" in v.lines
    # a case whose expectation is wrong: FAIL with the first differing frame
    stream = CONFORMANCE / "64x64-I-P-B-P-high.h264"
    lines = vkcu_cli("hash", str(stream), "--backend", "cpu").stdout.splitlines()
    frames = [l for l in lines if l and not l.startswith("#")]
    frames[1] = frames[1][:-32] + "0" * 32
    m = tmp_path / "bad.manifest"
    m.write_text(f"vkcu-manifest 1\n\n[case wrong]\ninput = {stream}\n" + "\n".join(frames) + "\n\n"
                 f"[case right]\ninput = {stream}\nframes = 1\n{frames[0]}\n")
    v = vkcu.verify(str(m), backend="cpu")
    assert not v and [c.status for c in v.cases] == ["fail", "pass"]
    assert v.failures[0].name == "wrong" and "frame 1" in v.failures[0].message
    with pytest.raises(vkcu.MediaError, match="no-such.manifest"):
        vkcu.verify(str(tmp_path / "no-such.manifest"), backend="cpu")
