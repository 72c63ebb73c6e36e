"""One fitting of the files section: reserve the diffs, plan the rest, render the blocks.

A file's block is the excerpt format every command shares: a header
``==> path <== 812 lines; rank 2; shown: QuerySet.bulk_create, _batched_insert`` and the
shown lines as ``120<TAB>code`` with real numbers, ``⋮`` between runs that are not
adjacent. Blocks come sorted by path (a byte-stable order; the header gives the rank),
then the paths of the files ranked next, best first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import ctxtools.retrieval.plan as _plan
from ctxtools.excerpt.render import frame
from ctxtools.fsutil import json_name
from ctxtools.pack.ledger import Drop, Note
from ctxtools.quoting import SEPARATOR, numbered, quote_name
from ctxtools.retrieval.plan import Costs, Plan, Shown, cut, plan

EXPLAIN_NEXT = 50  # ranked files left out that the record names one by one
HEADER_NAMES = 6


def _body(sh: Shown) -> list[str]:
    doc = sh.doc
    out: list[str] = []
    gaps = sh.how != "signatures"  # signature lines say by their numbers what is between
    for k, (a, b) in enumerate(sh.spans()):
        if k and gaps:
            out.append(SEPARATOR)
        for n in range(a, b + 1):
            out.append(numbered(n, cut(doc.lines[n - 1])))
    return out


def _why_cut(p: Plan) -> str:
    """Why a file of plan P shows less than all its lines: the budget, or the floor or the
    files' ceiling that ended the pack with budget to spare."""
    if p.stopped == "floor" and p.under:
        return "the rest is under the relevance floor; --fill packs it"
    if p.stopped == "ceiling" and p.under:
        return f"the files' ceiling of {_plan.FLOOR_TOKENS:,} tokens; --fill packs more"
    return "the budget holds no more"


def _cut_lines(sh: Shown) -> int:
    """How many of the lines SH shows are cut (longer than ``MAX_LINE_CHARS``)."""
    lines = sh.doc.lines
    return sum(1 for n in sh.lines if len(lines[n - 1]) > _plan.MAX_LINE_CHARS)


def _header(sh: Shown, rank: int, cut_lines: int = 0) -> str:
    """The block's header; a file whose shown lines are cut says so (a "whole file" with a
    line cut is not all of the file's text)."""
    doc = sh.doc
    n = len(doc.lines)
    parts = [f"{n} line" + ("" if n == 1 else "s"), f"rank {rank}"]
    if sh.how == "whole" or len(sh.lines) >= n:
        parts.append("whole file")
    elif sh.how == "signatures":
        total = len(sh.lines) + sh.more
        parts.append(f"signatures: {len(sh.lines)} of {total} definitions")
    else:
        names = []
        for k in sorted(sh.chunks, key=lambda k: -doc.scores[k]):
            ch = doc.chunks[k]
            if ch.name and ch.kind in ("def", "class", "part"):
                name = f"{ch.scope}.{ch.name}" if ch.scope else ch.name
                if name not in names:
                    names.append(name)
        shown = f"{len(sh.lines)} shown"
        if names:
            more = len(names) - HEADER_NAMES
            shown += (
                ": " + ", ".join(names[:HEADER_NAMES]) + (f" and {more} more" if more > 0 else "")
            )
        parts.append(shown)
    if cut_lines:
        parts.append(
            f"{cut_lines} line{'' if cut_lines == 1 else 's'} cut at "
            f"{_plan.MAX_LINE_CHARS} characters"
        )
    return frame(doc.label, parts)


def _reserve_diffs(ch, budget: int) -> tuple[dict[str, str], int, list[str]]:
    """The diffs of changed files, within BUDGET: (label -> diff, their cost, labels
    whose diff did not fit)."""
    diffs: dict[str, str] = {}
    cost = 0
    over: list[str] = []
    for label in sorted(ch.entries):
        e = ch.entries[label]
        if not e.diff:
            continue
        c = ch.count(ch.render.file(label, "", e.diff)) + 1
        if cost + c > budget:
            over.append(label)
            continue
        diffs[label] = e.diff
        cost += c
    return diffs, cost, over


@dataclass
class FilesFit:
    """One fitting of the files section: its body (TEXT), a row per file, and what it left
    out: the drops, its notes, and the named files that could not be shown at all."""

    text: str
    rows: list[dict]
    dropped: list[Drop] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    failed_named: list[str] = field(default_factory=list)


