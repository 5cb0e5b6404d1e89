# SPDX-License-Identifier: GPL-2.0-or-later
"""The package on the GPU backend (an H200: PyTorch with CUDA, CuPy):
- torch.from_dlpack of GPU frames gives CUDA tensors on the frames' own
  device memory (no copy), whose bytes, copied to the host once here, equal
  the CPU backend's frames, frame for frame, with the same timestamps: Vulkan
  decode (8 and 10 bit), the software-decode fallback, chains, packed RGB;
- the reader's counters show no host copy: every frame in CUDA memory, no
  byte to the host, none uploaded on the Vulkan path, one device copy each;
- random access on the GPU equals the CPU backend's frames, set up once;
- a consumer's stream is honoured: a buffer released while kernels that
  read it are still queued is reused only after them;
- CuPy takes the same planes;
- the pool keeps device memory, host memory and file descriptors flat over
  10,000 frames;
- vkcu.compare measures on the GPU with the CPU backend's figures.
"""
import hashlib
import os

import pytest
torch = pytest.importorskip("torch")

import vkcu
from gputest import clip


def to_bytes(t) -> bytes:
    """A tensor's samples, rows packed, copied to the host once (uint16 by
    way of int16 where this torch has no numpy conversion for it)."""
    h = t.cpu().contiguous()
    try:
        return h.numpy().tobytes()
    except TypeError:
        return h.view(torch.int16).numpy().tobytes()


def host_md5(frame):
    """md5 of the frame's planes, taken as CUDA tensors and copied to the host once."""
    m = hashlib.md5()
    for p in frame.planes:
        t = torch.from_dlpack(p)
        assert t.is_cuda and t.data_ptr() == p.data_ptr, "torch.from_dlpack copied the plane"
        m.update(to_bytes(t))
    return m.hexdigest()


def cpu_frames(path, chain=None):
    with vkcu.open(path, backend="cpu", chain=chain, copy=True) as r:
        return [(hashlib.md5(f.tobytes()).hexdigest(), f.pts, f.index) for f in r]


CASES = [
    ("h264-aac.mp4", None, "vulkan-decode+cuda"),
    ("hevc10.mkv", None, "vulkan-decode+cuda"),
    ("hevc10.mkv", "scale=w=320:h=180,convert=format=yuv444p10", "vulkan-decode+cuda"),
    ("h264-aac.mp4", "crop=w=160:h=120,convert=format=rgb24", "vulkan-decode+cuda"),
    ("av1.ivf", None, "sw-decode+upload+cuda"),
    ("h264-422.mkv", None, "sw-decode+upload+cuda"),
]


@pytest.mark.parametrize("name,chain,path", CASES)
def test_gpu_frames_equal_cpu_frames(name, chain, path):
    src = clip(name)
    want = cpu_frames(src, chain)
    got = []
    with vkcu.open(src, backend="gpu", chain=chain) as r:
        for f in r:
            assert f.is_cuda and f.device == f"cuda:{torch.cuda.current_device()}"
            got.append((host_md5(f), f.pts, f.index))
            if f.format in ("rgb24",):
                whole = torch.from_dlpack(f)
                assert whole.shape == (f.height, f.width, 3) and whole.is_cuda
        s = r.stats
    assert len(got) == len(want) and got == want, f"{name} {chain}: first difference at " \
        f"{next((i for i, (g, w) in enumerate(zip(got, want)) if g != w), len(got))}"
    # no host copies: every frame stayed in device memory
    assert s.path == path and s.cuda_frames == s.frames == len(want), s
    assert s.dtoh_bytes == 0 and s.host_copies == 0, s
    if path == "vulkan-decode+cuda":
        assert s.htod_bytes == 0 and s.dtod_copies == len(want), s


def test_big_clip_frames_equal_cpu_and_no_host_copy():
    src = clip("h264-1080p.mp4", big=True)
    want = cpu_frames(src)
    with vkcu.open(src, backend="gpu", chain="copy") as r:
        got = [(host_md5(f), f.pts, f.index) for f in r]
        s = r.stats
    assert got == want and len(got) == 600
    assert s.cuda_frames == 600 and s.dtoh_bytes == 0 and s.htod_bytes == 0 and s.path == "vulkan-decode+cuda", s


def test_random_access_on_the_gpu():
    src = clip("h264-1080p.mp4", big=True)
    want = cpu_frames(src)
    with vkcu.open(src, backend="gpu") as r:
        picks = [599, 3, 250, 251, 0, 420, 3]
        frames = r.get_frames_at(picks)
        for i, f in zip(picks, frames):
            assert f.is_cuda and (host_md5(f), f.pts, f.index) == want[i]
        del frames, f
        more = r.get_frames_at([77, 500])
        assert [(host_md5(f), f.pts) for f in more] == [want[77][:2], want[500][:2]]
        s = r.stats
        assert s.random_setups == 1 and s.dtoh_bytes == 0 and s.cuda_frames == 8, s  # 6 distinct, then 2


