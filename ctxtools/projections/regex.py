"""The regex engine of ``ctx-read --grep``: RE2, linear time, run on the payload's bytes.

A user's regex must never hang a read: Python's ``re`` backtracks (``(a+)+$`` on 100,000
``a`` never returns, and it does not see Ctrl-C while it runs). Patterns are compiled with
RE2 (the ``google-re2`` package), whose matching time is linear in the text, and run on the
stored UTF-8 bytes directly (nothing is decoded but the lines shown).

Syntax is Python's, as far as RE2 has it. ``\\w \\W \\d \\D \\s \\S`` keep Python's Unicode
meaning (rewritten to ``\\p{..}`` classes), ``\\Z`` is ``\\z``; ``\\b`` is an ASCII word
boundary. A match never spans a newline (grep's lines), and, as in grep in a UTF-8
locale, an invalid UTF-8 byte is matched by no ``.`` or class. What RE2 cannot express
-- backreferences (``(a)\\1``) and lookaround (``(?=``, ``(?<!``) -- is refused with a
one-line error (``UnsupportedRegexError``, exit 1) rather than run on a backtracking engine.

``iter_hits`` scans a ``Payload`` in ~1 MiB windows cut at newlines. When every match must
contain one of a few literals of 3 bytes or more (``required_literals``), candidate lines
are found with ``bytes.find`` and only they are searched (shorter needles are everywhere in
real text: RE2's own scan is faster then). A line longer than a window is searched in
windows that overlap by ``GREP_OVERLAP`` bytes (a match longer than that, inside such a
line and across a window edge, can be missed); it is never held in memory whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ctxtools.errors import InputError
from ctxtools.projections.prefilter import required_literals

GREP_CHUNK = 1 << 20  # bytes searched per window (cut at the last newline inside)
GREP_OVERLAP = 1 << 16  # overlap of the windows of one line longer than GREP_CHUNK
DENSE_NEEDLES = 2000  # candidate lines without a match in one window before the regex alone
PREFILTER_MIN_BYTES = 3  # shorter needles do not pay (bench/bench_hostile_read.py)

# Python's Unicode classes, for RE2 (outside a class, and the items to put inside one).
_CLASS_ITEMS = {
    "w": r"\p{L}\p{N}_",
    "d": r"\p{Nd}",
    "s": r"\t\n\v\f\r \x1c-\x1f\x85\p{Z}",
}
_OUTSIDE = {
    "w": r"[\p{L}\p{N}_]",
    "W": r"[^\p{L}\p{N}_]",
    "d": r"\p{Nd}",
    "D": r"\P{Nd}",
    "s": r"[\t\n\v\f\r \x1c-\x1f\x85\p{Z}]",
    "S": r"[^\t\n\v\f\r \x1c-\x1f\x85\p{Z}]",
    "Z": r"\z",
}


class UnsupportedRegexError(InputError):
    """A regex Python accepts but the linear-time engine cannot run (backreference, lookaround)."""


def to_re2(pattern: str) -> str:
    """PATTERN (Python syntax) with Python's Unicode ``\\w \\d \\s`` spelled for RE2."""
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            e = pattern[i + 1]
            if in_class and e in _CLASS_ITEMS:
                out.append(_CLASS_ITEMS[e])
            elif in_class and e == "D":
                out.append(r"\P{Nd}")
            elif not in_class and e in _OUTSIDE:
                out.append(_OUTSIDE[e])
            else:
                out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if c == "[" and pattern.startswith("[:", i):  # [:alpha:]
                end = pattern.find(":]", i + 2)
                if end > 0:
                    out.append(pattern[i : end + 2])
                    i = end + 2
                    continue
            if c == "]":
                in_class = False
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            out.append(c)
            i += 1
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":  # a leading ] is literal
                out.append("\\]")
                i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _python_error(pattern: str, flags: int) -> re.error | None:
    try:
        re.compile(pattern, flags)
    except re.error as exc:
        return exc
    except (RecursionError, OverflowError, ValueError) as exc:
        return re.error(str(exc))
    return None


def _why_unsupported(pattern: str) -> str:
    if re.search(r"\(\?<?[=!]", pattern):
        return "lookaround ((?=, (?!, (?<=, (?<!)"
    if re.search(r"\\[1-9]|\(\?P=", pattern):
        return "a backreference (\\1, (?P=name))"
    return "a construct"


@dataclass
class Regex:
    """A compiled user regex (``search`` works on bytes, offsets are byte offsets)."""

    pattern: str
    ignore_case: bool
    _rx: Any
    _anchor: Any

    def search(self, data: bytes, pos: int, endpos: int) -> tuple[int, int] | None:
        """The first match in DATA[POS:ENDPOS] (the bytes around it are its context)."""
        span = self._rx.Match(self._anchor, data, pos, endpos)[0]
        return None if span[0] < 0 else span


