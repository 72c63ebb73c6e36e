"""What every ctx-* command writes: stdout as bytes (``write``, ``write_bytes``), one JSON
document (``json_dumps``, ``emit_json``), ``-o FILE``'s collected stdout (``output_to``),
the output written before what is said of it (``deliver``), and ``warn``, the only way a
note reaches stderr."""

from __future__ import annotations

import contextlib
import sys
from typing import BinaryIO

import click

from ctxtools.errors import InputError


class _TextSink:
    """Bytes written to a text-only stdout (an embedding test harness)."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, data: bytes) -> int:
        self.stream.write(data.decode("utf-8", "surrogateescape"))
        return len(data)

    def flush(self) -> None:
        self.stream.flush()


def stdout_bytes() -> BinaryIO:
    """Standard output as a binary stream (a write the system refuses is an
    ``OutputError``: ``stdio.guard`` put ``Checked`` under it)."""
    buf = getattr(sys.stdout, "buffer", None)
    return buf if buf is not None else _TextSink(sys.stdout)  # type: ignore[return-value]


def write(text: str) -> None:
    """Write text to stdout as UTF-8 (lone surrogates from surrogateescape become bytes)."""
    stdout_bytes().write(text.encode("utf-8", "surrogateescape"))


def write_bytes(data: bytes) -> None:
    stdout_bytes().write(data)


def json_dumps(obj: object, *, pretty: bool = False) -> bytes:
    import orjson

    option = orjson.OPT_APPEND_NEWLINE | (orjson.OPT_INDENT_2 if pretty else 0)
    try:
        return orjson.dumps(obj, option=option)
    except TypeError:  # a string holding a byte that is not UTF-8: U+FFFD (json_text)
        from ctxtools.fsutil import json_texts

        return orjson.dumps(json_texts(obj), option=option)


def emit_json(obj: object, *, pretty: bool = False) -> None:
    """Print one JSON document (keys in the order the code built them: deterministic)."""
    write_bytes(json_dumps(obj, pretty=pretty))


def warn(*messages: str, prefix: str = "") -> None:
    """Each MESSAGE as one line on stderr: ``ctx-NAME: PREFIXmessage`` (notes, warnings,
    errors that do not end the run). Every command prints them this way."""
    ctx = click.get_current_context(silent=True)
    name = ctx.find_root().info_name if ctx else "ctx"
    for message in messages:
        click.echo(f"{name}: {prefix}{message}", err=True)


class _Collected:
    """What ``output_to`` collects for -o OUTPUT in BUF, and whether it was written."""

    def __init__(self, output: str, buf) -> None:
        self.output = output
        self.buf = buf
        self.written = False

    def write(self) -> None:
        from ctxtools.fsutil import write_output

        self.written = True
        problem = write_output(self.output, self.buf.getvalue())
        if problem:
            raise InputError(f"-o {self.output}: cannot write ({problem})")


_COLLECTING: list[_Collected] = []  # the -o files being collected, innermost last


@contextlib.contextmanager
def output_to(output: str | None):
    """Stdout collected while the block runs, then written to OUTPUT (``-``/None: stdout
    as usual); a file that cannot be written is a one-line error (exit 1). Written when the
    block ends without an error, or earlier by ``deliver``."""
    if not output or output == "-":
        yield
        return
    import io

    buf = io.BytesIO()
    saved = sys.stdout
    sys.stdout = io.TextIOWrapper(buf, encoding="utf-8", errors="surrogateescape")
    collected = _Collected(output, buf)
    _COLLECTING.append(collected)
    try:
        yield
        sys.stdout.flush()
    finally:
        _COLLECTING.remove(collected)
        sys.stdout.detach()
        sys.stdout = saved
    if not collected.written:
        collected.write()


def deliver() -> None:
    """The command's output, complete, written now, before what it says of it on stderr (a
    summary line), so that a write that fails is the one line the run prints: under ``-o
    FILE`` the file is written (an ``InputError``, exit 1, when it cannot be), else stdout
    is flushed (``stdio.OutputError``, exit 1, when the system refuses it: a full disk).
    Under -o, the file is written even if the command then ends with an error (ctx-compact's
    exit 4 still writes its output); nothing written to stdout after this call goes to it."""
    if _COLLECTING:
        sys.stdout.flush()
        collected = _COLLECTING[-1]
        if not collected.written:
            collected.write()
        return
    sys.stdout.flush()