def test_consumer_stream_orders_the_buffer_reuse():
    """Kernels queued on a stream of the consumer's still read a frame after
    the frame is released: vkcu must not write its buffer before they run."""
    src = clip("h264-aac.mp4")
    side = torch.cuda.Stream()
    with vkcu.open(src, backend="gpu", max_held=2) as r:
        it = iter(r)
        f = next(it)
        expected = torch.from_dlpack(f.planes[0]).cpu().to(torch.int64).sum().item()
        with torch.cuda.stream(side):
            torch.cuda._sleep(200_000_000)            # a slow kernel first: the read below waits for it
            t = torch.from_dlpack(f.planes[0])         # handed over with the side stream
            total = t.to(torch.int64).sum()            # queued behind the sleep
        del t, f                                       # released while the sum is queued
        later = [next(it).index for _ in range(16)]    # the released buffer is the pool's next
        side.synchronize()
        assert total.item() == expected, "the buffer was overwritten before the consumer's kernels ran"
        assert later[0] == 1


def test_cupy_takes_the_planes():
    cupy = pytest.importorskip("cupy")
    with vkcu.open(clip("hevc10.mkv"), backend="gpu") as r:
        f = next(iter(r))
        for p in f.planes:
            c = cupy.from_dlpack(p)
            t = torch.from_dlpack(p)
            assert c.data.ptr == p.data_ptr and c.dtype == cupy.uint16
            assert c.get().tobytes() == to_bytes(t)


def test_copy_true_on_the_gpu():
    with vkcu.open(clip("h264-aac.mp4"), backend="gpu", copy=True, max_held=1) as r:
        kept = [f for f in r]
        assert all(f.is_cuda for f in kept) and r.stats.held == 0 and r.stats.detached == 50
        want = cpu_frames(clip("h264-aac.mp4"))
        assert [host_md5(f) for f in kept] == [w[0] for w in want]


def _rss_kb():
    with open("/proc/self/status") as fh:
        return next(int(l.split()[1]) for l in fh if l.startswith("VmRSS:"))


def test_pool_memory_flat_over_ten_thousand_frames():
    src = clip("h264-10k.mp4", big=True)
    marks = {}
    n = 0
    with vkcu.open(src, backend="gpu", max_held=4) as r:
        window = []
        for f in r:
            t = torch.from_dlpack(f.planes[0])
            window.append((f, t.float().mean()))      # the frame is used on the GPU, then dropped
            if len(window) > 3:
                window.pop(0)
            n += 1
            if n in (1000, 5000, 10000):
                torch.cuda.synchronize()
                marks[n] = (torch.cuda.mem_get_info()[0], _rss_kb(), len(os.listdir("/proc/self/fd")))
        window.clear()
        del f, t
        s = r.stats
    assert n == 10000 and s.cuda_frames == 10000 and s.dtoh_bytes == 0 and s.held == 0, s
    assert s.detached == 0, "a frame was copied though no more than max_held were held"
    (free1, rss1, fd1), (free5, rss5, fd5), (free10, rss10, fd10) = marks[1000], marks[5000], marks[10000]
    # device memory: the pool does not grow (one 320x240 frame each would be 1.1 GB)
    assert abs(free1 - free10) < 32 << 20 and abs(free5 - free10) < 16 << 20, (free1, free5, free10)
    assert rss10 - rss1 < 32 * 1024 and fd1 == fd5 == fd10, (rss1, rss10, fd1, fd5, fd10)
    print(f"device free {free1 >> 20} / {free5 >> 20} / {free10 >> 20} MiB, RSS {rss1} / {rss5} / {rss10} kB, "
          f"{fd10} FDs at 1000 / 5000 / 10000 frames")


def test_a_slow_consumer_is_not_a_stalled_decoder():
    """The stall watchdog (0.5 s here) counts the decoder's silence, not time
    the job waits for its consumer: a consumer pausing for 2 s is fine."""
    import time
    ctx = vkcu.Context("gpu", stall_timeout=0.5)
    with vkcu.open(clip("h264-aac.mp4"), context=ctx) as r:
        n = 0
        for f in r:
            n += 1
            if n in (3, 20):
                time.sleep(2.0)
        assert n == 50 and r.stats.cuda_frames == 50


def test_compare_on_the_gpu_equals_the_cpu():
    """vkcu.compare on the GPU backend measures every pair where the frames
    are (no picture byte to the host) and gives the CPU backend's figures."""
    a = clip("h264-aac.mp4")
    chain = "denoise=tnr:sigma=6"
    gpu = vkcu.compare(a, a, chain_b=chain, min_psnr=20, backend="gpu")
    cpu = vkcu.compare(a, a, chain_b=chain, min_psnr=20, backend="cpu")
    assert gpu.passed and gpu.paired == 50 and gpu.gpu_pairs == 50 and gpu.frames_dtoh_bytes == 0
    assert cpu.gpu_pairs == 0
    assert [(f.psnr, f.ssim, f.max_diff) for f in gpu.frames] == [(f.psnr, f.ssim, f.max_diff) for f in cpu.frames]
    assert (gpu.psnr, gpu.ssim_all, gpu.max_diff) == (cpu.psnr, cpu.ssim_all, cpu.max_diff)
