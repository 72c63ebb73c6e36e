"""ctx-count's entry point: the plainest calls are counted without importing click.

``ctx-count [--heuristic] [FILE | -]...`` -- files or stdin and nothing else on the command
line, no ``CTX_*`` variable that changes the run -- is what most pipelines run, and
importing click is most of its start-up (28 of about 60 ms for a heuristic count of 1 KB;
issue 10). Such a call is counted by ``ctxtools.count.plain`` with the same library calls,
and printed with the same ``count.report.format_counts``, as the click command in
``ctxtools.cli.count``.

Every other call goes to the click command, and so does a plain call that would show
anything but the counts -- an unreadable or binary file, a terminal on stdin (the hint) or
on stderr with a big input or many files (the progress line), a note from the ruler --
before anything is read or printed. An error after stdin has been read is printed as the
command prints errors.
"""

from __future__ import annotations

import os
import sys

from ctxtools import defaults
from ctxtools.cli import say_interrupted, take_over_interrupts

# Variables that change what a plain call does: a model, an encoding, profiles, tracebacks,
# and click's shell-completion protocol (the shell runs the command with this one set).
_ENV = ("CTX_MODEL", "CTX_ENCODING", "CTX_PROFILES", "CTX_DEBUG", "_CTX_COUNT_COMPLETE")
NAME = "ctx-count"


def __getattr__(name: str):
    if name == "cli":  # the click command, for tools/gen_docs.py and the shell completions
        from ctxtools.cli.count import cli

        return cli
    raise AttributeError(name)


def _plan(args: list[str]) -> tuple[bool, list[str]] | None:
    """(heuristic, names) for a plain call; None for anything else."""
    heuristic = False
    names = []
    for arg in args:
        if arg == "--heuristic":
            heuristic = True
        elif arg == "-" or (arg and not arg.startswith("-")):
            names.append(arg)
        else:
            return None
    if any(os.environ.get(var) for var in _ENV):
        return None
    return heuristic, names or ["-"]


def _stdin():
    stream = getattr(sys.stdin, "buffer", None)
    return None if stream is None or stream.isatty() else stream


def _fast(args: list[str]) -> str | None:
    """The output of a plain call, or None: the click command must run it."""
    plan = _plan(args)
    if plan is None:
        return None
    heuristic, names = plan
    from ctxtools.count.plain import count_plain, plain_size

    if "-" in names and _stdin() is None:
        return None
    size = plain_size(names)
    if size is None:
        return None
    big = size >= defaults.PROGRESS_MIN_BYTES or len(names) >= defaults.PROGRESS_MIN_FILES
    if "-" not in names and big and sys.stderr.isatty():
        return None
    counted = count_plain(names, heuristic, _stdin() if "-" in names else None)
    if counted is None:
        return None
    text, notes = counted
    for note in notes:  # as the click command says it
        sys.stderr.write(f"{NAME}: note: {note}\n")
    return text


def _quiet_broken_pipe() -> None:
    try:  # Python flushes stdout again at exit: point it at /dev/null so that cannot fail
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def main(argv: list[str] | None = None) -> None:
    """The console-script entry point of ctx-count."""
    args = sys.argv[1:] if argv is None else list(argv)
    from ctxtools.cli import stdio
    from ctxtools.errors import CtxError

    try:
        stdio.guard()
        take_over_interrupts()
        text = _fast(args)
        if text is not None:
            out = getattr(sys.stdout, "buffer", None)
            if out is None:  # a text-only stdout (an embedding test harness)
                sys.stdout.write(text)
            else:
                out.write(text.encode("utf-8", "surrogateescape"))  # (stdio.Checked)
            sys.stdout.flush()
    except CtxError as exc:
        if isinstance(exc, stdio.OutputError):
            _quiet_broken_pipe()  # what is buffered goes nowhere at exit, quietly
        sys.stderr.write(exc.line(NAME) + "\n")
        sys.exit(int(exc.exit_status))
    except BrokenPipeError:
        _quiet_broken_pipe()
        sys.exit(1)
    except KeyboardInterrupt:
        say_interrupted(NAME)
        sys.exit(130)
    if text is not None:
        sys.exit(0)
    from ctxtools.cli.count import main as click_main

    click_main(argv)
