"""Memos: a few named records of one kind kept in one store file per repository.

``Memo`` is the one interface (``get`` a record under a key, ``put`` one): a memo file
(``ctxtools.memofile``, the store's one cache format), ``<store>/repomap/<kind>-v1-<key of
the root's real path>.bin``, that is simply a miss when missing, damaged or of another
shape. A record is a NamedTuple written as a plain tuple (``to_plain``) and read back
through ``from_plain``; a key is ``memo_key`` of plain values. The repo map keeps its graph,
fit and result memos this way
(``repomap.records``), the ranking its vocabularies (``retrieval.vocab``).
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_DIR = "repomap"  # the store directory of the scan cache and every memo


def memo_key(material: object) -> str:
    """The key of MATERIAL (plain values) in a memo; ValueError when marshal cannot write
    it."""
    import marshal

    import xxhash

    # Version 2 writes values only; 3 and later also how objects are shared (a string
    # used twice, an interned one), which would make equal keys differ.
    return xxhash.xxh3_128_hexdigest(marshal.dumps(material, 2))


def from_plain(record: type, value: object):
    """The RECORD (a NamedTuple class) a plain tuple on disk stands for; None when VALUE
    is of another shape. A record that needs more says so in its own ``from_plain``."""
    decode = getattr(record, "from_plain", None)
    if decode is not None:
        return decode(value)
    if type(value) is tuple and len(value) == len(record._fields):
        return record._make(value)
    return None


def to_plain(record: tuple) -> tuple:
    """RECORD as ``marshal`` can write it: a plain tuple (nested records too)."""
    encode = getattr(record, "to_plain", None)
    return encode() if encode is not None else tuple(record)


class Memo:
    """A few records of one type (RECORD, a NamedTuple class; see ``from_plain``) kept
    in one store file per repository, most recent last, each under a key
    (``memo_key``); anything missing, damaged (the body is checksummed) or of another
    shape is simply a miss. DURABLE writes are fsynced; the others need not be, since the
    checksum turns a torn file into a miss."""

    def __init__(
        self,
        store_root: str | os.PathLike,
        root: str,
        kind: str,
        record: type,
        keep: int,
        durable: bool = False,
    ):
        from ctxtools.memofile import key

        self.path = Path(store_root) / CACHE_DIR / f"{kind}-v1-{key(os.path.realpath(root))}.bin"
        self.kind = f"repomap-{kind}"
        self.record = record
        self.keep = keep
        self.durable = durable
        self.results: dict[str, object] | None = None

    def load(self) -> dict[str, object]:
        """Every key's plain value (read once; a miss is an empty memo)."""
        if self.results is None:
            from ctxtools.memofile import load

            results = load(self.path, self.kind).value
            self.results = results if isinstance(results, dict) else {}
        return self.results

    def get(self, key: str):
        """The record under KEY, or None (missing, or of another shape)."""
        return from_plain(self.record, self.load().get(key))

    def put(self, key: str, record) -> str | None:
        """Keep RECORD under KEY; a note when it could not be saved."""
        return self.put_plain(key, to_plain(record))

    def put_plain(self, key: str, value: object) -> str | None:
        from ctxtools.memofile import save

        results = self.load()
        results.pop(key, None)
        results[key] = value
        while len(results) > self.keep:
            del results[next(iter(results))]
        # (an unmarshallable value or an oversized memo: keep nothing rather than crash)
        return save(self.path, self.kind, results, durable=self.durable)
