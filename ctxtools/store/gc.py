"""Garbage collection (``ctx-stash --gc``): evict handles over budget, then sweep.

Under the store's exclusive lock: the cards are ranked by an eviction strategy
(``ctxtools.store.evict``) against a ``GcBudget``; the victims' cards go; then every blob
and ``.idx`` that no remaining card (nor a damaged card that still names a valid sha256)
refers to, and every temporary file whose writer is gone (``disk.tmp_is_dead``), is
removed; last the access log is compacted to the handles kept. A dry run removes nothing
and reports the same figures.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ctxtools.errors import StoreError
from ctxtools.fsutil import TMP_PREFIX
from ctxtools.store import disk
from ctxtools.store.access import compact_access_locked

if TYPE_CHECKING:
    from ctxtools.store.handles import HandleStore

GC_MAX_ENTRIES = 100  # the budget of ctx-stash --gc given none


def gc(
    store: HandleStore,
    *,
    max_bytes: int | None,
    max_entries: int | None,
    strategy: str,
    dry_run: bool,
    now: float | None,
) -> dict:
    """Evict handles over budget, then remove unreferenced blobs and dead temp files.

    Returns {"evicted": [ids], "blobs_removed": n, "bytes_freed": n, "temp_removed": n,
    "kept": n, "kept_bytes": n, "damaged": [{"id", "error"}]}.
    """
    from ctxtools.store import evict

    store.check_root()
    if not store.root.is_dir():
        return _report([], [], (0, 0, 0), [])
    with disk.lock(store.root, exclusive=True):
        damaged: list[tuple[str, str, str | None]] = []
        entries = store.entries(now=now, damaged=damaged)
        budget = evict.GcBudget(max_bytes=max_bytes, max_entries=max_entries)
        victims = evict.evict(strategy, entries, budget, now=now)
        vset = set(victims)
        kept = [e for e in entries if e["id"] not in vset]
        referenced = {e["card"]["sha256"] for e in kept}
        # A damaged card is reported, not removed; its blob stays while it is there.
        referenced.update(sha for _id, _msg, sha in damaged if sha)
        if not dry_run:
            for vid in victims:
                s, n = vid.split("/", 1)
                with contextlib.suppress(FileNotFoundError):
                    store.card_path(s, n).unlink()
        swept = _sweep(store, referenced, dry_run)
        if not dry_run and store.access_log.exists():
            keep = {tuple(e["id"].split("/", 1)) for e in kept}
            with contextlib.suppress(OSError, StoreError):
                compact_access_locked(store, keep, now)
    return _report(victims, kept, swept, damaged)


def _report(
    victims: list[str],
    kept: list[dict],
    swept: tuple[int, int, int],
    damaged: list[tuple[str, str, str | None]],
) -> dict:
    blobs_removed, freed, temp_removed = swept
    return {
        "evicted": victims,
        "blobs_removed": blobs_removed,
        "bytes_freed": freed,
        "temp_removed": temp_removed,
        "kept": len(kept),
        "kept_bytes": sum(e["size_bytes"] for e in kept),
        "damaged": [{"id": i, "error": msg} for i, msg, _sha in damaged],
    }


def _sweep(store: HandleStore, referenced: set[str], dry_run: bool) -> tuple[int, int, int]:
    """Remove (unless DRY_RUN) the dead temp files and the blobs and indexes that no
    sha256 in REFERENCED names: (blobs removed, bytes freed, temp files removed)."""
    blobs_removed = freed = temp_removed = 0
    now_t = time.time()
    for path in _walk_files(store):
        fname = path.name
        if fname.startswith(TMP_PREFIX):
            if disk.tmp_is_dead(fname, path, now_t):
                temp_removed += 1
                freed += _remove(path, dry_run)
            continue
        if path.parent.parent != store.blobs_dir:
            continue
        sha = fname[:-4] if fname.endswith(".idx") else fname
        if sha in referenced:
            continue
        if not fname.endswith(".idx"):
            blobs_removed += 1
        freed += _remove(path, dry_run)
    return blobs_removed, freed, temp_removed


def _remove(path: Path, dry_run: bool) -> int:
    """Remove PATH (unless DRY_RUN); the bytes that frees (0 when it cannot be seen)."""
    size = 0
    with contextlib.suppress(OSError):
        size = path.stat().st_size
        if not dry_run:
            path.unlink()
    return size


def _walk_files(store: HandleStore) -> Iterator[Path]:
    """The root's own files, then every file under blobs/ and sessions/."""
    with contextlib.suppress(OSError):
        for entry in sorted(os.scandir(store.root), key=lambda e: e.name):
            if entry.is_file(follow_symlinks=False):
                yield Path(entry.path)
    for top in (store.blobs_dir, store.sessions_dir):
        for dirpath, dirs, files in os.walk(top):
            dirs.sort()
            for f in sorted(files):
                yield Path(dirpath) / f
