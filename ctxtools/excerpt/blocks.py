"""A file straight to its rendered block: the fast path of ctx-excerpt over many files.

The common case over a code base -- nothing matched -- is rendered from the file's bytes
(or not at all): no Excerpt, no Span, no str per line; a file with matches held whole is
rendered from its bytes too. Large files go through ``excerpt_file`` and ``render_excerpt``.
"""

from __future__ import annotations

from typing import NamedTuple

from ctxtools.classify import is_binary
from ctxtools.excerpt.core import excerpt_file, excerpt_stream
from ctxtools.excerpt.match import Matcher
from ctxtools.excerpt.model import ExcerptOptions
from ctxtools.excerpt.render import hits_block, no_match_block, render_excerpt
from ctxtools.excerpt.source import LARGE_FILE, read_fd


class FileBlock(NamedTuple):
    """A file as ``file_block`` renders it: ``block``, its text as UTF-8 bytes (None when
    the file is ``binary``, or has no match and was not to be shown), and ``matches``,
    how many of its lines match."""

    block: bytes | None
    matches: int = 0
    binary: bool = False


def file_block(
    path: str,
    label: str,
    matcher: Matcher,
    options: ExcerptOptions,
    *,
    large: int = LARGE_FILE,
    show_unmatched: bool = True,
) -> FileBlock:
    """``render_excerpt(excerpt_file(PATH, ...), LABEL)`` as UTF-8 bytes (lone surrogates
    of the label as their bytes), with the file's match count; no block for a binary file,
    nor for a file with no match unless SHOW_UNMATCHED. The common case over many files
    -- nothing matched -- is rendered straight from the file's bytes (or not at all): no
    Excerpt, no Span, no str per line. OSError is left to the caller."""
    import os

    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        data = read_fd(fd, size) if size <= large else None
    finally:
        os.close(fd)
    if data is None:  # a large file: streamed, as excerpt_file does
        ex = excerpt_file(path, matcher, options, large=large)
    elif len(data) > large:  # it grew, or was not a regular file: not read again
        import io

        ex = excerpt_stream(io.BytesIO(data), matcher, options)
    else:
        if is_binary(data):
            return FileBlock(None, binary=True)
        hits: dict[int, dict[str, float]] = {}
        if data:
            matcher.scan(data, 1, hits)
        if not hits:
            return FileBlock(no_match_block(data, label, options) if show_unmatched else None)
        return FileBlock(hits_block(data, label, matcher, options, hits), len(hits))
    if ex.binary:
        return FileBlock(None, binary=True)
    if not ex.matches and not show_unmatched:
        return FileBlock(None)
    return FileBlock(render_excerpt(ex, label).encode("utf-8", "surrogateescape"), ex.matches)


def excerpt_file_block(
    path: str,
    label: str,
    matcher: Matcher,
    options: ExcerptOptions,
    *,
    large: int = LARGE_FILE,
) -> bytes | None:
    """``render_excerpt(excerpt_file(PATH, ...), LABEL)`` as UTF-8 bytes, None for a
    binary file (``file_block``'s block)."""
    return file_block(path, label, matcher, options, large=large).block
