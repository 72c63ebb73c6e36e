"""ctx-count's plainest call, ``ctx-count [--heuristic] [FILE | -]...``, counted without
click (``ctxtools.cli.count_fast`` checks the command line and prints).

Each step answers None when the click command must run the call instead, before anything
is read: a file that cannot be read or is binary (``plain_size``), a ruler with a note to
say (``count_plain``). What it counts and prints is what the click command would: the same
library calls, the same ``report.format_counts``.
"""

from __future__ import annotations

import os


def _binary(name: str) -> bool:
    """Whether the file NAME looks binary (the click command reports it as such)."""
    from ctxtools.binary import BINARY_PROBE, is_binary

    try:
        with open(name, "rb") as fh:
            return is_binary(fh.read(BINARY_PROBE))
    except OSError:
        return True  # the click command says what is wrong with it


def plain_size(names: list[str]) -> int | None:
    """The bytes of the files NAMES (``-``, stdin, counts 0), or None when one cannot be
    read, is binary, or is not a regular file: a pipe (``<(make 2>&1)``, a FIFO) can be
    read once only, and the binary probe here would take its head from the count."""
    import stat

    from ctxtools.fsutil import unreadable_reason

    size = 0
    for name in names:
        if name == "-":
            continue
        if unreadable_reason(name, check_access=True) is not None:
            return None
        try:
            st = os.stat(name)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode) or _binary(name):
            return None
        size += st.st_size
    return size


def count_plain(names: list[str], heuristic: bool, stdin) -> tuple[str, list[str]] | None:
    """What the plain call over NAMES prints, and its notes for stderr (a count that could
    not be proven exact); None when the click command must run it (the ruler has a note, a
    file fails before STDIN was read). An error after stdin was read is raised."""
    from ctxtools.count.report import format_counts, shown
    from ctxtools.errors import CtxError, InputError
    from ctxtools.tokens import count_stream, get_ruler

    try:
        choice = get_ruler(heuristic=heuristic, store_root=None)
    except CtxError:
        return None
    if choice.notes:
        return None
    rows = []
    notes: list[str] = []
    stdin_read = False
    for name in names:
        try:
            if name == "-":
                stdin_read = True
                counts = count_stream(stdin, choice.ruler)
            else:
                with open(name, "rb") as fh:
                    counts = count_stream(fh, choice.ruler)
        except OSError as exc:
            if not stdin_read:
                return None
            raise InputError(f"{name}: {exc.strerror or exc}") from None
        except CtxError:
            if not stdin_read:
                return None
            raise
        rows.append((shown(name), counts.tokens))
        if not counts.exact:
            notes.extend(f"not exact: {n}" for n in counts.notes if f"not exact: {n}" not in notes)
    return format_counts(rows, sum(n for _, n in rows), len(names)), notes
