"""Memos: a few named records of one kind kept in one store file per repository.

``Memo`` is the one interface (``get`` a record under a key, ``put`` one): a checksummed
``marshal`` file, ``<store>/repomap/<kind>-v1-<hash of the root's real path>.bin``, that is
simply a miss when missing, damaged or of another shape. A record is a NamedTuple written as
a plain tuple (``to_plain``) and read back through ``from_plain``; a key is ``memo_key`` of
plain values. The repo map keeps its graph, fit and result memos this way
(``repomap.records``), the ranking its vocabularies (``retrieval.vocab``).
"""

from __future__ import annotations

import os
from pathlib import Path

from ctxtools.fsutil import atomic_write

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
        import xxhash

        key = xxhash.xxh3_64_hexdigest(os.fsencode(os.path.realpath(root)))
        self.path = Path(store_root) / CACHE_DIR / f"{kind}-v1-{key}.bin"
        self.magic = b"ctx-repomap-" + kind.encode() + b"-v1\n"
        self.record = record
        self.keep = keep
        self.durable = durable
        self.results: dict[str, object] | None = None

    def load(self) -> dict[str, object]:
        """Every key's plain value (read once)."""
        import marshal

        import xxhash

        if self.results is None:
            self.results = {}
            try:
                blob = self.path.read_bytes()
                # (the file: the magic line, the body's xxh3 and a newline, the body)
                if blob.startswith(self.magic):
                    digest, sep, body = blob[len(self.magic) :].partition(b"\n")
                    if sep and xxhash.xxh3_64_hexdigest(body).encode() == digest:
                        results = marshal.loads(body)
                        if isinstance(results, dict):
                            self.results = results
            except Exception:  # missing, unreadable or damaged: a miss
                pass
        return self.results

    def get(self, key: str):
        """The record under KEY, or None (missing, or of another shape)."""
        return from_plain(self.record, self.load().get(key))

    def put(self, key: str, record) -> str | None:
        """Keep RECORD under KEY; a note when it could not be saved."""
        return self.put_plain(key, to_plain(record))

    def put_plain(self, key: str, value: object) -> str | None:
        import marshal

        results = self.load()
        results.pop(key, None)
        results[key] = value
        while len(results) > self.keep:
            del results[next(iter(results))]
        import xxhash

        try:
            body = marshal.dumps(results, 4)
        except ValueError as exc:  # an unmarshallable value: keep nothing rather than crash
            return str(exc)
        digest = xxhash.xxh3_64_hexdigest(body).encode()
        return atomic_write(self.path, self.magic + digest + b"\n" + body, durable=self.durable)
