# SPDX-License-Identifier: GPL-2.0-or-later
"""Misuse is refused with one line, before anything is opened or read:
- a FIFO given to a reader (it would read it twice and wait for ever in
  the second open), as standard input is;
- any attribute of a released frame or plane (it would read freed memory);
- integers outside the command line's ranges (ctypes would keep their low
  bits: 2**64 + 5 becomes frame 5), numbers outside them, NaN;
- a NUL inside a path, a chain or a name (the C string would end there),
  and values of the wrong type for a text (chain=123 applied no chain)."""
import inspect
import os
import threading

import pytest

import vkcu
from vkcutest import cli_hashes, clip, vkcu_cli


class FifoWriter:
    """Serves each open of a FIFO for writing with the whole clip, until
    released: a reader that opened the FIFO (even twice) would get its bytes
    and never block, so the test cannot hang on the old code; `served`
    counts the opens."""

    def __init__(self, fifo, data):
        self.fifo, self.data, self.served, self.stop = fifo, data, 0, False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                with open(self.fifo, "wb") as f:  # blocks until a reader opens the FIFO
                    if self.stop:
                        return
                    self.served += 1
                    f.write(self.data)
            except BrokenPipeError:
                pass

    def release(self):
        """Ends the writer with a reader of our own: its pending open returns,
        and a write it is in (to a reader that left) is drained to its end."""
        self.stop = True
        fd = os.open(self.fifo, os.O_RDONLY | os.O_NONBLOCK)  # never waits for a writer
        os.set_blocking(fd, True)
        try:
            while os.read(fd, 1 << 16):  # b"": no writer is left
                pass
            self.thread.join()
        finally:
            os.close(fd)


def test_a_fifo_is_refused_before_it_is_opened(tmp_path):
    fifo = str(tmp_path / "clip.fifo")
    os.mkfifo(fifo)
    src = clip("h264-aac.mp4")
    writer = FifoWriter(fifo, open(src, "rb").read())
    try:
        with pytest.raises(ValueError) as e:
            vkcu.open(fifo, backend="cpu")
        served = writer.served
    finally:
        writer.release()
    msg = str(e.value)
    assert isinstance(e.value, vkcu.UsageError) and e.value.exit_code == 2
    assert msg.startswith(f"{fifo}: is a FIFO") and "seek" in msg and "save the stream to a file" in msg, msg
    assert served == 0, f"the reader opened the FIFO {served} time(s) before refusing it"
    # the command line hashes a FIFO (it reads it once): a Matroska clip, whose index a pipe does not need
    mkv = clip("hevc10.mkv")
    writer = FifoWriter(fifo, open(mkv, "rb").read())
    try:
        out = vkcu_cli("hash", fifo, "--backend", "cpu").stdout
    finally:
        writer.release()
    got = [(line.split(",")[5].strip(), int(line.split(",")[2])) for line in out.splitlines()
           if line.startswith("0,")]
    want = cli_hashes(mkv)
    assert got[:len(want)] == want, "the command line's frames of the FIFO are not the file's"


def _public_properties(cls):
    return [n for n, v in inspect.getmembers(cls) if isinstance(v, property) and not n.startswith("_")]


def test_released_frames_and_planes_say_so():
    with vkcu.open(clip("h264-aac.mp4"), backend="cpu") as r:
        f = next(iter(r))
        planes = f.planes
        f.release()
        frame_props = _public_properties(vkcu.Frame)
        plane_props = _public_properties(vkcu.Plane)
        assert {"width", "format", "pts", "planes", "device"} <= set(frame_props)
        assert {"rows", "data_ptr", "linesize", "row_bytes"} <= set(plane_props)
        for name in frame_props:
            with pytest.raises(vkcu.UsageError, match="the frame was released"):
                getattr(f, name)
        for name in plane_props:
            with pytest.raises(vkcu.UsageError, match="the frame was released"):
                getattr(planes[0], name)
        for call in (f.tobytes, f.copy, f.numpy, f.__dlpack__, f.__dlpack_device__, planes[1].tobytes,
                     planes[1].__dlpack__, planes[1].__dlpack_device__):
            with pytest.raises(vkcu.UsageError, match="the frame was released"):
                call()
        assert "released" in repr(f) and "released" in repr(planes[2])
        f.release()  # twice is fine
        assert r.stats.held == 0


BIG = 2**64


@pytest.mark.parametrize("kwargs,match", [
    (dict(frames=BIG + 2), r"frames=18446744073709551618 is not an integer in \[1, 2147483647\]"),
    (dict(frames=0), r"frames=0 is not an integer in \[1, 2147483647\]"),
    (dict(start="18446744073709551619f"), r"start='18446744073709551619f' is not a frame number in "
                                          r"\[0, 9223372036854775807\]"),
    (dict(duration="-3f"), r"duration='-3f' is not a frame number"),
    (dict(start=float("nan")), r"start=nan: not a number; give a time in \[0, 1000000000\] s"),
    (dict(start=1e10), r"start=10000000000.0 is not a time"),
    (dict(start=BIG), r"start=18446744073709551616 is not a time"),
    (dict(start="1:99"), r"start='1:99' has seconds above 59"),
    (dict(max_held=2**32 + 1), r"max_held=4294967297 is not an integer in \[1, 1024\]"),
    (dict(max_held=0), r"max_held=0 is not an integer in \[1, 1024\]"),
    (dict(video_stream=2**32), r"video_stream=4294967296 is not an integer in \[0, 1023\]"),
    (dict(device=2**32), r"device=4294967296 is not an integer in \[0, 63\]"),
    (dict(ring_size=2**32 + 4), r"ring_size=4294967300 is not an integer in \[3, 16\]"),
    (dict(decode_threads=-1), r"decode_threads=-1 is not an integer in \[1, 256\]"),
    (dict(max_held=True), r"max_held=True is not an integer"),
])
def test_reader_numbers_out_of_range(kwargs, match):
    with pytest.raises(vkcu.UsageError, match=match) as e:
        vkcu.open(clip("h264-aac.mp4"), backend="cpu", **kwargs)
    assert e.value.exit_code == 2 and e.value.code == -22


