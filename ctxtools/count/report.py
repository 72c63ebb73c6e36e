"""What ctx-count reports: per-input counts, their total, the window usage and its gates,
and the pack budget and the model profiles as text or as JSON documents.

A row is ``(label, counts)``: what the user named the input, and a dict with ``tokens``,
``chars``, ``lines`` and ``bytes`` (plus ``exact``/``note`` from ``tokens.Counts.as_dict``
when a part could not be counted exactly, and ``messages``/``format`` for a transcript).
``Report`` is a run's counts as the command shows them. Nothing here prints:
``ctxtools.cli.count`` prints what these functions return. The module imports nothing at
load time (``ctxtools.cli.count_fast``, which avoids even click, uses ``format_counts``).
"""

from __future__ import annotations

Row = tuple[str, dict]
_SUMS = ("tokens", "chars", "lines", "bytes")


def fmt(n: int) -> str:
    """A count with thousands separators: 12,345."""
    return f"{n:,}"


def pct(p: float) -> str:
    """A percentage with one decimal: 81.3%."""
    return f"{p:.1f}%"


def format_counts(rows: list[tuple[str, int | str]], total: int, n_sources: int) -> str:
    """The plain output: the count of one input, or wc-style lines and a total. A count
    given as a string (``-`` for a binary file) is shown as it is. The labels are shown as
    given: a file name as ``shown`` shows it."""
    if len(rows) == 1 and n_sources == 1:
        n = rows[0][1]
        return f"{0 if isinstance(n, str) else n}\n"
    width = max([len(str(total))] + [len(str(n)) for _, n in rows])
    lines = [f"{n:>{width}} {label}\n" for label, n in rows]
    lines.append(f"{total:>{width}} total\n")
    return "".join(lines)


def shown(name: str) -> str:
    """A file name as the toolkit shows it in text (``quoting.quote_name``: a name with a
    newline stays on its line). A name of printable characters without a quote or a
    backslash is shown as it is: the plain call (``count_fast``) does not load the rule."""
    if name.isprintable() and '"' not in name and "\\" not in name:
        return name
    from ctxtools.quoting import quote_name

    return quote_name(name)


def binary_row(size: int) -> dict:
    """The counts of a binary file: its bytes only (no tokens, chars or lines are claimed)."""
    return {"tokens": 0, "chars": 0, "lines": 0, "bytes": size, "binary": True}


def count_file(path: str, ruler, *, count_binary: bool = False, jobs=None, progress=None):
    """The counts of the file at PATH (a row's dict). A binary file (``binary.is_binary``
    on its head) gets ``binary_row`` unless COUNT_BINARY; PROGRESS(n) is told the bytes
    read (a binary file's size at once). OSError when it cannot be read."""

    from ctxtools.binary import BINARY_PROBE, is_binary
    from ctxtools.tokens import count_stream
    from ctxtools.tokens.stream import Prefixed

    with open(path, "rb") as fh:
        stream = fh
        if not count_binary:
            head = fh.read(BINARY_PROBE)
            if is_binary(head):
                size = _size(fh, head)
                if progress is not None:
                    progress(size)
                return binary_row(size)
            # the head read is counted from memory: a pipe (``<(make 2>&1)``, a FIFO)
            # cannot be read from its start again
            stream = Prefixed(head, fh)
        return count_stream(stream, ruler, jobs=jobs, progress=progress).as_dict()


def _size(fh, head: bytes) -> int:
    """The bytes of the open file FH, of which HEAD was read: a regular file's size, or for
    a pipe or a device (which have none: /dev/zero's is 0) what it holds, read to its end,
    as ``wc -c`` does (an endless device ends by Ctrl-C)."""
    import os
    import stat

    st = os.fstat(fh.fileno())
    if stat.S_ISREG(st.st_mode):
        return st.st_size
    size = len(head)
    while block := fh.read(1 << 20):
        size += len(block)
    return size


def binary_note(rows: list[Row]) -> str | None:
    """The note for the binary files among ROWS (None: there are none)."""
    binary = [label for label, row in rows if row.get("binary")]
    if not binary:
        return None
    size = sum(row["bytes"] for _, row in rows if row.get("binary"))
    if len(binary) == 1:
        return (
            f"note: {shown(binary[0])}: binary ({fmt(size)} bytes), not counted in tokens "
            "(--count-binary counts it as text)"
        )
    return (
        f"note: {len(binary)} binary files ({fmt(size)} bytes) not counted in tokens "
        "(--count-binary counts them as text)"
    )


def unreadable(paths: list[str | None]) -> dict[str, str]:
    """Each path of PATHS (None: stdin, never unreadable) that cannot be counted, with why."""
    from ctxtools.fsutil import unreadable_reason

    bad: dict[str, str] = {}
    for path in paths:
        if path is not None and path not in bad:
            reason = unreadable_reason(path, check_access=True)
            if reason is not None:
                bad[path] = reason
    return bad


