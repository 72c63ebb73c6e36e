"""A file's words, counted once and kept in the store between packs.

Ranking a directory asks two things of every candidate: which of the query's terms its
text can hold at all (``Terms.present``) and how often each occurs as a word
(``Terms.count``). Both depend on the query, but only through the file's *vocabulary*:
its distinct words and how often each occurs. A ``Vocab`` is that vocabulary, as
``Terms`` reads it:

* ``text``: the distinct words, lower-cased, one a line: a term (a run of word bytes)
  occurs in the file's lower-cased bytes exactly when it occurs in one of its words, so
  searching this text (a few KB) answers ``present`` as searching the file would;
* ``counts()``: word (as written: the case splits ``CamelCase`` parts) -> occurrences,
  kept marshalled until a query needs it;
* ``n``: the number of words.

Asking that of seven thousand files one by one costs more than the rest of a pack, so
``VocabCache`` keeps a root's vocabularies as one ``Corpus``: an inverted index (each
distinct word of the root, once, with the files that hold it and how often), which
answers ``present`` and ``count`` for every file at once by searching the root's words
once (``Terms.scan_corpus``). A file is the corpus's while its stat (size, mtime, ctime:
what the repo map's scan cache trusts a file by) or, in a fresh checkout where every
stat is new, its content's xxh3 is the one it was counted at; a file that changed is
counted anew and kept beside the corpus (``delta``) until so many have that the corpus
is built again. A missing or damaged cache file is simply empty, and a cache that cannot
be written is not an error: the next pack counts again.
"""

from __future__ import annotations

import marshal
import os
from array import array
from collections import Counter

# Bytes that are not part of a word become spaces (bytes >= 0x80 stay: UTF-8 sequences).
WORD_BYTES = bytes(b if (chr(b).isalnum() or b == 0x5F or b >= 0x80) else 0x20 for b in range(256))
MAX_FILES = 100_000  # vocabularies one cache file keeps, at most
REBUILD_MIN = 64  # files counted beside the corpus before it is built again ...
REBUILD_SHARE = 0.05  # ... or this share of the files, whichever is more
_FORMAT = 2  # the record's shape; another is a miss


class Vocab:
    """The vocabulary of one file (see the module's docstring). A file of a ``Corpus``
    has no text or counts of its own: ``corpus`` and ``slot`` say where it is."""

    __slots__ = ("_counts", "blob", "corpus", "n", "slot", "text")

    def __init__(
        self, text: bytes | None, blob: bytes | None, n: int, counts: dict | None = None,
        corpus: Corpus | None = None, slot: int = -1,
    ):  # fmt: skip
        self.text = text
        self.blob = blob
        self.n = n
        self._counts = counts
        self.corpus = corpus
        self.slot = slot

    @classmethod
    def of(cls, data: bytes) -> Vocab:
        words = data.translate(WORD_BYTES).split()
        counts = dict(Counter(words))
        text = b"\n".join(sorted({w.lower() for w in counts}))
        return cls(text, marshal.dumps(counts, 4), len(words), counts)

    def counts(self) -> dict[bytes, int]:
        if self._counts is None:
            if self.corpus is not None:
                self._counts = self.corpus.counts_of(self.slot)
                return self._counts
            counts = marshal.loads(self.blob)
            if not isinstance(counts, dict):
                raise ValueError("a vocabulary that is not a dict")
            self._counts = counts
        return self._counts


def _starts(lines: list[bytes]) -> array:
    """Where each of LINES begins in ``b"\\n".join(LINES) + b"\\n"``."""
    out = array("I", [0]) * len(lines)
    pos = 0
    for k, ln in enumerate(lines):
        out[k] = pos
        pos += len(ln) + 1
    return out


class Corpus:
    """The vocabularies of many files as one inverted index (see the module's docstring).

    ``words`` are the distinct words as written, sorted; ``post[k]`` the files holding
    word k, an ``array('I')`` of (slot, occurrences) pairs; ``low`` and ``joined`` the
    words lower-cased (and without their underscores), one a line, with ``low_at`` and
    ``joined_at`` where each line starts: the texts a term is searched in."""

    def __init__(self, labels, stamps, digests, ns, words, post):
        self.labels: list[str] = labels
        self.stamps: list[tuple] = stamps
        self.digests: list[int] = digests
        self.ns: list[int] = ns
        self.words: list[bytes] = words
        self.post: list[bytes] = post
        lows = [w.lower() for w in words]
        self.low = b"\n".join(lows) + b"\n"
        joins = [w.replace(b"_", b"") for w in lows]
        self.joined = b"\n".join(joins) + b"\n"
        self.low_at = _starts(lows)
        self.joined_at = _starts(joins)
        self.slots = {lab: k for k, lab in enumerate(labels)}
        self.scans: dict[tuple, object] = {}  # Terms.scan_corpus's answers, by the terms

    @classmethod
    def build(cls, files: list[tuple[str, tuple, int, int, dict]]) -> Corpus:
        """The corpus of FILES: (label, stamp, digest, words, counts) each."""
        index: dict[bytes, list[int]] = {}
        for slot, (_lab, _st, _dg, _n, counts) in enumerate(files):
            for w, c in counts.items():
                got = index.get(w)
                if got is None:
                    index[w] = [slot, c]
                else:
                    got.append(slot)
                    got.append(c)
        words = sorted(index)
        post = [array("I", index[w]).tobytes() for w in words]
        return cls(
            [f[0] for f in files], [f[1] for f in files], [f[2] for f in files],
            [f[3] for f in files], words, post,
        )  # fmt: skip

    def plain(self) -> tuple:
        return (self.labels, self.stamps, self.digests, self.ns, self.words, self.post)

    @classmethod
    def from_plain(cls, value) -> Corpus | None:
        if type(value) is not tuple or len(value) != 6:
            return None
        labels, stamps, digests, ns, words, post = value
        lists = (labels, stamps, digests, ns, words, post)
        if any(type(x) is not list for x in lists) or len({len(labels), len(stamps)}) != 1:
            return None
        if len(digests) != len(labels) or len(ns) != len(labels) or len(post) != len(words):
            return None
        return cls(labels, stamps, digests, ns, words, post)

    def postings(self, k: int) -> array:
        out = array("I")
        out.frombytes(self.post[k])
        return out

    def counts_of(self, slot: int) -> dict[bytes, int]:
        """The counts of the file in SLOT (a pass over the whole index: for tests and
        rebuilding, never for a query)."""
        out: dict[bytes, int] = {}
        for k, w in enumerate(self.words):
            p = self.postings(k)
            for j in range(0, len(p), 2):
                if p[j] == slot:
                    out[w] = p[j + 1]
        return out

    def all_counts(self) -> list[dict[bytes, int]]:
        """Every file's counts, slot by slot (to build the corpus again)."""
        out: list[dict[bytes, int]] = [{} for _ in self.labels]
        for k, w in enumerate(self.words):
            p = self.postings(k)
            for j in range(0, len(p), 2):
                out[p[j]][w] = p[j + 1]
        return out


