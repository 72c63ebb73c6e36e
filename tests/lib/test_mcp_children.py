"""ctxtools.mcp.env.Children: the commands a server's ``run`` calls started, and stopping
them on cancel and shutdown -- also one that starts while they are being stopped."""

from __future__ import annotations

import subprocess
import sys

from ctxtools.mcp.env import Children

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]


def _start() -> subprocess.Popen:
    # As runner.start does: the command leads its own process group (stop signals the group).
    return subprocess.Popen(SLEEPER, start_new_session=True)


def test_stop_all_stops_what_was_added():
    kids = Children()
    proc = _start()
    kids.add(proc)
    assert kids.stop_all(grace=2.0) == 1
    assert proc.poll() is not None


def test_a_command_added_after_stop_all_is_stopped_at_once():
    # The race that left an orphan: the server stopped a call's commands while the call's
    # thread was between spawning its command and registering it (seen under load in
    # test_mcp's EOF case: ``sleep`` still alive after the server had exited).
    kids = Children()
    assert kids.stop_all() == 0
    proc = _start()
    try:
        kids.add(proc)
        assert proc.poll() is not None  # stopped (and reaped) by add itself
        assert kids.stop_all() == 0  # and not kept
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_discard_forgets_a_finished_command():
    kids = Children()
    proc = _start()
    kids.add(proc)
    kids.discard(proc)
    assert kids.stop_all() == 0
    assert proc.poll() is None
    proc.kill()
    proc.wait()
