"""Projections: what ``ctx-read`` shows of a payload (a stored handle or a spooled stdin).

Every projection works on a ``ctxtools.store.Payload`` -- random access through the line
index, verified block by block -- so a line range of a multi-gigabyte blob costs a binary
search and a short scan, and a full scan (grep, count) runs in bounded memory.

Text is decoded as UTF-8 with invalid bytes shown as U+FFFD; the stored bytes are never
changed. Output is capped at ``max_chars`` characters (``clamp_max_chars``: default 12,000,
hard ceiling 50,000); a cut output gets one trailer line saying how much was shown of how
much and the exact command that shows the next part (``Output.trailer``).

Nothing here prints: each projection returns an ``Output`` (body, trailer, notes) or a dict.
"""

from __future__ import annotations

import codecs
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ctxtools.errors import InputError, UsageError
from ctxtools.store import Payload

MAX_CHARS_DEFAULT = 12_000
MAX_CHARS_CEILING = 50_000
GREP_CHUNK = 1 << 20  # bytes of text decoded and searched per regex call (cut at a newline)
DENSE_NEEDLES = 2000  # short needles found more often than this in a block: use the regex
GREP_MAX_CARRY = 16 << 20  # a "line" longer than this is searched in pieces


@dataclass
class Output:
    """What a projection shows: the body, the trailer line when cut, and notes for stderr."""

    body: str = ""
    trailer: str | None = None
    notes: list[str] = field(default_factory=list)

    def text(self) -> str:
        """Body plus trailer, as printed on stdout."""
        if self.trailer is None:
            return self.body
        sep = "" if not self.body or self.body.endswith("\n") else "\n"
        return f"{self.body}{sep}{self.trailer}\n"


def clamp_max_chars(value: int | None) -> tuple[int, str | None]:
    """(the cap to use, a note when VALUE was above the hard ceiling)."""
    if value is None:
        return MAX_CHARS_DEFAULT, None
    if value < 1:
        raise UsageError(f"--max-chars {value}: must be at least 1")
    if value > MAX_CHARS_CEILING:
        return MAX_CHARS_CEILING, (
            f"--max-chars {value} is above the hard ceiling; clamped to {MAX_CHARS_CEILING}"
        )
    return value, None


# --- argument parsing ----------------------------------------------------------------------


def parse_range(spec: str) -> tuple[int, int | None]:
    """``X-Y`` (1-based, closed) or ``X-`` (to the end) -> (X, Y or None)."""
    m = re.fullmatch(r"\s*(\d+)\s*-\s*(\d*)\s*", spec or "")
    if not m:
        m1 = re.fullmatch(r"\s*(\d+)\s*", spec or "")
        if m1:  # a single line
            n = int(m1.group(1))
            m = None
            first, last = n, n
        else:
            raise UsageError(
                f"--range {spec!r}: expected X-Y (1-based line numbers) or X- (to the end)"
            )
    else:
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) else None
    if first < 1:
        raise UsageError(f"--range {spec}: line numbers start at 1")
    if last is not None and last < first:
        raise UsageError(f"--range {spec}: the end ({last}) is before the start ({first})")
    return first, last


def parse_slice(spec: str) -> tuple[int | None, int | None]:
    """``A:B`` with either side optional and negatives allowed -> (A, B)."""
    m = re.fullmatch(r"\s*(-?\d+)?\s*:\s*(-?\d+)?\s*", spec or "")
    if not m:
        raise UsageError(f"--slice {spec!r}: expected A:B (zero-based, half-open, e.g. 0:200)")
    a = int(m.group(1)) if m.group(1) is not None else None
    b = int(m.group(2)) if m.group(2) is not None else None
    return a, b


def resolve_slice(a: int | None, b: int | None, total: int) -> tuple[int, int]:
    """Python slice semantics: negatives count from the end, everything clamped."""
    start, stop, _ = slice(a, b).indices(total)
    return start, max(start, stop)


# --- the "next command" --------------------------------------------------------------------


