# SPDX-License-Identifier: GPL-2.0-or-later
"""docs/python.md's installing steps as a newcomer follows them: the
virtual environment made with --system-site-packages needs the system
Python with numpy, the page says so and gives the check, and the check and
the environment do what the page says with the Python that runs these tests
(one with numpy)."""
import re
import subprocess
import sys

import pytest

from vkcutest import ROOT


def page():
    return (ROOT / "docs" / "python.md").read_text()


def test_the_venv_step_names_what_it_needs_and_the_check():
    text = page()
    step = text[text.index("--system-site-packages"):]
    step = step[:step.index("\n### ")]
    flat = " ".join(step.split())
    assert "with numpy installed in it" in flat and "python3-numpy" in flat, step[:800]
    checks = re.findall(r"```sh\n *(python3 -c '[^']*import[^']*numpy[^']*')\n *```", step)
    assert checks, "no check command for numpy after the venv step"
    # the check, run with this Python: it prints the interpreter and numpy's version
    code = re.match(r"python3 -c '([^']*)'", checks[0]).group(1)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    import numpy
    assert out == [sys.executable, numpy.__version__]
    assert "ModuleNotFoundError: No module named 'numpy'" in flat


def test_the_venv_sees_numpy(tmp_path):
    import os

    import numpy
    env = tmp_path / "env"
    r = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(env)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"{sys.executable} cannot make a virtual environment: {r.stderr.strip()[-200:]}")
    # The page's promise is for a numpy in the folders a venv is lent (the
    # interpreter's site folders). One found another way (PYTHONPATH, a .pth
    # or sitecustomize of its own, as on the GPU machine's image) is not lent.
    home = os.path.dirname(os.path.dirname(os.path.abspath(numpy.__file__)))
    seen = subprocess.run([str(env / "bin" / "python"), "-c", "import sys; print(chr(10).join(sys.path))"],
                          capture_output=True, text=True, check=True, env={"PATH": os.environ.get("PATH", "")})
    if home not in [os.path.abspath(d) for d in seen.stdout.splitlines() if d]:
        pytest.skip(f"this Python's numpy is in {home}, which a venv made from {sys.executable} is not lent")
    subprocess.run([str(env / "bin" / "python"), "-c", "import numpy"], check=True,
                   env={"PATH": os.environ.get("PATH", "")})
