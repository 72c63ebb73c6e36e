"""The scan cache: per-file scan results kept in the store, one file per repository root.

``<store>/repomap/cache-v1-<hash of the root's real path>.bin`` holds, for each relative
path, ``(size, (mtime_ns, ctime_ns), xxh3 of the content, payload)``. A file whose size and
stamp match is not read at all; one whose stat changed is read and hashed, and a matching
hash (``touch`` without an edit) keeps the old payload. The ctime is in the stamp because a
change of permissions changes only it: a file made unreadable since the last run must be
found unreadable, not served from the cache. An entry is a ``CacheEntry``; its payload is
what scanning produced: a ``ScanPayload`` (language, definitions, reference names and
counts, imports), a skip reason (str) such as ``"binary"``, or None for a file no scanner
took. On disk every record is a plain tuple (``marshal`` writes no other); an entry of
another shape is dropped on loading, so the file is simply scanned again.

The file is a memo file (``ctxtools.memofile``, the store's one cache format) of kind
``scan-cache`` holding (a fingerprint of the scanners' own source, so that a scanner change
invalidates every entry; the root; an xxh3 of the body; the body): the entries as plain
tuples, in parts of BODY_CHUNK, each ``marshal``-ed behind its length, zlib-compressed
(``body_of``: written and read a part at a time). ``marshal`` writes a string shared by
many entries of a part once, which keeps the cache small. Anything unexpected -- a
corrupt, truncated, foreign-version or unreadable cache -- means starting empty, with a
note; an unwritable store means no cache, with a note. Writes are crash-safe: temp file
in the same directory, fsync, ``os.replace``. The cache key never includes the query or
focus (they change ranking, not scanning).

The memos kept beside it, in the same store directory, are ``source.memo``'s.
"""

from __future__ import annotations

import contextlib
import functools
import os
from pathlib import Path
from typing import NamedTuple

from ctxtools.source.memo import CACHE_DIR
from ctxtools.source.scan.common import Definition

KIND = "scan-cache"  # the memo files' kinds (``ctxtools.memofile``)
JOURNAL_KIND = "scan-journal"
PAYLOAD_FORMAT = b"payload-4"  # bump when the payload's (or the body's) shape changes
JOURNAL_MIN = 64  # a journal may always hold this many entries ...
JOURNAL_SHARE = 0.05  # ... or this share of all entries, before the cache is rewritten


class ScanPayload(NamedTuple):
    """What scanning found in one file, as the cache keeps it: DEFS are ``scan.Definition``
    records (plain ``(kind, name, line, signature, scope, end_line)`` tuples on disk), NAMES
    and COUNTS the references (name i is used COUNTS[i] times), IMPORTS the import
    strings."""

    language: str
    defs: tuple
    names: tuple
    counts: tuple
    imports: tuple


Payload = ScanPayload | str | None  # a scan, a skip reason, or no scanner


class CacheEntry(NamedTuple):
    """One file's entry in the scan cache: its stat (SIZE, STAMP = (mtime_ns, ctime_ns)),
    the xxh3 of its content, and what scanning it gave."""

    size: int
    stamp: tuple
    digest: int
    payload: Payload

    @classmethod
    def from_plain(cls, value: object) -> CacheEntry | None:
        """The entry a plain tuple on disk stands for; None when it is of another shape."""
        if type(value) is not tuple or len(value) != 4:
            return None
        size, stamp, digest, payload = value
        if type(payload) is tuple:
            if len(payload) != len(ScanPayload._fields):
                return None
            language, defs, names, counts, imports = payload
            defs = tuple(map(_definition, defs))
            payload = _payload((language, defs, names, counts, imports))
        elif payload is not None and type(payload) is not str:
            return None
        return _entry((size, stamp, digest, payload))

    def to_plain(self) -> tuple:
        payload = self.payload
        plain = payload
        if isinstance(payload, tuple):
            language, defs, names, counts, imports = payload
            plain = (language, tuple(map(tuple, defs)), names, counts, imports)
        return (self.size, self.stamp, self.digest, plain)


# A definition from its plain tuple on disk (tuple.__new__ without the length check of
# Definition._make: a third cheaper, and the payload's format is versioned); a payload and
# an entry from a tuple of their fields, likewise (a warm run loads every entry).
_definition = functools.partial(tuple.__new__, Definition)
_payload = functools.partial(tuple.__new__, ScanPayload)
_entry = functools.partial(tuple.__new__, CacheEntry)