def transcript_counts_of(stream, ruler, path: str | None, label: str, error) -> dict:
    """``transcript_counts`` of what STREAM holds, read within ``jsonbound``'s bounds
    (LABEL names it there; ERROR makes the error for a head that cannot be JSON). JSON Lines
    are read and counted a line at a time, never held whole."""
    from ctxtools.jsonbound import read_json_head

    data, lines = read_json_head(stream, label, error, containers=True)
    if not lines:
        return transcript_counts(data, ruler, path)
    sizes = _Sizes()
    try:
        return _jsonl_counts(data, stream, ruler, path, label, sizes)
    except _Whole as whole:  # one message in all: counted as the document it also is
        return transcript_counts(whole.data, ruler, path)


class _Whole(Exception):  # noqa: N818 - not an error: the input is small, here it is
    def __init__(self, data: bytes) -> None:
        self.data = data


class _Sizes:
    def __init__(self) -> None:
        self.bytes = self.newlines = self.chars = 0
        self.ends_in_newline = True


def _not_a_transcript(exc, path):
    """EXC (a transcript that does not read) naming PATH (None: stdin)."""
    from ctxtools.errors import InputError

    where = f"{path}: " if path is not None else ""
    hint = exc.hint or "--messages counts a chat transcript; without it, the text"
    return InputError(f"{where}{exc.message}", hint=hint)


def _jsonl_counts(head: bytes, stream, ruler, path, label, sizes: _Sizes) -> dict:
    from ctxtools.count.messages import count_jsonl
    from ctxtools.errors import InputError

    lines = _jsonl_lines(head, stream, label, sizes)
    try:
        tc = count_jsonl(lines, ruler)
    except InputError as exc:
        raise _not_a_transcript(exc, path) from None
    lines = sizes.newlines + (0 if sizes.ends_in_newline else 1)
    return tc.row(sizes.chars, lines, sizes.bytes)


def _jsonl_lines(head: bytes, stream, label: str, sizes: _Sizes):
    """(number, offset, bytes) of each non-blank line of HEAD then STREAM, as
    ``transcript.load`` splits them (offsets after a BOM); SIZES counted on the way. Until
    a second non-blank line the bytes are kept: an input with fewer is raised as _Whole."""
    from ctxtools.jsonbound import BOM, JSON_DOCUMENT_MAX, too_big

    skip = len(BOM) if head.startswith(BOM) else 0
    sizes.chars += 1 if skip else 0
    kept: list[bytes] | None = [head]
    nonblank = n = 0
    offset = -skip  # of buf[0], counted after the BOM
    buf, block = head, head
    while True:
        sizes.bytes += len(block)
        start, skip = skip, 0
        while (end := buf.find(b"\n", start)) >= 0:
            line = buf[start:end]
            n += 1
            sizes.newlines += 1
            sizes.chars += len(line.decode("utf-8", "replace")) + 1
            if line.strip():
                nonblank += 1
                if nonblank == 2:
                    kept = None
                yield n, offset + start, line
            start = end + 1
        rest = buf[start:]
        if len(rest) > JSON_DOCUMENT_MAX or (kept is not None and sizes.bytes > JSON_DOCUMENT_MAX):
            raise too_big(label, JSON_DOCUMENT_MAX)
        block = stream.read(1 << 20)
        if not block:
            break
        if kept is not None:
            kept.append(block)
        offset += start
        buf = rest + block
    if rest:
        n += 1
        sizes.ends_in_newline = False
        sizes.chars += len(rest.decode("utf-8", "replace"))
        if rest.strip():
            nonblank += 1
            kept = None if nonblank >= 2 else kept
            yield n, offset + start, rest
    if kept is not None:
        raise _Whole(b"".join(kept))


def transcript_counts(data: bytes, ruler, path: str | None) -> dict:
    """The counts of DATA read as a chat transcript (``--messages``); PATH (None: stdin)
    names it in the error when DATA is not a transcript."""
    from ctxtools.count.messages import count_transcript
    from ctxtools.errors import InputError

    try:
        tc = count_transcript(data, ruler)
    except InputError as exc:
        raise _not_a_transcript(exc, path) from None
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return tc.row(_chars(data), lines, len(data))


