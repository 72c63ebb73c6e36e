"""The store's disk primitives: its directories, its lock, its errors, its leftovers.

The bytes themselves are written with ``ctxtools.fsutil`` (``write_temp``, ``replace_file``:
the toolkit's one atomic write -- temporary file ``.tmp-<pid>-*`` beside the target,
fdatasync, ``os.replace``, directory fsync). This module adds what only the store needs:

* ``ensure_dir`` -- the root (mode 0700) and a directory under it, created on first write;
* ``open_dir`` -- a directory of the store, reached from the root one name at a time
  without following a symbolic link (the store makes none: a link in it, to anywhere, is
  ``StrayEntry``, and nothing is read, written or removed through it); ``open_file`` a
  file of the store the same way (a link, a FIFO, a directory: ``NotRegularFile``);
* ``lock`` -- ``flock`` on ``ROOT/.lock``: writers share it, gc/rm/compaction take it alone;
  ``look_lock`` takes it alone for a dry run, through a read-only descriptor;
* ``store_error`` -- an ``OSError`` as the store's one-line ``StoreError``;
  ``not_a_directory`` -- the one error for a root that is a file (or under one);
* ``tmp_is_dead`` -- whether a temporary file is a leftover that gc may remove.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from ctxtools.errors import StoreError
from ctxtools.fsutil import TMP_NAME_RE

TMP_STALE_SECONDS = 24 * 3600  # a temporary file this old is a leftover, whoever wrote it
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC
# open(2) of a symbolic link with O_NOFOLLOW: ELOOP (Linux, macOS), EMLINK (FreeBSD).
_LINK_ERRNOS = frozenset({errno.ELOOP, errno.EMLINK})


def store_error(root: Path, exc: OSError, doing: str) -> StoreError:
    """The StoreError for EXC, met while DOING something in the store at ROOT."""
    reason = exc.strerror or str(exc)
    if exc.errno == errno.ENOSPC:
        reason = "no space left on device"
    elif exc.errno in (errno.EROFS,):
        reason = "read-only file system"
    elif exc.errno in (errno.EACCES, errno.EPERM):
        reason = "permission denied"
    return StoreError(
        f"cannot {doing} in store {root}: {reason}",
        hint="nothing was changed; free space, fix permissions or use --store DIR",
    )


def not_a_directory(root: Path, *, parent: bool = False) -> StoreError:
    """The one error for a store ROOT that is a file (PARENT: a directory above it is),
    whichever command meets it."""
    return StoreError(
        f"store root {root} is not a directory" + (" (a parent is a file)" if parent else ""),
        hint="point --store or CTX_STORE at a directory",
    )


def ensure_dir(root: Path, path: Path) -> None:
    """Create the store ROOT (mode 0700) and the directory PATH under it, if missing; below
    the root, through no symbolic link (``open_dir``: a link is ``StrayEntry``)."""
    try:
        # mkdir first, never "check then create": two writers on a fresh store race.
        try:
            root.mkdir(mode=0o700, parents=True, exist_ok=True)
        except FileExistsError:  # exists and is not a directory
            raise not_a_directory(root) from None
    except NotADirectoryError as exc:
        raise not_a_directory(root, parent=True) from exc
    except OSError as exc:
        raise store_error(root, exc, "create directories") from exc
    parts = Path(path).relative_to(root).parts
    if parts:
        os.close(open_dir(root, parts, create=True))  # type: ignore[arg-type]


class StrayEntry(StoreError):
    """A name in the store that is not what the store made there: a symbolic link (the
    store makes none), or something else where one of its directories belongs. ``rel`` is
    its path under the root, ``link`` whether it is a link."""

    def __init__(self, root: Path, rel: str, *, link: bool) -> None:
        what = "a symbolic link" if link else "not a directory"
        super().__init__(
            f"{root / rel} is {what} inside the store",
            hint="the store reads, writes and removes nothing through it: remove it, "
            "or use another --store",
        )
        self.rel = rel
        self.link = link


class NotRegularFile(OSError):
    """A file of the store (a card, a blob, an index) that is a symbolic link, a FIFO, a
    directory: not read (``open_file``)."""


def open_dir(root: Path, parts: Sequence[str] = (), *, create: bool = False) -> int | None:
    """A descriptor of the directory ROOT/PARTS[0]/PARTS[1]/... of the store (the caller
    closes it), or None when one of them is missing; with CREATE, the root (``ensure_dir``)
    and each of PARTS are made first (mode 0700), so there is always one.

    The root is the user's to name and is followed as given; below it each name is opened
    from the one above without following a symbolic link, so what the descriptor reaches is
    inside the store however its directories were swapped meanwhile: a link (to anywhere,
    even inside the store) or a file where a directory belongs is ``StrayEntry`` -- the store
    makes neither, and reads, writes and removes nothing through one. Other failures:
    ``not_a_directory`` for the root, ``store_error`` for the rest.
    """
    if create:
        ensure_dir(root, root)
    try:
        fd = os.open(root, _DIR_FLAGS)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise not_a_directory(root, parent=not os.path.lexists(root)) from None
    except OSError as exc:
        raise store_error(root, exc, "open a directory") from exc
    try:
        for k in range(len(parts)):
            sub = _open_sub(root, fd, parts[: k + 1], create)
            os.close(fd)
            fd = sub
            if fd is None:
                return None
    except BaseException:
        if fd is not None:
            os.close(fd)
        raise
    return fd


def _open_sub(root: Path, fd: int, parts: Sequence[str], create: bool) -> int | None:
    """``open_dir``'s one step: the directory PARTS[-1] in FD, not followed if a link."""
    name = parts[-1]
    if create:
        try:
            os.mkdir(name, 0o700, dir_fd=fd)
        except FileExistsError:
            pass  # (a link there is not followed: mkdir does not, and open below says so)
        except OSError as exc:
            raise store_error(root, exc, "create directories") from exc
    try:
        return os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=fd)
    except FileNotFoundError as exc:
        if create:  # made a moment ago, and gone
            raise store_error(root, exc, "create directories") from exc
        return None
    except OSError as exc:
        if exc.errno not in _LINK_ERRNOS and exc.errno != errno.ENOTDIR:
            raise store_error(root, exc, "open a directory") from exc
        try:
            link = stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
        except OSError:
            link = exc.errno in _LINK_ERRNOS
        raise StrayEntry(root, "/".join(parts), link=link) from None


