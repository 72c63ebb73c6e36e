"""The records of an excerpt: how a file is cut (``ExcerptOptions``), the runs of lines it
shows (``Span``, each carrying the engine's windows it shows) and the cut-down file
(``Excerpt``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from ctxtools.retrieval.window import Window

# The options a user sets (ctx-excerpt's --window, --head, ...; the keys of --json's "options").
OPTION_NAMES = ("window", "head", "max_windows", "tail", "ignore_case")


@dataclass(frozen=True)
class ExcerptOptions:
    """How a file is cut: its first ``head`` lines always, at most ``max_windows`` windows
    (a file's best chunks; in a text without definitions, ±``window`` lines around its
    best lines), the last ``tail`` lines when nothing matches. ``ignore_case`` is accepted
    and changes nothing: the engine matches words regardless of case."""

    window: int = 25
    head: int = 15
    max_windows: int = 6
    tail: int = 40
    ignore_case: bool = False
    max_line_chars: int = 500
    blank_keys: bool = False  # a streamed text's key blocks shown blank (``iter_excerpts``)

    def as_dict(self) -> dict:
        """The options as --json shows them (``max_line_chars`` is not an option there)."""
        return {name: getattr(self, name) for name in OPTION_NAMES}


@dataclass(frozen=True)
class Span:
    """Lines ``start``..``end`` (1-based, inclusive) shown for one reason: ``head``,
    ``window`` (one of the engine's windows) or ``tail`` (the fallback when nothing
    matched). ``windows``: the engine's windows it shows (the head carries those inside
    it); ``score`` is the best of theirs."""

    kind: str
    start: int
    end: int
    windows: tuple[Window, ...] = ()

    @property
    def score(self) -> float:
        return max((w.score for w in self.windows), default=0.0)

    @property
    def terms(self) -> tuple[str, ...]:
        out: dict[str, None] = {}
        for w in self.windows:
            out.update(dict.fromkeys(w.terms))
        return tuple(out)

    def __len__(self) -> int:
        return self.end - self.start + 1


def window_spans(windows, first: int = 1) -> list[Span]:
    """WINDOWS as spans in line order, none starting before FIRST, each starting after the
    one before it (overlapping chunks of a long definition's parts); a window left with no
    line of its own is none."""
    out: list[Span] = []
    for w in sorted(windows, key=lambda w: (w.start, w.end)):
        start = max(w.start, first, out[-1].end + 1 if out else first)
        if start <= w.end:
            out.append(Span("window", start, w.end, (w,)))
    return out


@dataclass(frozen=True)
class Excerpt:
    """One file cut down: disjoint ``spans`` in file order, the text of their ``lines``,
    the query terms ``matched`` anywhere in the file, its ``score`` (the engine's file
    score), how many windows above the floor were ``omitted`` (by ``max_windows``, or
    dropped for a budget), and ``matches``: how many lines hold a query term (a text
    without definitions) or how many chunks have evidence of their own."""

    line_count: int
    spans: tuple[Span, ...]
    lines: dict[int, str] = field(repr=False)
    matched: tuple[str, ...] = ()
    score: float = 0.0
    omitted: int = 0
    binary: bool = False
    size: int = 0
    matches: int = 0
    blanked: int = 0  # private key blocks shown as blank lines (``ExcerptOptions.blank_keys``)

    @property
    def windows(self) -> tuple[Span, ...]:
        return tuple(s for s in self.spans if s.kind == "window")

    def without(self, span: Span) -> Excerpt:
        """This excerpt with SPAN dropped (a dropped window counts as omitted)."""
        spans = tuple(s for s in self.spans if s != span)
        if span.kind != "window":
            return replace(self, spans=spans)
        return replace(self, spans=spans, omitted=self.omitted + 1)

    def without_head(self) -> Excerpt | None:
        """This excerpt with its head left out and the windows the head carried shown as
        windows of their own (for a budget too small for the head), or None when it has
        no head or no window would be left."""
        head = next((s for s in self.spans if s.kind == "head"), None)
        if head is None or not (head.windows or self.windows):
            return None
        own = window_spans(head.windows)
        spans = sorted((*own, *(s for s in self.spans if s is not head)), key=lambda s: s.start)
        return replace(self, spans=tuple(spans))

    def shown(self) -> Iterator[tuple[int, str]]:
        """(line number, text) of every shown line, in order."""
        for span in self.spans:
            for n in range(span.start, span.end + 1):
                yield n, self.lines.get(n, "")
