"""The memory cache: chunk boundaries, vectors and TF-IDF statistics kept in the store.

One file per method and set of memory paths, ``<store>/memory/<method>-v1-<key>.bin``:
a magic line, an xxh64 of the body, then the body, ``marshal`` of plain values:

- ``files``: file digest -> its chunks as (heading, start, end, chunk digest), so an
  unchanged file is not even chunked again;
- ``vec``: chunk digest -> its vector (float32 bytes), for hashing and ``--embed-cmd``;
- ``tf``: chunk digest -> its stemmed term counts, for TF-IDF;
- ``stats``: (corpus fingerprint, document frequencies, norms) for TF-IDF;
- ``sem``: "model name:chunk digest" -> the chunk's semantic vector (float32 bytes), for
  the semantic part of a TF-IDF ranking (``ctxtools.retrieval.semantic``).

Everything is keyed by content, so a changed file re-chunks and re-embeds only the
chunks whose text changed. A write keeps only what the run used (the file stays the size
of the corpus). A damaged file is a miss; a read-only store means no cache, and the
ranking still works (said in the notes).
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_DIR = "memory"
MAGIC = b"CTXMEM1\n"
CHUNKER_VERSION = 6  # bump when chunk boundaries or the words counted change: a miss


def cache_path(store_root: str | os.PathLike, method: str, material: list[str]) -> Path:
    import xxhash

    key = xxhash.xxh3_64_hexdigest(
        "\0".join([method, str(CHUNKER_VERSION), *material]).encode("utf-8", "surrogateescape")
    )
    return Path(store_root) / CACHE_DIR / f"{method}-v1-{key}.bin"


class MemoryCache:
    """The cache file at PATH: read once, written once at the end when it changed."""

    def __init__(self, path: Path | None):
        self.path = path
        self.files: dict[str, list[tuple]] = {}
        self.vec: dict[str, bytes] = {}
        self.tf: dict[str, dict[str, int]] = {}
        self.stats: tuple | None = None
        self.sem: dict[str, bytes] = {}
        self.loaded = False
        self.note: str | None = None

    def load(self) -> None:
        if self.path is None:
            return
        import marshal

        import xxhash

        try:
            blob = self.path.read_bytes()
        except FileNotFoundError:
            return
        except OSError as exc:
            self.note = f"memory cache not read ({exc.strerror or exc}); ranking without it"
            return
        body = blob[len(MAGIC) + 8 :]
        ok = blob.startswith(MAGIC) and blob[len(MAGIC) : len(MAGIC) + 8] == (
            xxhash.xxh64_digest(body)
        )
        data = None
        if ok:
            try:
                data = marshal.loads(body)
            except Exception:  # marshal raises several kinds of error on bad bytes
                data = None
        if not isinstance(data, dict):
            self.note = "memory cache damaged; rebuilt"
            return
        self.files = data.get("files") or {}
        self.vec = data.get("vec") or {}
        self.tf = data.get("tf") or {}
        self.stats = data.get("stats")
        self.sem = data.get("sem") or {}
        self.loaded = True

    def save(
        self, files: dict, vec: dict, tf: dict, stats: tuple | None, sem: dict | None = None
    ) -> str | None:
        """Write what the run used; a reason when the store cannot be written."""
        if self.path is None:
            return None
        import marshal

        import xxhash

        from ctxtools.fsutil import atomic_write

        body = marshal.dumps(
            {
                "files": {k: files[k] for k in sorted(files)},
                "vec": {k: vec[k] for k in sorted(vec)},
                "tf": {k: tf[k] for k in sorted(tf)},
                "stats": stats,
                "sem": {k: sem[k] for k in sorted(sem or {})},
            },
            4,
        )
        return atomic_write(self.path, MAGIC + xxhash.xxh64_digest(body) + body, durable=False)
