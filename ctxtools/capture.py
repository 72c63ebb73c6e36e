"""``ctx-stash -- CMD``: run a command, stream its output into the store, keep its status.

The command is started by ``ctxtools.runner``: without a shell, in a process group of its
own, with stdout and stderr on one pipe (interleaved as they arrive). Its output is
streamed into the store; the card records ``exit_status`` (negative: killed by that
signal).

When ctx-stash itself gets SIGTERM, SIGHUP or SIGINT while the command runs, the signal is
forwarded to the command's process group; after ``runner.GRACE_SECONDS`` whatever is left
of the group is killed (SIGKILL). Nothing is stored -- the partial output is not a handle
-- and ``Interrupted`` carries the conventional status 128 + N. A terminal's stdin is not
passed on (a background process group reading it would be stopped): the command reads
/dev/null instead; a pipe or file on stdin is passed on.
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
    """ctx-stash was sent a signal while its command ran; exit status 128 + N."""

    def __init__(self, signum: int, pid: int) -> None:
        name = signal.Signals(signum).name
        super().__init__(
            f"interrupted by {name}: stopped the command (pid {pid}); nothing was stored"
        )
        self.exit_status = 128 + signum
        self.signum = signum


class _PipeReader:
    """Reads the child's output as it arrives (os.read), optionally copying it to TEE."""

    def __init__(self, fd: int, tee: BinaryIO | None) -> None:
        self.fd = fd
        self.tee = tee

    def read1(self, n: int = -1) -> bytes:
        data = os.read(self.fd, 1 << 16 if n < 0 else min(n, 1 << 20))
        if data and self.tee is not None:
            self.tee.write(data)
            self.tee.flush()
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
    on_start: Callable[[subprocess.Popen], None] | None = None,
    cwd: str | None = None,
) -> tuple[dict, int]:
    """Run ARGV, store its output; (card, the command's exit status as a shell gives it).

    The command runs in CWD (None: the current directory). ON_START is called with the
    started process: a caller that is not the main thread
    (where no signal handler can be set) keeps it to stop it itself (``runner.stop``).

    Raises CommandNotFoundError (127), CommandNotExecutableError (126), Interrupted
    (128 + N, nothing stored) and the store's errors (then the command is stopped too).
    """
    store.check_writable()
    reader: _PipeReader | None = None
    with runner.watching() as watch:
        try:
            proc = watch.start(
                argv, stdin=_stdin(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=cwd
            )
            assert proc.stdout is not None
            if on_start is not None:
                on_start(proc)
            reader = _PipeReader(proc.stdout.fileno(), tee)

            def status() -> int:
                code = proc.wait()
                watch.disarm()  # the output is whole: store it; a signal now is late
                return code

            card = store.put_stream(
                reader, name=name, session=session, type=type, exit_status=status
            )
        except runner.Signalled as sig:
            watch.disarm()
            assert watch.proc is not None
            runner.stop(watch.proc, sig.signum)
            raise Interrupted(sig.signum, watch.proc.pid) from None
        except BaseException:
            watch.disarm()
            if watch.proc is not None:
                # A store error: let the command finish (draining its output) rather than
                # kill it half-way.
                with contextlib.suppress(OSError):
                    while reader is not None and reader.read1(1 << 16):
                        pass
                watch.proc.wait()
            raise
        finally:
            if watch.proc is not None and watch.proc.stdout is not None:
                watch.proc.stdout.close()
    if watch.held:
        return card, 128 + watch.held[0]
    code = proc.returncode
    return card, (128 - code if code < 0 else code)