_HERE = Path(__file__).resolve().parent  # ctxtools/source/
BODY_CHUNK = 256  # entries marshalled together (see ``body_of``)
_LEN = 4  # bytes of a part's length


def body_of(parts) -> bytes:
    """The scan cache's body: PARTS (dicts of plain entries) each ``marshal``-ed behind its
    length, zlib-compressed as they come. In parts, so that writing a cache never holds
    every entry's plain copy and their whole marshal at once (a large tree's are tens of
    MB); a name shared by the entries of a part is written once in it."""
    import marshal
    import zlib

    z = zlib.compressobj(1)
    out = []
    for part in parts:
        raw = marshal.dumps(part, 4)
        out.append(z.compress(len(raw).to_bytes(_LEN, "little")))
        out.append(z.compress(raw))
        del raw
    out.append(z.flush())
    return b"".join(out)


def body_entries(body: bytes):
    """(rel, plain entry) of each entry of a scan cache BODY (``body_of``), decompressed
    and loaded a part at a time. Raises ValueError (or zlib's error) on a damaged body."""
    import marshal
    import zlib

    z = zlib.decompressobj()
    buf = bytearray()
    step = 1 << 16
    for at in range(0, len(body) + step, step):
        buf += z.decompress(body[at : at + step]) if at < len(body) else z.flush()
        done = 0
        while len(buf) - done >= _LEN:
            n = int.from_bytes(buf[done : done + _LEN], "little")
            if len(buf) - done - _LEN < n:
                break
            with memoryview(buf) as view:
                part = marshal.loads(view[done + _LEN : done + _LEN + n])
            if not isinstance(part, dict):
                raise ValueError("bad body")
            yield from part.items()
            done += _LEN + n
        del buf[:done]
        if at >= len(body):
            break
    if buf or not z.eof:
        raise ValueError("truncated body")


def files_fingerprint(paths) -> str:
    """xxh3 of PATHS (source files): their names under ``ctxtools/`` and their bytes."""
    import xxhash

    package = _HERE.parent
    h = xxhash.xxh3_64(PAYLOAD_FORMAT)
    for path in paths:
        h.update(path.relative_to(package).as_posix().encode())
        try:
            h.update(path.read_bytes())
        except OSError:
            h.update(b"?")
    return h.hexdigest()


def scanner_fingerprint() -> str:
    """xxh3 of the scanners' source files, of what a file is (``classify``, ``binary``:
    binary, generated, a test is cached too) and of the installed tree-sitter grammars: a
    new scanner, a new rule, or another grammar, means a new cache."""
    scanners = sorted((_HERE / "scan").glob("*.py"))
    paths = [*scanners, _HERE / "classify.py", _HERE.parent / "binary.py"]
    return files_fingerprint(paths) + "-" + _grammar_stamp()


def _grammar_stamp() -> str:
    """xxh3 of the installed tree-sitter packages' top-level files (names, sizes, mtimes),
    found without importing them: an upgraded or removed grammar changes it. The grammars
    are looked for beside the bindings first (one directory listing each), then on the
    import path."""
    import xxhash

    from ctxtools.source.scan.languages import GRAMMARS

    h = xxhash.xxh3_64()
    base = _package_dir("tree_sitter")
    site = os.path.dirname(base) if base else None
    for name in ("tree_sitter", *sorted(grammar.module for grammar in GRAMMARS.values())):
        where = os.path.join(site, name) if site else None
        if where is None or not os.path.isdir(where):
            where = _package_dir(name)
        h.update(name.encode() + b"\0")
        try:
            with os.scandir(where) as it:
                files = sorted((e.name, e.stat()) for e in it if e.is_file())
        except (OSError, TypeError):
            h.update(b"absent\0")
            continue
        for fname, st in files:
            h.update(f"{fname}:{st.st_size}:{st.st_mtime_ns}\0".encode())
    return h.hexdigest()


def _package_dir(name: str) -> str | None:
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    where = spec.submodule_search_locations if spec is not None else None
    return list(where)[0] if where else None


def cache_path(store_root: str | os.PathLike, root: str) -> Path:
    from ctxtools.memofile import key

    return Path(store_root) / CACHE_DIR / f"cache-v1-{key(os.path.realpath(root))}.bin"


