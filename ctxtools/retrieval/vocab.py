"""A file's words, counted once and kept in the store between packs.

Ranking a directory asks two things of every candidate: which of the query's terms its
text can hold at all (``Terms.present``) and how often each occurs as a word
(``Terms.count``). Both depend on the query, but only through the file's *vocabulary*:
its distinct words and how often each occurs. A ``Vocab`` is that vocabulary, as
``Terms`` reads it:

* ``lines``: its distinct words as written (the case splits ``CamelCase`` parts), one a
  line, each followed by a space and how often it occurs: a term (a run of word bytes)
  occurs in the file's lower-cased bytes exactly when it occurs in one of its words, so
  searching them lower-cased (a few KB) answers ``present`` as searching the file would;
* ``n``: the number of words.

Asking that of seven thousand files one by one costs more than the rest of a pack, so
``VocabCache`` keeps a root's vocabularies as one ``Corpus``: every file's words, file
after file, in one text, with their counts in one array, which answers ``present`` and
``count`` for every file at once by searching that text once a term
(``Terms.scan_corpus``): a C-level search of a few MB instead of a Python pass over every
file's words. It is made by joining the files' own texts, so keeping it costs a cold
pack nothing to speak of. A file is the corpus's while its stat (size, mtime, ctime:
what the repo map's scan cache trusts a file by) or, in a fresh checkout where every
stat is new, its content's xxh3 is the one it was counted at; a file that changed is
counted anew and kept beside the corpus (``delta``) until so many have that the corpus
is built again. A missing or damaged cache file is simply empty, and a cache that cannot
be written is not an error: the next pack counts again.

A fresh checkout changes every file's stat and none of its words: the new stats go to a
small record of their own (``vocabstamps``, tied to the cache file it amends by that
file's generation), so that the cache file, megabytes for a large tree, is not written
again only to say that the files were touched.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_right
from collections import Counter
from itertools import accumulate

from ctxtools.analyzer.tokenizer import WORD_BYTES

MAX_FILES = 100_000  # vocabularies one cache file keeps, at most
REBUILD_MIN = 64  # files counted beside the corpus before it is built again ...
REBUILD_SHARE = 0.05  # ... or this share of the files, whichever is more
_FORMAT = 8  # the record's shape; another is a miss
_ARRAY = "Q"  # offsets
_POST = "I"  # postings: file slots (at most MAX_FILES) and counts (a file's words)


def _array(blob: bytes = b"", code: str = _ARRAY) -> array:
    out = array(code)
    out.frombytes(blob)
    return out


class Vocab:
    """The vocabulary of one file (see the module's docstring). A file of a ``Corpus``
    has no lines of its own: ``corpus`` and ``slot`` say where they are."""

    __slots__ = ("_counts", "corpus", "lines", "n", "slot")

    def __init__(self, lines: bytes, n: int, corpus: Corpus | None = None, slot: int = -1):
        self.lines = lines
        self.n = n
        self.corpus = corpus
        self.slot = slot
        self._counts: dict | None = None

    @classmethod
    def of(cls, data: bytes) -> Vocab:
        words = data.translate(WORD_BYTES).split()
        counts = Counter(words)
        vocab = cls(b"\n".join(map(b"%s %d".__mod__, counts.items())), len(words))
        vocab._counts = counts
        return vocab

    def own_lines(self) -> bytes:
        return self.corpus.region(self.slot) if self.corpus is not None else self.lines

    @property
    def text(self) -> bytes:
        """The distinct words lower-cased, one a line (what ``present`` searches)."""
        return b"\n".join(self.counts()).lower()

    def counts(self) -> dict[bytes, int]:
        if self._counts is None:
            self._counts = _counts(self.own_lines())
        return self._counts


def _counts(lines: bytes) -> dict[bytes, int]:
    out: dict[bytes, int] = {}
    if lines:
        for line in lines.split(b"\n"):
            word, _sp, count = line.rpartition(b" ")
            out[word] = int(count)
    return out


class Corpus:
    """The vocabularies of many files as one inverted index (see the module's docstring).

    ``words``: every distinct word of the files as written, sorted; ``low`` the same words
    lower-cased, one a line, word K's line starting at ``low_at[K]``: the text a term is
    searched in. ``post[post_at[K]:post_at[K + 1]]`` are the files holding word K, as
    (slot, occurrences) pairs. ``text`` keeps each file's ``Vocab.lines`` (file S's from
    ``file_at[S]``), to build the corpus again when many files changed."""

    def __init__(self, labels, stamps, digests, ns, text, file_at, joined, post, post_at, low_at):
        self.labels: list[str] = labels
        self.stamps: list[tuple] = stamps
        self.digests: list[int] = digests
        self.ns: list[int] = ns
        self.text: bytes = text
        self.file_at = _array(file_at)
        # (the words are kept joined, one a line: one bytes object to store and load, cut
        # in C; bytes.lower() maps byte for byte, so the lowered words joined are the
        # joined words lowered, each where it was)
        self.words: list[bytes] = joined.split(b"\n") if joined else []
        self.post = _array(post, _POST)
        self.post_at = _array(post_at)
        self.low = joined.lower() + b"\n" if joined else b""
        self.low_at = _array(low_at)
        self.slots = {lab: k for k, lab in enumerate(labels)}
        self.scans: dict[tuple, object] = {}  # Terms.scan_corpus's answers, by the terms
        self._word_set: frozenset[bytes] | None = None

    @classmethod
    def build(cls, files: list[tuple[str, tuple, int, int, Vocab]]) -> Corpus:
        """The corpus of FILES: (label, stamp, digest, words, ``Vocab``) each."""
        index: dict[bytes, array] = {}  # (arrays: a list of ints weighs 4x as much)
        parts = []
        file_at = array(_ARRAY, [0]) * (len(files) + 1)
        pos = 0
        for slot, f in enumerate(files):
            vocab = f[4]
            for w, c in vocab.counts().items():
                got = index.get(w)
                if got is None:
                    index[w] = array(_POST, (slot, c))
                else:
                    got.append(slot)
                    got.append(c)
            vocab._counts = None  # (its counts are the index's now: memory, not kept twice)
            lines = vocab.own_lines()
            file_at[slot] = pos
            parts.append(lines)
            pos += len(lines)
        file_at[len(files)] = pos
        words = sorted(index)
        post = array(_POST)
        lens = []
        for w in words:
            got = index.pop(w)
            lens.append(len(got))
            post.extend(got)
        post_at = array(_ARRAY, accumulate(lens, initial=0))
        # word K's line of ``low`` starts at low_at[K]
        low_at = array(_ARRAY, accumulate(map((1).__add__, map(len, words)), initial=0))
        return cls(
            [f[0] for f in files], [f[1] for f in files], [f[2] for f in files],
            [f[3] for f in files], b"".join(parts), file_at.tobytes(), b"\n".join(words),
            post.tobytes(), post_at.tobytes(), low_at.tobytes(),
        )  # fmt: skip

    def plain(self) -> tuple:
        return (self.labels, self.stamps, self.digests, self.ns, self.text,
                self.file_at.tobytes(), b"\n".join(self.words), self.post.tobytes(),
                self.post_at.tobytes(), self.low_at.tobytes())  # fmt: skip

    @classmethod
    def from_plain(cls, value) -> Corpus | None:
        if type(value) is not tuple or len(value) != 10:
            return None
        if any(type(x) is not list for x in value[:4]) or any(
            type(x) is not bytes for x in value[4:]
        ):
            return None
        corpus = cls(*value)
        n, nw = len(corpus.labels), len(corpus.words)
        if not (len(corpus.stamps) == len(corpus.digests) == len(corpus.ns) == n):
            return None
        if len(corpus.file_at) != n + 1 or corpus.file_at[n] != len(corpus.text):
            return None
        if len(corpus.post_at) != nw + 1 or corpus.post_at[-1] != len(corpus.post):
            return None
        if len(corpus.low_at) != nw + 1 or corpus.low_at[-1] != len(corpus.low):
            return None
        return corpus

    def word_set(self) -> frozenset[bytes]:
        """Its words as a set (made when first asked for)."""
        if self._word_set is None:
            self._word_set = frozenset(self.words)
        return self._word_set

    def word_at(self, pos: int) -> int:
        """The word whose line of ``low`` holds offset POS."""
        return bisect_right(self.low_at, pos) - 1

    def postings(self, k: int) -> array:
        """(slot, occurrences) pairs, flat, of the files holding word K."""
        return self.post[self.post_at[k] : self.post_at[k + 1]]

    def region(self, slot: int) -> bytes:
        return self.text[self.file_at[slot] : self.file_at[slot + 1]]

    def counts_of(self, slot: int) -> dict[bytes, int]:
        return _counts(self.region(slot))


def _digest(data: bytes) -> int:
    import xxhash

    return xxhash.xxh3_64_intdigest(data)


class VocabCache:
    """The vocabularies of ROOT's files, kept in STORE (see the module's docstring)."""

    def __init__(self, store, root: str):
        from ctxtools.config import store_root
        from ctxtools.source.memo import Memo

        self._memo = Memo(store_root(store), root, "vocab", tuple, keep=1)
        self._stamps_memo = Memo(store_root(store), root, "vocabstamps", tuple, keep=1)
        self._corpus: Corpus | None | bool = False  # False: not loaded yet
        self._delta: dict | None = None  # label -> (stamp, digest, lines, words)
        self._generation = 0  # the cache file's, which its restamps must name
        self._restamps: dict[str, tuple] = {}  # label -> its new stat, same words
        self._seen: dict[str, Vocab] = {}
        self._new = 0  # files counted anew in this run
        self._dirty = False  # the cache file must be written
        self._restamped = False  # only the restamps must

    def _load(self) -> Corpus | None:
        if self._corpus is False:
            rec = self._memo.load().get("index")
            ok = type(rec) is tuple and len(rec) == 4 and rec[0] == _FORMAT
            self._corpus = Corpus.from_plain(rec[1]) if ok else None
            delta = rec[2] if ok else None
            self._delta = delta if type(delta) is dict else {}
            self._generation = rec[3] if ok and type(rec[3]) is int else 0
            self._apply_restamps()
        return self._corpus  # type: ignore[return-value]

    def _apply_restamps(self) -> None:
        """The stats the files were found at since the cache file was written (their
        words unchanged), when the restamps are that file's."""
        rec = self._stamps_memo.load().get("stamps")
        if not (type(rec) is tuple and len(rec) == 2 and rec[0] == self._generation):
            return
        stamps = rec[1]
        if not self._generation or type(stamps) is not dict:
            return
        delta, corpus = self._delta, self._corpus
        assert delta is not None
        for label, stamp in stamps.items():
            kept = delta.get(label)
            if type(kept) is tuple and len(kept) == 4:
                delta[label] = (stamp, *kept[1:])
            elif corpus is not None and label in corpus.slots:
                corpus.stamps[corpus.slots[label]] = stamp
            else:
                continue
            self._restamps[label] = stamp

    def get(self, label: str, path: str, data: bytes, stat: tuple | None = None) -> Vocab:
        """The vocabulary of the file LABEL (at PATH, whose bytes are DATA): the kept one
        when the file's stat, or else its content, is the one it was counted at; else
        counted now (and kept). STAT: the file's (size, mtime_ns, ctime_ns) as a listing
        found them before it was read, else it is asked for now."""
        if stat is not None:
            stamp = (len(data), *stat)
        else:
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
        if type(kept) is tuple and len(kept) == 4:
            kstamp, kdigest, lines, n = kept
            if kstamp != stamp:
                digest = _digest(data)
            if (kstamp == stamp or kdigest == digest) and type(lines) is bytes:
                if kstamp != stamp:
                    delta[label] = (stamp, kdigest, lines, n)
                    self._restamp(label, stamp)
                return Vocab(lines, n)
        slot = corpus.slots.get(label) if corpus is not None else None
        if corpus is not None and slot is not None and kept is None:
            if corpus.stamps[slot] == stamp:
                return Vocab(b"", corpus.ns[slot], corpus, slot)
            digest = _digest(data) if digest is None else digest
            if corpus.digests[slot] == digest:
                corpus.stamps[slot] = stamp  # a fresh checkout: the same content
                self._restamp(label, stamp)
                return Vocab(b"", corpus.ns[slot], corpus, slot)
        vocab = Vocab.of(data)
        self._new += 1
        digest = _digest(data) if digest is None else digest
        delta[label] = (stamp, digest, vocab.lines, vocab.n)
        self._dirty = True
        return vocab

    def _restamp(self, label: str, stamp: tuple) -> None:
        """LABEL's words are the ones kept, at a new STAT: a restamp, not a new count."""
        self._restamps[label] = stamp
        self._restamped = True

    def save(self) -> None:
        """Write the cache when something was counted anew or found moved; the corpus is
        built again over the files of this pack when too many are beside it. A first pack
        (every file counted now) keeps the counts alone: it has ranked them file by file
        already, and a pack that is never run again should not pay for an index; the next
        pack builds it. A failure to write is no error."""
        if not self._seen:
            return
        corpus = self._load()
        delta = self._delta
        assert delta is not None
        fresh = sum(1 for lab in self._seen if lab in delta)
        first = self._new == len(self._seen)  # a first pack: every file counted now
        build = not first and (
            corpus is None or fresh > max(REBUILD_MIN, REBUILD_SHARE * len(self._seen))
        )
        if self._restamped and not self._generation:
            self._dirty = True  # (restamps name a cache file: there is none to name)
        if not (self._dirty or build):
            if self._restamped:
                self._stamps_memo.put_plain("stamps", (self._generation, self._restamps))
                self._restamped = False
            return
        if build:
            corpus = self._rebuild(delta)
            self._corpus = corpus
            self._delta = delta = {}
        while len(delta) > MAX_FILES:
            del delta[next(iter(delta))]
        plain = corpus.plain() if corpus is not None else None
        # (a new generation: the restamps of the file written before are in this one)
        self._generation = int.from_bytes(os.urandom(8), "big") | 1
        self._memo.put_plain("index", (_FORMAT, plain, delta, self._generation))
        self._restamps = {}
        self._dirty = self._restamped = False

    def _rebuild(self, delta: dict) -> Corpus:
        """The corpus of the files of this pack, from the old corpus where it holds the
        file and from the delta where it does not."""
        files = []
        for label in sorted(self._seen)[:MAX_FILES]:
            v = self._seen[label]
            if v.corpus is not None:
                c, s = v.corpus, v.slot
                files.append((label, c.stamps[s], c.digests[s], c.ns[s], v))
            else:
                stamp, digest, _lines, n = delta[label]
                files.append((label, stamp, digest, n, v))
        corpus = Corpus.build(files)
        for slot, f in enumerate(files):  # this pack's vocabularies are the corpus's now
            v = f[4]
            v.corpus, v.slot, v.lines, v._counts = corpus, slot, b"", None
        return corpus
