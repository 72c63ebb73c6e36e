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
            line = _decode(raw)
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
    """Characters START..STOP-1, found through the index's character checkpoints."""
    if start >= stop:
        return ""
    if p.chars == p.size:  # one byte per character: seek
        return _decode(p.pread(start, stop - start))
    at = p.char_offset(start)
    data = p.pread(at, 4 * (stop - start) + 4)
    final = at + len(data) >= p.size
    text = codecs.getincrementaldecoder("utf-8")("replace").decode(data, final)
    return text[: stop - start]


# --- grep ----------------------------------------------------------------------------------

GREP_WINDOW = 2_000  # characters shown around the match of a line too long to show whole
MAX_WINDOW_NOTES = 5  # stderr notes naming the --slice of such a line


def compile_regex(pattern: str, ignore_case: bool = False) -> Any:
    """PATTERN compiled for --grep (RE2, linear time; see ``ctxtools.projections.regex``)."""
    from ctxtools.projections.regex import compile_regex as compile_

    return compile_(pattern, ignore_case)


def required_literals(pattern: str, ignore_case: bool = False) -> list[bytes] | None:
    from ctxtools.projections.regex import required_literals as needles

    return needles(pattern, ignore_case)


def iter_matching_lines(
    p: Payload, rx: Any, first: int = 0, last: int | None = None
) -> Iterator[tuple[int, str]]:
    """(zero-based line number, line text) of every line with a match, in order."""
    from ctxtools.projections.regex import iter_hits

    for hit in iter_hits(p, rx, first, last):
        yield hit.line, _decode(p.pread(hit.start, hit.end - hit.start))


def _window(p: Payload, hit: Any, width: int) -> tuple[str, int, int]:
    """(text, first char, end char) of about WIDTH characters of HIT's line around its
    match: a third before the match, the rest from it; char offsets are the payload's."""
    before = max(width // 3, 1)
    a = max(hit.start, hit.match_start - 4 * before)
    head = p.pread(a, hit.match_start - a)
    cut = 0
    while cut < min(3, len(head)) and 0x80 <= head[cut] < 0xC0 and a + cut > hit.start:
        cut += 1  # start at a character boundary
    head_text = _decode(head[cut:])[-before:]
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
    from ctxtools.projections.regex import iter_hits

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
        """Context lines a..b (inclusive); a line too long for the output is cut."""
        nonlocal printed_to
        if a > b:
            return True
        cap = 4 * max_chars + 4
        for i, (raw, whole) in enumerate(p.iter_lines_capped(a, b + 1, cap), start=a):
            text = _decode(raw)
            if not whole or len(text) > max_chars // 2:
                text = text[: max_chars // 4] + "\u2026"
            if not emit(f"{i + 1}-{text}\n"):
                return False
            printed_to = i
        return True

    windows: list[str] = []

    def show(hit: Any) -> str:
        """The matching line as printed: whole, or a window around its match."""
        nbytes = hit.end - hit.start
        if nbytes <= 4 * max_chars:
            text = _decode(p.pread(hit.start, nbytes))
            if len(text) + len(str(hit.line + 1)) + 2 <= max_chars:
                return f"{hit.line + 1}:{text}\n"
        width = max(1, min(GREP_WINDOW, max_chars - len(str(hit.line + 1)) - 4))
        text, a, b = _window(p, hit, width)
        line_a = p.chars_before(hit.start)
        line_b = p.chars_before(hit.end)
        # more of the line: what follows the window, or (at the line's end) what precedes it
        after = b < line_b
        more = f"{b}:{min(line_b, b + max_chars)}" if after else f"{max(line_a, a - max_chars)}:{a}"
        windows.append(
            f"line {hit.line + 1} has {_n(line_b - line_a)} chars: showed chars {a}:{b} "
            f"around its first match; the {'next' if after else 'previous'} part: "
            f"{nxt.command('--slice', more)}"
        )
        left = "\u2026" if a > line_a else ""
        right = "\u2026" if b < line_b else ""
        return f"{hit.line + 1}:{left}{text}{right}\n"

    pending = None
    for hit in iter_hits(p, rx, first, last):
        lineno = hit.line
        pending = hit
        if context and not emit_context(printed_to + 1, min(owed_to, lineno - 1)):
            resume_at = lineno
            break
        start = max(lineno - context, printed_to + 1)
        if context and any_printed and start > printed_to + 1 and not emit("--\n"):
            resume_at = lineno
            break
        if (context and not emit_context(start, lineno - 1)) or not emit(show(hit)):
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
    if resume_at >= 0 and shown == 0 and pending is not None:
        # its context filled the output: show the matching line alone
        out.body = show(pending)[:max_chars]
        printed_to = resume_at
        resume_at += 1
        shown = 1
    out.notes.extend(windows[:MAX_WINDOW_NOTES])
    if len(windows) > MAX_WINDOW_NOTES:
        out.notes.append(f"{len(windows) - MAX_WINDOW_NOTES} more long lines shown as windows")
    if resume_at < 0:
        if shown == 0:
            out.notes.append(f"no line matches {pattern!r}")
        return out
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


def _dump_json(item: Any) -> str:
    """ITEM as compact JSON (orjson; the standard library past orjson's 255 levels)."""
    import orjson

    try:
        return orjson.dumps(item, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        import json
        import sys

        from ctxtools.jsonpath import STACK_FRAMES

        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, STACK_FRAMES))
        try:
            return json.dumps(item, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError) as exc:
            raise InputError(f"a match cannot be shown as JSON: {exc}") from None
        finally:
            sys.setrecursionlimit(limit)


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
        s = _dump_json(item)
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
