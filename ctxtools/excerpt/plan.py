"""Span planning: which windows of a file to show, given its matching lines.

A window is the ±``window`` lines around one chosen matching line. Windows are chosen best
first (the highest score over the matching lines they would add; a matching line inside a
chosen window starts none), at most ``max_windows`` of them; chosen windows that overlap
or touch are shown merged. A window scores the sum over the distinct identifiers in it of
their best weight there, plus 0.25 for each further line that mentions them (at most 1 per
identifier): distinct identifiers count for more than repeats.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace

from ctxtools.excerpt.match import Matcher
from ctxtools.excerpt.model import ExcerptOptions, Span

REPEAT_BONUS = 0.25
REPEAT_CAP = 4


@dataclass(frozen=True)
class Plan:
    """What a file shows: its ``spans`` (disjoint, in file order), and what was left out:
    ``omitted_matches`` matching lines outside every span, which ``omitted_windows`` more
    windows (the fewest, each around one of those lines) would show."""

    spans: tuple[Span, ...]
    omitted_windows: int = 0
    omitted_matches: int = 0


def plan_spans(
    hits: dict[int, dict[str, float]], line_count: int, options: ExcerptOptions, matcher: Matcher
) -> Plan:
    """The spans to show for a file with HITS (matching line -> identifier -> weight).

    A window is the ±``window`` lines around one chosen matching line. They are chosen
    best first: each candidate (one a matching line) is scored over the matching lines in
    its range that no chosen window shows yet, the best is chosen (ties: the earlier
    line), the candidates it overlaps are scored again, and so on until ``max_windows``
    are chosen or every matching line is shown; a matching line inside a chosen window
    starts none. Chosen windows that overlap or touch are shown merged (scored over all
    the matching lines they show), so at most ``head + max_windows × (2 × window + 1)``
    lines are shown.
    """
    n = line_count
    h = max(0, min(options.head, n))
    if not hits:  # the common case over many files: head and tail only
        spans = [Span("head", 1, h)] if h else []
        t = max(0, options.tail)
        start = max(h + 1, n - t + 1)
        if t and start <= n:
            spans.append(Span("tail", start, n))
        return Plan(tuple(spans))
    lines = sorted(hits)
    w = max(0, options.window)
    chosen = _choose_windows(lines, hits, w, max(0, options.max_windows))
    spans = _spans_of(chosen, lines, hits, n, h, w, matcher)
    left = list(_left_out(lines, spans))
    return Plan(tuple(spans), _fewest_windows(left, w), len(left))


def _spans_of(
    chosen: list[int],
    lines: list[int],
    hits: dict[int, dict[str, float]],
    n: int,
    h: int,
    w: int,
    matcher: Matcher,
) -> list[Span]:
    """The spans shown for the CHOSEN matching lines: their ±W windows, merged where they
    overlap or touch, after the head (lines 1..H, which takes in a window inside it)."""
    windows: list[Span] = []
    cur_start = cur_end = None
    for c in sorted(chosen):
        s, e = max(1, c - w), min(n, c + w)
        if cur_end is not None and s <= cur_end + 1:
            cur_end = max(cur_end, e)
        else:
            if cur_end is not None:
                windows.append(_score_window(cur_start, cur_end, lines, hits, matcher))
            cur_start, cur_end = s, e
    if cur_end is not None:
        windows.append(_score_window(cur_start, cur_end, lines, hits, matcher))
    head = Span("head", 1, h) if h else None
    spans: list[Span] = []
    for win in windows:
        if win.start <= h:
            if win.end <= h:  # wholly inside the head: the head carries its score
                assert head is not None
                head = Span(
                    "head",
                    1,
                    h,
                    head.score + win.score,
                    matcher.order(head.identifiers + win.identifiers),
                )
                continue
            win = replace(win, start=h + 1)
        spans.append(win)
    if head is not None:
        spans.insert(0, head)
    return spans


def _choose_windows(
    lines: list[int], hits: dict[int, dict[str, float]], w: int, keep: int
) -> list[int]:
    """The matching lines (of LINES, sorted) whose ±W windows are shown: at most KEEP,
    best first; on equal scores, the window around the weightier line (a definition),
    then the earlier line. Lazy greedy: the heap holds upper bounds of the candidates'
    scores (a score only falls as windows are chosen), and a candidate is scored again
    only when it comes to the top with a bound that may be stale."""
    import heapq
    from bisect import bisect_left, bisect_right

    if keep == 0:
        return []
    count = len(lines)
    lo = [0] * count  # candidate k covers the matching lines lines[lo[k]:hi[k]]
    hi = [0] * count
    a = b = 0
    for k, c in enumerate(lines):
        while lines[a] < c - w:
            a += 1
        while b < count and lines[b] <= c + w:
            b += 1
        lo[k], hi[k] = a, b
    ws = [hits[line] for line in lines]
    # ties: the window around the weightier line (a definition), then the earlier one
    own = [-sum(found.values()) for found in ws]
    if count == 1:
        return lines[:1]
    if sum(hi) - sum(lo) > 8 * count:  # dense: most ranges hold many matching lines
        scores = _sliding_scores(lines, hits, lo, hi)
        dirty = [False] * count
    else:
        # Sparse: each range starts with an upper bound of its score, the sum of its lines'
        # weights (a weight is at least 1, a repeat adds 0.25), exact for one line; the
        # exact score is worked out when the range comes to the top of the heap.
        prefix = [0.0]
        for x in own:
            prefix.append(prefix[-1] - x)
        scores = [prefix[hi[k]] - prefix[lo[k]] for k in range(count)]
        dirty = [hi[k] - lo[k] > 1 for k in range(count)]
    heap = [(-score, own[k], k) for k, score in enumerate(scores)]
    heapq.heapify(heap)
    covered = [False] * count
    chosen: list[int] = []
    while heap and len(chosen) < keep:
        _neg, _own, k = heapq.heappop(heap)
        if covered[k]:
            continue
        if dirty[k]:
            dirty[k] = False
            left = [ws[j] for j in range(lo[k], hi[k]) if not covered[j]]
            heapq.heappush(heap, (-_score_of(left), own[k], k))
            continue
        chosen.append(lines[k])
        first, last = lo[k], hi[k]
        for j in range(first, last):
            covered[j] = True
        # the candidates whose ranges overlap lines[first:last] are scored again
        for j in range(bisect_right(hi, first), bisect_left(lo, last)):
            dirty[j] = True
    return chosen


def _score_of(weights: Iterable[dict[str, float]]) -> float:
    """A window's score from the identifier weights of its matching lines."""
    best: dict[str, float] = {}
    count: dict[str, int] = {}
    for found in weights:
        for name, weight in found.items():
            old = best.get(name)
            if old is None:
                best[name] = weight
                count[name] = 1
            else:
                if weight > old:
                    best[name] = weight
                count[name] += 1
    total = sum(best.values())
    for c in count.values():
        if c > 1:
            total += REPEAT_BONUS * min(c - 1, REPEAT_CAP)
    return total


