"""What a ctx-count call asks besides the counts: the checks of its options, one input's
tokens (``--head``, ``--tail``, ``--ids``, ``--decode``), the inputs it cannot count
(``--missing-ok``), and a tree's window usage (``--tree``). Options are keyed by the
click command's parameter names; ``ctxtools.cli.count`` reads the inputs and prints what
these return (an ``Output``)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ctxtools.errors import CtxError, InputError, OverLimitError, UsageError

# Options --tree refuses, with their flags.
NOT_WITH_TREE = (
    ("messages", "--messages"),
    ("files_from", "--files-from"),
    ("sort", "--sort"),
    ("fail_above", "--fail-above"),
    ("missing_ok", "--missing-ok"),
)


def check_options(opts: Mapping) -> bool:
    """The usage errors found before anything is read; whether the call prints tokens
    (``tokens_mode``) rather than counts."""
    if opts["exclude"] and not opts["tree"]:
        raise UsageError("--exclude goes with --tree", hint="ctx-count --tree DIR --exclude GLOB")
    tokens = tokens_mode(opts)
    if (opts["role"] or opts["role_shares"]) and not opts["budget"]:
        raise UsageError("--role and --role-share go with --budget")
    return tokens


def tokens_mode(opts: Mapping) -> bool:
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


def tokens_of(ruler, stream, label: str, opts: Mapping, notes: list[str]):
    """One input, the binary STREAM, as the tokens options ask: its text (``--decode``: of
    the ids it holds; ``--head``/``--tail``: its first or last N tokens, reading about N
    tokens' worth of it, or keeping only its end), or an iterator of its token ids a piece
    at a time (``--ids``). NOTES hears where a cut could not be proven exact."""
    from ctxtools.tokens import ids as tok

    if opts["decode"]:
        return tok.decode(ruler, tok.parse_ids(stream.read(), label, ruler))
    if opts["head"] is not None:
        data = tok.head_of(ruler, stream, opts["head"], notes)
    elif opts["tail"] is not None:
        data = tok.tail_of(ruler, stream, opts["tail"], notes)
    else:
        return tok.iter_ids(ruler, stream, notes)
    if opts["ids"]:
        return iter([tok.encode(ruler, data.decode("utf-8", "replace"))])
    return data


def ids_output(pieces, as_json: bool):
    """The bytes that print the ids of PIECES (lists of ids), as they come: separated by
    spaces and ended by a newline, or a JSON array (``--json``)."""
    sep = "," if as_json else " "
    yield b"[" if as_json else b""
    started = False
    for ids in pieces:
        if ids:
            yield ((sep if started else "") + sep.join(map(str, ids))).encode()
            started = True
    yield b"]\n" if as_json else b"\n"


def uncountable(paths: list[str | None], missing_ok: bool) -> tuple[dict[str, str], list[str]]:
    """The PATHS that cannot be read (path -> why), and those left out as not present
    (with MISSING_OK: a file that does not exist)."""
    from ctxtools.count.report import unreadable

    bad = unreadable(paths)
    absent = [p for p in bad if missing_ok and not os.path.exists(p)]
    for path in absent:
        del bad[path]
    return bad, absent


def tree_root(opts: Mapping) -> str:
    """The directory (or repository URL) --tree counts; a usage error for the options it
    refuses."""
    for key, flag in NOT_WITH_TREE:
        if opts[key]:
            raise UsageError(f"{flag} does not go with --tree")
    if len(opts["files"]) > 1:
        raise UsageError("--tree takes one directory", hint="ctx-count --tree DIR")
    return opts["files"][0] if opts["files"] else "."


class Output:
    """What a call prints: lines for stderr BEFORE its output, the output (DOC for --json,
    else TEXT), lines for stderr AFTER it, and the ERROR it then ends with (a gate it fails,
    a budget below the floor), if any."""

    __slots__ = ("before", "doc", "text", "after", "error")

    def __init__(self, before, doc, text, after, error: CtxError | None = None):
        self.before, self.doc, self.text, self.after, self.error = before, doc, text, after, error


def counts_output(rows, sources, bad: dict, absent: list[str], profile, ruler, opts) -> Output:
    """The counts of ROWS (label, counts) as the command shows them; SOURCES are the inputs
    named, (label, path) each, BAD and ABSENT those not counted (``uncountable``)."""
    from ctxtools.count import report

    keys = ("limit", "sort", "messages")
    counted = report.Report(rows, profile=profile, ruler=ruler, **{k: opts[k] for k in keys})
    before = [f"error: {why}" for why in bad.values()]
    if absent:
        names = ", ".join(map(report.shown, absent))
        before.append(f"note: not present, not counted (--missing-ok): {names}")
    before += [f"note: not exact: {n}" for n in counted.not_exact]
    doc = text = None
    if opts["as_json"]:
        missing = [label for label, path in sources if path in bad]
        doc = counted.document(ruler.describe(), missing, opts["messages"])
        if absent:
            doc["absent"] = absent
    else:
        text = counted.text(len(sources))
    binary = report.binary_note(rows)
    after = [binary] if binary else []
    gates = {k: opts[k] for k in ("fail_over", "fail_above")}
    over = counted.over_limits(single=len(sources) == 1, **gates)
    error = OverLimitError("; ".join(over)) if over else None
    return Output(before, doc, text, after + counted.warnings(ruler.name), error)


def tree_output(tree, warnings: list[str], profile, ruler, opts) -> Output:
    """A counted TREE as the command shows it (``--depth``, ``--top``), its usage of the
    window, and the WARNINGS of its listing."""
    from ctxtools.count import report
    from ctxtools.count import tree as count_tree

    use = report.usage(tree.top.counts["tokens"], profile, opts["limit"], ruler)
    shape = {"depth": opts["depth"], "top": opts["top"]}
    doc = text = None
    if opts["as_json"]:
        doc = count_tree.document(tree, ruler.describe(), **shape)
        if use:
            doc["usage"] = use
    else:
        text = count_tree.render(tree, **shape) + (report.usage_line(use) if use else "")
    after = [*count_tree.notes(tree), *warnings]
    error = None
    if use:
        after += report.usage_warnings(use, ruler.name)
        over = report.over_limits(
            [], use, fail_over=opts["fail_over"], fail_above=None, single=True
        )
        error = OverLimitError("; ".join(over)) if over else None
    return Output([f"note: not exact: {n}" for n in tree.not_exact], doc, text, after, error)


def budget_output(profile, table, opts) -> Output:
    """``--budget``: the pack budget of the model (or --limit) and role; below the floor,
    the figures and then the error ctx-pack gives."""
    from ctxtools.count import report

    keys = ("role", "reserve_system", "reserve_tools", "reserve_response", "slack_percent")
    shares = dict(opts["role_shares"])
    budget, profile = report.budget(
        profile, opts["limit"], table, role_shares=shares, **{k: opts[k] for k in keys}
    )
    doc = report.budget_document(budget, profile) if opts["as_json"] else None
    text = None if opts["as_json"] else report.render_budget(budget, profile)
    error = None
    if budget.floored:  # the rule ctx-pack follows: below the floor there is no budget
        error = budget.floor_error(
            hint="a model with a larger window, another --role, or fewer reserves"
        )
    from ctxtools.profiles import unknown_role

    unknown = unknown_role(opts["role"], table, shares)
    return Output([f"note: {unknown}"] if unknown else [], doc, text, [], error)


def count_texts(inputs, ruler, opts, *, stdin, check, bar=None) -> list[tuple[str, dict]]:
    """The counts of INPUTS ((label, path); path None: standard input, from STDIN()), each
    file checked first by CHECK(path); BAR, a progress line, hears of each file and its
    bytes."""
    from ctxtools.count.report import count_file
    from ctxtools.tokens import count_stream

    rows = []
    for i, (label, path) in enumerate(inputs, 1):
        if bar is not None:
            bar.note(f"{i:,}/{len(inputs):,} files")
        if path is None:
            counts = count_stream(stdin(), ruler, jobs=opts["jobs"]).as_dict()
        else:
            check(path)
            try:
                progress = bar.advance if bar is not None else None
                counts = count_file(
                    path,
                    ruler,
                    count_binary=opts["count_binary"],
                    jobs=opts["jobs"],
                    progress=progress,
                )
            except OSError as exc:
                raise InputError(f"{path}: {exc.strerror or exc}") from None
        rows.append((label, counts))
    return rows


def profile_of(model: str | None, table, limit: int | None) -> tuple[object | None, list[str]]:
    """--model's profile (None without one) and the note an unknown model gets."""
    if not model:
        return None, []
    from ctxtools import profiles as prof

    profile = prof.resolve(model, table)
    note = prof.unknown_model_note(model, profile, table) if limit is None else None
    return profile, [note] if note else []


def profiles_output(table, opts) -> Output:
    """``--profiles``: the model profiles, as a table or JSON."""
    from ctxtools import profiles as prof
    from ctxtools.count.report import render_profiles

    rows = prof.list_profiles(table)
    if opts["as_json"]:
        return Output([], rows, None, [])
    return Output([], None, render_profiles(rows), [])


def encoding_of(encoding: str | None, profile, from_env: bool) -> str | None:
    """The encoding that counts: --encoding, unless a model's profile gives one and the
    encoding came from the environment (CTX_ENCODING) or not at all."""
    if profile is not None and (encoding is None or from_env):
        return profile.encoding
    return encoding


def tree_hint(path: str) -> str:
    """What to type to count the files under the directory PATH."""
    from ctxtools.quoting import shell_word

    return f"give files, or count the files under it: ctx-count --tree {shell_word(path)}"


def count_messages(sources, ruler, opener) -> list[tuple[str, dict]]:
    """--messages: each of SOURCES (``.label``, ``.path``; path None: standard input)
    counted as a chat transcript, read through OPENER(source), a context manager that gives
    its binary stream."""
    from functools import partial

    from ctxtools.compact.transcript import head_error
    from ctxtools.count.report import transcript_counts_of

    rows = []
    for s in sources:
        error = partial(head_error, where=f"{s.path}: " if s.path is not None else "")
        with opener(s) as stream:
            rows.append(
                (s.label, transcript_counts_of(stream, ruler, s.path, s.path or "stdin", error))
            )
    return rows
