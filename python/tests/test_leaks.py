# SPDX-License-Identifier: GPL-2.0-or-later
"""No leaks: 10,000 frames through the reader's pool (iteration restarted at
the clip's end, numpy views made and dropped, frames held a few at a time,
random access between) leave resident memory and open file descriptors
where they were after the first 1,000, and the reader's threads end with
it."""
import os
import random

import numpy as np

import vkcu
from vkcutest import clip


def rss_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/self/status")


def fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def threads() -> int:
    return len(os.listdir("/proc/self/task"))


def test_ten_thousand_frames_memory_and_fds_flat():
    path = clip("long.mp4")
    rng = random.Random(10000)
    base_threads = threads()
    seen = 0
    marks = {}
    # One decoder: with the stream in pieces (decode_parallel, the default) the
    # frames decoded ahead at the moment of each sample depend on the cores
    # and the load (up to two pieces of this clip on 16 cores), which is not
    # what this test measures; the pieces' own leaks are LeakSanitizer's
    # (make test-asan runs tests/cli/decode-parallel.sh).
    with vkcu.open(path, backend="cpu", max_held=4, decode_parallel="off") as r:
        n = len(r)
        window = []
        while seen < 10000:
            for f in r:  # each pass rewinds: a new job, a new pool user
                views = [np.from_dlpack(p) for p in f.planes]
                assert views[0].shape == (240, 320)
                window.append((f, views))
                if len(window) > 3:
                    window.pop(0)
                seen += 1
                if seen % 700 == 0:
                    picks = r.get_frames_at([rng.randrange(n) for _ in range(1)])
                    assert picks[0].width == 320
                    del picks
                if seen in (1000, 5000, 10000):
                    marks[seen] = (rss_kb(), fds())
                if seen >= 10000:
                    break
        window.clear()
        del f, views
        assert r.stats.held == 0 and r.stats.frames >= 10000
        assert r.stats.detached == 0, "a frame was copied though no more than max_held were held"
    (rss1, fd1), (rss5, fd5), (rss10, fd10) = marks[1000], marks[5000], marks[10000]
    # a leak of one 320x240 frame each would be 1.1 GB; the pool reuses its buffers
    assert rss10 - rss1 < 16 * 1024 and rss10 - rss5 < 8 * 1024, (rss1, rss5, rss10)
    assert fd1 == fd5 == fd10, (fd1, fd5, fd10)
    assert threads() == base_threads, "a reader thread outlived its reader"
    print(f"RSS {rss1} / {rss5} / {rss10} kB at 1000 / 5000 / 10000 frames; {fd10} FDs")