def _digest(data: bytes) -> int:
    import xxhash

    return xxhash.xxh3_64_intdigest(data)


class VocabCache:
    """The vocabularies of ROOT's files, kept in STORE (see the module's docstring)."""

    def __init__(self, store, root: str):
        from ctxtools.config import store_root
        from ctxtools.repomap.cache import Memo

        self._memo = Memo(store_root(store), root, "vocab", tuple, keep=1)
        self._corpus: Corpus | None | bool = False  # False: not loaded yet
        self._delta: dict | None = None  # label -> (stamp, digest, text, blob, n)
        self._seen: dict[str, Vocab] = {}
        self._dirty = False

    def _load(self) -> Corpus | None:
        if self._corpus is False:
            rec = self._memo.load().get("index")
            ok = type(rec) is tuple and len(rec) == 3 and rec[0] == _FORMAT
            self._corpus = Corpus.from_plain(rec[1]) if ok else None
            delta = rec[2] if ok else None
            self._delta = delta if type(delta) is dict else {}
        return self._corpus  # type: ignore[return-value]

    def get(self, label: str, path: str, data: bytes) -> Vocab:
        """The vocabulary of the file LABEL (at PATH, whose bytes are DATA): the kept one
        when the file's stat, or else its content, is the one it was counted at; else
        counted now (and kept)."""
        try:
            st = os.stat(path)
            stamp = (len(data), st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        except OSError:
            return Vocab.of(data)
        vocab = self._lookup(label, stamp, data)
        self._seen[label] = vocab
        return vocab

    def _lookup(self, label: str, stamp: tuple, data: bytes) -> Vocab:
        corpus = self._load()
        delta = self._delta
        assert delta is not None
        digest = None
        kept = delta.get(label)
        if type(kept) is tuple and len(kept) == 5:
            kstamp, kdigest, text, blob, n = kept
            if kstamp != stamp:
                digest = _digest(data)
            if (kstamp == stamp or kdigest == digest) and type(blob) is bytes:
                if kstamp != stamp:
                    delta[label] = (stamp, kdigest, text, blob, n)
                    self._dirty = True
                return Vocab(text, blob, n)
        slot = corpus.slots.get(label) if corpus is not None else None
        if corpus is not None and slot is not None and kept is None:
            if corpus.stamps[slot] == stamp:
                return Vocab(None, None, corpus.ns[slot], corpus=corpus, slot=slot)
            digest = _digest(data) if digest is None else digest
            if corpus.digests[slot] == digest:
                corpus.stamps[slot] = stamp  # a fresh checkout: the same content
                self._dirty = True
                return Vocab(None, None, corpus.ns[slot], corpus=corpus, slot=slot)
        vocab = Vocab.of(data)
        delta[label] = (stamp, _digest(data) if digest is None else digest, vocab.text,
                        vocab.blob, vocab.n)  # fmt: skip
        self._dirty = True
        return vocab

    def save(self) -> None:
        """Write the cache when something was counted anew or found moved; the corpus is
        built again over the files of this pack when too many are beside it. A failure
        to write is no error."""
        if not self._dirty:
            return
        corpus = self._load()
        delta = self._delta
        assert delta is not None
        fresh = sum(1 for lab in self._seen if lab in delta)
        if corpus is None or fresh > max(REBUILD_MIN, REBUILD_SHARE * len(self._seen)):
            corpus = self._rebuild(corpus, delta)
            self._corpus = corpus
            self._delta = delta = {}
        while len(delta) > MAX_FILES:
            del delta[next(iter(delta))]
        self._memo.put_plain("index", (_FORMAT, corpus.plain(), delta))
        self._dirty = False

    def _rebuild(self, old: Corpus | None, delta: dict) -> Corpus:
        """The corpus of the files of this pack: the old corpus's counts where it holds
        the file, the delta's or this pack's where it does not."""
        old_counts = None
        files = []
        for label in sorted(self._seen)[:MAX_FILES]:
            v = self._seen[label]
            if v.corpus is not None and v.corpus is old:
                if old_counts is None:
                    old_counts = old.all_counts()
                s = v.slot
                files.append((label, old.stamps[s], old.digests[s], old.ns[s], old_counts[s]))
            else:
                stamp, digest = delta[label][:2]
                files.append((label, stamp, digest, v.n, v.counts()))
        return Corpus.build(files)
