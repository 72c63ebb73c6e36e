"""ctx-excerpt: files windowed around what a task is about, with real line numbers."""

from __future__ import annotations

import click

from ctxtools import defaults
from ctxtools.cli.decorators import CONTEXT_SETTINGS
from ctxtools.cli.entry import make_main
from ctxtools.cli.inputs import read_source_bytes, resolve_sources
from ctxtools.cli.outputs import emit_json, stdout_bytes, warn, write
from ctxtools.cli.retrieval import retrieval_method
from ctxtools.cli.ruler import model_encoding, ruler_from_options
from ctxtools.cli.tables import options
from ctxtools.options.excerpt import EXCERPT


@click.command(context_settings=CONTEXT_SETTINGS)
@options(EXCERPT)
def cli(**opts) -> int:
    """Cut files down to what a task is about, with real line numbers.

    Each file shows its first lines, then its definitions that the task is about, chosen
    by the engine ctx-pack ranks with (a log or other text without definitions: the lines
    around its best lines), every line with its real number; a file where nothing matches
    shows its last lines. --tokens fits the whole output into a budget, --signatures
    shows only the declaring lines, --json the windows and their scores.

    Exit status: 0 ok, 1 a file or handle could not be read (also with --keep-going), or
    a missing --memory path, 2 usage error (e.g. a query with no usable word, or with
    --memory no usable word), 130 Ctrl-C.

    \b
    Examples:
      ctx-excerpt -q "fix the JWT expiry check in verifyToken" src/auth/*.py
      git ls-files -z '*.go' | ctx-excerpt -q "retry backoff" --files-from - -0 --tokens 4000
      ctx-excerpt --ident parse_header --json lib/http.py
      ctx-excerpt -q "connection refused" --window 10 build.log
      ctx-excerpt --signatures src/server.go src/routes.ts
      ctx-excerpt --memory MEMORY.md --memory notes/ -q "how do we rotate signing keys?"

    The manual, man ctx-excerpt, has the details.

    \f

    Head-truncating a file (say at 2,800 bytes) routinely cuts the very function a task is
    about. ctx-excerpt shows each file's first lines (package clause, imports), then the
    parts of it the task is about, every line with its real number so that a model can
    ask for more (ctx-read --range, an editor's go-to-line). When nothing in a file
    matches, its last lines stand in for them.

    The files are ranked as ctx-pack ranks a repository's (one engine: over the same
    files, the same scores; ctx-pack counts a word's rarity over the whole repository):
    --query TEXT is read by ctx-pack's analyzer (words, the parts of snake_case and
    camelCase names, code-shaped names, paths, stack-trace frames, quoted messages; its
    stop-words are left out, case does not matter), --ident NAME adds a name as it is (a
    definition with that name ranks up, as one the task writes in code does). Each file
    is cut into its definitions by the repo map's scanners (functions and methods whole;
    a class's header; the code between them; a long definition in parts), and every
    chunk is scored: BM25 over the chunks of all the files given (a word most chunks hold
    weighs little; a word in most of the files, nothing), plus what points at it (its name
    is the task's, a stack frame's line or function, an error message it prints), its
    file's share of the file's score, and what the best chunks call. Over many files, as
    in ctx-pack, the 250 files the task's words rank best (and every one a path, frame or
    message points at) are cut into definitions; the others are cut by lines, as a log is.

    Per file: the first --head lines (15; after a licence banner, a comment block that
    opens the file and names a copyright or a licence, when the file has one), then at
    most --max-windows (6) windows: its
    chunks whose own lines hold a term (or that a pointer or a call reaches), the most
    relevant first, down to the engine's floor (a chunk whose own evidence is under 0.27
    of the file's best is worth too little to show); they are printed in line order, and
    adjacent ones as one run. A file with no definitions (a log, prose, JSON, a name no
    scanner reads, stdin) or over 512 KB is cut by lines instead: each line that holds a
    term is the centre of a window of --window lines (25) before and after it, scored by
    the same BM25 (the words of the window, against a window's mean length in that text);
    the best are taken first, none overlapping one taken, down to the same floor. Such a
    file is streamed: only the best candidates and the lines the windows show are kept.
    When nothing matches, the last --tail lines (40) are shown instead.

    Each file starts with a header naming it, the query terms it holds, the definitions
    it shows (the most relevant first) and how many more windows above the floor
    --max-windows left out (in a text without definitions, counted among the candidates
    kept); each line is printed as its number, a tab and the line ('120<TAB>code', as
    cat -n prints it without padding); a '⋮' line stands between windows that are not
    adjacent. A line longer than 500 characters is cut and ends with
    '…[+N chars]'. Lines are counted at newline bytes, so CRLF files and invalid UTF-8
    (shown as U+FFFD) keep their real line numbers. A file name is shown as it is unless
    it holds a control character (a newline, a tab...), a double quote or a backslash:
    then it is shown in double quotes with C escapes (\\n, \\t, \\", \\\\, others as
    octal bytes such as \\033), as git shows names, so a name cannot break its header line.

    FILE arguments may be '-' for stdin, a handle reference ctx:[SESSION/]NAME[@SHA] (from
    ctx-stash; --store, --session), or names read from --files-from FILE (one a line, or
    NUL-separated with -0). Every input is read before the first is printed (the words'
    rarity is over all of them), by --jobs worker processes. Binary files (a NUL byte in
    the first 8 KiB, or mostly bytes that are not UTF-8) are skipped with a note on
    stderr. A file that cannot be read is an error naming it; with --keep-going the
    others are still excerpted, the unreadable ones are named on stderr, and the exit
    status is 1.

    With more than one input, a file where nothing matched is not shown: it is named in
    one list after the others ('no match in N files:', then a name a line), as over a
    code base most files match nothing and their heads and tails would drown the rest.
    --unmatched show shows them by their head and tail (the default for one input),
    --unmatched name names them (the default for several), --unmatched omit leaves them
    out. Not with --signatures.

    --tokens N fits the whole printed output into N tokens of the ruler (--encoding,
    --tokenizer, --heuristic, --exact; cl100k_base by default) in ctx-pack's order of
    relevance: windows are kept the most relevant first, across all files (a file's
    header and head come with its first window), each while it fits; then the matched
    files that kept no window, by their head; then the files where nothing matched. A
    file whose head does not fit beside its best window is shown without it, from that
    window on, when the two fit (a small budget, or a small file that is all head). So
    what goes is what is worth least; the list of files with no match names as many as
    then fit. Each drop is reported on stderr. Files are printed in the order given, or
    --sort score (ctx-pack's file score, best first, ties in the order given).

    --signatures prints, per file, only the lines that declare something (class, def, func,
    fn, methods, types...) as found by the repo map's scanners (Python, Go, JavaScript,
    TypeScript, Rust, Java, C, C++, C#, Ruby, PHP, Kotlin, Swift, Scala, Lua, shell),
    indented by nesting; other files get a note. --query is then optional; with it, the
    header names the terms the signatures hold and --sort score ranks by them.

    --json prints {"terms": [...], "options": {"window", "head", "max_windows", "tail",
    "ignore_case"}, "files": [{"path", "status": "ok", "lines", "bytes", "matched": [...],
    "score", "matches", "omitted_windows", "spans": [{"kind": "head"|"window"|"tail",
    "start", "end", "score", "terms": [...], "chunks": [{"chunk", "score", "words",
    "pointers", "file", "callees"}], "text"}]}]}: "terms" are the query's as the analyzer
    read them; a file's "score" is its ctx-pack file score, "matches" counts its chunks
    with evidence of their own (in a text without definitions: its lines that hold a
    term), "omitted_windows" the windows above the floor left out; each span's "chunks"
    are the engine's windows it shows with their score in parts, as ctx-pack's JSON
    "chunk_scores" gives them ("chunk": "Scope.name START-END", or "lines START-END"; a
    head carries the chunks inside it); span lines are 1-based and inclusive, "text" is
    their lines (CR removed, long lines cut). A skipped file is {"path", "status":
    "binary"|"unreadable", "error"?}. With --unmatched name (several inputs),
    "unmatched": [paths] lists the files with no match instead of "files". Undecodable
    bytes of a file name show as U+FFFD. With --tokens: "budget": {"tokens", "used",
    "counter", "exact", "dropped": [{"path", "kind": "window"|"head"|"file", "start",
    "end", "score"}]}, the budget applying to the text output ("head": a file shown
    without its first lines, which did not fit). With --signatures a file has
    "language", "matches" (the definitions that match) and "definitions": [{"kind",
    "name", "line", "end_line", "scope", "signature"}] instead of spans ("status":
    "too_large" over 512 KB: not scanned).

    --memory PATH (repeatable; Markdown, reStructuredText and text files, or directories of
    them) does what ctx-pack --memory does and shows its choice: each file is cut into
    sections, each scored against --query, and the sections that qualify are printed best
    first, each under a header '==> FILE:START-END § HEADING <== score S' with its lines
    numbered as above. --retrieval, --embed-cmd, --embed-timeout and --min-score are
    ctx-pack's (see ctx-pack --help). With --json: {"method", "requested", "threshold":
    {"threshold", "floor", "median", "margin", "best", "share", "rule"}, "files", "chunks", "kept",
    "notes", "results": [{"file", "heading",
    "start", "end", "score", "kept", "why", "text"}]}, the qualifying sections only.
    Nothing qualifying is not an error (a note on stderr). FILE arguments, --ident,
    --signatures, --tokens and the window options do not apply.

    --explain prints on stderr, as ctx-pack --explain does, each shown file with its score
    (and its tokens, with --tokens), each span and why it is there (its chunk, its score
    and the score's parts: words, pointers, file, callees; the head, the tail), then what
    was left out and why: windows and files over --tokens, windows above the floor past
    --max-windows, files where nothing matched, skipped files. With --json the document
    also has
    "explain": {"command", "summary", "budget": null|{"tokens", "used", "counter",
    "exact"}, "chosen": [{"what", "why", "score", "tokens", "parts"?: [...]}], "left_out":
    [...]}.
    Not with --memory, whose output is its choice already.


    What is printed goes to a model, so secrets in it (a provider's token, a private key, a
    password in a URL or assigned to a password-like key, whatever the line's gutter) are
    replaced by '[secret redacted: KIND]', as ctx-pack does, and counted on stderr;
    --allow-secrets prints them as they are.
    """
    from ctxtools.secrets import OutputRedactor

    method = retrieval_method(opts)
    red = OutputRedactor(opts["allow_secrets"])  # everything printed passes through it
    try:
        if opts["memory"]:
            return _memory(opts, method, red)
        return _excerpt(opts, red)
    finally:
        warn(*red.notes())


