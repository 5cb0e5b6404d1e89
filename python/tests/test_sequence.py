# SPDX-License-Identifier: GPL-2.0-or-later
"""A reader is a sequence of frames, with TorchCodec's VideoDecoder rules:
reader[i] (negative from the end, IndexError past either end), slices,
len(); get_frames_in_range(start, stop, step) with a slice's rules and a
positive step; get_frames_played_in_range(t0, t1): the frames whose time is
in [t0, t1); batched calls return a FrameBatch with the frames' numbers and
times; index_at takes a list; list(reader) works past max_held."""
import hashlib

import pytest

import vkcu
from vkcutest import clip


def full_decode(path):
    with vkcu.open(path, backend="cpu", copy=True) as r:
        return [(hashlib.md5(f.tobytes()).hexdigest(), f.pts, f.index, f.time) for f in r]


def key(f):
    return (hashlib.md5(f.tobytes()).hexdigest(), f.pts, f.index, f.time)


def test_indexing_and_slices():
    path = clip("h264-aac.mp4")
    ref = full_decode(path)
    n = len(ref)
    with vkcu.open(path, backend="cpu") as r:
        assert len(r) == n == 50
        assert key(r[10]) == ref[10] and key(r[-1]) == ref[-1] and key(r[-n]) == ref[0]
        for bad in (n, -n - 1, 2**64 + 5):
            with pytest.raises(IndexError):
                r[bad]
        with pytest.raises(TypeError):
            r["3"]
        with pytest.raises(TypeError):
            r[1.0]
        for s in (slice(10, 20, 2), slice(-5, None), slice(None, 3), slice(45, 1000), slice(30, 20),
                  slice(None, None, 7), slice(20, 10, -3), slice(-1, -4, -1)):
            got = r[s]
            assert isinstance(got, vkcu.FrameBatch)
            assert [key(f) for f in got] == ref[s], s
            assert got.indices == list(range(n))[s]
            del got
        whole = r[:]  # 50 frames, max_held 32: those past the free slots are copies
        assert [key(f) for f in whole] == ref and r.stats.held <= 32
        del whole
        b = r[10:20:2]
        assert b.indices == [10, 12, 14, 16, 18]
        assert b.pts_seconds == [ref[i][3] for i in b.indices]
        assert b.duration_seconds == [f.duration_seconds for f in b] and all(d > 0 for d in b.duration_seconds)


def test_get_frames_in_range():
    path = clip("h264-aac.mp4")
    ref = full_decode(path)
    with vkcu.open(path, backend="cpu") as r:
        assert r.get_frames_in_range(10, 20, 2).indices == [10, 12, 14, 16, 18]
        assert [key(f) for f in r.get_frames_in_range(-10, 1000)] == ref[-10:]  # TorchCodec's example
        assert r.get_frames_in_range(5, 5).indices == []
        assert r.get_frames_in_range(0, 3).indices == [0, 1, 2]
        for bad_step in (0, -1):
            with pytest.raises(ValueError, match="step"):
                r.get_frames_in_range(20, 10, bad_step)
        with pytest.raises(TypeError):
            r.get_frames_in_range(0.5, 3)


def test_get_frames_at_is_a_batch_with_negative_numbers():
    path = clip("h264-aac.mp4")
    ref = full_decode(path)
    with vkcu.open(path, backend="cpu") as r:
        b = r.get_frames_at([3, -1, 0, 3])
        assert isinstance(b, vkcu.FrameBatch) and b.indices == [3, 49, 0, 3]
        assert [key(f) for f in b] == [ref[3], ref[49], ref[0], ref[3]]
        assert key(r.get_frame_at(-2)) == ref[48]


def test_played_in_range_and_index_at_lists():
    path = clip("vfr.mkv")
    ref = full_decode(path)
    times = [t for *_, t in ref]
    n = len(ref)
    with vkcu.open(path, backend="cpu") as r:
        assert r.index_at([times[5], times[0], times[-1]]) == [5, 0, n - 1]
        assert r.index_at(times[5]) == 5
        # [t0, t1): a frame starting at t0 is in, one starting at t1 is out
        b = r.get_frames_played_in_range(times[3], times[9])
        assert isinstance(b, vkcu.FrameBatch)
        assert [key(f) for f in b] == ref[3:9]
        # bounds between frames: the frame shown at t0 but started before it is out
        mid = (times[3] + times[4]) / 2
        assert r.get_frames_played_in_range(mid, (times[8] + times[9]) / 2).indices == [4, 5, 6, 7, 8]
        assert r.get_frames_played_in_range(times[4], times[4]).indices == []
        last = r[-1]
        end = last.time + last.duration_seconds
        assert r.get_frames_played_in_range(times[0], end).indices == list(range(n))
        assert r.get_frames_played_in_range(times[-1], end).indices == [n - 1]
        with pytest.raises(ValueError, match="ends before it starts"):
            r.get_frames_played_in_range(times[5], times[2])
        with pytest.raises(ValueError, match="outside the frames' times"):
            r.get_frames_played_in_range(-1.0, times[2])
        with pytest.raises(ValueError, match="outside the frames' times"):
            r.get_frames_played_in_range(end, end)
        with pytest.raises(ValueError, match="after the end of the last frame"):
            r.get_frames_played_in_range(times[0], end + 1)
        p = r.get_frames_played_at([times[2], times[2] + 1e-4])
        assert isinstance(p, vkcu.FrameBatch) and p.indices == [2, 2]
        assert key(r.get_frame_played_at(times[7])) == ref[7]


def test_list_of_a_clip_longer_than_max_held():
    path = clip("long.mp4")
    with vkcu.open(path, backend="cpu", max_held=8) as r:
        n = len(r)
        assert n > 8 * 4
        frames = list(r)
        assert [f.index for f in frames] == list(range(n))
        s = r.stats
        assert s.held == 8 and s.detached == n - 8, s  # the frames past the limit are copies
        picks = [0, 7, 8, n // 2, n - 1]
        with vkcu.open(path, backend="cpu", copy=True) as ref:
            assert [f.tobytes() for f in ref.get_frames_at(picks)] == [frames[i].tobytes() for i in picks]
        del frames
        assert r.stats.held == 0


def test_list_of_an_unnumbered_input():
    """list() asks for len() first, as a hint: an input whose frames cannot be
    numbered still lists (its len() raises NotSeekableError, a TypeError)."""
    path = clip("corpus/h264.264")
    with vkcu.open(path, backend="cpu", copy=True) as r:
        with pytest.raises(vkcu.NotSeekableError) as e:
            len(r)
        assert isinstance(e.value, TypeError)
        assert len(list(r)) > 0
