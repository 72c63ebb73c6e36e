"""Compaction: trigger, stage 1 (elision), stage 2 (cut + digest), the optional summary.

``compact(tr, counter, opts, stash)`` decides everything on token counts first and writes to
the stash only what the output will reference:

1. Trigger: below ``at`` percent of ``limit`` nothing changes (unless ``force``). The target is
   ``at - band`` percent (hysteresis: a compaction must open that much headroom).
2. Stage 1: tool results outside the protected tail are elided, oldest first, until the
   transcript is under the target (``force``: all of them). The protected tail is the last
   ``keep_recent`` turns (a turn: an assistant message and the results answering it) plus the
   newest tool results before it up to ``keep_tokens``. The system prompt and the first user
   message are never touched. A result is only elided when its placeholder is shorter, and
   never when it answers a call of a ``keep_tools`` tool.
3. Stage 2, only if still over the target: the oldest messages after the head (system prompt,
   first user message and any earlier digests) are dropped up to a cut ``k`` -- the smallest
   that gets under the target, else the largest allowed (then the outcome is ``no_headroom``).
   A cut is allowed when the kept tail does not start on a tool result (OpenAI) or starts on an
   assistant turn (Anthropic), contains no result whose call was dropped, and keeps the
   protected tail. The dropped messages, unchanged, are stashed as JSON Lines, and one digest
   names that handle: an OpenAI ``user`` message after the head; for Anthropic a text block
   appended to the first user turn, so that user and assistant turns keep alternating.
   Calls of ``keep_tools`` tools in the dropped span stay, with their results, right after
   the digest: each message reduced to its kept calls or kept results (whole when that is
   all of it), in order, so every kept result still follows its call; their tokens count
   against the target like the digest's.
4. A summarizer's narrative joins the digest only if it passes the gate and still fits.

``compact()`` runs these as named stages (``ctxtools.compact.stages``), each a function
returning a small record: ``measure`` (``Measurement``: layout, counts, candidates, the total
before), ``plan_elisions`` (``Elisions``), ``droppable`` and ``find_cut`` (``Span``,
``CutChoice``, then ``Cut``), ``summarise`` (``Summary``), and ``apply`` (``Applied``) -- the
only one that writes to the stash. This module turns their records into the ``Outcome``:
status, messages, notes and the --json-report document.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxtools.compact.elide import Stash
from ctxtools.compact.stages import (
    Cut,
    Measurement,
    Options,
    apply,
    droppable,
    find_cut,
    measure,
    plan_elisions,
    summarise,
)
from ctxtools.compact.transcript import TokenCounter, Transcript

# What the token figures count: each message's text (content, tool calls, results) plus
# MESSAGE_OVERHEAD tokens of framing, plus REPLY_PRIMING -- as the APIs bill a request,
# not the raw JSON of the file (whose quotes, keys and escapes cost ~40% more).
COUNTED = "messages"

UNCHANGED = "unchanged"
COMPACTED = "compacted"
NO_HEADROOM = "no_headroom"

NO_CUT_NOTE = (
    "no valid cut: every message after the head is in the protected tail or "
    "bound to a tool call there; only stage 1 applied"
)
NOTHING_NOTE = "nothing to elide or drop outside the protected tail: unchanged"
# Both at once: one line (it was "... only stage 1 applied", then "nothing to elide ...:
# unchanged", then the summary's "unchanged": stage 1 had applied nothing)
NOTHING_NO_CUT_NOTE = (
    "nothing to elide or drop, and no valid cut: every message after the head is in the "
    "protected tail or bound to a tool call there"
)


@dataclass
class Outcome:
    status: str
    messages: list[dict] | None  # None: the input stays as it is
    tokens_before: int
    tokens_after: int
    report: dict
    notes: list[str] = field(default_factory=list)
    below_trigger: bool = False  # unchanged because under the trigger (notes[0] says so)
    choices: dict = field(default_factory=dict)  # what --explain reads (``_choices``)


def _choices(m: Measurement, elisions=None, cut: Cut | None = None) -> dict:
    """What stage 1 and stage 2 chose, for ``compact.explain``: the head and the protected
    tail, every result stage 1 could elide (message, block, tokens its placeholder saves,
    whether it was elided) and the span stage 2 dropped."""
    chosen = elisions.chosen if elisions is not None else {}
    return {
        "head": m.layout.head,
        "protected": m.layout.protected,
        "candidates": [
            (c.index, c.block, c.saving, c.block in chosen.get(c.index, {}))
            for c in reversed(m.candidates)
        ],
        "cut": None if cut is None else (cut.head + 1, cut.index - 1, len(cut.kept)),
    }


def _percent(tokens: int, limit: int) -> float:
    return round(100.0 * tokens / limit, 2) if limit else 0.0


def _headroom_note(tokens: int, limit: int, target_pct: float, target: int) -> str:
    return (
        f"compaction reached {tokens:,} tokens = {100.0 * tokens / limit:.1f}% of {limit:,}, "
        f"not under the {target_pct:g}% target ({target:,} tokens)"
    )


def _report(tr: Transcript, opts: Options, m: Measurement) -> dict:
    """The report of an unchanged transcript; later stages fill in what they did."""
    n = len(tr.messages)
    layout = m.layout
    return {
        "format": tr.format,
        "shape": tr.shape,
        "limit": opts.limit,
        "at": opts.at,
        "target_percent": m.target_pct,
        "target_tokens": m.target,
        "messages_before": n,
        "tokens_before": m.before,
        "tokens_before_exact": m.exact,
        "percent_before": _percent(m.before, opts.limit),
        "messages_after": n,
        "tokens_after": m.before,
        "percent_after": _percent(m.before, opts.limit),
        "action": UNCHANGED,
        "stage1": {
            "elided": 0,
            "tokens_saved": 0,
            "handles": [],
            "kept": layout.keep.count(layout.head, layout.protected),
        },
        "stage2": None,
        "summarizer": None,
        "counted": COUNTED,
    }


# --- the whole compaction -----------------------------------------------------------------------


def compact(tr: Transcript, counter: TokenCounter, opts: Options, stash: Stash) -> Outcome:
    """Compact TR to OPTS, counting with COUNTER; what the output names goes into STASH."""
    m = measure(tr, counter, opts)
    report = _report(tr, opts, m)
    note = m.trigger_note(opts)
    if note is not None:
        out = Outcome(UNCHANGED, None, m.before, m.before, report, [note], below_trigger=True)
        out.choices = _choices(m)
        return out
    notes: list[str] = []
    elisions = plan_elisions(m, opts)
    cut = None
    stage2: dict | None = None
    if elisions.total > m.target:
        span = droppable(tr, m, elisions)
        choice = find_cut(tr, counter, opts, m, span)
        if choice.cut is None:
            notes.append(NO_CUT_NOTE)
            stage2 = {"dropped": 0, "reason": "no valid cut"}
        else:
            if opts.summarizer:
                summary = summarise(tr, counter, opts, m, span, choice)
                choice = summary.choice
                report["summarizer"] = summary.info
                if summary.note is not None:
                    notes.append(summary.note)
            cut = Cut.of(choice, m.layout.head, span)
            stage2 = cut.report()

    limit = opts.limit
    if cut is None and not any(i > m.layout.head for i in elisions.chosen):
        if notes and notes[-1] is NO_CUT_NOTE:
            notes[-1] = NOTHING_NO_CUT_NOTE
        else:
            notes.append(NOTHING_NOTE)
        status = NO_HEADROOM if m.before > m.target else UNCHANGED
        report["action"] = status
        report["stage2"] = stage2
        if status == NO_HEADROOM:
            notes.append(_headroom_note(m.before, limit, m.target_pct, m.target))
        return Outcome(status, None, m.before, m.before, report, notes, False, _choices(m))

    done = apply(tr, counter, opts, stash, m, elisions, cut)
    if stage2 is not None and cut is not None:
        stage2["handle"] = done.digest_ref
        stage2["digest_tokens"] = done.digest_tokens
    status = COMPACTED if done.tokens <= m.target else NO_HEADROOM
    report.update(
        {
            "messages_after": len(done.messages),
            "tokens_after": done.tokens,
            "percent_after": _percent(done.tokens, limit),
            "action": status,
            "stage2": stage2,
        }
    )
    report["stage1"] = {
        "elided": len(done.handles),
        "tokens_saved": done.saved,
        "handles": list(dict.fromkeys(done.handles)),
        "kept": report["stage1"]["kept"],
    }
    if status == NO_HEADROOM:
        notes.append(_headroom_note(done.tokens, limit, m.target_pct, m.target))
    choices = _choices(m, elisions, cut)
    return Outcome(status, done.messages, m.before, done.tokens, report, notes, False, choices)
