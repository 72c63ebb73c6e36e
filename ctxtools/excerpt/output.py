"""What ctx-excerpt writes, for any caller: the query checked and read by the engine's analyzer,
each file's block written as soon as it is done, what to say about each file as it is
loaded, and the memory sections of ``--memory``.

Nothing here prints: text goes to a WRITE function (bytes), notes to a NOTE function (one
line each); the command passes stdout's and stderr's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from ctxtools.errors import UsageError
from ctxtools.excerpt.inputs import BINARY, OK, UNREADABLE, FileResult, InputSpec
from ctxtools.excerpt.loader import iter_excerpts
from ctxtools.excerpt.model import ExcerptOptions
from ctxtools.excerpt.run import render_unmatched

if TYPE_CHECKING:
    from ctxtools.analyzer.query import Query
    from ctxtools.memory.rank import Ranking, Scored

FLUSH_BLOCKS = 512  # blocks joined into one write (few large writes, not one a file)


def excerpt_query(
    query: str | None,
    idents: Sequence[str],
    *,
    signatures: bool = False,
    unmatched: str | None = None,
) -> Query:
    """The engine's query for QUERY (a task's words) and IDENTS (names taken as they are:
    exact name pointers); UsageError when there is nothing usable to look for (with
    SIGNATURES, nothing is needed), or when UNMATCHED is asked for with SIGNATURES."""
    from ctxtools.identifiers import valid_identifier
    from ctxtools.retrieval.window import window_query

    for name in idents:
        if not valid_identifier(name):
            raise UsageError(
                f"--ident {name!r} is not an identifier",
                hint="a word, snake_case, camelCase or dotted name",
            )
    if query is None and not idents and not signatures:
        raise UsageError("nothing to look for", hint="give --query TEXT or --ident NAME")
    if signatures and unmatched is not None:
        raise UsageError(
            "--unmatched applies to excerpts, not to --signatures",
            hint="--signatures lists every file's definitions",
        )
    q = window_query(query, idents)
    if q.empty and not signatures:
        raise UsageError(
            f"no usable word in the query {query!r}",
            hint="stop-words and one-letter words are ignored; add --ident NAME",
        )
    return q


def default_unmatched(inputs: int, signatures: bool) -> str:
    """What becomes of a file with no match when the caller does not say: shown by its head
    and tail for one input (or with signatures), named in a closing list for several."""
    return "show" if inputs <= 1 or signatures else "name"


class FileNotes:
    """Says through NOTE what happened to each file as it is loaded (an ``on_file`` for a
    run): the first unreadable one ends the run unless KEEP_GOING; ``status`` is then 1."""

    def __init__(self, keep_going: bool, note: Callable[[str], None]):
        self.keep_going = keep_going
        self.note = note
        self.status = 0

    def __call__(self, res: FileResult) -> bool:
        """Whether RES is to be shown."""
        if res.status == UNREADABLE:
            if not self.keep_going:
                res.raise_error()
            self.status = 1
            self.note(f"error: {res.error}")
        elif res.status == BINARY:
            self.note(res.note or "")
        if res.blanked:
            n = res.blanked
            self.note(f"note: {res.label}: redacted {n} private key block{'s' if n > 1 else ''} "
                      "(read as blank lines; --allow-secrets)")
        return res.status == OK


def write_blocks(
    sources: Iterable[InputSpec],
    query: Query,
    options: ExcerptOptions,
    write: Callable[[bytes], object],
    *,
    on_file: Callable[[FileResult], bool],
    unmatched: str = "show",
    **run: object,
) -> None:
    """Write each file's block through WRITE as soon as it is done (no budget, no sort):
    what ``ExcerptRun.render`` gives, in "name" mode the files where nothing matched
    listed at the end. ON_FILE says whether a result is shown (``FileNotes``); RUN is
    passed on to ``iter_excerpts`` (signatures, jobs, store, session, unreadable). What
    is done is written even when the run stops on an error."""
    pending: list[bytes] = []
    size = 0
    names: list[str] = []
    results = iter_excerpts(
        sources, query, options, render=True, show_unmatched=unmatched == "show", **run
    )
    try:
        for res in results:
            if not on_file(res):
                continue
            if res.block is None:  # nothing matched, not to be shown
                if unmatched == "name":
                    names.append(res.label)
                continue
            if pending or size:
                pending.append(b"\n")
            pending.append(res.block)
            size += len(res.block) + 1
            if len(pending) >= FLUSH_BLOCKS:
                write(b"".join(pending))
                pending = []
        if names:
            if pending or size:
                pending.append(b"\n")
            pending.append(render_unmatched(names).encode("utf-8", "surrogateescape"))
    finally:
        if pending:
            write(b"".join(pending))


# --- memory sections (--memory) ---------------------------------------------------------------


def check_memory_options(opts) -> None:
    """A usage error for the options --memory does not take with --query (keyed by the
    command's parameter names)."""
    if opts["query"] is None:
        return
    for name, bad in (
        ("FILE arguments", opts["files"] or opts["files_from"]),
        ("--ident", opts["idents"]),
        ("--signatures", opts["signatures"]),
        ("--tokens", opts["tokens"] is not None),
        ("--explain", opts["explain"]),
    ):
        if bad:
            raise UsageError(f"{name} and --memory do not go together")


def rank_memory_sections(paths: Sequence[str], query: str | None, **how: object) -> Ranking:
    """``ctxtools.memory.rank_memory`` of PATHS for QUERY (HOW: method, embed_cmd,
    embed_timeout, min_score, store; method None: the default); UsageError without a
    query, or when the query has no usable word."""
    from ctxtools.memory import DEFAULT_METHOD, rank_memory

    if query is None:
        raise UsageError("--memory needs --query TEXT", hint="the task to rank sections for")
    how["method"] = how.get("method") or DEFAULT_METHOD
    ranking = rank_memory(list(paths), query, **how)
    if ranking.no_words:
        raise UsageError(
            f"no usable word in the query {query!r}",
            hint="stop-words, numbers and one-letter words are ignored",
        )
    return ranking


def memory_notes(ranking: Ranking) -> list[str]:
    """What to say about a ranking: its own notes, then a note when no section qualifies."""
    notes = list(ranking.notes)
    if not ranking.kept:
        th = ranking.threshold
        best = ranking.chunks[0].score if ranking.chunks else 0
        notes.append(
            f"note: no memory section qualifies ({th.get('method', ranking.method)}: threshold "
            f"{th['threshold']:.3f}; best score {best:.3f})"
        )
    return notes


def render_memory(kept: Sequence[Scored]) -> str:
    """The qualifying sections, best first, each under ``==> FILE:START-END § HEADING <==
    score S`` with its lines numbered, separated by a blank line."""
    from ctxtools.quoting import numbered, quote_name

    blocks = []
    for s in kept:
        c = s.chunk
        title = f" § {c.heading}" if c.heading else ""
        lines = s.text.split("\n")
        body = "".join(numbered(n, line) + "\n" for n, line in enumerate(lines, c.start))
        name = quote_name(c.file)
        blocks.append(f"==> {name}:{c.start}-{c.end}{title} <== score {s.score:.3f}\n{body}")
    return "\n".join(blocks)


def memory_dict(ranking: Ranking) -> dict:
    """The --json document of --memory: the ranking, its qualifying sections with text."""
    doc = ranking.as_dict(kept_only=True)
    for row, s in zip(doc["results"], ranking.kept, strict=True):
        row["text"] = s.text
    return doc
