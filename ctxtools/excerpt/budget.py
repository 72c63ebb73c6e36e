"""Budget fitting: drop windows, then whole files, until the rendered text fits a token budget."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ctxtools.excerpt.model import Excerpt, Span
from ctxtools.excerpt.render import gutter_width, render_excerpt


@dataclass(frozen=True)
class Dropped:
    """What a budget took out: a ``window`` of a file, or a whole ``file``."""

    label: str
    kind: str
    start: int = 0
    end: int = 0
    score: float = 0.0
    matched: bool = False


def _drop_order(items: Sequence[tuple[str, Excerpt]]) -> list[tuple[int, Span | None]]:
    """Lowest value first: files with nothing matched (their head and tail score 0; the
    last file first), then windows by score (on ties later files and later windows
    first), then matched files left with only their head (lowest score first)."""
    return _ordered(items, files_among_windows=False)


def value_drop_order(items: Sequence[tuple[str, Excerpt]]) -> list[tuple[int, Span | None]]:
    """Lowest value first, windows and whole files interleaved: files with nothing matched
    (the last file first), then every window and every matched file by score -- a window
    by its own score, a file by its total, so a weak file goes before a strong file's
    windows (a file always after its own windows; on ties later files first). For many
    files (a pack of a whole tree), this keeps the best files in depth instead of the heads
    of every file that mentions a word."""
    return _ordered(items, files_among_windows=True)


def _ordered(
    items: Sequence[tuple[str, Excerpt]], files_among_windows: bool
) -> list[tuple[int, Span | None]]:
    """(item index, window or None for the whole file), lowest value first: unmatched
    files, then windows by score, and matched files by score either among the windows
    (after them on ties) or after them all."""
    file_rank = 1 if files_among_windows else 2
    order: list[tuple[tuple, int, Span | None]] = []
    n = len(items)
    for i, (_label, ex) in enumerate(items):
        if not ex.matched:
            order.append(((0, 0.0, 0, n - i, 0), i, None))
            continue
        for k, span in enumerate(ex.spans):
            if span.kind == "window":
                order.append(((1, span.score, 0, n - i, -k), i, span))
        order.append(((file_rank, ex.score, 1, n - i, 0), i, None))
    order.sort(key=lambda t: t[0])
    return [(i, span) for _key, i, span in order]


def fit_budget(
    items: Sequence[tuple[str, Excerpt]],
    tokens: int,
    count: Callable[[str], int],
    render_one: Callable[[Excerpt, str], str] = render_excerpt,
    drop_order: Callable[[Sequence[tuple[str, Excerpt]]], list] | None = None,
) -> tuple[list[tuple[str, Excerpt]], list[Dropped], int]:
    """Drop windows, then whole files, until ``count(render(kept)) <= tokens``.

    Lowest value first: files with nothing matched (head and tail both score 0; the last
    file first), then windows, lowest score first (a file that keeps any window keeps its
    head), then matched files left with their head only, lowest score first. Returns the
    kept items (in the given order), what was dropped, and the token count of the result.
    DROP_ORDER replaces that order (``value_drop_order`` interleaves windows and files).
    """

    def render(kept: Sequence[tuple[str, Excerpt]]) -> str:
        return "\n".join(render_one(ex, label) for label, ex in kept)

    current = list(items)
    plan = (drop_order or _drop_order)(current)
    costs: dict[int, int] = {}

    def cost_of(k: int) -> int:
        """What unit K adds to the text, as the ruler counts it (a window's join included;
        a file's, a newline between it and the one before, is not)."""
        if k in costs:
            return costs[k]
        i, span = plan[k]
        label, ex = current[i]
        if span is None:  # the file itself: header, head, and a tail when nothing matched
            bare = ex
            for w in getattr(ex, "windows", ()):
                bare = bare.without(w)
            cost = count(render_one(bare, label))
        else:
            lines = ex.lines
            w = gutter_width(ex.line_count)
            rows = range(span.start, span.end + 1)
            cost = count("\n".join(f"{n:>{w}}│ {lines.get(n, '')}" for n in rows)) + 2
        costs[k] = cost
        return cost

    # Keep the most valuable units (the end of the drop order) while their counts add up
    # to the budget: only what can be kept is ever counted, however big the input.
    keep_from = len(plan)
    used = 0
    for k in range(len(plan) - 1, -1, -1):
        cost = cost_of(k) + (1 if used and plan[k][1] is None else 0)
        if used + cost > tokens:
            break
        used += cost
        keep_from = k
    alive = [True] * len(current)
    dropped: list[Dropped] = []

    def drop(k: int) -> None:
        i, span = plan[k]
        label, ex = current[i]
        if span is None:
            alive[i] = False
            dropped.append(Dropped(label, "file", matched=bool(ex.matched), score=ex.score))
        else:
            current[i] = (label, ex.without(span))
            dropped.append(Dropped(label, "window", span.start, span.end, span.score, True))

    for k in range(keep_from):
        drop(k)

    def kept() -> list[tuple[str, Excerpt]]:
        return [it for it, ok in zip(current, alive, strict=True) if ok]

    total = count(render(kept()))
    k = keep_from
    while total > tokens and k < len(plan):
        # The estimate was short: drop the next units worth the excess, then count again
        # (one recount per shortfall, not one per unit: the text may be megabytes).
        freed = 0
        while freed < total - tokens and k < len(plan):
            freed += cost_of(k)
            drop(k)
            k += 1
        total = count(render(kept()))
    result = kept()
    return result, dropped, (total if result else 0)