@dataclass
class Next:
    """How to write the command that continues a cut read.

    ``base`` is ``ctx-read REF`` (already quoted) for a handle, None for stdin input.
    """

    base: str | None
    extra: tuple[str, ...] = ()  # options every next command repeats (e.g. --max-chars N)

    def command(self, *args: str) -> str:
        args = args + self.extra
        tail = " ".join(a if a.startswith("-") else shell_quote(a) for a in args)
        if self.base is None:
            return f"ctx-read {tail} (on the same stdin, or stash it first)"
        return f"{self.base} {tail}"


def shell_quote(arg: str) -> str:
    """ARG quoted for a POSIX shell, readably: 'single quotes' unless it holds one."""
    if "'" not in arg:
        return shlex.quote(arg)
    return '"' + re.sub(r'(["\\$`])', r"\\\1", arg) + '"'


def next_for(ref: str | None, max_chars: int = MAX_CHARS_DEFAULT) -> Next:
    """The Next for REF (None: stdin); a non-default MAX_CHARS is carried along."""
    extra = () if max_chars == MAX_CHARS_DEFAULT else ("--max-chars", str(max_chars))
    return Next(None if ref is None else f"ctx-read {shell_quote(ref)}", extra)


def _n(x: int) -> str:
    return f"{x:,}"


# --- decoding helpers ----------------------------------------------------------------------


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def chars_before(p: Payload, byte_offset: int) -> int:
    """Characters in the first BYTE_OFFSET bytes (BYTE_OFFSET at a character boundary)."""
    if p.chars == p.size:
        return byte_offset
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    n = 0
    for piece in p.iter_bytes(0, byte_offset):
        n += len(decoder.decode(piece))
    return n + len(decoder.decode(b"", True))


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


# --- line projections ----------------------------------------------------------------------


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

    ASKED is how the user put it (e.g. ``lines 100-2000``) for the trailer.
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
    for i, raw in enumerate(p.iter_lines(first, last), start=first):
        prefix = _prefix(number, i + 1)
        line = _decode(raw)
        s = f"{prefix}{line}\n"
        if used + len(s) > max_chars:
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
        start_char = chars_before(p, p.line_start(i)) + room
        line_chars = chars_before(p, p.line_start(i + 1)) - start_char + room
        stop_char = chars_before(p, p.line_start(last)) if last < total else p.chars
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


def range_view(
    p: Payload,
    spec: str,
    *,
    number: bool = False,
    max_chars: int = MAX_CHARS_DEFAULT,
    nxt: Next | None = None,
) -> Output:
    """``--range X-Y``: 1-based closed line numbers; an end past the last line is clamped."""
    first, last = parse_range(spec)
    total = p.lines
    notes = []
    if first > total:
        raise InputError(
            f"--range {spec}: starts after the last line (the payload has {_n(total)} lines)"
        )
    if last is not None and last > total:
        notes.append(f"--range {spec}: the payload has {_n(total)} lines; showing {first}-{total}")
        last = total
    asked = f"lines {first}-{last if last is not None else total}"
    out = lines_view(p, first - 1, last, number=number, max_chars=max_chars, nxt=nxt, asked=asked)
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
        return lines_view(
            p,
            first,
            last,
            number=number,
            max_chars=max_chars,
            nxt=nxt,
            asked=f"lines {first + 1}-{last}",
        )
    if unit != "chars":
        raise UsageError(f"--unit {unit!r}: chars or lines")
    if number:
        raise UsageError("-n numbers lines: use it with --unit lines, --range, --head or --tail")
    start, stop = resolve_slice(a, b, p.chars)
    show_to = min(stop, start + max_chars)
    out = Output(body=_char_window(p, start, show_to))
    if show_to < stop:
        out.trailer = (
            f"[ctx-read: cut at {_n(max_chars)} chars: showed chars {start}:{show_to} of "
            f"{start}:{stop} ({_n(p.chars)} chars in all); "
            f"next: {nxt.command('--slice', f'{show_to}:{stop}')}]"
        )
    return out


def _char_window(p: Payload, start: int, stop: int) -> str:
    if start >= stop:
        return ""
    if p.chars == p.size:  # one byte per character: seek
        return _decode(p.pread(start, stop - start))
    parts = []
    pos = 0
    for text in iter_text(p):
        end = pos + len(text)
        if end > start:
            parts.append(text[max(0, start - pos) : stop - pos])
        pos = end
        if pos >= stop:
            break
    return "".join(parts)


