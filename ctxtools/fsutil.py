"""Small file and size helpers shared by the store, the ruler's cache and the repo map.

The toolkit's one atomic write lives here (``replace_file``, on the primitives ``write_temp``,
``write_all``, ``fsync_dir``); the store, the caches (``atomic_write``) and ``ctx-pack -o``
(``write_output``) all go through it. Kept apart from ``ctxtools.store`` so that a command
that only needs to write one cache file or read a size like ``512K`` does not import the
whole store.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ctxtools.errors import NotFoundError, UsageError

if TYPE_CHECKING:  # pathlib costs milliseconds at start-up; callers pass their own Path
    from pathlib import Path


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


def read_whole(path: str | os.PathLike) -> bytes:
    """Every byte of the file at PATH (what ``open(path, "rb").read()`` gives), read without
    a Python file object, whose making costs a pack that reads thousands of files a third
    of each read. Raises OSError as opening or reading it would."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        want = os.fstat(fd).st_size + 1  # (one read for a file that does not grow meanwhile)
        parts = []
        while data := os.read(fd, want):
            parts.append(data)
            want = 1 << 20
        return parts[0] if len(parts) == 1 else b"".join(parts)
    finally:
        os.close(fd)


# Failures that say the system ran out of something (open files, memory), not that the
# input is bad: a file that cannot be read for one of them is an error, never a skip.
RESOURCE_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM})


def check_resource(exc: OSError, path: object) -> None:
    """Raise ResourceError when EXC, met while reading PATH, is a resource limit's (too
    many open files, no memory): the caller that would skip an unreadable file must not."""
    if exc.errno not in RESOURCE_ERRNOS:
        return
    from ctxtools.errors import ResourceError

    if exc.errno == errno.ENOMEM:
        hint = "out of memory: free some, or give fewer or smaller inputs"
    else:
        hint = "the open-file limit was reached: raise it (ulimit -n) or give fewer files"
    raise ResourceError(f"{os.fsdecode(path)}: {exc.strerror or exc}", hint=hint) from exc


TMP_PREFIX = ".tmp-"  # every temporary file the toolkit writes: .tmp-<pid>-<12 hex digits>
TMP_NAME_RE = re.compile(r"\.tmp-([0-9]{1,10})-[0-9a-f]{12}")  # that name whole: gc's to sweep


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


