"""The one way ctxtools runs another program: ``ctx-stash -- CMD``, the summarizer of
``ctx-compact --summarizer`` and the embedding command of ``--embed-cmd`` all start here.

Every command runs from an argv list (never through a shell) in a process group of its
own, so that stopping it stops what it started too: no child outlives the run.

* ``parse_argv`` splits an option's command string by shell quoting rules.
* ``start`` starts it and turns "cannot start" into an error with a shell's exit status:
  ``CommandNotFoundError`` (127) when it does not exist, ``CommandNotExecutableError``
  (126) when it exists but cannot be run.
* ``stop`` passes a signal on to the group, waits ``GRACE_SECONDS``, then kills what is
  left; ``kill`` kills the group at once. Both reap the child.
* ``signals_caught`` installs a handler for SIGTERM, SIGHUP and SIGINT for a block;
  ``watching`` does it from before the command starts, holding a signal that comes while
  it starts until it is known; with ``forward`` (``ctx-stash -- CMD``) a signal is passed
  on to the command's group at once and the caller reads its output to the end.
* ``run`` is the bounded run: INPUT on stdin, at most CAP bytes of stdout and the last
  STDERR_TAIL bytes of stderr kept, a deadline. A run over its cap or its deadline is
  killed (the whole group). Ctrl-C kills it before a KeyboardInterrupt goes on; SIGTERM
  or SIGHUP kill it, then the process ends by that signal, as it would have without a
  child. (A signal the caller ignores or handles itself is left alone.)
* ``run_text`` is ``run`` on a text, told as a ``RunOutcome``: ok, or the reason why not
  in words (the summarizer's and the embedding command's messages).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

from ctxtools.errors import (
    CommandError,
    CommandNotExecutableError,
    CommandNotFoundError,
    UsageError,
)

GRACE_SECONDS = 2.0
FORWARDED = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
STDERR_TAIL = 8192  # bytes of a run's stderr kept by default (its last line names the error)
_CHUNK = 1 << 16


class Signalled(BaseException):
    """Raised by a handler of ``signals_caught`` to leave the code waiting on a command.
    A BaseException, so that no ``except Exception`` on the way swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def parse_argv(command: str, option: str) -> list[str]:
    """COMMAND, as OPTION gave it, split into an argv by shell quoting rules (it is never
    given to a shell). UsageError, naming OPTION, for bad quoting or an empty command."""
    import shlex

    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise UsageError(f"{option}: {exc}") from None
    if not argv:
        raise UsageError(f"{option}: empty command")
    return argv


def start(
    argv: Sequence[str],
    *,
    stdin: Any = None,
    stdout: Any = None,
    stderr: Any = None,
    new_session: bool = False,
    cwd: str | None = None,
) -> subprocess.Popen:
    """Start ARGV (no shell) as the leader of a new process group, in CWD (None: this
    process's directory); the streams are as ``subprocess.Popen`` takes them. NEW_SESSION
    also detaches it from the terminal (a command fed on a pipe that must never read the
    terminal).

    Raises CommandNotFoundError (127) or CommandNotExecutableError (126), each with the
    system's reason as ``detail``."""
    group: dict[str, Any] = {"start_new_session": True} if new_session else {"process_group": 0}
    name = argv[0] if argv else ""
    try:
        return subprocess.Popen(
            list(argv), stdin=stdin, stdout=stdout, stderr=stderr, cwd=cwd, **group
        )
    except FileNotFoundError as exc:
        err: CommandError = CommandNotFoundError(f"{name}: command not found", detail=_why(exc))
    except PermissionError as exc:
        err = CommandNotExecutableError(
            f"{name}: permission denied (not executable)", detail=_why(exc)
        )
    except OSError as exc:
        err = CommandNotExecutableError(f"{name}: cannot run: {_why(exc)}", detail=_why(exc))
    raise err


def _why(exc: OSError) -> str:
    return str(exc.strerror or exc)


