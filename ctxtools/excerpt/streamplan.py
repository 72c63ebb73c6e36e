"""The plan of a streamed file (``plan_spans`` for a text read in pieces), in memory that
does not grow with its matches: a log of a gigabyte where every line matches held a dict a
matching line, 7 GB.

The matching lines come in order, a piece of the file at a time. Each one is a candidate
window (its ±``window`` lines); its score (``plan._score_of`` over the matching lines in
that range) is kept up to date as the range slides along the file, and only the best
``cap`` candidates, with the matching lines of their ranges, are kept. Choosing a window
lowers the scores of at most ``4 × window + 1`` candidates (those whose ranges overlap
it), so while fewer than ``max_windows`` are chosen some kept candidate still has its
first score, which no candidate left out can beat: with ``cap`` above ``max_windows ×
(4 × window + 1)``, the greedy choice over the kept ones (``plan._choose_windows``) is the
choice over all of them. What is left of each matching line is its number (4 bytes, for
the count of those no span shows and the fewest windows that would show them).
"""

from __future__ import annotations

import heapq
from array import array
from collections import deque

from ctxtools.excerpt.match import Matcher
from ctxtools.excerpt.model import ExcerptOptions, Span
from ctxtools.excerpt.plan import (
    Plan,
    _choose_windows,
    _fewest_windows,
    _left_out,
    _spans_of,
    plan_spans,
    window_add,
    window_drop,
    window_score,
)

Found = dict[str, float]  # a matching line: identifier -> weight


class StreamPlanner:
    """``add`` the matching lines in order (the same line again when a long line comes in
    several pieces), then ``finish``."""

    def __init__(self, options: ExcerptOptions) -> None:
        self.options = options
        self.w = max(0, options.window)
        self.keep = max(0, options.max_windows)
        self.cap = self.keep * (4 * self.w + 1) + 1
        self.lines = array("I")  # every matching line's number
        self.matched: set[str] = set()
        self.head: list[tuple[int, Found]] = []  # the matching lines the head may show
        self._last: tuple[int, Found] | None = None
        self._recent: deque[tuple[int, Found]] = deque()  # from the next candidate's range on
        self._added = 0  # of _recent, in the sliding score
        self._pending: deque[tuple[int, Found]] = deque()  # waiting for their range's end
        self._per_weight: dict[str, dict[float, int]] = {}
        self._count: dict[str, int] = {}
        self._best: list[tuple] = []  # (score, -own, -line, line, range): the worst on top

    def add(self, line: int, found: Found) -> None:
        last = self._last
        if last is not None and last[0] == line:  # the next piece of a long line
            for name, weight in found.items():
                if weight > last[1].get(name, 0.0):
                    last[1][name] = weight
            return
        if last is not None:
            self._take(*last)
        self._last = (line, dict(found))

    def _take(self, line: int, found: Found) -> None:
        if line > 0xFFFFFFFF and self.lines.typecode == "I":
            self.lines = array("Q", self.lines)
        self.lines.append(line)
        self.matched.update(found)
        if line <= self.options.head:
            self.head.append((line, found))
        self._recent.append((line, found))
        self._pending.append((line, found))
        while self._pending and self._pending[0][0] + self.w < line:
            self._score(*self._pending.popleft())

    def _score(self, c: int, own: Found) -> None:
        """Candidate C, whose range's matching lines have all come: scored, and kept when
        it is among the best ``cap``."""
        recent, w = self._recent, self.w
        per_weight, count = self._per_weight, self._count
        while self._added < len(recent) and recent[self._added][0] <= c + w:
            window_add(per_weight, count, recent[self._added][1])
            self._added += 1
        while recent[0][0] < c - w:
            window_drop(per_weight, count, recent.popleft()[1])
            self._added -= 1
        score = window_score(per_weight, count)
        key = (score, sum(own.values()), -c)
        best = self._best
        if len(best) >= self.cap and key <= best[0][:3]:
            return
        entry = (*key, c, [recent[k] for k in range(self._added)])
        if len(best) < self.cap:
            heapq.heappush(best, entry)
        else:
            heapq.heapreplace(best, entry)

    def finish(self, line_count: int, matcher: Matcher) -> tuple[Plan, dict[int, Found]]:
        """The plan, and the matching lines its spans show."""
        if self._last is not None:
            self._take(*self._last)
            self._last = None
        while self._pending:
            self._score(*self._pending.popleft())
        if not self.lines:
            return plan_spans({}, line_count, self.options, matcher), {}
        kept: dict[int, Found] = {}
        for entry in self._best:
            kept.update(entry[4])
        lines = sorted(kept)
        n = line_count
        h = max(0, min(self.options.head, n))
        chosen = _choose_windows(lines, kept, self.w, self.keep)
        spans = _spans_of(chosen, lines, kept, n, h, self.w, matcher)
        omitted = sum(1 for _ in _left_out(self.lines, spans))
        plan = Plan(tuple(spans), _fewest_windows(_left_out(self.lines, spans), self.w), omitted)
        shown = {line: f for line, f in self.head if line <= h}
        for span in spans:
            if span.kind == "window":
                shown.update((x, kept[x]) for x in lines if span.start <= x <= span.end)
        return plan, shown


def shown_hits(spans: tuple[Span, ...], hits: dict[int, Found]) -> dict[int, Found]:
    """The matching lines of HITS that SPANS show."""
    return {line: f for line, f in hits.items() if any(s.start <= line <= s.end for s in spans)}