# --- grep ----------------------------------------------------------------------------------


def compile_regex(pattern: str, ignore_case: bool = False) -> re.Pattern[str]:
    flags = re.MULTILINE | (re.IGNORECASE if ignore_case else 0)
    try:
        return re.compile(pattern, flags)
    except re.error as exc:
        where = f" at position {exc.pos}" if exc.pos is not None else ""
        raise InputError(f"invalid regex {pattern!r}{where}: {exc.msg}") from None


MAX_CHARSET = 8  # a character class of at most this many characters can be a prefilter


def required_literals(pattern: str, ignore_case: bool = False) -> list[bytes] | None:
    """UTF-8 needles one of which every match of PATTERN contains, or None if unknown.

    Handles what grep patterns mostly are: a literal run (3+ bytes) somewhere in the pattern
    (``test_\\w+ FAILED`` needs `` FAILED``), or an alternation whose every branch has one
    (``FAILED|Error``). Without a long literal, a mandatory short literal or small character
    class serves (``[QZ]{3,}`` needs ``Q`` or ``Z``). With IGNORECASE the needles are
    lowercase ASCII (None otherwise).
    """
    try:
        from re import _constants as sc
        from re import _parser as sp
    except ImportError:  # pragma: no cover - another Python layout
        return None
    try:
        parsed = sp.parse(pattern, re.IGNORECASE if ignore_case else 0)
    except (re.error, RecursionError):
        return None
    icase = bool(parsed.state.flags & re.IGNORECASE)
    items = list(parsed.data)
    # "(A|B)" -> "A|B": descend through a lone group without flag changes.
    while len(items) == 1 and items[0][0] is sc.SUBPATTERN:
        _group, add, delete, sub = items[0][1]
        if add or delete:
            return None
        items = list(sub.data if hasattr(sub, "data") else sub)
    if len(items) == 1 and items[0][0] is sc.BRANCH:
        branches = [list(b.data if hasattr(b, "data") else b) for b in items[0][1][1]]
    else:
        branches = [items]
    out: set[str] = set()
    for branch in branches:
        needles = _branch_needles(branch, sc)
        if needles is None:
            return None
        if icase:
            if not all(n.isascii() for n in needles):
                return None
            needles = [n.lower() for n in needles]
        out.update(needles)
    return sorted(n.encode("utf-8") for n in out)


def _usable(needles: list[str]) -> bool:
    return bool(needles) and all(n and "\n" not in n and "\ufffd" not in n for n in needles)


def _charset(op: Any, arg: Any, sc: Any) -> list[str] | None:
    """The characters a mandatory one-character item can match (None: too many/unknown)."""
    if op is sc.LITERAL:
        return [chr(arg)]
    if op is sc.IN:
        chars: list[str] = []
        for op2, a2 in arg:
            if op2 is sc.LITERAL:
                chars.append(chr(a2))
            elif op2 is sc.RANGE and a2[1] - a2[0] < MAX_CHARSET:
                chars.extend(chr(c) for c in range(a2[0], a2[1] + 1))
            else:  # NEGATE, CATEGORY, big ranges
                return None
        return sorted(set(chars)) if 0 < len(set(chars)) <= MAX_CHARSET else None
    if op in (sc.MAX_REPEAT, sc.MIN_REPEAT) or op is getattr(sc, "POSSESSIVE_REPEAT", None):
        low, _high, sub = arg
        sub = list(sub.data if hasattr(sub, "data") else sub)
        if low >= 1 and len(sub) == 1:
            return _charset(sub[0][0], sub[0][1], sc)
    return None


def _branch_needles(branch: list, sc: Any) -> list[str] | None:
    best = ""
    sets: list[list[str]] = []
    run: list[str] = []
    for op, arg in [*branch, (None, None)]:
        if op is sc.LITERAL:
            run.append(chr(arg))
            continue
        if run:
            lit = "".join(run)
            if len(lit) > len(best):
                best = lit
            sets.append([lit])
            run = []
        if op is not None:
            chars = _charset(op, arg, sc)
            if chars is not None:
                sets.append(chars)
    if len(best.encode("utf-8")) >= 3 and _usable([best]):
        return [best]
    sets = [s for s in sets if _usable(s)]
    if not sets:
        return None
    return min(sets, key=lambda s: (len(s), -min(len(n) for n in s)))