def stop(proc: subprocess.Popen, signum: int, grace: float = GRACE_SECONDS) -> None:
    """Pass SIGNUM on to PROC's group, give it GRACE seconds, then kill what is left."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signum)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace)
    # The leader may be gone while others of its group live on: kill the group anyway.
    kill(proc)


def kill(proc: subprocess.Popen) -> None:
    """SIGKILL PROC's process group (the command and anything it started), then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        with contextlib.suppress(OSError):
            proc.kill()
    proc.wait()


@contextlib.contextmanager
def signals_caught(
    handler: Callable[[int, Any], None], signals: Sequence[int] = FORWARDED
) -> Iterator[None]:
    """HANDLER for SIGNALS inside the block, the previous handlers restored after it.
    Outside the main thread (where Python cannot set handlers) nothing is installed."""
    import threading

    old: dict[int, Any] = {}
    try:
        if threading.current_thread() is threading.main_thread():
            for s in signals:
                old[s] = signal.signal(s, handler)
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


class Watch:
    """The signals of ``watching``: raised as Signalled once the command has started
    (``start``) and until ``disarm``; held in ``held`` before and after. A signal that
    comes while the command is being started is held, then raised by ``start`` with the
    command known as ``proc``: no window in which a signal would leave it running.

    With FORWARD, a signal is not raised: it is passed on to the command's group at once
    and kept in ``got``, and what is left of the group is killed ``GRACE_SECONDS`` later
    (at once on a second signal). The caller goes on reading the command's output to its
    end, so that nothing it printed is lost, then calls ``finish``."""

    def __init__(self, forward: bool = False) -> None:
        self.armed = False
        self.forward = forward
        self.held: list[int] = []
        self.got: list[int] = []
        self.proc: subprocess.Popen | None = None
        self.timer: Any = None

    def handler(self, signum: int, _frame: object) -> None:
        if not self.armed:
            self.held.append(signum)
        elif self.forward:
            self._pass_on(signum)
        else:
            raise Signalled(signum)

    def _pass_on(self, signum: int) -> None:
        import threading

        assert self.proc is not None
        first = not self.got
        self.got.append(signum)
        if not first:
            _killpg(self.proc.pid, signal.SIGKILL)
            return
        _killpg(self.proc.pid, signum)
        self.timer = threading.Timer(GRACE_SECONDS, _killpg, (self.proc.pid, signal.SIGKILL))
        self.timer.daemon = True
        self.timer.start()

    def start(self, argv: Sequence[str], **kw: Any) -> subprocess.Popen:
        """``start(ARGV, **KW)``, then Signalled for a signal that came meanwhile (with
        FORWARD: that signal passed on)."""
        self.proc = start(argv, **kw)
        self.armed = True
        if self.held:
            signum = self.held.pop(0)
            if not self.forward:
                raise Signalled(signum)
            self._pass_on(signum)
        return self.proc

    def disarm(self) -> None:
        """From now on signals are held (the caller reads ``held``), not raised."""
        self.armed = False

    def finish(self) -> None:
        """After a forwarded signal, once the command is reaped: no kill is pending and
        nothing of its group outlives it."""
        if self.timer is not None:
            self.timer.cancel()
        if self.got and self.proc is not None:
            _killpg(self.proc.pid, signal.SIGKILL)


