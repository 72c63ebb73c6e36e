"""Ctrl-C and SIGTERM at many moments of a cold ctx-repomap and ctx-pack (issue 27, item 10).

A cold run of a tree of many files scans them on forked worker processes. Whenever the
signal comes (during start-up, the listing, the workers' scan, the ranking, the output):
SIGINT ends the command with one line on stderr and status 130; SIGTERM ends it by that
signal, silently, as it would end a process with no workers; no traceback either way, and
no process of the command's session is left (read from /proc). Each command starts in a
session of its own, as a terminal starts a job; a terminal's Ctrl-C goes to the whole
process group, ``kill`` to the command alone: both are tried.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import SOURCES, SOURCES_DIR

BIN = Path(sys.executable).parent
COPIES = 120  # 120 x 7 real source files: enough that the cold scan uses the workers

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def session_members(sid: int) -> list[tuple[int, str]]:
    """(pid, state) of the processes of session SID that are not yet reaped."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[3]) == sid:
            found.append((int(entry), fields[0]))
    return found


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("many")
    for k in range(COPIES):
        for rel, name in SOURCES.items():
            dest = root / f"pkg{k:03d}" / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(SOURCES_DIR / name, dest)
    return root


def argv_of(command: str) -> list[str]:
    """The command, run in the tree."""
    if command == "map":
        return [str(BIN / "ctx-repomap"), "."]
    return [str(BIN / "ctx-pack"), "-q", "fix the lexer token cache", "--tokens", "4000", "."]


def start(argv: list[str], cwd: Path, store: Path, errfile: Path) -> subprocess.Popen:
    env = dict(os.environ, CTX_STORE=str(store))  # an empty store each time: a cold run
    with open(errfile, "wb") as err, open(errfile.with_suffix(".out"), "wb") as out:
        return subprocess.Popen(
            argv, cwd=cwd, stdout=out, stderr=err, env=env, start_new_session=True
        )


def wait_for_workers(proc: subprocess.Popen, timeout: float = 60) -> bool:
    """Until the command has a child (its workers are up) or has ended; True for the first."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        if any(pid != proc.pid for pid, _ in session_members(proc.pid)):
            return True
        time.sleep(0.002)
    return False


def outcome(proc: subprocess.Popen, errfile: Path, signum: int | None) -> str:
    """What went wrong, or "" (or "finished" when it ended before the signal)."""
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return "hung"
    deadline = time.monotonic() + 2
    left = [p for p in session_members(proc.pid) if p[1] != "Z"]
    while left and time.monotonic() < deadline:  # a SIGKILLed child is gone at once
        time.sleep(0.05)
        left = [p for p in session_members(proc.pid) if p[1] != "Z"]
    for pid, _ in left:  # ours (this session): never leave them running
        os.kill(pid, signal.SIGKILL)
    err = errfile.read_text(errors="replace")
    printed = errfile.with_suffix(".out").stat().st_size
    if proc.returncode == -signal.SIGINT and not err and printed and not left:
        # It had printed its whole output when the signal came: the interpreter's shutdown
        # gives SIGINT back to the system's default action, which ends it silently.
        return "finished"
    if signum is None or proc.returncode == 0:
        return "finished" if proc.returncode == 0 and not left else f"{proc.returncode} {err}"
    wrong = []
    name = Path(proc.args[0]).name
    if signum == signal.SIGINT:
        if proc.returncode != 130:
            wrong.append(f"status {proc.returncode}")
        if err != f"{name}: interrupted\n":
            wrong.append(f"stderr {err!r}")
    else:
        if proc.returncode != -signum:
            wrong.append(f"status {proc.returncode}")
        if err:
            wrong.append(f"stderr {err!r}")
    if left:
        wrong.append(f"{len(left)} process(es) left")
    return ", ".join(wrong)


def catching_sigint(proc, timeout: float = 30.0) -> None:
    """Wait until PROC's interpreter catches SIGINT (its SigCgt mask in /proc): before that
    the system's default action applies, which no code of ours can change."""
    end = time.monotonic() + timeout
    bit = 1 << (signal.SIGINT - 1)
    while time.monotonic() < end and proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/status") as fh:
                caught = next((ln for ln in fh if ln.startswith("SigCgt:")), "")
        except OSError:
            return
        if caught and int(caught.split()[1], 16) & bit:
            return
        time.sleep(0.005)


