# SPDX-License-Identifier: GPL-2.0-or-later
"""The package's ranges are the command line's: every keyword argument that
shares an option with `vkcu` (vkcu/_args.py, RANGES) has that option's range
in `vkcu VERB --dump-options` (src/cli/table.c), and max_held, which the
command line has no option for, has the C API's: the library takes its
largest and refuses one more."""
import ctypes

import pytest

import vkcu
from vkcu import _args, _lib
from vkcutest import clip, vkcu_cli


def cli_ranges(verb):
    out = {}
    for line in vkcu_cli(verb, "--dump-options").stdout.splitlines():
        c = line.split("\t")
        if len(c) >= 6 and c[2] in ("int", "number", "pick"):  # pick: a number in a range, or a word
            out[c[0]] = (float(c[4]), float(c[5]))
    return out


@pytest.mark.parametrize("name", [n for n, (_, _, opt) in _args.RANGES.items() if opt])
def test_range_is_the_command_line_s(name):
    lo, hi, opt = _args.RANGES[name]
    verbs, option = (opt.split()[:1], opt.split()[1]) if " " in opt else (("hash", "compare"), opt)
    theirs = next((r[option] for r in map(cli_ranges, verbs) if option in r), None)
    assert theirs, f"no {option} in vkcu {' or '.join(verbs)}"
    assert (float(lo), float(hi)) == theirs, f"{name}: package [{lo}, {hi}], vkcu {option} {theirs}"


def test_max_held_range_is_the_library_s():
    lo, hi, opt = _args.RANGES["max_held"]
    assert opt is None
    ctx = vkcu.Context("cpu")
    path = _lib.path_arg("path", clip("h264-aac.mp4"))
    for value, ok in ((lo, True), (hi, True), (lo - 1, False), (hi + 1, False)):
        p = _lib.ReaderParams()
        _lib.lib.vkcu_default_reader_params(ctypes.byref(p))
        p.input = path
        p.max_held = value
        r = ctypes.c_void_p()
        err = ctypes.create_string_buffer(512)
        ret = _lib.lib.vkcu_reader_open(ctx.handle, ctypes.byref(p), ctypes.byref(r), err, len(err))
        assert (ret == 0) == ok, (value, ret, err.value)
        _lib.lib.vkcu_reader_close(ctypes.byref(r))
    ctx.close()
