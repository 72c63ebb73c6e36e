"""What every ctx-* command writes: stdout as bytes (``write``, ``write_bytes``), one JSON
document (``json_dumps``, ``emit_json``), ``-o FILE``'s collected stdout (``output_to``),
and ``warn``, the only way a note reaches stderr."""

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


@contextlib.contextmanager
def output_to(output: str | None):
    """Stdout collected while the block runs, then written to OUTPUT (``-``/None: stdout
    as usual); a file that cannot be written is a one-line error (exit 1)."""
    if not output or output == "-":
        yield
        return
    import io

    buf = io.BytesIO()
    saved = sys.stdout
    sys.stdout = io.TextIOWrapper(buf, encoding="utf-8", errors="surrogateescape")
    try:
        yield
        sys.stdout.flush()
    finally:
        sys.stdout.detach()
        sys.stdout = saved
    from ctxtools.fsutil import write_output

    problem = write_output(output, buf.getvalue())
    if problem:
        raise InputError(f"-o {output}: cannot write ({problem})")
