# SPDX-License-Identifier: GPL-2.0-or-later
"""Iterated frames are the frames `vkcu hash` hashes: for every clip of the
codec corpus and every conformance stream, each frame's planes taken with
numpy.from_dlpack (no copy), packed, hash to the line `vkcu hash` prints,
with the same timestamp; and the DLPack views are views (shape, strides and
address of the frame's own memory)."""
import ctypes
import hashlib
import sys

import numpy as np
import pytest

import vkcu
from vkcutest import CONFORMANCE, MEDIA, cli_hashes, clip

CORPUS = sorted(p.name for p in (MEDIA / "corpus").glob("[!.]*")) if (MEDIA / "corpus").is_dir() else []
CONF = sorted(p.name for p in CONFORMANCE.glob("*") if p.suffix in (".264", ".h264", ".h265")
              and (CONFORMANCE / (p.name + ".framemd5")).exists())


def numpy_md5(frame):
    m = hashlib.md5()
    for p in frame.planes:
        a = np.from_dlpack(p)
        assert not a.flags.owndata, "numpy.from_dlpack copied the plane"
        m.update(np.ascontiguousarray(a).tobytes())
    return m.hexdigest()


def check_clip(path):
    want = cli_hashes(path)
    assert want, f"{path}: vkcu hash gave no frames"
    got = []
    with vkcu.open(path, backend="cpu", timing="vfr") as r:
        for f in r:
            got.append((numpy_md5(f), f.pts))
    assert len(got) == len(want), f"{path}: {len(got)} frames iterated, vkcu hash has {len(want)}"
    bad = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
    assert not bad, f"{path}: frame {bad[0]}: numpy {got[bad[0]]}, vkcu hash {want[bad[0]]} ({len(bad)} differ)"


@pytest.mark.parametrize("name", CORPUS)
def test_corpus_clip_hashes_equal_vkcu_hash(name):
    check_clip(str(MEDIA / "corpus" / name))


@pytest.mark.parametrize("name", CONF)
def test_conformance_stream_hashes_equal_vkcu_hash(name):
    check_clip(str(CONFORMANCE / name))


def test_corpus_is_there():
    if not CORPUS:
        pytest.skip("media/gen/corpus missing (make media)")
    assert len(CORPUS) >= 20 and len(CONF) >= 10, (CORPUS, CONF)


@pytest.mark.parametrize("chain,fmt,dtype", [
    (None, "yuv420p", np.uint8),
    ("convert=format=yuv420p10", "yuv420p10le", np.uint16),
    ("convert=format=p010", "yuv420p10le", np.uint16),  # semi-planar comes planar, as hashed
    ("scale=w=100:h=60,convert=format=rgb24", "rgb24", np.uint8),
])
def test_planes_are_views_of_the_frame(chain, fmt, dtype):
    path = clip("h264-aac.mp4")
    with vkcu.open(path, backend="cpu", chain=chain) as r:
        f = next(iter(r))
        assert f.format == fmt and f.device == "cpu" and not f.is_cuda
        for p in f.planes:
            a = np.from_dlpack(p)
            assert a.dtype == dtype
            assert a.ctypes.data == p.data_ptr
            assert a.strides[0] == p.linesize, "the row pitch shows as the first stride"
            assert a.shape[0] == p.rows and a.nbytes == p.rows * p.row_bytes
            assert a.tobytes() == p.tobytes()
        if f.format == "rgb24":
            whole = np.from_dlpack(f)
            assert whole.shape == (60, 100, 3) and whole.strides[1:] == (3, 1)
        else:
            with pytest.raises(BufferError):
                np.from_dlpack(f)  # planes of different sizes: no frame tensor
        del f


def test_yuv444_frame_tensor_is_planes_rows_samples():
    with vkcu.open(clip("h264-aac.mp4"), backend="cpu", chain="convert=format=yuv444p") as r:
        f = next(iter(r))
        whole = np.from_dlpack(f)
        assert whole.shape == (3, f.height, f.width)
        for i, p in enumerate(f.planes):
            assert np.array_equal(whole[i], np.from_dlpack(p))


