# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers of the package's tests: where the checkout, its vkcu binary and
its clips are (tests/cli/python.sh sets VKCU, MEDIA and
VKCU_CONFORMANCE as tests/run.sh does; run from a checkout they are found
beside this folder)."""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(os.environ.get("VKCU_ROOT", Path(__file__).resolve().parents[2]))
VKCU = os.environ.get("VKCU", str(ROOT / "build" / "vkcu"))
MEDIA = Path(os.environ.get("MEDIA", ROOT / "media" / "gen"))
CONFORMANCE = Path(os.environ.get("VKCU_CONFORMANCE", ROOT / "media" / "conformance"))


def clip(name: str) -> str:
    p = MEDIA / name
    if not p.exists():
        pytest.skip(f"{p} missing (make media)")
    return str(p)


def vkcu_cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """The command line, for references the package must agree with."""
    r = subprocess.run([VKCU, *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"vkcu {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    return r


def cli_hashes(path: str, *extra: str):
    """(md5, pts) of each frame line of `vkcu hash PATH`."""
    out = vkcu_cli("hash", path, "--backend", "cpu", *extra).stdout
    rows = []
    for line in out.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        c = [x.strip() for x in line.split(",")]
        rows.append((c[5], int(c[2])))
    return rows
