"""@-mentions in a task: find them, and resolve ``@path`` and ``@basename`` to files.

``parse_mentions(task)`` finds ``@jwt.py``, ``@src/auth/jwt.py``, ``@ctx:tests`` and
``@skill:review`` in a task string. ``MentionResolver(root).resolve(mention)`` turns a
path or basename mention into a file under ROOT, and says how it chose.

Parsing rules:

- An ``@`` starts a mention at the start of the task, after whitespace, after opening or
  separating punctuation (``( [ { " ' < , ; : = * >``), or after a CJK or other non-ASCII
  non-letter character (CJK text has no spaces). After an ASCII letter, digit or ``_ . - /
  + % @`` it does not: ``a@b.com`` and ``https://x/@user`` are not mentions.
- ``@@`` is an escape: ``@@name`` is not a mention, nor is ``@`` alone.
- Text inside backticks (an inline code span or a fenced block) holds no mentions, so
  decorators quoted as code (`` `@pytest.fixture` ``) are left alone. An unquoted
  ``@property`` is a basename mention (which then does not resolve, and the caller warns).
- A mention runs until whitespace, a quote, a bracket, ``, ; |`` or CJK punctuation.
  Trailing sentence punctuation (``. , : ; ! ? ) ] } ' "``) is stripped and kept in
  ``Mention.trailing``: "fix @jwt.py." mentions ``jwt.py``; the resolver tries the
  punctuation back on only when the bare name names no file.
- A trailing line reference, ``:42``, ``:42-60`` or ``#L42``, on a path or basename is kept
  in ``Mention.line`` (the first line) and not in ``raw``.
- Kinds: ``ctx:…`` is a handle, ``skill:…`` a skill, anything with a ``/`` a path, the rest
  a basename.

Resolution (paths and basenames only):

- ``@path`` (or a basename that is an exact relative path at the root) resolves to
  ROOT/path when that is a regular file inside ROOT; ``..`` or a symlink that leaves ROOT
  never resolves. This needs no index.
- Otherwise a basename index is built, lazily, on the first miss: the repository's files
  as the repo map lists them (git-aware, .gitignore honoured, symlinked directories not
  entered, vendored trees and minified files left out), shallowest first, at most 50,000
  (then less the tracked files deleted from the work tree, which git still lists).
  It is cached in the store (``mentions/<hash of the root>.json``, written atomically)
  with the mtime of every directory that holds an indexed file. A later run stats those
  directories (a few hundred stats for Django, far cheaper than listing the tree again) and
  rebuilds when one changed: adding, removing or renaming a file changes its directory's
  mtime. What that misses (a new file in a directory that held no indexed file, a changed
  .gitignore) is caught by the second rule: a cached index that cannot resolve a mention,
  or offers a candidate that no longer exists, is rebuilt once before the answer is given.
- A basename matches files of that exact name; failing that, a name without an extension
  (``@jwt``) matches files whose name without its last extension is that (``jwt.py``,
  ``jwt.go``); failing that, the same two, ignoring case. A path that is not exact
  matches the files whose path ends with it (``@auth/jwt.py`` → ``src/auth/jwt.py``).
- Several candidates are ranked by frecency, ``count × e^(−λ·age)`` with a half-life of
  7 days, from this resolver's own use log (``record_use``); then files outside tests
  before test files; then the shallower path; then the path's code points.
- An unresolved mention gives ``path=None``, the closest basenames (difflib) in
  ``candidates`` and in the reason.

Nothing here prints. A store that cannot be written (read-only, full) costs the cache and
the use log, never the resolution; why is kept in ``MentionResolver.notes``.
"""

from __future__ import annotations

import math
import os
import re
import stat
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

MAX_INDEX_ENTRIES = 50_000
MAX_USES = 1_000  # entries kept in the use log (lowest frecency dropped first)
HALF_LIFE_DAYS = 7.0
LAMBDA = math.log(2) / (HALF_LIFE_DAYS * 86_400.0)  # per second
INDEX_VERSION = 1
CLOSEST = 5  # closest names offered for an unresolved mention

# ---------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mention:
    """An ``@`` mention: RAW as written without the ``@`` (and without a trailing line
    reference or sentence punctuation), its KIND ("path", "basename", "handle", "skill"),
    and the span ``task[start:end]`` of ``@…`` (line reference included, punctuation not)."""

    raw: str
    kind: str
    start: int
    end: int
    line: int | None = None  # from ``:42``, ``:42-60`` or ``#L42`` after a path/basename
    trailing: str = ""  # sentence punctuation stripped after the mention