def test_frame_numbers_out_of_range():
    with vkcu.open(clip("h264-aac.mp4"), backend="cpu") as r:
        for bad in (BIG + 5, 2**63, 50, -51):
            with pytest.raises(IndexError, match=f"frame {bad} does not exist: the input has 50 frames") as e:
                r.get_frames_at([bad])
            assert isinstance(e.value, vkcu.UsageError)
        assert r.stats.random_decoded == 0, "a frame was decoded for a number that does not exist"
        assert r.get_frames_at([5])[0].index == 5


@pytest.mark.parametrize("kwargs,match", [
    (dict(max_diff=-1), r"max_diff=-1 is not an integer in \[0, 65535\]"),
    (dict(max_diff=2**40), r"max_diff=1099511627776 is not an integer in \[0, 65535\]"),
    (dict(min_psnr=-5), r"min_psnr=-5 is not a number in \[0, 1000\]"),
    (dict(min_psnr=float("nan")), r"min_psnr=nan is not a number in \[0, 1000\]"),
    (dict(min_vmaf=101), r"min_vmaf=101 is not a number in \[0, 100\]"),
    (dict(frames=BIG + 2), r"frames=18446744073709551618 is not an integer"),
])
def test_compare_numbers_out_of_range(kwargs, match, tmp_path):
    a = clip("h264-aac.mp4")
    with pytest.raises(vkcu.UsageError, match=match):
        vkcu.compare(a, a, backend="cpu", report_html=str(tmp_path / "r.html"), **kwargs)
    assert not os.listdir(tmp_path)


def test_hash_and_verify_numbers_out_of_range(tmp_path):
    a = clip("h264-aac.mp4")
    with pytest.raises(vkcu.UsageError, match=r"frames=18446744073709551618 is not an integer"):
        vkcu.hash(a, frames=BIG + 2, backend="cpu")
    with pytest.raises(vkcu.UsageError, match=r"start='18446744073709551619f' is not a frame number"):
        vkcu.hash(a, start="18446744073709551619f", backend="cpu")
    m = tmp_path / "m.manifest"
    m.write_text("vkcu-manifest 1\n")
    with pytest.raises(vkcu.UsageError, match=r"jobs=4294967297 is not an integer in \[1, 64\]"):
        vkcu.verify(str(m), jobs=2**32 + 1, backend="cpu")
    with pytest.raises(vkcu.UsageError, match=r"timeout=-1 is not a number in \[0.001, 1000000\]"):
        vkcu.verify(str(m), timeout=-1, backend="cpu")
    # in range, they work: 3 frames from frame 5
    hl = vkcu.hash(a, start="5f", frames=3, backend="cpu")
    assert len(hl) == 3


def test_nul_in_paths_chains_and_names(tmp_path):
    a = clip("h264-aac.mp4")
    cases = [
        lambda: vkcu.open(a + "\0.png", backend="cpu"),
        lambda: vkcu.open(a, backend="cpu", chain="scale=w=32:h=24\0,convert=format=rgb24"),
        lambda: vkcu.hash(a + "\0x", backend="cpu"),
        lambda: vkcu.hash(a, chain="crop=w=64:h=64\0", backend="cpu"),
        lambda: vkcu.hash(a, algo="md5\0sha256", backend="cpu"),
        lambda: vkcu.compare(a, a, chain_b="crop=w=64:h=64\0:x=2", backend="cpu"),
        lambda: vkcu.compare(a, a, report_html=str(tmp_path / "r.html\0.png"), backend="cpu"),
        lambda: vkcu.verify(str(tmp_path / "m.manifest\0x"), backend="cpu"),
        lambda: vkcu.verify(str(tmp_path / "m.manifest"), cases=["a\0b"], backend="cpu"),
    ]
    for call in cases:
        with pytest.raises(ValueError, match="NUL character") as e:
            call()
        assert isinstance(e.value, vkcu.UsageError) and e.value.exit_code == 2
    assert not os.listdir(tmp_path)


def test_wrong_types_for_text():
    a = clip("h264-aac.mp4")
    for call, match in [
        (lambda: vkcu.open(a, backend="cpu", chain=123), "chain=123: give the operators as a str"),
        (lambda: vkcu.open(a, backend="cpu", chain=0), "chain=0: give the operators as a str"),
        (lambda: vkcu.open(123, backend="cpu"), r"path=123: give a path \(str, bytes or os.PathLike\)"),
        (lambda: vkcu.hash(a, chain=["crop=w=8:h=8"], backend="cpu"), "chain=.*give the operators as a str"),
        (lambda: vkcu.hash(a, algo=5, backend="cpu"), "algo=5: give the algorithm's name as a str"),
        (lambda: vkcu.compare(a, a, chain=3.5, backend="cpu"), "chain=3.5: give the operators as a str"),
    ]:
        with pytest.raises(TypeError, match=match):
            call()
    # bytes and path-likes are paths too
    from pathlib import Path
    with vkcu.open(Path(a), backend="cpu", chain=b"crop=w=64:h=32") as r:
        f = next(iter(r))
        assert (f.width, f.height) == (64, 32)
    with vkcu.open(os.fsencode(a), backend="cpu") as r:
        assert len(r) == 50
