"""Counting a query's terms in text, the way BM25 needs them.

A text's words are its runs of letters, digits and ``_`` (bytes >= 0x80 kept inside words,
so UTF-8 names stay whole: ``ctxtools.analyzer.tokenizer.WORD_BYTES``); each word counts
for its lower-cased self and for the parts the analyzer splits it into (``parts``: a
compound name's words, a CJK run's characters), so ``bulk_create`` and ``BulkCreate`` both
count for ``bulk``, ``create`` and (as written) ``bulk_create``/``bulkcreate``; and for a
term a task's phrase made (``Query.phrases``: "search results", ``searchresults``) any two
parts side by side count too (``get_search_results``). Only for those: a task word
``filename`` is not found in every ``ProgramDataBaseFileName`` of a build file. The terms
come from the analyzer too, so no stop word is ever counted: a task word and a file's word
meet exactly when the one tokenizer makes them the same. Only the query's terms are counted: a
``Terms`` maps each distinct word it meets, once, to the query terms it stands for (most
words stand for none), so counting a chunk is one C-level split and a dictionary pass.

``present(lower)`` says which terms can occur in a file at all (a byte search of the
lower-cased file per term, far faster than tokenising it): a file where none can occur is
never tokenised.

``Stats`` holds the corpus side of BM25: how many units there are, their average length,
and in how many units each term occurs; ``idf`` is BM25's (always positive).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from itertools import chain, pairwise

from ctxtools.analyzer.tokenizer import WORD_BYTES as _WORD_BYTES
from ctxtools.analyzer.tokenizer import parts as _parts

K1 = 1.2
B = 0.75


class Terms:
    """The query's terms (lower-case strings), indexed 0..n-1."""

    def __init__(self, terms: list[str], pairs=()):
        self.terms = list(terms)
        self.ids = {t: i for i, t in enumerate(self.terms)}
        # the ids of the terms two parts side by side count for (a task's phrases)
        self.pairs = frozenset(self.ids[t] for t in pairs if t in self.ids)
        self.key = (tuple(self.terms), tuple(sorted(self.pairs)))  # the corpus's scans' key
        self.needles = [t.encode("utf-8") for t in self.terms]
        self._memo: dict[bytes, tuple[int, ...]] = {}
        self._yes: set[bytes] = set()  # words that stand for some term
        self._no: set[bytes] = set()  # words that stand for none
        self._rx = None  # the needles as one regex (compiled on first use)
        self._scanned: tuple | None = None  # (a corpus, what scan_corpus found in it)
        self._known = None  # a corpus scanned: its words not in _yes stand for no term
        self._least: list[bytes] | None = None  # ``_least`` of the needles, when first asked

    @classmethod
    def of(cls, query) -> Terms:
        """The terms of QUERY (an ``analyzer.Query``), its phrases' among them."""
        return cls(list(query.terms), query.phrases)

    def __len__(self) -> int:
        return len(self.terms)

    def ids_of(self, word: bytes) -> tuple[int, ...]:
        """The terms WORD (as written) counts for."""
        hit = self._memo.get(word)
        if hit is not None:
            return hit
        out: tuple[int, ...] = ()
        if word[:1].isalpha() or word[:1] == b"_" or word[0] >= 0x80:
            text = word.decode("utf-8", "replace")
            ids = self.ids
            found = []
            low = text.lower()
            i = ids.get(low)
            if i is not None:
                found.append(i)
            parts = _parts(text)
            if len(parts) > 1:
                for p in parts:
                    j = ids.get(p)
                    if j is not None and j not in found:
                        found.append(j)
                joined = "".join(parts)
                j = ids.get(joined)
                if j is not None and j not in found:
                    found.append(j)
                for a, b in pairwise(parts) if self.pairs and len(parts) > 2 else ():
                    j = ids.get(a + b)  # two parts side by side (a task's phrase)
                    if j is not None and j in self.pairs and j not in found:
                        found.append(j)
            out = tuple(found)
        self._memo[word] = out
        return out

    def _learn(self, words: set[bytes]) -> None:
        """Sort WORDS into those that stand for a term and those that do not. A word can
        stand for a term only if the term's text occurs in it (lower-cased, with or
        without its underscores): one regex pass over all of them finds the few that
        need a closer look."""
        rx = self._rx
        if rx is None:
            import re

            alts = sorted(set(self.needles), key=lambda n: (-len(n), n))
            rx = self._rx = re.compile(b"|".join(re.escape(n) for n in alts)) if alts else False
        order = sorted(words)
        if rx is False:
            self._no.update(order)
            return
        parts = []
        starts = []
        pos = 0
        for w in order:
            low = w.lower()
            piece = low + b" " + low.replace(b"_", b"") + b"\n"
            starts.append(pos)
            parts.append(piece)
            pos += len(piece)
        text = b"".join(parts)
        import bisect

        candidates = set()
        for m in rx.finditer(text):
            candidates.add(bisect.bisect_right(starts, m.start()) - 1)
        ids_of = self.ids_of
        for k, w in enumerate(order):
            if k in candidates and ids_of(w):
                self._yes.add(w)
            else:
                self._no.add(w)

    def present(self, lower: bytes) -> list[int]:
        """The terms whose text occurs in LOWER (a lower-cased file) at all."""
        return [i for i, n in enumerate(self.needles) if n in lower]

    def count(self, data: bytes) -> tuple[dict[int, int], int]:
        """(term -> occurrences, number of words) of DATA (``count_spans`` of it whole)."""
        return self.count_spans(data, [(0, len(data))])[0]

    def count_spans(self, data: bytes, spans) -> list[tuple[dict[int, int], int]]:
        """What ``count`` gives for each ``DATA[a:b]`` of SPANS, the chunks of one file:
        the file's words are sorted into terms and no terms once, and each chunk only
        looks up the few of its words that stand for a term."""
        text = data.translate(_WORD_BYTES)
        cut = [text[a:b].split() for a, b in spans]
        # (the spans' own words: a word outside them is never looked up)
        hits = self._hits(set(chain.from_iterable(cut)))
        return [(self._tally(words, hits), len(words)) for words in cut]

    def _tally(self, words: list[bytes], hits) -> dict[int, int]:
        """term -> occurrences among WORDS (one chunk's), of the HITS that stand for a term."""
        tf: dict[int, int] = {}
        if hits:
            memo = self._memo
            for w in hits.intersection(words):
                c = words.count(w)
                for i in memo[w]:
                    tf[i] = tf.get(i, 0) + c
        return tf

    def count_known(self, data: bytes, spans, words) -> list[tuple[dict[int, int], int]]:
        """What ``count_spans(DATA, SPANS)`` gives, when WORDS are the words of DATA that
        stand for some term, each once (the corpus knows them: ``hit_words``), so that
        the words of DATA need not be sorted into terms and no terms first."""
        text = data.translate(_WORD_BYTES)
        hits = set(words)
        memo = self._memo
        for w in hits:
            if w not in memo:
                self.ids_of(w)
        out = []
        for a, b in spans:
            chunk = text[a:b].split()
            out.append((self._tally(chunk, hits), len(chunk)))
        return out

    def hit_words(self, vocab) -> list[bytes] | None:
        """The words of the file whose vocabulary is VOCAB that stand for some term, when
        its corpus has been scanned for these terms (``scan_corpus``); else None."""
        corpus = getattr(vocab, "corpus", None)
        if corpus is None:
            return None
        got = corpus.scans.get(self.key)
        return got[3].get(vocab.slot, []) if got is not None else None

    def count_vocab(self, vocab) -> tuple[dict[int, int], int]:
        """What ``count`` gives for the file whose vocabulary (``vocab.Vocab``) is VOCAB."""
        if self._known is None and all(self.needles):
            return self._count_words(*vocab.own()), vocab.n
        counts = vocab.counts()
        tf: dict[int, int] = {}
        memo = self._memo
        for w in self._hits(counts.keys()):
            c = counts[w]
            for i in memo[w]:
                tf[i] = tf.get(i, 0) + c
        return tf, vocab.n

    def _count_words(self, words: bytes, freq: bytes) -> dict[int, int]:
        """term -> occurrences among WORDS (distinct, one a line; FREQ: how often each
        occurs), as ``_hits`` and ``_learn`` would sort them: a word stands for a term only
        if some term's text occurs in it lower-cased, with or without its underscores; so
        the lowered text is searched for the terms (a C-level find), and only the words
        found are looked at, not every word made an object and looked up in the sets."""
        tf: dict[int, int] = {}
        if not words:
            return tf
        least = self._least
        if least is None:
            least = self._least = _least(self.needles)
        low = words.lower()  # (byte for byte: word K is line K of both)
        found: set[int] = set()  # the numbers of the words a term's text occurs in
        for text in (low, low.replace(b"_", b"")) if b"_" in low else (low,):
            find, count = text.find, text.count
            for n in least:
                k = last = 0
                pos = find(n)
                while pos >= 0:
                    k += count(b"\n", last, pos)
                    found.add(k)
                    last = find(b"\n", pos)  # (the next word: one hit a word is enough)
                    pos = find(n, last) if last >= 0 else -1
        if found:
            from ctxtools.retrieval.vocab import _POST, _view

            cut = words.split(b"\n")
            freqs = _view(freq, _POST)
            ids_of = self.ids_of
            for k in found:
                for i in ids_of(cut[k]):
                    tf[i] = tf.get(i, 0) + freqs[k]
        return tf

    def present_vocab(self, vocab) -> list[int]:
        """What ``present`` gives for the file whose vocabulary is VOCAB (a term is a run
        of word bytes: it occurs in the file exactly when it occurs in one of its words)."""
        text = vocab.text
        return [i for i, n in enumerate(self.needles) if n in text]

    def scan_corpus(self, corpus) -> tuple[dict[int, list[int]], dict[int, dict[int, int]]]:
        """``present_vocab`` and ``count_vocab`` of every file of CORPUS (``vocab.Corpus``)
        at once: (slot -> the terms it can hold, slot -> term -> occurrences). The words
        that can stand for a term are the ones holding its text, with or without their
        underscores (``bulk_create`` for ``bulkcreate``): the corpus's distinct words are
        searched once for each term no other term's text is part of, and only the words
        found, with the files that hold them, are looked at."""
        if self._scanned is not None and self._scanned[0] is corpus:
            return self._scanned[1]
        key = self.key
        got = corpus.scans.get(key)
        if got is None:
            got = corpus.scans[key] = self._scan(corpus)
        # What the corpus says of its words holds for every file's: a chunk of one of its
        # files is counted without sorting its words again (``count``).
        yes = got[2]
        for w in yes:
            self.ids_of(w)  # (memoised: count() reads the memo of every word in _yes)
        self._yes |= yes
        self._known = corpus  # its other words stand for no term (``_hits`` asks)
        self._scanned = (corpus, got[:2])
        return got[:2]

    def _scan(self, corpus) -> tuple[dict, dict, set, dict]:
        import re

        found: set[int] = set()  # the words a term's text occurs in
        low, word_at = corpus.low, corpus.word_at
        for n in _least(self.needles):
            rx = re.compile(b"_*".join(re.escape(n[k : k + 1]) for k in range(len(n))))
            search = rx.search
            m = search(low)
            while m is not None:
                k = word_at(m.start())
                found.add(k)
                m = search(low, corpus.low_at[k + 1])
        needles = self.needles
        present: dict[int, set[int]] = {}
        tf: dict[int, dict[int, int]] = {}
        hit: dict[int, list[bytes]] = {}  # slot -> its words that stand for a term
        word_of, ids_of = corpus.word, self.ids_of
        yes = set()
        for k in sorted(found):
            word = word_of(k)
            wlow = word.lower()
            have = [i for i, n in enumerate(needles) if n in wlow]
            ids = ids_of(word)
            if ids:
                yes.add(word)
            if not have and not ids:
                continue
            post = corpus.postings(k)
            slots = post[::2]
            for slot in slots:
                got_have = present.get(slot)
                if got_have is None:
                    present[slot] = set(have)
                else:
                    got_have.update(have)
            if not ids:
                continue
            for slot, c in zip(slots, post[1::2], strict=True):
                got_tf = tf.get(slot)
                if got_tf is None:
                    got_tf = tf[slot] = {}
                    hit[slot] = [word]
                else:
                    hit[slot].append(word)
                for i in ids:
                    got_tf[i] = got_tf.get(i, 0) + c
        return {slot: sorted(h) for slot, h in present.items() if h}, tf, yes, hit

    def _hits(self, distinct) -> set[bytes]:
        """The words of DISTINCT (a set, or a dict's keys) that stand for some term."""
        unknown = distinct - self._yes - self._no
        if unknown and self._known is not None:
            unknown -= self._known.word_set()
        if unknown:
            self._learn(unknown)
        return distinct & self._yes


