"""Whether an output file is one of a run's inputs: ``-o FILE`` must never replace what
the run reads (ctx-excerpt's files, ctx-compact's transcript, the file on standard input, a
source file of the directory ctx-repomap maps), by any name -- a hard or symbolic link,
another spelling of the path. ctx-pack's own guard (``pack.inputs.OutputGuard``) also knows
the files a pack finds in its directories and the earlier packs it may replace.

Nor may ``-o`` write in the store (``store_file_named``): its files are the store's to
write, and a blob replaced is every handle that shares it lost."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

LIST_MAX = 1 << 24  # bytes of a --files-from list read to find the files it names


def input_named(
    output: str,
    *,
    files: Iterable[str] = (),
    files_from: str | None = None,
    null: bool = False,
    reads_stdin: bool = False,
    tree: str | None = None,
) -> str | None:
    """Which input OUTPUT is, in words (``FILE x``, ``--files-from entry x``, ``standard
    input``, ``x, a file of the mapped directory``), or None. Only an existing regular file
    can be one: a terminal, ``/dev/null`` or a FIFO is written through, nothing replaced.
    FILES are the run's file arguments, FILES_FROM its list of more (``-``: stdin; NUL
    between names with NULL), READS_STDIN whether it reads standard input, TREE the
    directory it maps."""
    from ctxtools.fsutil import file_identity

    if not os.path.isfile(output):
        return None  # nothing there yet, or nothing a write replaces
    target = file_identity(output)
    for label, path in _named(files, files_from, null):
        if file_identity(path) == target:
            return label
    if reads_stdin and _stdin_identity() == target:
        return "standard input"
    return _mapped_file(output, tree) if tree is not None else None


def _named(files: Iterable[str], files_from: str | None, null: bool) -> list[tuple[str, str]]:
    named = [(f"FILE {f}", f) for f in files]
    if files_from in (None, "-"):
        return named
    named.append((f"--files-from {files_from}", files_from))
    try:
        with open(files_from, "rb") as fh:
            raw = fh.read(LIST_MAX)
    except OSError:
        return named
    for name in raw.split(b"\0" if null else b"\n"):
        name = name if null else name.rstrip(b"\r")
        if name:
            named.append((f"--files-from entry {os.fsdecode(name)}", os.fsdecode(name)))
    return named


def _stdin_identity() -> tuple[int, int] | None:
    """(device, inode) of what standard input is (``fsutil.file_identity``'s, for fd 0)."""
    try:
        st = os.fstat(0)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _mapped_file(output: str, tree: str) -> str | None:
    """OUTPUT's name in TREE when it is a file there that ctx-repomap reads (a source file
    of a mapped language, a manifest), else None."""
    from ctxtools.source.listing import is_manifest
    from ctxtools.source.scan import language_for

    real, root = os.path.realpath(output), os.path.realpath(tree)
    if not real.startswith(root.rstrip(os.sep) + os.sep):
        return None
    rel = os.path.relpath(real, root).replace(os.sep, "/")
    if language_for(rel) or is_manifest(rel):
        return f"{rel}, a file of the mapped directory"
    return None


def store_file_named(output: str, root: str | os.PathLike) -> str | None:
    """Where writing OUTPUT would write in the store at ROOT, in words (``inside the store
    ROOT``, ``the store's file blobs/ab/... by another name (a hard link)``), or None. Not
    under the root, whatever the path's spelling, a symbolic link on the way (followed to
    its end, dangling or not) or another path of the root's directory (a bind mount); nor
    over a file outside it that is a hard link to a store file: ``-o`` writes a file of
    several links through, and that would change the blob in place."""
    from ctxtools.fsutil import file_identity

    top = os.path.realpath(root)
    store = file_identity(top)
    if store is None:
        return None  # no store yet: nothing in it to write over (and no directory to write in)
    real = os.path.realpath(output)
    here = real
    while True:  # the output and its directories, up to /: is one of them the root?
        if here == top or file_identity(here) == store:
            return f"inside the store {root}"
        up = os.path.dirname(here)
        if up == here:
            break
        here = up
    try:
        st = os.stat(real)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_nlink < 2 or st.st_dev != store[0]:
        return None  # one link, or another file system: no store file by another name
    found = _linked_in(top, (st.st_dev, st.st_ino))
    if found is None:
        return None
    return f"the store's file {os.path.relpath(found, top)} by another name (a hard link)"


def _linked_in(top: str, identity: tuple[int, int]) -> str | None:
    """The path of a file under TOP (no symbolic link followed) whose (device, inode) is
    IDENTITY, or None. A walk of the store: only done for an output of several links."""
    stack = [top]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                    continue
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) == identity:
                return entry.path
    return None


def empty_output(output: str | None) -> None:
    """A usage error for ``-o ''``: an empty file name, which wrote to stdout unsaid (an unset
    shell variable, ``-o "$OUT"``), where an empty --store is refused."""
    if output == "":
        from ctxtools.errors import UsageError

        raise UsageError(
            "-o was given an empty file name; nothing was written",
            hint="name a file; without -o, or with -o -, the output goes to stdout",
        )