def _excerpt(opts: dict, red) -> int:
    from ctxtools.excerpt import (
        OPTION_NAMES,
        ExcerptOptions,
        Input,
        auto_jobs,
        excerpt_sources,
        find_unreadable,
        unreadable_error,
    )
    from ctxtools.excerpt.output import FileNotes, default_unmatched, excerpt_query, write_blocks
    from ctxtools.resolve import STDIN

    options = ExcerptOptions(**{name: opts[name] for name in OPTION_NAMES})
    query = excerpt_query(
        opts["query"],
        opts["idents"],
        signatures=opts["signatures"],
        unmatched=opts["unmatched"],
    )
    inputs = [
        Input("<stdin>", data=_read_stdin) if src is STDIN else Input(src.label, src.path)
        for src in resolve_sources(opts["files"], opts["files_from"], opts["null"])
    ]
    unmatched = opts["unmatched"] or default_unmatched(len(inputs), opts["signatures"])
    unreadable = find_unreadable(inputs)
    if unreadable and not opts["keep_going"]:
        raise unreadable_error(unreadable, hint="--keep-going excerpts the rest")
    notes = _with_progress(FileNotes(opts["keep_going"], warn), len(inputs))
    common = {
        "signatures": opts["signatures"],
        "jobs": opts["jobs"] or auto_jobs(len(inputs)),
        "store": opts["store"],
        "session": opts["session"],
        "unreadable": unreadable,
        "blank_keys": not opts["allow_secrets"],  # a window may start inside a key block
    }
    if not (opts["as_json"] or opts["tokens"] or opts["sort"] == "score" or opts["explain"]):
        out = stdout_bytes()
        with notes:
            sink = red.writer(out.write)
            write_blocks(inputs, query, options, sink, on_file=notes, unmatched=unmatched, **common)
        return notes.status
    tokens = opts["tokens"]
    with notes:
        run = excerpt_sources(
            inputs,
            query,
            options,
            ruler=(lambda: _ruler(opts)) if tokens else None,
            budget=tokens,
            sort=opts["sort"],
            on_file=notes,
            unmatched=unmatched,
            **common,
        )
    for k, line in enumerate(run.drop_notes()):
        warn(f"--tokens {tokens}: {line}" if k == 0 else line)
    explained = None
    if opts["explain"]:
        from ctxtools.excerpt.explain import explain

        explained = explain(run)
        click.echo(explained.text(), err=True, nl=False)
    if opts["as_json"]:
        doc = run.as_dict()
        if explained is not None:
            doc["explain"] = explained.as_dict()
        emit_json(red.doc(doc))
    else:
        write(red.text(run.render()))
    return notes.status