def _sliding_scores(
    lines: list[int], hits: dict[int, dict[str, float]], lo: list[int], hi: list[int]
) -> list[float]:
    """``_score_of`` the matching lines ``lines[lo[k]:hi[k]]`` for every k, in time linear
    in the number of lines (the ranges only move forward): a dense file has as many
    candidates as lines, each range holding up to 2 × window + 1 of them."""
    per_weight: dict[str, dict[float, int]] = {}  # identifier -> weight -> lines in range
    count: dict[str, int] = {}
    scores: list[float] = []
    a = b = 0
    for k in range(len(lines)):
        while b < hi[k]:
            window_add(per_weight, count, hits[lines[b]])
            b += 1
        while a < lo[k]:
            window_drop(per_weight, count, hits[lines[a]])
            a += 1
        scores.append(window_score(per_weight, count))
    return scores


def _left_out(lines: Iterable[int], spans: Sequence[Span]) -> Iterator[int]:
    """The matching LINES (in order) that no span shows."""
    k = 0
    for line in lines:
        while k < len(spans) and spans[k].end < line:
            k += 1
        if k == len(spans) or line < spans[k].start:
            yield line


def _fewest_windows(left: Iterable[int], w: int) -> int:
    """The fewest ±W windows, each around one of the sorted lines LEFT, that show them
    all (each window around the last line within W of the first line not yet shown), in
    one pass."""
    windows = 0
    first = centre = reach = None
    for line in left:
        if first is not None:  # choosing the centre of the window that shows FIRST
            if line <= first + w:
                centre = line
                continue
            reach = centre + w
            first = None
        if reach is not None and line <= reach:
            continue
        first = centre = line
        windows += 1
    return windows


def _score_window(
    start: int, end: int, lines: list[int], hits: dict[int, dict[str, float]], matcher: Matcher
) -> Span:
    """The window of lines START..END, scored over the matching lines in it."""
    from bisect import bisect_left, bisect_right

    found = [hits[line] for line in lines[bisect_left(lines, start) : bisect_right(lines, end)]]
    names: set[str] = set()
    for f in found:
        names.update(f)
    return Span("window", start, end, _score_of(found), matcher.order(names))


def window_add(per_weight: dict, count: dict, found: dict) -> None:
    """A matching line's identifiers (name -> weight) enter a sliding range's tallies."""
    for name, weight in found.items():
        slot = per_weight.setdefault(name, {})
        slot[weight] = slot.get(weight, 0) + 1
        count[name] = count.get(name, 0) + 1


def window_drop(per_weight: dict, count: dict, found: dict) -> None:
    """A matching line's identifiers leave a sliding range's tallies."""
    for name, weight in found.items():
        slot = per_weight[name]
        slot[weight] -= 1
        if not slot[weight]:
            del slot[weight]
        count[name] -= 1
        if not count[name]:
            del count[name]
            del per_weight[name]


def window_score(per_weight: dict, count: dict) -> float:
    """A range's score from its tallies: each identifier's best weight, plus a bonus for
    its repeats (as ``_score_of``)."""
    best = sum(max(slot) for slot in per_weight.values())
    return best + sum(REPEAT_BONUS * min(c - 1, REPEAT_CAP) for c in count.values())
