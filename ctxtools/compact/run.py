"""One compaction of a loaded transcript, as ctx-compact runs it, for any caller.

``compact()`` (``plan``) needs a transcript whose calls and results are paired; this
module checks that first (or repairs it), runs the two stages, and says what to write::

    opts, encoding = compact_options(model, limit)      # the window, the encoding to count
    tr = load(data)                                     # ctxtools.compact.transcript
    run = compact_transcript(tr, ruler, opts, StoreStash(root), repair=True, original=data)
    run.output          # the bytes to write: compacted, repaired, or DATA as it was
    run.notes           # about the transcript (API problems left alone, repairs), then
    run.compaction_notes  # compaction's; run.headroom: why it stayed over the target
    run.report()        # the --json-report document; run.summary(): the line on stderr
    run.error           # NoHeadroomError when it stayed over the target (exit 4), else None

Nothing here prints; a transcript that is already invalid for its API is an InputError
unless ``repair``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ctxtools.compact.plan import NO_HEADROOM, UNCHANGED, Options, Outcome, compact
from ctxtools.compact.transcript import MESSAGE_OVERHEAD, TokenCounter, Transcript, dump, links
from ctxtools.errors import InputError, NoHeadroomError

BROKEN = ("orphan", "unanswered")
REPAIRED = "repaired"  # the action when --repair changed the transcript and nothing else did
_UNCHANGED_NOTE = re.compile(r": unchanged\b")


def model_window(
    model: str | None,
    limit: int | None,
    encoding: str | None = None,
    *,
    counter_chosen: bool = False,
) -> tuple[int | None, str | None]:
    """The window in tokens and the encoding to count with: LIMIT beats MODEL's context
    limit; MODEL's encoding is used unless ENCODING is given or another counter was chosen
    (COUNTER_CHOSEN: a tokenizer file, the heuristic). Unknown models: ``profiles.resolve``."""
    if model:
        from ctxtools.profiles import resolve

        profile = resolve(model)
        if limit is None:
            limit = profile.context_limit
        if encoding is None and not counter_chosen:
            encoding = profile.encoding
    return limit, encoding


def model_note(model: str | None, limit: int | None) -> str | None:
    """What to say of MODEL when it is the window (no LIMIT) and no profile of its own
    matched it (``profiles.unknown_model_note``): a typo is not compacted to the default
    window in silence."""
    if not model or limit is not None:
        return None
    from ctxtools import profiles as prof

    table = prof.load_profiles()
    return prof.unknown_model_note(model, prof.resolve(model, table), table)


def compact_options(
    model: str | None,
    limit: int | None,
    encoding: str | None = None,
    *,
    counter_chosen: bool = False,
    summarizer: str | None = None,
    **fields,
) -> tuple[Options, str | None]:
    """The Options of a compaction to MODEL's window or LIMIT (neither: the default
    profile's, as ctx-pack and ``ctx-count --budget`` take it), with the command line
    SUMMARIZER split into its argv and FIELDS as the other Options fields; and the encoding
    to count with (``model_window``)."""
    from ctxtools.compact.accept import parse_command

    if limit is None and not model:
        from ctxtools.defaults import DEFAULT_PROFILE

        model = DEFAULT_PROFILE
    argv = parse_command(summarizer) if summarizer is not None else None
    limit, encoding = model_window(model, limit, encoding, counter_chosen=counter_chosen)
    return Options(limit=limit, summarizer=argv, **fields), encoding


@dataclass
class CompactRun:
    """What ``compact_transcript`` did. ``repaired``: {"removed", "added"} when a repair
    changed the transcript. ``notes``: about the transcript as it came (problems left
    alone, repairs, a long text whose count is not proven exact); ``compaction_notes``:
    compaction's own, except ``headroom`` (why it could not get under the target, when it
    could not)."""

    transcript: Transcript
    outcome: Outcome
    ruler: object
    original: bytes | None = None
    repaired: dict | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        """The outcome's status, except ``repaired`` when a repair is all that changed."""
        if self.outcome.status == UNCHANGED and self.repaired is not None:
            return REPAIRED
        return self.outcome.status

    @property
    def trigger_note(self) -> str | None:
        """Why nothing was compacted when the transcript was under the trigger."""
        return self.outcome.notes[0] if self.outcome.below_trigger else None

    @property
    def headroom(self) -> str | None:
        return self.outcome.notes[-1] if self.outcome.status == NO_HEADROOM else None

    @property
    def error(self) -> NoHeadroomError | None:
        """What ctx-compact exits with after writing the output: NoHeadroomError (exit 4)
        when compaction could not get under the target, else None."""
        if self.status != NO_HEADROOM:
            return None
        why = self.headroom or "compaction could not get under the target"
        return NoHeadroomError(why + "; pause auto-compaction")

    @property
    def compaction_notes(self) -> list[str]:
        skip = (self.headroom, self.trigger_note)  # said by the error, by the summary line
        notes = [text for text in self.outcome.notes if not any(text is t for t in skip)]
        if self.status == REPAIRED:  # the output is not the input: say what was not done
            notes = [_UNCHANGED_NOTE.sub(": not compacted, only repaired", t) for t in notes]
        return notes

    @property
    def output(self) -> bytes:
        """The transcript to write: compacted; else repaired; else the input unchanged
        (the ORIGINAL bytes when given, byte for byte)."""
        if self.outcome.messages is not None:
            return dump(self.transcript, self.outcome.messages)
        if self.repaired is not None or self.original is None:
            return dump(self.transcript)
        return self.original

    def summary(self) -> str:
        """What the run did, in one line (ctx-compact prints it on stderr unless --quiet)::

            28 → 8 messages, 11,227 → 1,831 tokens (−84%, counting message text + 4 a
            message);
            6 results elided, 19 messages dropped; originals: ctx-read ctx:default/compact-…

        Tokens are counted as the APIs read a request (``COUNTED``), not as the raw JSON."""
        r = self.outcome.report
        n_before, n_after = r["messages_before"], r["messages_after"]
        if self.outcome.messages is None:
            if self.trigger_note is not None:
                note = self.trigger_note
                if self.status == REPAIRED:
                    note = _UNCHANGED_NOTE.sub(": not compacted, only repaired", note)
                return f"{n_before:,} messages, {note}"
            what = "repaired only" if self.status == REPAIRED else "unchanged"
            return f"{n_before:,} messages, {r['tokens_before']:,} tokens: {what}"
        before, after = r["tokens_before"], r["tokens_after"]
        change = ""
        if before:
            pct = round(100.0 * (after - before) / before)
            change = f"{'−' if pct < 0 else '+'}{abs(pct)}%, "
        approx = "" if r["tokens_before_exact"] else "~"
        line = (
            f"{n_before:,} → {n_after:,} messages, {approx}{before:,} → {after:,} tokens "
            f"({change}counting message text + {MESSAGE_OVERHEAD} a message)"
        )
        done = []
        elided = r["stage1"]["elided"]
        if elided:
            done.append(f"{elided:,} result{'s' if elided != 1 else ''} elided")
        stage2 = r["stage2"] or {}
        dropped = stage2.get("dropped") or 0
        if dropped:
            done.append(f"{dropped:,} message{'s' if dropped != 1 else ''} dropped")
        kept = stage2.get("kept") or 0
        if kept:
            done.append(f"{kept:,} kept for --keep-tool")
        if done:
            line += "; " + ", ".join(done)
        if stage2.get("handle"):
            line += f"; originals: ctx-read {stage2['handle']}"
        elif elided:
            line += "; originals: ctx-read the handle each placeholder names"
        return line

    def report(self) -> dict:
        """The --json-report document (ctx-compact --help gives the schema)."""
        report = dict(self.outcome.report)
        report["action"] = self.status
        report["repair"] = self.repaired
        report["ruler"] = self.ruler.describe()
        return report


