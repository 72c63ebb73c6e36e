"""A store's root: where its blobs, cards and access log live, and its cards read back and
listed. The part of the store every module above it shares (``access``, ``batch``, ``gc``
take a ``StoreRoot``); ``handles.HandleStore`` is one, with the writing, opening and removal
on top.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ctxtools.errors import CtxError, IntegrityError, StoreError
from ctxtools.fsutil import TMP_PREFIX
from ctxtools.store import disk
from ctxtools.store.refs import NAME_RE, card_problem, card_sha, validate_name, validate_session
from ctxtools.store.sniff import json_loads


class StoreRoot:
    """The files of the store at ROOT (see ``handles`` for the layout)."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)

    # paths
    @property
    def blobs_dir(self) -> Path:
        return self.root / "blobs"

    @property
    def sessions_dir(self) -> Path:
        return self.root / "sessions"

    @property
    def access_log(self) -> Path:
        return self.root / "access.jsonl"

    def blob_path(self, sha256: str) -> Path:
        return self.blobs_dir / sha256[:2] / sha256

    def idx_path(self, sha256: str) -> Path:
        return self.blobs_dir / sha256[:2] / f"{sha256}.idx"

    def card_path(self, session: str, name: str) -> Path:
        return self.sessions_dir / validate_session(session) / f"{validate_name(name)}.json"

    def check_root(self) -> None:
        """StoreError when the root is a file or lies under one (nothing to read, list or
        gc there: ``disk.not_a_directory``, the message every command gives). A root that
        does not exist yet is fine: the first write makes it."""
        import stat

        try:
            mode = os.stat(self.root).st_mode
        except NotADirectoryError:
            raise disk.not_a_directory(self.root, parent=True) from None
        except OSError:
            return
        if not stat.S_ISDIR(mode):
            raise disk.not_a_directory(self.root)

    # directories and files, reached through no link (``disk.open_dir``)
    def session_dir(self, session: str, *, create: bool = False) -> int | None:
        """A descriptor of SESSION's directory (the caller closes it), None when there is
        none (with CREATE it is made). A session directory that is a symbolic link -- to
        anywhere -- is not the store's: StoreError (exit 1), and nothing is read, written or
        removed through it."""
        validate_session(session)
        try:
            return disk.open_dir(self.root, ("sessions", session), create=create)
        except disk.StrayEntry as exc:
            if exc.rel != f"sessions/{session}":
                raise
            what = "a symbolic link" if exc.link else "not a directory"
            raise StoreError(
                # (``records`` and stash's notes tell a session's problem by this start)
                f"session {session}: {self.sessions_dir / session} is {what}, not a "
                "session directory of the store's",
                hint="the store reads, writes and removes nothing through it: remove it, "
                "or use another --session",
            ) from None

    def check_session(self, session: str) -> None:
        """StoreError now if SESSION's directory is there but not the store's (a link)."""
        fd = self.session_dir(session)
        if fd is not None:
            os.close(fd)

    def make_dir(self, *parts: str) -> None:
        """Make ROOT/PARTS... (and the root) if missing; StoreError when one of them is a
        symbolic link or a file (``disk.open_dir``; a session's in ``session_dir``'s
        words) -- checked right before a write there."""
        if len(parts) == 2 and parts[0] == "sessions":
            fd = self.session_dir(parts[1], create=True)
        else:
            fd = disk.open_dir(self.root, parts, create=True)
        os.close(fd)  # type: ignore[arg-type]

    def unlink_card(self, session: str, name: str) -> bool:
        """Remove the card file of SESSION/NAME (a link or a FIFO there is itself removed,
        never what it points at); whether there was one. OSError, StoreError."""
        file = f"{validate_name(name)}.json"
        fd = self.session_dir(session)
        if fd is None:
            return False
        try:
            os.unlink(file, dir_fd=fd)
        except FileNotFoundError:
            return False
        finally:
            os.close(fd)
        return True

    def drop_unreferenced(self, shas: set[str] | list[str]) -> None:
        """Remove again the blobs (and indexes) of SHAS -- each placed by this process
        where no blob was, for a card it then could not write -- that no card refers to.

        Under the exclusive lock: every writer places its blob and writes its card under
        the shared one, so while this holds it no card is half made. A card another
        process wrote for the same content meanwhile (it placed its own copy, and may have
        referred to ours) is seen, and its blob kept; one written later places the blob
        again itself. A card that cannot be read cannot have pointed at a blob that was not
        there before this process placed it, except as a card already without its blob:
        removing it leaves the store as it was. Best effort: a blob that stays is gc's."""
        if not shas:
            return
        with contextlib.suppress(OSError, CtxError), disk.lock(self.root, exclusive=True):
            damaged: list[tuple[str, str, str | None]] = []
            held = {r["sha256"] for r in self.records(None, damaged)}
            held.update(sha for _id, _msg, sha in damaged if sha)
            for sha in sorted(set(shas) - held):
                fd = disk.open_dir(self.root, ("blobs", sha[:2]))
                if fd is None:
                    continue
                try:
                    for fname in (sha, f"{sha}.idx"):
                        with contextlib.suppress(FileNotFoundError):
                            os.unlink(fname, dir_fd=fd)
                finally:
                    os.close(fd)

    # cards
    def _load_record(self, session: str, name: str) -> dict | None:
        validate_name(name)
        fd = self.session_dir(session)
        if fd is None:
            return None
        try:
            return self._read_card(fd, session, name)
        finally:
            os.close(fd)

    def _read_card(self, fd: int, session: str, name: str) -> dict | None:
        """The record of SESSION/NAME, its card read from the session directory FD; None
        when there is none. A card that is a link (or not a regular file) is damaged: it is
        not followed, and ``ctx-stash --rm`` removes the link itself."""
        path = self.card_path(session, name)
        try:
            data = disk.read_file(f"{name}.json", fd)
        except FileNotFoundError:
            return None
        except disk.NotRegularFile as exc:
            raise IntegrityError(
                f"handle {session}/{name}: its card {path} is {exc.strerror}, which the "
                "store does not read",
                hint=f"remove it with ctx-stash --rm {session}/{name}",
            ) from None
        except OSError as exc:
            raise StoreError(f"cannot read card {path}: {exc.strerror or exc}") from exc
        try:
            record = json_loads(data)
        except ValueError:
            raise IntegrityError(
                f"handle {session}/{name}: its card {path} is not valid JSON",
                hint=f"remove it with ctx-stash --rm {session}/{name}",
            ) from None
        reason = card_problem(record, session, name)
        if reason is not None:
            raise IntegrityError(
                f"handle {session}/{name}: its card {path} is damaged ({reason})",
                hint=f"remove it with ctx-stash --rm {session}/{name}",
            )
        return record

    def sessions(self) -> list[str]:
        """The session directories of the store, by name (a link there is not one)."""
        return [n for n, link in self._session_names() if not link]

    def _session_names(self) -> list[tuple[str, bool]]:
        """(name, whether it is a link) of each entry of ``sessions/`` named as a session
        and a directory or a link; StoreError when ``sessions/`` itself is a link."""
        fd = disk.open_dir(self.root, ("sessions",))
        if fd is None:
            return []
        try:
            with os.scandir(fd) as it:
                found = [
                    (e.name, e.is_symlink())
                    for e in it
                    if NAME_RE.fullmatch(e.name) and (e.is_symlink() or e.is_dir())
                ]
        except OSError:
            return []
        finally:
            os.close(fd)
        return sorted(found)

    def records(
        self, session: str | None = None, damaged: list[tuple[str, str, str | None]] | None = None
    ) -> list[dict]:
        """Every readable card record (of SESSION, or of all sessions), sorted by session/name.

        A damaged card is skipped; with DAMAGED, ``(id, message, its sha256 if readable)`` of
        each is appended to it. A session directory that is a link is not read: StoreError
        for SESSION, else skipped as ``(session, message, None)`` in DAMAGED.
        """
        if not self.root.is_dir():
            return []
        out: list[dict] = []
        names = [validate_session(session)] if session else [n for n, _l in self._session_names()]
        for sess in names:
            try:
                fd = self.session_dir(sess)
            except StoreError as exc:
                if session:
                    raise
                if damaged is not None:
                    damaged.append((sess, exc.message, None))
                continue
            if fd is None:
                continue
            try:
                out += self._session_records(fd, sess, damaged)
            finally:
                os.close(fd)
        return out

    def _session_records(
        self, fd: int, sess: str, damaged: list[tuple[str, str, str | None]] | None
    ) -> list[dict]:
        """The readable card records in the session directory FD of SESS (``records``)."""
        try:
            names = sorted(os.listdir(fd))
        except OSError:
            return []
        out = []
        for fname in names:
            if not fname.endswith(".json") or fname.startswith(TMP_PREFIX):
                continue
            if not NAME_RE.fullmatch(fname[:-5]):
                continue
            try:
                rec = self._read_card(fd, sess, fname[:-5])
            except (IntegrityError, StoreError) as exc:
                if damaged is not None:
                    damaged.append((f"{sess}/{fname[:-5]}", exc.message, _named_sha(fd, fname)))
                continue
            if rec is not None:
                out.append(rec)
        return out


def _named_sha(fd: int, fname: str) -> str | None:
    """The sha256 the damaged card FNAME (in the directory FD) names, if it names one."""
    try:
        return card_sha(disk.read_file(fname, fd))
    except OSError:
        return None
