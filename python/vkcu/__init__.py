# SPDX-License-Identifier: GPL-2.0-or-later
"""vkcu for Python: bit-exact video frames as DLPack tensors (CUDA memory on
the GPU backend, host memory on the CPU backend), random access to exact
frames, and the regression toolkit (hashes, comparisons, manifest verdicts)
with a pytest plugin.

    import vkcu, torch
    with vkcu.open("in.mp4", chain="scale=h=720") as r:
        for f in r:
            y = torch.from_dlpack(f.planes[0])     # CUDA tensor on the GPU backend, no copy
        frames = r.get_frames_at([10, 500, 42])     # exact frames, decoder kept between calls
        last, some = r[-1], r[10:20:2]              # a reader is a sequence of frames

A pure ctypes layer over libvkcu.so (docs/python.md says why and where the
library is looked for); every call documented in include/vkcu/*.h.
"""
from ._lib import version as _libversion
from ._errors import (DeviceError, Error, FrameIndexError, FramesHeldError, InputNotFoundError, Interrupted,
                      MediaError, MismatchError, NotSeekableError, OutputError, UsageError)
from ._context import Context, Progress
from ._reader import Frame, FrameBatch, FrameFlags, Plane, Reader, ReaderStats, StreamInfo, open
from ._regress import (CaseResult, Comparison, FrameHash, FramePair, HashList, Verification, compare, hash,
                       verify)

__version__ = "1.2.0"


def cuda_device_count() -> int:
    """CUDA devices of this machine (0 without a driver or GPU)."""
    from ._lib import lib
    return lib.vkcu_cuda_device_count()


#: the version of the libvkcu.so this package loaded
library_version = _libversion

__all__ = [
    "open", "Reader", "Frame", "FrameBatch", "Plane", "FrameFlags", "StreamInfo", "ReaderStats", "Context", "Progress",
    "hash", "compare", "verify", "HashList", "FrameHash", "Comparison", "FramePair", "Verification", "CaseResult",
    "Error", "UsageError", "MediaError", "InputNotFoundError", "NotSeekableError", "OutputError", "DeviceError",
    "MismatchError", "Interrupted", "FramesHeldError", "FrameIndexError", "library_version", "cuda_device_count", "__version__",
]
