"""ctx-count: the ruler (the click command; plain calls are served by ``count_fast``)."""

from __future__ import annotations

import click

from ctxtools.cli.common import (
    CONTEXT_SETTINGS,
    FiniteFloat,
    check_file,
    emit_json,
    input_files,
    json_option,
    make_main,
    open_source,
    read_source_bytes,
    resolve_sources,
    role_options,
    ruler_options,
    standard_options,
    warn,
    write,
)
from ctxtools.cli.count_fast import PROGRESS_MIN_BYTES, format_counts
from ctxtools.errors import InputError, OverLimitError, UsageError
from ctxtools.fsutil import json_text


def _fmt(n: int) -> str:
    return f"{n:,}"


def _pct(p: float) -> str:
    return f"{p:.1f}%"


@click.command(context_settings=CONTEXT_SETTINGS)
@input_files
@ruler_options
@click.option("--allow-special", is_flag=True, help="Count special-token strings as one token.")
@click.option(
    "--messages",
    is_flag=True,
    help="Count each input as a chat transcript, as ctx-compact and the APIs do.",
)
@click.option("--model", envvar="CTX_MODEL", default=None, help="Model profile [env CTX_MODEL].")
@click.option(
    "--limit",
    "limit",
    type=click.IntRange(min=1),
    default=None,
    help="Context window in tokens (instead of the model's).",
)
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
    type=click.IntRange(min=0),
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
@click.option("--keep-going", is_flag=True, help="Count what exists when some files are missing.")
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Threads for exact counting of big inputs [default: cores, up to 4].",
)
@click.option("--budget", is_flag=True, help="Print the pack budget of --model/--role and exit.")
@role_options
@click.option("--reserve-system", type=click.IntRange(min=0), default=500, show_default=True)
@click.option("--reserve-tools", type=click.IntRange(min=0), default=900, show_default=True)
@click.option("--reserve-response", type=click.IntRange(min=0), default=2048, show_default=True)
@click.option("--slack-percent", type=click.IntRange(min=0, max=99), default=10, show_default=True)
@click.option("--profiles", "list_profiles", is_flag=True, help="List the model profiles.")
@click.option(
    "--profiles-file",
    envvar="CTX_PROFILES",
    type=click.Path(dir_okay=False),
    default=None,
    help="A TOML file of extra/overriding profiles and [roles] shares [env CTX_PROFILES].",
)
@json_option
@standard_options
@click.pass_context
def cli(ctx: click.Context, **opts) -> int:
    """Count the tokens of stdin or files: the ruler every ctx command uses.

    One input prints its token count. Several files print one line per file and a total,
    like wc. The counter is exact: a tiktoken encoding (cl100k_base by default, o200k_base,
    or the one of --model), or a Hugging Face tokenizer.json with --tokenizer. Encoding
    files ship in an installed package and are checked against tiktoken's published
    SHA-256; nothing is downloaded. If no exact counter can be had, ctx-count falls back to
    the heuristic (1 token per CJK code point, 1 per 4 other characters) and says so on
    stderr -- never silently; --exact makes that an error. Special-token strings such as
    <|endoftext|> count as ordinary text unless --allow-special.

    FILE arguments may be '-' for stdin; --files-from FILE reads names (one a line, or
    NUL-separated with -0, as from git ls-files -z). Invalid UTF-8 and binary input are
    counted with U+FFFD in place of bad bytes.

    Two ways to count a transcript. Without --messages, the input is text: every byte of
    the JSON counts (quotes, keys, escapes), which is what pasting the file into a prompt
    costs. With --messages, each input is a chat transcript -- OpenAI messages (a JSON
    list, {"messages": [...]} or JSON Lines) or Anthropic messages with a top-level
    "system" -- counted as ctx-compact and the chat APIs count it: the text the model reads
    (content, tool-call names and arguments, tool results) plus 4 tokens of framing a
    message and 3 for the reply. Use --messages to see how full a conversation's window is.

    With --model (or --limit), a usage line follows: tokens, percent of the window, and
    the model. From 80% a "compact soon" warning goes to stderr, from 90% a "compact now"
    one; both name the remedy, ctx-compact. --fail-over PCT exits 3 when usage is over
    PCT, for CI gates; --fail-above N exits 3 when an input (each file of several) counts
    over N tokens, the absolute gate for instruction files such as AGENTS.md that every
    turn pays for. Counts for models whose tokenizer is not a tiktoken encoding are marked
    approximate unless --tokenizer is given. An unknown --model is not an error: it
    resolves to a size bucket (a name with 7b, 14b, ...) or the default profile, with a
    note on stderr naming the profile used.

    --budget prints the pack budget: (context limit - reserve system - reserve tools -
    reserve response - slack) x role share, never below 512 tokens. --role picks the share
    (worker 100%, reviewer 85%, ...; anything else 75%); --role-share ROLE=PCT, or a
    [roles] table in the profiles file, overrides it. --profiles lists the model profiles
    (context window, max output tokens, max turns where set, encoding); --profiles-file
    adds or overrides them from a TOML file.

    --json prints {"counter", "kind", "exact", "counted" ("text" or "messages"), "files":
    [{"path", "tokens", "chars", "lines", "bytes"}], "total": {"tokens", "chars", "lines",
    "bytes"}} and, with a model or limit, "usage": {"model", "context_limit", "percent",
    "status", "approximate", "matched_by"}. With --messages each file also has "messages"
    and "format". Missing files are listed in "missing". Undecodable bytes of a file name
    show as U+FFFD.

    Exit status: 0 ok, 1 bad input (a missing or unreadable file, also with --keep-going;
    unknown encoding; bad tokenizer.json or profiles file; with --messages, an input that
    is not a transcript), 2 usage error, 3 over --fail-over or --fail-above.

    \b
    Examples:
      pytest -q 2>&1 | ctx-count
      ctx-count --model gpt-4o --fail-over 80 prompt.md
      ctx-count --fail-above 512 AGENTS.md CLAUDE.md
      ctx-count --messages --model gpt-4o transcript.json
      git ls-files -z | ctx-count --files-from - -0 --sort tokens
      ctx-count --budget --model qwen2.5-coder:32b --role reviewer --role-share reviewer=90
    """
    model = opts["model"]
    if (opts["role"] or opts["role_shares"]) and not opts["budget"]:
        raise UsageError("--role and --role-share go with --budget")
    table = None
    if opts["profiles_file"] or opts["list_profiles"] or model or opts["budget"]:
        from ctxtools import profiles as prof  # only when a model is involved: start-up cost

        table = prof.load_profiles(opts["profiles_file"])

    if opts["list_profiles"]:
        return _list_profiles(table, opts["as_json"])

    profile = None
    if model:
        profile = prof.resolve(model, table)
        if profile.matched_by in ("default", "size") and opts["limit"] is None:
            warn(
                f"note: no profile for {model!r}; using the {profile.matched} profile "
                f"({_fmt(profile.context_limit)} tokens)"
            )

    if opts["budget"]:
        return _budget(profile, opts, table)

    if opts["fail_over"] is not None and profile is None and opts["limit"] is None:
        raise UsageError("--fail-over needs --model or --limit")

    ruler = _choose_ruler(ctx, opts, profile)
    return _count(ruler, profile, opts)