def compile_regex(pattern: str, ignore_case: bool = False) -> Regex:
    """PATTERN compiled for ``--grep``; InputError (exit 1) when invalid or unsupported."""
    flags = re.MULTILINE | (re.IGNORECASE if ignore_case else 0)
    bad = _python_error(pattern, flags)
    if bad is not None:
        where = f" at position {bad.pos}" if getattr(bad, "pos", None) is not None else ""
        raise InputError(f"invalid regex {pattern!r}{where}: {bad.msg}") from None
    import re2
    from re2 import _re2

    options = re2.Options()
    options.case_sensitive = not ignore_case
    options.never_nl = True  # a match lies within one line, as in grep
    options.never_capture = True  # only where the match is: the DFA alone finds it
    options.log_errors = False
    try:
        encoded = ("(?m)" + to_re2(pattern)).encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"invalid regex {pattern!r}: it is not valid UTF-8") from None
    rx = _re2.RE2(encoded, options)
    if not rx.ok():
        reason = rx.error().decode("utf-8", "replace")
        raise UnsupportedRegexError(
            f"regex {pattern!r} uses {_why_unsupported(pattern)} that the linear-time engine "
            f"does not run ({reason})",
            hint="rewrite it without that part; --grep never backtracks, so it cannot hang",
        )
    return Regex(pattern, ignore_case, rx, _re2.RE2.Anchor.UNANCHORED)


# --- scanning -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    """A matching line: its zero-based number, its byte span (without the newline) and the
    byte span of its first match."""

    line: int
    start: int
    end: int
    match_start: int
    match_end: int


class _Candidates:
    """Next occurrence of any needle in one window (each needle's next position cached)."""

    def __init__(self, hay: bytes, needles: list[bytes], lo: int, hi: int) -> None:
        self.hay, self.hi = hay, hi
        self.next = {n: hay.find(n, lo, hi) for n in needles}
        self.misses = 0  # candidate lines without a match

    def first(self, at: int) -> int:
        best = -1
        for n, p in self.next.items():
            if 0 <= p < at:
                p = self.hay.find(n, at, self.hi)
                self.next[n] = p
            if p >= 0 and (best < 0 or p < best):
                best = p
        return best


def _first_match(
    rx: Regex, buf: bytes, s: int, accept: int, endpos: int, cands: _Candidates | None
) -> tuple[int, int] | None:
    """The first match in BUF starting in S..ACCEPT-1 (searched up to ENDPOS)."""
    while cands is not None and cands.misses <= DENSE_NEEDLES:
        if s >= accept:
            return None
        c = cands.first(s)
        if c < 0:
            return None
        ls = max(buf.rfind(b"\n", s, c) + 1, s)
        le = buf.find(b"\n", c, endpos)
        le = endpos if le < 0 else le
        span = rx.search(buf, ls, le)
        if span is not None:
            return span if span[0] < accept else None
        s = le + 1
        cands.misses += 1
    # No prefilter, or its needles are everywhere here: the regex alone is cheaper.
    span = rx.search(buf, s, endpos) if s < accept else None
    return span if span is not None and span[0] < accept else None


def iter_hits(p: Any, rx: Regex, first: int = 0, last: int | None = None) -> Iterator[Hit]:
    """Every line of P (a ``Payload``) in FIRST..LAST-1 with a match of RX, in order."""
    last = p.lines if last is None else min(last, p.lines)
    if first >= last:
        return
    start, end = p.line_start(first), p.line_start(last)
    needles = required_literals(rx.pattern, rx.ignore_case)
    if needles and min(map(len, needles)) < PREFILTER_MIN_BYTES:
        needles = None  # short needles are everywhere: RE2's own scan is faster (measured)
    chunk = max(GREP_CHUNK, 16)
    overlap = min(GREP_OVERLAP, chunk // 4)
    pos, line_start = start, start
    known = (start, first)  # an (offset, line number) pair: lines are counted from it
    while pos < end:
        lo = pos - 1 if pos > 0 else 0  # one byte of context before (for ^ and \b)
        n = min(chunk, end - pos)
        buf = p.pread(lo, (pos - lo) + n + 1)  # and one after (for $ and \b)
        r0, limit = pos - lo, pos - lo + n
        if pos + n >= end:
            accept = endpos = limit
            if end == p.size and buf[limit - 1 : limit] != b"\n":
                accept += 1  # an empty match at the end of an unterminated last line
        else:
            nl = buf.rfind(b"\n", r0, limit)
            if nl >= 0:
                accept = endpos = nl + 1
            else:  # inside a line longer than a window: overlapping windows
                accept, endpos = limit - overlap, limit
        cands = None
        if needles:
            hay = buf.lower() if rx.ignore_case else buf
            cands = _Candidates(hay, needles, r0, endpos)
        s = r0
        while True:
            span = _first_match(rx, buf, s, accept, endpos, cands)
            if span is None:
                nl = buf.rfind(b"\n", s, accept)
                if nl >= 0:
                    line_start = lo + nl + 1
                pos = lo + accept
                break
            ms, me = span
            nl = buf.rfind(b"\n", s, ms)
            ls = lo + nl + 1 if nl >= 0 else line_start
            # The line number: counted from the last known pair when it is in this window
            # (matches close together), else from the index (at most a 64 KiB count).
            if lo <= known[0] <= ls:
                line = known[1] + buf.count(b"\n", known[0] - lo, ls - lo)
            else:
                line = p.newlines_before(ls)
            le = buf.find(b"\n", ms, endpos)
            if le >= 0:
                yield Hit(line, ls, lo + le, lo + ms, lo + me)
                s = le + 1
                line_start = lo + s
                known = (line_start, line + 1)
                if s >= accept:
                    pos = lo + s
                    break
                continue
            le = p.find_newline(lo + endpos, end)  # the rest of a line longer than a window
            yield Hit(line, ls, min(le, end), lo + ms, lo + me)
            if le >= end:
                return
            pos = line_start = le + 1
            known = (pos, line + 1)
            break