# Characters after which "@" starts a mention (besides whitespace and the start).
_OPENERS = frozenset("([{\"'<,;:=*>")
# Characters that end a mention.
_ENDERS = frozenset("\"'`<>()[]{},;|") | frozenset("，。、；：！？）（「」『』【】《》“”‘’\u3000")
# Sentence punctuation stripped from the end of a mention.
_TRAILING = ".,:;!?)]}'\""
_LINE_REF = re.compile(r"(?::(\d+)(?:[-:]\d+)?|#L(\d+)(?:-L?\d+)?)$")
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.S)


def _starts_mention(task: str, i: int) -> bool:
    if i == 0:
        return True
    c = task[i - 1]
    if c.isspace() or c in _OPENERS:
        return True
    if c.isascii():
        return False
    # CJK runs have no spaces between words; other letters (é in josé@x.com) do not start.
    return not c.isalnum() or unicodedata.east_asian_width(c) in ("W", "F")


def _code_spans(task: str) -> list[tuple[int, int]]:
    if "`" not in task:
        return []
    return [m.span() for m in _CODE.finditer(task)]


def parse_mentions(task: str) -> list[Mention]:
    """The mentions in TASK, in order (see the module's docstring for the rules)."""
    out: list[Mention] = []
    if "@" not in task:
        return out
    code = _code_spans(task)
    n = len(task)
    i = task.find("@")
    while i != -1:
        nxt = i + 1
        if nxt < n and task[nxt] == "@":  # "@@": an escape, never a mention
            while nxt < n and task[nxt] == "@":
                nxt += 1
            while nxt < n and not task[nxt].isspace() and task[nxt] not in _ENDERS:
                nxt += 1
            i = task.find("@", nxt)
            continue
        if not _starts_mention(task, i) or any(a <= i < b for a, b in code):
            i = task.find("@", nxt)
            continue
        j = nxt
        while j < n and not task[j].isspace() and task[j] not in _ENDERS:
            j += 1
        mention = _make(task[nxt:j], i)
        if mention is not None:
            out.append(mention)
        i = task.find("@", max(j, nxt))
    return out


def _make(token: str, at: int) -> Mention | None:
    body = token.rstrip(_TRAILING)
    trailing = token[len(body) :]
    if body in ("ctx", "skill") and trailing.startswith(":"):
        return None  # "@ctx:" or "@skill:" with no name
    end = at + 1 + len(body)
    if body.startswith("ctx:"):
        return Mention(body, "handle", at, end, None, trailing) if len(body) > 4 else None
    if body.startswith("skill:"):
        return Mention(body, "skill", at, end, None, trailing) if len(body) > 6 else None
    line = None
    m = _LINE_REF.search(body)
    if m and m.start() > 0:
        line = int(m.group(1) or m.group(2))
        name = body[: m.start()]
    else:
        name = body
    if not any(ch.isalnum() for ch in name):
        return None
    kind = "path" if "/" in name else "basename"
    return Mention(name, kind, at, end, line, trailing)


# ---------------------------------------------------------------------------------------
# Resolution
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Resolution:
    """What a mention resolved to: PATH relative to the root (POSIX) or None, the
    CANDIDATES considered (best first; the closest names when unresolved) and the REASON."""

    mention: Mention
    path: str | None
    candidates: list[str] = field(default_factory=list)
    reason: str = ""


