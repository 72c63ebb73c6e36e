"""``ctx-repomap --explain``: which files and symbols the map shows, each with its rank or
score and why, and what it left out and why (``ctxtools.explanation``'s shape, as ctx-pack's)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ctxtools.explanation import Explanation, Item
from ctxtools.quoting import quote_name

if TYPE_CHECKING:
    from ctxtools.repomap.core import RepoMap

_SYMBOL = re.compile(r"\s*(\d+):")
SYMBOLS_SHOWN = 8  # symbols named per shown file before "... and N more"


def shown_lines(m: RepoMap) -> dict[str, set[int]]:
    """{file: the line numbers of its symbols the map's text shows}, from the text itself
    (a file's header is its path as ``quote_name`` shows it and a colon, a manifest's its
    bare path; a symbol line starts with its number)."""
    rels = {quote_name(f.rel): f.rel for f in m.files}
    shown: dict[str, set[int]] = {}
    current = None
    for line in m.text.splitlines():
        hit = _SYMBOL.match(line)
        if hit and current is not None:
            shown[current].add(int(hit.group(1)))
        elif line.endswith(":") and line[:-1] in rels:
            current = rels[line[:-1]]
            shown.setdefault(current, set())
        elif line in rels:  # a manifest (pyproject.toml, go.mod): a bare path
            current = None
            shown.setdefault(rels[line], set())
    return shown


def explain(m: RepoMap, *, focus=(), query: str | None = None) -> Explanation:
    """The Explanation of the map M (built with its files: not one from the result memo):
    the shown files in rank order, each with its PageRank, how many of its symbols are
    shown and the best of them with their scores; then the mapped files the budget left
    out, the symbols of shown files it left out, and the files never mapped (skipped by
    reason, or past --max-files). A file is named as ``quote_name`` shows it."""
    focused = ", ".join(quote_name(f) for f in focus)
    toward = [f"--focus {focused}" if focus else "", "--query" if query else ""]
    toward = [t for t in toward if t]
    summary = (
        f"{len(m.files):,} files ranked by PageRank over the references between them"
        f"{' (personalised toward ' + ' and '.join(toward) + ')' if toward else ''}; the "
        "best symbols of the best files, grouped by file, until the budget is full"
    )
    budget = {"tokens": m.budget, "used": m.tokens, "counter": m.ruler, "exact": m.exact}
    shown = shown_lines(m)
    chosen: list[Item] = []
    left_out: list[Item] = []
    for k, f in enumerate(m.files, 1):
        lines = shown.get(f.rel)
        if lines is None:
            why = f"rank {k:,} of {len(m.files):,}: below the files the budget took"
            left_out.append(Item(quote_name(f.rel), why, round(f.rank, 6)))
            continue
        parts = []
        for d, score in sorted(zip(f.defs, f.scores, strict=True), key=lambda p: -p[1]):
            if d.line in lines and len(parts) < SYMBOLS_SHOWN:
                why = "shown: among its file's best-referenced symbols"
                parts.append(Item(f"{d.line}: {d.kind} {d.name}", why, round(score, 6)))
        why = f"rank {k:,}; {len(lines):,} of {len(f.defs):,} symbols shown"
        chosen.append(Item(quote_name(f.rel), why, round(f.rank, 6), parts=parts))
        if len(lines) < len(f.defs):
            n = len(f.defs) - len(lines)
            what = f"{quote_name(f.rel)}: {n:,} symbols"
            left_out.append(Item(what, "lower scores than the budget took"))
    ss = m.scanset
    for reason, n in sorted(ss.skipped.items()):
        left_out.append(Item(f"{n:,} file(s)", f"not mapped: {reason}"))
    if ss.truncated:
        left_out.append(Item("more files", "not mapped: past --max-files (shallowest first)"))
    return Explanation("ctx-repomap", summary, budget, chosen, left_out)
