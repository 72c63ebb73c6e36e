"""ctx-repomap: a ranked symbol map of a repository that fits a token budget exactly."""

from __future__ import annotations

import click

from ctxtools.cli.decorators import CONTEXT_SETTINGS
from ctxtools.cli.entry import make_main
from ctxtools.cli.outputs import warn, write, write_bytes
from ctxtools.cli.ruler import model_encoding, ruler_from_options
from ctxtools.cli.tables import options
from ctxtools.options.repomap import REPOMAP


@click.command(name="ctx-repomap", context_settings=CONTEXT_SETTINGS)
@options(REPOMAP)
def cli(
    directory,
    tokens,
    focus,
    query,
    as_json,
    no_cache,
    max_files,
    max_file_size,
    explain,
    allow_secrets,
    store,
    files_from,
    null,
    model,
    encoding,
    tokenizer,
    heuristic,
    exact,
    exclude,
):
    """Print a ranked map of a repository's symbols that fits a token budget.

    Lists the files of DIRECTORY (git-aware), scans them for definitions and references
    (about fifteen languages), ranks the files with PageRank (toward --focus and --query)
    and prints the best symbols of the best files, one `grep -n`-style line each, never more
    than --tokens as the ruler counts them.

    Exit status: 0 success (also for a repository with nothing to map: empty map and a
    note), 1 DIRECTORY is not a directory or a --focus path does not exist, 2 usage error
    (e.g. --tokens below 50), 130 Ctrl-C.

    \b
    Examples:
        ctx-repomap . --tokens 1000 > repomap.txt
        ctx-repomap src --focus src/auth/ --query "refresh token expiry"
        ctx-repomap --json | jq '.files[:5][] | .path'
        git ls-files -z 'src/*.py' | ctx-repomap . --files-from - -0

    The manual, man ctx-repomap, has the details.

    \f

    A repository's URL instead of a directory -- https://host/owner/repo,
    git@host:owner/repo, ssh://, git:// or file://, with @REF for a branch, a tag or a
    commit -- is fetched one commit deep with your git (its credential helpers and ssh
    agent; it never prompts) into the store's remote/ cache, keyed by URL and ref, and
    mapped. The next run fetches into the same copy (a commit id once only), and uses the
    copy, with a note, when the fetch fails. git missing or a failed fetch is exit 1.

    Lists the files of DIRECTORY (default: the current directory) -- in a git work tree
    exactly those `git ls-files -co --exclude-standard` shows, elsewhere a walk that
    honours .gitignore files -- scans the sources for definitions and references (Python,
    Go, JavaScript, TypeScript, Rust and Java by hand-written scanners; C, C++, C#, Ruby,
    PHP, Kotlin, Swift, Scala, Lua and shell scripts through tree-sitter; an extensionless
    script by its #! line), links each file to the files defining the names
    it uses, ranks files with PageRank (personalised toward --focus and --query, weighted by
    how many files use each file; tests step back) and prints the best symbols of the best
    files, grouped by file, one line each as `grep -n` would show it -- line number, colon,
    the declaration shortened (self and visibility words dropped, long parameter lists cut
    with an ellipsis), methods indented under their class:

    \b
        django/db/models/query.py:
        293:class QuerySet(AltersData)
        1695:  def order_by(*field_names)

    The text never exceeds --tokens as the ruler counts it (--encoding, --tokenizer,
    --heuristic) and fills it when there are enough symbols. Skipped: binary files, files
    over --max-file-size, vendored trees (vendor/, node_modules/, third_party/), minified
    and generated files, unreadable files (counted in a note on stderr), and what --exclude
    GLOB or a .ctxignore file at DIRECTORY (gitignore syntax) names: never read, as for
    ctx-pack and ctx-count --tree (skipped as "excluded"). Scan results are
    cached per file in the store (STORE/repomap/), so a second run only re-scans edited
    files; the file graph is kept too, so an edit re-links only the files it concerns
    (the map is the same as a run with --no-cache), and a map already printed for the
    same files and options is printed again without ranking; a damaged cache is rebuilt
    with a note. On a terminal, a progress line on stderr names each step (listing,
    scanning, ranking, fitting) once the work has taken half a second or counts 200 files.

    With --json, one document: root, budget, tokens, counter, exact, files_listed_by
    ("git" or "walk"), mapped_files, candidates, truncated, skipped {reason: count}, shown
    {files, symbols}, notes [...], map (the text), edges {count, import_edges, top: [{from,
    to, weight, flow}]}, and files: every mapped file in rank order as {path, rank,
    language, definitions: [{kind, name, line, end_line, signature, scope, score}]}.

    --explain prints on stderr, as ctx-pack --explain does, each shown file with its rank
    score, how many of its symbols are shown and the best of them with their scores, then
    what was left out and why: mapped files below the budget's cut, symbols of shown files,
    files never mapped (by reason) or past --max-files. With --json the document also has
    "explain": {"command", "summary", "budget": null|{"tokens", "used", "counter",
    "exact"}, "chosen": [{"what", "why", "score", "tokens", "parts"?: [...]}], "left_out":
    [...]}.


    What is printed goes to a model, so secrets in it (a signature's default value, a
    constant) are replaced by '[secret redacted: KIND]' and counted on stderr;
    --allow-secrets prints them as they are.
    """
    from ctxtools.cli.remote import local_tree
    from ctxtools.config import store_root
    from ctxtools.pathfilter import load_filter
    from ctxtools.repomap.core import build_map, ruler_spec

    directory = local_tree(directory, store)[0]
    encoding = model_encoding(model, encoding)
    names = _listed(directory, files_from, null) if files_from else None

    def load_ruler():
        ruler_opts = dict(encoding=encoding, tokenizer=tokenizer, heuristic=heuristic, exact=exact)
        return ruler_from_options(ruler_opts, store_root=store_root(store), note_prefix="").ruler

    from ctxtools.cli.progress import PATIENCE, Progress

    _say_if_no_usable_word(query)
    filt = load_filter(directory, exclude=exclude)
    bar = Progress.start("listing", unit="files", min_total=200, patience=PATIENCE, tick=True)
    try:
        result = build_map(
            directory,
            tokens=tokens,
            focus=focus,
            query=query,
            ruler=load_ruler,
            use_cache=not no_cache,
            store=store,
            max_files=max_files,
            max_file_size=max_file_size,
            progress=bar.update if bar else None,
            stage=bar.phase if bar else None,
            reuse=not (as_json or explain),
            ruler_spec=ruler_spec(encoding, tokenizer, heuristic, exact),
            names=names,
            path_filter=filt,
        )
    finally:
        if bar:
            bar.close()
    if result.from_memo and not result.exact and not heuristic:
        warn(f"counts are approximate ({result.ruler})")
    warn(*result.notes, *filt.warnings())
    explained = None
    if explain:
        from ctxtools.repomap.explain import explain as explain_map

        explained = explain_map(result, focus=focus, query=query)
        click.echo(explained.text(), err=True, nl=False)
    from ctxtools.secrets import OutputRedactor

    red = OutputRedactor(allow_secrets)
    if as_json:
        sink = red.writer(write_bytes)
        for piece in result.iter_json(explained.as_dict() if explained else None):
            sink(piece)
    else:
        write(red.text(result.text))
    warn(*red.notes())


