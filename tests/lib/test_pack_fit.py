"""The fitting rounds of a pack (pack.fit.fit_rounds): the files give back what their
plan's estimate ran over, once, not once a round."""

from __future__ import annotations

from types import SimpleNamespace

from ctxtools.pack.fit import Assembly, fit_rounds
from ctxtools.pack.model import MAP_TOKENS


class _Render:
    def section(self, name: str, text: str) -> str:
        return text

    def repomap(self, text: str) -> str:
        return text

    def document(self, parts: list[str]) -> str:
        return "".join(parts)


class _Files:
    """A chooser whose plan fills the budget it is given and whose rendering runs over
    the plan's estimate by OVER tokens (a character a token here), every time."""

    def __init__(self, over: int):
        self.over = over
        self.budgets: list[int] = []

    def fit(self, budget: int):
        self.budgets.append(budget)
        return SimpleNamespace(text="f" * (budget + self.over), rows=[])


class _Map:
    ok = True
    left_out = None

    def text(self, tokens: int) -> str:
        return "m" * tokens


def _fit(room: int, files_budget: int, over: int):
    files = _Files(over)
    parts = Assembly([], "", room, room, _Render(), len)
    return fit_rounds(parts, files, _Map(), files_budget), files


def test_an_overrun_is_given_back_once_not_every_round():
    out, files = _fit(room=16_000, files_budget=15_000, over=350)
    # One correction: the second plan's rendering fits what the files were meant to take.
    assert files.budgets == [15_000, 15_000 - 350 - 8]
    assert len(out.files_section) == 15_000 - 8
    assert out.tokens <= 16_000
    assert out.map_section  # the map keeps the rest of the room


def test_a_plan_within_its_estimate_is_fitted_once():
    out, files = _fit(room=16_000, files_budget=15_000, over=0)
    assert files.budgets == [15_000]
    assert len(out.files_section) == 15_000
    assert out.map_section == "m" * MAP_TOKENS
    assert out.tokens == 15_000 + MAP_TOKENS


def test_the_total_still_binds_when_the_files_overrun_the_whole_room():
    out, files = _fit(room=4_000, files_budget=3_950, over=900)
    assert out.tokens <= 4_000
    assert len(files.budgets) <= 12
