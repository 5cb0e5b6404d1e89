# SPDX-License-Identifier: GPL-2.0-or-later
"""pytest's hooks for the package's tests; the helpers they share are in
vkcutest.py (a module of its own: the GPU tests' folder has its own too)."""
import pytest

from vkcutest import clip


@pytest.fixture
def small_clip():
    return clip("h264-aac.mp4")
