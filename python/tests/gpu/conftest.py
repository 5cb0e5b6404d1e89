# SPDX-License-Identifier: GPL-2.0-or-later
"""GPU tests of the package (tests/gpu.d/python.sh runs them on the GPU
machine): they need a CUDA device and PyTorch, and skip without either."""
import os

import pytest

import vkcu

HERE = os.path.dirname(os.path.abspath(__file__))


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
        for item in items:  # the session's items: only this folder's are GPU tests
            if os.path.abspath(str(item.fspath)).startswith(HERE + os.sep):
                item.add_marker(pytest.mark.skip(reason=reason))
