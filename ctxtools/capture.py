"""``ctx-stash -- CMD``: run a command, stream its output into the store, keep its status.

The command is started by ``ctxtools.runner``: without a shell, in a process group of its
own, with stdout and stderr on one pipe (interleaved as they arrive). Its output is
streamed into the store; the card records ``exit_status`` as a shell gives it (128 + N:
killed by signal N), the status ctx-stash exits with.

When ctx-stash itself gets SIGTERM, SIGHUP or SIGINT while the command runs, the signal is
forwarded to the command's process group at once; after ``runner.GRACE_SECONDS`` whatever
is left of the group is killed (SIGKILL; at once on a second signal). What the command
printed until then -- forty seconds of a test log, and whatever it says as it stops -- is
read to the end and stored as a handle whose card carries ``incomplete`` (the signal's
name), and ``Interrupted`` carries that card and the conventional status 128 + N. A
terminal's stdin is not passed on (a background process group reading it would be
stopped): the command reads /dev/null instead; a pipe or file on stdin is passed on.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable
from typing import Any, BinaryIO

from ctxtools import runner
from ctxtools.errors import CtxError


class Interrupted(CtxError):
    """ctx-stash was sent a signal while its command ran; exit status 128 + N. ``card`` is
    the handle of what the command printed until it stopped (marked ``incomplete``), or
    None when nothing could be kept."""

    def __init__(self, signum: int, pid: int, card: dict | None = None) -> None:
        name = signal.Signals(signum).name
        kept = (
            f"kept what it printed as {card['ref']} (incomplete)"
            if card is not None
            else "nothing was stored"
        )
        super().__init__(f"interrupted by {name}: stopped the command (pid {pid}); {kept}")
        self.exit_status = 128 + signum
        self.signum = signum
        self.card = card


class _PipeReader:
    """Reads the child's output as it arrives (os.read), optionally copying it to TEE and
    telling PROGRESS the bytes read.

    A copy to TEE that fails (a closed pipe, a full disk, a closed descriptor) stops the
    copying only, as with GNU tee: the output is still read to its end and stored -- a
    reader that stopped would leave the command blocked on a full pipe and ctx-stash
    waiting for it. ``tee_error`` keeps that failure; nothing is said of it (it is stderr
    that failed), and the card and exit status are those of the command."""

    def __init__(
        self, fd: int, tee: BinaryIO | None, progress: Callable[[int], None] | None = None
    ) -> None:
        self.fd = fd
        self.tee = tee
        self.tee_error: Exception | None = None
        self.progress = progress

    def _copy(self, data: bytes) -> None:
        assert self.tee is not None
        try:
            self.tee.write(data)
            self.tee.flush()
        except (OSError, ValueError) as exc:  # ValueError: a closed stream
            self.tee, self.tee_error = None, exc

    def read1(self, n: int = -1) -> bytes:
        data = os.read(self.fd, 1 << 16 if n < 0 else min(n, 1 << 20))
        if data and self.tee is not None:
            self._copy(data)
        if data and self.progress is not None:
            self.progress(len(data))
        return data

    read = read1


def _stdin() -> Any:
    """What the command reads: our stdin, but /dev/null instead of a terminal."""
    with contextlib.suppress(OSError, ValueError):
        if os.isatty(0):
            return subprocess.DEVNULL
    return None


def run_and_stash(
    store: Any,
    argv: list[str],
    *,
    name: str | None,
    session: str,
    type: str | None = None,
    tee: BinaryIO | None = None,
    progress: Callable[[int], None] | None = None,
    on_start: Callable[[subprocess.Popen], None] | None = None,
    cwd: str | None = None,
) -> tuple[dict, int]:
    """Run ARGV, store its output; (card, the command's exit status as a shell gives it).
    PROGRESS(n) is told each N bytes captured.

    The command runs in CWD (None: the current directory). ON_START is called with the
    started process: a caller that is not the main thread
    (where no signal handler can be set) keeps it to stop it itself (``runner.stop``).

    A signal to ctx-stash while the command runs is passed on to it (``runner.Watch``
    with ``forward``); its output is read to the end and stored as a handle whose card says
    ``incomplete`` (the signal's name), then Interrupted (128 + N) carries that card.
    Raises CommandNotFoundError (127), CommandNotExecutableError (126) and the store's
    errors (then the command is stopped too).
    """
    store.check_writable(session)  # (a session the store does not write: refused first)
    reader: _PipeReader | None = None
    with runner.watching(forward=True) as watch:
        try:
            proc = watch.start(
                argv, stdin=_stdin(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=cwd
            )
            assert proc.stdout is not None
            if on_start is not None:
                on_start(proc)
            reader = _PipeReader(proc.stdout.fileno(), tee, progress)

            def status() -> int:
                code = proc.wait()
                watch.disarm()  # the output is whole: store it; a signal now is late
                watch.finish()
                return runner.shell_status(code)

            def incomplete() -> str | None:
                return signal.Signals(watch.got[0]).name if watch.got else None

            card = store.put_stream(
                reader,
                name=name,
                session=session,
                type=type,
                exit_status=status,
                incomplete=incomplete,
            )
        except BaseException:
            if watch.proc is not None:
                # A store error: let the command finish (draining its output) rather than
                # kill it half-way -- unless a signal already asked it to stop. A signal
                # that comes meanwhile is still passed on (the watch is armed until the
                # command is reaped); should the drain fail, the command is killed rather
                # than waited for with its pipe full.
                try:
                    while reader is not None and reader.read1(1 << 16):
                        pass
                except OSError:
                    runner.kill(watch.proc)
                watch.proc.wait()
                watch.finish()
            watch.disarm()
            raise
        finally:
            if watch.proc is not None and watch.proc.stdout is not None:
                watch.proc.stdout.close()
    if watch.got:
        raise Interrupted(watch.got[0], proc.pid, card)
    if watch.held:
        return card, 128 + watch.held[0]
    return card, runner.shell_status(proc.returncode)
