"""ctx-read: page a handle (or stdin) back in through a projection."""

from __future__ import annotations

import click

from ctxtools.cli.decorators import CONTEXT_SETTINGS, complete
from ctxtools.cli.entry import make_main
from ctxtools.cli.inputs import stdin_bytes
from ctxtools.cli.outputs import emit_json, warn, write
from ctxtools.cli.ruler import ruler_from_options
from ctxtools.cli.tables import options
from ctxtools.errors import NotFoundError, UsageError
from ctxtools.options.read import READ

PROG = "ctx-read"


@click.command(context_settings=CONTEXT_SETTINGS)
@options(READ, hooks={"ref": {"shell_complete": complete("complete_handle")}})
def cli(ref: str | None, **o) -> int:
    """Page a handle (or stdin) back in through a projection.

    REF names a stored handle ([ctx:][SESSION/]NAME[@SHA_PREFIX], or a card on stdin); without
    it stdin itself is read. One projection at a time -- --range, --slice, --head, --tail,
    --grep, --count, --jsonpath, --introspect -- capped at --max-chars; a cut read ends with
    the exact command for the next part.

    Exit status: 0 shown; 1 unknown or stale handle, corrupt payload or damaged card,
    invalid JSON for --jsonpath, invalid JSONPath (the message names the column), invalid
    or unsupported regex, a --range that starts after the last line; 130 Ctrl-C; 2 usage
    errors (--range 0-3, --range 9-2, --slice 5:2, bad REF, conflicting projections).
    A --slice past the end shows nothing, exit 0, with a note.

    \b
    Examples:
      ctx-read tests --grep 'FAILED|Error' -C 3
      ctx-read tests --range 120-180 -n
      ctx-read ctx:default/report@3fa1c2d4e5f6 --jsonpath "$.tests[?@.outcome == 'failed'].name"
      pytest -q 2>&1 | ctx-stash | ctx-read --tail 30
      ctx-read tests --introspect

    The manual, man ctx-read, has the details.

    \f

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
    their normalized paths; JSON Lines are queried as an array of the lines; a JSON
    document or JSON Lines over 48 MiB are refused, and an input whose first bytes
    cannot be JSON fails there; --skip N skips matches; --dialect ng uses jsonpath-ng's
    syntax), --introspect (JSON: ref, type, exit_status,
    chars, lines, bytes, max_chars, projections [{usage, what}], examples [commands for this
    handle], and for JSON top_level_keys or top_level_length/element_keys). Without a
    projection the content is shown from the top. -n numbers the lines of line projections.

    Output is capped at --max-chars characters (default 12,000; larger values are clamped
    to 50,000 with a note). A cut read ends with one line saying how much was shown of how
    much and the exact command that shows the next part.

    Every read checks the payload against the checksums recorded at stash time (xxh3);
    --verify also re-hashes it with SHA-256. A reference whose @SHA_PREFIX is no longer
    the name's current version fails as a stale handle. Invalid UTF-8 is shown as U+FFFD.


    --redact replaces the secrets in what is shown by '[secret redacted: KIND]' (as
    ctx-pack and ctx-mcp's read do: the reader is a model) and counts them on stderr; a
    private key block anywhere in the payload reads as its marker and blank lines, so a
    slice of its middle lines shows none of them.
    """
    from ctxtools import projections as pj
    from ctxtools.read import ReadRequest, view
    from ctxtools.resolve import log_read, open_input
    from ctxtools.secrets import OutputRedactor
    from ctxtools.store import HandleStore, validate_session

    validate_session(o["session"])
    req = ReadRequest(**{k: o[k] for k in ReadRequest.names()})
    what = req.projection()
    max_chars, note = pj.clamp_max_chars(o["max_chars"])
    if note:
        warn(f"note: {note}")

    store = HandleStore(o["store"])
    check = None
    if what == "--jsonpath":  # stdin that cannot be JSON is refused before it is spooled
        from ctxtools.projections.jsonview import check_head as check

    try:
        payload, label = open_input(
            store, ref, session=o["session"], verify=o["verify"], stdin=stdin_bytes,
            check_head=check,
        )
    except (NotFoundError, UsageError) as exc:
        _a_file_is_no_handle(exc, ref)
        raise
    red = OutputRedactor(allow=not o["redact"])
    with payload, _key_blocks_out(payload, o["redact"] and what != "--count") as shown:
        if what == "--count":
            emit_json(pj.count(payload, ruler_from_options(o, store_root=store.root).ruler))
        elif what == "--introspect":
            emit_json(red.doc(pj.introspect(shown, label, max_chars=max_chars)))
        else:
            out = view(shown, req, what, max_chars=max_chars, nxt=pj.next_for(label, max_chars))
            if o["as_json"]:
                from ctxtools.fsutil import json_text

                body = json_text(red.text(out.body))
                doc = {"ref": json_text(label) if label else None, "projection": what, "text": body}
                emit_json({**doc, "next": out.trailer, "notes": out.notes})
            else:
                write(red.text(out.text()))
            warn(*out.notes, prefix="note: ")
    warn(*[n.replace("; --allow-secrets", "") for n in red.notes()])
    log_read(store, payload)
    return 0


def _a_file_is_no_handle(exc, ref: str | None) -> None:
    """A REF that is no handle but names a file (``ctx-read build.log``, ``./x``, ``/tmp/y``:
    "no handle", "invalid session '.'", "bad handle reference") is said to be one, with the
    two commands that read it."""
    import os

    from ctxtools.quoting import quote_name, shell_word

    if not ref or ref == "-" or ref.lstrip().startswith("{") or not os.path.isfile(ref):
        return
    q = shell_word(ref)
    exc.hint = (f"{quote_name(ref)} is a file, and ctx-read reads stored handles: "
                f"ctx-read < {q} reads it, ctx-stash --name NAME < {q} stores it")


def _key_blocks_out(payload, redact: bool):
    """PAYLOAD, or with ``--redact`` its copy without key blocks (``secrets.blocks``): a
    slice of a block's middle lines has nothing the output pass could know it by."""
    import contextlib

    if not redact:
        return contextlib.nullcontext(payload)
    from ctxtools.secrets.blocks import without_key_blocks

    shown, note = without_key_blocks(payload)
    if note:
        warn(f"note: {note}")
    return shown


main = make_main(cli, PROG)
