"""Lexical TF-IDF with cosine similarity over the chunk corpus.

A chunk's statistics are its stemmed term counts (cached by the chunk's digest); the
corpus's are the document frequency of every term and each chunk's vector norm (cached by
the corpus's fingerprint, the ordered digests of its chunks). Weights are sublinear,
``(1 + ln tf) × idf`` with ``idf = ln((N + 1) / (df + 1)) + 1``; a task's word that no
chunk holds still weighs in the task's norm, so a task about something else scores low.

The cosine's chunk norm is pivoted (Singhal, Buckley and Mitra, 1996): divided by
``(1 - s) × mean norm + s × norm`` with slope ``s = PIVOT_SLOPE`` instead of by the norm
itself, capped at 1. Plain cosine (s = 1) favours short chunks -- a three-line note that
shares two words with the task beats the section that explains it. On the labelled set
of bench/bench_memory_eval.py (hand labels) the slope 0.5 lifted recall@5 from 0.46 to
0.62; 0.3, with a chunk's heading and file name counted as well
(``ctxtools.memory.rank.tfidf_words``), to 0.67, and precision@1 (all labels) from 0.66
to 0.72. The chunks it admits for tasks about nothing in the corpus stay near none.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

PIVOT_SLOPE = 0.3

# TF-IDF folds a word's usual English endings (the same fold for a task's words and a
# section's, both from ``ctxtools.analyzer``).
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


def term_counts(words: list[str]) -> dict[str, int]:
    """A chunk's (or task's) stemmed term counts."""
    return dict(Counter(stem(w) for w in words))


def corpus_stats(counts: Sequence[dict[str, int]]) -> tuple[dict[str, int], list[float]]:
    """(document frequency of each term, each chunk's TF-IDF norm) over COUNTS."""
    df: Counter[str] = Counter()
    for c in counts:
        df.update(c.keys())
    n = len(counts)
    idf = {t: math.log((n + 1) / (d + 1)) + 1.0 for t, d in df.items()}
    norms = []
    for c in counts:
        s = 0.0
        for t, tf in c.items():
            w = (1.0 + math.log(tf)) * idf[t]
            s += w * w
        norms.append(math.sqrt(s))
    return dict(df), norms


def scores(
    query: dict[str, int],
    counts: Sequence[dict[str, int]],
    df: dict[str, int],
    norms: Sequence[float],
    slope: float = PIVOT_SLOPE,
) -> list[float]:
    """The (pivoted) cosine of the task's terms QUERY with every chunk."""
    n = len(counts)
    qw: dict[str, float] = {}
    live: list[tuple[str, float]] = []  # (term, query weight x idf) of the corpus's terms
    for t in sorted(query):
        idf = math.log((n + 1) / (df.get(t, 0) + 1)) + 1.0
        qw[t] = (1.0 + math.log(query[t])) * idf
        if t in df:
            live.append((t, qw[t] * idf))
    qnorm = math.sqrt(sum(w * w for w in qw.values()))
    if qnorm == 0:
        return [0.0] * n
    log = math.log
    pivot = (1.0 - slope) * (math.fsum(norms) / n if n else 0.0)
    out = []
    for c, norm in zip(counts, norms, strict=True):
        s = 0.0
        for t, w in live:
            tf = c.get(t)
            if tf:
                s += w * (1.0 + log(tf))
        out.append(min(1.0, s / (qnorm * (pivot + slope * norm))) if s else 0.0)
    return out
