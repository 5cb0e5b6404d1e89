# SPDX-License-Identifier: GPL-2.0-or-later
"""Random access: get_frames_at gives the frames a full decode gives (bytes,
pts, number), in the asked order, repeats included, on clips with B-frames
and open groups of pictures; get_frames_played_at finds frames by time; the
decoder is set up once for any number of calls."""
import hashlib
import random

import pytest

import vkcu
from vkcutest import MEDIA, clip

SEEKABLE = ["h264-aac.mp4", "hevc10.mkv", "vfr.mkv", "long.mp4", "corpus/h264.mp4", "corpus/hevc.mkv",
            "corpus/h264-2997.mkv", "corpus/vp9.webm", "corpus/prores.mov", "corpus/mpeg2.mxf"]


def full_decode(path, chain=None):
    with vkcu.open(path, backend="cpu", chain=chain, copy=True) as r:
        return [(hashlib.md5(f.tobytes()).hexdigest(), f.pts, f.index) for f in r]


@pytest.mark.parametrize("name", SEEKABLE)
def test_get_frames_at_equals_a_full_decode(name):
    path = clip(name)
    ref = full_decode(path)
    rng = random.Random(29)  # the same targets on every machine
    with vkcu.open(path, backend="cpu") as r:
        assert len(r) == len(ref)
        n = len(ref)
        picks = [n - 1, 0] + rng.sample(range(n), min(5, n)) + [n // 2, n // 2]
        frames = r.get_frames_at(picks)
        for i, f in zip(picks, frames):
            got = (hashlib.md5(f.tobytes()).hexdigest(), f.pts, f.index)
            assert got == ref[i], f"{name}: frame {i}: {got}, full decode {ref[i]}"
        assert frames[-1]._ptr.contents.priv == frames[-2]._ptr.contents.priv, "a repeat is the same frame"
        del frames
        # a second call pays no set-up
        one = r.get_frame_at(rng.randrange(n))
        s = r.stats
        assert s.random_setups == 1 and s.random_seeks >= 1, s
        assert (hashlib.md5(one.tobytes()).hexdigest(), one.pts) == ref[one.index][:2]


def test_targets_in_one_group_share_a_decode():
    path = clip("long.mp4")
    with vkcu.open(path, backend="cpu") as r:
        n = len(r)
        r.get_frames_at([10, 11, 12, 13])
        s = r.stats
        # one seek, and no more frames decoded than up to the last target
        assert s.random_seeks == 1 and s.random_decoded <= 14 + 16, s


def test_a_chain_of_per_frame_operators():
    path = clip("h264-aac.mp4")
    chain = "crop=w=160:h=120,scale=w=80:h=60,convert=format=rgb24"
    ref = full_decode(path, chain)
    with vkcu.open(path, backend="cpu", chain=chain) as r:
        for f in r.get_frames_at([7, 3, 40]):
            assert (hashlib.md5(f.tobytes()).hexdigest(), f.pts, f.index) == ref[f.index]
            assert f.format == "rgb24" and (f.width, f.height) == (80, 60)


def test_get_frames_played_at():
    path = clip("vfr.mkv")
    ref = full_decode(path)
    with vkcu.open(path, backend="cpu") as r:
        tb = r.info.time_base
        times = [float(pts * tb) for _, pts, _ in ref]
        got = r.get_frames_played_at([times[5], times[5] + 1e-4, times[0], times[-1]])
        assert [f.index for f in got] == [5, 5, 0, len(ref) - 1]
        # between two frames: the earlier one is shown
        mid = (times[8] + times[9]) / 2
        assert r.index_at(mid) == 8
        with pytest.raises(ValueError):
            r.index_at(-1.0)
        with pytest.raises(ValueError):
            r.index_at(times[-1] + 60)


def test_random_access_refusals():
    with vkcu.open(clip("h264-aac.mp4"), backend="cpu", chain="denoise=tnr") as r:
        with pytest.raises(ValueError, match="denoise"):
            r.get_frames_at([3])
        assert sum(1 for _ in r) == 50  # iteration still works
    with vkcu.open(clip("h264-aac.mp4"), backend="cpu", max_held=8) as r:
        with pytest.raises(ValueError, match="frame 50 does not exist"):
            r.get_frames_at([50])
        nine = r.get_frames_at(range(9))  # more than max_held=8 at once: copies, each exact
        assert nine.indices == list(range(9)) and r.stats.held == 0 and r.stats.detached == 9
        ref = full_decode(clip("h264-aac.mp4"))
        assert [(hashlib.md5(f.tobytes()).hexdigest(), f.pts, f.index) for f in nine] == ref[:9]
        eight = r.get_frames_at(range(8))
        assert len(eight) == 8 and r.stats.held == 8
        assert r.get_frames_at([9])[0].index == 9 and r.stats.held == 8  # every slot held: a copy
    with vkcu.open(str(MEDIA / "corpus" / "h264.264"), backend="cpu") as r:
        assert not r.info.seekable
        with pytest.raises(vkcu.NotSeekableError, match="seekable"):
            r.get_frames_at([0])
    with vkcu.open(clip("h264-aac.mp4"), backend="cpu", copy=True) as r:
        assert len(r.get_frames_at(range(20))) == 20  # copies: no limit