class _Ending(BaseException):
    """SIGTERM or SIGHUP met while a temporary file was being written (``temp_guard``)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_ending(signum: int, _frame: object) -> None:
    raise _Ending(signum)


@contextlib.contextmanager
def temp_guard():
    """While a temporary file is written and put in place: SIGTERM or SIGHUP -- a CI job's
    timeout, a closed terminal -- whose default ends the process at once, leaving the file
    behind (a stash of stdin: hundreds of MB in the store until ``--gc``), first unwinds
    the block, whose ``except BaseException`` removes the file, and then ends the process by
    that signal as the default would have. Only for a signal whose disposition is the
    default (a caller's own handler, ``nohup``'s ignore, stay in charge; an enclosing guard
    is one), and only in the main thread (the one that takes signals)."""
    import signal
    import threading

    sigs = []
    if threading.current_thread() is threading.main_thread():
        sigs = [s for s in (signal.SIGTERM, signal.SIGHUP) if signal.getsignal(s) == signal.SIG_DFL]
    for s in sigs:
        signal.signal(s, _raise_ending)
    try:
        yield
    except _Ending as ending:
        for s in sigs:
            signal.signal(s, signal.SIG_DFL)
        # (unblocked first: its handler may have run inside a window that blocks it, a
        # helper thread's start, before that window restored the mask)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, (ending.signum,))
        os.kill(os.getpid(), ending.signum)
        raise SystemExit(128 + ending.signum) from None  # (only when the signal is blocked)
    finally:
        for s in sigs:
            signal.signal(s, signal.SIG_DFL)


def write_temp(
    directory: str | os.PathLike,
    data: bytes | list[bytes],
    *,
    durable: bool = True,
    mode: int = 0o600,
    like: os.stat_result | None = None,
) -> str:
    """A new temporary file in DIRECTORY holding DATA (bytes, or a list of pieces written one
    after the other: a large body need not be copied behind its header), fdatasync'ed when
    DURABLE; its path.
    With LIKE (a file's stat), it takes that file's owner (where this process may set it)
    and permission bits instead of MODE (``kept_mode``: set-id bits too, when the owner
    is kept). Raises OSError, and then leaves nothing behind. (Its callers, ``replace_file``
    and a batch of stashes, hold ``temp_guard`` around it and the rename after it.)"""
    tmp = temp_path(directory)
    fd = create_temp(tmp, mode)
    try:
        try:
            if like is not None and (like.st_uid, like.st_gid) != (os.geteuid(), os.getegid()):
                with contextlib.suppress(OSError):  # only root may give a file away
                    os.fchown(fd, like.st_uid, like.st_gid)
            for piece in data if isinstance(data, list) else (data,):
                write_all(fd, piece)
            if like is not None:  # after the write, which would clear a set-id bit
                os.fchmod(fd, kept_mode(like, os.fstat(fd)))
            if durable:
                os.fdatasync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def kept_mode(old: os.stat_result, new: os.stat_result) -> int:
    """The permission bits a file NEW that replaces OLD takes: OLD's exactly (a set-user-ID,
    set-group-ID or sticky bit included), except a set-id bit whose owner (user, group) the
    new file could not take over -- a program this process wrote must not run as someone
    it is not."""
    import stat

    mode = stat.S_IMODE(old.st_mode)
    if new.st_uid != old.st_uid:
        mode &= ~stat.S_ISUID
    if new.st_gid != old.st_gid:
        mode &= ~stat.S_ISGID
    return mode


def file_identity(path: str | os.PathLike) -> tuple[int, int] | None:
    """(device, inode) of the file PATH names through any symbolic link, or None when
    nothing (readable) is there: two names of one file -- a hard link, a symbolic link,
    ``a/../b`` -- have the same identity."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def replace_file(
    path: str | os.PathLike,
    data: bytes | list[bytes],
    *,
    durable: bool = True,
    mode: int = 0o600,
    like: os.stat_result | None = None,
) -> None:
    """The toolkit's one atomic write: PATH holds DATA whole (bytes, or a list of pieces),
    or keeps what it held.

    DATA goes to a temporary file in PATH's directory (created with MODE, less the umask;
    or with the owner and mode of LIKE, the stat of the file it replaces), which is
    fdatasync'ed, ``os.replace``d onto PATH, and the directory fsync'ed. Without DURABLE,
    no syncing: for files whose every reader checks a checksum and takes damage for a miss
    (a crash may then leave a file that is merely useless). Raises OSError, and then leaves
    no temporary file. Whatever PATH is, it becomes a new regular file: the store's own
    files are that; a path a user names goes through ``write_output``, which decides.
    """
    directory = os.path.dirname(path) or "."
    with temp_guard():
        tmp = write_temp(directory, data, durable=durable, mode=mode, like=like)
        try:
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    if durable:
        fsync_dir(directory)


def atomic_write(path: Path, data: bytes | list[bytes], durable: bool = True) -> str | None:
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


def json_name(name: str, key: str = "path") -> dict:
    """A file NAME as a JSON record holds it: ``{KEY: json_text(NAME)}``; and when NAME
    holds a byte that is not UTF-8 (shown there as U+FFFD, so that two such names may look
    alike and neither can be opened by it), also ``KEY_quoted``: the name as every text
    output shows it (``quoting.quote_name``: ``"b\\377.py"``, in its double quotes), from
    which a script gets the name's bytes back by undoing the C escapes between the quotes
    -- ``codecs.escape_decode(q[1:-1].encode())[0]`` in Python, ``printf '%b'`` in a
    shell. A name that is valid UTF-8 has no ``KEY_quoted``: KEY is the name itself."""
    shown = json_text(name)
    if shown == name:
        return {key: name}
    from ctxtools.quoting import quote_name

    return {key: shown, f"{key}_quoted": quote_name(name)}


