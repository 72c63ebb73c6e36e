"""Files windowed around what a task is about, with real line numbers.

A file is not cut at its first N bytes (which routinely loses the function the task is
about): it is cut down to its first lines (package clause, imports), plus windows of lines
around the lines that mention the task's identifiers, each line keeping its real number so
that a model can ask for more by number. When nothing matches, the file's last lines stand
in for the windows.

The pieces, for a library user such as ctx-pack::

    matcher = Matcher(identifiers_from_query(task))      # once per run
    ex = excerpt_text(text_or_bytes, matcher)             # -> Excerpt (spans, lines, scores)
    ex = excerpt_file(path, matcher)                      # files over 512 KB are streamed
    render_excerpt(ex, label)                             # the text ctx-excerpt prints
    fit_budget(items, tokens, ruler.count)                # drop windows, then files, to fit

Many inputs at once (paths, ``ctx:`` handles, bytes; per-file status, one budget over all,
worker processes) as ctx-excerpt runs them: ``excerpt_sources`` (``ctxtools.excerpt.run``).

The modules, each importing only those above it:

    model        ExcerptOptions, Hit, Span, Excerpt: the records
    definitions  defined_name: the name a line of code defines (ranks windows)
    match        Matcher: which lines mention the identifiers, and how much
    plan         plan_spans: which windows of a file to show
    source       reading lines, whole or streamed; binary sniffing
    core         excerpt_text / excerpt_stream / excerpt_file: one text cut down
    render       header, render_excerpt, excerpt_dict; the bytes fast path's blocks
    blocks       file_block: a file straight to its rendered block
    budget       fit_budget, value_drop_order, Dropped
    signatures   signatures_of and its rendering (--signatures)
    inputs       Input, InputSpec, FileResult, find_unreadable: what a run reads
    loader       iter_excerpts: each input loaded into a FileResult
    workers      how many worker processes (ctxtools.forked) a run over many files gets
    run          excerpt_sources, ExcerptRun: a whole run (budget, order, unmatched files)
    output       what ctx-excerpt writes: streamed blocks, per-file notes, memory sections

This package's ``__init__`` imports none of them: each public name below is loaded from
its module at first use (start-up time of every command stays as it was).
"""

from __future__ import annotations

from ctxtools.lazy import lazy_exports

_MODULES = {  # module -> the names it gives the package
    "model": ("ExcerptOptions", "OPTION_NAMES", "Excerpt", "Hit", "Span"),
    "definitions": ("defined_name",),
    "match": ("Matcher",),
    "plan": ("Plan", "plan_spans"),
    "source": ("BINARY_SNIFF", "BLOCK_SIZE", "LARGE_FILE", "is_binary", "read_file_bytes"),
    "core": ("excerpt_file", "excerpt_stream", "excerpt_text"),
    "render": (
        "excerpt_dict",
        "gutter_width",
        "render_all",
        "render_body",
        "render_excerpt",
        "render_header",
    ),
    "blocks": ("FileBlock", "excerpt_file_block", "file_block"),
    "budget": ("Dropped", "fit_budget", "value_drop_order"),
    "signatures": ("Signatures", "render_signatures", "signatures_dict", "signatures_of"),
    "inputs": ("FileResult", "Input", "InputSpec", "find_unreadable", "unreadable_error"),
    "loader": ("iter_excerpts", "render_item"),
    "workers": ("auto_jobs",),
    "run": ("ExcerptRun", "excerpt_sources", "render_unmatched"),
}

__all__ = sorted(name for names in _MODULES.values() for name in names)


__getattr__, __dir__ = lazy_exports(__name__, _MODULES)
