"""The ``--grep`` projection: matching lines as ``N:line``, with context lines, in the
output cap; a line too long to show whole is shown as a window around its match.

The search runs on the payload's bytes (``ctxtools.projections.regex``: RE2, linear time,
with a literal prefilter) and stops when the output is full; the trailer says how far it
got and the command that goes on.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ctxtools.errors import InputError, UsageError
from ctxtools.projections.lines import decode
from ctxtools.projections.output import MAX_CHARS_DEFAULT, Next, Output
from ctxtools.projections.output import thousands as _n
from ctxtools.projections.regex import compile_regex, iter_hits
from ctxtools.projections.specs import parse_range

if TYPE_CHECKING:
    from ctxtools.store import Payload


GREP_WINDOW = 2_000  # characters shown around the match of a line too long to show whole
MAX_WINDOW_NOTES = 5  # stderr notes naming the --slice of such a line


def iter_matching_lines(
    p: Payload, rx: Any, first: int = 0, last: int | None = None
) -> Iterator[tuple[int, str]]:
    """(zero-based line number, line text) of every line with a match, in order."""
    for hit in iter_hits(p, rx, first, last):
        yield hit.line, decode(p.pread(hit.start, hit.end - hit.start))


def _window(p: Payload, hit: Any, width: int) -> tuple[str, int, int]:
    """(text, first char, end char) of about WIDTH characters of HIT's line around its
    match: a third before the match, the rest from it; char offsets are the payload's."""
    before = max(width // 3, 1)
    a = max(hit.start, hit.match_start - 4 * before)
    head = p.pread(a, hit.match_start - a)
    cut = 0
    while cut < min(3, len(head)) and 0x80 <= head[cut] < 0xC0 and a + cut > hit.start:
        cut += 1  # start at a character boundary
    head_text = decode(head[cut:])[-before:]
    tail = p.pread(hit.match_start, 4 * (width - len(head_text)) + 4)
    tail = tail[: max(0, hit.end - hit.match_start)]
    dec = codecs.getincrementaldecoder("utf-8")("replace")
    tail_text = dec.decode(tail, hit.match_start + len(tail) >= hit.end)
    text = head_text + tail_text[: width - len(head_text)]
    first = p.chars_before(hit.match_start) - len(head_text)
    return text, first, first + len(text)


def grep_view(
    p: Payload,
    pattern: str,
    *,
    context: int = 0,
    ignore_case: bool = False,
    scope: str | None = None,
    max_chars: int = MAX_CHARS_DEFAULT,
    nxt: Next | None = None,
) -> Output:
    """Lines matching PATTERN as ``N:line`` (context ``N-line``, groups split by ``--``).

    SCOPE is a ``--range`` spec limiting the search. The search stops when the output is
    full; the trailer says how far it got and how to go on.
    """
    nxt = nxt or Next(None)
    if context < 0:
        raise UsageError(f"-C {context}: must be 0 or more")
    rx = compile_regex(pattern, ignore_case)
    first, last, scope_last = grep_scope(p, scope)
    printer = _Printer(p, max_chars, nxt, first)
    pending = printer.run(iter_hits(p, rx, first, last), context, last)
    out = Output(body="".join(printer.parts))
    if printer.resume_at >= 0 and printer.shown == 0 and pending is not None:
        # its context filled the output: show the matching line alone
        out.body = printer.matching_line(pending)[:max_chars]
        printer.printed_to = printer.resume_at
        printer.resume_at += 1
        printer.shown = 1
    out.notes.extend(printer.window_notes())
    if printer.resume_at < 0:
        if printer.shown == 0:
            out.notes.append(f"no line matches {pattern!r}")
        return out
    begin = max(first, printer.resume_at - context, printer.printed_to + 1)
    rng = f"{begin + 1}-" if scope_last is None else f"{begin + 1}-{scope_last}"
    args = ["--grep", pattern]
    if ignore_case:
        args.append("-i")
    if context:
        args += ["-C", str(context)]
    args += ["--range", rng]
    out.trailer = (
        f"[ctx-read: cut at {_n(max_chars)} chars: showed {_n(printer.shown)} matching lines, "
        f"searched lines {first + 1}-{_n(printer.resume_at)} of {_n(p.lines)}; "
        f"next: {nxt.command(*args)}]"
    )
    return out


def grep_scope(p: Payload, scope: str | None) -> tuple[int, int, int | None]:
    """The lines to search for a ``--range`` SCOPE (None: all): (first, zero-based; last,
    exclusive, clamped to the payload; the range's own end, None when open)."""
    total = p.lines
    if scope is None:
        return 0, total, None
    f1, l1 = parse_range(scope)
    if f1 > total:
        raise InputError(f"--range {scope}: starts after the last line ({_n(total)} lines)")
    return f1 - 1, (total if l1 is None else min(l1, total)), l1


class _Printer:
    """The output of one grep as it fills up to MAX_CHARS: matching lines, their context
    and the ``--`` between groups; how far it got (``printed_to``, the last line printed;
    ``resume_at``, the first matching line not shown, -1 when none was left out)."""

    def __init__(self, p: Payload, max_chars: int, nxt: Next, first: int):
        self.p = p
        self.max_chars = max_chars
        self.nxt = nxt
        self.parts: list[str] = []
        self.used = 0
        self.shown = 0
        self.resume_at = -1  # zero-based first match line not shown
        self.printed_to = first - 1  # last line printed (inclusive)
        self.windows: list[str] = []  # notes on the long lines shown as windows

    def run(self, hits: Iterator[Any], context: int, last: int) -> Any:
        """Print HITS with CONTEXT lines around each until the output is full; the last
        hit taken (the one that did not fit, when the output filled up)."""
        any_printed = False
        owed_to = -1  # after-context owed up to this line (inclusive)
        pending = None
        for hit in hits:
            lineno = hit.line
            pending = hit
            if context and not self.context(self.printed_to + 1, min(owed_to, lineno - 1)):
                self.resume_at = lineno
                break
            start = max(lineno - context, self.printed_to + 1)
            if context and any_printed and start > self.printed_to + 1 and not self.emit("--\n"):
                self.resume_at = lineno
                break
            if (context and not self.context(start, lineno - 1)) or not self.emit(
                self.matching_line(hit)
            ):
                self.resume_at = lineno
                break
            self.printed_to = lineno
            any_printed = True
            self.shown += 1
            owed_to = lineno + context
        else:
            if context:
                self.context(self.printed_to + 1, min(owed_to, last - 1))
        return pending

    def emit(self, text: str) -> bool:
        """Add TEXT if it fits."""
        if self.used + len(text) > self.max_chars:
            return False
        self.parts.append(text)
        self.used += len(text)
        return True

    def context(self, a: int, b: int) -> bool:
        """Context lines a..b (inclusive); a line too long for the output is cut."""
        if a > b:
            return True
        max_chars = self.max_chars
        cap = 4 * max_chars + 4
        for i, (raw, whole) in enumerate(self.p.iter_lines_capped(a, b + 1, cap), start=a):
            text = decode(raw)
            if not whole or len(text) > max_chars // 2:
                text = text[: max_chars // 4] + "\u2026"
            if not self.emit(f"{i + 1}-{text}\n"):
                return False
            self.printed_to = i
        return True

    def matching_line(self, hit: Any) -> str:
        """The matching line as printed: whole, or a window around its match (noted)."""
        p, max_chars = self.p, self.max_chars
        nbytes = hit.end - hit.start
        if nbytes <= 4 * max_chars:
            text = decode(p.pread(hit.start, nbytes))
            if len(text) + len(str(hit.line + 1)) + 2 <= max_chars:
                return f"{hit.line + 1}:{text}\n"
        width = max(1, min(GREP_WINDOW, max_chars - len(str(hit.line + 1)) - 4))
        text, a, b = _window(p, hit, width)
        line_a = p.chars_before(hit.start)
        line_b = p.chars_before(hit.end)
        # more of the line: what follows the window, or (at the line's end) what precedes it
        after = b < line_b
        more = f"{b}:{min(line_b, b + max_chars)}" if after else f"{max(line_a, a - max_chars)}:{a}"
        self.windows.append(
            f"line {hit.line + 1} has {_n(line_b - line_a)} chars: showed chars {a}:{b} "
            f"around its first match; the {'next' if after else 'previous'} part: "
            f"{self.nxt.command('--slice', more)}"
        )
        left = "\u2026" if a > line_a else ""
        right = "\u2026" if b < line_b else ""
        return f"{hit.line + 1}:{left}{text}{right}\n"

    def window_notes(self) -> list[str]:
        """The notes naming the --slice of each line shown as a window (the first few)."""
        notes = self.windows[:MAX_WINDOW_NOTES]
        if len(self.windows) > MAX_WINDOW_NOTES:
            notes.append(f"{len(self.windows) - MAX_WINDOW_NOTES} more long lines shown as windows")
        return notes
