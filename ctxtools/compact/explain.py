"""``ctx-compact --explain``: what a compaction kept, elided and dropped, each with its
tokens and why (``ctxtools.explanation``'s shape, as ctx-pack's). A result's tokens are what
its placeholder saves: stage 1 elides the oldest results first, not the biggest."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxtools.explanation import Explanation, Item

if TYPE_CHECKING:
    from ctxtools.compact.run import CompactRun


def _messages(first: int, last: int) -> str:
    """Messages FIRST..LAST (0-based) as a reader counts them (1-based)."""
    return f"message {first + 1}" if first == last else f"messages {first + 1}-{last + 1}"


def explain(run: CompactRun) -> Explanation:
    """The Explanation of RUN: the head and the protected tail (kept whole), the results
    stage 1 kept or elided (each with the tokens its placeholder saves, oldest first), and
    the span stage 2 dropped for its digest; the budget is the target."""
    rep = run.outcome.report
    ch = run.outcome.choices
    n = rep["messages_before"]
    summary = (
        f"{n:,} messages, {rep['tokens_before']:,} tokens of a {rep['limit']:,} window: "
        f"compaction starts at {rep['at']:g}% and aims at {rep['target_percent']:g}% "
        f"({rep['target_tokens']:,} tokens); {rep['action']}"
    )
    budget = {
        "tokens": rep["target_tokens"],
        "used": rep["tokens_after"],
        "counter": run.ruler.name,
        "exact": bool(rep["tokens_before_exact"]) and run.ruler.exact,
    }
    if run.outcome.below_trigger:  # nothing was chosen: all of it stays
        whole = [Item(_messages(0, n - 1), run.outcome.notes[0], tokens=rep["tokens_before"])]
        return Explanation("ctx-compact", summary, budget, whole)
    chosen: list[Item] = []
    left_out: list[Item] = []
    head, protected = ch.get("head", -1), ch.get("protected", n)
    if head >= 0:
        chosen.append(Item(_messages(0, head), "the head: system prompt and first user message"))
    if protected < n:
        why = "the protected tail: the last --keep-recent turns and the results before them"
        chosen.append(Item(_messages(protected, n - 1), why + " up to --keep-tokens"))
    cut = ch.get("cut")
    for index, block, saving, elided in ch.get("candidates", []):
        what = f"message {index + 1}" + ("" if block is None else f" block {block + 1}")
        what += " (tool result)"
        if cut is not None and cut[0] <= index <= cut[1]:
            continue  # dropped with its span (below)
        if elided:
            why = "elided to a placeholder naming its handle: an old result, oldest first"
            left_out.append(Item(what, why, tokens=saving))
        else:
            why = f"kept: under the target without eliding it (that would save {saving:,})"
            chosen.append(Item(what, why))
    middle = (cut[1] + 1 if cut is not None else head + 1, protected - 1)
    if middle[0] <= middle[1]:
        why = "kept" + (" after the cut" if cut is not None else ": no cut was needed")
        chosen.append(Item(_messages(*middle), why + " (but for the results elided below)"))
    if cut is not None:
        first, last, kept = cut
        stage2 = rep["stage2"] or {}
        why = (
            f"dropped for a digest of {stage2.get('digest_tokens') or 0:,} tokens (the span "
            f"is stashed as {stage2.get('handle')}): the oldest messages after the head, up "
            "to a cut where no kept result loses its call"
        )
        if kept:
            why += f"; {kept:,} --keep-tool messages stay after it"
        left_out.append(Item(_messages(first, last), why))
    return Explanation("ctx-compact", summary, budget, chosen, left_out)
