"""Callees: a fix is often in what the code the task matched calls.

``raise_callees`` gives each definition the best chunks of a ranking name (a call, a
reference) a share of the naming chunk's score, for ``retrieval.rank`` (its
``CALLEE_TOP``, ``CALLEE_DOCS`` and ``CALLEE_SHARE``).
"""

from __future__ import annotations

import re


def raise_callees(docs: list, top: int, ndocs: int, share: float) -> None:
    """The definitions the best chunks name rank up: a fix is often in what the matching
    code calls."""
    best = sorted(
        ((s, d.label, k, d) for d in docs for k, s in enumerate(d.scores) if s > 0),
        key=lambda t: (-t[0], t[1], t[2]),
    )[:top]
    if not best:
        return
    by_name: dict[str, list[tuple]] = {}  # name -> (doc, chunk index) of its definitions
    for d in sorted(docs, key=lambda d: (-d.score, d.label))[:ndocs]:
        for k, ch in enumerate(d.chunks):
            if ch.kind == "def" and len(ch.name) >= 4:
                by_name.setdefault(ch.name, []).append((d, k))
    word = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
    for s, _lab, k, d in best:
        ch = d.chunks[k]
        text = "\n".join(d.lines[ch.start - 1 : ch.end])
        for name in dict.fromkeys(word.findall(text)):
            targets = by_name.get(name)
            if not targets or name == ch.name or len(targets) > 3 or not _distinctive(name):
                continue
            for td, tk in targets:
                if td is d and tk == k:
                    continue
                gain = share * s * td.prior / len(targets)
                td.scores[tk] += gain
                if td.parts:
                    td.parts[tk][3] += gain


def _distinctive(name: str) -> bool:
    """A name that says which definition it means: compound, or long, and not one of the
    built-in types' method names."""
    from ctxtools.source.common_names import COMMON

    if name in COMMON:
        return False
    core = name.strip("_")
    return "_" in core or any(c.isupper() for c in core[1:]) or len(core) >= 8
