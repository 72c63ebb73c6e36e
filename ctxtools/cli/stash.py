"""ctx-stash: park big output in the store and print a small handle card."""

from __future__ import annotations

import click

from ctxtools.cli.decorators import CONTEXT_SETTINGS
from ctxtools.cli.entry import make_main
from ctxtools.cli.inputs import open_source, stdin_bytes
from ctxtools.cli.outputs import emit_json, warn, write, write_bytes
from ctxtools.cli.tables import options
from ctxtools.options.stash import STASH

PROG = "ctx-stash"


class _StashCommand(click.Command):
    """Splits ``-- CMD ARGS`` off before click parses the options."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            i = args.index("--")
            ctx.meta["ctx_stash.command"] = args[i + 1 :]
            args = args[:i]
        return super().parse_args(ctx, args)


@click.command(cls=_StashCommand, context_settings=CONTEXT_SETTINGS)
@options(STASH)
@click.pass_context
def cli(ctx: click.Context, args: tuple[str, ...], **opts) -> int:
    """Store stdin, FILE, or a command's output; print a handle card.

    Up to --threshold characters pass through unchanged (nothing stored); a bigger input is
    stored and its card printed, one JSON line of a few dozen bytes whatever the size. With
    -- CMD ARGS... ctx-stash runs the command, stores its output and exits with its
    status. ctx-read pages a handle back in; --list and --rm look after a session's
    handles, --gc after the whole store (every session: its budget is the store's).

    Exit status: 0 stored or passed through; with -- CMD the command's status (127 when it
    does not exist, 126 when it cannot be run, 128+N when ctx-stash got signal N); 1 store
    errors (read-only, full, not a directory, a symbolic link inside the store: the store
    follows none below its root), unknown handles, input that is not what --type says; 2
    usage errors (bad names, conflicting options, an empty --store); 130 Ctrl-C.

    \b
    Examples:
      pytest -q 2>&1 | ctx-stash --name tests
      ctx-stash --name tests --tee -- pytest -q
      ctx-read tests --grep 'FAILED|Error' -C 3
      ctx-stash --list
      ctx-stash --gc --max-bytes 500M --strategy importance --dry-run

    The manual, man ctx-stash, has the details.

    \f

    Reads stdin (or FILE) in bounded memory into the store and prints the handle card as
    one JSON line. Inputs of at most --threshold characters are passed through unchanged
    and nothing is stored (unless --always), so a filter chain stays cheap for small
    outputs; with --name, a small input still passes through but is stored too, so that
    NAME always means the latest run, whatever its size.
    Without --name the name is the first 12 hex digits of the content's SHA-256; --type is
    detected (one JSON document: json; one JSON value a line: jsonl; else text).
    Re-stashing a name makes a new version: cards carrying the old @sha then read as stale.

    With -- CMD ARGS... the command is run (no shell), its stdout and stderr are captured
    interleaved as they arrive (--tee also copies them to stderr), always stored, and the
    card records exit_status; ctx-stash then exits with the command's status. The command
    runs in its own process group: SIGTERM, SIGHUP or SIGINT (Ctrl-C) to ctx-stash is
    passed on to it, what is left after 2 seconds is killed (at once on a second Ctrl-C),
    what it printed until then is kept as a handle whose card says "incomplete" (the
    signal's name), printed as usual, and ctx-stash exits 128 + the signal's number. On a
    terminal (and without --tee) stderr shows the bytes captured so far.

    Card: {"kind": "handle", "session_id", "name", "type": "text"|"json"|"jsonl"|"binary",
    "length": chars, "lines", "bytes", "repr_preview", "sha256",
    "ref": "ctx:SESSION/NAME@SHA12", "exit_status" (with -- CMD only), "incomplete" (only
    when a signal cut the capture short: its name, e.g. "SIGINT")}. Type binary: a NUL byte
    in the first 8 KiB, or mostly bytes that are not UTF-8.

    Housekeeping: --list (most recently and frequently read first, half-life 7 days;
    --json: an array of {ref, session_id, name, type, length, lines, bytes, access_count,
    last_accessed_at, frecency[, exit_status][, incomplete]}), --rm NAME..., --gc [--max-bytes 500M]
    [--max-entries N] [--strategy lru|importance] [--dry-run] (without a budget it keeps
    100 handles; also removes blobs no card refers to and temp files of killed writers --
    only its own files, blobs/ab/<sha256>[.idx] and .tmp-<pid>-<12 hex>, nothing else;
    --dry-run takes no write lock, so it works on a read-only store; --json: {dry_run,
    evicted, blobs_removed, bytes_freed, temp_removed, kept, kept_bytes, damaged,
    unreferenced_kept}), --path (the store root). --list and --rm work on --session;
    --gc works on the whole store, every session: its budget is the store's, so a
    --session typed with it is ignored (with a note). A damaged card is skipped with a
    warning by --list and reported, not removed, by --gc, which then removes no
    unreferenced blob either (it may be the card's; counted as unreferenced_kept); --rm
    removes it.

    Names and sessions: 1-128 of A-Z a-z 0-9 . _ - starting with a letter or digit.
    """
    from ctxtools import stash
    from ctxtools.store import HandleStore

    command = ctx.meta.get("ctx_stash.command")
    store = HandleStore(opts["store"])
    mode = stash.choose_mode(
        [m for m in stash.MODE_FLAGS if opts["do_" + m]],
        command,
        args,
        session=opts["session"],
        name=opts["name"],
        gc_words=any(opts[k] not in (None, False) for k in ("max_bytes", "max_entries", "dry_run")),
        as_json=opts["as_json"],
        tee=opts["tee"],
    )
    if mode == "path":
        write(f"{store.root}\n")
    elif mode == "list":
        _list(store, opts)
    elif mode == "rm":
        for ident in store.remove(list(args), session=opts["session"]):
            write(f"removed ctx:{ident}\n")
    elif mode == "gc":
        typed = ctx.get_parameter_source("session") == click.core.ParameterSource.COMMANDLINE
        _gc(store, opts, typed_session=typed)
    elif mode == "command":
        return _run(store, command, opts)
    else:
        _stash(store, args[0] if args and args[0] != "-" else None, opts)
    return 0


def _stash(store, path: str | None, opts: dict) -> None:
    from ctxtools.resolve import FileArg
    from ctxtools.stash import stash_or_pass

    stream = open_source(FileArg(path, path)) if path is not None else stdin_bytes()
    try:
        done = stash_or_pass(
            store,
            stream,
            threshold=opts["threshold"],
            always=opts["always"],
            name=opts["name"],
            session=opts["session"],
            type=opts["type_"],
        )
    finally:
        if path is not None:
            stream.close()
    if done.card is None:
        write_bytes(done.data)
        if done.failed is not None:  # passed through, but NAME is not the latest run
            raise done.failed
    else:
        emit_json(done.card)


def _run(store, argv: list[str], opts: dict) -> int:
    from ctxtools.capture import Interrupted, run_and_stash
    from ctxtools.cli.progress import Progress

    tee = click.get_binary_stream("stderr") if opts["tee"] else None
    # --tee shows the output itself; otherwise a terminal sees the bytes captured so far
    bar = None if tee else Progress.start("capturing", delay=0.5, tick=True)
    try:
        card, code = run_and_stash(
            store,
            argv,
            name=opts["name"],
            session=opts["session"],
            type=opts["type_"],
            tee=tee,
            progress=bar.advance if bar is not None else None,
        )
    except Interrupted as exc:
        if bar is not None:
            bar.close()
        if exc.card is not None:
            emit_json(exc.card)  # what was captured: a handle, marked incomplete
        raise
    finally:
        if bar is not None:
            bar.close()
    emit_json(card)
    return code


def _list(store, opts: dict) -> None:
    import time

    from ctxtools import stash

    damaged: list = []
    entries = store.entries(None if opts["all_sessions"] else opts["session"], damaged=damaged)
    for _ident, message, _sha in damaged:
        warn(stash.damaged_note(message))
    if opts["as_json"]:
        emit_json(stash.list_records(entries))
    else:
        write(stash.list_table(entries, all_sessions=opts["all_sessions"], now=time.time()))


def _gc(store, opts: dict, *, typed_session: bool) -> None:
    """--gc: the store's budget, store-wide; TYPED_SESSION (--session on the command line, not
    CTX_SESSION) gets a note saying so."""
    from ctxtools import stash

    max_bytes, max_entries = stash.gc_budget(opts["max_bytes"], opts["max_entries"])
    report = store.gc(
        max_bytes=max_bytes,
        max_entries=max_entries,
        strategy=opts["strategy"],
        dry_run=opts["dry_run"],
    )
    if typed_session:
        warn(stash.gc_session_note(opts["session"]))
    if opts["as_json"]:
        emit_json({"dry_run": opts["dry_run"], **report})
        return
    for bad in report["damaged"]:
        warn(stash.gc_damaged_note(bad))
    held = stash.gc_held_note(report)
    if held:
        warn(held)
    write(stash.gc_summary(report, dry_run=opts["dry_run"]))


main = make_main(cli, PROG)
