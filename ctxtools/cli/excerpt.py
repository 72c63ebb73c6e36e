"""ctx-excerpt: files windowed around what a task is about, with real line numbers."""

from __future__ import annotations

import os
import stat

import click

from ctxtools.cli.common import (
    CONTEXT_SETTINGS,
    STDIN,
    Source,
    emit_json,
    input_files,
    json_option,
    make_main,
    read_source_bytes,
    resolve_sources,
    ruler_options,
    standard_options,
    store_options,
    warn,
    write,
)
from ctxtools.errors import CtxError, NotFoundError, UsageError

HANDLE_PREFIX = "ctx:"
NOTE_LIMIT = 20  # stderr lines about budget drops before "... and N more"


@click.command(context_settings=CONTEXT_SETTINGS)
@input_files
@click.option("-q", "--query", default=None, help="The task, in words: identifiers come from it.")
@click.option(
    "--ident",
    "idents",
    multiple=True,
    metavar="NAME",
    help="An identifier to look for, taken as is (repeatable).",
)
@click.option("-i", "--ignore-case", is_flag=True, help="Exact hits regardless of case.")
@click.option(
    "--window",
    type=click.IntRange(min=0),
    default=25,
    show_default=True,
    help="Lines shown before and after each matching line.",
)
@click.option(
    "--head",
    type=click.IntRange(min=0),
    default=15,
    show_default=True,
    help="First lines of every file, always shown.",
)
@click.option(
    "--max-windows",
    type=click.IntRange(min=0),
    default=6,
    show_default=True,
    help="Windows per file; the highest-scoring are kept.",
)
@click.option(
    "--tail",
    type=click.IntRange(min=0),
    default=40,
    show_default=True,
    help="Last lines shown when nothing in the file matches.",
)
@click.option(
    "--tokens",
    type=click.IntRange(min=1),
    default=None,
    help="Total budget for the whole output, in tokens of the ruler.",
)
@click.option(
    "--sort",
    type=click.Choice(["given", "score"]),
    default="given",
    show_default=True,
    help="File order: as given, or the best-matching first.",
)
@click.option(
    "--signatures",
    is_flag=True,
    help="Paths plus the definitions' signature lines only (no bodies).",
)
@click.option(
    "--keep-going",
    is_flag=True,
    help="Excerpt the files that can be read when some cannot (still exit 1).",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Worker processes for many files (default 1).",
)
@ruler_options
@store_options
@json_option
@standard_options
def cli(**opts) -> int:
    """Cut files down to the windows around what a task is about, with real line numbers.

    Head-truncating a file (say at 2,800 bytes) routinely cuts the very function a task is
    about. ctx-excerpt shows each file's first lines (package clause, imports), then
    windows of lines around the lines that mention the task's identifiers, every line with
    its real number so that a model can ask for more (ctx-read --range, an editor's
    go-to-line). When nothing in a file matches, its last lines stand in for the windows.

    Identifiers come from --query TEXT: words, snake_case and camelCase names, dotted
    paths (auth.jwt.verify gives auth, jwt, verify and the whole path; Rust a::b too).
    Stop-words ("the", "fix", ...), very common keywords (def, class, self, return, ...)
    and one-letter words are ignored; --ident NAME adds a name as it is (repeatable).
    A line matches an identifier that occurs in it as a whole word, case-sensitively
    unless -i (an exact hit), or as a run of the words of a compound name, regardless of
    case (verifyJwtToken holds jwt; verify_token and verifyToken hold each other: a part
    hit). Windows are scored: exact hits 3 (a dotted path 4), part hits 1, doubled on a
    line that defines the name (def, class, func, fn, function, a method); per window the
    distinct identifiers' best weights add up, repeats add 0.25 a line (at most 1 each).

    Per file: the first --head lines (15), windows of --window lines (25) before and after
    every matching line, merged when they overlap or touch, at most --max-windows (6) of
    them (the highest-scoring, shown in file order); when nothing matches, the last --tail
    lines (40). Each file starts with a header naming it and the identifiers it matched;
    each line is printed as '  120│ code'; a '⋮' line stands between windows that are not
    adjacent. A line longer than 500 characters is cut and ends with '…[+N chars]'.
    Lines are counted at newline bytes, so CRLF files and invalid UTF-8 (shown as U+FFFD)
    keep their real line numbers. Files over 512 KB are streamed: only the lines the
    windows need are kept.

    FILE arguments may be '-' for stdin, a handle reference ctx:[SESSION/]NAME[@SHA] (from
    ctx-stash; --store, --session), or names read from --files-from FILE (one a line, or
    NUL-separated with -0). Binary files (a NUL byte in the first 8 KB) are skipped with a
    note on stderr. A file that cannot be read is an error naming it; with --keep-going the
    others are still excerpted, the unreadable ones are named on stderr, and the exit
    status is 1.

    --tokens N fits the whole printed output into N tokens of the ruler (--encoding,
    --tokenizer, --heuristic, --exact; cl100k_base by default). What goes first is what is
    worth least: files where nothing matched (the last first), then windows, the
    lowest-scoring first (a file that keeps a window keeps its head), then matched files
    reduced to their head, the lowest-scoring first. Each drop is reported on stderr.
    Files are printed in the order given, or --sort score (best first, ties in the order
    given).

    --signatures prints, per file, only the lines that declare something (class, def, func,
    fn, methods, types...) as found by the repo map's scanners (Python, Go, JavaScript,
    TypeScript, Rust, Java), indented by nesting; other files get a note. --query is then
    optional; with it, the header names the identifiers the signatures match and --sort
    score ranks by them.

    --json prints {"identifiers": [...], "options": {"window", "head", "max_windows",
    "tail", "ignore_case"}, "files": [{"path", "status": "ok", "lines", "bytes",
    "matched": [...], "score", "omitted_windows", "spans": [{"kind": "head"|"window"|"tail",
    "start", "end", "score", "identifiers": [...], "text"}]}]}; span lines are 1-based and
    inclusive, "text" is their lines (CR removed, long lines cut). A skipped file is
    {"path", "status": "binary"|"unreadable", "error"?}. With --tokens: "budget":
    {"tokens", "used", "counter", "exact", "dropped": [{"path", "kind": "window"|"file",
    "start", "end", "score"}]}, the budget applying to the text output. With --signatures
    a file has "language" and "definitions": [{"kind", "name", "line", "end_line", "scope",
    "signature"}] instead of spans ("status": "too_large" over 512 KB: not scanned).

    Exit status: 0 ok, 1 a file or handle could not be read (also with --keep-going),
    2 usage error (e.g. a query with no usable identifier).

    \b
    Examples:
      ctx-excerpt -q "fix the JWT expiry check in verifyToken" src/auth/*.py
      git ls-files -z '*.go' | ctx-excerpt -q "retry backoff" --files-from - -0 --tokens 4000
      ctx-excerpt --ident parse_header --window 10 --json lib/http.py
      ctx-excerpt --signatures src/server.go src/routes.ts
    """
    from ctxtools.excerpt import ExcerptOptions, Matcher
    from ctxtools.identifiers import identifiers_from_query, valid_identifier

    for name in opts["idents"]:
        if not valid_identifier(name):
            raise UsageError(
                f"--ident {name!r} is not an identifier",
                hint="a word, snake_case, camelCase or dotted name",
            )
    if opts["query"] is None and not opts["idents"] and not opts["signatures"]:
        raise UsageError("nothing to look for", hint="give --query TEXT or --ident NAME")
    identifiers = identifiers_from_query(opts["query"] or "", opts["idents"])
    if not identifiers and not opts["signatures"]:
        raise UsageError(
            f"no usable identifier in the query {opts['query']!r}",
            hint="stop-words, keywords and one-letter words are ignored; add --ident NAME",
        )
    options = ExcerptOptions(
        window=opts["window"],
        head=opts["head"],
        max_windows=opts["max_windows"],
        tail=opts["tail"],
        ignore_case=opts["ignore_case"],
    )
    matcher = Matcher(identifiers, options.ignore_case)
    sources = resolve_sources(opts["files"], opts["files_from"], opts["null"])
    unreadable = _precheck(sources, opts["keep_going"])
    run = _Run(opts, options, matcher, unreadable)
    return run.go(sources)


