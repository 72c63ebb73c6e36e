"""Which files of a tree the toolkit looks at: the one listing of the repo map, ctx-pack's
files and map, ``ctx-count --tree`` and the mentions' index.

In a git work tree the list is exactly what ``git ls-files -co --exclude-standard`` shows
(tracked plus untracked-not-ignored, with nested ``.gitignore`` files, ``.git/info/exclude``
and the global excludes honoured by git itself). Outside git, a walk honours ``.gitignore``
files the same way, with pathspec's gitwildmatch rules, the deepest matching rule winning.

Either way: symlinks are never followed out of the root (a symlinked directory is not
entered at all, as git does not enter one; a symlinked file is kept only when it resolves to
a regular file inside the root), vendored trees (``vendor/``, ``node_modules/``,
``third_party/``) and ``*.min.js`` are left out by path (``classify.listing_skip``), so is
what the user's filter excludes (``--exclude``, ``.ctxignore``: ``ctxtools.pathfilter``), and a
file's content is judged (``classify.content_noise``: binary, minified, generated) only when
it is about to be scanned.

A file is listed by its name (a scanner's extension or file name, a manifest), except a
script: a name with no extension and no language of its own (``bin/deploy``) is listed
when the ``#!`` line its first ``SCRIPT_HEAD`` bytes start with names a known interpreter
(``scan.script_language``). Those few bytes are all the listing ever reads, and only of
such regular files, opened without blocking (a FIFO is never opened for reading); a secret
file by its name is not opened at all.
"""

from __future__ import annotations

import os
import re
import stat
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from operator import attrgetter

from ctxtools.binary import is_binary
from ctxtools.fsutil import check_resource
from ctxtools.source.classify import listing_skip

# Directories a walk outside git never enters (a git work tree decides for itself).
WALK_SKIP_DIRS = frozenset({"__pycache__", "site-packages"})
# Files without a scanner that still belong on the map (as bare paths) when they rank.
MANIFESTS = frozenset(
    {
        "pyproject.toml",
        "setup.cfg",
        "go.mod",
        "Cargo.toml",
        "package.json",
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "tsconfig.json",
        "deno.json",
    }
)
README_RE = re.compile(r"(?i)^readme(\.(md|rst|txt|markdown|adoc))?$")

_NAME = attrgetter("name")  # a directory entry's name

SCRIPT_HEAD = 256  # bytes of an extensionless file read for its #! line
SCRIPT_MIN = len("#!/bin/sh")  # a file any shorter is no script: not opened
# Where a script that is not executable is still looked for: the top level and these
# directories (``bin/setup``). Elsewhere only an executable file is opened, so a test
# suite's thousands of extensionless data files (curl's tests/data) are not read.
SCRIPT_DIRS = frozenset(("bin", "sbin", "libexec", "script", "scripts", "tools", "hooks"))


@dataclass(slots=True)
class Candidate:
    """A file that may go on the map: its path relative to the root (with ``/``), the path
    to open, and what ``stat`` said (of the link target for an in-root symlink)."""

    rel: str
    path: str
    size: int
    mtime_ns: int
    manifest: bool = False
    ctime_ns: int = 0  # changes with permissions and owner too (chmod 000 after a run)

    @property
    def stamp(self) -> tuple[int, int]:
        """What the scan cache trusts a file by, besides its size: a file whose stamp
        matches is not opened at all."""
        return (self.mtime_ns, self.ctime_ns)


@dataclass
class Listing:
    """What ``list_files`` found. ``skipped`` counts files left out, by reason."""

    via: str  # "git" or "walk"
    candidates: list[Candidate] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    others: int = 0  # files with no scanner and no manifest role (not mapped, not read)
    filter_key: str = ""  # the user's filter it was made with (``PathFilter.key``)

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


