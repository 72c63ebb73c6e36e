"""Line and character projections: ``--head``, ``--tail``, ``--range``, ``--slice``.

A line range of a multi-gigabyte payload costs a binary search in its line index and a
short scan; a line longer than the output cap is read only as far as it is shown.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ctxtools.errors import InputError, UsageError
from ctxtools.projections.output import MAX_CHARS_DEFAULT, Next, Output
from ctxtools.projections.output import thousands as _n
from ctxtools.projections.specs import parse_range, parse_slice, resolve_slice

if TYPE_CHECKING:
    from ctxtools.store import Payload


def decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def chars_before(p: Payload, byte_offset: int) -> int:
    """Characters in the first BYTE_OFFSET bytes (BYTE_OFFSET at a character boundary)."""
    return p.chars_before(byte_offset)


def iter_text(p: Payload, start: int = 0, end: int | None = None) -> Iterator[str]:
    """Decoded text of bytes START..END (START at a character boundary)."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    for piece in p.iter_bytes(start, end):
        text = decoder.decode(piece)
        if text:
            yield text
    tail = decoder.decode(b"", True)
    if tail:
        yield tail


def _prefix(number: bool, lineno: int) -> str:
    return f"{lineno:>6}\t" if number else ""


def lines_view(
    p: Payload,
    first: int,
    last: int | None,
    *,
    number: bool = False,
    max_chars: int = MAX_CHARS_DEFAULT,
    nxt: Next | None = None,
    asked: str | None = None,
) -> Output:
    """Lines FIRST..LAST-1 (zero-based, LAST None: to the end), capped at MAX_CHARS.

    ASKED is how the user put it (e.g. ``lines 100-2000``) for the trailer. A line longer
    than the cap is read only as far as it is shown (never whole: it may be gigabytes).
    """
    nxt = nxt or Next(None)
    total = p.lines
    last = total if last is None else min(last, total)
    out = Output()
    if first >= last:
        return out
    parts: list[str] = []
    used = 0
    shown_to = first  # exclusive
    cut_inside: tuple[int, int] | None = None  # (line index, characters of it shown)
    cap = 4 * max_chars + 4  # bytes enough for max_chars characters
    for i, (raw, whole) in enumerate(p.iter_lines_capped(first, last, cap), start=first):
        prefix = _prefix(number, i + 1)
        if whole:
            line = decode(raw)
        else:  # the start of a line longer than the cap (a cut character is dropped)
            line = codecs.getincrementaldecoder("utf-8")("replace").decode(raw)
        # The payload's bytes come back as they are: no newline is added after an
        # unterminated last line (a read of a whole payload is byte-exact).
        nl = "" if not number and i == total - 1 and p.index.newlines < total else "\n"
        s = f"{prefix}{line}{nl}"
        if not whole or used + len(s) > max_chars:
            if i == first:
                room = max(0, max_chars - used - len(prefix))
                parts.append(prefix + line[:room])
                used += len(prefix) + room
                cut_inside = (i, room)
            break
        parts.append(s)
        used += len(s)
        shown_to = i + 1
    out.body = "".join(parts)
    want = f"lines {first + 1}-{last}"
    if asked is None:
        asked = want
    flags = ["-n"] if number else []
    if cut_inside is not None:
        i, room = cut_inside
        start_char = p.chars_before(p.line_start(i)) + room
        end_of_line = p.find_newline(p.line_start(i))
        line_chars = p.chars_before(min(end_of_line + 1, p.size)) - start_char + room
        stop_char = p.chars_before(p.line_start(last)) if last < total else p.chars
        out.trailer = (
            f"[ctx-read: cut at {_n(max_chars)} chars: showed {_n(room)} of the "
            f"{_n(line_chars)} chars of line {i + 1} ({asked}, {_n(total)} lines in all); "
            f"next: {nxt.command('--slice', f'{start_char}:{stop_char}')}]"
        )
    elif shown_to < last:
        tail = f"{shown_to + 1}-{last}" if last < total else f"{shown_to + 1}-"
        out.trailer = (
            f"[ctx-read: cut at {_n(max_chars)} chars: showed lines {first + 1}-{shown_to} "
            f"of {asked} ({_n(total)} lines, {_n(p.chars)} chars in all); "
            f"next: {nxt.command('--range', tail, *flags)}]"
        )
    return out


