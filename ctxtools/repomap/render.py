"""Render a ranked map as terse text that fits a token budget exactly.

The text is grouped by file in rank order; under each ``path:`` header come the chosen
symbols in line order, one line each -- the signature's first line, shortened, then the
line number::

    ctxtools/store.py:
      class HandleStore  :12
        def put(stream, name)  :42

A method is indented under its class, and choosing a method brings its class line along.
Files without symbols (manifests, READMEs) appear as bare paths.

Which symbols: every definition is an *item* whose priority is its file's rank divided by
``(j + 1) ** BREADTH`` for the j-th best definition of that file, so the map shows the top
few symbols of many files before it shows everything of one file. The budget is met by
counting the actual rendered text with the run's ruler: a binary search finds the longest
prefix of the item order whose text fits, then later items that still fit are added
greedily. The text is never over the budget; with enough symbols it lands within a line
of it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

BREADTH = 1.0
MAX_SIG = 64  # characters of a signature shown
FILL_TRIES = 400  # renders spent on greedy filling after the binary search
CLASS_KINDS = frozenset(
    {"class", "struct", "interface", "enum", "trait", "impl", "type", "record", "object"}
)

_WS_RE = re.compile(r"\s+")
_SELF_RE = re.compile(r"\((?:self|cls)(?:\s*:\s*[^,)]*)?(?:,\s*|(?=\)))")


@dataclass
class RankedFile:
    """A file on the map: its rank, its definitions and how much each is referenced."""

    rel: str
    rank: float
    language: str | None
    defs: tuple  # (kind, name, line, signature, scope, end_line), in line order
    scores: list[float]  # per definition
    manifest: bool = False


def short_signature(kind: str, name: str, signature: str, max_len: int = MAX_SIG) -> str:
    """The signature's first line, whitespace collapsed, without a trailing ``{``/``:``
    and a Python ``self``/``cls``, cut at MAX_LEN characters with an ellipsis."""
    sig = _WS_RE.sub(" ", signature.replace("\r", "")).strip()
    if not sig or name not in sig:
        sig = f"{kind} {name}" if kind else name
    sig = sig.removesuffix("{").rstrip()
    if sig.endswith(":") and not sig.endswith("::"):
        sig = sig[:-1].rstrip()
    sig = _SELF_RE.sub("(", sig, count=1)
    if len(sig) > max_len:
        cut = sig[: max_len - 1]
        pos = max(cut.rfind(", "), cut.rfind(" "))
        if pos > len(sig.split(name, 1)[0]) + len(name):
            cut = cut[:pos]
        sig = cut.rstrip(" ,") + "…"
    return sig


class MapLayout:
    """The item order of a ranked map and the rendering of any selection of items."""

    def __init__(self, files: list[RankedFile], query_idents: set[str] | None = None):
        self.files = files
        self.query_idents = query_idents or set()
        self.items: list[tuple[int, int]] = []  # (file position, def index or -1)
        self._lines: dict[tuple[int, int], str] = {}
        self._parents: list[list[int]] = []
        self._order()

    def _order(self) -> None:
        keyed = []
        boost = self.query_idents
        for fpos, f in enumerate(self.files):
            self._parents.append(_parents(f.defs))
            if not f.defs:
                if f.manifest:
                    keyed.append((-f.rank, fpos, 0, (fpos, -1)))
                continue
            order = sorted(
                range(len(f.defs)),
                key=lambda k, f=f: (
                    -(f.scores[k] * (10.0 if f.defs[k][1].lower() in boost else 1.0)),
                    f.defs[k][4] is not None,
                    f.defs[k][2],
                    k,
                ),
            )
            for j, k in enumerate(order):
                pri = f.rank / (j + 1) ** BREADTH
                keyed.append((-pri, fpos, f.defs[k][2], (fpos, k)))
        keyed.sort(key=lambda t: t[:3])
        self.items = [t[3] for t in keyed]

    def _line(self, fpos: int, k: int) -> str:
        key = (fpos, k)
        line = self._lines.get(key)
        if line is None:
            f = self.files[fpos]
            kind, name, lineno, sig = f.defs[k][:4]
            depth = 1
            p = self._parents[fpos][k]
            while p >= 0 and depth < 4:
                depth += 1
                p = self._parents[fpos][p]
            line = "  " * depth + short_signature(kind, name, sig) + f"  :{lineno}"
            self._lines[key] = line
        return line

    def render(self, selection: list[tuple[int, int]], header: str = "") -> str:
        by_file: dict[int, set[int]] = {}
        for fpos, k in selection:
            chosen = by_file.setdefault(fpos, set())
            if k >= 0:
                parents = self._parents[fpos]
                while k >= 0 and k not in chosen:
                    chosen.add(k)
                    k = parents[k]
        lines = [header] if header else []
        for fpos in sorted(by_file):
            f = self.files[fpos]
            chosen = by_file[fpos]
            if not chosen:
                lines.append(f.rel)
                continue
            lines.append(f.rel + ":")
            for k in sorted(chosen, key=lambda k, f=f: (f.defs[k][2], k)):
                lines.append(self._line(fpos, k))
        return "\n".join(lines) + "\n" if lines else ""


def _parents(defs: tuple) -> list[int]:
    """For each definition, the index of the class-like definition it sits in, or -1."""
    classes: dict[str, list[int]] = {}
    for m, e in enumerate(defs):
        if e[0] in CLASS_KINDS:
            classes.setdefault(e[1], []).append(m)
    out = []
    for k, d in enumerate(defs):
        scope = d[4]
        parent = -1
        if scope:
            scope = scope.rsplit(".", 1)[-1].rsplit("::", 1)[-1]
        if scope and scope in classes:
            for m in classes[scope]:
                e = defs[m]
                if m != k and e[2] <= d[2] and (parent < 0 or e[5] is None or e[5] >= d[2]):
                    parent = m
        out.append(parent)
    # No cycles (a scope naming itself through a chain): cut them.
    for k in range(len(out)):
        seen = {k}
        p = out[k]
        while p >= 0:
            if p in seen:
                out[k] = -1
                break
            seen.add(p)
            p = out[p]
    return out


@dataclass
class Fitted:
    text: str
    tokens: int
    selection: list[tuple[int, int]]


def fit(layout: MapLayout, budget: int, count: Callable[[str], int], header: str = "") -> Fitted:
    """The fullest rendering of LAYOUT whose token count is at most BUDGET."""
    if header and count(header + "\n") > budget:
        header = ""
    items = layout.items
    best_text = layout.render([], header)
    best_tokens = count(best_text) if best_text else 0
    lo, hi = 0, min(len(items), budget)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        text = layout.render(items[:mid], header)
        n = count(text)
        if n <= budget:
            lo, best_text, best_tokens = mid, text, n
        else:
            hi = mid - 1
    selection = list(items[:lo])
    # Greedy fill: later items that still fit (shorter lines, files already shown).
    tries = 0
    shown = {fpos for fpos, _ in selection}
    for item in items[lo + 1 :]:
        slack = budget - best_tokens
        if slack < 2 or tries >= FILL_TRIES:
            break
        fpos, k = item
        line = layout.files[fpos].rel if k < 0 else layout._line(fpos, k)
        est = count(line + "\n")
        if fpos not in shown:
            est += count(layout.files[fpos].rel + ":\n")
        if est > slack + 1:
            continue
        tries += 1
        trial = selection + [item]
        text = layout.render(trial, header)
        n = count(text)
        if n <= budget:
            selection, best_text, best_tokens = trial, text, n
            shown.add(fpos)
    return Fitted(best_text, best_tokens, selection)
