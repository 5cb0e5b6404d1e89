# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers of the GPU tests: MEDIA and BIG (tools/gpu-env.sh) say where the
clips are."""
import os
from pathlib import Path

import pytest

import vkcu

MEDIA = Path(os.environ.get("MEDIA", Path(__file__).resolve().parents[3] / "media" / "gen"))
BIG = Path(os.environ.get("BIG", Path(__file__).resolve().parents[3] / ".gpu" / "media"))


def clip(name: str, big: bool = False) -> str:
    p = (BIG if big else MEDIA) / name
    if not p.exists():
        pytest.skip(f"{p} missing")
    return str(p)
