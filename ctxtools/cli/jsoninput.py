"""Reading a FILE argument (or stdin) that must be JSON or JSON Lines -- a transcript, a
working set -- within the bounds of ``ctxtools.jsonbound``: judged from its first bytes,
one document at most ``JSON_DOCUMENT_MAX`` bytes (ctx-count --messages, ctx-compact)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxtools.cli.inputs import opened

if TYPE_CHECKING:
    from ctxtools.resolve import FileArg


def read_json_source(
    src: FileArg, error, *, containers: bool = True, whole: str | None = None
) -> bytes:
    """The bytes of SRC within ``jsonbound.read_json``'s bounds; ERROR makes the error for
    a head that cannot be JSON (CONTAINERS: it must open with an object or an array).
    WHOLE (what is done with it, e.g. "compacted") holds JSON Lines to the document limit
    too, for a reader that keeps all of them."""
    from ctxtools.jsonbound import read_json, read_json_head, read_up_to, too_big_lines

    label = src.path or "stdin"
    with opened(src) as stream:
        if whole is None:
            return read_json(stream, label, error, containers=containers)
        data, lines = read_json_head(stream, label, error, containers=containers, lines_held=True)
        if not lines:
            return data
        from ctxtools.jsonbound import JSON_DOCUMENT_MAX as limit

        data += read_up_to(stream, limit + 1 - len(data))
        if len(data) > limit:
            raise too_big_lines(label, limit, whole)
        return data
