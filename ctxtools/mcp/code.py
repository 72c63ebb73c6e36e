"""The tools over a code base and a transcript: excerpt, repomap, pack, compact.

Each is ``TOOL(env, args) -> Reply`` over the library's public entry points
(``excerpt.excerpt_sources``, ``repomap.core.build_map``, ``pack.build_pack`` with a
``PackRequest``, ``compact.run.compact_transcript``), every path checked against the
roots first. Their texts are what the commands print; ``results.deliver`` stores the long
ones. What goes to a model provider keeps secrets out: ctx-pack's own rules for packs;
an excerpt skips files that are secrets by name and redacts secrets in what it shows,
as a pack does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxtools.errors import UsageError
from ctxtools.mcp.results import Reply

if TYPE_CHECKING:
    from ctxtools.mcp.env import Env


def _secret_paths(paths: list[str], given: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(PATHS kept, their GIVEN names, notes for the secret files left out)."""
    from ctxtools.secrets import secret_path
    from ctxtools.secrets.names import secret_note

    kept, names, notes = [], [], []
    for path, name in zip(paths, given, strict=True):
        # Judged by the name given and by what it really is (a link to .env is a dotenv).
        kind = None if path.startswith("ctx:") else secret_path(name, path)
        if kind is not None:
            by, what = secret_note(kind)
            notes.append(f"note: skipped {name}: a secret by its {by} ({what})")
            continue
        kept.append(path)
        names.append(name)
    return kept, names, notes


def excerpt(env: Env, a: dict) -> Reply:
    """ctx-excerpt over ``paths`` for ``query`` (and ``ident``), within ``tokens``."""
    from ctxtools.excerpt import ExcerptOptions, Input, excerpt_sources, find_unreadable
    from ctxtools.excerpt import unreadable_error as excerpt_unreadable
    from ctxtools.excerpt.output import default_unmatched, excerpt_query

    if not a["paths"]:
        raise UsageError("argument 'paths' must not be empty")
    paths, given, notes = _secret_paths(env.roots.check_all(a["paths"]), list(a["paths"]))
    options = ExcerptOptions(
        **{k: a[k] for k in ("window", "max_windows") if a[k] is not None},
        ignore_case=a["ignore_case"],
    )
    query = excerpt_query(a["query"], a["ident"] or (), signatures=a["signatures"])
    inputs = [Input(name, path) for name, path in zip(given, paths, strict=True)]
    unreadable = find_unreadable(inputs)
    if unreadable:
        raise excerpt_unreadable(unreadable)
    tokens = a["tokens"]
    run = excerpt_sources(
        inputs,
        query,
        options,
        signatures=a["signatures"],
        ruler=env.ruler if tokens else None,
        budget=tokens,
        sort=a["sort"],
        jobs=1,
        store=env.store,
        session=env.session,
        unmatched=default_unmatched(len(inputs), a["signatures"]),
        on_file=lambda res: _binary_note(res, notes),
        blank_keys=True,  # a reply goes to a model (and is redacted: mcp.results.redacted)
    )
    for k, line in enumerate(run.drop_notes()):
        notes.append(f"--tokens {tokens}: {line}" if k == 0 else line)
    return Reply(run.render(), notes)  # redacted with every reply (results.redacted)


def _binary_note(res, notes: list[str]) -> bool:
    from ctxtools.excerpt.inputs import OK

    if res.status != OK and res.note:
        notes.append(res.note)
    return res.status == OK


def repomap(env: Env, a: dict) -> Reply:
    """ctx-repomap PATH --tokens N [--query Q] [--focus P]..."""
    from ctxtools.repomap.core import build_map, ruler_spec

    tokens = a["tokens"] if a["tokens"] is not None else _map_tokens()
    if tokens < 50:
        raise UsageError(f"--tokens {tokens} is below the minimum of 50")
    root = env.roots.check(a["path"]) if a["path"] else env.roots.primary
    focus = env.roots.check_all(a["focus"] or [], base=root)
    result = build_map(
        root,
        tokens=tokens,
        focus=focus,
        query=a["query"],
        ruler=env.ruler,
        store=env.store.root,
        reuse=True,
        ruler_spec=ruler_spec(None, None, False, False),
    )
    return Reply(result.text, list(result.notes))


