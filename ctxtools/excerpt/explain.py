"""``ctx-excerpt --explain``: what a run showed of each file, each part's score and why,
and what it left out and why (``ctxtools.explanation``'s shape, as ctx-pack's)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxtools.excerpt.inputs import OK
from ctxtools.excerpt.loader import render_item
from ctxtools.excerpt.model import Excerpt
from ctxtools.explanation import Explanation, Item
from ctxtools.quoting import quote_name

if TYPE_CHECKING:
    from ctxtools.excerpt.run import ExcerptRun


def explain(run: ExcerptRun) -> Explanation:
    """The Explanation of RUN: each shown file (its score, its tokens when the run had a
    ruler) with its spans and why each is there; then the windows and files the budget
    dropped, the windows past --max-windows, the files where nothing matched that are not
    shown, and the inputs skipped (binary, unreadable). A file is named as ``quote_name``
    shows it."""
    from ctxtools.retrieval.plan import FLOOR

    opts = run.options
    terms = ", ".join(run.terms) or "none"
    summary = (
        f"terms: {terms}; per file the first {opts.head} lines (after a licence banner), "
        "then at most "
        f"{opts.max_windows} windows, the most relevant first down to {FLOOR:g} of the "
        f"file's best: its chunks as ctx-pack ranks them (BM25 over the chunks of every "
        f"file given, names, frames, messages, the file's share, callees), or in a text "
        f"without definitions ±{opts.window} lines around its best-scoring lines"
    )
    if run.signatures:
        summary = f"terms: {terms}; the definitions' signature lines of each file"
    budget = None
    if run.budget is not None:
        ruler = run.ruler
        budget = {
            "tokens": run.budget,
            "used": run.tokens,
            "counter": ruler.name if ruler is not None else None,
            "exact": ruler.exact if ruler is not None else True,
        }
    count = run.ruler.count if run.ruler is not None else None
    chosen = [_file(label, item, count) for label, item in run.shown]
    return Explanation("ctx-excerpt", summary, budget, chosen, _left_out(run))


def _file(label: str, item, count) -> Item:
    tokens = count(render_item(item, label)) if count is not None else None
    if not isinstance(item, Excerpt):  # --signatures
        n = len(item.definitions)
        matched = f"; {item.matches:,} match {', '.join(item.matched)}" if item.matched else ""
        return Item(quote_name(label), f"{n:,} definitions{matched}", round(item.score, 3), tokens)
    matched = ", ".join(item.matched)
    why = f"matched {matched}" if matched else "nothing matched: its head and tail"
    parts = [_span(span, item) for span in item.spans]
    return Item(quote_name(label), why, round(item.score, 3), tokens, parts)


def _span(span, item: Excerpt) -> Item:
    where = f"{span.kind} {span.start}-{span.end}"
    if span.kind == "tail":
        return Item(where, "the last lines, shown when nothing matches (--tail)")
    parts = []
    for w in sorted(span.windows, key=lambda w: (-w.score, w.start)):
        words, pointers, whole, callees = w.parts
        parts.append(
            Item(
                w.chunk,
                f"words {words:.3g}, pointers {pointers:.3g}, file {whole:.3g}, "
                f"callees {callees:.3g}; terms: {', '.join(w.terms) or 'none'}",
                round(w.score, 3),
            )
        )
    head = "the first lines, always shown (--head)"
    if span.kind == "head" and span.start > 1:
        head = f"the first lines after a licence banner (lines 1-{span.start - 1}), always shown"
    if span.kind == "head" and parts:
        return Item(where, head, round(span.score, 3), None, parts)
    if span.kind == "head":
        return Item(where, head)
    return Item(where, parts[0].what + ": " + parts[0].why, round(span.score, 3))


def _left_out(run: ExcerptRun) -> list[Item]:
    out = []
    for d in run.dropped:
        if d.kind == "window":
            what = f"{quote_name(d.label)} window {d.start}-{d.end}"
            why = f"over --tokens {run.budget:,}: the least relevant windows go first"
            out.append(Item(what, why, d.score))
        elif d.kind == "head":
            what = f"{quote_name(d.label)} head {d.start}-{d.end}"
            why = f"over --tokens {run.budget:,}: the file shown by its windows, without its head"
            out.append(Item(what, why))
        else:
            why = "over --tokens: " + ("a weak file" if d.matched else "nothing matched")
            out.append(Item(f"{quote_name(d.label)} (whole file)", why, d.score))
    budget_cut: dict[str, int] = {}
    for d in run.dropped:
        budget_cut[d.label] = budget_cut.get(d.label, 0) + (d.kind == "window")
    for label, item in run.shown:
        # Excerpt.omitted counts the windows --max-windows left out and the budget's too
        past = item.omitted - budget_cut.get(label, 0) if isinstance(item, Excerpt) else 0
        if past > 0:
            why = f"above the floor, past --max-windows {run.options.max_windows}"
            out.append(Item(f"{quote_name(label)}: {past:,} more windows", why))
    shown = {label for label, _ in run.shown} | {d.label for d in run.dropped}
    for r in run.results:
        if r.status != OK:
            error = f" ({r.error})" if r.error else ""
            out.append(Item(quote_name(r.label), f"skipped: {r.status}{error}"))
        elif r.label not in shown and not r.matched:
            mode = "named in the closing list" if run.unmatched_mode == "name" else "left out"
            why = f"nothing matched ({mode}; --unmatched show shows it)"
            out.append(Item(quote_name(r.label), why))
    return out
