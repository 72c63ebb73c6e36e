"""ctxtools.runner with real processes: 126/127, timeouts, caps, signals, no orphans."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctxtools import runner
from ctxtools.errors import (
    CommandError,
    CommandNotExecutableError,
    CommandNotFoundError,
    ExitStatus,
    UsageError,
)

REPO = Path(__file__).resolve().parents[2]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def _wait_gone(pid: int) -> None:
    """Return once PID has died (SIGKILL is delivered asynchronously). A watchdog, not a
    timing check: a killed process is gone in milliseconds, one never killed runs 300 s."""
    for _ in range(6000):
        if not _alive(pid):
            return
        time.sleep(0.01)
    state = Path(f"/proc/{pid}/stat").read_text()
    os.kill(pid, signal.SIGKILL)
    pytest.fail(f"process {pid} outlived its run: {state}")


def _wait_for(path: Path, proc: subprocess.Popen | None = None) -> str:
    """The content of PATH once a process has written it (a line ending in a newline)."""
    for _ in range(6000):
        if path.exists():
            text = path.read_text()
            if text.endswith("\n"):
                return text
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"exited early: {proc.communicate()}")
        time.sleep(0.01)
    pytest.fail(f"{path} was never written")


# --- starting: 127 and 126 ------------------------------------------------------------------


def test_a_missing_command_is_127():
    with pytest.raises(CommandNotFoundError) as exc:
        runner.start(["no-such-command-xyz", "-v"])
    assert exc.value.exit_status == ExitStatus.COMMAND_NOT_FOUND == 127
    assert str(exc.value) == "no-such-command-xyz: command not found"
    assert exc.value.detail == "No such file or directory"


def test_a_file_without_the_execute_bit_is_126(tmp_path):
    script = tmp_path / "script.sh"
    script.write_text("echo hi\n")
    script.chmod(0o644)
    with pytest.raises(CommandNotExecutableError) as exc:
        runner.start([str(script)])
    assert exc.value.exit_status == ExitStatus.COMMAND_NOT_EXECUTABLE == 126
    assert str(exc.value) == f"{script}: permission denied (not executable)"
    assert exc.value.detail == "Permission denied"


def test_a_directory_is_126(tmp_path):
    with pytest.raises(CommandNotExecutableError) as exc:
        runner.start([str(tmp_path)])
    assert exc.value.exit_status == 126
    assert str(exc.value) == f"{tmp_path}: permission denied (not executable)"


def test_an_executable_that_is_no_program_is_126(tmp_path):
    """Executable bytes with no #! line and no known format: execve says ENOEXEC."""
    blob = tmp_path / "blob"
    blob.write_bytes(b"\x7fELF\x00\x01\x02 not really a program\n")
    blob.chmod(0o755)
    with pytest.raises(CommandNotExecutableError) as exc:
        runner.start([str(blob)])
    assert str(exc.value) == f"{blob}: cannot run: Exec format error"
    assert isinstance(exc.value, CommandError) and exc.value.exit_status == 126


def test_parse_argv_splits_like_a_shell_and_names_the_option():
    assert runner.parse_argv("llm -m 'qwen 7b' -s \"a b\"", "--x") == [
        "llm",
        "-m",
        "qwen 7b",
        "-s",
        "a b",
    ]
    with pytest.raises(UsageError) as exc:
        runner.parse_argv("   ", "--embed-cmd")
    assert str(exc.value) == "--embed-cmd: empty command"
    with pytest.raises(UsageError) as exc:
        runner.parse_argv("llm 'unclosed", "--summarizer")
    assert str(exc.value) == "--summarizer: No closing quotation"


# --- the bounded run ------------------------------------------------------------------------


def test_run_gives_stdout_stdin_and_the_status():
    code = "import sys; data = sys.stdin.buffer.read(); sys.stdout.buffer.write(data[::-1]); "
    code += "sys.exit(4)"
    done = runner.run([sys.executable, "-c", code], "日本\xff".encode(), timeout=60, cap=100)
    assert done.returncode == 4
    assert done.stdout == "日本\xff".encode()[::-1]
    assert not done.timed_out and not done.over_cap


