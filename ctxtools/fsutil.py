"""Small file and size helpers shared by the store, the ruler's cache and the repo map.

Kept apart from ``ctxtools.store`` so that a command that only needs to write one cache
file or read a size like ``512K`` does not import the whole store.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ctxtools.errors import NotFoundError, UsageError

if TYPE_CHECKING:  # pathlib costs milliseconds at start-up; callers pass their own Path
    from pathlib import Path


def parse_size(text: str) -> int:
    """``500M``, ``1G``, ``2.5GB``, ``1024``, ``64k`` -> bytes (binary multiples)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)(i?[bB])?\s*", str(text))
    if not m:
        raise UsageError(f"bad size {text!r}", hint="e.g. 500M, 1G, 1048576")
    mult = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2).lower()]
    return int(float(m.group(1)) * mult)


def atomic_write(path: Path, data: bytes, durable: bool = True) -> str | None:
    """Write DATA to PATH crash-safely (temp file, fsync, rename); a reason on failure.
    Without DURABLE, no fsync: for files whose every reader checks a checksum and takes
    damage for a miss (a crash may then leave a file that is merely useless)."""
    import tempfile

    directory = path.parent
    tmp = None
    try:
        if not directory.is_dir():
            directory.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # the store
            directory.mkdir(exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".cache-", suffix=".tmp", dir=directory)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        return f"{exc.strerror or exc}: {exc.filename or directory}"
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return None


def json_text(text: str) -> str:
    """TEXT as JSON can hold it: a file name's undecodable bytes (kept as lone surrogates
    by ``os.fsdecode``) become U+FFFD."""
    if text.isascii():
        return text
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that stands for no byte
        data = text.encode("utf-8", "surrogatepass")
    return data.decode("utf-8", "replace")


def require_directory(path: str, label: str, hint: str | None = None) -> None:
    """Raise the one-line error for a LABEL (e.g. "--root x") that is not a directory:
    NotFoundError when nothing is there, InputError when something else is."""
    if os.path.isdir(path):
        return
    from ctxtools.errors import InputError

    if os.path.exists(path):
        raise InputError(f"{label}: not a directory", hint=hint)
    raise NotFoundError(f"{label}: no such directory", hint=hint)


def write_output(path: str, data: bytes) -> str | None:
    """Write a user's output file atomically (temp file beside it, fsync, rename), with the
    mode a plain ``open(path, "w")`` would give it; a reason on failure. The directory must
    exist: an output path is never a reason to create directories."""
    import tempfile

    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        return f"no such directory: {directory}"
    if os.path.isdir(path):
        return "is a directory"
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=".ctx-", suffix=".tmp", dir=directory)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        return exc.strerror or str(exc)
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return None


def unreadable_reason(path: str, *, check_access: bool = False) -> str | None:
    """Why PATH cannot be read as a file (a one-line reason), or None.

    One stat per path, since thousands of names can come through --files-from. With
    CHECK_ACCESS, also whether this process may read it (one more system call).
    """
    import stat

    try:
        if stat.S_ISDIR(os.stat(path).st_mode):
            return f"{path}: is a directory"
    except FileNotFoundError:
        return f"{path}: no such file"
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    if check_access and not os.access(path, os.R_OK):
        return f"{path}: permission denied"
    return None


def unreadable_error(bad: Mapping[str, str], hint: str | None = None) -> NotFoundError:
    """One error naming the unreadable paths BAD (path -> reason), the first ten.
    The HINT goes with a list of several; one path gets its reason alone."""
    if len(bad) == 1:
        return NotFoundError(next(iter(bad.values())))
    names = list(bad)
    listed = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    return NotFoundError(f"{len(names)} files cannot be read: {listed}", hint=hint)