def signal_run(argv, tree, tmp_path, signum: int | None, *, to_group, delay=None, n=0) -> str:
    """Run ARGV cold in TREE; signal it once its workers are up (DELAY None) or DELAY
    seconds after its start; what went wrong."""
    store, errfile = tmp_path / f"store{n}", tmp_path / f"err{n}"
    proc = start(argv, tree, store, errfile)
    if delay is None:
        if not wait_for_workers(proc):
            return "no workers seen: " + outcome(proc, errfile, None)
    else:
        catching_sigint(proc)
        time.sleep(delay)
    if signum is not None and proc.poll() is None:
        (os.killpg if to_group else os.kill)(proc.pid, signum)
    return outcome(proc, errfile, signum)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the workers need two CPUs")
@pytest.mark.parametrize("command", ["map", "pack"])
@pytest.mark.parametrize(
    "signum,to_group",
    [(signal.SIGINT, True), (signal.SIGINT, False), (signal.SIGTERM, False)],
    ids=["ctrl-c", "kill-int", "kill-term"],
)
def test_a_signal_while_the_workers_scan_leaves_nothing(tree, tmp_path, command, signum, to_group):
    argv = argv_of(command)
    problems = [signal_run(argv, tree, tmp_path, signum, to_group=to_group, n=n) for n in range(2)]
    assert problems == ["", ""]


@pytest.mark.parametrize("command", ["map", "pack"])
def test_ctrl_c_at_any_moment_of_a_cold_run(tree, tmp_path, command):
    """A sweep over the run, from start-up to the end (the delays are fractions of a cold
    run's own length here), Ctrl-C or SIGTERM in turn, to the whole group."""
    argv = argv_of(command)
    began = time.monotonic()
    assert signal_run(argv, tree, tmp_path, None, to_group=True, delay=0, n=99) == "finished"
    length = time.monotonic() - began
    # Each delay counts from when the interpreter catches SIGINT (signal_run): before, the
    # system's default action applies (test_ctrl_c_while_a_command_is_still_importing
    # covers the imports that follow).
    problems = {}
    delays = [0.3] + [length * f for f in (0.25, 0.5, 0.7, 0.95)]
    for n, delay in enumerate(delays):
        signum = signal.SIGTERM if n % 2 else signal.SIGINT
        got = signal_run(argv, tree, tmp_path, signum, to_group=True, delay=delay, n=n)
        if got not in ("", "finished"):
            problems[f"{signal.Signals(signum).name} at {delay:.2f}s"] = got
    assert problems == {}


def test_ctrl_c_while_a_command_is_still_importing(tmp_path):
    """Before the entry point's own handling is in place (its modules are being imported),
    Ctrl-C already gives the one line and 130, not a traceback from inside an import."""
    script = (
        "import os, signal, sys, time\n"
        "sys.argv[0] = os.path.join(sys.argv[1], 'ctx-repomap')\n"
        "import ctxtools.cli\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "time.sleep(30)\n"  # (an import that takes long)
    )
    proc = subprocess.run([sys.executable, "-c", script, str(BIN)], capture_output=True, timeout=60)
    assert (proc.returncode, proc.stderr) == (130, b"ctx-repomap: interrupted\n")


def test_ctrl_c_during_the_packages_own_first_imports(tmp_path):
    """A Ctrl-C while ``ctxtools.cli`` itself imports what it needs (``typing``: ~10 ms of
    every start) is the one line and 130 too: the early handler is installed before any
    such import (it was installed after them, and a tester's Ctrl-C at 50 ms printed a
    traceback from inside ``typing``). The SIGINT is sent by an import hook the moment
    ``typing`` is looked for."""
    script = (
        "import os, signal, sys, time\n"
        "sys.argv[0] = os.path.join(sys.argv[1], 'ctx-count')\n"
        "for name in [m for m in sys.modules if m == 'typing' or m.startswith('typing.')]:\n"
        "    del sys.modules[name]\n"
        "class Hook:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'typing':\n"
        "            os.kill(os.getpid(), signal.SIGINT)\n"
        "            time.sleep(0.5)\n"
        "        return None\n"
        "sys.meta_path.insert(0, Hook())\n"
        "import ctxtools.cli\n"
        "time.sleep(30)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, str(BIN)], capture_output=True, timeout=60)
    assert (proc.returncode, proc.stderr) == (130, b"ctx-count: interrupted\n")
