"""The literal prefilter of ``--grep``: byte strings one of which every match must contain.

``required_literals`` reads the pattern with Python's own regex parser (``re._parser``, a
private module: on a Python without it, or a pattern it cannot read, the answer is None and
the search runs on the regex alone -- slower, never wrong). It handles what grep patterns
mostly are: a literal run somewhere in the pattern, or an alternation whose every branch has
one; failing that, a mandatory short literal or small character class. ``iter_hits`` then
finds candidate lines with ``bytes.find`` and runs the regex on them only.
"""

from __future__ import annotations

import re
from typing import Any

MAX_CHARSET = 8  # a character class of at most this many characters can be a prefilter


def required_literals(pattern: str, ignore_case: bool = False) -> list[bytes] | None:
    """UTF-8 needles one of which every match of PATTERN contains, or None if unknown.

    Handles what grep patterns mostly are: a literal run (3+ bytes) somewhere in the pattern
    (``test_\\w+ FAILED`` needs `` FAILED``), or an alternation whose every branch has one
    (``FAILED|Error``). Without a long literal, a mandatory short literal or small character
    class serves (``[QZ]{3,}`` needs ``Q`` or ``Z``). With IGNORECASE the needles are
    lowercase ASCII (None otherwise).
    """
    try:
        from re import _constants as sc
        from re import _parser as sp
    except ImportError:  # pragma: no cover - another Python layout
        return None
    try:
        parsed = sp.parse(pattern, re.IGNORECASE if ignore_case else 0)
    except (re.error, RecursionError, OverflowError, ValueError):
        return None
    icase = bool(parsed.state.flags & re.IGNORECASE)
    items = list(parsed.data)
    # "(A|B)" -> "A|B": descend through a lone group without flag changes.
    while len(items) == 1 and items[0][0] is sc.SUBPATTERN:
        _group, add, delete, sub = items[0][1]
        if add or delete:
            return None
        items = list(sub.data if hasattr(sub, "data") else sub)
    if len(items) == 1 and items[0][0] is sc.BRANCH:
        branches = [list(b.data if hasattr(b, "data") else b) for b in items[0][1][1]]
    else:
        branches = [items]
    out: set[str] = set()
    for branch in branches:
        needles = _branch_needles(branch, sc)
        if needles is None:
            return None
        if icase:
            if not all(n.isascii() for n in needles):
                return None
            needles = [n.lower() for n in needles]
        out.update(needles)
    return sorted(n.encode("utf-8") for n in out)


def _usable(needles: list[str]) -> bool:
    return bool(needles) and all(n and "\n" not in n and "\ufffd" not in n for n in needles)


def _charset(op: Any, arg: Any, sc: Any) -> list[str] | None:
    """The characters a mandatory one-character item can match (None: too many/unknown)."""
    if op is sc.LITERAL:
        return [chr(arg)]
    if op is sc.IN:
        chars: list[str] = []
        for op2, a2 in arg:
            if op2 is sc.LITERAL:
                chars.append(chr(a2))
            elif op2 is sc.RANGE and a2[1] - a2[0] < MAX_CHARSET:
                chars.extend(chr(c) for c in range(a2[0], a2[1] + 1))
            else:  # NEGATE, CATEGORY, big ranges
                return None
        return sorted(set(chars)) if 0 < len(set(chars)) <= MAX_CHARSET else None
    if op in (sc.MAX_REPEAT, sc.MIN_REPEAT) or op is getattr(sc, "POSSESSIVE_REPEAT", None):
        low, _high, sub = arg
        sub = list(sub.data if hasattr(sub, "data") else sub)
        if low >= 1 and len(sub) == 1:
            return _charset(sub[0][0], sub[0][1], sc)
    return None


def _branch_needles(branch: list, sc: Any) -> list[str] | None:
    best = ""
    sets: list[list[str]] = []
    run: list[str] = []
    for op, arg in [*branch, (None, None)]:
        if op is sc.LITERAL:
            run.append(chr(arg))
            continue
        if run:
            lit = "".join(run)
            if len(lit) > len(best):
                best = lit
            sets.append([lit])
            run = []
        if op is not None:
            chars = _charset(op, arg, sc)
            if chars is not None:
                sets.append(chars)
    if len(best.encode("utf-8")) >= 3 and _usable([best]):
        return [best]
    sets = [s for s in sets if _usable(s)]
    if not sets:
        return None
    return min(sets, key=lambda s: (len(s), -min(len(n) for n in s)))
