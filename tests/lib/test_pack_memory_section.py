"""The memory section's rule for a best section over the memory budget (issue 17): the
share of the best is measured against the best section that fits."""

from __future__ import annotations

from types import SimpleNamespace

from ctxtools.memory.chunk import Chunk
from ctxtools.memory.rank import Scored
from ctxtools.pack.memory_section import _fill
from ctxtools.pack.render import Renderer


def _ranking(sections: list[tuple[str, float, bool, str]]):
    chunks = [
        Scored(Chunk(name, name, 1, 3, name), text, score, kept, "")
        for name, score, kept, text in sections
    ]
    threshold = {
        "threshold": 0.9,
        "floor": 0.15,
        "median": 0.0,
        "margin": 0.15,
        "best": 1.0,
        "share": 0.9,
        "rule": "share of the best",
    }
    return SimpleNamespace(chunks=chunks, threshold=threshold)


def _run(sections, cap):
    ranking = _ranking(sections)
    rows = [dict(s.as_dict(), in_pack=False) for s in ranking.chunks]
    count = lambda text: len(text.split())  # noqa: E731 -- a word is a token here
    parts = _fill(ranking, rows, cap, Renderer("markdown"), count)
    return [lab for lab, _ in parts], rows


def test_when_the_best_section_is_over_the_budget_the_next_ones_that_fit_go_in():
    big = "strip comments " * 400
    sections = [
        ("big.md", 1.00, True, big),
        ("howto.md", 0.80, False, "run the stripper first"),
        ("stripper.md", 0.75, False, "the stripper takes comments out"),
        ("weak.md", 0.30, False, "releases are tagged"),
    ]
    labels, rows = _run(sections, cap=120)
    assert labels == ["howto.md:1-3", "stripper.md:1-3"]
    assert "over the memory budget" in rows[0]["why"] and not rows[0]["in_pack"]
    assert "best section that fits" in rows[1]["why"]
    assert not rows[3]["in_pack"]  # 0.30 is under 90% of 0.80


def test_when_the_best_section_fits_the_rule_is_as_before():
    sections = [
        ("best.md", 1.00, True, "strip comments before packing"),
        ("howto.md", 0.80, False, "run the stripper first"),
    ]
    labels, rows = _run(sections, cap=120)
    assert labels == ["best.md:1-3"]
    assert not rows[1]["in_pack"]