def compact_transcript(
    tr: Transcript,
    ruler,
    opts: Options,
    stash,
    *,
    repair: bool = False,
    original: bytes | None = None,
    on_note: Callable[[str], None] | None = None,
) -> CompactRun:
    """Compact TR (in place: a repair replaces its messages) to OPTS with RULER's counts,
    stashing what it takes out in STASH (``elide.StoreStash``, ``MemoryStash``).

    An empty message list is an InputError (both APIs refuse it). Orphaned tool results
    and calls without results are an InputError naming the first,
    unless REPAIR: then orphans are dropped (stashed first) and calls answered with a
    placeholder. Other places the API may reject are left as they are, with a note.
    ON_NOTE sees those notes as they arise, before compaction starts (they are also in
    ``notes``; a count not proven exact is said once compaction has counted). ORIGINAL
    is the input's bytes, written back as they are when nothing changes."""
    from ctxtools.compact.elide import repair as repair_links

    if not tr.messages:  # nothing to compact, and nothing either API would take
        raise InputError(
            "empty transcript: no messages",
            hint="the OpenAI and Anthropic APIs both need at least one message",
        )
    notes: list[str] = []

    def note(text: str) -> None:
        notes.append(text)
        if on_note is not None:
            on_note(text)

    found = links(tr)
    broken = [p for p in found.problems if p.kind in BROKEN]
    if broken and not repair:
        orphans = sum(1 for p in broken if p.kind == "orphan")
        raise InputError(
            f"the transcript is already invalid for the {tr.format} API: {orphans} orphaned "
            f"tool result(s), {len(broken) - orphans} call(s) without a result; first: "
            f"{broken[0]}",
            hint="--repair drops orphaned results (stashed) and answers missing ones",
        )
    other = [p for p in found.problems if p.kind not in BROKEN]
    if other:
        note(
            f"note: {len(other)} place(s) the {tr.format} API may reject, left as they are "
            f"(never made worse); first: {other[0]}"
        )
    repaired = None
    if broken:
        fixed = repair_links(tr, found, stash)
        tr.messages = fixed.messages
        repaired = {"removed": fixed.removed, "added": fixed.added}
        note(
            f"repaired: removed {len(fixed.removed)} orphaned tool result(s), "
            f"answered {len(fixed.added)} call(s) without a result"
        )
    counter = TokenCounter(ruler)
    outcome = compact(tr, counter, opts, stash)
    for text in counter.notes:  # a long text's count not proven exact (as ctx-count says it)
        note(f"note: not exact: {text}")
    return CompactRun(tr, outcome, ruler, original, repaired, notes)
