# SPDX-License-Identifier: GPL-2.0-or-later
"""Ctrl-C during vkcu.hash or vkcu.compare stops the job and raises
KeyboardInterrupt, as Ctrl-C during a reader's iteration does: no output of
the job is left, and the process and the context go on working.

SIGINT is sent to the process (as a terminal's Ctrl-C is) from inside the
job, once it has reported progress (hash) or logged its set-up (compare),
and the job's thread then waits there until the package has asked the job
to stop: the job cannot have finished before the signal was handled, on
any machine at any load, and nothing is timed."""
import os
import signal
import threading

import pytest

import vkcu
from vkcutest import cli_hashes, clip


@pytest.fixture
def sigint_raises():
    """SIGINT raises KeyboardInterrupt during the test (a process started in
    the background by a shell may have it ignored)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


class CtrlC:
    """Sends SIGINT once, from the job's thread, then holds that thread until
    the package has asked the context's job to stop."""

    def __init__(self):
        self.ctx = None
        self.sent = 0
        self.reports = []
        self.lock = threading.Lock()

    def __call__(self, report=None):
        if report is not None:
            self.reports.append(report)
        with self.lock:
            first = not self.sent
            self.sent += first
        if first:
            os.kill(os.getpid(), signal.SIGINT)
            stop_requested = getattr(self.ctx, "_stop_requested", None)
            if stop_requested is not None:
                # a guard against a hang, not a measure: the request comes at once
                assert stop_requested.wait(300), "the job was not asked to stop"


def test_ctrl_c_stops_hash(sigint_raises):
    path = clip("long.mp4")
    ctrl_c = CtrlC()
    ctx = vkcu.Context("cpu", progress=ctrl_c)
    ctrl_c.ctx = ctx
    with pytest.raises(KeyboardInterrupt):
        vkcu.hash(path, chain="denoise=nlm", context=ctx)
    assert ctrl_c.sent == 1 and ctrl_c.reports, "no progress was reported"
    assert not any(r.final for r in ctrl_c.reports), "the job ran to its end"
    assert ctrl_c.reports[0].frames < ctrl_c.reports[0].expected
    # the context and the process go on: the same context hashes a clip whole
    small = clip("h264-aac.mp4")
    got = vkcu.hash(small, context=ctx)
    assert [(h.hash, h.pts) for h in got] == cli_hashes(small)
    assert ctrl_c.sent == 1 and ctrl_c.reports[-1].final
    with vkcu.open(small, backend="cpu") as r:
        assert sum(1 for _ in r) == 50


def test_ctrl_c_stops_compare(sigint_raises, tmp_path):
    import logging
    a = clip("long.mp4")
    ctrl_c = CtrlC()

    class OnSetUp(logging.Handler):
        def emit(self, record):
            if "set-up:" in record.getMessage():
                ctrl_c()

    handler = OnSetUp()
    logger = logging.getLogger("vkcu")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        ctx = vkcu.Context("cpu", log_level="debug")
        ctrl_c.ctx = ctx
        with pytest.raises(KeyboardInterrupt):
            vkcu.compare(a, a, chain_b="denoise=nlm", report_html=str(tmp_path / "report.html"),
                         diff_image=str(tmp_path / "worst.png"), context=ctx)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert ctrl_c.sent >= 1
    assert sorted(os.listdir(tmp_path)) == [], "an output of the interrupted comparison was left"
    # the same context compares again, to the end
    small = clip("h264-aac.mp4")
    c = vkcu.compare(small, small, context=ctx, report_html=str(tmp_path / "report.html"))
    assert c.passed and c.paired == 50 and os.path.exists(tmp_path / "report.html")
