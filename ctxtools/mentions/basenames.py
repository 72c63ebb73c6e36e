"""The basename index: the files under a root by name, built lazily on the first miss.

The files are listed as the repo map lists them (git-aware, .gitignore honoured, vendored
trees left out), shallowest first, at most ``MAX_INDEX_ENTRIES``. The index is cached in
the store (``mentions/index-v1-<key of the root>.bin``, a memo file: ``ctxtools.memofile``)
with the mtime of every directory that holds an indexed file; a cache whose directories
changed is rebuilt.
"""

from __future__ import annotations

import os
from pathlib import Path

from ctxtools.mentions.common import note

MAX_INDEX_ENTRIES = 50_000
INDEX_VERSION = 1
INDEX_KIND = "mentions-index"  # the memo file's kind


class BasenameIndex:
    """The index of ROOT (ROOT_REAL its real path), cached at PATH; notes go to NOTES."""

    def __init__(self, root: str, root_real: str, path: Path, max_entries: int, notes: list[str]):
        self.root = root
        self.root_real = root_real
        self.path = path
        self.max_entries = max_entries
        self.notes = notes
        # What the index did, for --explain: "none", "built", "cached", "rebuilt".
        self.state = "none"
        self.truncated = False
        self.from_cache = False
        self.files: list[str] | None = None
        self._by_name: dict[str, list[str]] | None = None

    def by_name(self) -> dict[str, list[str]]:
        """basename -> the files of that name, loading or building the index once."""
        if self._by_name is None:
            if self._load_cached():
                self.state = "cached"
            else:
                self._build()
                self.state = "built"
        assert self._by_name is not None
        return self._by_name

    def rebuild(self) -> dict[str, list[str]]:
        self._build()
        self.state = "rebuilt"
        assert self._by_name is not None
        return self._by_name

    def _list(self) -> tuple[list[str], str, int]:
        """(the files to index, "git" or "walk", how many the listing held before the cap)."""
        from ctxtools.source import listing as listmod
        from ctxtools.source.classify import listing_skip

        names = listmod.git_ls_files(self.root)
        via = "git" if names is not None else "walk"
        if names is None:
            try:
                names, _ = listmod.walk_files(self.root)
            except RecursionError:  # a tree nested deeper than the walk can recurse
                names = []
                self.notes.append("mention index empty: the directory tree is too deep to list")
        names = [n for n in names if listing_skip(n) is None]
        names.sort(key=listmod.depth_key)
        listed = len(names)
        names = names[: self.max_entries]
        if via == "git":
            # git also lists tracked files deleted from the work tree: leave them out, or
            # every later mention of one would take the cache for stale.
            join, exists = os.path.join, os.path.lexists
            names = [n for n in names if exists(join(self.root, n))]
        return names, via, listed

    def _dir_mtimes(self, files: list[str]) -> dict[str, int] | None:
        dirs = {""}
        for rel in files:
            cut = rel.rfind("/")
            while cut > 0:
                d = rel[:cut]
                if d in dirs:
                    break
                dirs.add(d)
                cut = rel.rfind("/", 0, cut)
        out = {}
        for d in sorted(dirs):
            try:
                out[d] = os.stat(os.path.join(self.root, d) if d else self.root).st_mtime_ns
            except OSError:
                continue
        return out

    def _build(self) -> None:
        from ctxtools.memofile import save

        files, via, listed = self._list()
        truncated = listed > self.max_entries
        self._set_files(files, truncated)
        self.from_cache = False
        doc = {
            "version": INDEX_VERSION,
            "root": self.root_real,
            "via": via,
            "max_entries": self.max_entries,
            "truncated": truncated,
            "listed": listed,
            "dirs": self._dir_mtimes(files),
            "files": files,
        }
        reason = save(self.path, INDEX_KIND, doc)
        if reason:
            note(self.notes, "index", reason)

    def _load_cached(self) -> bool:
        from ctxtools.memofile import load

        try:
            doc = load(self.path, INDEX_KIND).value
            if not isinstance(doc, dict) or (
                doc.get("version") != INDEX_VERSION
                or doc.get("root") != self.root_real
                or doc.get("max_entries") != self.max_entries
            ):
                return False
            dirs, files = doc["dirs"], doc["files"]
            if not isinstance(dirs, dict) or not isinstance(files, list):
                return False
            for d, mtime in dirs.items():
                path = os.path.join(self.root, d) if d else self.root
                if os.stat(path).st_mtime_ns != mtime:
                    return False
            if not all(isinstance(f, str) for f in files):
                return False
            self._set_files(files, bool(doc.get("truncated")))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return False
        self.from_cache = True
        return True

    def _set_files(self, files: list[str], truncated: bool) -> None:
        by_name: dict[str, list[str]] = {}
        for rel in files:
            by_name.setdefault(rel.rsplit("/", 1)[-1], []).append(rel)
        self.files = files
        self._by_name = by_name
        self.truncated = truncated