def iter_matching_lines(
    p: Payload, rx: re.Pattern[str], first: int = 0, last: int | None = None
) -> Iterator[tuple[int, str]]:
    """(zero-based line number, line text) of every line with a match, in order.

    Searches bytes in chunks cut at newlines. When the pattern needs one of a few literals
    (``required_literals``), candidate lines are found with ``bytes.find`` and only they are
    decoded and matched; otherwise each chunk is decoded and searched as a whole.
    """
    last = p.lines if last is None else min(last, p.lines)
    if first >= last:
        return
    icase = bool(rx.flags & re.IGNORECASE)
    literals = required_literals(rx.pattern, icase)
    if literals is not None:
        yield from _literal_scan(p, rx, literals, icase, first, last)
        return
    lineno = first  # line number at the start of the current chunk
    for chunk in _line_chunks(p, p.line_start(first), p.line_start(last)):
        text = chunk.decode("utf-8", "replace")
        for rel, line in _regex_lines(rx, text):
            if lineno + rel >= last:
                return
            yield lineno + rel, line
        lineno += text.count("\n")


def _regex_lines(rx: re.Pattern[str], text: str) -> Iterator[tuple[int, str]]:
    """(line number within TEXT, line) of TEXT's lines with a match (TEXT cut at lines)."""
    pos = 0
    counted = 0
    lineno = 0
    n = len(text)
    while pos < n:
        m = rx.search(text, pos)
        if m is None or (m.start() == n and text.endswith("\n")):
            break  # (an empty match after the last newline is not a line)
        ls = max(text.rfind("\n", 0, m.start()) + 1, pos)
        le = text.find("\n", m.start())
        if le < 0:
            le = n
        lineno += text.count("\n", counted, ls)
        counted = ls
        yield lineno, text[ls:le]
        pos = le + 1


def _literal_scan(
    p: Payload, rx: re.Pattern[str], literals: list[bytes], icase: bool, first: int, last: int
) -> Iterator[tuple[int, str]]:
    """iter_matching_lines for patterns that need a literal: find candidates in each block
    with ``bytes.find`` (no copies, no decoding), decode and match only those lines, and
    get line numbers from the index (or a count since the previous match)."""
    start, end = p.line_start(first), p.line_start(last)
    carry: list[bytes] = []  # the line running across block boundaries
    carry_off = start
    cnt_off, cnt_line = start, first  # a known (offset, line number) pair
    base = start

    def line_at(off: int, piece: bytes) -> int:
        nonlocal cnt_off, cnt_line
        if base <= cnt_off <= off:
            cnt_line += piece.count(b"\n", cnt_off - base, off - base)
        else:
            cnt_line = p.newlines_before(off)
        cnt_off = off
        return cnt_line

    def check(line: bytes) -> str | None:
        hay = line.lower() if icase else line
        if not any(lit in hay for lit in literals):
            return None
        text = line.decode("utf-8", "replace")
        return text if rx.search(text) else None

    short = any(len(lit) < 3 for lit in literals)
    for piece in p.iter_bytes(start, end):
        first_nl = piece.find(b"\n")
        if first_nl < 0:
            carry.append(piece)
            base += len(piece)
            continue
        carry.append(piece[:first_nl])
        text = check(b"".join(carry))
        if text is not None:
            lineno = p.newlines_before(carry_off)
            cnt_off, cnt_line = carry_off, lineno
            yield lineno, text
        last_nl = piece.rfind(b"\n")
        hay = piece.lower() if icase else piece
        lo = first_nl + 1
        if short and sum(hay.count(lit, lo, last_nl) for lit in literals) > DENSE_NEEDLES:
            # Short needles that are everywhere here: one regex pass over the piece is cheaper.
            region = piece[lo : last_nl + 1].decode("utf-8", "replace")
            line0 = line_at(base + lo, piece)
            for rel, text in _regex_lines(rx, region):
                yield line0 + rel, text
            cnt_off, cnt_line = base + last_nl + 1, line0 + region.count("\n")
            carry = [piece[last_nl + 1 :]]
            carry_off = base + last_nl + 1
            base += len(piece)
            continue
        spans: dict[int, int] = {}
        for lit in literals:
            pos = hay.find(lit, lo, last_nl)
            while pos >= 0:
                ls = hay.rfind(b"\n", lo, pos) + 1 or lo
                le = hay.find(b"\n", pos, last_nl + 1)
                spans[ls] = le
                pos = hay.find(lit, le + 1, last_nl)
        for ls in sorted(spans) if len(literals) > 1 else spans:
            text = piece[ls : spans[ls]].decode("utf-8", "replace")
            if rx.search(text) is None:
                continue
            yield line_at(base + ls, piece), text
        carry = [piece[last_nl + 1 :]]
        carry_off = base + last_nl + 1
        base += len(piece)
    if carry and carry_off < end:
        text = check(b"".join(carry))
        if text is not None:
            yield p.newlines_before(carry_off), text


