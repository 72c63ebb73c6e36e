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

_MODULES = {  # module -> the names it gives the package
    "output": (
        "MAX_CHARS_CEILING",
        "MAX_CHARS_DEFAULT",
        "Next",
        "Output",
        "clamp_max_chars",
        "next_for",
        "shell_quote",
    ),
    "specs": ("parse_range", "parse_slice", "resolve_slice"),
    "lines": (
        "chars_before",
        "head_view",
        "iter_text",
        "lines_view",
        "range_view",
        "slice_view",
        "tail_view",
    ),
    "prefilter": ("required_literals",),
    "grep": ("GREP_WINDOW", "MAX_WINDOW_NOTES", "grep_view", "iter_matching_lines"),
    "regex": ("compile_regex",),
    "jsonview": ("jsonpath_view", "load_json"),
    "overview": ("PROJECTIONS", "count", "introspect"),
}

__all__ = sorted(name for names in _MODULES.values() for name in names)


__getattr__, __dir__ = lazy_exports(__name__, _MODULES)
