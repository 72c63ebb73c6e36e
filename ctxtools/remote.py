"""A remote git repository as a local directory, for the commands that walk a tree
(``ctx-pack URL``, ``ctx-repomap URL``, ``ctx-count --tree URL``).

``parse_remote(arg)`` tells a repository's address from a path: ``https://``, ``http://``,
``ssh://``, ``git://`` and ``file://`` URLs, and the scp-like ``user@host:owner/repo``, each
optionally followed by ``@REF`` (a branch, a tag or a commit id) after the repository's
path: ``https://host/owner/repo@v1.2``, ``git@host:owner/repo@main``.

``checkout(remote, store_root)`` shallow-fetches it (``--depth 1``, the one commit) with the
user's own ``git`` -- its configuration, credential helpers and ssh agent, so private
repositories work -- into ``STORE/remote/KEY``, KEY a hash of the URL and the ref. The next
run for the same URL and ref fetches again into the same directory (an unchanged commit
costs one round trip and no download); a ref that is a full commit id is fetched once and
never again. When the refresh fails (offline) and a copy is there, the copy is used, with a
note. The first fetch goes to a temporary directory that is renamed into place whole, so an
interrupted clone leaves nothing half made; a lock keeps two runs off the same directory.

git runs through ``runner.run``: in a session of its own, with no terminal, so it never
prompts for a password; a credential it would have to ask for is an error instead. git
missing, a fetch that fails (a bad URL, an unknown ref) or one that takes over
``GIT_TIMEOUT`` seconds is a ``RemoteError`` (exit 1) in one line, with git's last line.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from ctxtools.errors import InputError, UsageError

GIT_TIMEOUT = 900.0  # seconds one git command may take (a large repository's fetch)
_SCHEMES = ("https", "http", "ssh", "git", "file")
_URL_RE = re.compile(r"^(?:" + "|".join(_SCHEMES) + r")://", re.I)
# user@host:path, as git reads it: no slash before the colon, and not a URL.
_SCP_RE = re.compile(r"^([A-Za-z0-9._~-]+@[A-Za-z0-9.-]+):(?!//)(.+)$")
_PASSWORD_RE = re.compile(r"^([a-z]+://[^/@:]*:)[^/@]*@", re.I)  # scheme://user:PASSWORD@
_SHA_RE = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


class RemoteError(InputError):
    """A remote repository that cannot be had: git missing, a failed or stopped fetch."""


@dataclass(frozen=True)
class Remote:
    """A repository's URL as git takes it, and the ref to check out (None: its HEAD)."""

    url: str
    ref: str | None = None

    @property
    def label(self) -> str:
        """How messages name it: the URL (a password in it masked) and the ref."""
        url = _PASSWORD_RE.sub(r"\1***@", self.url)
        return url + (f"@{self.ref}" if self.ref else "")

    def key(self) -> str:
        """The name of its directory in the cache: the URL and the ref, hashed."""
        import hashlib  # (here: a pack of a local tree only asks whether FILE is a URL)

        return hashlib.sha256(f"{self.url}\0{self.ref or ''}".encode()).hexdigest()[:24]


@dataclass
class Checkout:
    """A remote's files on disk: the work tree, the commit it holds, and notes for stderr."""

    path: str
    commit: str
    remote: Remote
    notes: list[str] = field(default_factory=list)


def parse_remote(arg: str) -> Remote | None:
    """ARG as a Remote, or None when it is not a repository's address (a path)."""
    if _URL_RE.match(arg):
        parts = urlsplit(arg)
        prefix = arg[: len(arg) - len(parts.path)] if parts.path else arg
        path = parts.path if parts.path else ""
        if parts.query or parts.fragment:
            raise UsageError(f"{arg}: a repository URL takes no ?query or #fragment")
    else:
        m = _SCP_RE.match(arg)
        if m is None:
            return None
        prefix, path = m.group(1) + ":", m.group(2)
    path, at, ref = path.partition("@")
    if at and (not ref or ref.startswith("-") or any(c.isspace() for c in ref)):
        raise UsageError(f"{arg}: {ref!r} is not a git ref", hint="URL@BRANCH, @TAG or @COMMIT")
    if not path.strip("/"):
        raise UsageError(f"{arg}: no repository path in the URL")
    return Remote(prefix + path, ref or None)


