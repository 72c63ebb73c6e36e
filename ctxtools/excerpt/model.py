"""The records of an excerpt: how a file is cut (``ExcerptOptions``), its matching lines
(``Hit``), the runs of lines it shows (``Span``) and the cut-down file (``Excerpt``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

# The options a user sets (ctx-excerpt's --window, --head, ...; the keys of --json's "options").
OPTION_NAMES = ("window", "head", "max_windows", "tail", "ignore_case")


@dataclass(frozen=True)
class ExcerptOptions:
    """How a file is cut: ±``window`` lines around matches, the first ``head`` lines always,
    at most ``max_windows`` windows, the last ``tail`` lines when nothing matches."""

    window: int = 25
    head: int = 15
    max_windows: int = 6
    tail: int = 40
    ignore_case: bool = False
    max_line_chars: int = 500

    def as_dict(self) -> dict:
        """The options as --json shows them (``max_line_chars`` is not an option there)."""
        return {name: getattr(self, name) for name in OPTION_NAMES}


@dataclass(frozen=True)
class Hit:
    """A matching line: its number and, per identifier, the weight of its best hit there."""

    line: int
    weights: tuple[tuple[str, float], ...]

    @property
    def identifiers(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.weights)


@dataclass(frozen=True)
class Span:
    """Lines ``start``..``end`` (1-based, inclusive) shown for one reason: ``head``,
    ``window`` (around matches) or ``tail`` (the fallback when nothing matched)."""

    kind: str
    start: int
    end: int
    score: float = 0.0
    identifiers: tuple[str, ...] = ()

    def __len__(self) -> int:
        return self.end - self.start + 1


@dataclass(frozen=True)
class Excerpt:
    """One file cut down: disjoint ``spans`` in file order, the text of their ``lines``,
    the query identifiers ``matched`` anywhere in the file (query order), how many lines
    match (``matches``), the ``hits`` its spans show (those matching lines, with their
    weights), how many windows were ``omitted`` (left out by ``max_windows`` -- the fewest
    that would show the rest -- or dropped for a budget), and how many matching lines no
    span shows (``omitted_matches``)."""

    line_count: int
    spans: tuple[Span, ...]
    lines: dict[int, str] = field(repr=False)
    matched: tuple[str, ...] = ()
    hits: tuple[Hit, ...] = field(default=(), repr=False)
    omitted: int = 0
    binary: bool = False
    size: int = 0
    omitted_matches: int = 0
    matches: int = 0

    @property
    def score(self) -> float:
        return sum(s.score for s in self.spans)

    @property
    def windows(self) -> tuple[Span, ...]:
        return tuple(s for s in self.spans if s.kind == "window")

    def without(self, span: Span) -> Excerpt:
        """This excerpt with SPAN dropped (a dropped window counts as omitted, and so do
        the matching lines it showed)."""
        spans = tuple(s for s in self.spans if s != span)
        if span.kind != "window":
            return replace(self, spans=spans)
        lines = sum(1 for hit in self.hits if span.start <= hit.line <= span.end)
        return replace(
            self,
            spans=spans,
            omitted=self.omitted + 1,
            omitted_matches=self.omitted_matches + lines,
        )

    def shown(self) -> Iterator[tuple[int, str]]:
        """(line number, text) of every shown line, in order."""
        for span in self.spans:
            for n in range(span.start, span.end + 1):
                yield n, self.lines.get(n, "")
