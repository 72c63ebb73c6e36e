"""The memory section of a pack: the sections of the memory files that answer the task,
best first, within the memory budget.

``memory.rank_memory`` scores every section and says which qualify (a noise floor, the
corpus' median plus a margin, and 90% of the best section's score). The share of the
best is measured against a section that can go in: when the best section is larger than
the whole memory budget, it cannot be the yardstick that keeps every other answer out --
the sections within 90% of the best one *that fits* qualify too (issue 17: a 600-token best
section left a 450-token budget with nothing, though three smaller sections answered the
question).
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxtools.pack.model import MEMORY_SHARE


@dataclass
class Fixed:
    """A section whose text is decided before the files are fitted."""

    name: str
    text: str
    parts: list[tuple[str, str]]  # (label, rendered part) for the per-part counts


def memory_section(req, task_words, total, render, count, ledger):
    """The memory section (a Fixed, or None when no chunk qualifies or fits) and the
    record --explain shows: every chunk with its score and why it is in or out."""
    from ctxtools.memory import DEFAULT_METHOD, rank_memory

    ranking = rank_memory(
        list(req.memory),
        task_words,
        method=req.retrieval or DEFAULT_METHOD,
        embed_cmd=req.embed_cmd,
        embed_timeout=req.embed_timeout,
        min_score=req.min_score,
        store=req.store,
        allow_secrets=req.allow_secrets,
    )
    ledger.said(ranking.notes)
    cap = req.memory_tokens if req.memory_tokens is not None else total * MEMORY_SHARE // 100
    rows = [dict(s.as_dict(), in_pack=False) for s in ranking.chunks]
    parts = _fill(ranking, rows, cap, render, count)
    info = {
        "method": ranking.method,
        "requested": ranking.requested,
        "threshold": ranking.threshold,
        "budget": cap,
        "tokens": 0,
        "kept": 0,
        "files": ranking.files,
        "chunks": rows,
    }
    if not parts:
        return None, info
    # The counts of the parts are estimates (tokens merge across joins): shed the worst
    # chunks until the whole section, counted, is within the cap.
    while parts:
        text = render.section("memory", "".join(p for _, p in parts))
        if count(text) <= cap:
            return Fixed("memory", text, parts), info
        label, _ = parts.pop()
        memory_left_out(info, label, f"over the memory budget of {cap:,} tokens")
    return None, info


def _fill(ranking, rows, cap, render, count) -> list[tuple[str, str]]:
    """The qualified chunks that fit CAP, best first; when a qualified chunk does not fit,
    the chunks within the share of the best *fitting* one qualify too."""
    body = count(render.section("memory", ""))
    parts: list[tuple[str, str]] = []
    rendered: dict[int, tuple[str, str, int]] = {}

    def part(k: int):
        if k not in rendered:
            c = ranking.chunks[k].chunk
            where = f"{c.file}:{c.start}-{c.end}"
            # The renderer redacts the chunk and its label (pack.redact).
            p = render.memory_chunk(c.file, c.heading, c.start, c.end, ranking.chunks[k].text)
            rendered[k] = (where, p, count(p))
        return rendered[k]

    def take(k: int, why: str) -> bool:
        """Put chunk K in when it fits what is left of CAP; whether it did."""
        nonlocal body
        where, p, tokens = part(k)
        if body + tokens > cap:
            return False
        parts.append((where, p))
        body += tokens
        rows[k]["in_pack"] = True
        rows[k]["why"] = why
        return True

    th = ranking.threshold
    share = th.get("share") or 0.0
    base = max(th.get("floor") or 0.0, (th.get("median") or 0.0) + (th.get("margin") or 0.0))
    if th.get("rule") == "min_score" or th.get("threshold") is None:
        share = 0.0
    too_big = False
    for k, s in enumerate(ranking.chunks):
        if not s.kept:
            continue
        if not take(k, "in: at or over the threshold"):
            too_big = True
            rows[k]["why"] = f"qualified, but over the memory budget of {cap:,} tokens"
    if not too_big or not share:
        return parts
    fitting = [
        k
        for k, s in enumerate(ranking.chunks)
        if s.score >= base and not rows[k]["in_pack"] and part(k)[2] <= cap - body
    ]
    if not fitting:
        return parts
    best = max(ranking.chunks[k].score for k in fitting)
    taken_best = max(
        (ranking.chunks[k].score for k, r in enumerate(rows) if r["in_pack"]), default=0.0
    )
    bar = share * max(best, taken_best)
    for k in sorted(fitting, key=lambda k: (-ranking.chunks[k].score, k)):
        if ranking.chunks[k].score < bar or ranking.chunks[k].kept:
            continue
        take(
            k,
            f"in: within {share:.0%} of the best section that fits (a better one is "
            "over the memory budget)",
        )
    return parts


def memory_left_out(info: dict, label: str, why: str) -> None:
    """Mark the chunk LABEL of INFO as left out, for WHY."""
    for row in info["chunks"]:
        if row["in_pack"] and f"{row['file']}:{row['start']}-{row['end']}" == label:
            row["in_pack"] = False
            row["why"] = f"qualified, but {why}"
            return