def range_view(p: Payload, spec: str, **kw: Any) -> Output:
    """``--range X-Y``: 1-based closed line numbers; an end past the last line is clamped.
    KW (number, max_chars, nxt) as for ``lines_view``."""
    first, last = parse_range(spec)
    total = p.lines
    notes = []
    if first > total:
        raise InputError(
            f"--range {spec}: starts after the last line (the payload has {_n(total)} lines)"
        )
    if last is not None and last > total:
        # (what is read: the output may still be cut at --max-chars, which its footer says;
        # "showing 1-200" then contradicted a footer that showed line 1 alone)
        notes.append(
            f"--range {spec}: the payload has {_n(total)} lines; the range is {first}-{total}"
        )
        last = total
    asked = f"lines {first}-{last if last is not None else total}"
    out = lines_view(p, first - 1, last, asked=asked, **kw)
    out.notes = notes + out.notes
    return out


def head_view(p: Payload, n: int, **kw: Any) -> Output:
    if n < 0:
        raise UsageError(f"--head {n}: must be 0 or more")
    return lines_view(p, 0, min(n, p.lines), asked=f"the first {_n(n)} lines", **kw)


def tail_view(p: Payload, n: int, **kw: Any) -> Output:
    if n < 0:
        raise UsageError(f"--tail {n}: must be 0 or more")
    first = max(0, p.lines - n)
    return lines_view(p, first, p.lines, asked=f"the last {_n(n)} lines", **kw)


def slice_view(
    p: Payload,
    spec: str,
    *,
    unit: str = "chars",
    number: bool = False,
    max_chars: int = MAX_CHARS_DEFAULT,
    nxt: Next | None = None,
) -> Output:
    """``--slice A:B``: zero-based, half-open, negatives from the end; chars or lines."""
    nxt = nxt or Next(None)
    a, b = parse_slice(spec)
    if unit == "lines":
        first, last = resolve_slice(a, b, p.lines)
        out = lines_view(
            p,
            first,
            last,
            number=number,
            max_chars=max_chars,
            nxt=nxt,
            asked=f"lines {first + 1}-{last}",
        )
        if first >= last and p.lines:
            out.notes.append(_selects_nothing(spec, p.lines, "lines"))
        return out
    if unit != "chars":
        raise UsageError(f"--unit {unit!r}: chars or lines")
    if number:
        raise UsageError("-n numbers lines: use it with --unit lines, --range, --head or --tail")
    start, stop = resolve_slice(a, b, p.chars)
    show_to = min(stop, start + max_chars)
    out = Output(body=_char_window(p, start, show_to))
    if start >= stop and p.chars:
        out.notes.append(_selects_nothing(spec, p.chars, "chars"))
    if show_to < stop:
        out.trailer = (
            f"[ctx-read: cut at {_n(max_chars)} chars: showed chars {start}:{show_to} of "
            f"{start}:{stop} ({_n(p.chars)} chars in all); "
            f"next: {nxt.command('--slice', f'{show_to}:{stop}')}]"
        )
    return out


def _selects_nothing(spec: str, total: int, unit: str) -> str:
    """The note of a slice that is empty on a payload that is not (past the end, or an
    end before the start once negatives are counted): the empty output is not the payload."""
    return f"--slice {spec} selects nothing: the payload has {_n(total)} {unit}"


def _char_window(p: Payload, start: int, stop: int) -> str:
    """Characters START..STOP-1, found through the index's character checkpoints."""
    if start >= stop:
        return ""
    if p.chars == p.size:  # one byte per character: seek
        return decode(p.pread(start, stop - start))
    at = p.char_offset(start)
    data = p.pread(at, 4 * (stop - start) + 4)
    final = at + len(data) >= p.size
    text = codecs.getincrementaldecoder("utf-8")("replace").decode(data, final)
    return text[: stop - start]