def _line_chunks(p: Payload, start: int, end: int) -> Iterator[bytes]:
    """Bytes START..END in pieces of about GREP_CHUNK bytes that end at a newline."""
    buf: list[bytes] = []
    size = 0
    for piece in p.iter_bytes(start, end):
        buf.append(piece)
        size += len(piece)
        if size < GREP_CHUNK:
            continue
        data = b"".join(buf)
        cut = data.rfind(b"\n") + 1
        if cut == 0 and len(data) < GREP_MAX_CARRY:
            buf, size = [data], len(data)
            continue
        if cut == 0:  # one enormous line: search it in pieces
            cut = len(data)
        yield data[:cut]
        rest = data[cut:]
        buf, size = ([rest], len(rest)) if rest else ([], 0)
    if buf:
        data = b"".join(buf)
        if data:
            yield data


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
    total = p.lines
    first, last = 0, total
    scope_last: int | None = None
    if scope is not None:
        f1, l1 = parse_range(scope)
        if f1 > total:
            raise InputError(f"--range {scope}: starts after the last line ({_n(total)} lines)")
        first = f1 - 1
        scope_last = l1
        last = total if l1 is None else min(l1, total)
    parts: list[str] = []
    used = 0
    shown = 0
    resume_at = -1  # zero-based first match line not shown
    printed_to = first - 1  # last line printed (inclusive)
    any_printed = False
    owed_to = -1  # after-context owed up to this line (inclusive)

    def emit(text: str) -> bool:
        nonlocal used
        if used + len(text) > max_chars:
            return False
        parts.append(text)
        used += len(text)
        return True

    def emit_context(a: int, b: int) -> bool:
        """Context lines a..b (inclusive)."""
        nonlocal printed_to
        if a > b:
            return True
        for i, raw in enumerate(p.iter_lines(a, b + 1), start=a):
            if not emit(f"{i + 1}-{_decode(raw)}\n"):
                return False
            printed_to = i
        return True

    for lineno, line in iter_matching_lines(p, rx, first, last):
        if context and not emit_context(printed_to + 1, min(owed_to, lineno - 1)):
            resume_at = lineno
            break
        start = max(lineno - context, printed_to + 1)
        if context and any_printed and start > printed_to + 1 and not emit("--\n"):
            resume_at = lineno
            break
        if (context and not emit_context(start, lineno - 1)) or not emit(f"{lineno + 1}:{line}\n"):
            resume_at = lineno
            break
        printed_to = lineno
        any_printed = True
        shown += 1
        owed_to = lineno + context
    else:
        if context:
            emit_context(printed_to + 1, min(owed_to, last - 1))
    out = Output(body="".join(parts))
    if resume_at < 0:
        if shown == 0:
            out.notes.append(f"no line matches {pattern!r}")
        return out
    if shown == 0:
        # even the first matching line does not fit: show its start
        raw = next(p.iter_lines(resume_at, resume_at + 1), b"")
        out.body = f"{resume_at + 1}:{_decode(raw)}"[:max_chars] + "\n"
        printed_to = resume_at
        resume_at += 1
        shown = 1
    begin = max(first, resume_at - context, printed_to + 1)
    rng = f"{begin + 1}-" if scope_last is None else f"{begin + 1}-{scope_last}"
    args = ["--grep", pattern]
    if ignore_case:
        args.append("-i")
    if context:
        args += ["-C", str(context)]
    args += ["--range", rng]
    out.trailer = (
        f"[ctx-read: cut at {_n(max_chars)} chars: showed {_n(shown)} matching lines, "
        f"searched lines {first + 1}-{_n(resume_at)} of {_n(total)}; "
        f"next: {nxt.command(*args)}]"
    )
    return out


