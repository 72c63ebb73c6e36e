"""Garbage collection (``ctx-stash --gc``): evict handles over budget, then sweep.

Under the store's exclusive lock: the cards are ranked by an eviction strategy
(``ctxtools.store.evict``) against a ``GcBudget``; the victims' cards go; then every blob
and ``.idx`` that no remaining card refers to, and every temporary file whose writer is
gone (``disk.tmp_is_dead``), is removed -- the store's own files only: a blob is
``blobs/ab/<sha256>`` (and its ``.idx``), a temporary file ``.tmp-<pid>-<12 hex digits>``,
and a file of any other name is left; last the access log is compacted to the handles
kept. A dry run removes nothing and reports the same figures, counting the same files.

A damaged card (one that cannot be read back) is reported, never removed, and while there is
one no unreferenced blob is removed either: which blob a damaged card points at cannot be
known for sure (its sha256 may be the damage), and a blob removed is gone for good, whereas
the card may be repaired. Those blobs are counted as ``unreferenced_kept``; the next gc
after the card is repaired or removed (``ctx-stash --rm``) sweeps them. A session directory
that is a symbolic link counts as damaged (``StoreRoot.records``): its cards are not read.

Nothing is looked at or removed through a symbolic link: every directory is reached from
the root one name at a time without following one (``disk.open_dir``), and a file is
removed by its name in that directory -- a link in the store is left alone, whatever it
points at.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Iterator

from ctxtools.errors import StoreError
from ctxtools.fsutil import TMP_NAME_RE
from ctxtools.store import access, disk
from ctxtools.store.access import compact_access_locked
from ctxtools.store.refs import NAME_RE
from ctxtools.store.root import StoreRoot

GC_MAX_ENTRIES = 100  # the budget of ctx-stash --gc given none


def gc(
    store: StoreRoot,
    *,
    max_bytes: int | None,
    max_entries: int | None,
    strategy: str,
    dry_run: bool,
    now: float | None,
) -> dict:
    """Evict handles over budget, then remove unreferenced blobs and dead temp files.

    Returns {"evicted": [ids], "blobs_removed": n, "bytes_freed": n, "temp_removed": n,
    "kept": n, "kept_bytes": n, "damaged": [{"id", "error"}], "unreferenced_kept": n (blobs
    no card refers to, kept because a card is damaged)}.
    """
    from ctxtools.store import evict

    store.check_root()
    if not store.root.is_dir():
        return _report([], [], (0, 0, 0, 0), [])
    # A dry run writes nothing, so it needs no write access: not even to the lock file.
    held = disk.look_lock(store.root) if dry_run else disk.lock(store.root, exclusive=True)
    with held:
        damaged: list[tuple[str, str, str | None]] = []
        entries = access.entries(store, None, now, damaged)
        budget = evict.GcBudget(max_bytes=max_bytes, max_entries=max_entries)
        victims = evict.evict(strategy, entries, budget, now=now)
        vset = set(victims)
        kept = [e for e in entries if e["id"] not in vset]
        referenced = {e["card"]["sha256"] for e in kept}
        if not dry_run:
            for vid in victims:
                s, n = vid.split("/", 1)
                try:
                    store.unlink_card(s, n)  # (through no link)
                except OSError as exc:
                    raise disk.store_error(store.root, exc, "remove a card") from exc
        # A damaged card is reported, not removed; while one is there, no blob goes.
        swept = _sweep(store, referenced, dry_run, keep_blobs=bool(damaged))
        if not dry_run and store.access_log.exists():
            keep = {tuple(e["id"].split("/", 1)) for e in kept}
            with contextlib.suppress(OSError, StoreError):
                compact_access_locked(store, keep, now)
    return _report(victims, kept, swept, damaged)


def _report(
    victims: list[str],
    kept: list[dict],
    swept: tuple[int, int, int, int],
    damaged: list[tuple[str, str, str | None]],
) -> dict:
    blobs_removed, freed, temp_removed, blobs_held = swept
    return {
        "evicted": victims,
        "blobs_removed": blobs_removed,
        "bytes_freed": freed,
        "temp_removed": temp_removed,
        "kept": len(kept),
        "kept_bytes": sum(e["size_bytes"] for e in kept),
        "damaged": [{"id": i, "error": msg} for i, msg, _sha in damaged],
        "unreferenced_kept": blobs_held,
    }


def _sweep(
    store: StoreRoot, referenced: set[str], dry_run: bool, *, keep_blobs: bool = False
) -> tuple[int, int, int, int]:
    """Remove (unless DRY_RUN) the dead temp files and the blobs and indexes that no
    sha256 in REFERENCED names, those only counted with KEEP_BLOBS (a card is damaged):
    (blobs removed, bytes freed, temp files removed, unreferenced blobs kept). Only the
    store's own files are looked at (``_store_files``): anything else is left, uncounted."""
    blobs_removed = freed = temp_removed = blobs_held = 0
    now_t = time.time()
    for fd, name, sha in _store_files(store):
        if sha is None:
            if disk.tmp_is_dead(name, None, now_t, dir_fd=fd):
                temp_removed += 1
                freed += _remove(fd, name, dry_run)
            continue
        if sha in referenced:
            continue
        blob = not name.endswith(".idx")
        if keep_blobs:
            blobs_held += blob
            continue
        blobs_removed += blob
        freed += _remove(fd, name, dry_run)
    return blobs_removed, freed, temp_removed, blobs_held


