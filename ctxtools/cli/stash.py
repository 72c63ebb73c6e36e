"""ctx-stash: park big output in the store and print a small handle card."""

from __future__ import annotations

import time

import click

from ctxtools import defaults
from ctxtools.cli.common import (
    CONTEXT_SETTINGS,
    Source,
    emit_json,
    int_option,
    json_option,
    make_main,
    max_bytes_option,
    max_entries_option,
    open_source,
    standard_options,
    stdin_bytes,
    store_options,
    strategy_option,
    warn,
    write,
    write_bytes,
)
from ctxtools.errors import UsageError

PROG = "ctx-stash"


class _StashCommand(click.Command):
    """Splits ``-- CMD ARGS`` off before click parses the options."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            i = args.index("--")
            ctx.meta["ctx_stash.command"] = args[i + 1 :]
            args = args[:i]
        return super().parse_args(ctx, args)


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "K", "M", "G", "T"):
        if size < 1024 or unit == "T":
            return f"{int(size)}{unit}" if unit == "B" else f"{size:.1f}{unit}"
        size /= 1024
    return f"{n}B"  # pragma: no cover


def _age(seconds: float) -> str:
    s = max(0, int(seconds))
    for unit, span in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= span:
            return f"{s // span}{unit} ago"
    return f"{s}s ago"


def _read_head(stream, limit: int) -> tuple[bytes, bool]:
    """Up to LIMIT bytes from STREAM, and whether the stream ended within them."""
    read = getattr(stream, "read1", stream.read)
    parts, size = [], 0
    while size < limit:
        chunk = read(limit - size)
        if not chunk:
            return b"".join(parts), True
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts), False


def _run(store, argv: list[str], opts: dict) -> int:
    from ctxtools.capture import run_and_stash

    tee = click.get_binary_stream("stderr") if opts["tee"] else None
    card, code = run_and_stash(
        store, argv, name=opts["name"], session=opts["session"], type=opts["type"], tee=tee
    )
    emit_json(card)
    return code


def _list(store, opts: dict) -> None:
    damaged: list = []
    entries = store.entries(None if opts["all_sessions"] else opts["session"], damaged=damaged)
    for _ident, message, _sha in damaged:
        warn(f"warning: skipped a damaged card: {message}")
    if opts["as_json"]:
        out = []
        for e in entries:
            card = e["card"]
            rec = {
                "ref": card["ref"],
                "session_id": card["session_id"],
                "name": card["name"],
                "type": card["type"],
                "length": card["length"],
                "lines": card["lines"],
                "bytes": card["bytes"],
                "access_count": e["access_count"],
                "last_accessed_at": e["last_accessed_at"],
                "frecency": round(e["frecency"], 6),
            }
            if "exit_status" in card:
                rec["exit_status"] = card["exit_status"]
            out.append(rec)
        emit_json(out)
        return
    now = time.time()
    rows = []
    for e in entries:
        c = e["card"]
        label = c["name"] if not opts["all_sessions"] else f"{c['session_id']}/{c['name']}"
        status = f" exit={c['exit_status']}" if "exit_status" in c else ""
        rows.append(
            (
                label,
                c["type"],
                _human(c["bytes"]),
                f"{c['lines']} lines",
                f"{e['access_count']} reads",
                _age(now - e["last_accessed_at"]),
                c["ref"] + status,
            )
        )
    if not rows:
        return
    widths = [max(len(r[i]) for r in rows) for i in range(6)]
    lines = []
    for r in rows:
        cells = [r[i].ljust(widths[i]) if i in (0, 1) else r[i].rjust(widths[i]) for i in range(6)]
        lines.append("  ".join(cells) + "  " + r[6])
    write("\n".join(lines) + "\n")


def _gc(store, opts: dict) -> None:
    from ctxtools.fsutil import parse_size
    from ctxtools.store import GC_MAX_ENTRIES

    max_bytes = parse_size(opts["max_bytes"]) if opts["max_bytes"] is not None else None
    max_entries = opts["max_entries"]
    if max_bytes is None and max_entries is None:
        max_entries = GC_MAX_ENTRIES  # no budget given: the default one
    report = store.gc(
        max_bytes=max_bytes,
        max_entries=max_entries,
        strategy=opts["strategy"],
        dry_run=opts["dry_run"],
    )
    if opts["as_json"]:
        emit_json({"dry_run": opts["dry_run"], **report})
        return
    for bad in report["damaged"]:
        warn(f"warning: damaged card kept (gc does not remove it): {bad['error']}")
    verb = "would evict" if opts["dry_run"] else "evicted"
    lines = [f"{verb} {ident}" for ident in report["evicted"]]
    lines.append(
        f"{'would remove' if opts['dry_run'] else 'removed'} "
        f"{len(report['evicted'])} handles, {report['blobs_removed']} unreferenced blobs, "
        f"{report['temp_removed']} leftover temp files ({_human(report['bytes_freed'])}); "
        f"kept {report['kept']} handles ({_human(report['kept_bytes'])})"
    )
    write("\n".join(lines) + "\n")


@click.command(cls=_StashCommand, context_settings=CONTEXT_SETTINGS)
@click.argument("args", nargs=-1, metavar="[FILE | NAME...]")
@click.option("--name", default=None, help="Handle name [default: first 12 hex of the SHA-256].")
@click.option(
    "--type",
    "type_",
    type=click.Choice(["text", "json", "jsonl"]),
    default=None,
    help="Payload type [default: detected].",
)
@int_option(
    "--threshold",
    defaults.THRESHOLD,
    "Inputs of at most this many characters pass through unchanged.",
)
@click.option("--always", is_flag=True, help="Store even inputs under the threshold.")
@click.option("--tee", is_flag=True, help="With -- CMD: also copy the output to stderr.")
@click.option("--list", "do_list", is_flag=True, help="List the session's handles (frecency).")
@click.option("--all-sessions", is_flag=True, help="With --list: every session.")
@click.option("--rm", "do_rm", is_flag=True, help="Remove the handles NAME... (blobs at --gc).")
@click.option("--gc", "do_gc", is_flag=True, help="Evict over budget; drop unreferenced blobs.")
@max_bytes_option("With --gc: keep at most this much (500M, 1G).")
@max_entries_option("With --gc.")
@strategy_option("With --gc: what goes first.")
@click.option("--dry-run", is_flag=True, help="With --gc: say what would go, change nothing.")
@click.option("--path", "do_path", is_flag=True, help="Print the store root and exit.")
@store_options
@json_option
@standard_options
@click.pass_context
def cli(ctx: click.Context, args: tuple[str, ...], **opts) -> int:
    """Store stdin, FILE, or a command's output; print a handle card.

    Reads stdin (or FILE) in bounded memory into the store and prints the handle card as
    one JSON line. Inputs of at most --threshold characters are passed through unchanged
    and nothing is stored (unless --always), so a filter chain stays cheap for small
    outputs. Without --name the name is the first 12 hex digits of the content's SHA-256;
    --type is detected (one JSON document: json; one JSON value a line: jsonl; else text).
    Re-stashing a name makes a new version: cards carrying the old @sha then read as stale.

    With -- CMD ARGS... the command is run (no shell), its stdout and stderr are captured
    interleaved as they arrive (--tee also copies them to stderr), always stored, and the
    card records exit_status; ctx-stash then exits with the command's status. The command
    runs in its own process group: SIGTERM, SIGHUP or SIGINT (Ctrl-C) to ctx-stash is
    passed on to it, what is left after 2 seconds is killed, nothing is stored, and
    ctx-stash exits 128 + the signal's number.

    Card: {"kind": "handle", "session_id", "name", "type": "text"|"json"|"jsonl",
    "length": chars, "lines", "bytes", "repr_preview", "sha256",
    "ref": "ctx:SESSION/NAME@SHA12", "exit_status" (with -- CMD only)}.

    Housekeeping: --list (most recently and frequently read first, half-life 7 days;
    --json: an array of {ref, session_id, name, type, length, lines, bytes, access_count,
    last_accessed_at, frecency[, exit_status]}), --rm NAME..., --gc [--max-bytes 500M]
    [--max-entries N] [--strategy lru|importance] [--dry-run] (without a budget it keeps
    100 handles; also removes blobs no card refers to and temp files of killed writers;
    --json: {dry_run, evicted, blobs_removed, bytes_freed, temp_removed, kept, kept_bytes,
    damaged}), --path (the store root). A damaged card is skipped with a warning by --list
    and reported, not removed, by --gc; --rm removes it.

    Names and sessions: 1-128 of A-Z a-z 0-9 . _ - starting with a letter or digit.

    Exit status: 0 stored or passed through; with -- CMD the command's status (127 when it
    does not exist, 126 when it cannot be run, 128+N when ctx-stash got signal N); 1 store
    errors (read-only, full, not a directory), unknown handles, input that is not what
    --type says; 2 usage errors (bad names, conflicting options, an empty --store).

    \b
    Examples:
      pytest -q 2>&1 | ctx-stash --name tests
      ctx-stash --name tests --tee -- pytest -q
      ctx-read tests --grep 'FAILED|Error' -C 3
      ctx-stash --list
      ctx-stash --gc --max-bytes 500M --strategy importance --dry-run
    """
    from ctxtools.store import HandleStore, validate_name, validate_session

    command = ctx.meta.get("ctx_stash.command")
    store = HandleStore(opts["store"])
    modes = [m for m in ("do_list", "do_rm", "do_gc", "do_path") if opts[m]]
    if command is not None:
        modes.append("command")
    if len(modes) > 1:
        names = {"do_list": "--list", "do_rm": "--rm", "do_gc": "--gc", "do_path": "--path"}
        raise UsageError(
            " and ".join(names.get(m, "-- CMD") for m in modes) + " cannot be combined"
        )
    mode = modes[0] if modes else "stash"
    validate_session(opts["session"])
    if opts["name"] is not None:
        validate_name(opts["name"])
    gc_only = ("max_bytes", "max_entries", "dry_run")
    if mode != "do_gc" and any(opts[k] not in (None, False) for k in gc_only):
        raise UsageError("--max-bytes, --max-entries and --dry-run go with --gc")
    if opts["as_json"] and mode not in ("do_list", "do_gc"):
        raise UsageError("--json goes with --list or --gc (the card is always JSON)")
    if opts["tee"] and mode != "command":
        raise UsageError("--tee goes with -- CMD")

    if mode == "do_path":
        if args:
            raise UsageError("--path takes no arguments")
        write(f"{store.root}\n")
        return 0
    if mode == "do_list":
        if args:
            raise UsageError("--list takes no arguments")
        _list(store, opts)
        return 0
    if mode == "do_rm":
        if not args:
            raise UsageError("--rm needs the NAMEs of the handles to remove")
        for ident in store.remove(list(args), session=opts["session"]):
            write(f"removed ctx:{ident}\n")
        return 0
    if mode == "do_gc":
        if args:
            raise UsageError("--gc takes no arguments")
        _gc(store, opts)
        return 0
    if mode == "command":
        if not command:
            raise UsageError("nothing to run after --")
        if args:
            raise UsageError("give either FILE or -- CMD, not both")
        return _run(store, command, {**opts, "type": opts["type_"]})

    if len(args) > 1:
        raise UsageError("give at most one FILE (or -- CMD ARGS)")
    stream = open_source(Source(args[0], args[0])) if args and args[0] != "-" else stdin_bytes()
    limit = 4 * opts["threshold"] + 4  # enough bytes to know "more than threshold chars"
    head, ended = _read_head(stream, limit) if not opts["always"] else (b"", False)
    if ended and len(head.decode("utf-8", "replace")) <= opts["threshold"]:
        if args and args[0] != "-":
            stream.close()
        write_bytes(head)
        return 0
    try:
        card = store.put_stream(
            stream, name=opts["name"], session=opts["session"], type=opts["type_"], head=head
        )
    finally:
        if args and args[0] != "-":
            stream.close()
    emit_json(card)
    return 0


main = make_main(cli, PROG)
