"""Fitting a run's excerpts into a token budget, in the engine's order of relevance.

What a pack takes first, a budget keeps first: windows in the order ctx-pack takes chunks
(``retrieval.plan.by_relevance``: the most relevant first, ties by label and line), each
taken while it fits (a file's header and head come with its first window), one that does
not fit is passed over as the planner passes over it (``plan.MAX_MISSES`` in a row end
the walk); then the matched files that kept no window (their header and head), then the
files where nothing matched, in the order given. What stays out is what is worth least.
A file whose head does not fit with its first window (a small budget; a small file, which
is all head) is shown without it when its header and that window fit: the windows the
head carried become the file's own, taken best first after everything else. The text is
counted again at the end; while it is over, the last unit taken goes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ctxtools.excerpt.model import Excerpt, Span
from ctxtools.excerpt.render import render_excerpt
from ctxtools.quoting import numbered
from ctxtools.retrieval.plan import MAX_MISSES, by_relevance


@dataclass(frozen=True)
class Dropped:
    """What a budget took out: a ``window`` of a file, a file's ``head`` (the file shown by
    its windows alone), or a whole ``file``."""

    label: str
    kind: str
    start: int = 0
    end: int = 0
    score: float = 0.0
    matched: bool = False


def _units(items: Sequence[tuple[str, object]]) -> list[tuple[int, Span | None]]:
    """(item index, window or None for the file itself), in the order they are kept."""
    wins = []
    for i, (label, ex) in enumerate(items):
        for span in getattr(ex, "spans", ()):
            if span.kind == "window":
                wins.append((span.score, label, (i, span.start), i, span))
    order: list[tuple[int, Span | None]] = [(t[3], t[4]) for t in by_relevance(wins)]
    matched = [(ex.score, label, (i, 0), i) for i, (label, ex) in enumerate(items) if _matched(ex)]
    order += [(t[3], None) for t in by_relevance(matched)]
    order += [(i, None) for i, (_label, ex) in enumerate(items) if not _matched(ex)]
    return order


def _matched(ex) -> bool:
    return bool(ex.matched)


def _bare(ex):
    for w in getattr(ex, "windows", ()):
        ex = ex.without(w)
    return ex


def fit_budget(
    items: Sequence[tuple[str, object]],
    tokens: int,
    count: Callable[[str], int],
    render_one: Callable[[object, str], str] = render_excerpt,
) -> tuple[list[tuple[str, object]], list[Dropped], int]:
    """Keep what is worth most of ITEMS (label, excerpt or signatures) while
    ``count(render(kept)) <= tokens`` (see the module). Returns the kept items in the
    given order, what was dropped, and the token count of the result."""
    given = items
    items = list(items)  # a file shown without its head is replaced here (``_headless``)
    units = _units(items)
    base_cost: dict[int, int] = {}
    taken: list[int] = []  # indexes into units
    costs: list[int] = []  # what each taken unit added
    files: set[int] = set()
    used = misses = 0
    for u, (i, span) in enumerate(units):
        if misses >= MAX_MISSES:
            break
        label, ex = items[i]
        extra = 0
        if i not in files:
            if i not in base_cost:
                base_cost[i] = count(render_one(_bare(ex), label)) + (1 if used else 0)
            extra = base_cost[i]
        cost = extra + (_window_cost(ex, span, count) if span is not None else 0)
        if span is None and i in files:
            continue
        if used + cost > tokens:
            lean = None if i in files else _headless(items, units, i, span, count, render_one)
            if lean is None or used + lean[1] + (1 if used else 0) > tokens:
                if lean is not None:
                    items[i] = given[i]
                    del units[lean[0] :]
                misses += 1
                continue
            u, cost = lean[0], lean[1] + (1 if used else 0)
        misses = 0
        used += cost
        taken.append(u)
        costs.append(cost)
        files.add(i)

    def kept_of(chosen: list[int]) -> list[tuple[str, object]]:
        keep_spans: dict[int, set] = {}
        for u in chosen:
            i, span = units[u]
            keep_spans.setdefault(i, set())
            if span is not None:
                keep_spans[i].add(span)
        out = []
        for i, (label, ex) in enumerate(items):
            if i not in keep_spans:
                continue
            for w in getattr(ex, "windows", ()):
                if w not in keep_spans[i]:
                    ex = ex.without(w)
            out.append((label, ex))
        return out

    kept = kept_of(taken)
    total = count("\n".join(render_one(ex, label) for label, ex in kept))
    while total > tokens and taken:
        # The estimate was short: the last units taken (worth least) go until what they
        # freed covers the excess, then the text is counted again (one count a shortfall).
        freed = 0
        while taken and freed < total - tokens:
            taken.pop()
            freed += costs.pop()
        kept = kept_of(taken)
        total = count("\n".join(render_one(ex, label) for label, ex in kept))
    return kept, _dropped(items, units, taken, given), (total if kept else 0)


def _headless(items, units, i: int, span: Span | None, count, render_one):
    """File I shown without its head (``Excerpt.without_head``): ITEMS[I] replaced, a unit
    appended to UNITS for its first window (SPAN, else the best window the head carried),
    then one for each other window the head carried, best first; (the first's index, the
    file's header and that window's cost). None when there is no such window."""
    label, ex = items[i]
    lean = ex.without_head() if isinstance(ex, Excerpt) else None
    if lean is None:
        return None
    carried = by_relevance(
        [(w.score, label, w.start, w) for w in lean.windows if w not in ex.spans]
    )
    first = span if span is not None else carried[0][3] if carried else None
    if first is None:
        return None
    cost = count(render_one(_bare(lean), label)) + _window_cost(lean, first, count)
    items[i] = (label, lean)
    at = len(units)
    units.append((i, first))
    units.extend((i, t[3]) for t in carried if t[3] != first)
    return at, cost


def _window_cost(ex: Excerpt, span: Span, count: Callable[[str], int]) -> int:
    """What a window adds to its file's text (its lines, and a separator line)."""
    rows = range(span.start, span.end + 1)
    return count("\n".join(numbered(n, ex.lines.get(n, "")) for n in rows)) + 2


def _dropped(items, units, taken: list[int], given) -> list[Dropped]:
    """What the budget left out: whole files, else the heads (of the files shown without
    theirs: GIVEN holds the excerpts as they came) and windows of the files kept."""
    kept_files = {units[u][0] for u in taken}
    kept_units = {units[u] for u in taken}  # (a window taken headless is in UNITS twice)
    out: list[Dropped] = []
    for i, (label, ex) in enumerate(items):
        if i not in kept_files:
            out.append(Dropped(label, "file", score=ex.score, matched=_matched(ex)))
        elif ex is not given[i][1]:
            head = next(s for s in given[i][1].spans if s.kind == "head")
            out.append(Dropped(label, "head", head.start, head.end, head.score, True))
    for i, span in dict.fromkeys(units):
        if span is not None and i in kept_files and (i, span) not in kept_units:
            out.append(Dropped(items[i][0], "window", span.start, span.end, span.score, True))
    return out