def _remove(fd: int, name: str, dry_run: bool) -> int:
    """Remove the file NAME of the directory FD (unless DRY_RUN); the bytes that frees (0
    when it cannot be seen)."""
    size = 0
    with contextlib.suppress(OSError):
        size = os.stat(name, dir_fd=fd, follow_symlinks=False).st_size
        if not dry_run:
            os.unlink(name, dir_fd=fd)
    return size


_SHARD_RE = re.compile(r"[0-9a-f]{2}")
_BLOB_RE = re.compile(r"([0-9a-f]{64})(\.idx)?")


def _store_files(store: StoreRoot) -> Iterator[tuple[int, str, str | None]]:
    """The files gc may remove, as (the descriptor of their directory, name, the sha256 of
    a blob or an index; None for a temporary file): ``blobs/ab/<sha256 starting ab>`` and
    its ``.idx``, and the toolkit's temporary files (``.tmp-<pid>-<12 hex>``) in the
    directories it writes them to -- the root, ``blobs/``, ``blobs/ab/``, ``sessions/`` and
    ``sessions/<session>/``. Nothing else, at any depth: a file of another name is somebody
    else's, and a directory that is a symbolic link is not the store's (``disk.open_dir``
    reaches none through one). Each descriptor is open while its files are yielded."""
    dirs: list[tuple[str, ...]] = [(), ("blobs",)]
    dirs += [("blobs", n) for n in _subdirs(store, ("blobs",)) if _SHARD_RE.fullmatch(n)]
    dirs.append(("sessions",))
    dirs += [("sessions", n) for n in _subdirs(store, ("sessions",)) if NAME_RE.fullmatch(n)]
    for rel in dirs:
        fd = _open(store, rel)
        if fd is None:
            continue
        try:
            shard = len(rel) == 2 and rel[0] == "blobs"
            for name in _files_in(fd):
                if TMP_NAME_RE.fullmatch(name):
                    yield fd, name, None
                    continue
                m = _BLOB_RE.fullmatch(name) if shard else None
                if m and m.group(1).startswith(rel[1]):
                    yield fd, name, m.group(1)
        finally:
            os.close(fd)


def _open(store: StoreRoot, rel: tuple[str, ...]) -> int | None:
    """The directory REL of the store, open; None when it is missing or not the store's."""
    try:
        return disk.open_dir(store.root, rel)
    except StoreError:  # a link (or a file) where a directory of the store belongs
        return None


def _subdirs(store: StoreRoot, rel: tuple[str, ...]) -> list[str]:
    """The names of the real directories (no symlinks) in the store's directory REL."""
    fd = _open(store, rel)
    if fd is None:
        return []
    try:
        with os.scandir(fd) as it:
            return sorted(e.name for e in it if e.is_dir(follow_symlinks=False))
    except OSError:
        return []
    finally:
        os.close(fd)


def _files_in(fd: int) -> list[str]:
    """The names of the regular files (no symlinks) in the directory FD, sorted."""
    try:
        with os.scandir(fd) as it:
            return sorted(e.name for e in it if e.is_file(follow_symlinks=False))
    except OSError:
        return []
