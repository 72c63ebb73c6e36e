"""ctxtools.explanation: the one shape of --explain (ctx-excerpt, ctx-repomap, ctx-compact)."""

from __future__ import annotations

from ctxtools.explanation import Explanation, Item


def test_text_has_the_budget_the_chosen_and_the_left_out_with_bars():
    ex = Explanation(
        "ctx-test",
        "how it chose",
        {"tokens": 1000, "used": 250, "counter": "cl100k_base", "exact": True},
        [Item("a.py", "matched f", 3.5, 250, [Item("window 1-9", "2 matching lines", 3.5)])],
        [Item("b.py", "nothing matched")],
    )
    assert ex.text(width=10) == (
        "budget 1,000 tokens (cl100k_base); used 250 (25.0%)\n"
        "how it chose\n"
        "chosen (1)\n"
        "  a.py  score 3.5  250 tokens  ██░░░░░░░░: matched f\n"
        "    window 1-9  score 3.5: 2 matching lines\n"
        "left out (1)\n"
        "  b.py: nothing matched\n"
    )
    doc = ex.as_dict()
    assert doc["chosen"][0] == {
        "what": "a.py",
        "why": "matched f",
        "score": 3.5,
        "tokens": 250,
        "parts": [{"what": "window 1-9", "why": "2 matching lines", "score": 3.5, "tokens": None}],
    }
    assert doc["left_out"] == [
        {"what": "b.py", "why": "nothing matched", "score": None, "tokens": None}
    ]


def test_text_without_a_budget_and_long_lists_are_cut():
    many = [Item(f"f{i}", "x") for i in range(5)]
    text = Explanation("ctx-test", "s", None, [], many).text(shown=2)
    assert text == "s\nleft out (5)\n  f0: x\n  f1: x\n  ... and 3 more (--json lists them all)\n"
    approximate = {"tokens": 10, "used": 0, "counter": "heuristic", "exact": False}
    assert (
        Explanation("c", "s", approximate)
        .text()
        .startswith("budget 10 tokens (heuristic, approximate); used 0 (0.0%)\n")
    )
