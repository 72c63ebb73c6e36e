"""Rendering: one file's block as ctx-excerpt prints it, and its JSON form.

A block is a header (``==> LABEL <== 120 lines; matched: a, b; shown: Cache.get, ...``,
made by ``header`` alone), then each shown line as its real number, a tab and the line
(``numbered``), with a ``⋮`` line between spans that are not adjacent.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import repeat

from ctxtools.excerpt.model import Excerpt, Span
from ctxtools.fsutil import json_name
from ctxtools.quoting import SEPARATOR, numbered, quote_name

HEADER_NAMES = 6  # definitions a header names, the most relevant first




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
    names: Sequence[str] = (),
) -> str:
    """The header of an excerpt's block: N lines, the query terms MATCHED (else "empty", or
    "no match" and the TAIL lines shown instead), the definitions its windows show (NAMES,
    the most relevant first) and how many windows above the floor were left out."""
    parts = [f"{n} line" + ("" if n == 1 else "s")]
    if matched:
        parts.append("matched: " + ", ".join(matched))
    elif n == 0:
        parts.append("empty")
    else:
        parts.append(f"no match, last {tail} lines" if tail else "no match")
    if names:
        more = len(names) - HEADER_NAMES
        parts.append(
            "shown: " + ", ".join(names[:HEADER_NAMES]) + (f" and {more} more" if more > 0 else "")
        )
    if omitted:
        parts.append(f"{omitted} more window{'' if omitted == 1 else 's'} above the floor")
    return frame(label, parts)


def shown_names(ex: Excerpt) -> list[str]:
    """The definitions EX's windows show, the most relevant first, each once."""
    wins = sorted((w for s in ex.spans for w in s.windows), key=lambda w: (-w.score, w.start))
    return list(dict.fromkeys(w.name for w in wins if w.name))


def render_header(ex: Excerpt, label: str) -> str:
    tail = next((len(s) for s in ex.spans if s.kind == "tail"), 0)
    return header(label, ex.line_count, ex.matched, tail, ex.omitted, shown_names(ex))


def _with_gaps(spans: Sequence[Span]) -> Iterator[tuple[Span, bool]]:
    """Each span, and whether a separator line goes before it."""
    prev_end = None
    for span in spans:
        yield span, prev_end is not None and span.start > prev_end + 1
        prev_end = span.end


_GUTTERS: list[str] = [""]
GUTTER_CACHE_LINES = 20_000


def _gutters(upto: int) -> list[str]:
    """``["", "1\t", "2\t", ...]`` up to UPTO (``numbered``'s prefixes), made once."""
    cache = _GUTTERS
    if len(cache) <= upto:
        cache.extend(numbered(n, "") for n in range(len(cache), max(upto + 1, 2 * len(cache))))
    return cache


def render_body(ex: Excerpt) -> list[str]:
    """The shown lines (``numbered``), with a ``⋮`` line between non-adjacent spans."""
    out: list[str] = []
    lines = ex.lines
    last = ex.spans[-1].end if ex.spans else 0
    gutters = _gutters(last) if last <= GUTTER_CACHE_LINES else None
    for span, gap in _with_gaps(ex.spans):
        if gap:
            out.append(SEPARATOR)
        numbers = range(span.start, span.end + 1)
        texts = map(lines.get, numbers, repeat(""))
        if gutters is not None:
            out.extend(map(str.__add__, gutters[span.start : span.end + 1], texts))
        else:  # a huge file: no cache of millions of gutters
            out.extend(map(numbered, numbers, texts))
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
    """The JSON form of one file (see ctx-excerpt --help for the schema); a LABEL that is
    not UTF-8 is ``fsutil.json_name``'s: ``path`` with U+FFFD, and ``path_quoted``."""
    spans = []
    for s in ex.spans:
        text = "".join(ex.lines.get(n, "") + "\n" for n in range(s.start, s.end + 1))
        spans.append(
            {
                "kind": s.kind,
                "start": s.start,
                "end": s.end,
                "score": round(s.score, 3),
                "terms": list(s.terms),
                "chunks": [w.parts_dict() for w in s.windows],
                "text": text,
            }
        )
    return {
        **json_name(label),
        "status": "ok",
        "lines": ex.line_count,
        "bytes": ex.size,
        "matched": list(ex.matched),
        "score": round(ex.score, 3),
        "matches": ex.matches,
        "omitted_windows": ex.omitted,
        "spans": spans,
    }