class _with_progress:
    """NOTES (the ``on_file`` that says what became of each file) with a progress line over
    the N inputs: on a terminal, from PROGRESS_MIN_FILES inputs, and not while the excerpts
    stream to a terminal themselves. ``with`` it around the run: the line is erased after."""

    def __init__(self, notes, n: int):
        import sys

        self.notes = notes
        self.bar = None
        self.done = 0
        self.total = n
        if n >= defaults.PROGRESS_MIN_FILES and not sys.stdout.isatty():
            from ctxtools.cli.progress import Progress

            self.bar = Progress.start("excerpting", unit="files", total=n)

    @property
    def status(self) -> int:
        return self.notes.status

    def __call__(self, res):
        self.done += 1
        if self.bar is not None:
            self.bar.update(self.done)
        return self.notes(res)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        if self.bar is not None:
            self.bar.close()
        return False


def _memory(opts: dict, method: str | None, red) -> int:
    """--memory: the memory sections that qualify for --query, best first."""
    from ctxtools.excerpt.output import (
        check_memory_options,
        memory_dict,
        memory_notes,
        rank_memory_sections,
        render_memory,
    )

    check_memory_options(opts)
    how = {k: opts[k] for k in ("embed_cmd", "embed_timeout", "min_score", "store")}
    ranking = rank_memory_sections(opts["memory"], opts["query"], method=method, **how)
    warn(*memory_notes(ranking))
    if opts["as_json"]:
        emit_json(red.doc(memory_dict(ranking)))
    else:
        write(red.text(render_memory(ranking.kept)))
    return 0


def _read_stdin() -> bytes:
    from ctxtools.resolve import STDIN

    return read_source_bytes(STDIN)


def _ruler(opts: dict):
    encoding = model_encoding(opts["model"], opts["encoding"])
    return ruler_from_options(opts, encoding=encoding, store_root=opts["store"]).ruler


main = make_main(cli, "ctx-excerpt")