def open_file(name: str | os.PathLike, dir_fd: int | None = None) -> int:
    """A read-only descriptor of the regular file NAME (in the directory DIR_FD), which is
    not followed if it is a symbolic link and not waited on if it is a FIFO:
    ``NotRegularFile`` then (and for a directory, a device); OSError as ``os.open`` raises
    it otherwise."""
    flags = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | _CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in _LINK_ERRNOS:
            raise NotRegularFile(exc.errno, "a symbolic link") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_file(name: str | os.PathLike, dir_fd: int | None = None) -> bytes:
    """The bytes of the regular file NAME (in DIR_FD), opened by ``open_file``."""
    fd = open_file(name, dir_fd)
    try:
        parts = []
        while data := os.read(fd, 1 << 20):
            parts.append(data)
        return b"".join(parts)
    finally:
        os.close(fd)


@contextlib.contextmanager
def lock(root: Path, exclusive: bool = False) -> Iterator[None]:
    """Hold the store's lock: shared (writers), or EXCLUSIVE (gc, rm, compaction)."""
    import fcntl

    ensure_dir(root, root)
    try:
        fd = os.open(root / ".lock", os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o600)
    except OSError as exc:
        if exc.errno in _LINK_ERRNOS:  # (a link is neither followed nor created through)
            raise StrayEntry(root, ".lock", link=True) from None
        raise store_error(root, exc, "take the lock") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def look_lock(root: Path) -> Iterator[None]:
    """Hold the store's lock alone for a look that changes nothing (``gc --dry-run``):
    taken on a read-only descriptor, creating nothing, so a read-only store can be looked
    at; without it when the lock file cannot be opened or locked (nothing to wait for)."""
    import fcntl

    try:
        fd = os.open(root / ".lock", os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    except OSError:
        fd = None
    try:
        if fd is not None:
            with contextlib.suppress(OSError):  # e.g. NFS: no exclusive lock on a read-only fd
                fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        if fd is not None:
            os.close(fd)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def tmp_is_dead(fname: str, path: Path | None, now: float, *, dir_fd: int | None = None) -> bool:
    """A temporary file of the toolkit's (``.tmp-<pid>-<12 hex digits>``, nothing else) is a
    leftover when its writer is gone (or it is a day old). The file is PATH, or FNAME in
    the directory DIR_FD."""
    m = TMP_NAME_RE.fullmatch(fname)
    if m is None:
        return False  # not a name the toolkit writes: somebody else's file
    try:
        if dir_fd is not None:
            age = now - os.stat(fname, dir_fd=dir_fd, follow_symlinks=False).st_mtime
        else:
            age = now - Path(path).stat().st_mtime  # type: ignore[arg-type]
    except OSError:
        return False
    pid = int(m.group(1))
    if pid == os.getpid():
        return False
    return not pid_alive(pid) or age > TMP_STALE_SECONDS
