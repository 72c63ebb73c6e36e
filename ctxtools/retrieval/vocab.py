"""A file's words, counted once and kept in the store between packs.

Ranking a directory asks two things of every candidate: which of the query's terms its
text can hold at all (``Terms.present``) and how often each occurs as a word
(``Terms.count``). Both depend on the query, but only through the file's *vocabulary*:
its distinct words and how often each occurs. A ``Vocab`` is that vocabulary, as
``Terms`` reads it:

* ``words``: its distinct words as written (the case splits ``CamelCase`` parts), one a
  line, and ``freq``, how often each occurs (an array's bytes): a term (a run of word
  bytes) occurs in the file's lower-cased bytes exactly when it occurs in one of its
  words, so searching them lower-cased (a few KB) answers ``present`` as searching the
  file would;
* ``n``: the number of words.

Asking that of seven thousand files one by one costs more than the rest of a pack, so
``VocabCache`` keeps a root's vocabularies as one ``Corpus``: the files' distinct words
in one text, each with the files that hold it and how often (its postings), which
answers ``present`` and ``count`` for every file at once by searching that text once a term
(``Terms.scan_corpus``): a C-level search of a few MB instead of a Python pass over every
file's words. It is made by joining the files' own words, so keeping it costs a cold
pack nothing to speak of; those own words are kept in a file of their own
(``vocabfiles``), read only to build the corpus again, so that a pack loads the index
alone (its numbers read in place, not copied). A file is the corpus's while its stat
(size, mtime, ctime: what the repo map's scan cache trusts a file by) or, in a fresh
checkout where every stat is new, its content's xxh3 is the one it was counted at; a file
that changed is counted anew and kept beside the corpus (``delta``) until so many have
that the corpus is built again. A missing or damaged cache file is simply empty, and a
cache that cannot be written is not an error: the next pack counts again.

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
from ctxtools.retrieval.source import _digest

MAX_FILES = 100_000  # vocabularies one cache file keeps, at most
REBUILD_MIN = 64  # files counted beside the corpus before it is built again ...
REBUILD_SHARE = 0.05  # ... or this share of the files, whichever is more
_FORMAT = 9  # the record's shape; another is a miss
_ARRAY = "Q"  # offsets
_POST = "I"  # postings: file slots (at most MAX_FILES) and counts (a file's words)


def _view(blob, code: str = _ARRAY) -> memoryview:
    """BLOB's numbers read in place (the bytes a memo held, or an array, not copied)."""
    view = memoryview(blob)
    return view if view.format == code else view.cast(code)


class Vocab:
    """The vocabulary of one file (see the module's docstring): ``words``, its distinct
    words as written, one a line, and ``freq`` (bytes of ``_POST`` numbers), how often
    each occurs. A file of a ``Corpus`` has no words of its own: ``corpus`` and ``slot``
    say where they are."""

    __slots__ = ("corpus", "freq", "n", "slot", "words")

    def __init__(
        self, words: bytes, freq: bytes, n: int, corpus: Corpus | None = None, slot: int = -1
    ):
        self.words = words
        self.freq = freq
        self.n = n
        self.corpus = corpus
        self.slot = slot

    @classmethod
    def of(cls, data: bytes) -> Vocab:
        words = data.translate(WORD_BYTES).split()
        counts = Counter(words)
        # (two flat bytes, not the dict: a dict of a file's words weighs ten times as much,
        # and a first pack holds every file's until it ranks them)
        return cls(b"\n".join(counts), array(_POST, counts.values()).tobytes(), len(words))

    def own(self) -> tuple[bytes, bytes]:
        """(words, freq), its own or the corpus's."""
        if self.corpus is not None:
            return self.corpus.region(self.slot)
        return self.words, self.freq

    @property
    def text(self) -> bytes:
        """The distinct words lower-cased, one a line (what ``present`` searches)."""
        return self.own()[0].lower()

    def counts(self) -> dict[bytes, int]:
        """word -> occurrences (made anew at each call: callers use it once)."""
        return _counts(*self.own())


def _counts(words: bytes, freq: bytes) -> dict[bytes, int]:
    return dict(zip(words.split(b"\n"), _view(freq, _POST), strict=True)) if words else {}


