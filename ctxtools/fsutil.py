"""Small file and size helpers shared by the store, the ruler's cache and the repo map.

The toolkit's one atomic write lives here (``replace_file``, on the primitives ``write_temp``,
``write_all``, ``fsync_dir``); the store, the caches (``atomic_write``) and ``ctx-pack -o``
(``write_output``) all go through it. Kept apart from ``ctxtools.store`` so that a command
that only needs to write one cache file or read a size like ``512K`` does not import the
whole store.
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


BINARY_PROBE = 8192  # bytes of a file's head that decide whether it is binary
BINARY_BAD_SHARE = 0.3  # share of a head's bytes outside valid UTF-8 that makes it binary


def looks_binary(head: bytes) -> bool:
    """Whether HEAD (the first bytes of a payload or file) is binary: a NUL byte in its
    first BINARY_PROBE bytes (the rule of git and of the toolkit's candidate filters), or
    more than BINARY_BAD_SHARE of them outside valid UTF-8 (random or compressed bytes that
    happen to hold no NUL). Text in another 8-bit encoding stays text: its bad bytes are
    the few accented letters."""
    probe = head[:BINARY_PROBE]
    if b"\0" in probe:
        return True
    if not probe or probe.isascii():
        return False
    text = probe.decode("utf-8", "surrogateescape")
    bad = sum(1 for ch in text[:-3] if "\udc80" <= ch <= "\udcff")  # a cut last char is fine
    return bad > BINARY_BAD_SHARE * len(probe)


def parse_size(text: str) -> int:
    """``500M``, ``1G``, ``2.5GB``, ``1024``, ``64k`` -> bytes (binary multiples), at most
    ``defaults.MAX_SIZE`` (1T): a UsageError past it."""
    from decimal import Decimal

    from ctxtools.defaults import MAX_SIZE

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)(i?[bB])?\s*", str(text))
    if not m:
        raise UsageError(f"bad size {text!r}", hint="e.g. 500M, 1G, 1048576")
    mult = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2).lower()]
    number = m.group(1)
    size = int(Decimal(number) * mult)  # exact, where a float of 400 nines is infinity
    if size > MAX_SIZE:
        shown = number if len(number) <= 24 else f"a {len(number)}-digit number"
        raise UsageError(f"size {shown}{m.group(2)} is over the maximum of 1T")
    return size


def read_at_most(fh, limit: int, chunk: int = 1 << 20) -> bytes:
    """Up to LIMIT bytes of FH, read a CHUNK at a time: ``fh.read(limit)`` asks for LIMIT
    bytes of memory at once, whatever the file holds (``--max-file-size 1T`` was a
    MemoryError on a 14-byte file)."""
    parts, size = [], 0
    while size < limit:
        data = fh.read(min(chunk, limit - size))
        if not data:
            break
        parts.append(data)
        size += len(data)
    return b"".join(parts)


TMP_PREFIX = ".tmp-"  # every temporary file the toolkit writes: .tmp-<pid>-<12 hex digits>


def temp_path(directory: str | os.PathLike) -> str:
    """A fresh temporary file name in DIRECTORY (the pid in it tells the store's gc whether
    its writer is still alive)."""
    return os.path.join(directory, f"{TMP_PREFIX}{os.getpid()}-{os.urandom(6).hex()}")


def create_temp(path: str | os.PathLike, mode: int = 0o600) -> int:
    """Create the new file PATH (never an existing one) for writing; its descriptor."""
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, mode)


def write_all(fd: int, data: bytes) -> None:
    """Write all of DATA to FD (the one place the toolkit writes a file's bytes by hand)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def fsync_dir(path: str | os.PathLike) -> None:
    """Make the entries of directory PATH durable (best effort: not every filesystem can)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_temp(
    directory: str | os.PathLike, data: bytes, *, durable: bool = True, mode: int = 0o600
) -> str:
    """A new temporary file in DIRECTORY holding DATA, fdatasync'ed when DURABLE; its path.
    Raises OSError, and then leaves nothing behind."""
    tmp = temp_path(directory)
    fd = create_temp(tmp, mode)
    try:
        try:
            write_all(fd, data)
            if durable:
                os.fdatasync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def replace_file(
    path: str | os.PathLike, data: bytes, *, durable: bool = True, mode: int = 0o600
) -> None:
    """The toolkit's one atomic write: PATH holds DATA whole, or keeps what it held.

    DATA goes to a temporary file in PATH's directory (created with MODE, less the umask),
    which is fdatasync'ed, ``os.replace``d onto PATH, and the directory fsync'ed. Without
    DURABLE, no syncing: for files whose every reader checks a checksum and takes damage
    for a miss (a crash may then leave a file that is merely useless). Raises OSError, and
    then leaves no temporary file.
    """
    directory = os.path.dirname(path) or "."
    tmp = write_temp(directory, data, durable=durable, mode=mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(directory)


def atomic_write(path: Path, data: bytes, durable: bool = True) -> str | None:
    """Write a cache file with ``replace_file``, making its directory (and the store root
    above it) when missing; a reason instead of an exception on failure."""
    directory = path.parent
    try:
        if not directory.is_dir():
            directory.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # the store
            directory.mkdir(exist_ok=True, mode=0o700)
        replace_file(path, data, durable=durable)
    except OSError as exc:
        return f"{exc.strerror or exc}: {exc.filename or directory}"
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
    """Write a user's output file with ``replace_file``, with the mode a plain
    ``open(path, "w")`` would give it; a reason on failure. The directory must exist: an
    output path is never a reason to create directories."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        return f"no such directory: {directory}"
    if os.path.isdir(path):
        return "is a directory"
    try:
        replace_file(path, data, mode=0o666)
    except OSError as exc:
        return exc.strerror or str(exc)
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