def _say_if_no_usable_word(query: str | None) -> None:
    """A note when QUERY gives the map's ranking nothing to look for (as the map reads it:
    ``repomap.rank.personalisation``)."""
    if query is None:
        return
    from ctxtools.analyzer import read_task

    task = read_task(query)
    if not task.words and not task.tokens:
        warn(f"note: no usable word in --query {query!r} (stop-words and one-letter words are "
             "ignored): the map is ranked by structure alone")


def _listed(directory: str, files_from: str, null: bool) -> list[str]:
    """The --files-from names as paths relative to DIRECTORY (as git ls-files in it prints
    them); a name outside it, or of nothing (a file deleted since the list was made), is
    a note naming the first three, and left out."""
    import os

    from ctxtools.cli.inputs import read_names

    base = os.path.abspath(directory)
    names, outside, missing = [], [], []
    for name in read_names(files_from, null):
        path = os.path.abspath(name)
        rel = os.path.relpath(path, base)
        if rel == os.curdir or rel.startswith(os.pardir + os.sep) or rel == os.pardir:
            outside.append(name)
        elif not os.path.lexists(path):
            missing.append(name)
        else:
            names.append(rel.replace(os.sep, "/"))
    if outside or missing:
        from ctxtools.quoting import quote_name

        for left, why in ((outside, f"outside {quote_name(directory)}"), (missing, "not found")):
            if left:
                warn(
                    f"note: {len(left):,} listed names {why} left out: "
                    + ", ".join(quote_name(n) for n in left[:3])
                    + (" ..." if len(left) > 3 else "")
                )
    return names


main = make_main(cli, "ctx-repomap")
