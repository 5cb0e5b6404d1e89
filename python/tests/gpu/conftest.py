# SPDX-License-Identifier: GPL-2.0-or-later
"""GPU tests of the package (tests/gpu.d/python.sh runs them on the GPU
machine): they need a CUDA device and PyTorch, and skip without either.
MEDIA and BIG (tools/gpu-env.sh) say where the clips are."""
import os
from pathlib import Path

import pytest

import vkcu

MEDIA = Path(os.environ.get("MEDIA", Path(__file__).resolve().parents[3] / "media" / "gen"))
BIG = Path(os.environ.get("BIG", Path(__file__).resolve().parents[3] / ".gpu" / "media"))


def pytest_collection_modifyitems(config, items):
    reason = None
    if vkcu.cuda_device_count() == 0:
        reason = "no CUDA device"
    else:
        try:
            import torch
            if not torch.cuda.is_available():
                reason = "torch sees no CUDA device"
        except ImportError:
            reason = "no PyTorch"
    if reason:
        for item in items:
            item.add_marker(pytest.mark.skip(reason=reason))


def clip(name: str, big: bool = False) -> str:
    p = (BIG if big else MEDIA) / name
    if not p.exists():
        pytest.skip(f"{p} missing")
    return str(p)