def render_plan(ch, budget: int) -> FilesFit:
    """The files section of the Chooser CH (read, not changed) for BUDGET tokens."""
    diffs, reserved, over = _reserve_diffs(ch, budget)
    weights = ch.ranking.weights
    top_terms = sorted((t for t in weights if weights[t] > 0), key=lambda t: (-weights[t], t))[:8]
    docs = [d for d in ch.docs if d.label not in over]
    costs = Costs(ch.count)
    p = plan(
        docs,
        max(0, budget - reserved),
        costs,
        signatures_only=ch.sig_mode,
        top_terms=top_terms,
        path_cost=ch.count,
        blind=_blind_by_rank(ch),
        fill=ch.req.fill,
    )
    ranks = {d.label: i + 1 for i, d in enumerate(ch.docs)}
    ranks.update({lab: len(ranks) + 1 + i for i, lab in enumerate(_blind_by_rank(ch))})
    # label -> (how it is shown, its rendered block, its Shown, how many shown lines are cut)
    blocks: dict[str, tuple[str, str, Shown | None, int]] = {}
    for sh in p.shown:
        lab = sh.doc.label
        cut_lines = _cut_lines(sh)
        block = "\n".join([_header(sh, ranks[lab], cut_lines), *_body(sh), ""])
        blocks[lab] = (sh.how, ch.render.file(lab, block, diffs.get(lab)), sh, cut_lines)
    for lab, diff in diffs.items():
        if lab not in blocks:
            blocks[lab] = ("diff", ch.render.file(lab, "", diff), None, 0)
    texts, rows = _rows(ch, blocks, ranks)
    if p.paths:
        texts.append(ch.render.more_files(p.paths))
        rows.extend(_path_row(ch, lab, ranks) for lab in p.paths)
        rows.sort(key=lambda r: r["path"])
    out = FilesFit("\n".join(texts), rows)
    _named_left_out(ch, p, over, blocks, out)
    _record_left_out(ch, p, blocks, out)
    return out


def _blind_by_rank(ch) -> list[str]:
    """The files nothing in the task reaches, by the repo map's rank (best first)."""
    ranks = ch.map_ranks
    rest = list(ch.ranking.rest)
    return rest + sorted(ch.ranking.blind, key=lambda lab: (-ranks.get(lab, 0.0), lab))


def _rows(ch, blocks, ranks) -> tuple[list[str], list[dict]]:
    texts, rows = [], []
    for lab in sorted(blocks):
        how, block, sh, cut_lines = blocks[lab]
        e = ch.entries[lab]
        texts.append(block)
        doc = sh.doc if sh is not None else None
        row = {
            **_name(lab),
            "named": e.named,
            "why": e.why,
            "shown": how,
            "tokens": ch.count(block),
            "score": round(doc.score, 3) if doc is not None else 0.0,
            "rank": ranks.get(lab, 0),
        }
        if sh is not None:
            row["lines"] = len(sh.lines)
            if cut_lines:
                row["lines_cut"] = cut_lines
            row["chunks"] = [_chunk_label(doc, k) for k in sorted(sh.chunks)]
            if doc.parts:
                row["chunk_scores"] = [_chunk_score(doc, k) for k in sorted(sh.chunks)]
            if doc.why:
                row["reasons"] = sorted(set(doc.why))
            row["matched"] = doc.matched[:20]
        if e.diff:
            row["diff"] = True
        rows.append(row)
    return texts, rows


def _chunk_score(doc, k: int) -> dict:
    """Chunk K's score and its parts (which signal gave what), for --explain and JSON."""
    words, pointers, whole, callees = doc.parts[k]
    tickets = doc.prior * doc.tickets[k] if getattr(doc, "tickets", None) else 0.0
    # (a ticket's commits point at the chunk: a part of its own; what is left of the
    # pointers is never a float's -0.0)
    pointers = pointers - tickets if pointers - tickets > 1e-9 else 0.0
    out = {
        "chunk": _chunk_label(doc, k),
        "score": round(doc.scores[k], 3),
        "words": round(words, 3),
        "pointers": round(pointers, 3),
        "file": round(whole, 3),
        "callees": round(callees, 3),
    }
    if tickets:  # retrieval.rank: the commits citing the task's tickets changed it
        out["tickets"] = round(tickets, 3)
    if getattr(doc, "semantic", None):  # retrieval.semantic.rerank: the chunk's semantic part
        out["semantic"] = round(doc.semantic[k], 3)
    if getattr(doc, "history", None):  # retrieval.history.apply: the chunk's history part
        out["history"] = round(doc.history[k], 3)
    return out


