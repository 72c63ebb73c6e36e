"""The store's disk primitives: its directories, its lock, its errors, its leftovers.

The bytes themselves are written with ``ctxtools.fsutil`` (``write_temp``, ``replace_file``:
the toolkit's one atomic write -- temporary file ``.tmp-<pid>-*`` beside the target,
fdatasync, ``os.replace``, directory fsync). This module adds what only the store needs:

* ``ensure_dir`` -- the root (mode 0700) and a directory under it, created on first write;
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
from collections.abc import Iterator
from pathlib import Path

from ctxtools.errors import StoreError
from ctxtools.fsutil import TMP_NAME_RE

TMP_STALE_SECONDS = 24 * 3600  # a temporary file this old is a leftover, whoever wrote it


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
    """Create the store ROOT (mode 0700) and the directory PATH under it, if missing."""
    try:
        # mkdir first, never "check then create": two writers on a fresh store race.
        try:
            root.mkdir(mode=0o700, parents=True, exist_ok=True)
        except FileExistsError:  # exists and is not a directory
            raise not_a_directory(root) from None
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except NotADirectoryError as exc:
        raise not_a_directory(root, parent=True) from exc
    except OSError as exc:
        raise store_error(root, exc, "create directories") from exc


@contextlib.contextmanager
def lock(root: Path, exclusive: bool = False) -> Iterator[None]:
    """Hold the store's lock: shared (writers), or EXCLUSIVE (gc, rm, compaction)."""
    import fcntl

    ensure_dir(root, root)
    try:
        fd = os.open(root / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
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
        fd = os.open(root / ".lock", os.O_RDONLY | os.O_CLOEXEC)
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


def tmp_is_dead(fname: str, path: Path, now: float) -> bool:
    """A temporary file of the toolkit's (``.tmp-<pid>-<12 hex digits>``, nothing else) is a
    leftover when its writer is gone (or it is a day old)."""
    m = TMP_NAME_RE.fullmatch(fname)
    if m is None:
        return False  # not a name the toolkit writes: somebody else's file
    try:
        age = now - path.stat().st_mtime
    except OSError:
        return False
    pid = int(m.group(1))
    if pid == os.getpid():
        return False
    return not pid_alive(pid) or age > TMP_STALE_SECONDS