def _killpg(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


@contextlib.contextmanager
def watching(signals: Sequence[int] = FORWARDED, *, forward: bool = False) -> Iterator[Watch]:
    """A Watch over SIGNALS for the block (start the command with ``Watch.start``). When
    the command could not start, a signal held meanwhile is sent again once the previous
    handlers are back, so that it acts as it would have."""
    watch = Watch(forward)
    try:
        with signals_caught(watch.handler, signals):
            yield watch
    except CommandError:
        if watch.held and watch.proc is None:
            os.kill(os.getpid(), watch.held[0])
        raise


class Completed(NamedTuple):
    """What ``run`` got. ``returncode`` is None when the run was stopped (``timed_out`` or
    ``over_cap``); negative: the command was killed by that signal."""

    returncode: int | None
    stdout: bytes
    stderr_tail: bytes
    timed_out: bool = False
    over_cap: bool = False


def run(
    argv: Sequence[str],
    input: bytes,
    *,
    timeout: float,
    cap: int,
    stderr_tail: int = STDERR_TAIL,
) -> Completed:
    """Run ARGV with INPUT on stdin until it exits, TIMEOUT seconds pass, or its stdout
    exceeds CAP bytes; keep its stdout and the last STDERR_TAIL bytes of its stderr.

    The command runs in a new session (no terminal). Raises CommandNotFoundError or
    CommandNotExecutableError when it cannot start."""

    # Only the signals that would end this process anyway (or raise KeyboardInterrupt):
    # an ignored SIGHUP (nohup) stays ignored, and a caller's own handler stays in charge.
    ending = [s for s in (signal.SIGTERM, signal.SIGHUP) if signal.getsignal(s) == signal.SIG_DFL]
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        ending.append(signal.SIGINT)
    watch: Watch | None = None
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, ())  # (the caller's, unchanged)
    try:
        with watching(ending) as watch:
            proc = watch.start(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                new_session=True,
            )
            return _collect(proc, input, timeout, cap, stderr_tail)
    except Signalled as sig:
        # The caller's signal mask again: a signal caught inside ``start_thread``'s window
        # (its handler runs in this thread whichever thread took it) can raise before the
        # window's mask is restored, and a SIGTERM sent here next then stayed pending (the
        # caller exited 143 instead of ending by it, under load), a SIGINT ignored after.
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if watch is not None and watch.proc is not None and watch.proc.returncode is None:
            kill(watch.proc)  # the signal came before _collect watched it
        if sig.signum == signal.SIGINT:
            raise KeyboardInterrupt from None
        # The caller's disposition is back (the default): end as it says.
        os.kill(os.getpid(), sig.signum)
        raise SystemExit(128 + sig.signum) from None  # only if the signal is blocked


def _collect(proc: subprocess.Popen, data: bytes, timeout: float, cap: int, tail: int) -> Completed:
    """The reading half of ``run``: stdin fed by a thread, stdout and stderr read as they
    come; PROC's group is killed unless it ended by itself and closed its pipes."""
    import selectors
    import threading
    import time

    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None

    def feed() -> None:
        # OSError: it stopped reading (exited, or was killed), which is its own business.
        with contextlib.suppress(OSError):
            proc.stdin.write(data)  # type: ignore[union-attr]
        with contextlib.suppress(OSError):
            proc.stdin.close()  # type: ignore[union-attr]

    writer = threading.Thread(target=feed, daemon=True)
    out: list[bytes] = []
    size = 0
    err = bytearray()
    stopped = ""  # "timeout" or "cap"
    deadline = time.monotonic() + timeout
    finished = False  # False while an exception (Ctrl-C, a signal) leaves the loop
    try:
        start_thread(writer)
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            sel.register(proc.stderr, selectors.EVENT_READ)
            while not stopped and sel.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    stopped = "timeout"
                    break
                for key, _ in sel.select(left):
                    chunk = os.read(key.fd, _CHUNK)
                    if not chunk:
                        sel.unregister(key.fileobj)
                    elif key.fileobj is proc.stdout:
                        size += len(chunk)
                        if size > cap:
                            stopped = "cap"
                            break
                        out.append(chunk)
                    else:
                        err += chunk
                        del err[:-tail]
        if not stopped:
            try:
                proc.wait(max(deadline - time.monotonic(), 0))
            except subprocess.TimeoutExpired:
                stopped = "timeout"
        finished = True
    finally:
        # Still running, or given up on (what it started may hold its pipes after it exits).
        if stopped or not finished or proc.poll() is None:
            kill(proc)
        proc.stdout.close()
        proc.stderr.close()
        if writer.ident is not None:  # a signal can come before it was started
            writer.join(1.0)
    if stopped:
        return Completed(None, b"", bytes(err), stopped == "timeout", stopped == "cap")
    return Completed(proc.returncode, b"".join(out), bytes(err))


