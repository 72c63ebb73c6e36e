"""What ctx-stash does, as library calls (running a command is ``ctxtools.capture``).

* ``choose_mode`` checks which of stash, ``-- CMD``, --list, --rm, --gc and --path a call
  asks for, and that its other words go with it.
* ``stash_or_pass`` is the threshold pass-through: an input of at most THRESHOLD
  characters comes back as it is, anything longer is stored and its card returned.
* ``list_records`` and ``list_table`` are --list (JSON, and the aligned table);
  ``gc_budget`` and ``gc_summary`` are --gc's budget and its words (``gc_held_note``,
  ``gc_session_note`` its notes); ``human_size`` and
  ``age`` are their units.

Nothing here prints: the command writes what these return.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, BinaryIO, NamedTuple

from ctxtools.errors import CtxError, UsageError

if TYPE_CHECKING:
    from ctxtools.store import HandleStore

DEFAULT_THRESHOLD = 1000  # characters: inputs up to this size pass through
MODE_FLAGS = {"list": "--list", "rm": "--rm", "gc": "--gc", "path": "--path"}


# --- the call's words ------------------------------------------------------------------------


def choose_mode(
    flags: Sequence[str],
    command: list[str] | None,
    args: Sequence[str],
    *,
    session: str,
    name: str | None = None,
    gc_words: bool = False,
    as_json: bool = False,
    tee: bool = False,
) -> str:
    """The mode of a call: "stash", "command", or one of MODE_FLAGS, from the FLAGS given
    (MODE_FLAGS' keys), COMMAND (after ``--``; None when there is no ``--``) and ARGS;
    SESSION and NAME are checked too. GC_WORDS: --max-bytes, --max-entries or --dry-run
    was given. UsageError names what does not go together."""
    from ctxtools.store import validate_name, validate_session

    modes = [m for m in MODE_FLAGS if m in flags]
    if command is not None:
        modes.append("command")
    if len(modes) > 1:
        names = " and ".join(MODE_FLAGS.get(m, "-- CMD") for m in modes)
        raise UsageError(names + " cannot be combined")
    mode = modes[0] if modes else "stash"
    validate_session(session)
    if name is not None:
        validate_name(name)
    if mode != "gc" and gc_words:
        raise UsageError("--max-bytes, --max-entries and --dry-run go with --gc")
    if as_json and mode not in ("list", "gc"):
        raise UsageError("--json goes with --list or --gc (the card is always JSON)")
    if tee and mode != "command":
        raise UsageError("--tee goes with -- CMD")
    _check_args(mode, command, args)
    return mode


def _check_args(mode: str, command: list[str] | None, args: Sequence[str]) -> None:
    if mode in ("path", "list", "gc") and args:
        raise UsageError(f"{MODE_FLAGS[mode]} takes no arguments")
    if mode == "rm" and not args:
        raise UsageError("--rm needs the NAMEs of the handles to remove")
    if mode == "command":
        if not command:
            raise UsageError("nothing to run after --")
        if args:
            raise UsageError("give either FILE or -- CMD, not both")
    if mode == "stash" and len(args) > 1:
        raise UsageError("give at most one FILE (or -- CMD ARGS)")


# --- the threshold pass-through --------------------------------------------------------------


class Stashed(NamedTuple):
    """What became of an input: its handle ``card`` to print, or, when it passed through
    (``card`` is None), the input itself as ``data`` (also stored, as ``kept``, when named)."""

    card: dict | None
    data: bytes = b""
    kept: dict | None = None  # a named input that passed through: the card it was stored as
    failed: CtxError | None = None  # ...or why it could not be (it still passes through)


def stash_or_pass(
    store: HandleStore,
    stream: BinaryIO,
    *,
    threshold: int = DEFAULT_THRESHOLD,
    always: bool = False,
    name: str | None = None,
    session: str,
    type: str | None = None,
) -> Stashed:
    """Read STREAM in bounded memory: at most THRESHOLD characters (invalid UTF-8 counted
    as U+FFFD) pass through unless ALWAYS; more are stored (``HandleStore.put_stream``).

    With NAME, the input is stored whatever its size, so that NAME always means the latest
    run (a small output that only passed through left NAME at an earlier, bigger one: the
    failing test run a script then read after the tests passed); a small one still passes
    through, as the output of the filter chain."""
    from ctxtools.resolve import read_head

    head, ended = b"", False
    if not always:
        # 4 bytes a character at the most: enough bytes to know "more than THRESHOLD".
        head, ended = read_head(stream, 4 * threshold + 4)
    if ended and len(head.decode("utf-8", "replace")) <= threshold:
        if name is None:
            return Stashed(None, head)
        try:
            kept = store.put_stream(stream, name=name, session=session, type=type, head=head)
        except CtxError as exc:  # the filter's output still goes on; the caller says why
            return Stashed(None, head, failed=exc)
        return Stashed(None, head, kept)
    card = store.put_stream(stream, name=name, session=session, type=type, head=head)
    return Stashed(card)


# --- --list and --gc -------------------------------------------------------------------------


def human_size(n: int) -> str:
    """N bytes in the largest unit under 1024 of it: 512B, 1.5K, 3.0M, ... (1024-based)."""
    size = float(n)
    for unit in ("B", "K", "M", "G", "T"):
        if size < 1024 or unit == "T":
            return f"{int(size)}{unit}" if unit == "B" else f"{size:.1f}{unit}"
        size /= 1024
    return f"{n}B"  # pragma: no cover


def age(seconds: float) -> str:
    """How long ago, in the largest whole unit: 3d ago, 2h ago, 5m ago, 40s ago."""
    s = max(0, int(seconds))
    for unit, span in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= span:
            return f"{s // span}{unit} ago"
    return f"{s}s ago"


def damaged_note(message: str) -> str:
    """The warning --list gives for a card it skips, or a session (its MESSAGE starts
    ``session NAME:``: a directory the store does not read, ``StoreRoot.session_dir``)."""
    if message.startswith("session "):
        return f"warning: skipped {message}"
    return f"warning: skipped a damaged card: {message}"


def list_records(entries: list[dict]) -> list[dict]:
    """--list --json: a record a handle of ``HandleStore.entries``, in their order."""
    out = []
    for e in entries:
        card = e["card"]
        rec = {k: card[k] for k in ("ref", "session_id", "name", "type", "length", "lines")}
        rec["bytes"] = card["bytes"]
        rec["access_count"] = e["access_count"]
        rec["last_accessed_at"] = e["last_accessed_at"]
        rec["frecency"] = round(e["frecency"], 6)
        if "exit_status" in card:
            rec["exit_status"] = card["exit_status"]
        if "incomplete" in card:
            rec["incomplete"] = card["incomplete"]
        out.append(rec)
    return out


def list_table(entries: list[dict], *, all_sessions: bool, now: float) -> str:
    """--list: a line a handle -- name (SESSION/NAME with ALL_SESSIONS), type, size, lines,
    reads, last read (as of NOW), ref [exit=N] [incomplete=SIGNAL] -- in aligned columns;
    "" for none."""
    rows = []
    for e in entries:
        c = e["card"]
        label = c["name"] if not all_sessions else f"{c['session_id']}/{c['name']}"
        status = f" exit={c['exit_status']}" if "exit_status" in c else ""
        if "incomplete" in c:
            status += f" incomplete={c['incomplete']}"
        rows.append(
            (
                label,
                c["type"],
                human_size(c["bytes"]),
                f"{c['lines']} lines",
                f"{e['access_count']} reads",
                age(now - e["last_accessed_at"]),
                c["ref"] + status,
            )
        )
    if not rows:
        return ""
    widths = [max(len(r[i]) for r in rows) for i in range(6)]
    lines = []
    for r in rows:
        cells = [r[i].ljust(widths[i]) if i in (0, 1) else r[i].rjust(widths[i]) for i in range(6)]
        lines.append("  ".join(cells) + "  " + r[6])
    return "\n".join(lines) + "\n"


def gc_budget(max_bytes: str | None, max_entries: int | None) -> tuple[int | None, int | None]:
    """(bytes, entries) to keep, from --max-bytes (500M, 1G) and --max-entries; neither
    given: the default budget (``GC_MAX_ENTRIES`` handles)."""
    from ctxtools.fsutil import parse_size
    from ctxtools.store import GC_MAX_ENTRIES

    size = parse_size(max_bytes) if max_bytes is not None else None
    if size is None and max_entries is None:
        max_entries = GC_MAX_ENTRIES
    return size, max_entries


def gc_damaged_note(bad: dict) -> str:
    """The warning --gc gives for a damaged card it keeps, or a session it does not read
    (an id without a ``/``: a session directory that is a link)."""
    if "/" not in bad["id"]:
        return f"warning: skipped {bad['error']} (gc removes nothing there)"
    return f"warning: damaged card kept (gc does not remove it): {bad['error']}"


def gc_held_note(report: dict) -> str | None:
    """The one note --gc gives when a damaged card made it keep unreferenced blobs (REPORT's
    ``unreferenced_kept``); None when it kept none."""
    held = report.get("unreferenced_kept", 0)
    if not held:
        return None
    if any("/" not in bad["id"] for bad in report.get("damaged", ())):
        return (
            f"note: {held} unreferenced blobs kept: a damaged card, or a card of a session "
            "the store does not read, may point at one of them (repair or remove it, then "
            "--gc again)"
        )
    return (
        f"note: {held} unreferenced blobs kept: a damaged card may point at one of them "
        "(repair the card or remove it with ctx-stash --rm, then --gc again)"
    )


def gc_session_note(session: str) -> str:
    """The note --gc gives when --session was typed: gc works on the whole store."""
    return (
        f"note: --gc works on the whole store, not only session {session}: its limits are "
        "the store's, and any session's handles may be evicted (--dry-run shows which)"
    )


def gc_summary(report: dict, *, dry_run: bool) -> str:
    """--gc's words for REPORT (``HandleStore.gc``): a line a handle evicted, then one that
    sums it up."""
    verb = "would evict" if dry_run else "evicted"
    lines = [f"{verb} {ident}" for ident in report["evicted"]]
    lines.append(
        f"{'would remove' if dry_run else 'removed'} "
        f"{len(report['evicted'])} handles, {report['blobs_removed']} unreferenced blobs, "
        f"{report['temp_removed']} leftover temp files ({human_size(report['bytes_freed'])}); "
        f"kept {report['kept']} handles ({human_size(report['kept_bytes'])})"
    )
    return "\n".join(lines) + "\n"
