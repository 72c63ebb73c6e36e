"""Rendering: one file's block as ctx-excerpt prints it, and its JSON form.

A block is a header (``==> LABEL <== 120 lines; matched: a, b; ...``, made by ``header``
alone), then each shown line as ``  120│ code``, with a ``⋮`` line between spans that are
not adjacent. ``render_excerpt`` renders an ``Excerpt`` as text; ``hits_block`` and
``no_match_block`` render the same bytes straight from a file held whole (the fast path).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import repeat

from ctxtools.excerpt.match import Matcher
from ctxtools.excerpt.model import Excerpt, ExcerptOptions, Span
from ctxtools.excerpt.plan import plan_spans
from ctxtools.excerpt.source import cut_line, line_fragments
from ctxtools.fsutil import json_text
from ctxtools.quoting import quote_name


def gutter_width(line_count: int) -> int:
    """Width of the line-number column: the file's largest number, plus two spaces."""
    return len(str(max(line_count, 1))) + 2


def frame(label: str, parts: Sequence[str]) -> str:
    """The first line of a file's block: ``==> LABEL <== PART; PART; ...``, LABEL as
    ``ctxtools.quoting.quote_name`` shows it (a name with a newline stays on this line)."""
    return f"==> {quote_name(label)} <== " + "; ".join(parts)


def header(
    label: str,
    n: int,
    matched: Sequence[str],
    tail: int = 0,
    omitted: int = 0,
    omitted_matches: int = 0,
) -> str:
    """The header of an excerpt's block: N lines, the identifiers MATCHED (else "empty", or
    "no match" and the TAIL lines shown instead), and what was left out."""
    parts = [f"{n} line" + ("" if n == 1 else "s")]
    if matched:
        parts.append("matched: " + ", ".join(matched))
    elif n == 0:
        parts.append("empty")
    else:
        parts.append(f"no match, last {tail} lines" if tail else "no match")
    if omitted_matches:
        k = omitted_matches
        parts.append(
            f"{k} more matching line{'' if k == 1 else 's'} not shown"
            f" ({omitted} more window{'' if omitted == 1 else 's'})"
        )
    return frame(label, parts)


def render_header(ex: Excerpt, label: str) -> str:
    tail = next((len(s) for s in ex.spans if s.kind == "tail"), 0)
    return header(label, ex.line_count, ex.matched, tail, ex.omitted, ex.omitted_matches)


def separator(width: int) -> str:
    """The line shown between two spans that are not adjacent."""
    return "⋮".rjust(width)


def _with_gaps(spans: Sequence[Span]) -> Iterator[tuple[Span, bool]]:
    """Each span, and whether a separator line goes before it."""
    prev_end = None
    for span in spans:
        yield span, prev_end is not None and span.start > prev_end + 1
        prev_end = span.end


_GUTTERS: dict[int, list[str]] = {}
GUTTER_CACHE_LINES = 20_000


def _gutters(width: int, upto: int) -> list[str]:
    """``["", "    1│ ", "    2│ ", ...]`` up to UPTO, made once per width."""
    cache = _GUTTERS.setdefault(width, [""])
    if len(cache) <= upto:
        cache.extend(f"{n:>{width}}│ " for n in range(len(cache), max(upto + 1, 2 * len(cache))))
    return cache


def render_body(ex: Excerpt) -> list[str]:
    """The shown lines as ``  120│ code``, with a ``⋮`` line between non-adjacent spans."""
    w = gutter_width(ex.line_count)
    out: list[str] = []
    lines = ex.lines
    sep = separator(w)
    last = ex.spans[-1].end if ex.spans else 0
    gutters = _gutters(w, last) if last <= GUTTER_CACHE_LINES else None
    for span, gap in _with_gaps(ex.spans):
        if gap:
            out.append(sep)
        numbers = range(span.start, span.end + 1)
        texts = map(lines.get, numbers, repeat(""))
        if gutters is not None:
            out.extend(map(str.__add__, gutters[span.start : span.end + 1], texts))
        else:  # a huge file: no cache of millions of gutters
            out.extend(f"{n:>{w}}│ {t}" for n, t in zip(numbers, texts, strict=True))
    return out


def render_excerpt(ex: Excerpt, label: str) -> str:
    """The text block ctx-excerpt prints for one file (ends with a newline)."""
    body = render_body(ex)
    body.insert(0, render_header(ex, label))
    body.append("")
    return "\n".join(body)


def render_all(items: Sequence[tuple[str, Excerpt]]) -> str:
    """Several files' blocks, separated by a blank line."""
    return "\n".join(render_excerpt(ex, label) for label, ex in items)


