"""The scan cache: per-file scan results kept in the store, one file per repository root.

``<store>/repomap/cache-v1-<hash of the root's real path>.bin`` holds, for each relative
path, ``(size, (mtime_ns, ctime_ns), xxh3 of the content, payload)``. A file whose size and
stamp match is not read at all; one whose stat changed is read and hashed, and a matching
hash (``touch`` without an edit) keeps the old payload. The ctime is in the stamp because a
change of permissions changes only it: a file made unreadable since the last run must be
found unreadable, not served from the cache. The payload is what scanning produced:
``(language, definitions, references, imports)`` as plain tuples, a skip reason (str) such
as ``"binary"``, or None for a file no scanner took.

The file is ``MAGIC``, a fingerprint of the scanners' own source (so a scanner change
invalidates every entry), an xxh3 of the body, then the body: ``marshal`` of plain tuples,
zlib-compressed. ``marshal`` writes a string shared by many entries once, which keeps the
cache small. Anything unexpected -- a corrupt, truncated, foreign-version or unreadable
cache -- means starting empty, with a note; an unwritable store means no cache, with a note.
Writes are crash-safe: temp file in the same directory, fsync, ``os.replace``. The cache key
never includes the query or focus (they change ranking, not scanning).

Beside it, three memos, each a checksummed ``marshal`` file that is simply a miss when
missing, damaged or of another shape (``KeyedMemo``; written without fsync):

* ``graph-v1-*``: the file graph of the last run, file by file (each file's resolved
  imports and its uses, under its content hash), and its plain (unpersonalised) ranking.
  After an edit only the edited files, and the files using a name whose definitions
  changed, are linked again; when no edge changed, the ranking is reused. Every part is
  what a cold build computes, so the map is the same bytes as a cold run's.
* ``fit-v1-*``: per budget, ruler and query/focus, how the last layout was fitted: a
  digest of the lines ``fit`` looked at and the text it chose. The same lines fit the same
  way, so an edit that leaves the top of the map alone needs no tokenizer.
* ``result-v1-*`` (``ResultMemo``): whole maps, keyed by every file's stamp and the options.
"""

from __future__ import annotations

import contextlib
import functools
import os
from pathlib import Path

from ctxtools.fsutil import atomic_write

MAGIC = b"ctx-repomap-cache-v1\n"
PAYLOAD_FORMAT = b"payload-3"  # bump when the payload's shape changes
JOURNAL_MAGIC = b"ctx-repomap-journal-v1 "
JOURNAL_MIN = 64  # a journal may always hold this many entries ...
JOURNAL_SHARE = 0.05  # ... or this share of all entries, before the cache is rewritten
CACHE_DIR = "repomap"

Payload = object  # tuple | str | None, see the module docstring


def _source_fingerprint(pattern: str) -> str:
    """xxh3 of this package's source files matching PATTERN (names and bytes)."""
    import xxhash

    here = Path(__file__).resolve().parent
    h = xxhash.xxh3_64(PAYLOAD_FORMAT)
    for path in sorted(here.glob(pattern)):
        h.update(path.relative_to(here).as_posix().encode())
        try:
            h.update(path.read_bytes())
        except OSError:
            h.update(b"?")
    return h.hexdigest()


