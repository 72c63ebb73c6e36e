"""One text cut down to its excerpt: ``excerpt_text`` (held whole), ``excerpt_stream`` (any
size, in bounded memory) and ``excerpt_file`` (whole up to 512 KB, streamed above)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO

from ctxtools.excerpt.match import Matcher, as_matcher
from ctxtools.excerpt.model import Excerpt, ExcerptOptions, Hit
from ctxtools.excerpt.plan import plan_spans
from ctxtools.excerpt.source import (
    BINARY_SNIFF,
    BLOCK_SIZE,
    LARGE_FILE,
    Piece,
    collect_lines,
    count_lines,
    is_binary,
    lines_of_whole,
    pieces_of_stream,
    read_fd,
    to_bytes,
)
from ctxtools.excerpt.streamplan import StreamPlanner, shown_hits


def _excerpt(
    pieces: Callable[[], Iterable[Piece]] | None,
    matcher: Matcher,
    options: ExcerptOptions,
    size: int,
    whole: bytes | None = None,
) -> Excerpt:
    if whole is not None:  # held whole: one piece, counted once
        hits: dict[int, dict[str, float]] = {}
        newlines = whole.count(b"\n")
        if whole:
            matcher.scan(whole, 1, hits)
        line_count = newlines + (0 if not whole or whole.endswith(b"\n") else 1)
        plan = plan_spans(hits, line_count, options, matcher)
        shown = shown_hits(plan.spans, hits)
        matched: set[str] = set()
        for found in hits.values():
            matched.update(found)
        matches = len(hits)
        lines = lines_of_whole(whole, newlines, plan.spans, options.max_line_chars)
    else:  # streamed: what is kept of the matches does not grow with them
        planner = StreamPlanner(options)
        last: Piece | None = None
        for piece in pieces():
            found: dict[int, dict[str, float]] = {}
            matcher.scan(piece[1], piece[0], found)
            for line in sorted(found):
                planner.add(line, found[line])
            last = piece
        line_count = count_lines(last)
        plan, shown = planner.finish(line_count, matcher)
        matched, matches = planner.matched, len(planner.lines)
        lines = collect_lines(pieces(), plan.spans, options.max_line_chars)
    hit_list = tuple(
        Hit(line, tuple((name, shown[line][name]) for name in matcher.order(shown[line])))
        for line in sorted(shown)
    )
    return Excerpt(
        line_count=line_count,
        spans=plan.spans,
        lines=lines,
        matched=matcher.order(matched) if matched else (),
        hits=hit_list,
        omitted=plan.omitted_windows,
        size=size,
        omitted_matches=plan.omitted_matches,
        matches=matches,
    )


def excerpt_text(
    text: str | bytes,
    identifiers: Matcher | Iterable[str],
    options: ExcerptOptions | None = None,
) -> Excerpt:
    """Cut TEXT (a str, or bytes read as UTF-8) down to the windows around IDENTIFIERS.

    IDENTIFIERS is a ``Matcher`` (build it once for many files) or a list of names (e.g.
    from ``identifiers_from_query``). Text with a NUL byte in its first 8 KB is binary:
    the result has ``binary=True`` and no spans.
    """
    options = options or ExcerptOptions()
    matcher = as_matcher(identifiers, options)
    data = to_bytes(text)
    if is_binary(data):
        return Excerpt(0, (), {}, binary=True, size=len(data))
    return _excerpt(None, matcher, options, len(data), whole=data)


def excerpt_stream(
    fh: BinaryIO,
    identifiers: Matcher | Iterable[str],
    options: ExcerptOptions | None = None,
    *,
    block: int = BLOCK_SIZE,
) -> Excerpt:
    """Like ``excerpt_text`` for a seekable binary stream of any size, in bounded memory:
    one pass finds the matches, a second keeps only the lines the spans need (a line
    longer than ``max_line_chars`` is kept as its cut prefix and a count)."""
    options = options or ExcerptOptions()
    matcher = as_matcher(identifiers, options)
    fh.seek(0)
    head = fh.read(BINARY_SNIFF)
    size = fh.seek(0, 2)
    if is_binary(head):
        return Excerpt(0, (), {}, binary=True, size=size)

    def pieces() -> Iterator[Piece]:
        fh.seek(0)
        return pieces_of_stream(fh, block)

    return _excerpt(pieces, matcher, options, size)


def excerpt_file(
    path: str,
    identifiers: Matcher | Iterable[str],
    options: ExcerptOptions | None = None,
    *,
    large: int = LARGE_FILE,
) -> Excerpt:
    """Excerpt the file at PATH: read whole up to LARGE bytes, streamed above that.

    OSError (missing file, permissions...) is left to the caller."""
    import os

    options = options or ExcerptOptions()
    fd = os.open(path, os.O_RDONLY)
    data = None
    try:
        size = os.fstat(fd).st_size
        if size <= large:
            data = read_fd(fd, size)
            if len(data) > large:  # it grew: streamed after all
                data = None
                os.lseek(fd, 0, os.SEEK_SET)
        if data is None:
            fh = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    if data is not None:  # read whole: the descriptor goes before the work on the bytes
        os.close(fd)
        return excerpt_text(data, identifiers, options)
    with fh:
        return excerpt_stream(fh, identifiers, options)
