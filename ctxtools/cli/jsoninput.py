"""Reading a FILE argument (or stdin) that must be JSON or JSON Lines -- a transcript, a
working set -- within the bounds of ``ctxtools.jsonbound``: judged from its first bytes,
one document at most ``JSON_DOCUMENT_MAX`` bytes (ctx-count --messages, ctx-compact)."""

from __future__ import annotations

import contextlib

from ctxtools.cli.common import FileArg, open_source, stdin_bytes


def json_source(src: FileArg):
    """SRC opened as a binary stream (a context manager), for a reader that goes by
    ``jsonbound``'s bounds itself."""
    return open_source(src) if src.path else contextlib.nullcontext(stdin_bytes())


def read_json_source(src: FileArg, error, *, containers: bool = True) -> bytes:
    """The bytes of SRC within ``jsonbound.read_json``'s bounds; ERROR makes the error for
    a head that cannot be JSON (CONTAINERS: it must open with an object or an array)."""
    from ctxtools.jsonbound import read_json

    with json_source(src) as stream:
        return read_json(stream, src.path or "stdin", error, containers=containers)