def test_a_hanging_command_is_killed_at_its_deadline_with_its_children(tmp_path):
    pids = tmp_path / "pids"
    script = f"sleep 300 & echo $$ $! > {pids}; wait"
    done = runner.run(["sh", "-c", script], b"", timeout=0.5, cap=1000)
    assert done.timed_out and not done.over_cap
    assert done.returncode is None and done.stdout == b""
    for pid in map(int, pids.read_text().split()):
        _wait_gone(pid)


def test_output_over_the_cap_stops_the_run():
    done = runner.run(["yes"], b"", timeout=600, cap=10_000)
    assert done.over_cap and not done.timed_out
    assert done.returncode is None and done.stdout == b""


def test_only_the_tail_of_stderr_is_kept():
    code = (
        "import sys\n"
        "for k in range(5000): sys.stderr.write(f'line {k}\\n')\n"
        "sys.stderr.write('the last words\\n'); sys.exit(2)"
    )
    done = runner.run([sys.executable, "-c", code], b"", timeout=60, cap=100, stderr_tail=64)
    assert done.returncode == 2
    assert len(done.stderr_tail) == 64
    assert done.stderr_tail.endswith(b"line 4999\nthe last words\n")


def test_run_text_words_each_failure():
    ok = runner.run_text([sys.executable, "-c", "print(input())"], "hi\n", timeout=60, cap=100)
    assert ok == runner.RunOutcome(True, "hi\n", None, 0)
    bad = runner.run_text(
        [sys.executable, "-c", "import sys; print('x', file=sys.stderr); sys.exit(9)"],
        "",
        timeout=60,
        cap=100,
    )
    assert bad == runner.RunOutcome(False, "", "exited with status 9: x", 9)
    # issue 28.7: a command killed by a signal is 128 + N, as a shell says, never -N
    killed = runner.run_text(["sh", "-c", "kill -KILL $$"], "", timeout=60, cap=100)
    assert killed == runner.RunOutcome(False, "", "killed by SIGKILL (status 137)", 137)
    missing = runner.run_text(["/no/such/tool"], "x", timeout=60, cap=100)
    assert missing.reason == "cannot run '/no/such/tool': No such file or directory"
    big = runner.run_text(["yes"], "abc", timeout=60, cap=100)
    assert big.reason == (
        "wrote more than 100 bytes, longer than the 3 characters it summarises could need: stopped"
    )


# --- stopping and signals -------------------------------------------------------------------

TRAP = """
import signal, sys, time
def on(signum, frame):
    open(sys.argv[1], "a").write(signal.Signals(signum).name + "\\n")
    sys.exit(3)
signal.signal(signal.SIGINT, on)
open(sys.argv[2], "w").write("ready\\n")
time.sleep(300)
"""


def test_stop_forwards_the_signal_to_the_command(tmp_path):
    got, ready = tmp_path / "got", tmp_path / "ready"
    proc = runner.start([sys.executable, "-c", TRAP, str(got), str(ready)])
    _wait_for(ready, proc)
    runner.stop(proc, signal.SIGINT, grace=60)
    assert got.read_text() == "SIGINT\n"
    assert proc.returncode == 3


def test_stop_kills_a_command_that_ignores_the_signal(tmp_path):
    ready = tmp_path / "ready"
    code = (
        "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        f"open({str(ready)!r}, 'w').write('ready\\n'); time.sleep(300)"
    )
    proc = runner.start([sys.executable, "-c", code])
    _wait_for(ready, proc)
    runner.stop(proc, signal.SIGTERM, grace=0.2)
    assert proc.returncode == -signal.SIGKILL