def scanner_fingerprint() -> str:
    """xxh3 of the scanners' source files: a new scanner means a new cache."""
    return _source_fingerprint("scan/*.py")


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
    and the journal removed. A journal that does not match or cannot be read is ignored
    (its files are scanned again).
    """

    def __init__(self, path: Path, root: str, fingerprint: str):
        self.path = path
        self.journal_path = path.with_suffix(".journal")
        self.root = os.path.realpath(root)
        self.fingerprint = fingerprint
        self.entries: dict[str, tuple] = {}
        self.seen: set[str] = set()
        self.dirty = False
        self.notes: list[str] = []
        self.base_digest: str | None = None  # checksum of the main file's body, if usable
        self.journal: dict[str, tuple | None] = {}  # what the journal on disk holds
        self.changed: dict[str, tuple] = {}  # entries changed in this run
        self.replaced: dict[str, tuple] = {}  # the entries they replaced (for the graph memo)

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
        for rel, entry in journal.items():
            if entry is None:
                self.entries.pop(rel, None)
            elif isinstance(entry, tuple) and len(entry) == 4:
                self.entries[rel] = entry
        self.journal = journal

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
        entries = marshal.loads(raw)
        if not isinstance(entries, dict):
            raise ValueError("bad body")
        self.base_digest = digest
        return entries

    # --- lookups -----------------------------------------------------------------------

    def get(self, rel: str, size: int, stamp: tuple) -> tuple[bool, Payload]:
        """(hit, payload) when the stat matches exactly; no read needed."""
        entry = self.entries.get(rel)
        if entry is not None and entry[0] == size and entry[1] == stamp:
            self.seen.add(rel)
            return True, entry[3]
        return False, None

    def get_by_hash(self, rel: str, size: int, stamp: tuple, digest: int) -> tuple[bool, Payload]:
        """(hit, payload) when the content is unchanged despite a new stat (re-stamped)."""
        entry = self.entries.get(rel)
        if entry is not None and entry[0] == size and entry[2] == digest:
            self.put(rel, size, stamp, digest, entry[3])
            return True, entry[3]
        return False, None

    def put(self, rel: str, size: int, stamp: tuple, digest: int, payload: Payload) -> None:
        entry = (size, stamp, digest, payload)
        old = self.entries.get(rel)
        if old is not None and rel not in self.replaced:
            self.replaced[rel] = old
        self.entries[rel] = entry
        self.changed[rel] = entry
        self.seen.add(rel)
        self.dirty = True

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
            if len(journal) <= max(JOURNAL_MIN, JOURNAL_SHARE * len(self.entries)):
                self._write_journal(journal)
                return
        self._write_main()

    def _write_journal(self, journal: dict) -> None:
        import marshal

        body = marshal.dumps({rel: journal[rel] for rel in sorted(journal)}, 4)
        note = atomic_write(
            self.journal_path, JOURNAL_MAGIC + self.base_digest.encode() + b"\n" + body
        )
        if note:
            self.notes.append(f"scan cache not saved ({note})")

    def _write_main(self) -> None:
        import marshal
        import zlib

        import xxhash

        entries = {rel: self.entries[rel] for rel in sorted(self.seen) if rel in self.entries}
        body = zlib.compress(marshal.dumps(entries, 4), 1)
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


# --- the result memo ---------------------------------------------------------------------

RESULT_MAGIC = b"ctx-repomap-result-v2\n"
RESULT_KEEP = 8  # most recent results kept per repository


@functools.cache
def code_fingerprint() -> str:
    """xxh3 of the whole repomap package's source: new code, new results."""
    return _source_fingerprint("**/*.py")


class ResultMemo:
    """The last few rendered maps of one repository, keyed by everything that shapes them
    (the files' stamps, the options, the ruler asked for, the code). A hit skips ranking,
    rendering and loading the ruler; anything unexpected is simply a miss."""

    def __init__(self, store_root: str | os.PathLike, root: str):
        import xxhash

        key = xxhash.xxh3_64_hexdigest(os.fsencode(os.path.realpath(root)))
        self.path = Path(store_root) / CACHE_DIR / f"result-v1-{key}.bin"
        self.results: dict[str, tuple] = {}

    @staticmethod
    def key(material: object) -> str:
        import marshal

        import xxhash

        # Version 2 writes values only; 3 and later also how objects are shared (a string
        # used twice, an interned one), which would make equal keys differ.
        return xxhash.xxh3_128_hexdigest(marshal.dumps(material, 2))

    def load(self) -> None:
        import marshal

        try:
            blob = self.path.read_bytes()
            if not blob.startswith(RESULT_MAGIC):
                return
            results = marshal.loads(blob[len(RESULT_MAGIC) :])
        except Exception:  # missing, unreadable or damaged: a miss
            return
        if isinstance(results, dict):
            self.results = results

    def get(self, key: str) -> tuple | None:
        hit = self.results.get(key)
        if isinstance(hit, tuple) and len(hit) == 7:
            return hit
        return None

    def put(self, key: str, result: tuple) -> str | None:
        import marshal

        self.results.pop(key, None)
        self.results[key] = result
        while len(self.results) > RESULT_KEEP:
            del self.results[next(iter(self.results))]
        return atomic_write(self.path, RESULT_MAGIC + marshal.dumps(self.results, 4))


# --- ranking and fitting memos --------------------------------------------------------------


class KeyedMemo:
    """A few results kept in one store file, most recent last, each under a key; anything
    missing, damaged (the body is checksummed) or of another shape is simply a miss. Used
    for the graph memo (``graph-v1-*``) and the fit memo (``fit-v1-*``)."""

    def __init__(self, store_root: str | os.PathLike, root: str, kind: str, keep: int):
        import xxhash

        key = xxhash.xxh3_64_hexdigest(os.fsencode(os.path.realpath(root)))
        self.path = Path(store_root) / CACHE_DIR / f"{kind}-v1-{key}.bin"
        self.magic = b"ctx-repomap-" + kind.encode() + b"-v1\n"
        self.keep = keep
        self.results: dict[str, object] | None = None

    def load(self) -> dict[str, object]:
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

    def get(self, key: str) -> object:
        return self.load().get(key)

    def put(self, key: str, result: object) -> str | None:
        import marshal

        results = self.load()
        results.pop(key, None)
        results[key] = result
        while len(results) > self.keep:
            del results[next(iter(results))]
        import xxhash

        try:
            body = marshal.dumps(results, 4)
        except ValueError as exc:  # an unmarshallable value: keep nothing rather than crash
            return str(exc)
        digest = xxhash.xxh3_64_hexdigest(body).encode()
        # No fsync: the checksum turns a torn file into a miss, and a memo is only a memo.
        return atomic_write(self.path, self.magic + digest + b"\n" + body, durable=False)