class Corpus:
    """The vocabularies of many files as one inverted index (see the module's docstring).

    ``joined``: every distinct word of the files as written, sorted, one a line (``word(K)``
    cuts word K out); ``low`` the same lower-cased, word K's line starting at ``low_at[K]``:
    the text a term is searched in. ``post[post_at[K]:post_at[K + 1]]`` are the files
    holding word K, as (slot, occurrences) pairs. The files' own words (``Vocab.words`` and
    ``freq``, to build the corpus again when many files changed) are not part of it: they
    are kept in a file of their own (``VocabCache``), read only then (``files``). IDENT
    names the corpus, and that file by it."""

    def __init__(self, ident, labels, stamps, digests, ns, joined, post, post_at, low_at):
        self.ident: int = ident
        self.labels: list[str] = labels
        self.stamps: list[tuple] = stamps
        self.digests: list[int] = digests
        self.ns: list[int] = ns
        # (kept joined, one a line: one bytes object to store and load, cut on demand;
        # bytes.lower() maps byte for byte, so the lowered words joined are the joined
        # words lowered, each where it was)
        self.joined: bytes = joined
        self.post = _view(post, _POST)
        self.post_at = _view(post_at)
        self.low = joined.lower() + b"\n" if joined else b""
        self.low_at = _view(low_at)
        self.slots = {lab: k for k, lab in enumerate(labels)}
        self.scans: dict[tuple, object] = {}  # Terms.scan_corpus's answers, by the terms
        self.files: tuple | None = None  # ([words], [freq]): file by file, when read
        self.reader = None  # () -> the files' own words as a cache file holds them, or None
        self._word_set: frozenset[bytes] | None = None

    @classmethod
    def build(
        cls, files: list[tuple[str, tuple, int, int, Vocab]], ident: int | None = None
    ) -> tuple[Corpus, tuple]:
        """The corpus of FILES, (label, stamp, digest, words, ``Vocab``) each, named IDENT
        (default: a new one), and the files' own words as ``files`` holds them (the bytes
        each ``Vocab`` held)."""
        # Two passes, to hold no list of postings per word (a hundred thousand arrays):
        # the first counts the files holding each word, the second puts each file's
        # (slot, occurrences) at its word's place in one array made whole.
        held: Counter[bytes] = Counter()
        texts, freqs = [], []
        for f in files:
            words, freq = f[4].own()
            held.update(_counts(words, freq).keys())
            texts.append(words)
            freqs.append(freq)
        words = sorted(held)
        post_at = array(_ARRAY, accumulate((2 * held[w] for w in words), initial=0))
        number = held  # (the same dict, reused) word -> its number in WORDS
        for k, w in enumerate(words):
            number[w] = k
        at = post_at[:-1]  # by word number: where its next pair goes
        post = array(_POST, bytes(4 * post_at[-1]))
        for slot, (text, freq) in enumerate(zip(texts, freqs, strict=True)):
            counts = _counts(text, freq)
            for k, c in zip(map(number.__getitem__, counts), counts.values(), strict=True):
                p = at[k]
                post[p] = slot
                post[p + 1] = c
                at[k] = p + 2
        del held, number, at
        # word K's line of ``low`` starts at low_at[K]
        low_at = array(_ARRAY, accumulate(map((1).__add__, map(len, words)), initial=0))
        corpus = cls(
            new_ident() if ident is None else ident,
            [f[0] for f in files], [f[1] for f in files], [f[2] for f in files],
            [f[3] for f in files], b"\n".join(words), post, post_at, low_at,
        )  # fmt: skip
        return corpus, (texts, freqs)

    def plain(self) -> tuple:
        # (marshal writes the numbers' views as the bytes they are: no copy is made)
        return (self.ident, self.labels, self.stamps, self.digests, self.ns, self.joined,
                self.post, self.post_at, self.low_at)  # fmt: skip

    @classmethod
    def from_plain(cls, value) -> Corpus | None:
        if type(value) is not tuple or len(value) != 9 or type(value[0]) is not int:
            return None
        if any(type(x) is not list for x in value[1:5]) or any(
            type(x) is not bytes for x in value[5:]
        ):
            return None
        if len(value[6]) % 4 or len(value[7]) % 8 or len(value[8]) % 8:
            return None
        corpus = cls(*value)
        n, nw = len(corpus.labels), len(corpus.low_at) - 1
        if not (len(corpus.stamps) == len(corpus.digests) == len(corpus.ns) == n):
            return None
        if nw < 0 or len(corpus.post_at) != nw + 1 or corpus.post_at[-1] != len(corpus.post):
            return None
        if corpus.low_at[-1] != len(corpus.low) or corpus.joined.count(b"\n") + 1 != max(nw, 1):
            return None
        return corpus

    def take_files(self, value) -> bool:
        """Take VALUE, the files' own words as a cache file holds them, when they are this
        corpus's: (ident, [words], [freq]), file by file."""
        if type(value) is not tuple or len(value) != 3 or value[0] != self.ident:
            return False
        words, freqs = value[1], value[2]
        n = len(self.labels)
        if type(words) is not list or type(freqs) is not list or not len(words) == len(freqs) == n:
            return False
        for w, f in zip(words, freqs, strict=True):
            if type(w) is not bytes or type(f) is not bytes or len(f) % 4:
                return False
        self.files = (words, freqs)
        return True

    def word(self, k: int) -> bytes:
        """Its word K, as written."""
        return self.joined[self.low_at[k] : self.low_at[k + 1] - 1]

    def word_set(self) -> frozenset[bytes]:
        """Its words as a set (made when first asked for)."""
        if self._word_set is None:
            self._word_set = frozenset(self.joined.split(b"\n")) if self.joined else frozenset()
        return self._word_set

    def word_at(self, pos: int) -> int:
        """The word whose line of ``low`` holds offset POS."""
        return bisect_right(self.low_at, pos) - 1

    def postings(self, k: int) -> memoryview:
        """(slot, occurrences) pairs, flat, of the files holding word K."""
        return self.post[self.post_at[k] : self.post_at[k + 1]]

    def has_files(self) -> bool:
        """Whether the files' own words are at hand (read by ``reader`` when first asked)."""
        if self.files is None and self.reader is not None:
            reader, self.reader = self.reader, None
            self.take_files(reader())
        return self.files is not None

    def region(self, slot: int) -> tuple[bytes, bytes]:
        """File SLOT's (words, freq) (empty when they cannot be read: see ``has_files``)."""
        if not self.has_files():
            return b"", b""
        words, freqs = self.files
        return words[slot], freqs[slot]

    def counts_of(self, slot: int) -> dict[bytes, int]:
        return _counts(*self.region(slot))


