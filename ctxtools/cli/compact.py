"""ctx-compact: compact an agent transcript without losing the work or breaking the API."""

from __future__ import annotations

import click

from ctxtools.cli.decorators import CONTEXT_SETTINGS
from ctxtools.cli.entry import make_main
from ctxtools.cli.inputs import open_source
from ctxtools.cli.jsoninput import read_json_source
from ctxtools.cli.outputs import deliver, json_dumps, warn, write_bytes
from ctxtools.cli.ruler import ruler_from_options
from ctxtools.cli.tables import options
from ctxtools.errors import UsageError
from ctxtools.options.compact import COMPACT


@click.command(name="ctx-compact", context_settings=CONTEXT_SETTINGS)
@options(COMPACT)
def cli(file, accept, evict, **kw):
    """Compact an agent transcript without losing the work or breaking the API.

    Reads an OpenAI or Anthropic transcript (FILE or stdin) and writes it in the same format
    and shape, under the target share of the window: old tool results are stored and
    replaced by a line naming their handle, then the oldest messages are dropped, never
    leaving a tool call without its result. A must-preserve digest keeps the files, commands
    and decisions; --summarizer adds a summary that must pass a gate.

    Exit status: 0 done (or unchanged); 1 bad input (invalid JSON, unknown role, empty
    transcript or message list, orphaned results without --repair) or a rejected --accept
    candidate; 2 usage error; 4 compaction could not get under the target (output still
    written); 130 Ctrl-C.

    \b
    Examples:
      ctx-compact --model gpt-4o < transcript.json > compacted.json
      ctx-compact --limit 32000 --json-report run.jsonl > run.compacted.jsonl
      ctx-compact --limit 32000 --summarizer 'llm -m qwen2.5 -s "Summarise."' < t.json
      ctx-compact --accept CONTEXT.md CONTEXT.new.md > /dev/null && mv CONTEXT.new.md CONTEXT.md
      ctx-compact --evict --strategy importance --max-bytes 200k < working-set.jsonl

    The manual, man ctx-compact, has the details.

    \f

    Reads a transcript from FILE (or stdin) and writes it, compacted, to stdout in the same
    format and shape. Formats (detected; force with --format): OpenAI chat messages -- a JSON
    list, {"messages": [...]} (its other keys are kept), or JSON Lines -- with tool_calls and
    role "tool" results; Anthropic messages with tool_use / tool_result blocks and a top-level
    "system". Fields ctx-compact does not know pass through untouched. A UTF-8 byte
    order mark before the JSON is skipped and not written back. An input whose first 64
    KiB cannot begin a transcript is refused there, before the rest is read; a transcript
    over 48 MiB, JSON or JSON Lines, is refused once that much is read (split it): the
    limit keeps the work under 300 MB of memory, or up to 370 MB when most messages hold
    a character past U+FFFF such as an emoji (Python keeps every character of such a
    text in 4 bytes); --accept reads at most 64 MiB of each text.

    Tokens are counted with the ruler (--encoding, default the model's) over each message's
    text, tool-call names and arguments, plus 4 tokens a message and 3 for the reply, as the
    APIs count a request -- not the raw JSON of the file, whose keys, quotes and escapes
    `ctx-count FILE` counts too (a
    transcript far over its window is counted from the end only as far as needed: the
    older messages can only be dropped, and the total before is then an estimate,
    "tokens_before_exact": false in the report). A message's text is counted as ctx-count
    counts a file's: a long one in pieces, to the same count, in time and memory that grow
    with it only linearly (one 45 MB message: 2 s, 190 MB); where a cut in a text past
    256K characters cannot be proven exact, a note on stderr says so, as ctx-count's does.
    Below --at percent of the window (--limit, else --model's; neither: the default profile's
    16,384 tokens, the window ctx-pack and ctx-count --budget take too; ctx-count --profiles
    lists them) the output is the input, byte for byte,
    with a note on stderr, unless --force. Compaction aims 5 points below --at; when it cannot
    get there it still prints its best valid result, says so and exits 4 -- pause
    auto-compaction instead of retrying.

    Stage 1 replaces old tool results outside the protected tail (the last --keep-recent
    turns, plus the newest results before them up to --keep-tokens) by a one-line placeholder
    naming a handle: the result is stashed in the store first (--store, --session), so
    `ctx-read REF` brings it back byte for byte. Handles are named after their content, so
    reruns give identical output. The system prompt and first user message are never
    touched; calls and results stay paired.

    Stage 2, only if still over the target, drops the oldest messages after the system
    prompt and first user message, at a cut where the kept part neither starts on nor
    contains a result whose call was dropped (Anthropic: starts on an assistant turn). The
    dropped messages are stashed (JSON Lines) and one digest takes their place, naming that
    handle and listing files read, files edited, commands with exit status, failed calls
    with their error line, and decisions. OpenAI: a user message after the first user
    message; Anthropic: a text block appended to the first user turn, so turns alternate.

    --keep-tool NAME (repeatable) keeps every result of the tool NAME as it is: memory or
    scratchpad tools whose results are the agent's state. Stage 1 never elides them; when
    stage 2 drops a span, the calls of kept tools and their results stay, in order, right
    after the digest (an assistant message that also called other tools keeps only the
    kept calls; their results' message keeps only the kept results), so every kept result
    still follows its call and the transcript stays valid for its API. The span, as it was,
    is in the digest's handle.

    --summarizer 'CMD ARGS' runs CMD (no shell) with the dropped messages as text on stdin;
    its stdout joins the digest as a narrative only if it exits 0 within
    --summarizer-timeout and passes the gate: not empty, not longer than what it replaces,
    at least --min-ratio of it, keeps --min-path-share of its file paths, no chatty preamble
    or refusal ("Sure!", "Here is", "I can't", "As an AI"), not an error message. A rejected
    summary is reported on stderr with the reason.

    A run ends with one line on stderr saying what it did (--quiet drops it), e.g.
    "ctx-compact: 68 → 28 messages, 15,055 → 5,099 tokens (−66%, counting message text + 4 a
    message); 3 results elided, 41 messages dropped; originals: ctx-read ctx:default/
    compact-…" ("~" marks a total before that is an estimate, see above), or "66 messages,
    14,943 tokens = 49.8% of 30,000, below the 80% trigger: unchanged".

    --accept ORIGINAL CANDIDATE runs only the gate: exit 0 and print CANDIDATE if it passes,
    exit 1 with the reasons otherwise (ORIGINAL is never touched).

    --evict reads JSON Lines {"id", "path", "last_accessed_at", "size_bytes",
    "access_count"?} and prints the ids to evict, in order, one a line, until the rest fits
    --max-bytes / --max-entries (--strategy lru or importance, pure: same input, same ids).

    A transcript that already has orphaned tool results (or calls without results) is
    refused (exit 1) with what is wrong; --repair drops orphaned results (stashed first,
    and named in a note) and answers calls that have none with a placeholder result.

    --json (--json-report) prints on stderr: {"format", "shape", "limit", "at", "target_percent",
    "target_tokens", "messages_before", "tokens_before", "tokens_before_exact",
    "percent_before", "messages_after",
    "tokens_after", "percent_after", "action": "unchanged"|"compacted"|"no_headroom"|
    "repaired" (--repair changed it, nothing more was needed),
    "stage1": {"elided", "tokens_saved", "handles", "kept"}, "stage2": null|{"dropped",
    "first", "last", "kept", "handle", "digest_tokens"}, "summarizer": null|{"command", "accepted",
    "reasons", ...}, "counted": "messages" (what the token figures count, see above),
    "repair": null|{"removed", "added"}, "ruler": {...}}.

    --explain prints on stderr, as ctx-pack --explain does, the target as the budget, what
    was kept (the head, the protected tail, the results stage 1 did not need to elide,
    the messages after the cut) and what was left out and why (each elided result with the
    tokens its placeholder saved, the span stage 2 dropped and its digest's handle). With
    --json-report the report also has
    "explain": {"command", "summary", "budget": null|{"tokens", "used", "counter",
    "exact"}, "chosen": [{"what", "why", "score", "tokens", "parts"?: [...]}], "left_out":
    [...]}.
    """
    if accept and evict:
        raise UsageError("--accept and --evict are separate modes")
    if (accept or evict) and kw["explain"]:
        raise UsageError("--explain goes with a compaction, not --accept or --evict")
    if accept:
        return _accept(accept, kw["min_ratio"], kw["min_path_share"], kw["as_json"])
    if evict:
        return _evict(file, kw["strategy"], kw["max_bytes"], kw["max_entries"])
    return _compact(file, kw)