def _is_handle(src: Source) -> bool:
    return src.path is not None and src.path.startswith(HANDLE_PREFIX)


def _precheck(sources: list[Source], keep_going: bool) -> dict[str, str]:
    """Files that cannot be read, with why; an error naming them unless KEEP_GOING."""
    bad: dict[str, str] = {}
    for src in sources:
        if src.path is None or _is_handle(src) or src.path in bad:
            continue
        try:  # one stat a file: thousands of names come through --files-from
            if stat.S_ISDIR(os.stat(src.path).st_mode):
                bad[src.path] = f"{src.path}: is a directory"
        except FileNotFoundError:
            bad[src.path] = f"{src.path}: no such file"
        except OSError as exc:
            bad[src.path] = f"{src.path}: {exc.strerror or exc}"
    if bad and not keep_going:
        if len(bad) == 1:
            raise NotFoundError(next(iter(bad.values())))
        names = list(bad)
        listed = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
        raise NotFoundError(
            f"{len(names)} files cannot be read: {listed}",
            hint="--keep-going excerpts the rest",
        )
    return bad


class _Run:
    def __init__(self, opts: dict, options, matcher, unreadable: dict[str, str]):
        self.opts = opts
        self.options = options
        self.matcher = matcher
        self.unreadable = unreadable
        self.failed = False
        self.records: list[dict] = []  # JSON entries of files that were skipped
        self._store = None

    # --- reading ---------------------------------------------------------------------------

    def _handle_bytes(self, ref: str) -> bytes:
        if self._store is None:
            from ctxtools.config import store_root
            from ctxtools.store import HandleStore

            self._store = HandleStore(store_root(self.opts["store"]))
        return self._store.read_bytes(ref, session=self.opts["session"])

    def _load(self, src: Source) -> tuple[str, object, str | None, tuple[int, str] | None]:
        """(label, excerpt or signatures or None, "binary" or None, error) for SRC.

        No side effects: this also runs in worker processes; ``_accept`` acts on it."""
        from ctxtools.excerpt import excerpt_file, excerpt_text

        label = "<stdin>" if src is STDIN else src.label
        if src.path in self.unreadable:
            return label, None, None, (int(NotFoundError.exit_status), self.unreadable[src.path])
        try:
            if self.opts["signatures"]:
                ex = self._signatures(src, label)
            elif _is_handle(src):
                ex = excerpt_text(self._handle_bytes(src.path), self.matcher, self.options)
            elif src.path is None:
                ex = excerpt_text(read_source_bytes(src), self.matcher, self.options)
            else:
                try:
                    ex = excerpt_file(src.path, self.matcher, self.options)
                except OSError as exc:
                    raise CtxError(f"{src.path}: {exc.strerror or exc}") from None
        except CtxError as exc:
            return label, None, None, (int(exc.exit_status), str(exc))
        if ex.binary:
            return label, None, "binary", None
        return label, ex, None, None

    def _accept(self, label: str, ex, status: str | None, error: tuple[int, str] | None):
        """Act on one ``_load`` result: notes, records, errors. Returns the excerpt or None."""
        if error is not None:
            code, message = error
            if not self.opts["keep_going"]:
                err = CtxError(message)
                err.exit_status = code
                raise err
            self.failed = True
            warn(f"error: {message}")
            self.records.append({"path": label, "status": "unreadable", "error": message})
            return None
        if status == "binary":
            warn(f"{label}: binary file, skipped")
            self.records.append({"path": label, "status": "binary"})
            return None
        return ex

    def _signatures(self, src: Source, label: str):
        from ctxtools.excerpt import LARGE_FILE, is_binary, read_file_bytes, signatures_of

        if _is_handle(src):
            data = self._handle_bytes(src.path)
            path = src.path.rsplit("/", 1)[-1].split("@", 1)[0]
        elif src.path is None:
            data = read_source_bytes(src)
            path = ""
        else:
            path = src.path
            if os.path.getsize(path) > LARGE_FILE:
                return signatures_of(path, None, self.matcher, size=os.path.getsize(path))
            data = read_file_bytes(path)
        if is_binary(data):
            return signatures_of(path, b"", self.matcher, binary=True)
        return signatures_of(path, data, self.matcher)

    # --- output ----------------------------------------------------------------------------

    def go(self, sources: list[Source]) -> int:
        opts = self.opts
        streaming = not (opts["as_json"] or opts["tokens"] or opts["sort"] == "score")
        items = []
        first = True
        for label, ex, status, error, text in self._results(sources, streaming):
            ex = self._accept(label, ex, status, error)
            if ex is None:
                continue
            if streaming:
                write(("" if first else "\n") + (text or self._render(ex, label)))
                first = False
            else:
                items.append((label, ex))
        if not streaming:
            self._finish(items)
        return 1 if self.failed else 0

    def _results(self, sources: list[Source], render: bool):
        """``_load`` results in the order given (with the rendered text when RENDER), from
        worker processes when there are many files and more than one job."""
        jobs = self.opts["jobs"] or _default_jobs(len(sources))
        stdin_used = any(s.path is None for s in sources)
        if jobs <= 1 or len(sources) < 2 or stdin_used:
            for src in sources:
                yield (*self._load(src), None)
            return
        import multiprocessing

        global _ACTIVE
        _ACTIVE = (self, render)
        size = max(1, min(64, len(sources) // (jobs * 4) or 1))
        chunks = [sources[i : i + size] for i in range(0, len(sources), size)]
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            for batch in pool.imap(_work, chunks):
                yield from batch

    def _render(self, ex, label: str) -> str:
        if self.opts["signatures"]:
            from ctxtools.excerpt import render_signatures

            return render_signatures(ex, label)
        from ctxtools.excerpt import render_excerpt

        return render_excerpt(ex, label)

    def _render_all(self, items) -> str:
        return "\n".join(self._render(ex, label) for label, ex in items)

    def _finish(self, items: list) -> None:
        opts = self.opts
        budget = None
        if opts["tokens"]:
            items, budget = self._fit(items)
        if opts["sort"] == "score":
            order = {id(it): k for k, it in enumerate(items)}
            items = sorted(items, key=lambda it: (-it[1].score, order[id(it)]))
        if not opts["as_json"]:
            write(self._render_all(items))
            return
        from ctxtools.excerpt import excerpt_dict, signatures_dict

        to_dict = signatures_dict if opts["signatures"] else excerpt_dict
        doc: dict = {
            "identifiers": list(self.matcher.identifiers),
            "options": self.options.as_dict(),
            "files": [to_dict(ex, label) for label, ex in items] + self.records,
        }
        if budget is not None:
            doc["budget"] = budget
        emit_json(doc)

    def _fit(self, items: list):
        from ctxtools.excerpt import fit_budget
        from ctxtools.tokens import get_ruler

        opts = self.opts
        choice = get_ruler(
            encoding=opts["encoding"],
            tokenizer=opts["tokenizer"],
            heuristic=opts["heuristic"],
            exact=opts["exact"],
            store_root=opts["store"],
        )
        for note in choice.notes:
            warn(f"note: {note}")
        ruler = choice.ruler
        kept, dropped, used = fit_budget(items, opts["tokens"], ruler.count, self._render)
        self._report(dropped, opts["tokens"])
        budget = {
            "tokens": opts["tokens"],
            "used": used,
            "counter": ruler.name,
            "exact": ruler.exact,
            "dropped": [
                {"path": d.label, "kind": d.kind, "start": d.start, "end": d.end, "score": d.score}
                for d in dropped
            ],
        }
        return kept, budget

    def _report(self, dropped, tokens: int) -> None:
        if not dropped:
            return
        per_file: dict[str, list[str]] = {}
        for d in dropped:
            if d.kind == "window":
                what = f"window {d.start}-{d.end} (score {d.score:g})"
            else:
                what = "whole file" + ("" if d.matched else " (nothing matched)")
            per_file.setdefault(d.label, []).append(what)
        labels = list(per_file)
        warn(f"--tokens {tokens}: dropped {len(dropped)} part(s) of {len(labels)} file(s)")
        for label in labels[:NOTE_LIMIT]:
            warn(f"  dropped {label}: " + ", ".join(per_file[label]))
        if len(labels) > NOTE_LIMIT:
            warn(f"  ... and {len(labels) - NOTE_LIMIT} more files")


_ACTIVE: tuple[_Run, bool] | None = None


def _default_jobs(n_files: int) -> int:
    """One: measured on a shared 2-core machine, worker processes did not pay off."""
    return 1


def _work(chunk: list[Source]) -> list[tuple]:
    """In a worker process (forked, so it shares the run's settings): load and render."""
    assert _ACTIVE is not None
    run, render = _ACTIVE
    out = []
    for src in chunk:
        label, ex, status, error = run._load(src)
        text = run._render(ex, label) if render and ex is not None else None
        if text is not None:
            ex = _Rendered(ex.score)  # the text is what the parent needs; do not send lines
        out.append((label, ex, status, error, text))
    return out


class _Rendered:
    """Stands for an excerpt rendered in a worker process."""

    __slots__ = ("score",)

    def __init__(self, score: float):
        self.score = score


main = make_main(cli, "ctx-excerpt")