def json_texts(obj):
    """OBJ (dicts, lists, tuples, scalars) with every string in it, keys too, as
    ``json_text`` makes it: what a JSON writer can write when a name or a file's text holds
    bytes that are not UTF-8."""
    if isinstance(obj, str):
        return json_text(obj)
    if isinstance(obj, dict):
        return {json_texts(k): json_texts(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_texts(v) for v in obj]
    return obj


def check_cwd(path: str, label: str | None = None) -> None:
    """Raise NotFoundError, naming LABEL (default: PATH, as ``quoting.quote_name`` shows
    it) and the cause, when PATH is relative and the working directory it is relative to was
    removed (a checkout deleted and made again under the shell): PATH then names nothing,
    whatever is on disk -- not "no such file", which would send the user looking for it. An
    absolute PATH needs no working directory: nothing is raised."""
    if os.path.isabs(path) or current_dir() is not None:
        return
    from ctxtools.quoting import quote_name

    raise NotFoundError(
        f"{label or quote_name(path)}: relative, and the current directory no longer exists",
        hint="cd to a directory that does, or give an absolute path",
    )


def require_directory(path: str, label: str, hint: str | None = None) -> None:
    """Raise the one-line error for a LABEL (e.g. "--root x") that is not a directory:
    NotFoundError when nothing is there (or PATH is relative to a working directory that
    was removed, ``check_cwd``), InputError when something else is."""
    check_cwd(path, label)
    if os.path.isdir(path):
        return
    from ctxtools.errors import InputError

    if os.path.exists(path):
        raise InputError(f"{label}: not a directory", hint=hint)
    raise NotFoundError(f"{label}: no such directory", hint=hint)


def write_output(path: str, data: bytes) -> str | None:
    """Write a user's output file PATH (``ctx-pack -o``); a one-line reason on failure.

    What PATH is decides how (``output_plan``): a new path, or a regular file with one link
    in a directory this process may write, is replaced atomically (``replace_file``) -- a
    new file with the mode a plain ``open(path, "w")`` gives it, an existing one keeping
    its mode (and owner, where allowed). A FIFO, a character device (``/dev/null``, a
    terminal), a file with several hard links, or a file in a directory that cannot take a
    temporary file is written through, as a shell's ``>`` would (so not atomically). A
    symbolic link is judged by what it points at, and stays a link (a regular target is
    replaced in its own directory); ``/dev/stdout``, ``/dev/fd/N`` and ``/proc/self/fd/N``
    write to this process's descriptor N. A block device, a socket or a directory is
    refused. The directory must exist: an output path is never a reason to create any.
    """
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        if os.path.exists(directory):  # (m1.py/x: a file where a directory was meant)
            return f"not a directory: {directory}"
        return f"no such directory: {directory}"
    how, where = output_plan(path)
    try:
        if how == "refuse":
            return where
        if how == "descriptor":
            write_all(int(where), data)
        elif how == "through":
            _write_through(where, data)
        else:
            try:
                st = os.stat(where)
            except FileNotFoundError:
                st = None
            try:
                replace_file(where, data, mode=0o666, like=st)
            except PermissionError:  # a directory we may not write after all (sticky, ACL)
                if st is None:
                    raise
                _write_through(where, data)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def output_plan(path: str) -> tuple[str, str]:
    """How ``write_output`` writes PATH: ("replace", the file to replace atomically),
    ("through", the path to open and write), ("descriptor", this process's descriptor
    number) or ("refuse", why)."""
    import stat

    fd = _own_descriptor(path)
    if fd is not None:
        return "descriptor", str(fd)
    try:
        st = os.stat(path)  # what the path is, through any symbolic link
    except FileNotFoundError:
        # Nothing there; through a dangling link, its target is created (as ``>`` does).
        return ("through", path) if os.path.islink(path) else ("replace", path)
    except OSError as exc:
        return "refuse", exc.strerror or str(exc)
    kind = st.st_mode
    if stat.S_ISDIR(kind):
        return "refuse", "is a directory"
    if stat.S_ISFIFO(kind) or stat.S_ISCHR(kind):
        return "through", path
    if not stat.S_ISREG(kind):
        return "refuse", (
            "not a regular file, a FIFO or a character device (a block device or a socket); "
            "nothing was written"
        )
    target = os.path.realpath(path)
    try:
        same = os.path.samestat(os.lstat(target), st)
    except OSError:
        same = False
    if not same or st.st_nlink > 1:  # a name that is not the file, or one of its hard links
        return "through", path
    if not os.access(os.path.dirname(target), os.W_OK | os.X_OK):
        return "through", path  # no temporary file can go beside it
    if not os.access(target, os.W_OK):
        return "refuse", "permission denied"
    return "replace", target


def _own_descriptor(path: str) -> int | None:
    """The descriptor N of this process that PATH names -- ``/dev/stdout``, ``/dev/fd/N``,
    ``/proc/self/fd/N`` or a link to one -- or None."""
    own = re.compile(rf"/(?:dev/fd|proc/(?:self|{os.getpid()})/fd)/(\d+)")
    name = os.path.abspath(path)
    for _ in range(40):  # the kernel's own limit of links in a row
        m = own.fullmatch(name)
        if m:
            return int(m.group(1))
        try:
            link = os.readlink(name)
        except OSError:  # not a link (or not there)
            return None
        name = os.path.normpath(os.path.join(os.path.dirname(name), link))
    return None


def _write_through(path: str, data: bytes) -> None:
    """Open PATH (a FIFO, a device, a hard-linked file; created through a dangling link) as
    ``>`` would, and write DATA to it; a regular file is fdatasync'ed."""
    import stat

    fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        before = os.fstat(fd)
        write_all(fd, data)
        if stat.S_ISREG(before.st_mode):
            if stat.S_IMODE(os.fstat(fd).st_mode) != stat.S_IMODE(before.st_mode):
                with contextlib.suppress(OSError):  # the kernel clears set-id bits on write
                    os.fchmod(fd, stat.S_IMODE(before.st_mode))
            os.fdatasync(fd)
    finally:
        os.close(fd)


def unreadable_reason(path: str, *, check_access: bool = False) -> str | None:
    """Why PATH cannot be read as a file (a one-line reason naming it as
    ``quoting.quote_name`` shows it), or None.

    One stat per path, since thousands of names can come through --files-from. With
    CHECK_ACCESS, also whether this process may read it (one more system call).
    """
    import stat

    from ctxtools.quoting import quote_name

    shown = quote_name(path)
    try:
        if stat.S_ISDIR(os.stat(path).st_mode):
            return f"{shown}: is a directory"
    except FileNotFoundError:
        if not os.path.isabs(path) and current_dir() is None:
            return f"{shown}: relative, and the current directory no longer exists"
        return f"{shown}: no such file"
    except OSError as exc:
        check_resource(exc, path)
        return f"{shown}: {exc.strerror or exc}"
    if check_access and not os.access(path, os.R_OK):
        return f"{shown}: permission denied"
    return None


def current_dir() -> str | None:
    """The working directory, or None when it was removed (``os.getcwd`` fails): a
    relative path then names nothing, an absolute one is as good as ever."""
    try:
        return os.getcwd()
    except FileNotFoundError:
        return None


def unreadable_error(bad: Mapping[str, str], hint: str | None = None) -> NotFoundError:
    """One error naming the unreadable paths BAD (path -> reason), the first ten (as
    ``quoting.quote_name`` shows them). The HINT goes with a list of several; one path
    gets its reason alone."""
    if len(bad) == 1:
        return NotFoundError(next(iter(bad.values())))
    from ctxtools.quoting import quote_name

    names = [quote_name(n) for n in bad]
    listed = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    return NotFoundError(f"{len(names)} files cannot be read: {listed}", hint=hint)
