"""The tools over the store and the ruler: count, stash, read, run.

Each is ``TOOL(env, args) -> Reply``, ARGS already checked (``schema.check_args``), and
each is the library call its command makes: ctx-count's report, ctx-stash's store,
ctx-read's request and view (capped as ctx-read caps, the next part worded as a ``read``
call), ctx-stash -- CMD's capture. Errors are the library's ``CtxError``s, which the
server turns into the command's one-line message.
"""

from __future__ import annotations

import contextlib
import io
from typing import TYPE_CHECKING

from ctxtools.errors import UsageError
from ctxtools.mcp.results import Reply

if TYPE_CHECKING:
    from ctxtools.mcp.env import Env


def _json(obj: object) -> str:
    import orjson

    return orjson.dumps(obj).decode()


def count(env: Env, a: dict) -> Reply:
    """ctx-count --json over ``text`` or ``paths``, with ``model`` (or ``limit``) for the
    window's share."""
    from ctxtools.count import report
    from ctxtools.fsutil import unreadable_error

    if (a["text"] is None) == (not a["paths"]):
        raise UsageError("give text or paths (one of them)")
    notes: list[str] = []
    model = a["model"] or env.model
    profile = None
    if model:
        from ctxtools import profiles as prof

        table = prof.load_profiles(None)
        profile = prof.resolve(model, table)
        note = prof.unknown_model_note(model, profile, table) if a["limit"] is None else None
        if note:
            notes.append(note)
    encoding = profile.encoding if profile else None
    ruler = env.ruler(encoding)
    notes += [f"note: {n}" for n in env.ruler_notes(encoding)]
    if a["text"] is not None:
        sources = [("text", None)]
    else:
        paths = env.roots.check_all(a["paths"])
        bad = report.unreadable(paths)
        if bad:
            raise unreadable_error(bad)
        sources = list(zip(a["paths"], paths, strict=True))
    rows = [(label, _counts(a, label, path, ruler)) for label, path in sources]
    counted = report.Report(rows, profile=profile, limit=a["limit"], ruler=ruler)
    notes += [f"note: not exact: {n}" for n in counted.not_exact]
    notes += counted.warnings(ruler.name)
    doc = counted.document(ruler.describe(), [], a["messages"])
    return Reply(_json(doc), notes, type="json")


def _counts(a: dict, label: str, path: str | None, ruler) -> dict:
    """The counts of one input: the text (PATH None) or the file at PATH, streamed."""
    from ctxtools.count import report
    from ctxtools.tokens import count_stream

    if path is None:
        stream = io.BytesIO(a["text"].encode("utf-8", "surrogateescape"))
    else:
        stream = open(path, "rb")  # noqa: SIM115 - closed below
    with stream:
        if a["messages"]:  # within ctx-count's bounds: a log fails at its first bytes
            from ctxtools.compact.transcript import head_error

            def error(problem):
                return head_error(problem, where=f"{label}: ")

            return report.transcript_counts_of(stream, ruler, label, label, error)
        return count_stream(stream, ruler, jobs=1).as_dict()


def stash(env: Env, a: dict) -> Reply:
    """Store ``text`` (always: a stash asked for is a stash made) and give its card."""
    from ctxtools.store import validate_name

    if a["name"] is not None:
        validate_name(a["name"])
    data = a["text"].encode("utf-8", "surrogateescape")
    card = env.store.put_bytes(data, name=a["name"], session=env.session, type=a["type"])
    return Reply(_json(card), page=False)


def read(env: Env, a: dict) -> Reply:
    """ctx-read REF with one projection, capped at ``max_chars``; a cut read ends with the
    ``read`` call that shows the next part."""
    from ctxtools import projections as pj
    from ctxtools.mcp.calls import CallNext
    from ctxtools.read import ReadRequest, view
    from ctxtools.resolve import card_ref, log_read
    from ctxtools.secrets.blocks import without_key_blocks

    req = ReadRequest(**{k: a[k] for k in ReadRequest.names() if k in a})
    what = req.projection()
    max_chars, note = pj.clamp_max_chars(a["max_chars"])
    notes = [f"note: {note}"] if note else []
    ref = card_ref(a["ref"])
    if ref == "-":
        raise UsageError("give a handle reference (there is no stdin here)")
    payload = env.store.open(ref, env.session, verify=a["verify"], touch=False)
    label = payload.label
    with payload:
        # Every reply goes to a model: read a copy without key blocks, whose middle lines a
        # slice could show with nothing the reply's redaction would know them by.
        reading, blanked = (
            without_key_blocks(payload, env.key_blocks)
            if what != "--count"
            else (contextlib.nullcontext(payload), None)
        )
        if blanked:
            notes.append(f"note: {blanked}")
        with reading as shown:
            nxt = CallNext(label, max_chars)
            if what == "--count":
                text = _json(pj.count(payload, env.ruler()))
            elif what == "--introspect":
                text = _json(pj.introspect(shown, label, max_chars=max_chars, nxt=nxt))
            else:
                out = view(shown, req, what, max_chars=max_chars, nxt=nxt)
                text = out.text()
                notes += [f"note: {n}" for n in out.notes]
    log_read(env.store, payload)
    return Reply(text, notes, page=False)


def run(env: Env, a: dict) -> Reply:
    """ctx-stash --name NAME -- COMMAND in the first root: the card (with exit_status) and
    the output's first lines, the next part as a ``read`` call."""
    from ctxtools.capture import run_and_stash
    from ctxtools.mcp.results import first_slice
    from ctxtools.store import validate_name

    if not env.allow_run:
        raise UsageError("run is off", hint="start the server with --allow-run")
    if a["name"] is not None:
        validate_name(a["name"])
    started = []

    def keep(proc) -> None:
        started.append(proc)
        env.children.add(proc)

    try:
        card, code = run_and_stash(
            env.store,
            list(a["command"]),
            name=a["name"],
            session=env.session,
            on_start=keep,
            cwd=env.roots.primary,
        )
    finally:
        for proc in started:
            env.children.discard(proc)
    text = first_slice(env.store, card, env.session, env.inline_max)
    return Reply(text, [f"exit status {code}"] if code else [], page=False)


HANDLERS = {"count": count, "stash": stash, "read": read, "run": run}
