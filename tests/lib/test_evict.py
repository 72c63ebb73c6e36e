"""Eviction strategies: pure, deterministic, ties broken by id."""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from ctxtools.errors import UsageError
from ctxtools.store import evict
from ctxtools.store.evict import GcBudget, importance, importance_scores, lru


def e(ident, size, last, count=0):
    return {"id": ident, "size_bytes": size, "last_accessed_at": last, "access_count": count}


ENTRIES = [
    e("a", 100, 10.0, 0),
    e("b", 100, 30.0, 5),
    e("c", 1000, 20.0, 1),
    e("d", 10, 5.0, 50),
]


def test_lru_oldest_first_until_bytes_fit():
    # total 1210; fit 300 -> evict d(5) a(10) c(20): rest is b = 100
    assert lru(ENTRIES, GcBudget(max_bytes=300)) == ["d", "a", "c"]
    assert lru(ENTRIES, GcBudget(max_bytes=1210)) == []
    assert lru(ENTRIES, GcBudget(max_bytes=1209)) == ["d"]


def test_lru_entries_budget():
    assert lru(ENTRIES, GcBudget(max_entries=2)) == ["d", "a"]
    assert lru(ENTRIES, GcBudget(max_entries=0)) == ["d", "a", "c", "b"]
    assert lru(ENTRIES, GcBudget()) == []


def test_both_limits_must_hold():
    assert lru(ENTRIES, GcBudget(max_bytes=2000, max_entries=3)) == ["d"]
    assert lru(ENTRIES, GcBudget(max_bytes=150, max_entries=3)) == ["d", "a", "c"]


def test_ties_broken_by_id():
    same = [e("z", 10, 1.0), e("m", 10, 1.0), e("a", 10, 1.0)]
    assert lru(same, GcBudget(max_entries=0)) == ["a", "m", "z"]
    assert importance(same, GcBudget(max_entries=0)) == ["a", "m", "z"]


def test_importance_frequency_recency_size():
    scores = importance_scores(ENTRIES)
    # newest (b, t=30) has recency 1; oldest (d, t=5) 0.01
    assert scores["b"] == pytest.approx(6 * 1.0 / 100)
    assert scores["d"] == pytest.approx(51 * 0.01 / 10)
    assert scores["a"] == pytest.approx(1 * (0.01 + 0.99 * 5 / 25) / 100)
    assert scores["c"] == pytest.approx(2 * (0.01 + 0.99 * 15 / 25) / 1000)
    order = importance(ENTRIES, GcBudget(max_entries=0))
    assert order == sorted(scores, key=lambda k: (scores[k], k))
    assert order[0] == "c"  # big, rarely read
    assert order[-1] == "b"


def test_importance_without_counts_degrades_to_recency_over_size():
    plain = [e("old-big", 1000, 1.0), e("new-big", 1000, 9.0), e("old-small", 10, 1.0)]
    assert importance(plain, GcBudget(max_entries=0)) == ["old-big", "new-big", "old-small"]
    missing = [{"id": "x", "size_bytes": 5, "last_accessed_at": 1, "access_count": None}]
    assert importance(missing, GcBudget(max_entries=0)) == ["x"]


def test_same_inputs_same_output_any_order():
    rng = random.Random(7)
    entries = [
        e(f"id{i:03d}", rng.randint(1, 5000), rng.randint(0, 50), rng.randint(0, 9))
        for i in range(200)
    ]
    budget = GcBudget(max_bytes=100_000, max_entries=120)
    for strategy in (lru, importance):
        expected = strategy(entries, budget)
        shuffled = entries[:]
        rng.shuffle(shuffled)
        assert strategy(shuffled, budget) == expected
        rest = [x for x in entries if x["id"] not in set(expected)]
        assert sum(x["size_bytes"] for x in rest) <= 100_000 and len(rest) <= 120
        # the shortest prefix: without its last id the budget would not hold
        if expected:
            kept_plus = rest + [x for x in entries if x["id"] == expected[-1]]
            assert sum(x["size_bytes"] for x in kept_plus) > 100_000 or len(kept_plus) > 120


@dataclass
class Rec:
    id: str
    size_bytes: int
    last_accessed_at: float
    access_count: int


def test_plain_objects_work_too():
    recs = [Rec("x", 10, 2.0, 0), Rec("y", 10, 1.0, 0)]
    assert lru(recs, GcBudget(max_entries=1)) == ["y"]
    assert evict.evict("importance", recs, GcBudget(max_entries=1)) == ["y"]


def test_unknown_strategy():
    with pytest.raises(UsageError, match="unknown eviction strategy 'fifo'"):
        evict.evict("fifo", ENTRIES, GcBudget(max_entries=1))


def test_empty():
    assert lru([], GcBudget(max_bytes=0)) == []
    assert importance([], GcBudget(max_entries=0)) == []


def test_access_count_is_optional_in_plain_records():
    from ctxtools.store import evict as ev

    entries = [
        {"id": "old", "size_bytes": 10, "last_accessed_at": 1.0},
        {"id": "new", "size_bytes": 10, "last_accessed_at": 2.0},
    ]
    assert ev.lru(entries, ev.GcBudget(max_entries=1)) == ["old"]
    assert ev.importance(entries, ev.GcBudget(max_entries=1)) == ["old"]
