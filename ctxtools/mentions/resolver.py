"""Resolving ``@path`` and ``@basename`` mentions to files under a root (the rules are in
``ctxtools.mentions``): an exact path first, then the basename index, candidates ranked by
the use log's frecency."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field

from ctxtools.analyzer.mentions import Mention, variants
from ctxtools.mentions.basenames import MAX_INDEX_ENTRIES, BasenameIndex
from ctxtools.mentions.common import clean_rel, stem
from ctxtools.mentions.uselog import UseLog, frecency
from ctxtools.quoting import quote_name

CLOSEST = 5  # closest names offered for an unresolved mention


@dataclass(frozen=True)
class Resolution:
    """What a mention resolved to: PATH relative to the root (POSIX) or None, the
    CANDIDATES considered (best first; the closest names when unresolved) and the REASON."""

    mention: Mention
    path: str | None
    candidates: list[str] = field(default_factory=list)
    reason: str = ""

    def ambiguity(self, shown: int = 3) -> str | None:
        """For a mention that matched several files, one line saying which it took, a few
        of the others, and how to name one precisely (None when it matched one or none)."""
        if self.path is None or len(self.candidates) < 2:
            return None
        others = [p for p in self.candidates if p != self.path]
        listed = ", ".join(quote_name(p) for p in others[:shown])
        more = f" and {len(others) - shown:,} more" if len(others) > shown else ""
        example = quote_name(unique_suffix(others[0], self.candidates))
        return (
            f"@{quote_name(self.mention.raw)} is ambiguous ({self.reason}); took "
            f"{quote_name(self.path)}, not {listed}{more}: write more of the path to "
            f"choose, e.g. @{example}"
        )


def unique_suffix(path: str, paths: Sequence[str]) -> str:
    """The fewest last parts of PATH that no other of PATHS ends with (PATH when none)."""
    parts = path.split("/")
    for n in range(1, len(parts) + 1):
        tail = "/".join(parts[-n:])
        if not any(p != path and (p == tail or p.endswith("/" + tail)) for p in paths):
            return tail
    return path


def _root_key(root_real: str) -> str:
    import hashlib

    return hashlib.sha256(os.fsencode(root_real)).hexdigest()[:20]


class MentionResolver:
    """Resolves path and basename mentions to files under ROOT.

    STORE_ROOT is where the index cache and the use log live (default: the store root,
    ``$CTX_STORE`` or ``~/.cache/ctxtools``). NOW (seconds since the epoch) fixes the clock
    for ranking, for reproducible answers; MAX_ENTRIES caps the index.
    """

    def __init__(
        self,
        root: str | os.PathLike,
        store_root: str | os.PathLike | None = None,
        *,
        now: float | None = None,
        max_entries: int = MAX_INDEX_ENTRIES,
    ):
        from ctxtools.errors import InputError
        from ctxtools.fsutil import require_directory

        root_s = os.fspath(root)
        if not os.path.exists(root_s):  # a missing root is bad input here, not "not found"
            raise InputError(f"{root_s}: no such directory")
        require_directory(root_s, root_s, hint="give the project's root")
        from ctxtools.config import store_root as resolve_store_root

        self.root = root_s
        self.root_real = os.path.realpath(root_s)
        self.store_root = resolve_store_root(store_root)
        key = _root_key(self.root_real)
        from ctxtools.memofile import key as memo_key

        # (the index is a cache, named as every root's cache is; the use log keeps its name)
        self.index_path = self.store_root / "mentions" / f"index-v1-{memo_key(self.root_real)}.bin"
        self.uses_path = self.store_root / "mentions" / f"{key}.uses.jsonl"
        self.now = now
        self.max_entries = max_entries
        self.notes: list[str] = []  # why the cache or the log could not be used
        self._names = BasenameIndex(
            root_s, self.root_real, self.index_path, max_entries, self.notes
        )
        self._log = UseLog(self.uses_path, self._now, self.notes)

    @property
    def index_state(self) -> str:
        """What the index did, for --explain: "none", "built", "cached", "rebuilt"."""
        return self._names.state

    @property
    def index_truncated(self) -> bool:
        return self._names.truncated

    # -- the clock and the use log ------------------------------------------------------

    def _now(self) -> float:
        if self.now is not None:
            return self.now
        import time

        return time.time()

    def uses(self) -> dict[str, tuple[int, float]]:
        """path -> (count, last use) from the use log, at most MAX_USES entries."""
        return self._log.uses()

    def record_use(self, paths: Sequence[str], when: float | None = None) -> None:
        """Remember that a pack used PATHS (relative to the root) at WHEN (default now):
        one line appended to the use log; the log is compacted (atomically) to its
        MAX_USES best entries once it holds more than twice that many lines. Appends from
        concurrent packs interleave whole lines; a use appended while another process
        compacts may be lost (a ranking hint, never a damaged file). A log that cannot be
        written is noted in ``notes`` and otherwise ignored."""
        self._log.record(paths, when)

    def _regular_inside(self, rel: str) -> str | None:
        """Why ROOT/REL is not a regular file inside the root, or None when it is."""
        path = os.path.join(self.root, *rel.split("/"))
        try:
            st = os.stat(path)
        except OSError:
            return "no such file"
        real = os.path.realpath(path)
        if not (real == self.root_real or real.startswith(self.root_real.rstrip(os.sep) + os.sep)):
            return "outside the root"
        if stat.S_ISDIR(st.st_mode):
            return "a directory"
        if not stat.S_ISREG(st.st_mode):
            return "not a regular file"
        return None

    # -- resolving ----------------------------------------------------------------------------

    def resolve(self, mention: Mention) -> Resolution:
        """Resolve a path or basename MENTION (see the module docstring)."""
        if mention.kind not in ("path", "basename"):
            raise ValueError(f"only path and basename mentions resolve, not {mention.kind!r}")
        names = variants(mention)
        problem = None
        for name in names:
            rel = self._relative(name)
            why = "outside the root" if rel is None else self._regular_inside(rel)
            if why is None:
                return Resolution(mention, rel, [rel], "exact path")
            if problem is None and why != "no such file":
                problem = f"{name}: {why}"
        if problem is not None:
            # ROOT/raw exists but is no file we may use: a directory, a link out of the
            # root, a device; or the name itself leaves the root.
            return Resolution(mention, None, [], problem)
        found, vanished = self._search(mention, names)
        if self._names.from_cache and (found is None or vanished):
            # The cache may predate this file (or list one since removed): rebuild once.
            self._names.rebuild()
            found, _ = self._search(mention, names)
        return found if found is not None else self._unresolved(mention, self._names.by_name())

    def _relative(self, name: str) -> str | None:
        """NAME as a clean path relative to the root; an absolute NAME inside the root is
        made relative. None when NAME leaves the root."""
        if name.startswith("/"):
            absolute = os.path.normpath(name)
            for base in (os.path.abspath(self.root), self.root_real):
                if absolute.startswith(base.rstrip(os.sep) + os.sep):
                    return clean_rel(absolute[len(base.rstrip(os.sep)) + 1 :])
            return None
        return clean_rel(name)

    def _search(self, mention: Mention, names: list[str]) -> tuple[Resolution | None, bool]:
        """The resolution through the index, or None; and whether a file the index
        listed for it has since gone."""
        by_name = self._names.by_name()
        vanished = False
        for name in names:
            rel = self._relative(name)
            if rel is None:
                continue
            listed, how = self._match(rel, by_name)
            found = [f for f in listed if self._regular_inside(f) is None]
            vanished = vanished or len(found) < len(listed)
            if found:
                return self._choose(mention, found, how), vanished
        return None, vanished

    def _match(self, rel: str, by_name: dict[str, list[str]]) -> tuple[list[str], str]:
        base = rel.rsplit("/", 1)[-1]
        suffix = "/" + rel if "/" in rel else None

        def fit(paths: list[str]) -> list[str]:
            if suffix is None:
                return paths
            return [p for p in paths if p.endswith(suffix) or p == rel]

        exact = fit(by_name.get(base, []))
        if exact:
            return exact, (f"path ending in {rel}" if suffix else f"named {base}")
        has_ext = "." in base.strip(".")
        if not has_ext:
            stems = fit([p for n, ps in by_name.items() if stem(n) == base for p in ps])
            if stems:
                return stems, f"named {base}.* (by stem)"
        low = base.casefold()
        folded = fit(
            [
                p
                for n, ps in by_name.items()
                if n.casefold() == low or (not has_ext and stem(n).casefold() == low)
                for p in ps
            ]
        )
        if folded:
            return folded, f"named {base} ignoring case"
        return [], ""

    def _choose(self, mention: Mention, found: list[str], how: str) -> Resolution:
        from ctxtools.source.classify import is_test

        uses = self.uses()
        now = self._now()
        scored = {p: frecency(*uses[p], now) if p in uses else 0.0 for p in found}
        ranked = sorted(
            found, key=lambda p: (-scored[p], is_test(p), p.count("/"), p.split("/"))
        )
        best = ranked[0]
        if len(ranked) == 1:
            return Resolution(mention, best, ranked, f"only file {how}")
        if scored[best] > 0 and scored[best] > scored[ranked[1]]:
            why = f"highest frecency ({scored[best]:.2f})"
        else:
            tied = [p for p in ranked if scored[p] == scored[best]]
            lead = "frecency tie" if scored[best] > 0 else "none used before"
            if is_test(best) != is_test(tied[1]):
                why = f"{lead}; not a test"
            elif best.count("/") != tied[1].count("/"):
                why = f"{lead}; shallowest path"
            else:
                why = f"{lead}; first by path"
        return Resolution(mention, best, ranked, f"{len(ranked)} files {how}: {why}")

    def _unresolved(self, mention: Mention, by_name: dict[str, list[str]]) -> Resolution:
        import difflib

        base = mention.raw.rstrip("/").rsplit("/", 1)[-1]
        close = []
        candidates = []
        # Tracked files deleted from the work tree are still listed by git: offer only
        # names that exist.
        for name in difflib.get_close_matches(base, sorted(by_name), n=4 * CLOSEST, cutoff=0.6):
            paths = [p for p in by_name[name] if self._regular_inside(p) is None]
            if paths:
                close.append(name)
                candidates.extend(sorted(paths, key=lambda p: (p.count("/"), p)))
            if len(close) == CLOSEST:
                break
        capped = f" among the first {self.max_entries} files" if self.index_truncated else ""
        if close:
            reason = f"not found{capped}; closest: {', '.join(map(quote_name, close))}"
        else:
            reason = f"not found{capped}; nothing close"
        return Resolution(mention, None, candidates, reason)
