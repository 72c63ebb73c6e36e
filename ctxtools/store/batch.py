"""The batched write: many payloads stored at once (``HandleStore.put_many``).

Cheaper than one put each, in four steps:

1. ``prepare`` -- validate every item (nothing is written when one is bad), index it and
   make its card record; a payload given twice is written once.
2. ``plan`` -- group the files to write by directory (files made in one directory are made
   one after another by the kernel anyway), in tasks of at most ``TASK_FILES``, biggest
   first.
3. ``_Temps.write`` -- the blobs (fdatasync'ed), their ``.idx`` (from ``INDEX_MIN_BYTES``
   up; derived and self-checking, so not synced) and the cards go to temporary files, by
   up to ``BATCH_WORKERS`` threads (a file's creation is what costs; it overlaps across
   directories).
4. ``_place_blobs`` then ``_place_cards`` -- under one hold of the shared lock, the blobs
   are renamed into place and each of their directories fsync'ed once, and only then the
   cards (and their directories).

Every directory written to is made (or checked) first, before any file: a session or a
blob directory that is a symbolic link is refused (``StoreRoot.make_dir``) and nothing is
written. A killed batch therefore leaves at most temporary files (``gc`` removes them) and
cards whose blobs are complete and durable; a failed one (StoreError) removes its temporary
files, and the blobs it placed where there were none that no card refers to
(``StoreRoot.drop_unreferenced``), and may have put some cards in place, each of them whole.
"""

from __future__ import annotations

import contextlib
import io
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from ctxtools import fsutil
from ctxtools.errors import StoreError
from ctxtools.store import disk
from ctxtools.store.lineindex import INDEX_MIN_BYTES, Indexer, index_stream
from ctxtools.store.refs import (
    DEFAULT_SESSION,
    card_bytes,
    make_record,
    public_card,
    validate_name,
    validate_session,
    validate_type,
)
from ctxtools.store.root import StoreRoot
from ctxtools.store.sniff import detect_type_head, settle_type

TASK_FILES = 64  # files a put_many thread writes in one go
BATCH_WORKERS = 8  # threads writing a put_many batch (creating files overlaps per directory)
PUT_KWARGS = frozenset({"name", "session", "type", "exit_status"})


class _Item(NamedTuple):
    """One prepared payload: its index, its session and its card record."""

    ix: Indexer
    session: str
    record: dict


class _BlobJob(NamedTuple):
    sha: str
    data: bytes
    ix: Indexer


class _CardJob(NamedTuple):
    k: int  # the item's position in the batch
    data: bytes


def put_many(store: StoreRoot, items: Iterable[tuple[bytes, dict]]) -> list[dict]:
    """Store ITEMS (``(data, kwargs)``) in one batch; their public cards, in order."""
    prepared, blobs = prepare(items, time.time())
    if not prepared:
        return []
    order = plan(store, prepared, blobs)
    for directory in sorted({d for d, _jobs in order}):  # (none of them a link)
        store.make_dir(*directory.relative_to(store.root).parts)
    with fsutil.temp_guard():  # (the writing threads take no signal: this one does)
        _write_batch(store, prepared, order)
    return [public_card(item.record) for item in prepared]


def _write_batch(store: StoreRoot, prepared: list, order: list) -> None:
    temps = _Temps()
    placed: list[str] = []  # the blobs this batch put where there were none
    try:
        try:
            temps.run(order, threads=len(prepared) > 2)
        except OSError as exc:
            raise disk.store_error(store.root, exc, "write") from exc
        try:
            with disk.lock(store.root):
                _place_blobs(store, temps.blobs, placed)
                # Every blob is durable and in place: now the cards may appear.
                _place_cards(store, prepared, temps.cards)
        except StoreError:
            store.drop_unreferenced(placed)  # (those the cards placed refer to stay)
            raise
    except BaseException:
        temps.remove()
        raise


def prepare(
    items: Iterable[tuple[bytes, dict]], now: float
) -> tuple[list[_Item], dict[str, _BlobJob]]:
    """Every item validated, indexed and given its record; the distinct payloads by sha256.
    UsageError (or TypeError for an unknown keyword) before anything is written."""
    prepared: list[_Item] = []
    blobs: dict[str, _BlobJob] = {}
    for data, kwargs in items:
        unknown = set(kwargs) - PUT_KWARGS
        if unknown:
            raise TypeError(f"put_many: unexpected argument(s) {sorted(unknown)}")
        session = validate_session(kwargs.get("session", DEFAULT_SESSION))
        name = kwargs.get("name")
        if name is not None:
            validate_name(name)
        validate_type(kwargs.get("type"))
        data = bytes(data)
        ix = index_stream(io.BytesIO(data), sha256=True)
        detected = detect_type_head(bytes(ix.head), ix.size, io.BytesIO(data))
        detected = settle_type(kwargs.get("type"), detected, ix.lines)
        record = make_record(ix, detected, name, session, kwargs.get("exit_status"), now)
        prepared.append(_Item(ix, session, record))
        blobs.setdefault(ix.sha256, _BlobJob(ix.sha256, data, ix))
    return prepared, blobs