def start_thread(thread) -> None:
    """Start THREAD with the ending signals blocked in it: the kernel then delivers them to
    the main thread, whose blocking call (a select, a wait) they interrupt so that its
    handler runs. One delivered to a helper thread would wait for that call to return."""
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED)
    try:
        thread.start()  # the new thread inherits the blocked mask
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def shell_status(returncode: int) -> int:
    """RETURNCODE as a shell reports it: a process killed by signal N (Python's -N) is
    128 + N, the one convention every exit status the toolkit records or prints follows."""
    return 128 - returncode if returncode < 0 else returncode


def _status_words(returncode: int) -> str:
    """``exited with status 3``, or ``killed by SIGKILL (status 137)``."""
    if returncode < 0:
        import signal

        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"killed by {name} (status {shell_status(returncode)})"
    return f"exited with status {returncode}"


class RunOutcome(NamedTuple):
    """A bounded run as a caller judges it: ``ok`` (it exited 0 within its bounds), its
    ``output`` as text, and when not ok the ``reason`` in words."""

    ok: bool
    output: str = ""
    reason: str | None = None
    exit_status: int | None = None


def run_text(argv: Sequence[str], text: str, *, timeout: float, cap: int) -> RunOutcome:
    """``run`` with TEXT (UTF-8) on stdin, told as a RunOutcome: not ok when the command
    cannot start, is stopped (TIMEOUT seconds, CAP bytes of output) or exits non-zero --
    then the reason ends with the last line of its stderr."""
    try:
        done = run(argv, text.encode("utf-8", "surrogatepass"), timeout=timeout, cap=cap)
    except CommandError as exc:
        return RunOutcome(False, reason=f"cannot run {argv[0]!r}: {exc.detail}")
    if done.timed_out:
        return RunOutcome(False, reason=f"timed out after {timeout:g} s")
    if done.over_cap:
        return RunOutcome(
            False,
            reason=f"wrote more than {cap:,} bytes, longer than the "
            f"{len(text):,} characters it summarises could need: stopped",
        )
    output = done.stdout.decode("utf-8", "replace")
    if done.returncode != 0:
        last = done.stderr_tail.decode("utf-8", "replace").strip().splitlines()
        tail = f": {_clip(last[-1], 120)}" if last else ""
        return RunOutcome(
            False,
            output,
            f"{_status_words(done.returncode)}{tail}",
            shell_status(done.returncode),
        )
    return RunOutcome(True, output, None, 0)


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def hand_off(
    argv: Sequence[str], data: bytes, *, timeout: float, tail: int = STDERR_TAIL
) -> Completed:
    """Give DATA to ARGV on stdin and wait for it to exit, leaving what it forks to run on
    (a clipboard tool -- xclip, xsel, wl-copy -- forks a process that holds the selection
    until another program takes it). Its stdout is discarded and its stderr kept in a
    file, not a pipe, so a forked process holding them open does not keep this waiting;
    the last TAIL bytes of stderr come back. After TIMEOUT seconds, or on a signal, the
    whole group is killed. Raises CommandNotFoundError or CommandNotExecutableError."""
    import tempfile

    with tempfile.TemporaryFile() as err:
        proc = start(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=err,
            new_session=True,
        )
        try:
            proc.communicate(data, timeout=timeout)
        except subprocess.TimeoutExpired:
            kill(proc)
            return Completed(None, b"", _tail_of(err, tail), timed_out=True)
        except BaseException:
            kill(proc)
            raise
        return Completed(proc.returncode, b"", _tail_of(err, tail))


def _tail_of(f, n: int) -> bytes:
    f.seek(0, os.SEEK_END)
    f.seek(max(f.tell() - n, 0))
    return f.read()
