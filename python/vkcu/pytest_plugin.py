# SPDX-License-Identifier: GPL-2.0-or-later
"""pytest plugin: the ``vkcu_golden`` fixture compares a clip's frames with
its golden (vkcu.testing) and fails naming every differing frame, its PSNR
and the path of its difference image.

    def test_denoise(vkcu_golden):
        vkcu_golden("clips/a.mp4", chain="denoise=tnr:sigma=6")
        vkcu_golden("clips/long.mp4", start="250f", frames=10)   # a part of a clip

Options: ``--vkcu-update`` records the goldens instead of checking them;
``--vkcu-backend cpu|gpu|auto``. ini keys: ``vkcu_golden_dir`` (default:
``golden`` beside each test file), ``vkcu_backend``. Installed with the
package (entry point ``pytest11``), or ``-p vkcu.pytest_plugin``.
"""
from __future__ import annotations

import os

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("vkcu")
    group.addoption("--vkcu-update", action="store_true", default=False,
                    help="record the golden frames (hashes, frames, manifest) instead of checking them")
    group.addoption("--vkcu-backend", default=None, choices=("auto", "cpu", "gpu"),
                    help="the backend golden checks decode and process on (default: ini vkcu_backend, else auto)")
    parser.addini("vkcu_golden_dir", "folder of the goldens (relative to the ini file); default: golden/ beside "
                  "each test file", default="")
    parser.addini("vkcu_backend", "backend of golden checks (auto, cpu, gpu)", default="auto")


def pytest_report_header(config):
    try:
        import vkcu
        from vkcu import _lib
        return f"vkcu {vkcu.__version__}, libvkcu {vkcu.library_version} ({_lib.lib._name})"
    except Exception as e:  # noqa: BLE001 - a header, never a failure
        return f"vkcu: not loadable: {e}"


class _Fixture:
    def __init__(self, golden, default_name):
        self.golden = golden
        self._default = default_name
        self._used = {}

    def _name(self, name):
        if name:
            return name
        n = self._used.get(self._default, 0) + 1
        self._used[self._default] = n
        return self._default if n == 1 else f"{self._default}-{n}"

    def check(self, input_path, *, chain=None, name=None, min_psnr=None, start=None, duration=None, frames=None,
              keep_frames=True):
        return self.golden.check(str(input_path), name=self._name(name), chain=chain, min_psnr=min_psnr,
                                 start=start, duration=duration, frames=frames, keep_frames=keep_frames)

    __call__ = check

    @property
    def directory(self):
        return self.golden.directory


@pytest.fixture
def vkcu_golden(request, tmp_path):
    """Checks a clip's frames against a golden; see vkcu.testing."""
    from vkcu.testing import Golden
    cfg = request.config
    d = cfg.getini("vkcu_golden_dir")
    if d:
        base = os.path.dirname(str(cfg.inipath)) if getattr(cfg, "inipath", None) else str(cfg.rootpath)
        directory = os.path.join(base, d)
    else:
        directory = os.path.join(os.path.dirname(str(request.node.fspath)), "golden")
    backend = cfg.getoption("vkcu_backend") or cfg.getini("vkcu_backend") or "auto"
    golden = Golden(directory, update=cfg.getoption("vkcu_update"), backend=backend, out_dir=str(tmp_path))
    return _Fixture(golden, request.node.name)
