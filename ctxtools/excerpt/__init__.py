"""Files windowed around what a task is about, with real line numbers.

A file is not cut at its first N bytes (which routinely loses the function the task is
about): it is cut down to its first lines (package clause, imports), plus the windows the
engine ctx-pack ranks with chooses (``ctxtools.retrieval.window``): a file's best chunks
(its definitions, scored as ctx-pack scores them), or in a text without definitions the
lines around its best-scoring lines, each line keeping its real number so that a model
can ask for more by number. When nothing matches, the file's last lines stand in for the
windows.

The pieces, for a library user::

    ex = excerpt_text(text_or_bytes, task, label="src/auth.py")  # -> Excerpt (spans, lines)
    ex = excerpt_file(path, task)                        # files over 512 KB are streamed
    render_excerpt(ex, label)                            # the text ctx-excerpt prints
    run = excerpt_sources(paths, task, budget=4000)      # many inputs ranked together

Many inputs at once (paths, ``ctx:`` handles, bytes; per-file status, one budget over all,
worker processes to read them) as ctx-excerpt runs them: ``excerpt_sources``
(``ctxtools.excerpt.run``).

The modules, each importing only those above it:

    model        ExcerptOptions, Span, Excerpt: the records
    source       reading lines, whole or streamed; binary sniffing
    core         Engine (a run's ranking), excerpt_text / excerpt_stream / excerpt_file
    render       header, render_excerpt, excerpt_dict
    fit          fit_budget, Dropped: a budget kept in the engine's order of relevance
    signatures   signatures_of and its rendering (--signatures)
    inputs       Input, InputSpec, FileResult, find_unreadable: what a run reads
    workers      how many worker processes (ctxtools.forked) a run over many files gets
    loader       iter_excerpts: every input read, ranked together, cut into a FileResult
    run          excerpt_sources, ExcerptRun: a whole run (budget, order, unmatched files)
    output       what ctx-excerpt writes: streamed blocks, per-file notes, memory sections

This package's ``__init__`` imports none of them: each public name below is loaded from
its module at first use (start-up time of every command stays as it was).
"""

from __future__ import annotations

from ctxtools.lazy import lazy_exports

_MODULES = {  # module -> the names it gives the package
    "model": ("ExcerptOptions", "OPTION_NAMES", "Excerpt", "Span"),
    "source": ("BINARY_SNIFF", "BLOCK_SIZE", "LARGE_FILE", "is_binary", "read_file_bytes"),
    "core": ("Engine", "excerpt_file", "excerpt_stream", "excerpt_text"),
    "render": (
        "excerpt_dict",
        "render_all",
        "render_body",
        "render_excerpt",
        "render_header",
    ),
    "fit": ("Dropped", "fit_budget"),
    "signatures": ("Signatures", "render_signatures", "signatures_dict", "signatures_of"),
    "inputs": ("FileResult", "Input", "InputSpec", "find_unreadable", "unreadable_error"),
    "loader": ("iter_excerpts", "render_item"),
    "workers": ("auto_jobs",),
    "run": ("ExcerptRun", "excerpt_sources", "render_unmatched"),
}

__all__ = sorted(name for names in _MODULES.values() for name in names)


__getattr__, __dir__ = lazy_exports(__name__, _MODULES)