def frecency(count: float, last: float, now: float) -> float:
    """``count × e^(−λ·age)``, half-life 7 days; a use in the future counts as now."""
    return count * math.exp(-LAMBDA * max(0.0, now - last))


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
        self.index_path = self.store_root / "mentions" / f"{key}.json"
        self.uses_path = self.store_root / "mentions" / f"{key}.uses.jsonl"
        self.now = now
        self.max_entries = max_entries
        self.notes: list[str] = []  # why the cache or the log could not be used
        # What the index did, for --explain: "none", "built", "cached", "rebuilt".
        self.index_state = "none"
        self.index_truncated = False
        self._files: list[str] | None = None
        self._by_name: dict[str, list[str]] | None = None
        self._from_cache = False
        self._uses: dict[str, tuple[int, float]] | None = None

    # -- the clock and the use log ------------------------------------------------------

    def _now(self) -> float:
        if self.now is not None:
            return self.now
        import time

        return time.time()

    def _read_uses(self) -> tuple[dict[str, tuple[int, float]], int, bool]:
        """(path -> (count, last use), lines read, whether the file ends in a newline)."""
        import json

        uses: dict[str, tuple[int, float]] = {}
        try:
            data = self.uses_path.read_bytes()
        except OSError:
            return uses, 0, True
        lines = 0
        for raw in data.split(b"\n"):
            if not raw.strip():
                continue
            lines += 1
            try:
                rec = json.loads(raw)
                path, count, when = rec["p"], int(rec["n"]), float(rec["t"])
            except (ValueError, KeyError, TypeError, OverflowError):
                continue  # a line cut by a killed writer, or not ours
            if not isinstance(path, str) or count < 1 or not math.isfinite(when):
                continue
            old = uses.get(path)
            uses[path] = (count, when) if old is None else (old[0] + count, max(old[1], when))
        return uses, lines, data.endswith(b"\n") or not data

    def _keep(self, uses: dict[str, tuple[int, float]], now: float) -> dict:
        """USES cut to MAX_USES entries, the lowest frecency dropped first (then by path)."""
        if len(uses) <= MAX_USES:
            return uses
        ranked = sorted(uses.items(), key=lambda kv: (-frecency(*kv[1], now), kv[0]))
        return dict(ranked[:MAX_USES])

    def uses(self) -> dict[str, tuple[int, float]]:
        """path -> (count, last use) from the use log, at most MAX_USES entries."""
        if self._uses is None:
            uses, _, _ = self._read_uses()
            self._uses = self._keep(uses, self._now())
        return self._uses

    def record_use(self, paths: Sequence[str], when: float | None = None) -> None:
        """Remember that a pack used PATHS (relative to the root) at WHEN (default now):
        one line appended to the use log; the log is compacted (atomically) to its
        MAX_USES best entries once it holds more than twice that many lines. Appends from
        concurrent packs interleave whole lines; a use appended while another process
        compacts may be lost (a ranking hint, never a damaged file). A log that cannot be
        written is noted in ``notes`` and otherwise ignored."""
        import json

        when = self._now() if when is None else float(when)
        clean = sorted({p for p in (_clean_rel(x) for x in paths) if p})
        if not clean or not math.isfinite(when):
            return
        uses, lines, ends_in_newline = self._read_uses()
        for p in clean:
            old = uses.get(p)
            uses[p] = (1, when) if old is None else (old[0] + 1, max(old[1], when))
        self._uses = self._keep(uses, self._now())
        if lines + len(clean) > 2 * MAX_USES:
            body = "".join(
                json.dumps({"p": p, "n": n, "t": t}) + "\n"
                for p, (n, t) in sorted(self._uses.items())
            )
            self._write(self.uses_path, body.encode("utf-8"), "use log")
            return
        text = "".join(json.dumps({"p": p, "n": 1, "t": when}) + "\n" for p in clean)
        if not ends_in_newline:
            text = "\n" + text
        try:
            self.uses_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.uses_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, text.encode("utf-8"))  # one write: whole lines or nothing
            finally:
                os.close(fd)
        except OSError as exc:
            self._note("use log", f"{exc.strerror or exc}: {exc.filename or self.uses_path}")

    def _write(self, path: Path, data: bytes, what: str) -> None:
        from ctxtools.fsutil import atomic_write

        reason = atomic_write(path, data, durable=False)
        if reason:
            self._note(what, reason)

    def _note(self, what: str, reason: str) -> None:
        note = f"mention {what} not saved: {reason}"
        if note not in self.notes:
            self.notes.append(note)

    # -- files under the root -------------------------------------------------------------

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

    def _list(self) -> tuple[list[str], str, int]:
        """(the files to index, "git" or "walk", how many the listing held before the cap)."""
        from ctxtools.repomap import files as filesmod

        names = filesmod.git_ls_files(self.root)
        via = "git" if names is not None else "walk"
        if names is None:
            try:
                names, _ = filesmod.walk_files(self.root)
            except RecursionError:  # a tree nested deeper than the walk can recurse
                names = []
                self.notes.append("mention index empty: the directory tree is too deep to list")
        names = [n for n in names if not filesmod.vendored(n)]
        names.sort(key=filesmod.depth_key)
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
        import json

        files, via, listed = self._list()
        truncated = listed > self.max_entries
        self._set_files(files, truncated)
        self._from_cache = False
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
        data = json.dumps(doc, separators=(",", ":")).encode("utf-8")
        self._write(self.index_path, data, "index")

    def _load_cached(self) -> bool:
        import json

        try:
            doc = json.loads(self.index_path.read_bytes())
            if (
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
        self._from_cache = True
        return True

    def _set_files(self, files: list[str], truncated: bool) -> None:
        by_name: dict[str, list[str]] = {}
        for rel in files:
            by_name.setdefault(rel.rsplit("/", 1)[-1], []).append(rel)
        self._files = files
        self._by_name = by_name
        self.index_truncated = truncated

    def _index(self) -> dict[str, list[str]]:
        if self._by_name is None:
            if self._load_cached():
                self.index_state = "cached"
            else:
                self._build()
                self.index_state = "built"
        assert self._by_name is not None
        return self._by_name

    def _rebuild(self) -> dict[str, list[str]]:
        self._build()
        self.index_state = "rebuilt"
        assert self._by_name is not None
        return self._by_name

    # -- resolving ----------------------------------------------------------------------------

    def resolve(self, mention: Mention) -> Resolution:
        """Resolve a path or basename MENTION (see the module docstring)."""
        if mention.kind not in ("path", "basename"):
            raise ValueError(f"only path and basename mentions resolve, not {mention.kind!r}")
        names = _variants(mention)
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
        if self._from_cache and (found is None or vanished):
            # The cache may predate this file (or list one since removed): rebuild once.
            self._rebuild()
            found, _ = self._search(mention, names)
        return found if found is not None else self._unresolved(mention, self._index())

    def _relative(self, name: str) -> str | None:
        """NAME as a clean path relative to the root; an absolute NAME inside the root is
        made relative. None when NAME leaves the root."""
        if name.startswith("/"):
            absolute = os.path.normpath(name)
            for base in (os.path.abspath(self.root), self.root_real):
                if absolute.startswith(base.rstrip(os.sep) + os.sep):
                    return _clean_rel(absolute[len(base.rstrip(os.sep)) + 1 :])
            return None
        return _clean_rel(name)

    def _search(self, mention: Mention, names: list[str]) -> tuple[Resolution | None, bool]:
        """The resolution through the index, or None; and whether a file the index
        listed for it has since gone."""
        by_name = self._index()
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
            stems = fit([p for n, ps in by_name.items() if _stem(n) == base for p in ps])
            if stems:
                return stems, f"named {base}.* (by stem)"
        low = base.casefold()
        folded = fit(
            [
                p
                for n, ps in by_name.items()
                if n.casefold() == low or (not has_ext and _stem(n).casefold() == low)
                for p in ps
            ]
        )
        if folded:
            return folded, f"named {base} ignoring case"
        return [], ""

    def _choose(self, mention: Mention, found: list[str], how: str) -> Resolution:
        from ctxtools.repomap.core import is_test_path

        uses = self.uses()
        now = self._now()
        scored = {p: frecency(*uses[p], now) if p in uses else 0.0 for p in found}
        ranked = sorted(
            found, key=lambda p: (-scored[p], is_test_path(p), p.count("/"), p.split("/"))
        )
        best = ranked[0]
        if len(ranked) == 1:
            return Resolution(mention, best, ranked, f"only file {how}")
        if scored[best] > 0 and scored[best] > scored[ranked[1]]:
            why = f"highest frecency ({scored[best]:.2f})"
        else:
            tied = [p for p in ranked if scored[p] == scored[best]]
            lead = "frecency tie" if scored[best] > 0 else "none used before"
            if is_test_path(best) != is_test_path(tied[1]):
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
            reason = f"not found{capped}; closest: {', '.join(close)}"
        else:
            reason = f"not found{capped}; nothing close"
        return Resolution(mention, None, candidates, reason)


def _wide(ch: str) -> bool:
    return not ch.isascii() and unicodedata.east_asian_width(ch) in ("W", "F")


def _variants(mention: Mention) -> list[str]:
    """The names a mention may mean, in the order tried: as parsed; with its stripped
    punctuation put back (a file named ``notes.``); without a run of CJK text glued to its
    end (``修复@views.py里的问题`` means ``views.py``), since CJK prose has no spaces."""
    raw = mention.raw
    out = [raw]
    trailing = mention.trailing
    out.extend(raw + trailing[:k] for k in range(len(trailing), 0, -1))
    if raw and _wide(raw[-1]):
        cut = len(raw)
        while cut > 0 and _wide(raw[cut - 1]):
            cut -= 1
        if cut > 0 and any(ch.isalnum() for ch in raw[:cut]):
            out.append(raw[:cut])
    return out


def _stem(name: str) -> str:
    dot = name.rfind(".")
    return name[:dot] if dot > 0 else name


def _clean_rel(name: str) -> str | None:
    """NAME as a clean POSIX path relative to the root, or None when it leaves the root
    (absolute, or ``..`` past the top) or is empty."""
    if not name or name.startswith("/") or "\0" in name:
        return None
    parts: list[str] = []
    for part in name.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
            continue
        parts.append(part)
    return "/".join(parts) or None