# --- count ---------------------------------------------------------------------------------


class _PayloadStream:
    """A read-only binary stream over a payload's verified bytes."""

    def __init__(self, p: Payload) -> None:
        self._it = p.iter_bytes()
        self._buf = b""

    def read(self, n: int = -1) -> bytes:
        if self._buf:
            out, self._buf = self._buf, b""
            return out
        return next(self._it, b"")

    read1 = read


def count(p: Payload, ruler: Any) -> dict:
    """chars, lines, bytes and tokens (with RULER, streaming)."""
    from ctxtools.tokens import count_stream

    counts = count_stream(_PayloadStream(p), ruler)  # type: ignore[arg-type]
    out = {"chars": counts.chars, "lines": p.lines, "bytes": p.size, "tokens": counts.tokens}
    out.update(ruler.describe())
    if not counts.exact:
        out["exact"] = False
        out["note"] = "; ".join(counts.notes)
    return out


# --- JSON ----------------------------------------------------------------------------------


def _json_error(label: str, exc: Exception, line: int | None = None) -> InputError:
    msg = str(getattr(exc, "msg", None) or exc).split("\n", 1)[0]
    lineno = getattr(exc, "lineno", None)
    colno = getattr(exc, "colno", None)
    if line is not None:
        where = f" at line {line}"
    elif lineno is not None:
        where = f" at line {lineno}, column {colno}"
    else:
        where = ""
    return InputError(f"{label} is not valid JSON{where}: {msg}")


def load_json(p: Payload) -> Any:
    """The payload as a JSON value; JSON Lines as an array of its lines' values."""
    import orjson

    kind = p.record.get("type")
    if kind == "jsonl":
        return _load_jsonl(p)
    data = b"".join(p.iter_bytes())
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if kind != "json" and data.lstrip()[:1] in (b"{", b"["):
            try:
                return _load_jsonl(p)
            except InputError:
                pass
        raise _json_error(p.label, exc) from None


def _load_jsonl(p: Payload) -> list[Any]:
    import orjson

    out = []
    for i, raw in enumerate(p.iter_lines(), start=1):
        if not raw.strip():
            continue
        try:
            out.append(orjson.loads(raw))
        except orjson.JSONDecodeError as exc:
            raise InputError(
                f"{p.label} is not valid JSON Lines: line {i}: {str(exc.msg).splitlines()[0]}"
            ) from None
    return out


def jsonpath_view(
    p: Payload,
    expr: str,
    *,
    dialect: str = "rfc9535",
    paths: bool = False,
    skip: int = 0,
    max_chars: int = MAX_CHARS_DEFAULT,
    nxt: Next | None = None,
) -> Output:
    """A JSON array of the matches of EXPR (their normalized paths with PATHS), one a line."""
    import orjson

    from ctxtools.jsonpath import compile_query, query

    nxt = nxt or Next(None)
    if skip < 0:
        raise UsageError(f"--skip {skip}: must be 0 or more")
    compile_query(expr, dialect)  # a bad query fails before the document is read
    doc = load_json(p)
    matches = query(doc, expr, dialect)
    items = [m.path if paths else m.value for m in matches][skip:]
    parts = ["["]
    used = 2
    shown = 0
    cut_first = False
    for item in items:
        s = orjson.dumps(item, option=orjson.OPT_NON_STR_KEYS).decode()
        piece = ("\n" if shown == 0 else ",\n") + s
        if used + len(piece) + 2 > max_chars:
            if shown == 0:
                parts.append(piece[: max(0, max_chars - used)])
                cut_first = True
            break
        parts.append(piece)
        used += len(piece)
        shown += 1
    out = Output()
    if cut_first:
        out.body = "".join(parts) + "\n"
        args = ["--jsonpath", expr] + (["--paths"] if paths else [])
        if dialect != "rfc9535":
            args += ["--dialect", dialect]
        out.trailer = (
            f"[ctx-read: cut at {_n(max_chars)} chars: match {skip + 1} of {_n(len(matches))} "
            f"alone is longer; narrow the query (e.g. a key or [0:10] below it), "
            f"next: {nxt.command(*args, '--skip', str(skip + 1))}]"
        )
        return out
    out.body = "".join(parts) + ("\n]\n" if shown else "]\n")
    if shown < len(items):
        args = ["--jsonpath", expr] + (["--paths"] if paths else [])
        if dialect != "rfc9535":
            args += ["--dialect", dialect]
        out.trailer = (
            f"[ctx-read: cut at {_n(max_chars)} chars: showed matches {skip + 1}-{skip + shown} "
            f"of {_n(len(matches))}; next: {nxt.command(*args, '--skip', str(skip + shown))}]"
        )
    return out


