"""The local hashing embedder: signed feature hashing of word unigrams, word bigrams and
character trigrams/4-grams into 384 dimensions, L2-normalised, compared by cosine.

Needs nothing (no model, no network) and is deterministic: features are hashed with
xxh64 under a fixed seed, never with Python's per-process ``hash``. Its cosines between
unrelated texts are not near zero (short words share character n-grams), which is why its
noise floor is high (0.40, see ``ctxtools.memory.threshold``).
"""

from __future__ import annotations

import math
from array import array
from collections import Counter

DIMS = 384
WORD_WEIGHT = 1.0
BIGRAM_WEIGHT = 0.5
CHAR_WEIGHT = 0.25  # each character n-gram of a word
CHAR_NS = (3, 4)
_SEED = 0x5EED


class HashingEmbedder:
    """Vectors for texts; remembers each word's hashed features for the whole run."""

    name = "hashing"
    dims = DIMS

    def __init__(self):
        self._memo: dict[str, tuple[tuple[int, float], ...]] = {}

    def _features(self, word: str) -> tuple[tuple[int, float], ...]:
        import xxhash

        h = xxhash.xxh64_intdigest
        feats = [("w:" + word, WORD_WEIGHT)]
        padded = f"<{word}>"
        for n in CHAR_NS:
            feats.extend(
                ("c:" + padded[k : k + n], CHAR_WEIGHT) for k in range(len(padded) - n + 1)
            )
        acc: dict[int, float] = {}
        for f, w in feats:
            x = h(f.encode("utf-8", "surrogatepass"), _SEED)
            idx = x % DIMS
            acc[idx] = acc.get(idx, 0.0) + (w if (x >> 63) else -w)
        out = tuple(sorted(acc.items()))
        self._memo[word] = out
        return out

    def vector(self, words: list[str]) -> array:
        """The unit vector (array of DIMS floats) of a text's WORDS; all zeros when none."""
        import xxhash

        vec = [0.0] * DIMS
        memo = self._memo
        for word, c in Counter(words).items():
            f = 1.0 + math.log(c)
            for idx, w in memo.get(word) or self._features(word):
                vec[idx] += w * f
        h = xxhash.xxh64_intdigest
        for pair, c in Counter(zip(words, words[1:], strict=False)).items():
            x = h(("b:" + pair[0] + " " + pair[1]).encode("utf-8", "surrogatepass"), _SEED)
            w = BIGRAM_WEIGHT * (1.0 + math.log(c))
            vec[x % DIMS] += w if (x >> 63) else -w
        norm = math.sqrt(math.fsum(v * v for v in vec))
        if norm > 0:
            vec = [v / norm for v in vec]
        return array("f", vec)


def cosine(q: array | list[float], v: array | list[float]) -> float:
    """The dot product of two unit vectors (their cosine)."""
    import operator

    return sum(map(operator.mul, q, v))


def sparse_dot(q: array | list[float]):
    """A function giving the cosine of the unit vector Q with another: a task's vector has
    few non-zero dimensions, so only those are multiplied (the same sum, term for term,
    as ``cosine``, minus the zero terms)."""
    import operator

    idx = [i for i, x in enumerate(q) if x != 0.0]
    if not idx:
        return lambda v: 0.0
    if len(idx) == 1:
        (i,) = idx
        w = q[i]
        return lambda v: w * v[i]
    pick = operator.itemgetter(*idx)
    weights = pick(q)
    mul = operator.mul
    return lambda v: sum(map(mul, weights, pick(v)))