def content_hash(data: bytes) -> int:
    import xxhash

    return xxhash.xxh3_64_intdigest(data)


class ScanCache:
    """Load once, look up per file, save once (only when something changed).

    The main file holds every entry; a small *journal* beside it
    (``cache-v1-<key>.journal``) holds the entries changed since the main file was written
    (None for a file that went away), tied to the main file by its checksum. A run that
    changed a few files writes only the journal, so saving an edit costs almost nothing;
    when the journal grows past JOURNAL_SHARE of the entries, the main file is rewritten
    and the journal removed. A file whose content is the main file's under a new stat (a
    fresh checkout touches every file) is journalled as its stat alone, and does not count
    towards that share: a new checkout of the same tree does not rewrite the cache. A
    journal that does not match or cannot be read is ignored (its files are scanned again).
    """

    def __init__(self, path: Path, root: str, fingerprint: str):
        self.path = path
        self.journal_path = path.with_suffix(".journal")
        self.root = os.path.realpath(root)
        self.fingerprint = fingerprint
        self.entries: dict[str, CacheEntry] = {}
        self.seen: set[str] = set()
        self.dirty = False
        self.notes: list[str] = []
        self.base_digest: str | None = None  # checksum of the main file's body, if usable
        self.journal: dict[str, CacheEntry | None] = {}  # what the journal on disk holds
        self.changed: dict[str, CacheEntry] = {}  # entries changed in this run
        self.replaced: dict[str, CacheEntry] = {}  # the entries they replaced (graph memo)
        # Files whose entry is the main file's but for a new stat (a fresh checkout): the
        # journal holds only their stat, (size, stamp, digest), however many they are.
        self.restamped: set[str] = set()

    # --- loading ---------------------------------------------------------------------

    def load(self) -> None:
        from ctxtools.memofile import load

        value, problem = load(self.path, KIND)
        if problem == "missing":
            return
        if problem is not None and problem != "damaged":
            self.notes.append(f"scan cache unreadable ({problem}); rebuilding")
            return
        try:
            if problem is not None:
                raise ValueError(problem)
            entries = self._decode(value)
        except Exception as exc:  # marshal/zlib raise a variety of errors on bad bytes
            self.notes.append(f"scan cache {self.path.name} is unusable ({exc}); rebuilding")
            self.dirty = True
            return
        if entries is None:
            self.dirty = True
            return
        self.entries = entries
        self._load_journal()

    def _load_journal(self) -> None:
        from ctxtools.memofile import load

        value, problem = load(self.journal_path, JOURNAL_KIND)
        if problem is not None and problem != "damaged":
            return  # none, or unreadable: its files are scanned again
        try:
            if problem is not None:
                raise ValueError(problem)
            if type(value) is not tuple or len(value) != 2 or value[0] != self.base_digest:
                raise ValueError("journal of another cache")
            journal = value[1]
            if not isinstance(journal, dict):
                raise ValueError("bad journal")
        except Exception as exc:
            self.notes.append(f"scan cache journal is unusable ({exc}); rescanning its files")
            self.dirty = True
            return
        kept: dict[str, CacheEntry | None] = {}
        for rel, plain in journal.items():
            if plain is None:
                self.entries.pop(rel, None)
                kept[rel] = None
                continue
            if type(plain) is tuple and len(plain) == 3:  # a restamp of the main file's
                base = self.entries.get(rel)
                if base is not None and base.digest == plain[2]:
                    entry = _entry((plain[0], plain[1], base.digest, base.payload))
                    self.entries[rel] = kept[rel] = entry
                    self.restamped.add(rel)
                continue
            entry = CacheEntry.from_plain(plain)
            if entry is not None:
                self.entries[rel] = kept[rel] = entry
        self.journal = kept

    def _decode(self, value: object) -> dict | None:
        """The entries a scan cache record holds: (fingerprint, root, digest, body); None
        when the scanners changed since it was written."""
        import xxhash

        if type(value) is not tuple or len(value) != 4:
            raise ValueError("not a scan cache of this version")
        fingerprint, root, digest, body = value
        if not (isinstance(root, str) and isinstance(digest, str) and isinstance(body, bytes)):
            raise ValueError("bad record")
        if root != self.root:
            raise ValueError("cache of another root")
        if fingerprint != self.fingerprint:
            # The scanners changed: every entry is stale. Not an error, no note.
            return None
        if xxhash.xxh3_64_hexdigest(body) != digest:
            raise ValueError("checksum mismatch")
        entries = {}
        for rel, value in body_entries(body):
            entry = CacheEntry.from_plain(value)
            if entry is not None:  # (another shape: that file is scanned again)
                entries[rel] = entry
        self.base_digest = digest
        return entries

    # --- lookups -----------------------------------------------------------------------

    def get(self, rel: str, size: int, stamp: tuple) -> CacheEntry | None:
        """The entry when the stat matches exactly; no read needed."""
        entry = self.entries.get(rel)
        if entry is not None and entry.size == size and entry.stamp == stamp:
            self.seen.add(rel)
            return entry
        return None

    def get_by_hash(self, rel: str, size: int, stamp: tuple, digest: int) -> CacheEntry | None:
        """The entry, re-stamped, when the content is unchanged despite a new stat."""
        entry = self.entries.get(rel)
        if entry is not None and entry.size == size and entry.digest == digest:
            restamp = rel in self.restamped or not (rel in self.journal or rel in self.changed)
            entry = self.put(rel, size, stamp, digest, entry.payload)
            if restamp:
                self.restamped.add(rel)
            return entry
        return None

    def put(self, rel: str, size: int, stamp: tuple, digest: int, payload: Payload) -> CacheEntry:
        entry = CacheEntry(size, stamp, digest, payload)
        old = self.entries.get(rel)
        if old is not None and rel not in self.replaced:
            self.replaced[rel] = old
        self.entries[rel] = entry
        self.changed[rel] = entry
        self.restamped.discard(rel)
        self.seen.add(rel)
        self.dirty = True
        return entry

    def keep(self, rels) -> None:
        """The entries of RELS stay at the next save, though this run did not look them up
        (files past a map's cut, a pack's few lookups in a cache the map filled): only
        files that went away are dropped."""
        entries = self.entries
        self.seen.update(rel for rel in rels if rel in entries)

    # --- saving ------------------------------------------------------------------------

    def save(self) -> None:
        """Write the entries seen in this run (others are files that went away): into the
        journal when few changed, else the whole cache anew. The cache is then what its
        files hold, so that it can be looked up and saved again (a pack's files section
        uses the cache its map loaded)."""
        gone = [rel for rel in self.entries if rel not in self.seen]
        if not (self.dirty or gone):
            return
        if self.base_digest is not None and not (self.dirty and not self.changed):
            journal = dict(self.journal)
            journal.update(self.changed)
            for rel in gone:
                journal[rel] = None
            whole = sum(1 for rel in journal if rel not in self.restamped)
            if whole <= max(JOURNAL_MIN, JOURNAL_SHARE * len(self.entries)):
                if self._write_journal(journal):
                    self._saved(gone, journal)
                return
        if self._write_main():
            self._saved(gone, None)

    def _saved(self, gone: list[str], journal: dict | None) -> None:
        """What the files hold once saved: GONE dropped, JOURNAL the journal's (None
        after the main file was written, which holds every restamp whole)."""
        for rel in gone:
            del self.entries[rel]
        if journal is None:
            self.restamped = set()
        self.journal = journal if journal is not None else {}
        self.changed = {}
        self.dirty = False

    def _write_journal(self, journal: dict) -> bool:
        from ctxtools.memofile import save

        stamped = self.restamped
        plain = {
            rel: (e[:3] if rel in stamped else e.to_plain()) if e is not None else None
            for rel, e in sorted(journal.items())
        }
        note = save(self.journal_path, JOURNAL_KIND, (self.base_digest, plain), durable=True)
        if note:
            self.notes.append(f"scan cache not saved ({note})")
        return not note

    def _write_main(self) -> bool:
        import xxhash

        from ctxtools.memofile import save

        entries = self.entries
        rels = [rel for rel in sorted(self.seen) if rel in entries]
        body = body_of(
            {rel: entries[rel].to_plain() for rel in rels[at : at + BODY_CHUNK]}
            for at in range(0, len(rels), BODY_CHUNK)
        )
        digest = xxhash.xxh3_64_hexdigest(body)
        record = (self.fingerprint, self.root, digest, body)
        note = save(self.path, KIND, record, durable=True)
        if note:
            self.notes.append(f"scan cache not saved ({note})")
            return False
        self.base_digest = digest
        with contextlib.suppress(OSError):
            self.journal_path.unlink()
        return True
