"""Eviction strategies: pure functions ``(entries, budget) -> ids to evict, in order``.

An entry is any plain record (a mapping or an object with attributes) carrying:

* ``id`` -- a string, unique among the entries,
* ``size_bytes`` -- what evicting it frees,
* ``last_accessed_at`` -- seconds since the epoch (or any monotonic clock, only order matters),
* ``access_count`` -- how often it was read (0 when unknown).

A budget says what must fit afterwards: ``max_bytes`` and/or ``max_entries`` (None: no
limit). Strategies evict in their order until the rest fits, so they return the shortest
prefix of their order that does. Same inputs, same output: ties are broken by ``id``, and
nothing reads the clock.

* ``lru`` -- least recently accessed first.
* ``importance`` -- lowest ``frequency x recency / size`` first, where frequency is
  ``1 + access_count`` and recency is ``last_accessed_at`` normalised over the current
  entries to [0.01, 1] (oldest 0.01, newest 1; all 1 when they are equally old). Without
  access counts it degrades to recency / size: old, big entries go first.

Both ``ctx-stash --gc`` and ``ctx-compact --evict`` use these.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

RECENCY_FLOOR = 0.01


@dataclass(frozen=True)
class GcBudget:
    """What must fit after eviction (None: unlimited)."""

    max_bytes: int | None = None
    max_entries: int | None = None


_OPTIONAL = {"access_count": 0}


def _field(entry: Any, key: str) -> Any:
    """A record's field; ``access_count`` is optional (no count yet means 0)."""
    if isinstance(entry, Mapping):
        if key in _OPTIONAL:
            return entry.get(key, _OPTIONAL[key])
        return entry[key]
    if key in _OPTIONAL:
        return getattr(entry, key, _OPTIONAL[key])
    return getattr(entry, key)


def _records(entries: Iterable[Any]) -> list[tuple[str, int, float, int]]:
    out = []
    for e in entries:
        count = _field(e, "access_count") or 0
        out.append(
            (
                str(_field(e, "id")),
                max(0, int(_field(e, "size_bytes"))),
                float(_field(e, "last_accessed_at")),
                max(0, int(count)),
            )
        )
    return out


def _fits(total_bytes: int, count: int, budget: GcBudget) -> bool:
    if budget.max_bytes is not None and total_bytes > budget.max_bytes:
        return False
    return not (budget.max_entries is not None and count > budget.max_entries)


def _take(order: Sequence[tuple[str, int, float, int]], budget: GcBudget) -> list[str]:
    total = sum(r[1] for r in order)
    count = len(order)
    out: list[str] = []
    for rec in order:
        if _fits(total, count, budget):
            break
        out.append(rec[0])
        total -= rec[1]
        count -= 1
    return out


def lru(entries: Iterable[Any], budget: GcBudget) -> list[str]:
    """Least recently accessed first (ties: smaller id first)."""
    recs = _records(entries)
    recs.sort(key=lambda r: (r[2], r[0]))
    return _take(recs, budget)


def importance_scores(entries: Iterable[Any]) -> dict[str, float]:
    """id -> frequency x recency / size (higher is more worth keeping)."""
    recs = _records(entries)
    if not recs:
        return {}
    oldest = min(r[2] for r in recs)
    newest = max(r[2] for r in recs)
    span = newest - oldest
    scores = {}
    for ident, size, last, count in recs:
        recency = 1.0
        if span > 0:
            recency = RECENCY_FLOOR + (1 - RECENCY_FLOOR) * (last - oldest) / span
        scores[ident] = (1 + count) * recency / max(size, 1)
    return scores


def importance(entries: Iterable[Any], budget: GcBudget) -> list[str]:
    """Least important first: lowest frequency x recency / size (ties: smaller id first)."""
    recs = _records(entries)
    scores = importance_scores(recs_as_maps(recs))
    recs.sort(key=lambda r: (scores[r[0]], r[0]))
    return _take(recs, budget)


def recs_as_maps(recs: list[tuple[str, int, float, int]]) -> list[dict]:
    return [
        {"id": i, "size_bytes": s, "last_accessed_at": t, "access_count": c} for i, s, t, c in recs
    ]


STRATEGIES: dict[str, Callable[[Iterable[Any], GcBudget], list[str]]] = {
    "lru": lru,
    "importance": importance,
}


def evict(strategy: str, entries: Iterable[Any], budget: GcBudget, **_: Any) -> list[str]:
    """Run the strategy named STRATEGY (``lru`` or ``importance``)."""
    try:
        func = STRATEGIES[strategy]
    except KeyError:
        from ctxtools.errors import UsageError

        raise UsageError(
            f"unknown eviction strategy {strategy!r}", hint="one of: " + ", ".join(STRATEGIES)
        ) from None
    return func(entries, budget)