def _chars(data: bytes) -> int:
    """The characters of DATA read as UTF-8 (a bad byte a U+FFFD), decoded a block at a
    time: decoding 48 MiB whole took 48-190 MB more (a str of 1-4 bytes a character)."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    view = memoryview(data)
    step = 1 << 20
    chars = sum(len(decoder.decode(view[i : i + step])) for i in range(0, len(data), step))
    return chars + len(decoder.decode(b"", final=True))


def total(rows: list[Row]) -> tuple[dict, list[str]]:
    """The rows added up, and why the total is not exact (each reason once; none when it is).
    A total that is not exact has ``exact: false`` and the reasons joined in ``note``."""
    out = dict.fromkeys(_SUMS, 0)
    notes: list[str] = []
    for _, row in rows:
        for key in _SUMS:
            out[key] += row[key]
        if row.get("exact") is False and row["note"] not in notes:
            notes.append(row["note"])
    if notes:
        out["exact"] = False
        out["note"] = "; ".join(notes)
    return out, notes


def sort_rows(rows: list[Row], key: str | None) -> None:
    """Sort ROWS in place: ``tokens`` (heaviest first, then by name), ``name``, or None."""
    if key == "tokens":
        rows.sort(key=lambda r: (-r[1]["tokens"], r[0]))
    elif key == "name":
        rows.sort(key=lambda r: r[0])


def usage(tokens: int, profile, limit: int | None, ruler) -> dict | None:
    """How full the window of PROFILE (or LIMIT, which beats it) is; None without either."""
    if profile is None and limit is None:
        return None
    from ctxtools import profiles as prof
    from ctxtools.fsutil import json_text

    limit = limit or profile.context_limit
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


def usage_line(use: dict) -> str:
    """The text line after the counts: tokens · percent of the window (model)."""
    return (
        f"{fmt(use['tokens'])} tokens · {pct(use['percent'])} of "
        f"{fmt(use['context_limit'])} ({use['model']})\n"
    )


def usage_warnings(use: dict, ruler_name: str, messages: bool = False) -> list[str]:
    """The stderr lines USE calls for: approximate counts, and from 80% of the window the
    share used. Only a transcript (MESSAGES, ``--messages``) is told to compact (soon from
    80%, now from 90%, naming ctx-compact): a text file is not compacted."""
    out = []
    if use["approximate"]:
        out.append(
            f"note: counts for {use['model']} are approximate ({ruler_name} is not its "
            "tokenizer; --tokenizer gives exact counts)"
        )
    if use["status"] not in ("compact", "warn"):
        return out
    used = f"warning: {pct(use['percent'])} of the window used"
    if not messages:
        out.append(used)
    else:
        when = "now" if use["status"] == "compact" else "soon"
        out.append(f"{used}: compact {when} (ctx-compact)")
    return out


def over_limits(
    rows: list[Row],
    use: dict | None,
    *,
    fail_over: float | None,
    fail_above: int | None,
    single: bool,
) -> list[str]:
    """Why the run is over --fail-over PCT (usage) or --fail-above N (an input's tokens);
    empty when it is not. SINGLE: one input was named: its message names it (stdin, ``-``,
    has no name to give)."""
    over: list[str] = []
    if use and fail_over is not None and use["percent"] > fail_over:
        over.append(f"usage {pct(use['percent'])} is over the limit of {fail_over:g}%")
    if fail_above is None:
        return over
    big = [(label, row["tokens"]) for label, row in rows if row["tokens"] > fail_above]
    if not big:
        return over
    if single:
        label = big[0][0]
        where = "" if label == "-" else f"{shown(label)}: "
        over.append(
            f"{where}{fmt(big[0][1])} tokens, over the limit of {fmt(fail_above)} (--fail-above)"
        )
        return over
    named = ", ".join(f"{shown(label)} ({fmt(n)})" for label, n in big[:10])
    more = f" and {len(big) - 10} more" if len(big) > 10 else ""
    over.append(f"{len(big)} of {len(rows)} inputs over {fmt(fail_above)} tokens: {named}{more}")
    return over


def count_document(
    described: dict,
    rows: list[Row],
    tot: dict,
    use: dict | None,
    missing: list[str],
    messages: bool,
) -> dict:
    """The ``--json`` document. DESCRIBED is ``ruler.describe()`` (counter, kind, exact);
    MISSING the labels of the inputs that could not be read. A file's name is
    ``fsutil.json_name``'s: ``path``, and ``path_quoted`` when it is not UTF-8."""
    from ctxtools.fsutil import json_name, json_text

    doc = dict(described)
    if (use and use["approximate"]) or tot.get("exact") is False:
        doc["exact"] = False
    doc["counted"] = "messages" if messages else "text"
    doc["files"] = [{**json_name(label), **row} for label, row in rows]
    doc["total"] = tot
    if use:
        doc["usage"] = use
    if missing:
        doc["missing"] = [json_text(label) for label in missing]
    return doc


class Report:
    """The counts of a run as ctx-count shows them: ROWS (sorted as asked), their TOTAL, why
    the total is not exact (NOT_EXACT, each reason once) and the window's USAGE (None
    without a model or limit). MESSAGES: the rows count transcripts (``--messages``)."""

    __slots__ = ("rows", "total", "not_exact", "usage", "messages")

    def __init__(
        self, rows: list[Row], *, profile, limit: int | None, ruler, sort=None, messages=False
    ):
        self.rows = rows
        self.messages = messages
        self.total, self.not_exact = total(rows)
        sort_rows(rows, sort)
        self.usage = usage(self.total["tokens"], profile, limit, ruler)

    def text(self, n_sources: int) -> str:
        """The plain output: the counts (``format_counts``), then the usage line."""
        pairs = [
            (f"{shown(label)} (binary, {fmt(row['bytes'])} bytes)", "-")
            if row.get("binary")
            else (shown(label), row["tokens"])
            for label, row in self.rows
        ]
        out = format_counts(pairs, self.total["tokens"], n_sources)
        return out + usage_line(self.usage) if self.usage else out

    def document(self, described: dict, missing: list[str], messages: bool) -> dict:
        """The ``--json`` document (``count_document``)."""
        return count_document(described, self.rows, self.total, self.usage, missing, messages)

    def warnings(self, ruler_name: str) -> list[str]:
        """The stderr lines after the output (``usage_warnings``)."""
        return usage_warnings(self.usage, ruler_name, self.messages) if self.usage else []

    def over_limits(self, *, fail_over: float | None, fail_above: int | None, single: bool):
        """Why the run fails its gates (``over_limits``); empty when it does not."""
        return over_limits(
            self.rows, self.usage, fail_over=fail_over, fail_above=fail_above, single=single
        )


def budget(profile, limit: int | None, table, *, role, role_shares, **reserves):
    """``--budget``: the pack budget of PROFILE's window (LIMIT beats it; neither: the default
    profile's) for ROLE, with ROLE_SHARES overriding TABLE's, and the RESERVES
    (``profiles.pack_budget``'s keywords). Returns (budget, profile)."""
    from ctxtools import profiles as prof

    if profile is None and limit is None:
        profile = prof.resolve("default", table or prof.load_profiles())
    shares = prof.effective_role_shares(table, role_shares)
    limit = limit or profile.context_limit
    return prof.pack_budget(limit, role, role_shares=shares, **reserves), profile


def budget_document(budget, profile) -> dict:
    """``--budget --json``: the model (None with --limit only), how it matched, the terms."""
    from ctxtools.fsutil import json_text

    doc = {
        "model": json_text(profile.name) if profile else None,
        "matched_by": profile.matched_by if profile else "limit",
        "matched": profile.matched if profile else None,
    }
    doc.update(budget.as_dict())
    if budget.floored:
        doc["available"] = None  # no budget: ctx-pack refuses, and so does --budget (exit 1)
    return doc


def render_budget(budget, profile) -> str:
    """``--budget``: one line a term of the pack budget, as a subtraction to read down."""
    from ctxtools import profiles as prof
    from ctxtools.fsutil import json_text

    b = budget
    model = f"{json_text(profile.name)}: {prof.describe_match(profile)}" if profile else "(none)"
    rows = [
        ("model", model),
        ("context limit", fmt(b.context_limit)),
        ("reserve system", f"- {fmt(b.reserve_system)}"),
        ("reserve tools", f"- {fmt(b.reserve_tools)}"),
        ("reserve response", f"- {fmt(b.reserve_response)}"),
        (f"slack ({b.slack_percent}%)", f"- {fmt(b.slack)}"),
        ("before role share", fmt(b.before_share)),
        (f"role share ({b.role})", f"× {b.role_share}%"),
        ("computed", fmt(b.computed)),
        ("floor", fmt(b.floor)),
        (
            "available",
            f"none: {fmt(b.computed)} is below the floor" if b.floored else fmt(b.available),
        ),
    ]
    width = max(len(k) for k, _ in rows)
    return "".join(f"{k:<{width}}  {v}\n" for k, v in rows)


def render_profiles(rows: list[dict]) -> str:
    """``--profiles``: a table of ``profiles.list_profiles`` rows."""
    w = max(len(r["name"]) for r in rows)
    out = [f"{'name':<{w}}  {'kind':<7}  {'context':>9}  {'output':>7}  turns  encoding\n"]
    for r in rows:
        approx = "  (approximate)" if r["approximate"] else ""
        turns = "-" if r["max_turns"] is None else str(r["max_turns"])
        out.append(
            f"{r['name']:<{w}}  {r['kind']:<7}  {r['context_limit']:>9,}  "
            f"{r['max_output']:>7,}  {turns:>5}  {r['encoding']}{approx}\n"
        )
    return "".join(out)