# The caller: in "plain" mode with the default dispositions set here, whatever the test run
# inherited (under nohup SIGHUP comes in ignored, and a background job's SIGINT too, which
# the caller would rightly leave ignored); in "nohup" mode with SIGHUP ignored.
PARENT = """
import signal, sys
from ctxtools import runner
signal.signal(signal.SIGTERM, signal.SIG_DFL)
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGHUP, signal.SIG_IGN if sys.argv[2] == "nohup" else signal.SIG_DFL)
script = sys.argv[3]
try:
    done = runner.run(["sh", "-c", script], b"", timeout=600, cap=1000)
except KeyboardInterrupt:
    sys.exit(130)
sys.stdout.write(done.stdout.decode())
"""


def _parent(tmp_path: Path, mode: str, script: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", PARENT, str(tmp_path), mode, script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        cwd=REPO,
    )


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_the_caller_kills_the_command_then_ends_the_caller(tmp_path, sig):
    """Without a handler of its own the caller ends by the signal, as it would with no
    child -- but the command and what it started are killed first (no orphan)."""
    pids = tmp_path / "pids"
    proc = _parent(tmp_path, "plain", f"sleep 300 & echo $$ $! > {pids}; wait")
    children = [int(p) for p in _wait_for(pids, proc).split()]
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == -sig, err
    assert out == b"" and err == b""
    for pid in children:
        _wait_gone(pid)


def test_ctrl_c_kills_the_command_before_the_interrupt_goes_on(tmp_path):
    pids = tmp_path / "pids"
    proc = _parent(tmp_path, "plain", f"sleep 300 & echo $$ $! > {pids}; wait")
    children = [int(p) for p in _wait_for(pids, proc).split()]
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    for pid in children:
        _wait_gone(pid)


def test_an_ignored_sighup_stays_ignored(tmp_path):
    """Under nohup the run is not disturbed by SIGHUP: the command finishes its work."""
    pids, go = tmp_path / "pids", tmp_path / "go"
    script = f"echo $$ > {pids}; while [ ! -e {go} ]; do sleep 0.05; done; echo done"
    proc = _parent(tmp_path, "nohup", script)
    (child,) = map(int, _wait_for(pids, proc).split())
    proc.send_signal(signal.SIGHUP)
    go.write_text("")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out == b"done\n"
    _wait_gone(child)


# The caller, its writer thread started as a signal caught just before start_thread's
# window would leave it: SIGTERM blocked in this thread, Signalled raised (the handler runs
# in the main thread at its next instruction, even inside the window, before the mask is
# restored).
CAUGHT_IN_THE_WINDOW = """
import signal, sys
from ctxtools import runner
signal.signal(signal.SIGTERM, signal.SIG_DFL)
def caught(thread):
    signal.pthread_sigmask(signal.SIG_BLOCK, runner.FORWARDED)
    raise runner.Signalled(signal.SIGTERM)
runner.start_thread = caught
runner.run(["sh", "-c", "cat"], b"x", timeout=60, cap=1000)
"""


def test_a_signal_caught_while_a_helper_thread_starts_still_ends_the_caller():
    proc = subprocess.run([sys.executable, "-c", CAUGHT_IN_THE_WINDOW], cwd=REPO,
                          capture_output=True, timeout=60)  # fmt: skip
    assert proc.returncode == -signal.SIGTERM, proc.stderr  # killed by it, not exit 143


def test_a_ctrl_c_caught_while_a_helper_thread_starts_leaves_no_signal_blocked():
    code = CAUGHT_IN_THE_WINDOW.replace("signal.SIGTERM)\nrunner", "signal.SIGINT)\nrunner")
    code = code.replace(
        'runner.run(["sh", "-c", "cat"], b"x", timeout=60, cap=1000)',
        'try:\n    runner.run(["sh", "-c", "cat"], b"x", timeout=60, cap=1000)\n'
        "except KeyboardInterrupt:\n"
        "    print(sorted(signal.pthread_sigmask(signal.SIG_BLOCK, ())))\n",
    )
    assert "Signalled(signal.SIGINT)" in code and "except KeyboardInterrupt" in code
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"[]\n"  # the caller's mask: Ctrl-C and the rest deliverable again