def test_capsules_versioned_and_unversioned():
    with vkcu.open(clip("h264-aac.mp4"), backend="cpu", max_held=2) as r:
        f = next(iter(r))
        p = f.planes[0]
        assert "dltensor" in repr(p.__dlpack__()) and "versioned" not in repr(p.__dlpack__())
        assert "dltensor_versioned" in repr(p.__dlpack__(max_version=(1, 0)))
        assert p.__dlpack_device__() == (1, 0)
        # unconsumed capsules die: their tensors' references go with them
        for _ in range(50):
            p.__dlpack__(max_version=(1, 0))
        assert r.stats.held == 1
        arr = np.from_dlpack(p)
        del f, p
        assert r.stats.held == 1, "the array keeps its frame held"
        del arr
        assert r.stats.held == 0
        with pytest.raises(BufferError):
            next(iter(r)).planes[0].__dlpack__(stream=5)  # host memory takes no stream
        with pytest.raises(BufferError):
            next(iter(r)).planes[0].__dlpack__(dl_device=(2, 0))


def test_frame_facts():
    with vkcu.open(clip("h264-aac.mp4"), backend="cpu") as r:
        info = r.info
        assert (info.width, info.height, info.codec, info.seekable) == (320, 240, "h264", True)
        frames = list(f for f in [next(iter(r)) for _ in range(1)])
        f = frames[0]
        assert f.index == 0 and f.pts == 0 and f.flags.key and f.time == 0.0
        g = next(r)
        assert g.index == 1 and g.time == pytest.approx(float(g.pts * g.time_base)) and g.time > 0
        assert not g.flags.interlaced and not g.flags.concealed


def test_copy_true_frames_are_their_own():
    with vkcu.open(clip("h264-aac.mp4"), backend="cpu", max_held=1, copy=True) as r:
        kept = [f for f in r]
        assert len(kept) == 50 and r.stats.held == 0 and r.stats.detached == 50
        # a copy's memory is its own: writing it reaches no other frame
        first = kept[0].tobytes()
        p = kept[0].planes[0]
        ctypes.memset(p.data_ptr, 0, p.linesize * p.rows)
        assert kept[0].planes[0].tobytes() == bytes(p.row_bytes * p.rows)
        assert r.get_frame_at(0).tobytes() == first


def test_held_frames_past_the_limit_come_as_copies():
    """Holding frames never fails nor hangs: once max_held frames of the
    pool are held, each further frame is a copy of its own (its pool slot
    goes back at once), so that list(reader) works on a clip of any length;
    random access asking for more than the free slots gets copies too."""
    with vkcu.open(clip("h264-aac.mp4"), backend="cpu", max_held=3) as r:
        it = iter(r)
        held = [next(it) for _ in range(5)]
        assert [f.index for f in held] == [0, 1, 2, 3, 4]
        s = r.stats
        assert s.held == 3 and s.detached == 2, s
        # the copies are the frames a full decode gives
        with vkcu.open(clip("h264-aac.mp4"), backend="cpu", copy=True) as ref:
            assert [f.tobytes() for f in ref.get_frames_at(range(5))] == [f.tobytes() for f in held]
        two = r.get_frames_at([10, 11, 10])  # no free slot: copies
        assert two.indices == [10, 11, 10] and r.stats.held == 3 and r.stats.detached == 4
        assert two[0]._ptr.contents.priv == two[2]._ptr.contents.priv, "a repeat is the same frame"
        del two
        del held[0]  # a pool frame released: the next frame is the pool's again
        f5 = next(it)
        assert f5.index == 5 and r.stats.held == 3 and r.stats.detached == 4
        c = held[0].copy()
        del held, f5
        assert c.index == 1 and r.stats.held == 0  # the copy counts against nothing
