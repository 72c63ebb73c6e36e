"""ctxtools.forked: results in order from forked workers, and no worker left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import children_of

from ctxtools.forked import forked_results


def square(n: int) -> int:
    if n == 13:
        raise ValueError("thirteen")
    return n * n


def slow_square(n: int) -> int:
    time.sleep(0.01)
    return n * n


def test_the_results_come_in_order_whatever_the_jobs():
    items = [n for n in range(200) if n != 13]
    for jobs in (1, 2, 3, 7):
        assert list(forked_results(square, items, jobs, chunk=5)) == [n * n for n in items]


def test_started_is_called_once_the_children_run_and_before_any_result():
    items = list(range(60))
    seen = []
    live = lambda: seen.append(len(children_of(os.getpid())))  # noqa: E731
    results = forked_results(slow_square, items, 3, chunk=5, started=live)
    assert seen == []  # (nothing happens before the first result is asked for)
    assert next(results) == 0
    assert seen == [2]
    assert list(results) == [n * n for n in items[1:]] and seen == [2]
    # one process: nothing runs beside this one, and STARTED is not called
    assert list(forked_results(square, [2], 3, started=lambda: seen.append(-1))) == [4]
    assert seen == [2]


def test_an_exception_in_a_worker_is_raised_here_and_no_child_is_left():
    with pytest.raises(ValueError, match="thirteen"):
        list(forked_results(square, list(range(40)), 3, chunk=4))  # 13 is a child's
    assert children_of(os.getpid()) == []


def test_a_consumer_that_stops_early_leaves_no_child():
    results = forked_results(slow_square, list(range(12, 0, -1)) * 50, 3, chunk=2)
    assert next(results) == 144
    assert children_of(os.getpid())  # the workers are running
    results.close()
    assert children_of(os.getpid()) == []


SCRIPT = """
import os, sys, time
from ctxtools.forked import forked_results

def slow(n):
    time.sleep(0.05)
    return n

print(os.getpid(), flush=True)
for n in forked_results(slow, list(range(400)), 3, chunk=2):
    if n == 10:
        print("running", flush=True)
"""


def _start(tmp_path: Path) -> tuple[subprocess.Popen, list[int]]:
    """A process iterating forked_results, once its workers run; and their pids."""
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stdout is not None
    proc.stdout.readline()
    assert proc.stdout.readline() == b"running\n"
    workers = children_of(proc.pid)
    assert len(workers) == 2
    return proc, workers


def _gone(pids: list[int]) -> bool:
    end = time.monotonic() + 5
    while time.monotonic() < end:
        alive = []
        for pid in pids:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state != "Z":
                alive.append(pid)
        if not alive:
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize(
    "signum,status",
    [
        (signal.SIGINT, -signal.SIGINT),
        (signal.SIGTERM, -signal.SIGTERM),
        (signal.SIGKILL, -signal.SIGKILL),
    ],
)
def test_a_signal_to_the_parent_alone_ends_its_workers(tmp_path, signum, status):
    """kill -INT, -TERM or -9 to the parent: its workers do not outlive it (with SIGKILL:
    the kernel's parent-death signal; without it they ran on under PID 1)."""
    proc, workers = _start(tmp_path)
    os.kill(proc.pid, signum)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == status
    if signum == signal.SIGINT:  # Python's own KeyboardInterrupt: the script does not catch it
        assert err.rstrip().endswith(b"KeyboardInterrupt")
    else:
        assert err == b""
    assert _gone(workers)


def test_ctrl_c_to_the_group_ends_the_workers_quietly(tmp_path):
    """A terminal's Ctrl-C reaches the workers too: they end at once, without a traceback
    of their own (the parent's KeyboardInterrupt is the script's one)."""
    proc, workers = _start(tmp_path)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert err.count(b"Traceback") == 1
    assert _gone(workers)


# --- Background: one computation in a child, its posts read here ----------------------


def _build_table(post):
    """Posts where it runs and what it built, in two steps."""
    post(("started", os.getpid()))
    table = {n: n * n for n in range(100)}
    post(("built", len(table)))


def test_background_runs_in_a_child_and_posts_in_order():
    from ctxtools.forked import Background

    with Background(_build_table) as job:
        tag, pid = job.receive()
        assert tag == "started" and pid != os.getpid()
        assert job.receive() == ("built", 100)  # the posts, in order
        with pytest.raises(LookupError):
            job.receive()  # START posted two
        with pytest.raises(LookupError):
            job.receive()  # (and says so again, without waiting)
        _, status = os.waitpid(pid, 0)  # it ends once START has: reaped here, not killed
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert children_of(os.getpid()) == []
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored


def _fail(post):
    post("scanned")
    raise ValueError("the map could not be ranked")


def _die(post):
    post("scanned")
    os._exit(3)


def test_background_raises_what_the_child_raised_or_that_it_died():
    from ctxtools.forked import Background

    with Background(_fail) as job:
        assert job.receive() == "scanned"  # what it posted before it failed
        with pytest.raises(ValueError, match="could not be ranked"):
            job.receive()
        with pytest.raises(LookupError):
            job.receive()  # nothing more will come: said at once, not waited for
    with Background(_die) as job:
        assert job.receive() == "scanned"
        with pytest.raises(RuntimeError, match="ended early"):
            job.receive()
    assert children_of(os.getpid()) == []


def _slow_start(post):
    time.sleep(30)


def test_background_closed_while_at_work_leaves_no_child():
    from ctxtools.forked import Background

    job = Background(_slow_start)
    assert len(children_of(os.getpid())) == 1
    began = time.monotonic()
    job.close()  # killed, not waited for
    assert time.monotonic() - began < 5
    assert children_of(os.getpid()) == []
    job.close()  # twice: nothing more to do


def test_a_signal_handled_inside_a_blocked_window_still_ends_the_parent():
    # The handler runs in the main thread at its next instruction, whichever thread took
    # the signal -- also inside a window that has the ending signals blocked (a fork's, a
    # helper thread's start) before the window restores the mask: the SIGTERM it sends
    # itself must end the process then, not stay pending (exit 143).
    from helpers import ends_by_sigterm

    ends_by_sigterm([
        "from ctxtools import forked",
        "signal.pthread_sigmask(signal.SIG_BLOCK, forked.ENDING)",
        "forked._on_signal(signal.SIGTERM, None)",
    ])
