"""The three standard streams as a command finds them: closed, or failing to take output.

A command started with a standard stream closed (``cmd >&-``, ``cmd <&-``, a service's
child) would hand that descriptor's number to the next file it opens -- a store file could
then receive what is meant for stdout, or a child's output -- and Python leaves
``sys.stdout`` (``sys.stdin``) None, so the first write is a traceback. ``guard``, called
before the command opens anything, points each closed descriptor at /dev/null and puts a
stream in its place that says so when it is used: reading a closed stdin, or writing a
closed stdout, is ``ctx-NAME: error: standard input is closed`` and status 1 (stderr closed
is simply silent). It also puts ``Checked`` under the interpreter's stdout, so that a write
the system refuses (a full disk, ``/dev/full``, an I/O error) -- every command's output,
click's ``--help`` too -- is ``OutputError``: the same kind of one line, status 1. A closed
pipe (EPIPE) stays the quiet exit ``entry`` gives it.
"""

from __future__ import annotations

import os
import sys

from ctxtools.errors import CtxError, InputError


class OutputError(CtxError):
    """Standard output cannot take the command's output (closed, full, failing)."""


def _closed_error(fd: int) -> CtxError:
    if fd == 0:
        return InputError("standard input is closed", hint="give a file, or pipe the input in")
    return OutputError("standard output is closed", hint="redirect it to a file or a pipe")


class _ClosedBinary:
    """A closed descriptor's binary stream: every read or write is the one-line error."""

    def __init__(self, fd: int):
        self.fd = fd

    def _fail(self, *_args, **_kwargs):
        raise _closed_error(self.fd)

    read = read1 = readinto = readline = readlines = write = writelines = _fail

    def __iter__(self):
        raise _closed_error(self.fd)

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self.fd

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    @property
    def closed(self) -> bool:
        return False


class _ClosedText(_ClosedBinary):
    """The same as a text stream, with its ``buffer``."""

    def __init__(self, fd: int):
        super().__init__(fd)
        self.buffer = _ClosedBinary(fd)
        self.encoding = "utf-8"
        self.errors = "surrogateescape"


def _is_closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


def guard() -> None:
    """Each closed standard descriptor pointed at /dev/null (so that no file opened later
    takes its number) and its stream replaced; an open stdout's refused writes made the
    one-line error, also those of click's own ``--help`` (see the module's docstring)."""
    _check_stdout()
    for fd in (0, 1, 2):
        if not _is_closed(fd):
            continue
        try:
            got = os.open(os.devnull, os.O_RDWR)
        except OSError:
            continue
        if got != fd:  # a lower number was free after all: put it where it belongs
            os.dup2(got, fd)
            os.close(got)
        if fd == 0:
            sys.stdin = _ClosedText(0)  # type: ignore[assignment]
        elif fd == 1:
            sys.stdout = _ClosedText(1)  # type: ignore[assignment]
        else:
            import io

            sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", closefd=False), write_through=True)


def stdin_closed() -> bool:
    """Whether ``guard`` found standard input closed (descriptor 0 is /dev/null now, and
    reading ``sys.stdin`` the one-line error): for a command that hands descriptor 0 to
    another reader, which would take /dev/null for an input that ended at once (ctx-mcp)."""
    return isinstance(sys.stdin, _ClosedBinary)


def write_failed(exc: OSError) -> OutputError:
    """The one-line error for a write to stdout that the system refused."""
    reason = os.strerror(exc.errno) if exc.errno else str(exc)
    return OutputError(f"cannot write to standard output: {reason}")


class Checked:
    """Stdout's binary stream, its refused writes turned into ``OutputError``, and every
    write whole: under ``python -u`` (``PYTHONUNBUFFERED``, set in many containers) the
    stream is the raw file, whose write may take only part of the bytes (a pipe, a disk
    filling up) and returns how many -- the rest was silently lost, with status 0."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, data) -> int:
        try:
            return self._write_all(data)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise write_failed(exc) from None

    def _write_all(self, data) -> int:
        done = self._stream.write(data)
        view = memoryview(data).cast("B")
        size = len(view)
        while done is None or done < size:  # a raw stream's short write (None: would block)
            if done is None:
                done = 0
                _wait_writable(self._stream)
                continue
            n = self._stream.write(view[done:])
            if n == 0:
                import errno

                raise OSError(errno.EIO, "the output took no more bytes")
            if n is not None:
                done += n
            else:
                _wait_writable(self._stream)
        return size

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise write_failed(exc) from None

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _wait_writable(stream) -> None:
    """Until STREAM's descriptor (non-blocking, full) takes bytes again."""
    import select

    select.select([], [stream.fileno()], [])


def _check_stdout() -> None:
    """The interpreter's stdout (not a harness's capture) with its writes ``Checked``."""
    out = sys.stdout
    buf = getattr(out, "buffer", None)
    if out is None or out is not sys.__stdout__ or buf is None or isinstance(buf, Checked):
        return
    import io

    out.flush()
    sys.stdout = io.TextIOWrapper(
        Checked(out.detach()),  # type: ignore[arg-type]
        encoding=out.encoding,
        errors=out.errors,
        line_buffering=out.line_buffering,
    )