def is_manifest(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name in MANIFESTS or bool(README_RE.match(name))


def depth_key(rel: str) -> tuple[int, str]:
    """Shallowest first, then by path: which files survive --max-files."""
    return (rel.count("/"), rel)


def _git(root: str, *args: str, capture: bool = False):
    """``git ARGS`` run in ROOT, its stdout kept when CAPTURE; None when git cannot be run.
    No optional locks: listing must not block, nor be blocked by, a git command at work."""
    import subprocess

    try:
        return subprocess.run(
            ["git", *args],
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
            check=False,
        )
    except OSError:
        return None


def git_ls_files(root: str) -> list[str] | None:
    """The files git would show under ROOT (relative to it), or None when ROOT is not in a
    git work tree (or git is missing)."""
    proc = _git(root, "ls-files", "-co", "--exclude-standard", "-z", capture=True)
    if proc is None or proc.returncode != 0:
        return None
    if not proc.stdout and _ignored_by_git(root):
        # ROOT sits inside a work tree that ignores it (a build or corpus directory): git
        # shows nothing, but the user asked for this tree, so walk it as a tree of its own.
        return None
    names = []
    seen = set()
    for raw in proc.stdout.split(b"\0"):
        if raw and raw not in seen:  # an unmerged path is listed once per stage
            seen.add(raw)
            names.append(os.fsdecode(raw))
    return names


def _ignored_by_git(root: str) -> bool:
    proc = _git(root, "check-ignore", "-q", "--no-index", ".")
    return proc is not None and proc.returncode == 0


def _inside(real: str, root_real: str) -> bool:
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


def _secret_target(real: str) -> bool:
    """Whether a link's target is a secret file by its name (``config.py -> .env``): it
    is left off the map, and out of a pack, like the file itself. Only links are judged
    here: a secret file's own name has no language to map."""
    from ctxtools.secrets import secret_filename

    return secret_filename(real.replace(os.sep, "/")) is not None


def _script_head(path: str) -> bytes:
    """The first SCRIPT_HEAD bytes of PATH, a regular file when it was looked at. Opened
    without blocking, so a FIFO put in its place since does not hang the listing (its read
    gives nothing, or EAGAIN). Raises OSError when it cannot be read."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    try:
        return os.read(fd, SCRIPT_HEAD)
    finally:
        os.close(fd)


def _script_place(rel: str) -> bool:
    head, _, _name = rel.rpartition("/")
    return not head or head.rpartition("/")[2] in SCRIPT_DIRS


class _Scripts:
    """Tells scripts among the files whose names say nothing (``list_files(scripts=True)``):
    the scanner's rules, looked up once per listing."""

    def __init__(self) -> None:
        from ctxtools.secrets import secret_filename
        from ctxtools.source.scan import script_name, shebang_language

        self.language = shebang_language  # (the name was judged by ``maybe``)
        self.name = script_name
        self.secret = secret_filename

    def maybe(self, rel: str) -> bool:
        """Whether REL's name leaves its language to a #! line (and is no secret)."""
        return self.name(rel) and self.secret(rel) is None

    def check(self, listing: Listing, rel: str, path: str, st: os.stat_result | _Stat) -> bool:
        """Whether the regular file PATH (named REL, stat ST) is a script in a language
        with a scanner: executable or where scripts live (SCRIPT_DIRS), a known
        interpreter's #! line, a head that is not binary. Counted in LISTING as unreadable
        when it cannot be opened, else as one of the others when it is no script."""
        if st.st_size < SCRIPT_MIN or not (st.st_mode & 0o111 or _script_place(rel)):
            listing.others += 1
            return False
        try:
            head = _script_head(path)
        except OSError as exc:
            check_resource(exc, path)
            listing.skip("unreadable")
            return False
        if is_binary(head) or self.language(head) is None:
            listing.others += 1
            return False
        return True


def _add(
    listing: Listing, root: str, root_real: str, rel: str, language_for, scripts, keep=None
) -> None:
    skip = listing_skip(rel)
    if skip is not None and (keep is None or not keep(rel)):
        listing.skip(skip)
        return
    manifest = script = False
    if language_for(rel) is None:
        if is_manifest(rel):
            manifest = True
        elif scripts is not None and scripts.maybe(rel):
            script = True
        else:
            listing.others += 1
            return
    path = os.path.join(root, rel)
    try:
        st = _lstat(path)
        if stat.S_ISLNK(st.st_mode):
            real = os.path.realpath(path)
            if not _inside(real, root_real):
                listing.skip("symlink outside the root")
                return
            if _secret_target(real):
                listing.skip("symlink to a secret file")
                return
            st = os.stat(path)
    except OSError as exc:
        check_resource(exc, path)
        if script:  # not there: nothing says it was a script
            listing.others += 1
            return
        # Deleted but still tracked, a dangling link, a link loop, a vanished file.
        listing.skip("unreadable")
        return
    if not stat.S_ISREG(st.st_mode):
        if script:
            listing.others += 1
        else:
            listing.skip("not a regular file")
        return
    if script and not scripts.check(listing, rel, path, st):
        return
    listing.candidates.append(
        Candidate(rel, path, st.st_size, st.st_mtime_ns, manifest, st.st_ctime_ns)
    )


class _Ignores:
    """The .gitignore files seen on the way down: (directory prefix, spec), shallow first."""

    def __init__(self) -> None:
        self.stack: list[tuple[str, object]] = []

    def ignored(self, rel: str, is_dir: bool) -> bool:
        probe = rel + "/" if is_dir else rel
        for prefix, spec in reversed(self.stack):
            if prefix and not probe.startswith(prefix):
                continue
            result = spec.check_file(probe[len(prefix) :])
            if result.include is not None:
                return bool(result.include)
        return False


def _read_gitignore(path: str):
    import pathspec

    try:
        with open(path, "rb") as fh:
            lines = fh.read().decode("utf-8", "replace").splitlines()
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except (OSError, ValueError, TypeError):
        return None


def walk_files(root: str) -> tuple[list[str], int]:
    """Files under ROOT outside git: (relative paths, directories that could not be read).

    Never enters a symlinked directory (so no loop and no escape), nor ``.git``/dot
    directories, and honours nested ``.gitignore`` files.
    """
    ignores = _Ignores()
    out: list[str] = []
    unreadable_dirs = 0

    def visit(dir_path: str, prefix: str) -> None:
        nonlocal unreadable_dirs
        try:
            with os.scandir(dir_path) as it:
                entries = sorted(it, key=_NAME)  # (C-level key: thousands of dirs)
        except OSError as exc:
            check_resource(exc, dir_path)
            unreadable_dirs += 1
            return
        pushed = False
        for entry in entries:
            if entry.name == ".gitignore":
                spec = _read_gitignore(entry.path)
                if spec is not None:
                    ignores.stack.append((prefix, spec))
                    pushed = True
                break
        for entry in entries:
            rel = prefix + entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                if entry.name.startswith(".") or entry.name in WALK_SKIP_DIRS:
                    continue
                if ignores.ignored(rel, True):
                    continue
                visit(entry.path, rel + "/")
            else:
                if ignores.ignored(rel, False):
                    continue
                out.append(rel)
        if pushed:
            ignores.stack.pop()

    visit(root, "")
    return out, unreadable_dirs


# Within ``one_listing()``: what has been read of the trees (the names under a root, each
# path's lstat), so that a second listing of the same tree reads nothing again.
_LISTED: ContextVar[dict | None] = ContextVar("ctx_listed", default=None)


@contextmanager
def one_listing():
    """A block in which each tree is listed once: its names (git's or the walk's) and
    each file's lstat are remembered for the block. ctx-pack lists its root for its files
    and again for its map; a block is one command's view of the tree, so nothing outlives
    it (a long-lived process, the MCP server, lists afresh on every call)."""
    if _LISTED.get() is not None:
        yield
        return
    token = _LISTED.set({})
    try:
        yield
    finally:
        _LISTED.reset(token)


def _names(root: str) -> tuple[str, list[str], int]:
    """(how: "git" or "walk", the names under ROOT, directories that could not be read)."""
    memo = _LISTED.get()
    key = ("names", os.path.realpath(root))
    if memo is not None and key in memo:
        return memo[key]
    names = git_ls_files(root)
    got = ("git", names, 0) if names is not None else ("walk", *walk_files(root))
    if memo is not None:
        memo[key] = got
    return got


def tree_names(root: str) -> list[str]:
    """Every name under ROOT a listing starts from (git's, else the walk's), before any is
    left out as vendored or minified: remembered for a ``one_listing`` block."""
    return _names(root)[1]


class _Stat:
    """What a listing asks of a file's lstat, kept for the block (``one_listing``): a
    whole ``os.stat_result`` (its floats and ints as objects) is about 600 bytes, which a
    50,000-file tree holds for its whole pack; this is a third of that."""

    __slots__ = ("st_mode", "st_size", "st_mtime_ns", "st_ctime_ns")

    def __init__(self, st: os.stat_result):
        self.st_mode = st.st_mode
        self.st_size = st.st_size
        self.st_mtime_ns = st.st_mtime_ns
        self.st_ctime_ns = st.st_ctime_ns


def _lstat(path: str) -> os.stat_result | _Stat:
    memo = _LISTED.get()
    if memo is None:
        return os.lstat(path)
    got = memo.get(path)
    if got is None:
        try:
            got = _Stat(os.lstat(path))
        except OSError as exc:
            got = exc
        memo[path] = got
    if isinstance(got, OSError):
        raise got
    return got


def list_files(
    root: str,
    language_for,
    *,
    scripts: bool = False,
    names: list[str] | None = None,
    path_filter=None,
    keep=None,
) -> Listing:
    """The files of ROOT that may go on the map, sorted shallowest first, then by path;
    NAMES (paths relative to ROOT) replaces the listing of ROOT (``via`` is then "list").
    PATH_FILTER (a ``pathfilter.PathFilter``: --exclude, .ctxignore) leaves out the files it
    excludes, counted in ``skipped`` as "excluded" and never opened.

    ``language_for(rel)`` says whether a file has a scanner; files without one are kept only
    when they are manifests or READMEs (shown as bare paths), or, with SCRIPTS, scripts
    whose ``#!`` line names a language with a scanner (only their head is read here); the
    others are never read. KEEP(rel) (ctx-pack's --include): a file it holds true is not
    left out as vendored or minified by its path.
    """
    root_real = os.path.realpath(root)
    listed = names is not None  # the caller's list (--files-from), relative to ROOT
    if listed:
        names, listing = sorted(set(names)), Listing("list")
    else:
        via, names, bad_dirs = _names(root)
        listing = Listing(via)
        for _ in range(bad_dirs):
            listing.skip("unreadable")
    probe = _Scripts() if scripts else None
    excluded = None
    if path_filter is not None:
        listing.filter_key = path_filter.key
        excluded = path_filter.excluded if path_filter.active else None
    for rel in names:
        if excluded is not None and excluded(rel):
            listing.skip("excluded")
            continue
        _add(listing, root, root_real, rel, language_for, probe, keep)
    listing.candidates.sort(key=lambda c: depth_key(c.rel))
    return listing