def _choose_ruler(ctx: click.Context, opts: dict, profile):
    from ctxtools.tokens import get_ruler

    encoding = opts["encoding"]
    from_env = ctx.get_parameter_source("encoding") == click.core.ParameterSource.ENVIRONMENT
    if profile is not None and (encoding is None or from_env):
        encoding = profile.encoding
    choice = get_ruler(
        encoding=encoding,
        tokenizer=opts["tokenizer"],
        heuristic=opts["heuristic"],
        exact=opts["exact"],
        allow_special=opts["allow_special"],
        store_root=None,
    )
    for note in choice.notes:
        warn(f"note: {note}")
    return choice.ruler


def _count(ruler, profile, opts) -> int:
    from ctxtools.fsutil import unreadable_error, unreadable_reason

    sources = resolve_sources(opts["files"], opts["files_from"], opts["null"])
    bad: dict[str, str] = {}
    for src in sources:
        if src.path is not None and src.path not in bad:
            reason = unreadable_reason(src.path, check_access=True)
            if reason is not None:
                bad[src.path] = reason
    missing = [src for src in sources if src.path in bad]
    if bad and not opts["keep_going"]:
        if len(bad) == 1:
            check_file(next(iter(bad)))  # its own message, with a hint for a directory
        raise unreadable_error(bad, hint="--keep-going counts the rest")
    present = [s for s in sources if s not in missing]
    if opts["messages"]:
        rows = [_count_transcript(src, ruler) for src in present]
    else:
        rows = _count_texts(present, ruler, opts["jobs"])
    for reason in bad.values():
        warn(f"error: {reason}")
    total = _total(rows)
    for note in total.get("notes", ()):
        warn(f"note: not exact: {note}")
    total.pop("notes", None)

    if opts["sort"] == "tokens":
        rows.sort(key=lambda r: (-r[1]["tokens"], r[0]))
    elif opts["sort"] == "name":
        rows.sort(key=lambda r: r[0])

    usage = _usage(total["tokens"], profile, opts, ruler)
    if opts["as_json"]:
        doc = ruler.describe()
        if (usage and usage["approximate"]) or total.get("exact") is False:
            doc["exact"] = False
        doc["counted"] = "messages" if opts["messages"] else "text"
        doc["files"] = [{"path": json_text(label), **row} for label, row in rows]
        doc["total"] = total
        if usage:
            doc["usage"] = usage
        if missing:
            doc["missing"] = [json_text(m.label) for m in missing]
        emit_json(doc)
    else:
        pairs = [(label, row["tokens"]) for label, row in rows]
        write(format_counts(pairs, total["tokens"], len(sources)))
        if usage:
            write(
                f"{_fmt(total['tokens'])} tokens · {_pct(usage['percent'])} of "
                f"{_fmt(usage['context_limit'])} ({usage['model']})\n"
            )
    over: list[str] = []
    if usage:
        if usage["approximate"]:
            warn(
                f"note: counts for {usage['model']} are approximate ({ruler.name} is not its "
                "tokenizer; --tokenizer gives exact counts)"
            )
        if usage["status"] == "compact":
            warn(f"warning: {_pct(usage['percent'])} of the window used: compact now (ctx-compact)")
        elif usage["status"] == "warn":
            warn(
                f"warning: {_pct(usage['percent'])} of the window used: compact soon (ctx-compact)"
            )
        if opts["fail_over"] is not None and usage["percent"] > opts["fail_over"]:
            over.append(
                f"usage {_pct(usage['percent'])} is over the limit of {opts['fail_over']:g}%"
            )
    if opts["fail_above"] is not None:
        over.extend(_over_size(rows, opts["fail_above"], single=len(sources) == 1))
    if over:
        raise OverLimitError("; ".join(over))
    return 1 if missing else 0


