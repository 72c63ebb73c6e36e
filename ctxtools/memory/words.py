"""The words a text is scored by: lower-cased letter/digit runs (each CJK character a
word of its own), stop-words left out; TF-IDF also strips common English suffixes."""

from __future__ import annotations

import re

_WORD_RE = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]|[^\W_]+",
)


def _stop_words() -> frozenset[str]:
    from ctxtools.identifiers import STOP_WORDS

    extra = "one two use used uses using may might new get set like also"
    return STOP_WORDS | frozenset(extra.split())


_STOP: frozenset[str] | None = None


def words(text: str) -> list[str]:
    """The usable words of TEXT, in order (lower-cased; stop-words and one-letter
    non-CJK words and pure numbers left out)."""
    global _STOP
    if _STOP is None:
        _STOP = _stop_words()
    stop = _STOP
    out = []
    for w in _WORD_RE.findall(text.lower()):
        if w in stop or w.isdigit():
            continue
        if len(w) < 2 and not ("\u3040" <= w <= "\ufaff"):
            continue
        out.append(w)
    return out


_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "ers", "er", "ed", "es", "s")


def stem(word: str) -> str:
    """A light, deterministic English stem: 'caching' and 'caches' -> 'cach'."""
    for suf in _SUFFIXES:
        if word.endswith(suf) and len(word) - len(suf) >= 3:
            if suf in ("ies", "ied"):
                return word[: -len(suf)] + "y"
            if suf == "s" and word.endswith("ss"):
                return word
            return word[: -len(suf)]
    return word
