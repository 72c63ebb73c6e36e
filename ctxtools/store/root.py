"""A store's root: where its blobs, cards and access log live, and its cards read back and
listed. The part of the store every module above it shares (``access``, ``batch``, ``gc``
take a ``StoreRoot``); ``handles.HandleStore`` is one, with the writing, opening and removal
on top.
"""

from __future__ import annotations

import os
from pathlib import Path

from ctxtools.errors import IntegrityError, StoreError
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

    # cards
    def _load_record(self, session: str, name: str) -> dict | None:
        path = self.card_path(session, name)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            self.check_root()  # the root itself is a file (or under one): say so, not "no handle"
            return None
        except OSError as exc:
            raise StoreError(f"cannot read card {path}: {exc.strerror or exc}") from exc
        try:
            record = json_loads(data)
        except ValueError:
            raise IntegrityError(
                f"handle {session}/{name}: its card {path} is not valid JSON",
                hint="remove it with ctx-stash --rm",
            ) from None
        reason = card_problem(record, session, name)
        if reason is not None:
            raise IntegrityError(
                f"handle {session}/{name}: its card {path} is damaged ({reason})",
                hint=f"remove it with ctx-stash --rm {session}/{name}",
            )
        return record

    def sessions(self) -> list[str]:
        try:
            return sorted(p.name for p in self.sessions_dir.iterdir() if p.is_dir())
        except OSError:
            return []

    def records(
        self, session: str | None = None, damaged: list[tuple[str, str, str | None]] | None = None
    ) -> list[dict]:
        """Every readable card record (of SESSION, or of all sessions), sorted by session/name.

        A damaged card is skipped; with DAMAGED, ``(id, message, its sha256 if readable)`` of
        each is appended to it.
        """
        out = []
        for sess in [validate_session(session)] if session else self.sessions():
            d = self.sessions_dir / sess
            try:
                names = sorted(p.name for p in d.iterdir())
            except OSError:
                continue
            for fname in names:
                if not fname.endswith(".json") or fname.startswith(TMP_PREFIX):
                    continue
                if not NAME_RE.fullmatch(fname[:-5]):
                    continue
                try:
                    rec = self._load_record(sess, fname[:-5])
                except (IntegrityError, StoreError) as exc:
                    if damaged is not None:
                        damaged.append((f"{sess}/{fname[:-5]}", exc.message, card_sha(d / fname)))
                    continue
                if rec is not None:
                    out.append(rec)
        return out
