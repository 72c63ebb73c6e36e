"""``--copy``: a command's output goes to the clipboard too (``ctxtools.clipboard``).

``copy_option`` is the option for a command whose output is what it writes to stdout
(under ``output_option``, it sees what ``-o`` writes): that output is kept as it is
written and, when the command ends without an error, delivered (stdout flushed, or the -o
file written: ``outputs.deliver``) and then copied, so a clipboard that fails never costs
the output. ``copy_flag`` is the bare option, for a command that copies its document
itself (ctx-pack, which writes its output first too).
"""

from __future__ import annotations

import contextlib
import functools
import io
import sys
from collections.abc import Callable

import click

HELP = (
    "Also copy the output to the clipboard (wl-copy, xclip, xsel, pbcopy or clip.exe, "
    "found on PATH); it still goes to stdout, or to -o FILE."
)


def copy_flag(help: str = HELP) -> Callable:
    return click.option("--copy", "copy", is_flag=True, help=help)


def copy_option(func: Callable) -> Callable:
    """``--copy`` for a command whose output is its stdout (see the module)."""

    @functools.wraps(func)
    def run(*args, **kwargs):
        if not kwargs.pop("copy"):
            return func(*args, **kwargs)
        with teed() as kept:
            status = func(*args, **kwargs)
        if not status:
            from ctxtools.cli.outputs import deliver

            deliver()  # the output first: a clipboard that fails must not cost it
            copy(kept.getvalue())
        return status

    return copy_flag()(run)


def copy(data: bytes) -> None:
    from ctxtools.clipboard import copy as to_clipboard

    to_clipboard(data)


class _Tee(io.BufferedIOBase):
    """A binary stream that writes to TARGET and keeps a copy."""

    def __init__(self, target) -> None:
        super().__init__()
        self.target = target
        self.kept = io.BytesIO()

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        n = self.target.write(data)
        self.kept.write(bytes(data))
        return len(data) if n is None else n

    def flush(self) -> None:
        self.target.flush()

    def getvalue(self) -> bytes:
        return self.kept.getvalue()


@contextlib.contextmanager
def teed():
    """Stdout as it is, with what the block writes to it kept too (``.getvalue()``)."""
    from ctxtools.cli.outputs import stdout_bytes

    saved = sys.stdout
    saved.flush()
    tee = _Tee(stdout_bytes())
    sys.stdout = io.TextIOWrapper(
        tee, encoding="utf-8", errors="surrogateescape", write_through=True
    )
    try:
        yield tee
        sys.stdout.flush()
    finally:
        sys.stdout.detach()
        sys.stdout = saved