def _source(path: str | None):
    from ctxtools.resolve import STDIN, FileArg

    return STDIN if path in (None, "-") else FileArg(path, path)


def _report(obj: dict) -> None:
    click.echo(json_dumps(obj).decode("utf-8").rstrip("\n"), err=True)


def _read_text(path: str) -> bytes:
    from ctxtools.compact.accept import read_text

    src = _source(path)
    stream = open_source(src)
    try:
        return read_text(stream, "stdin" if src.path is None else path)
    finally:
        if src.path is not None:
            stream.close()


def _accept(paths, min_ratio, min_path_share, json_report) -> int:
    from ctxtools.compact.accept import gate_bytes

    if paths[0] == "-" and paths[1] == "-":
        raise UsageError("--accept: ORIGINAL and CANDIDATE cannot both be stdin")
    original = _read_text(paths[0])
    candidate = _read_text(paths[1])
    verdict = gate_bytes(original, candidate, min_ratio=min_ratio, min_path_share=min_path_share)
    if json_report:
        _report(verdict.as_dict())
    if verdict.error(paths[0]) is not None:
        raise verdict.error(paths[0])
    write_bytes(candidate)
    return 0


def _evict(file, strategy, max_bytes, max_entries) -> int:
    from ctxtools.compact.working_set import evict_lines
    from ctxtools.store.evict import GcBudget

    if max_bytes is None and max_entries is None:
        raise UsageError("--evict needs --max-bytes and/or --max-entries")
    from ctxtools.fsutil import parse_size

    budget = GcBudget(
        max_bytes=parse_size(max_bytes) if max_bytes is not None else None,
        max_entries=max_entries,
    )
    from ctxtools.compact.working_set import head_error

    ids = evict_lines(read_json_source(_source(file), head_error), strategy, budget)
    write_bytes("".join(f"{i}\n" for i in ids).encode("utf-8"))
    return 0


