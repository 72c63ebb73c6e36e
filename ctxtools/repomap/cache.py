"""The scan cache: per-file scan results kept in the store, one file per repository root.

``<store>/repomap/cache-v1-<hash of the root's real path>.bin`` holds, for each relative
path, ``(size, mtime_ns, xxh3 of the content, payload)``. A file whose size and mtime_ns
match is not read at all; one whose stat changed is read and hashed, and a matching hash
(``touch`` without an edit) keeps the old payload. The payload is what scanning produced:
``(language, definitions, references, imports)`` as plain tuples, a skip reason (str) such
as ``"binary"``, or None for a file no scanner took.

The file is ``MAGIC``, a fingerprint of the scanners' own source (so a scanner change
invalidates every entry), an xxh3 of the body, then the body: ``marshal`` of plain tuples,
zlib-compressed. ``marshal`` writes a string shared by many entries once, which keeps the
cache small. Anything unexpected -- a corrupt, truncated, foreign-version or unreadable
cache -- means starting empty, with a note; an unwritable store means no cache, with a note.
Writes are crash-safe: temp file in the same directory, fsync, ``os.replace``. The cache key
never includes the query or focus (they change ranking, not scanning).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

MAGIC = b"ctx-repomap-cache-v1\n"
PAYLOAD_FORMAT = b"payload-2"  # bump when the payload's shape changes
CACHE_DIR = "repomap"

Payload = object  # tuple | str | None, see the module docstring


def scanner_fingerprint() -> str:
    """xxh3 of the scanners' source files: a new scanner means a new cache."""
    import xxhash

    here = Path(__file__).resolve().parent
    h = xxhash.xxh3_64(PAYLOAD_FORMAT)
    for path in sorted(here.glob("scan*.py")):
        h.update(path.name.encode())
        try:
            h.update(path.read_bytes())
        except OSError:
            h.update(b"?")
    return h.hexdigest()


def cache_path(store_root: str | os.PathLike, root: str) -> Path:
    import xxhash

    key = xxhash.xxh3_64_hexdigest(os.fsencode(os.path.realpath(root)))
    return Path(store_root) / CACHE_DIR / f"cache-v1-{key}.bin"


def content_hash(data: bytes) -> int:
    import xxhash

    return xxhash.xxh3_64_intdigest(data)


class ScanCache:
    """Load once, look up per file, save once (only when something changed)."""

    def __init__(self, path: Path, root: str, fingerprint: str):
        self.path = path
        self.root = os.path.realpath(root)
        self.fingerprint = fingerprint
        self.entries: dict[str, tuple] = {}
        self.seen: set[str] = set()
        self.dirty = False
        self.notes: list[str] = []

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
        return entries

    # --- lookups -----------------------------------------------------------------------

    def get(self, rel: str, size: int, mtime_ns: int) -> tuple[bool, Payload]:
        """(hit, payload) when the stat matches exactly; no read needed."""
        entry = self.entries.get(rel)
        if entry is not None and entry[0] == size and entry[1] == mtime_ns:
            self.seen.add(rel)
            return True, entry[3]
        return False, None

    def get_by_hash(self, rel: str, size: int, mtime_ns: int, digest: int) -> tuple[bool, Payload]:
        """(hit, payload) when the content is unchanged despite a new stat (re-stamped)."""
        entry = self.entries.get(rel)
        if entry is not None and entry[0] == size and entry[2] == digest:
            self.entries[rel] = (size, mtime_ns, digest, entry[3])
            self.seen.add(rel)
            self.dirty = True
            return True, entry[3]
        return False, None

    def put(self, rel: str, size: int, mtime_ns: int, digest: int, payload: Payload) -> None:
        self.entries[rel] = (size, mtime_ns, digest, payload)
        self.seen.add(rel)
        self.dirty = True

    # --- saving ------------------------------------------------------------------------

    def save(self) -> None:
        """Write the entries seen in this run (others are files that went away)."""
        stale = len(self.entries) != len(self.seen)
        if not (self.dirty or stale):
            return
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


def atomic_write(path: Path, data: bytes) -> str | None:
    """Write DATA to PATH crash-safely (temp file, fsync, rename); a reason on failure."""
    import tempfile

    directory = path.parent
    tmp = None
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".cache-", suffix=".tmp", dir=directory)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        return f"{exc.strerror or exc}: {exc.filename or directory}"
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return None


# --- the result memo ---------------------------------------------------------------------

RESULT_MAGIC = b"ctx-repomap-result-v2\n"
RESULT_KEEP = 8  # most recent results kept per repository


def code_fingerprint() -> str:
    """xxh3 of the whole repomap package's source: new code, new results."""
    import xxhash

    here = Path(__file__).resolve().parent
    h = xxhash.xxh3_64(PAYLOAD_FORMAT)
    for path in sorted(here.glob("*.py")):
        h.update(path.name.encode())
        try:
            h.update(path.read_bytes())
        except OSError:
            h.update(b"?")
    return h.hexdigest()


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

        return xxhash.xxh3_128_hexdigest(marshal.dumps(material, 4))

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