def excerpt_dict(ex: Excerpt, label: str) -> dict:
    """The JSON form of one file (see ctx-excerpt --help for the schema)."""
    spans = []
    for s in ex.spans:
        text = "".join(ex.lines.get(n, "") + "\n" for n in range(s.start, s.end + 1))
        spans.append(
            {
                "kind": s.kind,
                "start": s.start,
                "end": s.end,
                "score": s.score,
                "identifiers": list(s.identifiers),
                "text": text,
            }
        )
    return {
        "path": json_text(label),
        "status": "ok",
        "lines": ex.line_count,
        "bytes": ex.size,
        "matched": list(ex.matched),
        "score": ex.score,
        "matches": ex.matches,
        "omitted_windows": ex.omitted,
        "omitted_matches": ex.omitted_matches,
        "spans": spans,
    }


_BGUTTERS: dict[int, list[bytes]] = {}


def _bgutters(width: int, upto: int) -> list[bytes]:
    """``[b"", b"\\n    1\xe2\x94\x82 ", ...]``: a newline and the gutter of each line
    number up to UPTO, made once per width."""
    cache = _BGUTTERS.setdefault(width, [b""])
    if len(cache) <= upto:
        cache.extend(
            f"\n{n:>{width}}│ ".encode() for n in range(len(cache), max(upto + 1, 2 * len(cache)))
        )
    return cache


def _block_lines(out: list[bytes], frags: list[bytes], first: int, width: int, cap: int) -> None:
    """Append to OUT each of FRAGS (lines FIRST... as bytes) after its gutter, as
    ``render_body`` shows them: CR dropped, invalid UTF-8 replaced, long lines cut."""
    chunk = b"\n".join(frags)
    if not chunk.isascii() or b"\r" in chunk or (len(chunk) > cap and max(map(len, frags)) > cap):
        lines = chunk.decode("utf-8", "replace").split("\n")
        lines = [x[:-1] if x.endswith("\r") else x for x in lines]
        lines = [cut_line(x, cap) if len(x) > cap else x for x in lines]
        frags = [x.encode("utf-8", "surrogateescape") for x in lines]
    last = first + len(frags) - 1
    if last <= GUTTER_CACHE_LINES:
        gutters = _bgutters(width, last)[first : last + 1]
    else:
        gutters = [f"\n{n:>{width}}│ ".encode() for n in range(first, last + 1)]
    both: list[bytes] = [b""] * (2 * len(frags))
    both[::2] = gutters
    both[1::2] = frags
    out.extend(both)


def hits_block(
    data: bytes,
    label: str,
    matcher: Matcher,
    options: ExcerptOptions,
    hits: dict[int, dict[str, float]],
) -> bytes:
    """The rendered block of a file held whole with HITS: its spans' lines, from bytes."""
    newlines = data.count(b"\n")
    n = newlines + (0 if data.endswith(b"\n") else 1)
    plan = plan_spans(hits, n, options, matcher)
    spans = plan.spans
    matched: set[str] = set()
    for found in hits.values():
        matched.update(found)
    head = header(label, n, matcher.order(matched), 0, plan.omitted_windows, plan.omitted_matches)
    out = [head.encode("utf-8", "surrogateescape")]
    width = gutter_width(n)
    cap = options.max_line_chars
    full = data.split(b"\n") if len(spans) > 2 else None
    sep = b"\n" + separator(width).encode()
    for span, gap in _with_gaps(spans):
        a, b = span.start, span.end
        if gap:
            out.append(sep)
        if b < a:
            continue
        frags = full[a - 1 : b] if full is not None else line_fragments(data, newlines, a, b)
        _block_lines(out, frags, a, width, cap)
    out.append(b"\n")
    return b"".join(out)


def no_match_block(data: bytes, label: str, options: ExcerptOptions) -> bytes:
    """The rendered block of a file held whole in which nothing matched: head and tail."""
    newlines = data.count(b"\n")
    n = newlines + (0 if not data or data.endswith(b"\n") else 1)
    h = max(0, min(options.head, n))
    t = max(0, options.tail)
    start = max(h + 1, n - t + 1)
    tail = n - start + 1 if t and start <= n else 0
    head = header(label, n, (), tail)
    out = [head.encode("utf-8", "surrogateescape")]
    width = gutter_width(n)
    cap = options.max_line_chars
    if tail and start == h + 1:  # head and tail touch: one run of lines
        _block_lines(out, line_fragments(data, newlines, 1, n), 1, width, cap)
    else:
        if h:
            _block_lines(out, line_fragments(data, newlines, 1, h), 1, width, cap)
        if tail:
            if h:
                out.append(b"\n" + separator(width).encode())
            _block_lines(out, line_fragments(data, newlines, start, n), start, width, cap)
    out.append(b"\n")
    return b"".join(out)
