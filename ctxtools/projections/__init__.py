"""Projections: what ``ctx-read`` shows of a payload (a stored handle or a spooled stdin).

Every projection works on a ``ctxtools.store.Payload`` -- random access through the line
index, verified block by block -- so a line range of a multi-gigabyte blob costs a binary
search and a short scan, and a full scan (grep, count) runs in bounded memory.

Text is decoded as UTF-8 with invalid bytes shown as U+FFFD; the stored bytes are never
changed. Output is capped at ``max_chars`` characters (``clamp_max_chars``: default 12,000,
hard ceiling 50,000); a cut output gets one trailer line saying how much was shown of how
much and the exact command that shows the next part (``Output.trailer``).

Nothing here prints: each projection returns an ``Output`` (body, trailer, notes) or a dict.

The modules, each importing only those above it:

    output      Output, Next, clamp_max_chars: what a projection returns, the next command
    specs       parse_range, parse_slice: the --range and --slice arguments
    lines       lines_view, range_view, head_view, tail_view, slice_view
    prefilter   required_literals: the literals a regex's matches contain (re._parser)
    regex       the RE2 engine of --grep: compile_regex, iter_hits
    grep        grep_view: matching lines with context, in the output cap
    jsonview    load_json, jsonpath_view: --jsonpath
    overview    count, introspect: --count and --introspect

This ``__init__`` imports none of them: each name below is loaded from its module at
first use.
"""

from __future__ import annotations

from ctxtools.lazy import lazy_exports

_EXPORTS = {
    "MAX_CHARS_CEILING": "output",
    "MAX_CHARS_DEFAULT": "output",
    "Next": "output",
    "Output": "output",
    "clamp_max_chars": "output",
    "next_for": "output",
    "shell_quote": "output",
    "parse_range": "specs",
    "parse_slice": "specs",
    "resolve_slice": "specs",
    "chars_before": "lines",
    "head_view": "lines",
    "iter_text": "lines",
    "lines_view": "lines",
    "range_view": "lines",
    "slice_view": "lines",
    "tail_view": "lines",
    "required_literals": "prefilter",
    "GREP_WINDOW": "grep",
    "MAX_WINDOW_NOTES": "grep",
    "compile_regex": "regex",
    "grep_view": "grep",
    "iter_matching_lines": "grep",
    "jsonpath_view": "jsonview",
    "load_json": "jsonview",
    "PROJECTIONS": "overview",
    "count": "overview",
    "introspect": "overview",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