def _map_tokens() -> int:
    from ctxtools import defaults

    return defaults.MAP_TOKENS


def pack(env: Env, a: dict) -> Reply:
    """ctx-pack --task TASK PATHS... under the model's (or ``tokens``) budget, in the root
    that holds its first path (else the first root)."""
    from ctxtools.options import call_fields
    from ctxtools.options.pack import PACK
    from ctxtools.pack import PackRequest, build_pack
    from ctxtools.pack.request import pack_messages

    _no_remote(a["paths"] or [])
    paths = env.roots.check_all(a["paths"] or [])
    files = [p for p in paths if not p.startswith("ctx:")]
    root = env.roots.root_of(files[0]) if files else env.roots.primary
    env.roots.check_mentions(a["task"], root)
    model = a["model"] or env.model
    fields = call_fields(PACK, a)  # the arguments the table passes as they are
    fields.update(
        task=a["task"],
        paths=paths,
        root=root,
        model=model,
        fmt=a["format"] or "markdown",
        use_map=not a["no_map"],
        store=env.store.root,
        session=env.session,
    )
    req = PackRequest(**fields)
    encoding = env.model_encoding(model)
    notes = [f"note: {n}" for n in env.ruler_notes(encoding)]
    built = build_pack(req, env.ruler(encoding), notes)
    if req.fmt == "json":
        import orjson

        text = orjson.dumps(built.as_dict()).decode()
    else:
        text = built.text
    return Reply(text, pack_messages(built), type="json" if req.fmt == "json" else None)


def _no_remote(paths: list[str]) -> None:
    """A repository's URL is the command line's (``ctxtools.options.pack``): refused with
    what to do, before it could be taken for a path under the root."""
    from ctxtools.remote import parse_remote

    for p in paths:
        if isinstance(p, str) and not p.startswith("ctx:") and parse_remote(p) is not None:
            raise UsageError(
                f"{p}: a repository URL is not packed here (the server reads only under its roots)",
                hint="run ctx-pack URL on the command line, or name a directory under the roots",
            )


def compact(env: Env, a: dict) -> Reply:
    """ctx-compact of ``transcript`` to ``model``'s window (or ``limit``): {summary, notes,
    report, transcript}; what it elides is stored in the server's session."""
    import orjson

    from ctxtools.compact.elide import StoreStash
    from ctxtools.compact.run import compact_options, compact_transcript, model_note
    from ctxtools.compact.transcript import load

    given = a["transcript"]
    data = given.encode("utf-8") if isinstance(given, str) else orjson.dumps(given)
    fields = {"session": env.session, "force": a["force"]}
    for key in ("at", "keep_recent"):
        if a[key] is not None:
            fields[key] = a[key]
    opts, encoding = compact_options(a["model"] or env.model, a["limit"], None, **fields)
    fmt = a["format"] or "auto"
    tr = load(data, None if fmt == "auto" else fmt)
    said = model_note(a["model"] or env.model, a["limit"])
    notes: list[str] = [said] if said else []
    stash = StoreStash(env.store.root, opts.session)
    ruler = env.ruler(encoding)
    run = compact_transcript(
        tr, ruler, opts, stash, repair=a["repair"], original=data, on_note=notes.append
    )
    notes += run.compaction_notes
    out = run.output
    try:
        value = orjson.loads(out)
    except orjson.JSONDecodeError:  # JSON Lines
        value = out.decode("utf-8", "replace")
    doc = {"summary": run.summary(), "notes": notes, "report": run.report(), "transcript": value}
    if run.error is not None:
        doc["error"] = str(run.error)
    return Reply(orjson.dumps(doc).decode(), [], type="json")


HANDLERS = {"excerpt": excerpt, "repomap": repomap, "pack": pack, "compact": compact}
