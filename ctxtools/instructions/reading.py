"""Reading one instruction file under its share of the caps: the binary probe, front
matter, gated sections (fenced code and ATX headings), and the cut with its marker line."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from ctxtools.binary import BINARY_PROBE, is_binary
from ctxtools.fsutil import check_resource
from ctxtools.instructions.context import GATE_NOTE_LIMIT, Context
from ctxtools.instructions.discovery import Found
from ctxtools.instructions.frontmatter import (
    FRONT_MATTER_MAX_LINES,
    FrontMatterError,
    parse_front_matter,
)
from ctxtools.instructions.gates import Gate, file_gate
from ctxtools.quoting import quote_name

SCAN_LIMIT = 4 << 20  # raw bytes read from one file at most (skipping gated-out sections)
FRONT_MATTER_KEYS = ("paths", "globs", "alwaysApply")  # the keys read; others pass unread

_BOM = b"\xef\xbb\xbf"
_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})(?=[ \t]|$)")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_GATE_RE = re.compile(r"[ \t]*<!--[ \t]*paths[ \t]*:(.*?)-->", re.IGNORECASE)
_GATE_OPEN_RE = re.compile(r"<!--[ \t]*paths[ \t]*:", re.IGNORECASE)


def commas(n: int) -> str:
    return f"{n:,}"


# What reading one file gave: its text, or why there is none.
_SKIPPED = "skipped"  # binary, unreadable: noted
_GATED = "gated"  # the whole file gated out: in dropped
_BLANK = "blank"  # nothing but whitespace applies
NO_ROOM = "no room"  # the share cannot hold even the marker


@dataclass
class ReadText:
    text: str
    truncated: bool
    cut_section: str | None = None  # the heading in effect where the text was cut
    cut_reason: str | None = None  # the cap (or read limit) that cut it


@dataclass
class _Line:
    offset: int  # where the line starts in the file
    text: str  # as included
    cost: int  # bytes of TEXT in UTF-8
    src: bytes  # its bytes, for a cut inside it
    section: str | None  # the heading in effect


def _pieces(fh: BinaryIO, limit: int) -> Iterator[tuple[int, bytes, bool]]:
    """(offset, bytes, starts a line) for each line of FH, long lines in pieces of LIMIT."""
    offset = 0
    at_start = True
    while True:
        piece = fh.readline(limit)
        if not piece:
            return
        yield offset, piece, at_start
        offset += len(piece)
        at_start = piece.endswith(b"\n")


def _marker(left: int, path: str, reason: str) -> str:
    return f"[… {commas(left)} bytes of {quote_name(path)} left out: {reason}]\n"


def _fit_prefix(src: bytes, avail: int) -> tuple[str, int]:
    """The longest prefix of SRC whose decoded text takes at most AVAIL bytes as UTF-8,
    never ending inside a character: (its text, the raw bytes it covers)."""
    text = src.decode("utf-8", "surrogateescape")
    out_bytes = 0
    raw_bytes = 0
    end = 0
    for ch in text:
        if "\udc80" <= ch <= "\udcff":  # one invalid byte, shown as U+FFFD
            cost, raw = 3, 1
        else:
            cost = raw = len(ch.encode("utf-8"))
        if out_bytes + cost > avail:
            break
        out_bytes += cost
        raw_bytes += raw
        end += 1
    shown = text[:end].encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return shown, raw_bytes


def read_file(ctx: Context, found: Found, budget: int, cap_reason: str) -> ReadText | str:
    """Read one instruction file under its BUDGET: a ReadText, or why there is none."""
    shown = quote_name(found.rel)
    try:
        fh = open(found.real, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        check_resource(exc, found.real)
        ctx.notes.append(f"{shown}: cannot be read ({exc.strerror or exc}); skipped")
        return _SKIPPED
    ctx.gate_notes = 0
    with fh:
        try:
            return _read_open(ctx, fh, found.rel, found.size, budget, cap_reason)
        except OSError as exc:
            check_resource(exc, found.real)
            ctx.notes.append(f"{shown}: cannot be read ({exc.strerror or exc}); skipped")
            return _SKIPPED
        finally:
            if ctx.gate_notes > GATE_NOTE_LIMIT:
                more = ctx.gate_notes - GATE_NOTE_LIMIT
                ctx.notes.append(f"{shown}: {more} more malformed gates; sections ungated")


def _front_matter(
    ctx: Context, rel: str, pieces: Iterator[tuple[int, bytes, bool]]
) -> tuple[list[tuple[int, bytes, bool]], int, Gate | None, bool]:
    """Read front matter off the top of PIECES: (the pieces read, how many of them it
    takes, its gate, alwaysApply). Pieces not part of it are replayed as the body."""
    first: list[tuple[int, bytes, bool]] = []
    for item in pieces:
        first.append(item)
        if len(first) == 1 and item[1].removeprefix(_BOM).rstrip() != b"---":
            return first, 0, None, False
        if len(first) > 1 and item[1].rstrip() in (b"---", b"..."):
            break
        if len(first) > FRONT_MATTER_MAX_LINES + 1 or not item[1].endswith(b"\n"):
            break
    if len(first) < 2 or first[-1][1].rstrip() not in (b"---", b"..."):
        if first:
            ctx.notes.append(
                f"{rel}: malformed front matter (no closing '---' within "
                f"{FRONT_MATTER_MAX_LINES} lines); read as ungated text"
            )
        return first, 0, None, False
    lines = [p.decode("utf-8", "replace") for _, p, _ in first[1:-1]]
    try:
        gate, always = file_gate(parse_front_matter(lines, FRONT_MATTER_KEYS))
    except FrontMatterError as exc:
        ctx.notes.append(f"{quote_name(rel)}: malformed front matter ({exc}); read as ungated")
        return first, len(first), None, False
    return first, len(first), gate, always


def _read_open(
    ctx: Context, fh: BinaryIO, rel: str, size: int, budget: int, cap_reason: str
) -> ReadText | str:
    head = fh.read(BINARY_PROBE)
    if is_binary(head):
        ctx.notes.append(f"{quote_name(rel)}: binary file; skipped")
        return _SKIPPED
    fh.seek(0)
    limit = max(budget, 4096) + 1
    pieces = _pieces(fh, limit)
    first, body_from, gate, always = _front_matter(ctx, rel, pieces)
    if gate is not None and not always and not ctx.gate_applies(gate):
        reason = f"{gate.describe()} match no pack file"
        ctx.dropped.append({"path": rel, "section": None, "reason": reason})
        return _GATED
    body = itertools.chain(first[body_from:], pieces)
    scan = _scan_body(ctx, rel, body, size, limit, budget)
    if scan.complete:
        text = "".join(x.text for x in scan.kept)
        if not text.strip():
            return _BLANK
        return ReadText(text, False)
    return _cut(ctx, rel, size, budget, scan, cap_reason)


class _Sections:
    """Fenced code and ATX headings, line by line: the gated sections a line is in, and
    the heading in effect."""

    def __init__(self, ctx: Context, rel: str):
        self.ctx = ctx
        self.rel = rel
        self.stack: list[tuple[int, bool]] = []  # (level, applies) of the gated sections
        self.fence: str | None = None
        self.section: str | None = None

    def applies(self) -> bool:
        return all(a for _, a in self.stack)

    def follow(self, line: str, src: bytes) -> tuple[str, bytes]:
        """Take in the next LINE (its bytes SRC); returns both as they are included (a
        heading's gate comment removed)."""
        bare = line.rstrip("\r\n")
        if self.fence is not None:
            close = _FENCE_RE.match(bare)
            if (
                close
                and close.group(1)[0] == self.fence[0]
                and len(close.group(1)) >= len(self.fence)
                and not bare[close.end() :].strip()
            ):
                self.fence = None
        elif (m := _FENCE_RE.match(bare)) is not None:
            self.fence = m.group(1)
        elif (h := _HEADING_RE.match(bare)) is not None:
            return self._heading(len(h.group(1)), bare, line, src)
        return line, src

    def _heading(self, level: int, bare: str, line: str, src: bytes) -> tuple[str, bytes]:
        ctx, rel, stack = self.ctx, self.rel, self.stack
        while stack and stack[-1][0] >= level:
            stack.pop()
        was_kept = self.applies()
        g = _GATE_RE.search(bare)
        if g is None:
            self.section = _title(bare)
            if _GATE_OPEN_RE.search(bare):
                ctx.note_gate(
                    f"{rel}: malformed gate on heading {self.section!r} (no closing '-->')"
                )
            return line, src
        bare = bare[: g.start()] + bare[g.end() :]
        line = bare + line[len(line.rstrip("\r\n")) :]
        src = line.encode("utf-8")
        self.section = _title(bare)
        sgate = ctx.section_gate(g.group(1))
        if isinstance(sgate, FrontMatterError):
            ctx.note_gate(f"{rel}: malformed gate on heading {self.section!r} ({sgate})")
        else:
            applies = ctx.gate_applies(sgate)
            stack.append((level, applies))
            if was_kept and not applies:
                reason = f"{sgate.describe()} match no pack file"
                ctx.dropped.append({"path": rel, "section": self.section, "reason": reason})
        return line, src


@dataclass
class _Scan:
    """What scanning a file's body gave: the lines kept within the budget, and where and
    why it stopped."""

    kept: list[_Line] = field(default_factory=list)
    used: int = 0  # bytes of the kept lines
    overflow: _Line | None = None  # the first kept line that did not fit
    scanned: int = 0  # bytes of the file looked at
    section: str | None = None  # the heading in effect where it stopped
    complete: bool = False  # the whole body was read and fitted


def _scan_body(
    ctx: Context,
    rel: str,
    body: Iterator[tuple[int, bytes, bool]],
    size: int,
    limit: int,
    budget: int,
) -> _Scan:
    """Keep the lines that apply until the budget, or the read limit, is reached."""
    sections = _Sections(ctx, rel)
    scan = _Scan()
    for offset, piece, at_start in body:
        scan.scanned = offset + len(piece)
        if not at_start:  # the rest of a long line: only a gated-out line gets here, since
            continue  # a kept line's first piece (LIMIT bytes) is over the budget already
        if offset == 0 and piece.startswith(_BOM):
            piece, offset = piece[len(_BOM) :], len(_BOM)
        line, src = sections.follow(piece.decode("utf-8", "replace"), piece)
        if sections.applies():
            entry = _Line(offset, line, len(line.encode("utf-8")), src, sections.section)
            whole = piece.endswith(b"\n") or len(piece) < limit
            if not whole or scan.used + entry.cost > budget:
                scan.overflow = entry
                break
            scan.kept.append(entry)
            scan.used += entry.cost
        if scan.scanned >= SCAN_LIMIT and scan.scanned < size:
            break
    else:
        scan.complete = True
    scan.section = sections.section
    return scan


def _cut(
    ctx: Context, rel: str, size: int, budget: int, scan: _Scan, cap_reason: str
) -> ReadText | str:
    """Cut a file that did not fit: whole lines first, with the marker line; part of one
    line only when no whole line fits."""
    kept, used = scan.kept, scan.used
    if scan.overflow is None:  # the read limit, with everything read so far fitting
        reason = f"read limit of {commas(SCAN_LIMIT)} bytes"
        cut_at, pending = scan.scanned, [_Line(scan.scanned, "", 0, b"", scan.section)]
    else:
        reason, cut_at, pending = cap_reason, scan.overflow.offset, [scan.overflow]

    def marker_for(cut: int) -> str:
        return _marker(max(0, size - cut), rel, reason)

    while kept:
        marker = marker_for(cut_at)
        sep = "" if kept[-1].text.endswith("\n") else "\n"
        if used + len(sep) + len(marker.encode("utf-8")) <= budget:
            text = "".join(x.text for x in kept) + sep + marker
            return ReadText(text, True, pending[0].section, reason)
        popped = kept.pop()
        used -= popped.cost
        cut_at = popped.offset
        pending.insert(0, popped)
    head_line = pending[0]
    if not head_line.src:  # the read limit, and nothing before it applied
        ctx.notes.append(
            f"{rel}: nothing in its first {commas(SCAN_LIMIT)} bytes applies; the rest is not read"
        )
        return _BLANK
    avail = budget - len(marker_for(head_line.offset).encode("utf-8")) - 1  # "\n" after it
    if avail <= 0:
        return NO_ROOM
    shown, raw_used = _fit_prefix(head_line.src, avail)
    if not shown.strip():
        return NO_ROOM
    text = shown.rstrip("\r\n") + "\n" + marker_for(head_line.offset + raw_used)
    return ReadText(text, True, head_line.section, reason)


def _title(heading: str) -> str:
    return heading.strip().lstrip("#").strip()
