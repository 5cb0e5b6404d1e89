# SPDX-License-Identifier: GPL-2.0-or-later
"""Failures are exceptions carrying the library's one line and its class:
FileNotFoundError for a missing input, ValueError for bad options (naming
this package's keyword arguments, not the C fields), and vkcu.Error
subclasses for the media, device and output rows of the exit-code table."""
import os

import pytest

import vkcu
from vkcutest import MEDIA, clip


def test_missing_input_is_file_not_found():
    path = str(MEDIA / "no-such-clip.mp4")
    with pytest.raises(FileNotFoundError) as e:
        vkcu.open(path)
    err = e.value
    assert isinstance(err, vkcu.InputNotFoundError) and isinstance(err, vkcu.MediaError)
    assert isinstance(err, vkcu.Error) and err.exit_code == 3
    assert str(err) == f"{path}: no such file (check the path)" and err.filename == path
    with pytest.raises(FileNotFoundError):
        vkcu.hash(path)


@pytest.mark.parametrize("kwargs,match", [
    (dict(max_held=0), r"max_held=0 is not an integer in \[1, 1024\]"),
    (dict(chain="scale=w=32:nokey=1"), "nokey"),
    (dict(timing="sometimes"), "timing='sometimes'"),
    (dict(start="soon"), "start='soon'"),
    (dict(duration="10f", frames=3), "give one"),
    (dict(backend="tpu"), "backend='tpu'"),
])
def test_bad_options_are_value_errors(kwargs, match):
    with pytest.raises(ValueError, match=match) as e:
        vkcu.open(clip("h264-aac.mp4"), **kwargs)
    assert isinstance(e.value, vkcu.UsageError) and e.value.exit_code == 2


def test_messages_name_the_package_arguments():
    with vkcu.open(clip("h264-aac.mp4"), backend="cpu", start="100000f") as r:
        with pytest.raises(ValueError) as e:
            next(iter(r))
    msg = str(e.value)
    assert "start='100000f' is past the end (the input has 50 frames)" in msg, msg
    assert "start_frame" not in msg and "--" not in msg


def test_bad_input_is_a_media_error():
    for name in ("not-video.mp4", "truncated.mp4", "empty.mp4"):
        path = clip(name)
        with pytest.raises(vkcu.MediaError) as e:
            r = vkcu.open(path, backend="cpu")
            for _ in r:
                pass
        assert e.value.exit_code == 3 and path in str(e.value), str(e.value)
        assert not isinstance(e.value, FileNotFoundError)


def test_output_not_writable_is_an_output_error(tmp_path):
    existing = tmp_path / "worst.png"
    existing.write_bytes(b"keep me")
    a = clip("h264-aac.mp4")
    with pytest.raises(vkcu.OutputError) as e:
        vkcu.compare(a, a, chain_b="scale=w=320:h=240:filter=bilinear", diff_image=str(existing), backend="cpu")
    assert e.value.exit_code == 4 and "worst.png" in str(e.value)
    assert existing.read_bytes() == b"keep me", "an existing file was replaced without overwrite"
    with pytest.raises(vkcu.OutputError):
        vkcu.compare(a, a, diff_image=str(tmp_path / "no-such-folder" / "x.png"), backend="cpu")


def test_no_gpu_is_a_device_error():
    if vkcu.cuda_device_count() > 0:
        pytest.skip("this machine has a CUDA device: backend='gpu' works here")
    with vkcu.open(clip("h264-aac.mp4"), backend="gpu") as r:
        with pytest.raises(vkcu.DeviceError) as e:
            next(iter(r))
    assert e.value.exit_code == 5 and "backend='gpu'" in str(e.value), str(e.value)
    with pytest.raises(vkcu.DeviceError):
        vkcu.hash(clip("h264-aac.mp4"), backend="gpu")


def test_errors_keep_the_library_code():
    with pytest.raises(vkcu.UsageError) as e:
        vkcu.open(clip("h264-aac.mp4"), max_held=5000)
    assert e.value.code == -22 and e.value.message == str(e.value)


def test_closed_objects_say_so():
    r = vkcu.open(clip("h264-aac.mp4"), backend="cpu")
    f = next(iter(r))
    r.close()
    assert f.tobytes()  # a frame outlives its reader
    f.release()
    with pytest.raises(vkcu.UsageError, match="closed"):
        next(r)
    with pytest.raises(vkcu.UsageError, match="released"):
        f.copy()
