"""ctx-pack: a byte-stable prompt pack under a model's real budget."""

from __future__ import annotations

import click

from ctxtools import defaults
from ctxtools.cli.decorators import CONTEXT_SETTINGS
from ctxtools.cli.entry import make_main
from ctxtools.cli.inputs import resolve_sources
from ctxtools.cli.outputs import warn, write_bytes
from ctxtools.cli.retrieval import retrieval_method
from ctxtools.cli.ruler import ruler_from_options
from ctxtools.cli.tables import options
from ctxtools.errors import UsageError
from ctxtools.options.pack import PACK

_SHORT_T = "ctx_pack.short_t"


class _TokensOption(click.Option):
    """ctx-pack's ``-t/--tokens``. ``-t`` was ``--task`` here and ``--tokens`` in
    ctx-repomap; it is ``--tokens`` everywhere now (docs/options.md). So that
    ``ctx-pack -t 2000 FILE`` cannot silently mean either, the parser keeps what ``-t``
    got apart from ``--tokens``, and ``_short_t`` decides: a whole number with a task
    given is the budget, text is the task's old spelling (with a note), a whole number
    and no task is an error that says what to type."""

    def add_to_parser(self, parser, ctx: click.Context) -> None:
        longs = [o for o in self.opts if o.startswith("--")]
        parser.add_option(obj=self, opts=longs, dest=self.name, action="store", nargs=1)
        parser.add_option(obj=self, opts=["-t"], dest=_SHORT_T, action="store", nargs=1)

    def handle_parse_result(self, ctx: click.Context, opts, args):
        if _SHORT_T in opts:
            ctx.meta[_SHORT_T] = opts[_SHORT_T]
        return super().handle_parse_result(ctx, opts, args)


def _short_t(task: str | None, tokens: int | None) -> tuple[str | None, int | None]:
    """The task and the budget once ``-t VALUE`` (if given) is placed (``request.short_t``)."""
    from ctxtools.pack.request import OLD_T_NOTE, short_t

    ctx = click.get_current_context()
    value = ctx.meta.get(_SHORT_T)
    task_now, budget = short_t(value, task, tokens)
    if not budget:
        if value is not None:
            warn(OLD_T_NOTE)
        return task_now, tokens
    param = next(p for p in ctx.command.params if p.name == "tokens")
    return task, param.type.convert(value, param, ctx)


