"""One text cut down to its excerpt by the engine's windows.

``Engine`` is a run's ranking: every input held whole ranked as ctx-pack ranks files
(``retrieval.rank.rank_sources``), and the term weights every text is scored with.
``excerpt_ranked`` cuts a file the ranking read; ``excerpt_pieces`` a text read in pieces
(one without definitions, or too large to hold), in memory that does not grow with it.
``excerpt_text`` / ``excerpt_stream`` / ``excerpt_file`` do one text alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import BinaryIO

from ctxtools.analyzer.query import Query
from ctxtools.excerpt.model import Excerpt, ExcerptOptions, Span, window_spans
from ctxtools.excerpt.source import (
    BINARY_SNIFF,
    BLOCK_SIZE,
    LARGE_FILE,
    Piece,
    collect_lines,
    is_binary,
    lines_of_whole,
    pieces_of_stream,
    read_fd,
    to_bytes,
)
from ctxtools.retrieval.rank import Doc, Source, rank_sources
from ctxtools.retrieval.window import (
    AVG_SAMPLE,
    LineWindows,
    Window,
    chunk_windows,
    definitions_of,
    file_score,
    has_definitions,
    mean_window,
    window_query,
)
from ctxtools.source.classify import banner_lines

QueryLike = Query | str


class Engine:
    """The ranking of a run's texts held whole (label -> bytes and definitions), and what
    any of its texts is scored with (the ranking's term weights).

    As in ctx-pack, the files ranked chunk by chunk are the best ``rank.FILE_TOP`` by
    their words (and every one a path, frame or message points at); the others a term
    reaches (``rest``) are cut by lines. SCAN, given sources, fills in their definitions:
    it is given those the ranking reads (found by a first ranking when more than
    ``FILE_TOP`` are reached); without it the sources' own definitions are used."""

    def __init__(
        self,
        query: QueryLike,
        sources: Sequence[Source] = (),
        scan: Callable[[list[Source]], object] | None = None,
    ):
        from ctxtools.retrieval.terms import Terms

        self.query = query if isinstance(query, Query) else window_query(query)
        seen: set[str] = set()
        unique = []
        for src in sources:
            if src.label not in seen:
                seen.add(src.label)
                unique.append(src)
        if scan is not None:
            from ctxtools.retrieval.rank import FILE_TOP, reachable

            reached = reachable(unique, self.query)
            if len(reached) <= FILE_TOP:  # the ranking reads them all: one ranking
                scan([s for s in unique if s.label in reached])
            else:  # which it reads comes from their words: a ranking, then the scan
                read = {d.label for d in rank_sources(unique, self.query).docs}
                scan([s for s in unique if s.label in read])
        self.ranking = rank_sources(unique, self.query)
        self.terms = Terms.of(self.query)
        self.weights = [self.ranking.weights.get(t, 0.0) for t in self.terms.terms]
        self.docs: dict[str, Doc] = {d.label: d for d in self.ranking.docs}
        self.rest = set(self.ranking.rest)
        self.known: tuple[set, set] = (set(), set())  # LineWindows' words, for every text
        self.data = {src.label: src.data for src in unique}

    def order(self, names: Iterable[str]) -> tuple[str, ...]:
        """NAMES (query terms) in the query's order."""
        ids = self.terms.ids
        return tuple(sorted(set(names), key=lambda t: ids.get(t, len(ids))))


def _spans(
    windows: Sequence[Window], n: int, options: ExcerptOptions, first: int = 1
) -> tuple[Span, ...]:
    """The head (from line FIRST: after a licence banner), then the WINDOWS in line order
    (a window inside the head is carried by it; one reaching into it starts after it; none
    starts before FIRST)."""
    h = max(0, min(options.head, n - first + 1))
    last = first + h - 1 if h else 0
    inside = [w for w in windows if w.end <= last]
    spans = [Span("head", first, last, tuple(inside))] if h else []
    return (*spans, *window_spans(windows, last + 1))


def _unmatched_spans(n: int, options: ExcerptOptions, first: int = 1) -> tuple[Span, ...]:
    h = max(0, min(options.head, n - first + 1))
    last = first + h - 1 if h else 0
    spans = [Span("head", first, last)] if h else []
    t = max(0, options.tail)
    start = max(last + 1, n - t + 1)
    if t and start <= n:
        spans.append(Span("tail", start, n))
    return tuple(spans)


def excerpt_ranked(engine: Engine, label: str, options: ExcerptOptions) -> Excerpt:
    """The excerpt of LABEL, a text the ENGINE ranked (or found nothing in)."""
    data = engine.data[label]
    doc = engine.docs.get(label)
    if (doc is not None and not has_definitions(doc)) or label in engine.rest:
        return excerpt_pieces(engine, lambda: iter([(1, data, False)]), options, len(data), doc)
    newlines = data.count(b"\n")
    n = newlines + (0 if not data or data.endswith(b"\n") else 1)
    windows: list[Window] = []
    omitted = matches = 0
    # The head starts after a licence banner: fifteen lines of one said nothing of the
    # file (unless a window of the file's own starts inside it: then from line 1).
    banner = banner_lines(data) if options.head else 0
    if doc is not None:
        h = max(0, min(options.head, n - banner))
        windows, omitted, matches = chunk_windows(
            doc, engine.terms.terms, options.max_windows, shown=banner + h
        )
        if any(w.start <= banner for w in windows):
            banner = 0
    first = banner + 1
    spans = (_spans(windows, n, options, first) if matches
             else _unmatched_spans(n, options, first))
    lines = lines_of_whole(data, newlines, spans, options.max_line_chars)
    matched = engine.order(doc.matched) if doc is not None and matches else ()
    score = doc.score if doc is not None and matches else 0.0
    return Excerpt(n, spans, lines, matched, score, omitted, size=len(data), matches=matches)


def excerpt_pieces(
    engine: Engine,
    pieces: Callable[[], Iterable[Piece]],
    options: ExcerptOptions,
    size: int,
    doc: Doc | None = None,
) -> Excerpt:
    """The excerpt of a text without definitions, or too large to hold, read as PIECES
    (called twice: one pass scores, the next keeps the lines the spans show). DOC: the
    ranking's record of it, whose file score it keeps."""
    head: list[bytes] = []  # the text's first AVG_SAMPLE bytes, however it is cut
    got = 0
    for _line, data, _mid in pieces():
        head.append(data)
        got += len(data)
        if got >= AVG_SAMPLE:
            break
    avg = mean_window(b"".join(head), options.window)
    scorer = LineWindows(
        engine.terms, engine.weights, options.window, options.max_windows, avg, engine.known
    )
    gated = False  # (with blank_keys) a key block's gate seen: its lines are looked for
    gates: tuple[bytes, ...] = ()
    if options.blank_keys:
        from ctxtools.secrets.blocks import GATES as gates
    for line, data, mid in pieces():
        scorer.add(line, data, mid)
        if gates and not gated:
            gated = any(g in data for g in gates)
    windows, omitted, n = scorer.finish()
    found = bool(windows) or omitted > 0
    spans = _spans(windows, n, options) if found else _unmatched_spans(n, options)
    lines = collect_lines(pieces(), spans, options.max_line_chars)
    blanked = _blank_keys(lines, pieces) if gated else 0
    if not found:
        return Excerpt(n, spans, lines, size=size, blanked=blanked)
    matched = engine.order(engine.terms.terms[i] for i in scorer.matched)
    score = doc.score if doc is not None else file_score(windows)
    return Excerpt(n, spans, lines, matched, score, omitted, size=size,
                   matches=scorer.hit_lines, blanked=blanked)


def _blank_keys(lines: dict[int, str], pieces) -> int:
    """Blank, in LINES (the shown lines of a streamed text), those of its private key
    blocks (the first shows the marker); the number of blocks in the text. One more pass
    over PIECES, made only when the scoring pass saw a block's gate: a window may start
    inside a block, where nothing tells its lines apart."""
    from ctxtools.secrets.blocks import key_block_lines
    from ctxtools.secrets.scan import MARKER

    blocks = key_block_lines(pieces())
    for first, last, kind in blocks:
        for n in [n for n in lines if first <= n <= last]:
            lines[n] = MARKER.format(kind=kind) if n == first else ""
    return len(blocks)


def excerpt_bytes(engine: Engine, data: bytes, options: ExcerptOptions) -> Excerpt:
    """A text of the run that the ENGINE did not rank (too large): scored as pieces."""
    import io

    def pieces() -> Iterable[Piece]:
        return pieces_of_stream(io.BytesIO(data), BLOCK_SIZE)

    return excerpt_pieces(engine, pieces, options, len(data))


def source_of(label: str, data: bytes) -> Source:
    """The ranking's record of a text held whole: its bytes and its definitions."""
    return Source(label, data, definitions_of(label, data))


def excerpt_text(
    text: str | bytes,
    query: QueryLike,
    options: ExcerptOptions | None = None,
    label: str = "<text>",
) -> Excerpt:
    """Cut TEXT (a str, or bytes read as UTF-8; named LABEL, whose extension picks the
    definitions' scanner) down to the engine's windows for QUERY (a task's text, or a
    ``Query``), ranked alone. Text with a NUL byte in its first 8 KB is binary: the result
    has ``binary=True`` and no spans; a text over 512 KB is scored as pieces."""
    options = options or ExcerptOptions()
    data = to_bytes(text)
    if is_binary(data):
        return Excerpt(0, (), {}, binary=True, size=len(data))
    q = query if isinstance(query, Query) else window_query(query)
    if len(data) > LARGE_FILE:
        return excerpt_bytes(Engine(q), data, options)
    engine = Engine(q, [source_of(label, data)])
    return excerpt_ranked(engine, label, options)


def excerpt_stream(
    fh: BinaryIO,
    query: QueryLike | Engine,
    options: ExcerptOptions | None = None,
    *,
    block: int = BLOCK_SIZE,
) -> Excerpt:
    """Like ``excerpt_text`` for a seekable binary stream of any size, in bounded memory,
    as a text without definitions: one pass scores its lines, a second keeps only the
    lines the spans need (a line longer than ``max_line_chars`` is kept as its cut prefix
    and a count). QUERY may be a run's ``Engine`` (its term weights)."""
    options = options or ExcerptOptions()
    engine = query if isinstance(query, Engine) else Engine(query)
    fh.seek(0)
    head = fh.read(BINARY_SNIFF)
    size = fh.seek(0, 2)
    if is_binary(head):
        return Excerpt(0, (), {}, binary=True, size=size)

    def pieces() -> Iterable[Piece]:
        fh.seek(0)
        return pieces_of_stream(fh, block)

    return excerpt_pieces(engine, pieces, options, size)


def excerpt_file(
    path: str,
    query: QueryLike,
    options: ExcerptOptions | None = None,
    *,
    large: int = LARGE_FILE,
) -> Excerpt:
    """Excerpt the file at PATH alone: read whole up to LARGE bytes, streamed above that.

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
        return excerpt_text(data, query, options, label=path)
    with fh:
        return excerpt_stream(fh, query, options)
