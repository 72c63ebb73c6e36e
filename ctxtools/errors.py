"""Errors raised by the library, each carrying the exit status the CLI turns it into.

The library never prints and never imports click: it raises one of these, and one place in
``ctxtools.cli.entry`` turns it into ``ctx-NAME: error: message`` on stderr and the exit
status below.
"""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    """Exit statuses shared by every command (a gating command documents its own extras)."""

    OK = 0
    FAILURE = 1  # bad data, stale handle, missing file, invalid JSONPath, ...
    USAGE = 2  # bad arguments (click's own usage errors use 2 as well)
    OVER_LIMIT = 3  # ctx-count --fail-over: usage above the given percentage
    NO_HEADROOM = 4  # ctx-compact: compaction could not open the hysteresis headroom
    COMMAND_NOT_EXECUTABLE = 126  # ctx-stash -- CMD where CMD exists but cannot be run
    COMMAND_NOT_FOUND = 127  # ctx-stash -- CMD where CMD does not exist (like a shell)


class CtxError(Exception):
    """Base of every error the library raises on purpose. ``exit_status`` says how to exit."""

    exit_status: int = ExitStatus.FAILURE

    def __init__(self, message: str, *, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message} ({self.hint})"
        return self.message

    def line(self, prog: str) -> str:
        """The one line PROG prints for this error: ``PROG: error: message (hint)``; a usage
        error's parenthesis also points at ``PROG --help``."""
        return error_line(prog, self.message, self.hint, usage=self.exit_status == 2)


def error_line(prog: str, message: str, hint: str | None = None, *, usage: bool = False) -> str:
    """``PROG: error: MESSAGE (HINT)`` on one line (newlines in MESSAGE become spaces); with
    USAGE the parenthesis ends with ``see PROG --help``."""
    message = " ".join(message.split())
    tail = [hint] if hint else []
    if usage:
        tail.append(f"see {prog} --help")
    return f"{prog}: error: {message} ({'; '.join(tail)})" if tail else f"{prog}: error: {message}"


class UsageError(CtxError):
    """The call's words are wrong: a bad name, an impossible range, a conflicting option."""

    exit_status = ExitStatus.USAGE


class InputError(CtxError):
    """The input cannot be used: a missing file, a directory, invalid JSON, a bad regex."""


class NotFoundError(InputError):
    """A file, handle or model that does not exist."""


class StaleHandleError(CtxError):
    """A handle reference whose @sha prefix is no longer the current version of the name."""


class IntegrityError(CtxError):
    """Stored bytes that no longer match the checksum recorded when they were stored."""


class StoreError(CtxError):
    """The store cannot be written (read-only, full) or is in a state we refuse to touch."""


class ResourceError(CtxError):
    """The system ran out of something while reading an input (open files, memory): not the
    input's fault, so never a reason to skip it quietly (``fsutil.check_resource``)."""


class TokenizerError(CtxError):
    """An unknown encoding, an unusable tokenizer.json, or no exact ruler where one is required."""


class OverLimitError(CtxError):
    """A gate was crossed (e.g. ``ctx-count --fail-over``)."""

    exit_status = ExitStatus.OVER_LIMIT


class NoHeadroomError(CtxError):
    """Compaction could not free enough room; the caller should pause auto-compaction."""

    exit_status = ExitStatus.NO_HEADROOM


class CommandError(CtxError):
    """A command ctxtools was asked to run could not be started (``ctxtools.runner``).

    ``detail`` is the operating system's reason (``No such file or directory``), for a
    caller that words the failure its own way."""

    exit_status = ExitStatus.COMMAND_NOT_EXECUTABLE

    def __init__(self, message: str, *, detail: str = "", hint: str | None = None):
        super().__init__(message, hint=hint)
        self.detail = detail


class CommandNotExecutableError(CommandError):
    """The command exists but cannot be run: not executable, a directory, a bad format
    (a shell says 126)."""

    exit_status = ExitStatus.COMMAND_NOT_EXECUTABLE


class CommandNotFoundError(CommandError):
    """The command does not exist (a shell says 127)."""

    exit_status = ExitStatus.COMMAND_NOT_FOUND