class _PackCommand(click.Command):
    """Refuses ``--changed=-X``: click takes a value of an option whose value may be left
    out for the next option when it starts with '-', so ``--changed=--output=X`` was
    ``--changed --output=X`` (and git wrote X)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        for arg in args:
            if arg == "--":
                break
            if arg.startswith("--changed=-"):
                raise UsageError(
                    f"--changed {arg[len('--changed=') :]!r}: not a revision",
                    hint="a revision does not start with '-'",
                )
        return super().parse_args(ctx, args)


@click.command(cls=_PackCommand, context_settings=CONTEXT_SETTINGS)
@options(PACK, hooks={"tokens": {"cls": _TokensOption}})
def cli(**opts) -> int:
    """Pack what a model needs for a task into its real budget, in a byte-stable order.

    A pack is Instructions (AGENTS.md and its kin), Skills, Memory, the Repository map, the
    Files the task is about (the relevant definitions with real line numbers, then
    signatures, then paths), and the Task, in that order, so the same inputs give the same
    bytes. The budget comes from --model's profile and --role (or --tokens); the printed
    pack never exceeds it. Files and handles named as arguments or @-mentions are never
    dropped silently; secrets are redacted; --explain shows where the tokens went.

    Exit status: 0 ok, 1 failure (missing paths, paths outside --root, a model's budget
    below the floor, a named file that cannot fit, --changed outside a git work tree, an
    unknown @skill:NAME, a missing --memory path), 2 usage error (--tokens below 512 too),
    130 Ctrl-C.

    \b
    Examples:
      ctx-pack --task "fix expiry in @jwt.py" --model gpt-4o src/auth/ > pack.md
      ctx-pack --task "review this change" --changed origin/main --role reviewer
      git ls-files -z '*.go' | ctx-pack -q "retry backoff" --files-from - -0 -t 8000
      ctx-pack -q "where is caching done?" --role explorer --explain . > /dev/null
      ctx-pack -q "rotate the signing keys" --memory MEMORY.md --memory notes/ src/
      ctx-pack -q "how are retries done?" https://github.com/psf/requests@v2.32.3

    The manual, man ctx-pack, has the details.

    \f

    A pack is, in this fixed order: Instructions (AGENTS.md, CLAUDE.md, AGENT.md,
    .cursorrules, .cursor/rules/*, .ctx/AGENTS.md, .ctx/PROJECT.md under --root; 12,000
    bytes in all, 4,000 a file; README.md only with --include-readme; a file or section
    gated by 'paths:' globs is left out when none of the pack's files match), Skills
    (with --skills DIR: a card per skill that matches the task, full bodies when earned:
    named as @skill:NAME in the task, --pin-skill, or a strong match; at most
    --skill-max-expanded), the Repository map (ranked toward the pack's files and the
    task: 900 tokens when the files leave room, less when not), Files (the lines the task
    is about, with real line numbers, sorted by path, each header giving the file's rank
    and what is shown; a line longer than 500 characters is cut and ends with
    '…[+N chars]', and the header counts such lines; with --changed, its diff hunks
    first; then the paths of the next files), and the Task, last and verbatim. Stable
    content first, volatile last: the same inputs give the same bytes, so a serving engine
    reuses the prefix.

    How files are chosen: the task is read for the strongest pointers first -- paths and
    file names, stack-trace frames (Python, JavaScript, Java, Go, Rust: the frame's line
    and function), quoted error messages (found among the code's literals) -- then for its
    words, each weighted by its rarity in the candidates (BM25), code-shaped names
    (snake_case, CamelCase, dotted, in backticks) above plain words, words found in most
    files counting for nothing. Definitions are the unit: every function, method and
    class (the repo map's scanners; windows for other files) is scored, and a definition
    whose name the task writes, or that a frame or message points at, ranks first, as do
    the definitions the best ones call. In a git work tree, the functions changed by the
    10 commits (of the last 2,000) whose messages best match the task rank up by at most
    0.15 of the best definition's score, and those the last 5 commits changed gain 0.15
    of their own ("history" in --explain; CTX_HISTORY=0 turns it off); a task that cites
    a ticket (#1234, gh-1234, JENKINS-19446) packs the functions the commits citing it
    changed, as a frame's ("tickets" in --explain). Source ranks
    above tests, docs and examples unless the task is about them. The best definitions
    of the whole ranking are shown in one order, each whole with its class's line and
    the file's imports; a file grows toward whole only as far as its definitions outrank
    every other file's. The next files get their declaring lines (signatures), the next
    their paths. The budget is a ceiling: the files stop at the relevance floor (a
    definition under 0.27 of the 5th best one's score, or of half the best one's,
    whichever is higher, among the files no ticket reached; or past the 250 best) and
    hold at most 36,000 tokens, said in --explain and JSON "dropped"; --fill fills the
    budget all the same. A review pack (--changed) shows each diff, then the definitions
    enclosing the changed lines whole, then the rest by relevance.

    A directory's noise is not packed unless --include GLOB asks for it: translation
    catalogues (.po, .pot, .mo), lock files, minified bundles, generated files, data and
    fixtures over 64 KB, binaries, and packs ctx-pack wrote (one line a reason on stderr,
    each file in --format json's "dropped"); the -o target is never a candidate. A file
    the task names, by its path or by its name without the extension (a migration's
    0187_auto_20230614_0838), is a candidate all the same, unless it is binary; so is
    a vendored or minified file it names by its path or by two or more of the path's
    last parts (lib/x.py for third_party/lib/x.py), which a listing would leave out.
    --exclude GLOB and a .ctxignore file at --root (gitignore syntax) keep files out of
    the files and the map alike (as they do for ctx-repomap and ctx-count --tree).
    On a terminal, a progress line on stderr names each step from the start (listing,
    scanning, ranking, reading, fitting) once the work has taken half a second or counts
    200 files.

    A repository's URL instead of a directory -- https://host/owner/repo,
    git@host:owner/repo, ssh://, git:// or file://, with @REF for a branch, a tag or a
    commit -- is fetched one commit deep with your git (its credential helpers and ssh
    agent; it never prompts) into the store's remote/ cache, keyed by URL and ref, and
    packed as the root (alone: no other FILE, --root or --changed). The next run fetches
    into the same copy (a commit id once only), and uses the copy, with a note, when the
    fetch fails. git missing or a failed fetch is exit 1.

    FILE arguments are files, directories (their files as the repo map lists them:
    git-aware, .gitignore honoured, no vendored, minified or binary files), globs, and
    stored handles ctx:[SESSION/]NAME; --files-from FILE (-0 for NUL-separated) lists
    candidates, as a directory does. The task may name files as @path or @basename
    (resolved under --root; several files of that name are ranked by how often and how
    recently packs used them) and handles as @ctx:NAME. A file named as an argument, an
    @-mention or a --changed file is never dropped silently: it gets its best definition
    first, and degrades to its signatures, then to its path, said on stderr; only when
    not even the named files' paths fit does the run fail naming them (exit 1), unless
    --allow-drop.

    The budget is (window - system 500 - tools 900 - response 2,048 - 10% slack) x the
    role's share (worker, corrector, deep 100%; reviewer, tester 85%; architect, planner,
    splitter 70%; explorer, context, docs 60%; coordinator, memory 50%; others 75%), from
    --model's profile (or --limit), or --tokens N; below 512 tokens it is an error. Every
    part is counted with the ruler (the model's encoding unless --encoding, --tokenizer or
    --heuristic), and the printed pack, counted again, never exceeds the budget (when it
    would, the map shrinks first, then the files' share). Roles explorer, context and
    docs, and --identifiers-only, get the declaring lines of every candidate, best first,
    instead of bodies.

    Memory (with --memory PATH, repeatable: Markdown, reStructuredText and text files, or
    directories of them; binary files are skipped, said on stderr) goes after the skills
    and before the map: each file is cut into sections (Markdown headings, underlined reST
    titles, or groups of paragraphs), each section scored against the task, and the ones
    that qualify go in best first, each labelled with its file, heading and lines, within
    --memory-tokens (15% of the budget by default). Scores are TF-IDF cosines (--retrieval
    tfidf, the default: on the labelled set of bench/bench_memory_eval.py it puts more of
    the relevant sections in its top five than the hashing embedder, 0.67 against 0.52,
    and is faster), the local hashing embedder's cosines (hashing), or the
    cosines of vectors from --embed-cmd CMD (cmd): CMD reads one JSON string a line on
    stdin and writes one JSON array of numbers a line; if it fails, times out
    (--embed-timeout) or writes bad vectors, tfidf is used instead, said on stderr. A
    section qualifies when its score reaches the method's noise floor (tfidf 0.15, or 0.40
    with the semantic extra's part fused in, tfidf+semantic; hashing 0.40, cmd 0.25), the
    median score of all sections for this task plus a margin (0.15, 0.20, 0.15), so a task
    that matches nothing gets nothing, and 90% of the best section's score, so the few
    best matches come in and not a tail of near misses;
    --min-score X replaces all three. Vectors and term counts are cached in the store by
    content, so a changed file re-embeds only its changed sections.

    Secrets stay out: files that are secrets by name (.env, *.pem, *.key, id_rsa, *.p12,
    credentials ...), or symbolic links to one, are skipped even when named (--memory
    files too), and private keys, cloud keys, provider tokens, passwords in URLs and
    credential-like values of password-like keys become '[secret redacted: KIND]' wherever
    the pack holds them (files, diffs, the map, memory, skills, the task, file names),
    said on stderr ('redacted KIND in WHERE line N'); the pack is counted after redaction.
    --allow-secrets turns both off. Binary files are skipped, said on stderr. A file name
    holding a control character (a newline, a tab...), a double quote or a backslash is
    shown in double quotes with C escapes, as ctx-excerpt shows it.

    -o FILE: a new or regular file is replaced atomically, keeping its mode (set-id bits
    too); a FILE the pack reads (a named file, an @-mention, instructions, --memory,
    --files-from, stdin) is refused, and so is any file of a packed directory that is
    not an earlier pack or empty (a vendored or minified one too); a FIFO, a device such
    as /dev/null, a file with several hard links or a symlink's non-regular target is
    written through (a regular target is replaced, the link kept); a block device or a
    socket is refused.

    --split TOKENS cuts the finished pack into parts for a chat window with a paste limit:
    each part starts with the line '[ctx-pack: part I of N]' and, counted again whole with
    the pack's ruler, holds at most TOKENS tokens. Parts end between sections and between
    files where they can; a file too large for a part is cut at its definitions (a gap
    between the chunks shown, a definition after a blank line), never inside a line, its
    block closed and opened again in the next part under its header marked (continued).
    With -o FILE the parts go to FILE.1.md, FILE.2.md ... (a .md suffix of FILE dropped
    first: -o pack.md writes pack.1.md ...), each written as -o writes; on stdout they are
    separated by the line '----- 8< ----- ctx-pack: cut here ----- 8< -----'; with
    --format json the document gets "parts": [{"part", "of", "tokens", "text"}]. A TOKENS
    below 64, or below what the pack's longest line needs in a part (the error names the
    size that works), and --split with --format xml are usage errors (exit 2).

    --explain prints on stderr each budget term, tokens per section and per file as bars
    scaled to the budget, the memory threshold and each memory section's score, in or out
    and why, the @-mentions' resolutions, and what was dropped and why.
    --format json prints {"budget": {...terms, "tokens"}, "tokens", "counter", "exact",
    "sections": [{"name", "tokens", "parts": [{"label", "tokens"}]}], "files": [{"path",
    "named", "why", "shown" (whole, definitions, signatures, path, diff), "tokens",
    "score", "rank", "lines", "lines_cut" (when a shown line was cut), "chunks", "reasons",
    "matched", "diff"}], "dropped": [{"what",
    "why"}], "mentions": [{"mention", "path", "reason"}], "redactions": [{"where", "line",
    "kind"}], "notes": [...], "memory": null or {"method", "requested", "threshold":
    {"threshold", "floor", "median", "margin", "best", "share", "rule"}, "budget", "tokens", "kept",
    "files", "chunks": [{"file", "heading",
    "start", "end", "score", "kept", "in_pack", "why"}]}, "text": the Markdown pack};
    the budget bounds "text".
    """
    from ctxtools.pack import build_pack
    from ctxtools.pack.request import (
        check_options,
        check_output,
        output_format,
        pack_messages,
        request_from_options,
        ruler_encoding,
    )

    task, opts["tokens"] = _short_t(opts["task"], opts["tokens"])
    if task is None:
        raise UsageError("no task", hint='give -q/--task "what to do"; -q - reads it from stdin')
    task_from_stdin = task == "-"
    if task_from_stdin and opts["files_from"] == "-":
        raise UsageError(
            "-q/--task - and --files-from - cannot both read standard input",
            hint="give one of them stdin, the other a file",
        )
    if task_from_stdin:
        from ctxtools.cli.inputs import read_source_bytes
        from ctxtools.resolve import STDIN

        # (as an argument's bytes come: one that is not UTF-8 kept as a lone surrogate,
        # so that an @-mention of such a name resolves; the pack shows it as U+FFFD)
        task = read_source_bytes(STDIN).decode("utf-8", "surrogateescape")
    fmt = output_format(opts["fmt"], opts["as_json"])
    warn(*check_options(opts, fmt))
    _remote(opts)
    check_output(opts["output"], opts["files_from"], task_from_stdin)
    paths: list[str] = []
    listed: list[str] = []
    if opts["files"]:
        paths = [src.path for src in resolve_sources(opts["files"])]
    if opts["files_from"] is not None:
        listed = [src.path for src in resolve_sources((), opts["files_from"], opts["null"])]
    elif opts["null"]:
        raise UsageError("-0/--null goes with --files-from")
    if None in paths or None in listed:
        raise UsageError("ctx-pack reads no file from stdin", hint="name files or dirs")
    counter_chosen = bool(opts["tokenizer"] or opts["heuristic"])
    encoding = ruler_encoding(
        opts["model"],
        opts["encoding"],
        counter_chosen=counter_chosen,
        profiles_file=opts["profiles_file"],
    )
    choice = ruler_from_options(opts, encoding=encoding, store_root=opts["store"], note_prefix=None)
    retrieval = retrieval_method(opts, (("--memory-tokens", "memory_tokens"),))
    req = request_from_options(opts, task=task, paths=paths, retrieval=retrieval, listed=listed)
    from ctxtools.cli.progress import PATIENCE, Progress

    bar = Progress.start(
        "listing", unit="files", min_total=defaults.PROGRESS_MIN_FILES, patience=PATIENCE, tick=True
    )
    if bar is not None:  # from the listing on: each step by its name
        req.progress, req.stage = bar.update, bar.phase
    try:
        pack = build_pack(req, choice.ruler, [f"note: {n}" for n in choice.notes])
    finally:
        if bar is not None:
            bar.close()
    warn(*pack_messages(pack))
    if opts["explain"]:
        click.echo(pack.explain(), err=True, nl=False)
    _emit(pack, fmt, opts, choice.ruler)
    return 0


def _emit(pack, fmt: str, opts, ruler) -> None:
    """Print or write the pack (whole, or as --split's parts)."""
    from ctxtools.pack.request import document, write_document

    data, parts = document(pack, fmt, opts["split"], ruler)
    if opts["output"] and opts["output"] != "-":
        warn(*write_document(opts["output"], data, parts, fmt))
    else:
        write_bytes(data)
    if opts["copy"]:
        from ctxtools.cli.clip import copy

        copy(data)


def _remote(opts) -> None:
    """A repository's URL as the one FILE: fetched (ctxtools.remote), then packed as the
    root it is."""
    from ctxtools.cli.remote import is_remote, local_tree

    if not any(is_remote(f) for f in opts["files"]):
        return
    if len(opts["files"]) > 1 or opts["files_from"] is not None:
        raise UsageError("a repository URL is packed alone", hint="give it as the one FILE")
    for key, flag in (("changed", "--changed"),):
        if opts[key]:
            raise UsageError(f"{flag} does not go with a repository URL")
    if opts["root"] != ".":
        raise UsageError("--root does not go with a repository URL (the clone is the root)")
    path = local_tree(opts["files"][0], opts["store"])[0]
    opts["files"], opts["root"] = (path,), path


main = make_main(cli, "ctx-pack")
