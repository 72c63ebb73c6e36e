"""Streaming counts: tokens, characters, lines and bytes of a binary stream of any size,
in bounded memory and linear time.

For tiktoken, ``ctxtools.tokens.cutter`` cuts the bytes where the sum of the pieces'
counts equals one count of the whole text, and counts long runs of one kind of character
in checked windows; the pieces are counted on several threads (tiktoken releases the GIL
while encoding). A part that cannot be counted exactly makes the result say so
(``exact``, ``notes``). The heuristic reads block by block.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from ctxtools.tokens.rulers import Ruler, TiktokenRuler

READ_BLOCK = 1 << 20  # bytes read per call
CHUNK_BYTES = 1 << 20  # bytes per counted piece: 1M keeps peak memory low and still
# lets two threads overlap (256K pieces did not parallelise; 4M ones doubled peak memory)


@dataclass
class Counts:
    tokens: int = 0
    chars: int = 0
    lines: int = 0
    bytes: int = 0
    exact: bool = True  # False when a part could not be counted exactly (see notes)
    notes: list[str] = field(default_factory=list)

    def add(self, other: Counts) -> None:
        self.tokens += other.tokens
        self.chars += other.chars
        self.lines += other.lines
        self.bytes += other.bytes
        if not other.exact:
            self.exact = False
            self.notes.extend(n for n in other.notes if n not in self.notes)

    def as_dict(self) -> dict:
        out = {
            "tokens": self.tokens,
            "chars": self.chars,
            "lines": self.lines,
            "bytes": self.bytes,
        }
        if not self.exact:
            out["exact"] = False
            out["note"] = "; ".join(self.notes)
        return out


def line_count(newlines: int, last_char: str) -> int:
    """Lines as a person counts them: a last line without a newline still counts."""
    return newlines + (1 if last_char and last_char != "\n" else 0)


def iter_text_pieces(
    stream: BinaryIO,
    counts: Counts,
    ruler: Ruler,
    progress: Callable[[int], None] | None = None,
) -> Iterator[str | int]:
    """Pieces of STREAM to count separately: text (str) to count with RULER, or a number
    of tokens already counted (inside a long run, see ``ctxtools.tokens.cutter``). Fills
    ``counts`` with chars, lines and bytes, and ``exact``/``notes``, as it goes.

    Memory stays bounded whatever the input: tiktoken pieces are cut where the sum of
    their counts equals one count of the whole; the heuristic reads block by block; a
    ruler that cannot be split (a tokenizer.json) gets the whole text at once.
    """
    if isinstance(ruler, TiktokenRuler):
        yield from _tiktoken_pieces(stream, counts, ruler, progress)
        return
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    whole: list[str] = []
    newlines = 0
    last = ""
    while True:
        block = stream.read(READ_BLOCK)
        counts.bytes += len(block)
        if progress is not None and block:
            progress(len(block))
        text = decoder.decode(block, final=not block)
        if text:
            newlines += text.count("\n")
            counts.chars += len(text)
            last = text[-1]
            if ruler.splittable:
                yield text  # the heuristic counts characters: any cut is exact
            else:
                whole.append(text)
        if not block:
            break
    counts.lines = line_count(newlines, last)
    if whole:
        yield "".join(whole)


SMALL_INPUT = 4096  # bytes: too short to hold a run worth cutting; counted in one piece


class Prefixed:
    """A binary stream that first returns bytes already read from another."""

    def __init__(self, head: bytes, rest: BinaryIO):
        self._head = head
        self._rest = rest

    def read(self, n: int = -1) -> bytes:
        if self._head:
            out, self._head = self._head, b""
            return out
        return self._rest.read(n)


def _tiktoken_pieces(stream, counts: Counts, ruler: TiktokenRuler, progress) -> Iterator:
    head = stream.read(READ_BLOCK)
    if len(head) < SMALL_INPUT:
        more = stream.read(READ_BLOCK) if head else b""
        if not more:  # a small input: one piece, no cutter to import
            counts.bytes = len(head)
            if progress is not None and head:
                progress(len(head))
            text = head.decode("utf-8", "replace")
            counts.chars = len(text)
            counts.lines = line_count(text.count("\n"), text[-1:])
            if text:
                yield text
            return
        head += more
    yield from _cut_pieces(Prefixed(head, stream), counts, ruler, progress)


def _cut_pieces(stream, counts: Counts, ruler: TiktokenRuler, progress) -> Iterator:
    from ctxtools.tokens.cutter import CutReport, Cutter
    from ctxtools.tokens.loading import window_encoder

    report = CutReport()
    cutter = Cutter(
        stream,
        report,
        chunk=CHUNK_BYTES,
        block=READ_BLOCK,
        encoding=ruler.encoding,
        encode=ruler.encode,
        allow_special=ruler.allow_special,
        window_encoder=lambda: window_encoder(ruler.name),
        progress=progress,
    )
    for piece in cutter.pieces():
        yield piece.text if piece.text is not None else piece.tokens
    counts.bytes = report.bytes
    counts.chars = report.chars
    counts.lines = line_count(report.newlines, report.last_char)
    if not report.exact:
        counts.exact = False
        counts.notes.extend(report.all_notes())


def count_stream(
    stream: BinaryIO,
    ruler: Ruler,
    jobs: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> Counts:
    """Count tokens, chars, lines and bytes of a binary stream in bounded memory."""
    counts = Counts()
    pieces = iter_text_pieces(stream, counts, ruler, progress)
    jobs = jobs if jobs is not None else default_jobs()
    if ruler.parallel and jobs > 1:
        counts.tokens = _parallel_count(pieces, ruler, jobs)
    elif isinstance(ruler, TiktokenRuler) or not ruler.splittable:
        counts.tokens = sum(p if isinstance(p, int) else ruler.count(p) for p in pieces)
    else:
        tally = ruler.tally()
        for piece in pieces:
            tally.feed(piece)  # type: ignore[arg-type]
        counts.tokens = tally.total()
    return counts


def count_text(text: str, ruler: Ruler) -> Counts:
    data = text.encode("utf-8", "surrogateescape")
    return Counts(
        tokens=ruler.count(text),
        chars=len(text),
        lines=line_count(text.count("\n"), text[-1:] if text else ""),
        bytes=len(data),
    )


def default_jobs() -> int:
    try:
        return max(1, min(4, len(os.sched_getaffinity(0))))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, min(4, os.cpu_count() or 1))


def _parallel_count(pieces: Iterable[str | int], ruler: Ruler, jobs: int) -> int:
    """Count pieces on ``jobs`` threads, keeping at most 2×jobs pieces in memory.
    Numbers among the pieces are counts already made. No thread starts for one piece."""
    total = 0
    first = None
    pool = None
    pending: list = []
    try:
        for piece in pieces:
            if isinstance(piece, int):
                total += piece
                continue
            if first is None and pool is None:
                first = piece
                continue
            if pool is None:
                from concurrent.futures import ThreadPoolExecutor

                pool = ThreadPoolExecutor(max_workers=jobs)
                pending.append(pool.submit(ruler.count, first))
                first = None
            pending.append(pool.submit(ruler.count, piece))
            if len(pending) >= 2 * jobs:
                total += pending.pop(0).result()
        if first is not None:
            total += ruler.count(first)
        for fut in pending:
            total += fut.result()
    finally:
        if pool is not None:
            for fut in pending:
                fut.cancel()
            pool.shutdown(wait=True)
    return total


AWAY_CHARS = 1 << 20  # a text this long is counted on a thread of its own (``count_away``)


def count_away(count: Callable[[str], int], text: str) -> int:
    """COUNT(TEXT), with the main thread left to take Ctrl-C: tiktoken counts a 50 MB text
    in one call of about 6 s in which no signal handler runs, so a long text is counted on
    a daemon thread that the main thread waits for (a wait a signal interrupts; the thread
    is left behind when the process ends). A short text is counted here."""
    if len(text) < AWAY_CHARS:
        return count(text)
    import threading

    done: list = []

    def run() -> None:
        try:
            done.append(count(text))
        except BaseException as exc:  # (handed to the caller's thread, raised there)
            done.append(exc)

    worker = threading.Thread(target=run, name="ctx-count-away", daemon=True)
    worker.start()
    worker.join()
    if isinstance(done[0], BaseException):
        raise done[0]
    return done[0]