def checkout(remote: Remote, store_root: str | os.PathLike, *, timeout: float = GIT_TIMEOUT):
    """REMOTE's files under STORE_ROOT/remote (see the module): a Checkout."""
    import shutil  # (here: a pack of a local tree asks only whether its FILE is a URL)

    from ctxtools.store.disk import ensure_dir

    root = Path(store_root)
    base = root / "remote"
    ensure_dir(root, base)
    dest = base / remote.key()
    with _locked(base / f"{remote.key()}.lock"):
        if (dest / ".git").is_dir():
            try:
                return _refresh(remote, dest, timeout)
            except RemoteError:  # the copy itself is broken (no HEAD): fetch it anew
                shutil.rmtree(dest, ignore_errors=True)
        tmp = base / f"{remote.key()}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)  # a clone an earlier run left half made
        try:
            _git(["init", "--quiet", str(tmp)], timeout, remote)
            commit = _fetch(remote, tmp, timeout)
            os.rename(tmp, dest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return Checkout(str(dest), commit, remote)


def _refresh(remote: Remote, dest: Path, timeout: float) -> Checkout:
    """The cached copy at DEST brought up to date; kept as it is when that fails."""
    head = _git(["-C", str(dest), "rev-parse", "HEAD"], timeout, remote).strip()
    if remote.ref and _SHA_RE.match(remote.ref) and head == remote.ref:
        return Checkout(str(dest), head, remote)  # a commit never changes
    try:
        return Checkout(str(dest), _fetch(remote, dest, timeout), remote)
    except RemoteError as exc:
        note = f"note: {remote.label}: could not refresh ({exc}); using the copy of {head[:12]}"
        return Checkout(str(dest), head, remote, [note])


def _fetch(remote: Remote, where: Path, timeout: float) -> str:
    """Fetch REMOTE's ref (one commit deep) into WHERE and check it out; its commit id."""
    repo = ["-C", str(where)]
    _git(
        [
            *repo,
            "fetch",
            "--quiet",
            "--depth",
            "1",
            "--no-tags",
            "--",
            remote.url,
            remote.ref or "HEAD",
        ],
        timeout,
        remote,
    )
    _git([*repo, "checkout", "--quiet", "--force", "--detach", "FETCH_HEAD"], timeout, remote)
    return _git([*repo, "rev-parse", "HEAD"], timeout, remote).strip()


def _git(args: list[str], timeout: float, remote: Remote) -> str:
    """Run ``git ARGS`` (no terminal: it never prompts); its stdout, or a RemoteError."""
    from ctxtools.errors import CommandNotFoundError
    from ctxtools.runner import run

    argv = ["git", "-c", "advice.detachedHead=false", "-c", "init.defaultBranch=main", *args]
    try:
        done = run(argv, b"", timeout=timeout, cap=1 << 20)
    except CommandNotFoundError:
        raise RemoteError(
            f"{remote.label}: git is not on PATH (a remote repository is fetched with git)",
            hint="install git, or clone it yourself and give the directory",
        ) from None
    if done.timed_out:
        raise RemoteError(
            f"{remote.label}: git {args[2] if args[0] == '-C' else args[0]} "
            f"took over {timeout:g} s; stopped"
        )
    if done.returncode != 0:
        lines = [x.strip() for x in done.stderr_tail.decode("utf-8", "replace").splitlines()]
        said = [x for x in lines if x.startswith(("fatal:", "error:"))] or [x for x in lines if x]
        why = said[0] if said else f"git exited with status {done.returncode}"
        raise RemoteError(f"{remote.label}: cannot fetch: {why}")
    return done.stdout.decode("utf-8", "replace")


@contextlib.contextmanager
def _locked(path: Path):
    """An exclusive lock on PATH (created) for the block: one run per cached repository."""
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
