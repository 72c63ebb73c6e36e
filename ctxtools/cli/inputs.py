"""The inputs every ctx-* command reads: FILE arguments and --files-from lists resolved to
``FileArg``s, stdin as bytes (with a hint when it is a terminal), and one-line errors for a
path that cannot be read as a file."""

from __future__ import annotations

import os
import stat
import sys
from typing import TYPE_CHECKING, BinaryIO

import click

from ctxtools.errors import InputError, NotFoundError, UsageError

if TYPE_CHECKING:  # loaded when a command reads its inputs, not for --help
    from ctxtools.resolve import FileArg


def read_names(files_from: str, null: bool) -> list[str]:
    """The file names listed in FILES_FROM ('-' is stdin): NUL- or newline-separated.

    A newline-separated list holding NUL bytes (``git ls-files -z`` without ``-0``) is an
    InputError: no file name contains NUL."""
    data = stdin_bytes().read() if files_from == "-" else read_path_bytes(files_from)
    if not null and b"\0" in data:
        where = "standard input" if files_from == "-" else files_from
        raise InputError(
            f"the names from {where} are NUL-separated",
            hint="add -0 for lists such as git ls-files -z",
        )
    sep = b"\0" if null else b"\n"
    names = []
    for raw in data.split(sep):
        if not null:
            raw = raw.rstrip(b"\r")
        if raw:
            names.append(os.fsdecode(raw))
    return names


def resolve_sources(
    files: tuple[str, ...] | list[str], files_from: str | None = None, null: bool = False
) -> list[FileArg]:
    """FILE arguments and --files-from as a list of sources; nothing at all means stdin.
    Standard input is read once: a usage error when the list and a FILE both come from it."""
    from ctxtools.resolve import STDIN, FileArg

    if null and files_from is None:
        raise click.UsageError("-0/--null goes with --files-from")
    if files_from == "-" and "-" in files:
        raise UsageError(
            "--files-from - and the FILE - cannot both read standard input",
            hint="give one of them stdin, the other a file",
        )
    names = list(files)
    if files_from is not None:
        names.extend(read_names(files_from, null))
    elif not names:
        return [STDIN]
    if files_from is not None and not names:
        return []
    return [STDIN if n == "-" else FileArg(n, n) for n in names]


def stdin_bytes() -> BinaryIO:
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # a text-only stdin (an embedding test harness): re-encode it
        import io

        return io.BytesIO(sys.stdin.read().encode("utf-8", "surrogateescape"))
    if stream.isatty():
        click.echo(
            f"{click.get_current_context().info_name}: reading from standard input "
            "(end with Ctrl-D; --help for usage)",
            err=True,
        )
    return stream


def check_file(path: str, directory_hint: str = "give files, or use ctx-repomap for trees") -> None:
    """Raise a one-line error for a path that cannot be read as a file (DIRECTORY_HINT:
    what to do instead when it is a directory), saying why: no such file, a loop of
    symbolic links, a directory, no permission, a relative path in a working directory
    that was removed. The path is named as ``quoting.quote_name`` shows it."""
    from ctxtools.fsutil import check_cwd
    from ctxtools.quoting import quote_name

    check_cwd(path)
    shown = quote_name(path)
    try:
        is_dir = stat.S_ISDIR(os.stat(path).st_mode)
    except FileNotFoundError:
        raise NotFoundError(f"{shown}: no such file") from None
    except OSError as exc:
        from ctxtools.fsutil import check_resource

        check_resource(exc, path)
        raise InputError(f"{shown}: {exc.strerror or exc}") from None
    if is_dir:
        raise InputError(f"{shown}: is a directory", hint=directory_hint)
    if not os.access(path, os.R_OK):
        raise InputError(f"{shown}: permission denied")


def open_source(src: FileArg) -> BinaryIO:
    """A binary stream for SRC; one-line errors for missing files, directories, permissions."""
    if src.path is None:
        return stdin_bytes()
    check_file(src.path)
    try:
        return open(src.path, "rb")
    except OSError as exc:
        raise InputError(f"{src.path}: {exc.strerror or exc}") from None


def opened(src: FileArg):
    """SRC as a binary stream, in a context manager that closes a file (never stdin)."""
    if src.path is None:
        import contextlib

        return contextlib.nullcontext(stdin_bytes())
    return open_source(src)


def read_path_bytes(path: str) -> bytes:
    check_file(path)
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror or exc}") from None


def read_source_bytes(src: FileArg) -> bytes:
    if src.path is None:
        return stdin_bytes().read()
    return read_path_bytes(src.path)
