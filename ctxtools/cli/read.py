"""ctx-read: page a handle (or stdin) back in through a projection."""

from __future__ import annotations

import click

from ctxtools import defaults
from ctxtools.cli.common import (
    CONTEXT_SETTINGS,
    emit_json,
    ignore_case_option,
    make_main,
    ruler_from_options,
    ruler_options,
    standard_options,
    stdin_bytes,
    store_options,
    warn,
    write,
)
from ctxtools.errors import UsageError

PROG = "ctx-read"
CARD_PEEK = 1 << 16  # a card on stdin is a few hundred bytes; more than this is content


def _open_input(store, ref: str | None, session: str, verify: bool):
    """(payload, ref for the next command or None) from REF, a card on stdin, or stdin."""
    import orjson

    from ctxtools.store import _Chain, card_ref, looks_like_card, open_spooled

    if ref is not None and ref.lstrip().startswith("{"):  # the card itself as REF
        try:
            card = orjson.loads(ref)
        except orjson.JSONDecodeError:
            card = None
        if not looks_like_card(card):
            raise UsageError("REF looks like JSON but is not a handle card")
        ref = card_ref(card)
    if ref is not None and ref != "-":
        payload = store.open(ref, session, verify=verify, touch=False)
        return payload, payload.label
    stream = stdin_bytes()
    read = getattr(stream, "read1", stream.read)
    parts, size = [], 0
    while size <= CARD_PEEK:
        chunk = read(CARD_PEEK + 1 - size)
        if not chunk:
            break
        parts.append(chunk)
        size += len(chunk)
    head = b"".join(parts)
    if size <= CARD_PEEK and head.lstrip()[:1] == b"{":
        try:
            card = orjson.loads(head)
        except orjson.JSONDecodeError:
            card = None
        if looks_like_card(card):
            payload = store.open(card_ref(card), session, verify=verify, touch=False)
            return payload, payload.label
    if verify:
        raise UsageError("--verify checks a stored handle; stdin content has nothing to verify")
    return open_spooled(_Chain(head, stream), label="stdin"), None


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("ref", required=False, metavar="[REF]")
@click.option("--slice", "slice_", metavar="A:B", help="Zero-based half-open slice.")
@click.option(
    "--unit",
    type=click.Choice(["chars", "lines"]),
    default="chars",
    show_default=True,
    help="Unit of --slice.",
)
@click.option("--range", "range_", metavar="X-Y", help="Lines X..Y, 1-based, closed; X- to end.")
@click.option("--head", type=int, metavar="N", help="The first N lines.")
@click.option("--tail", type=int, metavar="N", help="The last N lines.")
@click.option("--grep", "grep", metavar="REGEX", help="Lines matching REGEX, with line numbers.")
@click.option(
    "-C", "--context", "context", type=int, default=0, metavar="N", help="--grep context."
)
@ignore_case_option("--grep ignoring case.")
@click.option("--count", "do_count", is_flag=True, help="chars, lines, bytes, tokens (JSON).")
@click.option("--jsonpath", metavar="EXPR", help="RFC 9535 JSONPath: a JSON array of matches.")
@click.option("--paths", is_flag=True, help="--jsonpath: the matches' normalized paths.")
@click.option(
    "--dialect",
    type=click.Choice(["rfc9535", "ng"]),
    default="rfc9535",
    show_default=True,
    help="--jsonpath engine: RFC 9535, or jsonpath-ng's extended syntax.",
)
@click.option("--skip", type=click.IntRange(min=0), default=0, help="--jsonpath: skip N matches.")
@click.option("--introspect", is_flag=True, help="What this handle supports, with examples.")
@click.option("-n", "--number", is_flag=True, help="Prefix line numbers to line projections.")
@click.option(
    "--max-chars",
    type=int,
    default=None,
    help=f"Cap on the output [default {defaults.MAX_CHARS}; at most {defaults.MAX_CHARS_CEILING}].",
)
@click.option("--verify", is_flag=True, help="Re-hash the payload with SHA-256 before reading.")
@store_options
@ruler_options
@standard_options
def cli(ref: str | None, **o) -> int:
    """Page a handle (or stdin) back in through a projection.

    REF is [ctx:][SESSION/]NAME[@SHA_PREFIX] (or a whole card). Without REF (or with -),
    stdin is read: a
    handle card there (what ctx-stash prints) names the handle; anything else is read as
    the content itself, so `... | ctx-stash | ctx-read --head 20` works whether the stash
    stored the input or passed it through.

    Projections (one at a time; --grep may take a --range as its scope):
    --slice A:B (zero-based, half-open, negatives from the end; --unit chars|lines),
    --range X-Y (1-based, closed; X- to the end; an end past the last line is clamped with
    a note), --head N, --tail N, --grep REGEX [-C N] [-i] (matching lines as N:line,
    context as N-line, groups separated by --; Python syntax run by RE2 in linear time,
    so no pattern can hang; backreferences and lookaround are refused; a line too long
    to show is shown as a window around its match, with the --slice that shows more on
    stderr), --count (JSON: chars, lines, bytes, tokens,
    counter, kind, exact), --jsonpath EXPR (a JSON array of the matches, one a line; --paths
    their normalized paths; JSON Lines are queried as an array of the lines; --skip N skips
    matches; --dialect ng uses jsonpath-ng's syntax), --introspect (JSON: ref, type, exit_status,
    chars, lines, bytes, max_chars, projections [{usage, what}], examples [commands for this
    handle], and for JSON top_level_keys or top_level_length/element_keys). Without a
    projection the content is shown from the top. -n numbers the lines of line projections.

    Output is capped at --max-chars characters (default 12,000; larger values are clamped
    to 50,000 with a note). A cut read ends with one line saying how much was shown of how
    much and the exact command that shows the next part.

    Every read checks the payload against the checksums recorded at stash time (xxh3);
    --verify also re-hashes it with SHA-256. A reference whose @SHA_PREFIX is no longer
    the name's current version fails as a stale handle. Invalid UTF-8 is shown as U+FFFD.

    Exit status: 0 shown; 1 unknown or stale handle, corrupt payload or damaged card,
    invalid JSON for --jsonpath, invalid JSONPath (the message names the column), invalid
    or unsupported regex, a --range that starts after the last line; 130 Ctrl-C; 2 usage
    errors (--range 0-3, --range 9-2, bad REF,
    conflicting projections).

    \b
    Examples:
      ctx-read tests --grep 'FAILED|Error' -C 3
      ctx-read tests --range 120-180 -n
      ctx-read ctx:default/report@3fa1c2d4e5f6 --jsonpath "$.tests[?@.outcome == 'failed'].name"
      pytest -q 2>&1 | ctx-stash | ctx-read --tail 30
      ctx-read tests --introspect
    """
    from ctxtools import projections as pj
    from ctxtools.store import HandleStore, validate_session

    validate_session(o["session"])
    chosen = [
        name
        for name, on in (
            ("--slice", o["slice_"] is not None),
            ("--range", o["range_"] is not None and o["grep"] is None),
            ("--head", o["head"] is not None),
            ("--tail", o["tail"] is not None),
            ("--grep", o["grep"] is not None),
            ("--count", o["do_count"]),
            ("--jsonpath", o["jsonpath"] is not None),
            ("--introspect", o["introspect"]),
        )
        if on
    ]
    if len(chosen) > 1:
        raise UsageError(" and ".join(chosen) + " cannot be combined (one projection a read)")
    what = chosen[0] if chosen else None
    if o["grep"] is None and (o["context"] or o["ignore_case"]):
        raise UsageError("-C and -i go with --grep")
    if what != "--jsonpath" and (o["paths"] or o["skip"] or o["dialect"] != "rfc9535"):
        raise UsageError("--paths, --skip and --dialect go with --jsonpath")
    if o["number"] and what in ("--grep", "--count", "--jsonpath", "--introspect"):
        raise UsageError(f"-n numbers line projections; {what} does not take it")
    if o["unit"] != "chars" and what != "--slice":
        raise UsageError("--unit goes with --slice")
    # Check the words before touching the store: a usage error reads nothing.
    if o["range_"] is not None:
        pj.parse_range(o["range_"])
    if o["slice_"] is not None:
        pj.parse_slice(o["slice_"])
    for flag in ("head", "tail", "context"):
        if o[flag] is not None and o[flag] < 0:
            raise UsageError(f"--{flag} {o[flag]}: must be 0 or more")
    max_chars, note = pj.clamp_max_chars(o["max_chars"])
    if note:
        warn(f"note: {note}")

    store = HandleStore(o["store"])
    payload, label = _open_input(store, ref, o["session"], o["verify"])
    with payload:
        nxt = pj.next_for(label, max_chars)
        common = {"max_chars": max_chars, "nxt": nxt}
        if what == "--count":
            choice = ruler_from_options(o, store_root=store.root)
            emit_json(pj.count(payload, choice.ruler))
            _touch(store, payload)
            return 0
        if what == "--introspect":
            emit_json(pj.introspect(payload, label, max_chars=max_chars))
            _touch(store, payload)
            return 0
        if what == "--slice":
            out = pj.slice_view(payload, o["slice_"], unit=o["unit"], number=o["number"], **common)
        elif what == "--range":
            out = pj.range_view(payload, o["range_"], number=o["number"], **common)
        elif what == "--head":
            out = pj.head_view(payload, o["head"], number=o["number"], **common)
        elif what == "--tail":
            out = pj.tail_view(payload, o["tail"], number=o["number"], **common)
        elif what == "--grep":
            out = pj.grep_view(
                payload,
                o["grep"],
                context=o["context"],
                ignore_case=o["ignore_case"],
                scope=o["range_"],
                **common,
            )
        elif what == "--jsonpath":
            out = pj.jsonpath_view(
                payload,
                o["jsonpath"],
                dialect=o["dialect"],
                paths=o["paths"],
                skip=o["skip"],
                **common,
            )
        else:
            out = pj.lines_view(payload, 0, None, number=o["number"], asked="all lines", **common)
        write(out.text())
        warn(*out.notes, prefix="note: ")
    _touch(store, payload)
    return 0


def _touch(store, payload) -> None:
    """Log the read of a stored handle (stdin content is not a handle)."""
    rec = payload.record
    if rec.get("session_id") and rec.get("name"):
        store.record_access(rec["session_id"], rec["name"])


main = make_main(cli, PROG)