def new_ident() -> int:
    """A new corpus's name (random, odd: never 0)."""
    return int.from_bytes(os.urandom(8), "big") | 1


class VocabCache:
    """The vocabularies of ROOT's files, kept in STORE (see the module's docstring)."""

    def __init__(self, store, root: str):
        from ctxtools.config import store_root
        from ctxtools.source.memo import Memo

        self._memo = Memo(store_root(store), root, "vocab", tuple, keep=1)
        self._stamps_memo = Memo(store_root(store), root, "vocabstamps", tuple, keep=1)
        self._files_memo = Memo(store_root(store), root, "vocabfiles", tuple, keep=1)
        self._corpus: Corpus | None | bool = False  # False: not loaded yet
        self._delta: dict | None = None  # label -> (stamp, digest, words, freq, n)
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
            if self._corpus is not None:
                self._corpus.reader = self._read_files
            delta = rec[2] if ok else None
            self._delta = delta if type(delta) is dict else {}
            self._generation = rec[3] if ok and type(rec[3]) is int else 0
            self._apply_restamps()
        return self._corpus  # type: ignore[return-value]

    def _read_files(self):
        """The corpus's files' own words, as their cache file holds them (or None)."""
        rec = self._files_memo.load().get("files")
        return rec[1] if type(rec) is tuple and len(rec) == 2 and rec[0] == _FORMAT else None

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
            if type(kept) is tuple and len(kept) == 5:
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
        if type(kept) is tuple and len(kept) == 5:
            kstamp, kdigest, words, freq, n = kept
            if kstamp != stamp:
                digest = _digest(data)
            if (kstamp == stamp or kdigest == digest) and type(words) is type(freq) is bytes:
                if kstamp != stamp:
                    delta[label] = (stamp, *kept[1:])
                    self._restamp(label, stamp)
                return Vocab(words, freq, n)
        slot = corpus.slots.get(label) if corpus is not None else None
        if corpus is not None and slot is not None and kept is None:
            if corpus.stamps[slot] == stamp:
                return Vocab(b"", b"", corpus.ns[slot], corpus, slot)
            digest = _digest(data) if digest is None else digest
            if corpus.digests[slot] == digest:
                corpus.stamps[slot] = stamp  # a fresh checkout: the same content
                self._restamp(label, stamp)
                return Vocab(b"", b"", corpus.ns[slot], corpus, slot)
        vocab = Vocab.of(data)
        self._new += 1
        digest = _digest(data) if digest is None else digest
        delta[label] = (stamp, digest, vocab.words, vocab.freq, vocab.n)
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
        file (and its files' own words can be read: a file whose cannot is left out, to be
        counted again) and from the delta where it does not. The new corpus's files' own
        words are written to their file, and let go: only another rebuild reads them."""
        from ctxtools.memofile import release_large_buffers

        release_large_buffers()  # (the index's and its save's buffers go back when freed)
        files = []
        for label in sorted(self._seen)[:MAX_FILES]:
            v = self._seen[label]
            if v.corpus is not None:
                c, s = v.corpus, v.slot
                if c.has_files():
                    files.append((label, c.stamps[s], c.digests[s], c.ns[s], v))
            else:
                stamp, digest, _words, _freq, n = delta[label]
                files.append((label, stamp, digest, n, v))
        # The files' own words are written first, so that the buffer that writes them
        # and the index being built are not in memory at the same time.
        ident = new_ident()
        own = ([], [])
        for f in files:
            words, freq = f[4].own()
            own[0].append(words)
            own[1].append(freq)
        self._files_memo.results = {}  # (the file written before is replaced, not read)
        self._files_memo.put_plain("files", (_FORMAT, (ident, *own)))
        self._files_memo.results = None  # (read again from the file, if ever asked)
        del own
        corpus, _own = Corpus.build(files, ident)
        corpus.reader = self._read_files
        for slot, f in enumerate(files):  # this pack's vocabularies are the corpus's now
            v = f[4]
            v.corpus, v.slot, v.words, v.freq = corpus, slot, b"", b""
        return corpus