def _chunk_label(doc, k: int) -> str:
    c = doc.chunks[k]
    name = f"{c.scope}.{c.name}" if c.scope and c.name else (c.name or c.kind)
    return f"{name} {c.start}-{c.end}"


def _path_row(ch, lab: str, ranks) -> dict:
    e = ch.entries[lab]
    doc = next((d for d in ch.docs if d.label == lab), None)
    return {
        **_name(lab),
        "named": e.named,
        "why": e.why,
        "shown": "path",
        "tokens": ch.count(lab) + 1,
        "score": round(doc.score, 3) if doc is not None else 0.0,
        "rank": ranks.get(lab, 0),
    }


def _name(lab: str) -> dict:
    """A row's name: ``path``, the label as it is (the pack's JSON holds it as
    ``fsutil.json_text`` makes it), and ``path_quoted`` for a label that is not UTF-8
    (``fsutil.json_name``: the name as the text shows it, its bytes given back)."""
    quoted = json_name(lab).get("path_quoted")
    return {"path": lab} if quoted is None else {"path": lab, "path_quoted": quoted}


def _named_left_out(ch, p: Plan, over: list[str], blocks, out: FilesFit) -> None:
    for lab in sorted(set(p.unlisted_named) | {x for x in over if x not in blocks}):
        e = ch.entries[lab]
        if not e.named or lab in blocks or lab in p.paths:
            continue
        if ch.req.allow_drop:
            shown = quote_name(lab)
            out.dropped.append(Drop(shown, "named, but not even its path fits (--allow-drop)"))
            out.notes.append(
                Note(
                    f"dropped named file {shown}: not even its path fits (--allow-drop)",
                    "warning",
                )
            )
        else:
            out.failed_named.append(lab)
    for lab in over:
        if lab in blocks:
            continue
        out.dropped.append(Drop(f"{quote_name(lab)} (diff)", "diff over the budget"))


def _record_left_out(ch, p: Plan, blocks, out: FilesFit) -> None:
    if p.stopped == "floor" and p.under:
        out.dropped.append(
            Drop(
                f"{p.under:,} chunks",
                "under the relevance floor: worth too little for their tokens (--fill)",
            )
        )
    elif p.stopped == "ceiling" and p.under:
        out.dropped.append(
            Drop(
                f"{p.under:,} chunks",
                f"past the files' ceiling of {_plan.FLOOR_TOKENS:,} tokens, or under the"
                " relevance floor (--fill)",
            )
        )
    listed = set(p.paths)
    rest = [d for d in ch.docs if d.label not in blocks and d.label not in listed]
    for d in rest[:EXPLAIN_NEXT]:
        out.dropped.append(Drop(quote_name(d.label), f"ranked lower (score {d.score:.3g})"))
    if len(rest) > EXPLAIN_NEXT:
        out.dropped.append(Drop(f"{len(rest) - EXPLAIN_NEXT:,} more ranked files", "ranked lower"))
    blind = sum(1 for lab in (*ch.ranking.rest, *ch.ranking.blind) if lab not in listed)
    if blind:
        out.dropped.append(Drop(f"{blind:,} files", "nothing in them matches the task"))
    for sh in p.shown:
        d = sh.doc
        if d.named and sh.how == "signatures":
            what = f"named file {quote_name(d.label)}: its signatures only"
            out.notes.append(Note(f"{what} (its body does not fit)", "note"))
        elif d.named and len(sh.lines) < len(d.lines):
            shown = f"{len(sh.lines):,} of {len(d.lines):,} lines shown"
            what = f"named file {quote_name(d.label)}"
            out.notes.append(Note(f"{what}: {shown} ({_why_cut(p)})", "note"))
    for lab in p.paths:
        if ch.entries[lab].named:
            what = f"named file {quote_name(lab)}"
            out.notes.append(Note(f"{what}: its path only (nothing more fits)", "note"))