# --- introspect ----------------------------------------------------------------------------

PROJECTIONS = [
    ("--head N", "the first N lines"),
    ("--tail N", "the last N lines"),
    ("--range X-Y", "lines X to Y, 1-based, closed (X- to the end)"),
    ("--slice A:B [--unit chars|lines]", "zero-based half-open slice, negatives from the end"),
    ("--grep REGEX [-C N] [-i]", "matching lines with their line numbers"),
    ("--count", "chars, lines, bytes and tokens"),
    ("--jsonpath EXPR [--paths]", "RFC 9535 JSONPath matches (JSON, or JSON Lines as an array)"),
    ("--introspect", "this description"),
]


def introspect(p: Payload, ref: str | None, *, max_chars: int = MAX_CHARS_DEFAULT) -> dict:
    """The projections this payload supports, its sizes, and examples for this very payload."""
    nxt = next_for(ref)
    lines, kind = p.lines, p.record.get("type") or "text"
    info: dict[str, Any] = {"ref": ref, "type": kind}
    if p.record.get("exit_status") is not None:
        info["exit_status"] = p.record["exit_status"]
    info.update({"chars": p.chars, "lines": lines, "bytes": p.size, "max_chars": max_chars})
    projections = [
        {"usage": u, "what": w}
        for u, w in PROJECTIONS
        if kind in ("json", "jsonl") or not u.startswith("--jsonpath")
    ]
    info["projections"] = projections
    mid = max(1, lines // 2)
    a, b = max(1, mid - 25), max(1, min(lines, mid + 24))
    examples = [
        nxt.command("--count"),
        nxt.command("--head", "20"),
        nxt.command("--range", f"{a}-{b}"),
        nxt.command("--tail", "20"),
        nxt.command("--grep", "error|fail|warn", "-i", "-C", "2"),
    ]
    if kind in ("json", "jsonl"):
        examples += _json_examples(p, kind, nxt, info)
    info["examples"] = examples
    return info


def _json_examples(p: Payload, kind: str, nxt: Next, info: dict) -> list[str]:
    from ctxtools.store import JSON_PARSE_LIMIT

    if p.size > JSON_PARSE_LIMIT:
        return [nxt.command("--jsonpath", "$[0]" if kind == "jsonl" else "$.*")]
    try:
        doc = load_json(p)
    except InputError:
        return []
    out = []
    if isinstance(doc, dict):
        keys = sorted(doc) if len(doc) > 50 else list(doc)
        info["top_level_keys"] = keys[:50]
        if keys:
            k = keys[0]
            sel = f"$.{k}" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k) else f"$[{_q(k)}]"
            out.append(nxt.command("--jsonpath", sel))
        out.append(nxt.command("--jsonpath", "$.*", "--paths"))
    elif isinstance(doc, list):
        info["top_level_length"] = len(doc)
        out.append(nxt.command("--jsonpath", "$[0]"))
        first = doc[0] if doc else None
        if isinstance(first, dict) and first:
            keys = list(first)
            info["element_keys"] = keys[:50]
            k = next((k for k in keys if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k)), None)
            if k is not None:
                out.append(nxt.command("--jsonpath", f"$[*].{k}"))
                v = first[k]
                if isinstance(v, str | int | float) and not isinstance(v, bool):
                    lit = _q(v) if isinstance(v, str) else str(v)
                    out.append(nxt.command("--jsonpath", f"$[?@.{k} == {lit}]"))
        out.append(nxt.command("--jsonpath", "$[-1]"))
    return out


def _q(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"