def _count_texts(sources, ruler, jobs) -> list[tuple[str, dict]]:
    from ctxtools.tokens import count_stream

    rows = []
    with _progress_bar(sources) as advance:
        for src in sources:
            stream = open_source(src)
            try:
                counts = count_stream(stream, ruler, jobs=jobs, progress=advance)
            finally:
                if src.path is not None:
                    stream.close()
            rows.append((src.label, counts.as_dict()))
    return rows


def _count_transcript(src, ruler) -> tuple[str, dict]:
    from ctxtools.messages import count_transcript

    data = read_source_bytes(src)
    try:
        tc = count_transcript(data, ruler)
    except InputError as exc:
        where = f"{src.path}: " if src.path is not None else ""
        raise InputError(
            f"{where}{exc.message}",
            hint=exc.hint or "--messages counts a chat transcript; without it, the text",
        ) from None
    newlines = data.count(b"\n")
    return src.label, {
        "tokens": tc.tokens,
        "chars": len(data.decode("utf-8", "replace")),
        "lines": newlines + (1 if data and not data.endswith(b"\n") else 0),
        "bytes": len(data),
        "messages": tc.messages,
        "format": tc.format,
    }


def _total(rows: list[tuple[str, dict]]) -> dict:
    """The rows added up; not exact (with every row's reasons, once each) when one is not."""
    total = {"tokens": 0, "chars": 0, "lines": 0, "bytes": 0}
    notes: list[str] = []
    for _, row in rows:
        for key in ("tokens", "chars", "lines", "bytes"):
            total[key] += row[key]
        if row.get("exact") is False and row["note"] not in notes:
            notes.append(row["note"])
    if notes:
        total["exact"] = False
        total["note"] = "; ".join(notes)
        total["notes"] = notes  # one warning each (taken out before the JSON is written)
    return total