@dataclass
class Stats:
    """BM25's corpus statistics over ``units`` units (chunks) of ``avg_len`` words."""

    units: int = 0
    total_len: int = 0
    df: Counter = field(default_factory=Counter)  # term -> units holding it
    file_df: Counter = field(default_factory=Counter)  # term -> files holding it
    files: int = 0
    first: dict = field(default_factory=dict)  # label -> its whole-file BM25 / the best file's

    def add(self, tf: dict[int, int], length: int) -> None:
        self.units += 1
        self.total_len += length
        for i in tf:
            self.df[i] += 1

    def add_blind(self, units: int, length: int) -> None:
        """Units whose words were not counted (no query term can occur in them)."""
        self.units += units
        self.total_len += length

    @property
    def avg_len(self) -> float:
        return self.total_len / self.units if self.units else 1.0

    def idf(self, i: int) -> float:
        n = self.df.get(i, 0)
        return math.log(1.0 + (self.units - n + 0.5) / (n + 0.5))


def bm25(tf: dict[int, int], length: int, weights: list[float], stats: Stats) -> float:
    """BM25 of one unit: its term counts TF over LENGTH words, the query's WEIGHTS (term ->
    weight, idf included)."""
    if not tf:
        return 0.0
    norm = K1 * (1.0 - B + B * length / (stats.avg_len or 1.0))
    score = 0.0
    for i in sorted(tf):  # one order, however TF was counted: the same float sum
        f = tf[i]
        w = weights[i]
        if w:
            score += w * f * (K1 + 1.0) / (f + norm)
    return score


def _least(needles: list[bytes]) -> list[bytes]:
    """The NEEDLES no other needle is part of (a word holding any needle holds one of
    these, with or without underscores), each once."""
    uniq = sorted(set(n for n in needles if n), key=lambda n: (len(n), n))
    out: list[bytes] = []
    for n in uniq:
        if not any(m in n for m in out):
            out.append(n)
    return out
