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

The file is ``MAGIC``, a fingerprint of the scanners' own source (so a scanner change
invalidates every entry), an xxh3 of the body, then the body: ``marshal`` of plain tuples,
zlib-compressed. ``marshal`` writes a string shared by many entries once, which keeps the
cache small. Anything unexpected -- a corrupt, truncated, foreign-version or unreadable
cache -- means starting empty, with a note; an unwritable store means no cache, with a note.
Writes are crash-safe: temp file in the same directory, fsync, ``os.replace``. The cache key
never includes the query or focus (they change ranking, not scanning).

Beside it, three memos behind one interface (``Memo``: ``get`` a record under a key,
``put`` one), each a checksummed ``marshal`` file that is simply a miss when missing,
damaged or of another shape; each holds one kind of named record:

* ``graph-v1-*`` (``GraphState``): the file graph of the last run, file by file (each
  file's resolved imports and its uses, under its content hash), and its plain
  (unpersonalised) ranking. After an edit only the edited files, and the files using a
  name whose definitions changed, are linked again; when no edge changed, the ranking is
  reused. Every part is what a cold build computes, so the map is the same bytes as a
  cold run's.
* ``fit-v1-*`` (``FitRecord``): per budget, ruler and query/focus, how the last layout
  was fitted: a digest of the lines ``fit`` looked at and the text it chose. The same
  lines fit the same way, so an edit that leaves the top of the map alone needs no
  tokenizer.
* ``result-v1-*`` (``MapRecord``): whole maps, keyed by every file's stamp and the options.
"""

from __future__ import annotations

import contextlib
import functools
import os
from pathlib import Path
from typing import NamedTuple

from ctxtools.fsutil import atomic_write
from ctxtools.repomap.scan.common import Definition

MAGIC = b"ctx-repomap-cache-v1\n"
PAYLOAD_FORMAT = b"payload-3"  # bump when the payload's shape changes
JOURNAL_MAGIC = b"ctx-repomap-journal-v1 "
JOURNAL_MIN = 64  # a journal may always hold this many entries ...
JOURNAL_SHARE = 0.05  # ... or this share of all entries, before the cache is rewritten
CACHE_DIR = "repomap"


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
            payload = ScanPayload(language, defs, names, counts, imports)
        elif payload is not None and type(payload) is not str:
            return None
        return cls(size, stamp, digest, payload)

    def to_plain(self) -> tuple:
        payload = self.payload
        plain = payload
        if isinstance(payload, tuple):
            language, defs, names, counts, imports = payload
            plain = (language, tuple(map(tuple, defs)), names, counts, imports)
        return (self.size, self.stamp, self.digest, plain)


# A definition from its plain tuple on disk (tuple.__new__ without the length check of
# Definition._make: a third cheaper, and the payload's format is versioned).
_definition = functools.partial(tuple.__new__, Definition)


def _source_fingerprint(pattern: str) -> str:
    """xxh3 of this package's source files matching PATTERN (names and bytes), and of
    ``ctxtools/classify.py``: what a file is (binary, generated, a test) is cached too."""
    import xxhash

    here = Path(__file__).resolve().parent
    h = xxhash.xxh3_64(PAYLOAD_FORMAT)
    for path in [*sorted(here.glob(pattern)), here.parent / "classify.py"]:
        h.update(path.relative_to(here.parent).as_posix().encode())
        try:
            h.update(path.read_bytes())
        except OSError:
            h.update(b"?")
    return h.hexdigest()


def scanner_fingerprint() -> str:
    """xxh3 of the scanners' source files and of the installed tree-sitter grammars: a new
    scanner, or another grammar, means a new cache."""
    return _source_fingerprint("scan/*.py") + "-" + _grammar_stamp()


def _grammar_stamp() -> str:
    """xxh3 of the installed tree-sitter packages' top-level files (names, sizes, mtimes),
    found without importing them: an upgraded or removed grammar changes it. The grammars
    are looked for beside the bindings first (one directory listing each), then on the
    import path."""
    import xxhash

    from ctxtools.repomap.scan.treesitter import GRAMMARS

    h = xxhash.xxh3_64()
    base = _package_dir("tree_sitter")
    site = os.path.dirname(base) if base else None
    for name in ("tree_sitter", *sorted(module for module, _f, _p in GRAMMARS.values())):
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
    import xxhash

    key = xxhash.xxh3_64_hexdigest(os.fsencode(os.path.realpath(root)))
    return Path(store_root) / CACHE_DIR / f"cache-v1-{key}.bin"


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
        try:
            blob = self.path.read_bytes()
        except FileNotFoundError:
            return
        except OSError as exc:
            self.notes.append(f"scan cache unreadable ({exc.strerror or exc}); rebuilding")
            return
        try:
            entries = self._decode(blob)
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
        import marshal

        try:
            blob = self.journal_path.read_bytes()
        except OSError:
            return
        head, sep, body = blob.partition(b"\n")
        try:
            if not sep or head != JOURNAL_MAGIC + (self.base_digest or "").encode():
                raise ValueError("journal of another cache")
            journal = marshal.loads(body)
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
                    self.entries[rel] = kept[rel] = base._replace(size=plain[0], stamp=plain[1])
                    self.restamped.add(rel)
                continue
            entry = CacheEntry.from_plain(plain)
            if entry is not None:
                self.entries[rel] = kept[rel] = entry
        self.journal = kept

    def _decode(self, blob: bytes) -> dict | None:
        import marshal
        import zlib

        import xxhash

        if not blob.startswith(MAGIC):
            raise ValueError("not a ctx-repomap cache of this version")
        end = blob.find(b"\n", len(MAGIC))
        if end < 0:
            raise ValueError("truncated header")
        head = blob[len(MAGIC) : end]
        body = memoryview(blob)[end + 1 :]
        fields = head.split(b" ")
        if len(fields) != 3:
            raise ValueError("bad header")
        fingerprint, digest, root = fields[0].decode(), fields[1].decode(), fields[2]
        if xxhash.xxh3_64_hexdigest(body) != digest:
            raise ValueError("checksum mismatch")
        if os.fsdecode(bytes.fromhex(root.decode())) != self.root:
            raise ValueError("cache of another root")
        if fingerprint != self.fingerprint:
            # The scanners changed: every entry is stale. Not an error, no note.
            return None
        raw = zlib.decompress(body)
        del body
        plain = marshal.loads(raw)
        if not isinstance(plain, dict):
            raise ValueError("bad body")
        self.base_digest = digest
        entries = {}
        for rel, value in plain.items():
            entry = CacheEntry.from_plain(value)
            if entry is not None:  # (another shape: that file is scanned again)
                entries[rel] = entry
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

    # --- saving ------------------------------------------------------------------------

    def save(self) -> None:
        """Write the entries seen in this run (others are files that went away): into the
        journal when few changed, else the whole cache anew."""
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
                self._write_journal(journal)
                return
        self._write_main()

    def _write_journal(self, journal: dict) -> None:
        import marshal

        stamped = self.restamped
        body = marshal.dumps(
            {
                rel: (e[:3] if rel in stamped else e.to_plain()) if e is not None else None
                for rel, e in sorted(journal.items())
            },
            4,
        )
        note = atomic_write(
            self.journal_path, JOURNAL_MAGIC + self.base_digest.encode() + b"\n" + body
        )
        if note:
            self.notes.append(f"scan cache not saved ({note})")

    def _write_main(self) -> None:
        import marshal
        import zlib

        import xxhash

        entries = self.entries
        plain = {rel: entries[rel].to_plain() for rel in sorted(self.seen) if rel in entries}
        body = zlib.compress(marshal.dumps(plain, 4), 1)
        header = b"%s%s %s %s\n" % (
            MAGIC,
            self.fingerprint.encode(),
            xxhash.xxh3_64_hexdigest(body).encode(),
            os.fsencode(self.root).hex().encode(),
        )
        note = atomic_write(self.path, header + body)
        if note:
            self.notes.append(f"scan cache not saved ({note})")
            return
        with contextlib.suppress(OSError):
            self.journal_path.unlink()


# --- the memos: one interface, one record type each ----------------------------------------


@functools.cache
def code_fingerprint() -> str:
    """xxh3 of the whole repomap package's source: new code, new results."""
    return _source_fingerprint("**/*.py")


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


class Ranking(NamedTuple):
    """A graph's plain (unpersonalised) ranking: file RANK, file SCORE, definition scores
    per file (DSCORES), the out-edges it was computed on (OUT) and the import edges."""

    rank: list
    score: list
    dscores: list
    out: list
    import_edges: int


class GraphState(NamedTuple):
    """The graph memo's record: the mapped FILES, their content DIGESTS, each file's PART
    (its imports' part and uses, ``marshal``-ed) and the plain RANKING, or None."""

    files: tuple
    digests: tuple
    parts: list
    ranking: Ranking | None

    def to_plain(self) -> tuple:
        ranking = tuple(self.ranking) if self.ranking is not None else None
        return (self.files, self.digests, self.parts, ranking)

    @classmethod
    def from_plain(cls, value: object) -> GraphState | None:
        if type(value) is not tuple or len(value) != len(cls._fields):
            return None
        files, digests, parts, ranking = value
        if not (type(files) is tuple and type(digests) is tuple and type(parts) is list):
            return None
        # (a ranking of another shape is only a ranking to compute again)
        return cls(files, digests, parts, from_plain(Ranking, ranking))


class FitRecord(NamedTuple):
    """The fit memo's record: how many layout items a fit EXAMINED and its search BOUND,
    the digest of the lines it looked at, the TEXT and TOKENS it chose, its SELECTION of
    items, and the ruler that counted (name, exact)."""

    examined: int
    bound: int
    digest: str
    text: str
    tokens: int
    selection: list
    ruler: str
    exact: bool


class MapRecord(NamedTuple):
    """The result memo's record: a rendered map and what ``--json``'s head and the notes
    say of it."""

    text: str
    tokens: int
    shown_files: int
    shown_symbols: int
    ruler: str
    exact: bool
    notes: tuple


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