def _over_size(rows: list[tuple[str, dict]], limit: int, *, single: bool) -> list[str]:
    """The --fail-above message: each input over LIMIT tokens, the first ten named."""
    big = [(label, row["tokens"]) for label, row in rows if row["tokens"] > limit]
    if not big:
        return []
    if single:
        return [f"{_fmt(big[0][1])} tokens, over the limit of {_fmt(limit)} (--fail-above)"]
    named = ", ".join(f"{label} ({_fmt(n)})" for label, n in big[:10])
    more = f" and {len(big) - 10} more" if len(big) > 10 else ""
    return [f"{len(big)} of {len(rows)} inputs over {_fmt(limit)} tokens: {named}{more}"]


class _progress_bar:
    """A progress bar on stderr for big inputs, only when stderr is a terminal."""

    def __init__(self, sources):
        import os
        import sys

        self.bar = None
        if not sys.stderr.isatty():
            return
        size = 0
        for src in sources:
            if src.path is None:
                return  # stdin: size unknown
            size += os.path.getsize(src.path)
        if size >= PROGRESS_MIN_BYTES:
            self.bar = click.progressbar(length=size, label="counting", file=sys.stderr)

    def __enter__(self):
        if self.bar is None:
            return None
        self.bar.__enter__()
        return self.bar.update

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)
        return False


def _usage(tokens: int, profile, opts, ruler) -> dict | None:
    if profile is None and opts["limit"] is None:
        return None
    from ctxtools import profiles as prof

    limit = opts["limit"] or profile.context_limit
    percent = prof.usage_percent(tokens, limit)
    approximate = not ruler.exact or bool(
        profile is not None and profile.approximate and ruler.kind != "tokenizers"
    )
    return {
        "model": json_text(profile.name) if profile else f"limit {limit:,}",
        "context_limit": limit,
        "tokens": tokens,
        "percent": round(percent, 2),
        "status": prof.usage_status(percent),
        "approximate": approximate,
        "matched_by": profile.matched_by if profile else "limit",
    }


def _budget(profile, opts, table) -> int:
    from ctxtools import profiles as prof

    if profile is None and opts["limit"] is None:
        table = table or prof.load_profiles()
        profile = prof.resolve("default", table)
    limit = opts["limit"] or profile.context_limit
    b = prof.pack_budget(
        limit,
        opts["role"],
        role_shares=prof.effective_role_shares(table, dict(opts["role_shares"])),
        reserve_system=opts["reserve_system"],
        reserve_tools=opts["reserve_tools"],
        reserve_response=opts["reserve_response"],
        slack_percent=opts["slack_percent"],
    )
    model = json_text(profile.name) if profile else None
    if opts["as_json"]:
        doc = {"model": model, "matched_by": profile.matched_by if profile else "limit"}
        doc.update(b.as_dict())
        emit_json(doc)
        return 0
    rows = [
        ("model", f"{model} ({profile.matched_by})" if profile else "(none)"),
        ("context limit", _fmt(b.context_limit)),
        ("reserve system", f"- {_fmt(b.reserve_system)}"),
        ("reserve tools", f"- {_fmt(b.reserve_tools)}"),
        ("reserve response", f"- {_fmt(b.reserve_response)}"),
        (f"slack ({b.slack_percent}%)", f"- {_fmt(b.slack)}"),
        ("before role share", _fmt(b.before_share)),
        (f"role share ({b.role})", f"× {b.role_share}%"),
        ("computed", _fmt(b.computed)),
        ("floor", _fmt(b.floor)),
        ("available", _fmt(b.available) + ("  (floor)" if b.floored else "")),
    ]
    width = max(len(k) for k, _ in rows)
    write("".join(f"{k:<{width}}  {v}\n" for k, v in rows))
    return 0


def _list_profiles(table, as_json: bool) -> int:
    from ctxtools import profiles as prof

    rows = prof.list_profiles(table)
    if as_json:
        emit_json(rows)
        return 0
    w = max(len(r["name"]) for r in rows)
    out = [f"{'name':<{w}}  {'kind':<7}  {'context':>9}  {'output':>7}  turns  encoding\n"]
    for r in rows:
        approx = "  (approximate)" if r["approximate"] else ""
        turns = "-" if r["max_turns"] is None else str(r["max_turns"])
        out.append(
            f"{r['name']:<{w}}  {r['kind']:<7}  {r['context_limit']:>9,}  "
            f"{r['max_output']:>7,}  {turns:>5}  {r['encoding']}{approx}\n"
        )
    write("".join(out))
    return 0


main = make_main(cli, "ctx-count")