# the parameters that are Options fields as they are
_FIELDS = ("at", "force", "keep_recent", "keep_tokens", "session", "keep_tools", "min_ratio")
_FIELDS += ("min_path_share", "summarizer_timeout")


def _compact(file, kw) -> int:
    from ctxtools.compact.elide import StoreStash
    from ctxtools.compact.run import compact_options, compact_transcript, model_note
    from ctxtools.compact.transcript import head_error, load
    from ctxtools.config import store_root
    from ctxtools.quoting import quote_name

    opts, encoding = compact_options(
        kw["model"],
        kw["limit"],
        kw["encoding"],
        counter_chosen=bool(kw["tokenizer"] or kw["heuristic"]),
        summarizer=kw["summarizer"],
        **{name: kw[name] for name in _FIELDS},
    )
    note = model_note(kw["model"], kw["limit"])
    if note:
        warn(note)
    root = store_root(kw["store"])
    data = read_json_source(_source(file), head_error, whole="compacted")
    named = None if file in (None, "-") else quote_name(file)
    tr = load(data, None if kw["fmt"] == "auto" else kw["fmt"], named)
    choice = ruler_from_options(kw, encoding=encoding, store_root=root, note_prefix="")
    stash = StoreStash(root, opts.session)
    run = compact_transcript(
        tr, choice.ruler, opts, stash, repair=kw["repair"], original=data, on_note=warn
    )
    write_bytes(run.output)
    deliver()  # (written before the summary says what was: a failed write is the one line)
    warn(*run.compaction_notes)
    if kw["quiet_old"]:
        warn("note: -q is --quiet in ctx-compact only (elsewhere it is --query): type --quiet")
    if not (kw["quiet"] or kw["quiet_old"]):
        warn(run.summary())
    report = run.report()
    if kw["explain"]:
        from ctxtools.compact.explain import explain

        explained = explain(run)
        click.echo(explained.text(), err=True, nl=False)
        report["explain"] = explained.as_dict()
    if kw["as_json"]:
        _report(report)
    if run.error is not None:
        raise run.error
    return 0


main = make_main(cli, "ctx-compact")
