"""The memory cache: chunk boundaries, vectors and TF-IDF statistics kept in the store.

One memo file (``ctxtools.memofile``, the store's one cache format) per method and set
of memory paths, ``<store>/memory/<method>-v1-<key>.bin``, holding plain values:

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
KIND = "memory"  # the memo file's kind (``ctxtools.memofile``)
CHUNKER_VERSION = 6  # bump when chunk boundaries or the words counted change: a miss


def cache_path(store_root: str | os.PathLike, method: str, material: list[str]) -> Path:
    from ctxtools.memofile import key

    name = key(method, str(CHUNKER_VERSION), *material)
    return Path(store_root) / CACHE_DIR / f"{method}-v1-{name}.bin"


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
        from ctxtools.memofile import load

        data, problem = load(self.path, KIND)
        if problem == "missing":
            return
        if problem not in (None, "damaged"):
            self.note = f"memory cache not read ({problem}); ranking without it"
            return
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
        from ctxtools.memofile import save

        return save(
            self.path,
            KIND,
            {
                "files": {k: files[k] for k in sorted(files)},
                "vec": {k: vec[k] for k in sorted(vec)},
                "tf": {k: tf[k] for k in sorted(tf)},
                "stats": stats,
                "sem": {k: sem[k] for k in sorted(sem or {})},
            },
        )
