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

``VocabCache`` keeps the vocabularies of one root's files in one store file, each under
the file's label and stat (size, mtime, ctime: what the repo map's scan cache trusts a
file by); a file whose stat changed is counted anew. A missing or damaged cache file is
simply empty, and a cache that cannot be written is not an error: the next pack counts
again.
"""

from __future__ import annotations

import marshal
import os
from collections import Counter

from ctxtools.analyzer.tokenizer import WORD_BYTES

MAX_FILES = 100_000  # vocabularies one cache file keeps, at most


class Vocab:
    """The vocabulary of one file (see the module's docstring)."""

    __slots__ = ("_counts", "blob", "n", "text")

    def __init__(self, text: bytes, blob: bytes, n: int, counts: dict | None = None):
        self.text = text
        self.blob = blob
        self.n = n
        self._counts = counts

    @classmethod
    def of(cls, data: bytes) -> Vocab:
        words = data.translate(WORD_BYTES).split()
        counts = dict(Counter(words))
        text = b"\n".join(sorted({w.lower() for w in counts}))
        return cls(text, marshal.dumps(counts, 4), len(words), counts)

    def counts(self) -> dict[bytes, int]:
        if self._counts is None:
            counts = marshal.loads(self.blob)
            if not isinstance(counts, dict):
                raise ValueError("a vocabulary that is not a dict")
            self._counts = counts
        return self._counts


class VocabCache:
    """The vocabularies of ROOT's files, kept in STORE (see the module's docstring)."""

    def __init__(self, store, root: str):
        from ctxtools.config import store_root
        from ctxtools.repomap.cache import Memo

        self._memo = Memo(store_root(store), root, "vocab", tuple, keep=1)
        self._table: dict | None = None
        self._dirty = False

    def _load(self) -> dict:
        if self._table is None:
            table = self._memo.load().get("files")
            self._table = table if isinstance(table, dict) else {}
        return self._table

    def get(self, label: str, path: str, data: bytes) -> Vocab:
        """The vocabulary of the file LABEL (at PATH, whose bytes are DATA): the kept one
        when the file's stat is the one it was counted at, else counted now (and kept)."""
        try:
            st = os.stat(path)
            stamp = (len(data), st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        except OSError:
            return Vocab.of(data)
        table = self._load()
        hit = table.get(label)
        if type(hit) is tuple and len(hit) == 4 and hit[0] == stamp:
            _stamp, text, blob, n = hit
            if type(text) is bytes and type(blob) is bytes and type(n) is int:
                return Vocab(text, blob, n)
        vocab = Vocab.of(data)
        table.pop(label, None)
        table[label] = (stamp, vocab.text, vocab.blob, vocab.n)
        self._dirty = True
        return vocab

    def save(self) -> None:
        """Write the cache when a vocabulary was counted anew (the oldest go past
        ``MAX_FILES``); a failure to write is no error."""
        if not self._dirty:
            return
        table = self._load()
        while len(table) > MAX_FILES:
            del table[next(iter(table))]
        self._memo.put_plain("files", table)
        self._dirty = False
