"""The handle store: payloads on disk behind small handle cards (virtual memory for the model).

Layout under the store root (created with mode 0700 on the first write)::

    blobs/ab/<sha256>          raw bytes, immutable, content-addressed
    blobs/ab/<sha256>.idx      line index, character checkpoints and block checksums (see
                               ``LineIndex``; format 2, a format-1 file is rebuilt); a blob
                               under 64 KiB written by ``put_many`` has none (rebuilt)
    sessions/<session>/<name>.json   the current card of that name (plus private fields)
    access.jsonl               append-only access log, compacted now and then
    .lock                      flock: writers share it, gc/rm/compaction take it alone

Every write goes to a temporary file in the target's filesystem, is fsync'ed and then
``os.replace``d into place (``ctxtools.fsutil``), so a killed writer leaves at most a
``.tmp-<pid>-*`` file that no card refers to (``gc`` removes it once that process is gone).
The blob is in place before its card is written, so a visible card always has its bytes;
when the card then cannot be written (a full disk, a read-only session directory), a blob
this write placed where there was none is removed again unless a card refers to it
(``StoreRoot.drop_unreferenced``: a concurrent stash of the same bytes may have). ``put_many``
(``ctxtools.store.batch``) writes a batch the same way with less waiting.

The store makes no symbolic link and follows none below its root (the root itself is the
user's to name): its directories are reached one name at a time without following a link
(``disk.open_dir``), its cards, blobs and indexes are opened without following one
(``disk.open_file``), and a card is removed by its name in its session's directory. A
session directory that is a link is refused (StoreError, exit 1) and skipped by listings
and gc; a card that is a link is damaged (``--rm`` removes the link itself).

Integrity: at stash time we record SHA-256 and xxh3-128 of the whole payload, and xxh3-64 of
every 1 MiB block in the ``.idx`` file (which also carries its own checksum and the payload's
xxh3-128, binding it to the card). Every byte a read serves comes from a block whose
checksum was verified (``Payload``); a blob of at most ``FULL_CHECK_BYTES`` is verified
whole on every open (``payload.stored_payload``). ``verify=True`` re-hashes the whole payload
with SHA-256.

A card read back is checked (``refs.card_problem``). A damaged card is an ``IntegrityError``
for a read of it; listings and gc skip it and say so (and while one is there, gc removes no
unreferenced blob: it may be the damaged card's). The access log and frecency
(``access``), gc (``gc``, ``evict``) are the store's housekeeping, called through this class.

The library never prints; errors are ``ctxtools.errors`` exceptions.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable
from typing import Any, BinaryIO

from ctxtools import fsutil
from ctxtools.errors import (
    IntegrityError,
    NotFoundError,
    StaleHandleError,
    StoreError,
)
from ctxtools.store import disk
from ctxtools.store.lineindex import Indexer, feed_stream
from ctxtools.store.payload import Chain, Payload, stored_payload
from ctxtools.store.refs import (
    DEFAULT_SESSION,
    REF_PREFIX_LEN,
    Ref,
    card_bytes,
    make_record,
    parse_ref,
    public_card,
    validate_name,
    validate_session,
    validate_type,
)
from ctxtools.store.root import StoreRoot
from ctxtools.store.sniff import detect_type_head, settle_type


class HandleStore(StoreRoot):
    """The on-disk handle store, at ``ctxtools.config.store_root(root)`` (``root=None``: the
    default root; a leading ``~`` is the home directory). Its paths, and its cards read back
    and listed, are ``root.StoreRoot``'s.

    Nothing is created until the first write (then with mode 0700).
    """

    def __init__(self, root: str | os.PathLike | None = None) -> None:
        from ctxtools.config import store_root

        super().__init__(store_root(root))

    def check_writable(self, session: str | None = None) -> None:
        """Raise StoreError now if a stash (into SESSION, when given) could not be written
        (before running anything)."""
        if session is not None:
            self.check_session(session)
        self.make_dir("blobs")
        tmp = fsutil.temp_path(self.blobs_dir)
        try:
            os.close(fsutil.create_temp(tmp))
            os.unlink(tmp)
        except OSError as exc:
            raise disk.store_error(self.root, exc, "write") from exc

    # writing
    def put_bytes(self, data: bytes, **options: Any) -> dict:
        """Store DATA and return its card (always stores; thresholds are the caller's).
        OPTIONS are ``put_stream``'s: ``name``, ``session``, ``type``, ``exit_status``."""
        import io

        return self.put_stream(io.BytesIO(bytes(data)), **options)

    def put_stream(
        self,
        stream: BinaryIO,
        *,
        name: str | None = None,
        session: str = DEFAULT_SESSION,
        type: str | None = None,
        exit_status: int | Callable[[], int] | None = None,
        head: bytes = b"",
        incomplete: str | Callable[[], str | None] | None = None,
    ) -> dict:
        """Stream STREAM (after HEAD, bytes already read from it) into the store; its card.

        Memory stays bounded whatever the size. Without NAME the name is the first 12 hex
        digits of the SHA-256. TYPE is detected when None. Re-stashing a name replaces its
        card (the old ``@sha`` reference then reads as stale). EXIT_STATUS may be a callable,
        called once the stream is exhausted (e.g. a child process's ``wait``); so may
        INCOMPLETE, why the payload is not the whole output (the signal that cut a capture
        short, e.g. ``"SIGINT"``; None: it is whole), which the card then carries.
        """
        validate_session(session)
        if name is not None:
            validate_name(name)
        validate_type(type)
        if head:
            stream = Chain(head, stream)  # type: ignore[assignment]
        self.check_session(session)  # a session that is a link: refused before any byte
        self.make_dir("blobs")
        with fsutil.temp_guard():  # a SIGTERM while stdin streams in leaves no temp file
            return self._put(stream, name, session, type, (exit_status, incomplete))

    def _put(
        self,
        stream: BinaryIO,
        name: str | None,
        session: str,
        type_: str | None,
        marks: tuple,
    ) -> dict:
        tmp = fsutil.temp_path(self.blobs_dir)
        try:
            try:
                fd = fsutil.create_temp(tmp)
            except OSError as exc:
                raise disk.store_error(self.root, exc, "write") from exc
            with open(fd, "w+b", buffering=0) as fh:
                ix = feed_stream(Indexer(), stream, lambda chunk: self._write(fd, chunk))
                try:
                    os.fdatasync(fd)
                except OSError as exc:
                    raise disk.store_error(self.root, exc, "write") from exc
                detected = detect_type_head(bytes(ix.head), ix.size, fh)
                detected = settle_type(type_, detected, ix.lines)
            exit_status, incomplete = (m() if callable(m) else m for m in marks)
            # Streaming ran unlocked (a long -- CMD must not hold up gc); putting the blob
            # and its card in place is done under the shared lock, so gc -- which takes it
            # alone -- never sees a blob whose card is about to be written.
            placed: list[str] = []
            try:
                with disk.lock(self.root):
                    return self._commit(
                        tmp, ix, detected, name, (session, exit_status, incomplete), placed
                    )
            except StoreError:
                # No card: the blob this run placed where there was none goes again, unless
                # another stash of the same bytes referred to it meanwhile (under the
                # exclusive lock, once the shared one is let go: ``drop_unreferenced``).
                self.drop_unreferenced(placed)
                raise
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def _write(self, fd: int, chunk: bytes) -> None:
        try:
            fsutil.write_all(fd, chunk)
        except OSError as exc:
            raise disk.store_error(self.root, exc, "write") from exc

    def _commit(
        self,
        tmp: str,
        ix: Indexer,
        detected: str,
        name: str | None,
        marks: tuple[str, int | None, str | None],
        placed: list[str],
    ) -> dict:
        """Put the blob streamed to TMP in place, then its card; MARKS are (session,
        exit_status, incomplete). The blob's sha256 goes in PLACED when there was no blob
        of it before (the caller removes it again if the card cannot be written)."""
        session, exit_status, incomplete = marks
        sha = ix.sha256
        final = self.blob_path(sha)
        record = make_record(ix, detected, name, session, exit_status, time.time(), incomplete)
        path = self.card_path(session, record["name"])
        # Every directory written to is checked (made) right before: none is a link.
        self.make_dir("blobs", sha[:2])
        self.make_dir("sessions", session)
        try:
            if not os.path.lexists(final):
                placed.append(sha)
            # The index is derived and checks itself: no fsync (the blob's is enough).
            fsutil.replace_file(self.idx_path(sha), ix.index().to_bytes(), durable=False)
            os.replace(tmp, final)
            fsutil.fsync_dir(final.parent)
        except OSError as exc:
            raise disk.store_error(self.root, exc, "write") from exc
        try:
            fsutil.replace_file(path, card_bytes(record))
        except OSError as exc:
            raise disk.store_error(self.root, exc, "write the card") from exc
        return public_card(record)

    def put_many(self, items: Iterable[tuple[bytes, dict]]) -> list[dict]:
        """Store many payloads in one batch; their cards, in order, as ``put_bytes`` gives them.

        ITEMS are ``(data, kwargs)`` with KWARGS as for ``put_bytes`` (``name``, ``session``,
        ``type``, ``exit_status``; all optional). Everything is validated before anything is
        written (UsageError). Later items win over earlier ones of the same session/name, as
        with one put after another. Cheaper than one put each; a killed batch leaves no card
        without its blob (see ``ctxtools.store.batch``).
        """
        from ctxtools.store.batch import put_many

        return put_many(self, items)

    # reading
    def record(self, ref: str | Ref, session: str = DEFAULT_SESSION) -> dict:
        """The full stored record of REF (card plus private fields); checks staleness."""
        r = ref if isinstance(ref, Ref) else parse_ref(ref, session)
        record = self._load_record(r.session, r.name)
        if record is None:
            raise NotFoundError(
                f"no handle {r.session}/{r.name}",
                hint="ctx-stash --list shows the handles of a session",
            )
        if r.sha_prefix and not record["sha256"].startswith(r.sha_prefix):
            if not self.blob_path_for_prefix_exists(r.sha_prefix):
                raise StaleHandleError(
                    f"no version @{r.sha_prefix} of {r.session}/{r.name} "
                    f"(its current version is @{record['sha256'][:REF_PREFIX_LEN]})",
                    hint=f"read ctx:{r.session}/{r.name} for the current version",
                )
            raise _restashed(r, record)
        return record

    def blob_path_for_prefix_exists(self, prefix: str) -> bool:
        """Whether some stored blob's SHA-256 starts with PREFIX (an earlier version may
        still be there until gc; a prefix of no blob at all was never stashed)."""
        try:
            fd = disk.open_dir(self.root, ("blobs", prefix[:2]))
        except StoreError:
            return False
        if fd is None:
            return False
        try:
            with os.scandir(fd) as it:
                return any(e.name.startswith(prefix) and not e.name.endswith(".idx") for e in it)
        except OSError:
            return False
        finally:
            os.close(fd)

    def card(self, ref: str | Ref, session: str = DEFAULT_SESSION) -> dict:
        """The current card of REF (raises NotFoundError / StaleHandleError)."""
        return public_card(self.record(ref, session))

    def open(
        self,
        ref: str | Ref,
        session: str = DEFAULT_SESSION,
        *,
        verify: bool = False,
        touch: bool = True,
    ) -> Payload:
        """Open REF for reading: a Payload that serves only verified bytes.

        Raises NotFoundError, StaleHandleError, IntegrityError (corrupt, truncated, or --verify
        SHA-256 mismatch). With TOUCH (the default) the read is logged in the access log.
        """
        r = ref if isinstance(ref, Ref) else parse_ref(ref, session)
        record, fh = self._open_blob(r)
        label = f"ctx:{record['session_id']}/{record['name']}@{record['sha256'][:REF_PREFIX_LEN]}"
        try:
            payload = stored_payload(fh, record, self.idx_path(record["sha256"]), label, verify)
        except BaseException:
            fh.close()
            raise
        if touch:
            self.record_access(record["session_id"], record["name"])
        return payload

    def _open_blob(self, r: Ref) -> tuple[dict, BinaryIO]:
        """The current record of R and its blob, open. A blob that is gone when the card
        was read just before it means the name was re-stashed and the old blob collected
        in between (gc runs beside readers): the card is read once more and its blob
        opened. Only a blob missing under an unchanged card is the store's damage."""
        record = self.record(r)
        retried = False
        while True:
            fh = self._blob_file(r, record["sha256"])
            if fh is not None:
                return record, fh
            now = self._load_record(r.session, r.name)
            if now is None:
                now = self.record(r)  # NotFoundError: removed meanwhile
            if r.sha_prefix and not now["sha256"].startswith(r.sha_prefix):
                raise _restashed(r, now)  # the version asked for was there a moment ago
            label = f"ctx:{r.session}/{r.name}@{record['sha256'][:REF_PREFIX_LEN]}"
            if now["sha256"] == record["sha256"]:
                raise IntegrityError(
                    f"handle {label}: its blob is missing from the store", hint="re-stash it"
                )
            if retried:
                raise StoreError(
                    f"handle ctx:{r.session}/{r.name} changed twice while it was being read "
                    "(re-stashed, and the version read collected by gc)",
                    hint="read it again",
                )
            record, retried = now, True

    def _blob_file(self, r: Ref, sha: str) -> BinaryIO | None:
        """The blob SHA (of R's card), open; None when it is not there. Reached through
        no link (``disk.open_dir``, ``disk.open_file``): one there is the store's damage."""
        path = self.blob_path(sha)
        fd = disk.open_dir(self.root, ("blobs", sha[:2]))
        if fd is None:
            return None
        try:
            bfd = disk.open_file(sha, fd)
        except FileNotFoundError:
            return None
        except disk.NotRegularFile as exc:
            raise IntegrityError(
                f"handle ctx:{r.session}/{r.name}: its blob {path} is {exc.strerror}, "
                "which the store does not read",
                hint="re-stash it",
            ) from None
        except OSError as exc:
            raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc
        finally:
            os.close(fd)
        return open(bfd, "rb")  # noqa: SIM115 - owned by the Payload

    def read_bytes(self, ref: str | Ref, session: str = DEFAULT_SESSION, **flags: bool) -> bytes:
        """The whole verified payload of REF; FLAGS are ``open``'s (``verify``, ``touch``).

        Raises NotFoundError, StaleHandleError, IntegrityError.
        """
        with self.open(ref, session, **flags) as payload:
            return b"".join(payload.iter_bytes())

    # access log and frecency (ctxtools.store.access)
    def record_access(self, session: str, name: str, *, when: float | None = None) -> None:
        """Append one access record (best effort: a read-only store just is not logged)."""
        from ctxtools.store.access import record_access

        record_access(self, session, name, when)

    def access_stats(self, with_times: bool = False) -> dict:
        """(session, name) -> (read count, last read time) from the access log; WITH_TIMES:
        -> [(time, count), ...] of each record instead."""
        from ctxtools.store.access import access_stats

        return access_stats(self, with_times)

    def compact_access(self, keep: set[tuple[str, str]] | None = None) -> None:
        """Rewrite the access log as one record per handle (only KEEP's, when given), at most
        ACCESS_MAX_ENTRIES of them: the lowest frecency goes first. Reads logged before a
        handle's current card was written (an earlier version of the name) are dropped."""
        from ctxtools.store.access import compact_access

        compact_access(self, keep)

    def entries(
        self,
        session: str | None = None,
        now: float | None = None,
        damaged: list[tuple[str, str, str | None]] | None = None,
    ) -> list[dict]:
        """Cards with their access figures: id, size_bytes, last_accessed_at, access_count,
        frecency (count x e^(-lambda age), half-life 7 days) -- newest-frecency first.

        Reads logged before the card was written belong to an earlier version of the name
        (re-stashed): they do not count. DAMAGED collects the cards skipped (``records``).
        """
        from ctxtools.store.access import entries

        return entries(self, session, now, damaged)

    # listing, removal, gc
    def remove(self, refs: list[str], session: str = DEFAULT_SESSION) -> list[str]:
        """Remove the cards of REFS (blobs go at the next gc); the removed ids."""
        parsed = [parse_ref(r, session) for r in refs]
        for r in parsed:
            try:
                self.record(r)  # NotFound / stale before anything is removed
            except IntegrityError:
                if r.sha_prefix:  # a damaged card has no version to compare with
                    raise
                # a damaged card can always be removed
        removed = []
        with disk.lock(self.root, exclusive=True):
            for r in parsed:
                try:  # (never through a link: ``unlink_card``)
                    if not self.unlink_card(r.session, r.name):
                        continue
                except OSError as exc:
                    raise disk.store_error(self.root, exc, "remove a card") from exc
                removed.append(f"{r.session}/{r.name}")
        return removed

    def gc(
        self,
        *,
        max_bytes: int | None = None,
        max_entries: int | None = None,
        strategy: str = "lru",
        dry_run: bool = False,
        now: float | None = None,
    ) -> dict:
        """Evict handles over budget, then remove unreferenced blobs and dead temp files.

        Returns {"evicted": [ids], "blobs_removed": n, "bytes_freed": n, "temp_removed": n,
        "kept": n, "kept_bytes": n, "damaged": [{"id", "error"}], "unreferenced_kept": n}
        (see ``ctxtools.store.gc``: while a card is damaged, no unreferenced blob goes).
        """
        from ctxtools.store.gc import gc

        return gc(
            self,
            max_bytes=max_bytes,
            max_entries=max_entries,
            strategy=strategy,
            dry_run=dry_run,
            now=now,
        )


def _restashed(r: Ref, record: dict) -> StaleHandleError:
    """The error for a read of R whose @sha is no longer the version RECORD is."""
    return StaleHandleError(
        f"stale handle {r}: {r.session}/{r.name} has been re-stashed "
        f"(now @{record['sha256'][:REF_PREFIX_LEN]})",
        hint=f"read ctx:{r.session}/{r.name} for the current version",
    )
