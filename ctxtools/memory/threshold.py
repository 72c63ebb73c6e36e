"""Noise floors and the threshold a chunk must clear.

A score is only meaningful above the band that unrelated texts reach. The floors are the
methods' measured noise bands (the design's seed 002): 0.40 for the hashing embedder
(short words share character n-grams, so unrelated texts score 0.1 to 0.35), 0.15 for
TF-IDF, 0.25 for real embeddings from a command. The corpus adds its own: the median of
the task's scores over all chunks is what an unrelated chunk of *this* corpus scores for
*this* task, so a chunk must also beat it by a margin. And the task adds its own: the
best chunk's score says how well this task can be matched at all, and a chunk far below
it is a weaker match than the ones a reader would want first:

    threshold = max(floor, median + margin, SHARE_OF_BEST x best)
    (min_score, when given, replaces all three)

Margins: most chunks of a corpus are unrelated to any one task, so the median is a
noise score, and a chunk must beat nearly all of the noise: the margin is the distance
from the median to the 99th percentile of a task's scores, measured on Django 5.1.4's
docs/ (6,322 chunks, the 85 queries of bench/data/memory_eval.json; the median over the
queries of that distance): 0.151 for TF-IDF, 0.184 for hashing; rounded to 0.15 and 0.20.
Real embeddings could not be measured offline: 0.15, as for TF-IDF. On that corpus the
median term stays under the floors (a TF-IDF median is 0 to 0.03, a hashing one 0.03 to
0.10); it decides in a corpus that is all about one subject, where every chunk shares
words with the task. With fewer than ten chunks the median says nothing about noise (in a
one-section file it is that section's own score, and nothing could ever qualify): it is
left out.

The share of the best: floor and median alone kept 72 chunks a query on that corpus, 94%
of them noise, because a documentation set holds dozens of sections that share a task's
words without bearing on it. Keeping only the chunks within 10% of the best one (0.9 x
best) keeps 2.4 a query, 45.5% noise, and still 44% of the relevant sections; 0.8 keeps
4.7 (56% noise), 0.95 keeps 1.6 (41% noise) -- ``bench/bench_memory_eval.py --sweep``.
A pack's memory budget wants the few best sections, not a long tail of near misses.
"""

from __future__ import annotations

MEDIAN_MIN_CHUNKS = 10  # fewer chunks say nothing about the corpus's noise: the floor alone
# "tfidf+semantic": TF-IDF with the semantic part added (``rank.SEMANTIC_WEIGHT``). Its
# floor is its noise band: the best chunk of an off-topic query of bench/bench_memory_eval.py
# scores 0.18 to 0.38 (Django's docs and libuv's), the semantic part lifting what shared
# words alone left under 0.15; 0.40 keeps none of them (0.15 kept 2.0 chunks a query on
# Django's, 2.7 on libuv's) and as many relevant sections as 0.15 on Django's set (0.499
# of them), 0.301 against 0.311 on libuv's. The margin stays TF-IDF's: a corpus all about
# one subject keeps its chunks within 0.15 of each other.
FLOORS = {"hashing": 0.40, "tfidf": 0.15, "cmd": 0.25, "tfidf+semantic": 0.40}
MARGINS = {"hashing": 0.20, "tfidf": 0.15, "cmd": 0.15, "tfidf+semantic": 0.15}
SHARE_OF_BEST = 0.90  # a chunk must also score this share of the best chunk's score


def median(scores: list[float]) -> float:
    if not scores:
        return 0.0
    s = sorted(scores)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def threshold_for(method: str, scores: list[float], min_score: float | None) -> dict:
    """The threshold of METHOD for SCORES, with the terms it came from: FLOOR, MEDIAN +
    MARGIN (from ten chunks up), and SHARE x BEST, the largest of them deciding (RULE says
    which); MIN_SCORE replaces all three."""
    med = median(scores)
    best = max(scores, default=0.0)
    floor = FLOORS[method]
    margin = MARGINS[method]
    terms = {
        "method": method,  # the floor's: "tfidf+semantic" when the semantic part is fused
        "floor": floor,
        "median": round(med, 6),
        "margin": margin,
        "best": round(best, 6),
        "share": SHARE_OF_BEST,
    }
    if min_score is not None:
        return {"threshold": min_score, **terms, "rule": "min_score"}
    rule, value = "floor", floor
    if len(scores) < MEDIAN_MIN_CHUNKS:
        rule = f"floor (fewer than {MEDIAN_MIN_CHUNKS} chunks: no median)"
    elif med + margin > value:
        rule, value = "median + margin", med + margin
    if SHARE_OF_BEST * best > value:
        rule, value = "share of the best", SHARE_OF_BEST * best
    return {"threshold": round(value, 6), **terms, "rule": rule}
