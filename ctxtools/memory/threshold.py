"""Noise floors and the threshold a chunk must clear.

A score is only meaningful above the band that unrelated texts reach. The floors are the
methods' measured noise bands (``../shared/seeds/002``): 0.40 for the hashing embedder
(short words share character n-grams, so unrelated texts score 0.1 to 0.35), 0.15 for
TF-IDF, 0.25 for real embeddings from a command. The corpus adds its own: the median of
the task's scores over all chunks is what an unrelated chunk of *this* corpus scores for
*this* task, so a chunk must also beat it by a margin:

    threshold = max(floor, median + margin)        (min_score, when given, replaces both)

Margins: most chunks of a corpus are unrelated to any one task, so the median sits in the
noise; the margin is the spread of that noise. Measured on Django 5.1.4's docs (8,700
chunks, the 64 queries of bench/data/memory_eval.json), the median to 90th-percentile
distance of a query's scores is about 0.07 for hashing and 0 to 0.02 for TF-IDF (most
chunks share no term, so their TF-IDF score is exactly 0); the margins are a little more
than that: chunks inside the noise band's top tenth do not qualify.
"""

from __future__ import annotations

FLOORS = {"hashing": 0.40, "tfidf": 0.15, "cmd": 0.25}
MARGINS = {"hashing": 0.10, "tfidf": 0.05, "cmd": 0.10}


def median(scores: list[float]) -> float:
    if not scores:
        return 0.0
    s = sorted(scores)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def threshold_for(method: str, scores: list[float], min_score: float | None) -> dict:
    """The threshold of METHOD for SCORES, with the terms it came from."""
    med = median(scores)
    floor = FLOORS[method]
    margin = MARGINS[method]
    if min_score is not None:
        return {
            "threshold": min_score,
            "floor": floor,
            "median": round(med, 6),
            "margin": margin,
            "rule": "min_score",
        }
    value = max(floor, med + margin)
    return {
        "threshold": round(value, 6),
        "floor": floor,
        "median": round(med, 6),
        "margin": margin,
        "rule": "floor" if floor >= med + margin else "median + margin",
    }