def plan(
    store: StoreRoot, prepared: list[_Item], blobs: dict[str, _BlobJob]
) -> list[tuple[Path, list[_BlobJob | _CardJob]]]:
    """The temp files to write as (directory, jobs) tasks: one directory's files together, a
    directory with many files split in tasks of TASK_FILES (part of a creation, and the
    fsyncs, still overlap within one directory), the biggest tasks first."""
    tasks: dict[Path, list[_BlobJob | _CardJob]] = {}
    for job in blobs.values():
        tasks.setdefault(store.blob_path(job.sha).parent, []).append(job)
    for k, item in enumerate(prepared):
        path = store.card_path(item.session, item.record["name"])
        tasks.setdefault(path.parent, []).append(_CardJob(k, card_bytes(item.record)))
    return sorted(
        (
            (d, jobs[at : at + TASK_FILES])
            for d, jobs in tasks.items()
            for at in range(0, len(jobs), TASK_FILES)
        ),
        key=lambda task: (-len(task[1]), str(task[0])),
    )


class _Temps:
    """The temporary files of a batch: written by ``run``, renamed by the caller, and
    removed by ``remove`` after a failure (those already renamed are gone from there)."""

    def __init__(self) -> None:
        self.made: list[str] = []  # every temp file made
        self.blobs: dict[str, tuple[str, str | None]] = {}  # sha -> (blob temp, index temp)
        self.cards: dict[int, str] = {}  # item position -> card temp

    def run(self, order: list[tuple[Path, list]], *, threads: bool) -> None:
        """Write every task of ORDER, on several threads when THREADS and there are
        several tasks. Raises OSError."""
        if len(order) == 1 or not threads:
            for directory, jobs in order:
                self.write(directory, jobs)
            return
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(BATCH_WORKERS, len(order))) as pool:
            futures = [pool.submit(self.write, d, jobs) for d, jobs in order]
            try:
                for f in futures:
                    f.result()
            finally:
                for f in futures:
                    f.cancel()  # after a failure, the tasks not yet started

    def write(self, directory: Path, jobs: list[_BlobJob | _CardJob]) -> None:
        """One task: the temp files of JOBS in DIRECTORY (made before: ``put_many``)."""
        for job in jobs:
            if isinstance(job, _BlobJob):
                tmp = self._temp(directory, job.data, durable=True)
                itmp = None
                if job.ix.size >= INDEX_MIN_BYTES:  # derived, checks itself: no fsync
                    itmp = self._temp(directory, job.ix.index().to_bytes(), durable=False)
                self.blobs[job.sha] = (tmp, itmp)
            else:
                self.cards[job.k] = self._temp(directory, job.data, durable=True)

    def _temp(self, directory: Path, data: bytes, *, durable: bool) -> str:
        tmp = fsutil.write_temp(directory, data, durable=durable)
        self.made.append(tmp)
        return tmp

    def remove(self) -> None:
        for tmp in self.made:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _place_blobs(
    store: StoreRoot, blob_tmp: dict[str, tuple[str, str | None]], placed: list[str]
) -> None:
    """Rename the blobs (and their indexes) into place; fsync each directory once. The
    sha256 of each blob that was not there before goes in PLACED."""
    try:
        blob_dirs = set()
        for sha, (tmp, itmp) in blob_tmp.items():
            if not os.path.lexists(store.blob_path(sha)):
                placed.append(sha)
            if itmp is not None:
                os.replace(itmp, store.idx_path(sha))
            os.replace(tmp, store.blob_path(sha))
            blob_dirs.add(os.path.dirname(tmp))
        for d in sorted(blob_dirs):
            fsutil.fsync_dir(d)
        fsutil.fsync_dir(store.blobs_dir)  # new blobs/ab directories
    except OSError as exc:
        raise disk.store_error(store.root, exc, "write") from exc


def _place_cards(store: StoreRoot, prepared: list[_Item], card_tmp: dict[int, str]) -> None:
    """Rename the cards into place, in batch order (a later one of a name wins)."""
    try:
        card_dirs = set()
        for k, item in enumerate(prepared):
            path = store.card_path(item.session, item.record["name"])
            os.replace(card_tmp[k], path)
            card_dirs.add(path.parent)
        for d in sorted(card_dirs):
            fsutil.fsync_dir(d)
        fsutil.fsync_dir(store.sessions_dir)
    except OSError as exc:
        raise disk.store_error(store.root, exc, "write the card") from exc
