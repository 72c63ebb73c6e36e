"""Render a ranked map as terse text that fits a token budget exactly.

The text is grouped by file in rank order; under each ``path:`` header come the chosen
symbols in line order, one line each, as ``grep -n`` would show them: the line number, a
colon, and the declaration's first line, shortened (``self`` and visibility words such as
``public``/``export``/``pub`` dropped, long parameter lists cut with an ellipsis, never
inside the name; MAX_SIG characters at 1,000 tokens, more at larger budgets)::

    ctxtools/store.py:
    12:class HandleStore
    42:  def put(stream, name)

A method is indented under its class, and choosing a method brings its class line along.
Files without symbols (manifests, READMEs) appear as bare paths. (This layout costs about a
quarter fewer tokens than ``  def put(stream, name)  :42``: more symbols per budget.)

Which symbols: every definition is an *item* whose priority is ``rank ** RANK_EXP``
(the exponent flattens the steep rank curve) divided by ``(j + 1) ** BREADTH`` for the
j-th best definition of that file, so the map shows the top few symbols of many files
before it shows everything of one file. The budget is met by counting the actual rendered
text with the run's ruler: a binary search finds the longest prefix of the item order
whose text fits, then later items that still fit are added greedily (by name only when
the full line does not fit). The text is never over the budget; with enough symbols it
lands within a line of it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxtools.source.scan.common import Definition

BREADTH = 0.6
RANK_EXP = 0.3
MAX_SIG = 30  # characters of a signature shown at budgets up to 1,000 tokens ...
MAX_SIG_LIMIT = 80  # ... growing by one per 100 tokens above that, up to this
FILL_TRIES = 400  # renders spent on greedy filling after the binary search
FILL_WINDOW = 1500  # items looked at for greedy filling
CLASS_KINDS = frozenset(
    {"class", "struct", "interface", "enum", "trait", "impl", "type", "record", "object"}
)

_WS_RE = re.compile(r"\s+")
_MODIFIERS_RE = re.compile(
    r"^(?:(?:public|private|protected|internal|static|final|abstract|synchronized|native"
    r"|default|export|declare|readonly|override|sealed|non-sealed|transient|volatile"
    r"|pub(?:\([^)]*\))?)\s+)+"
)
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

    @property
    def shown(self) -> str:
        """The path as the map prints it (``ctxtools.quoting``: a name with a newline is
        quoted and stays on its line)."""
        from ctxtools.quoting import quote_name

        return quote_name(self.rel)


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
    bare = _MODIFIERS_RE.sub("", sig, count=1)
    if name in bare:
        sig = bare  # visibility and storage words cost tokens and say little in a map
    if kind in ("variable", "const") and " = " in sig:
        sig = sig.split(" = ", 1)[0]  # the name (and type), not the value
    if len(sig) > max_len:
        sig = _cut_signature(sig, name, max_len)
    return sig


# var extname = path.extname, const { a } = b.c, X = Y.Z: a module-level name for
# something defined elsewhere
_ALIAS_RE = re.compile(
    r"(?:export\s+)?(?:(?:var|let|const|val|local)\s+)?[\w$]+\s*(?::[^=]*)?=\s*"
    r"[\w$]+(?:\s*(?:\.|::|->)\s*[\w$]+)+\s*;?"
)


def is_alias(d: Definition) -> bool:
    """Whether definition D only names something defined elsewhere
    (``var extname = path.extname``): among equally used definitions it comes last."""
    return d.kind in ("variable", "const") and _ALIAS_RE.fullmatch(d.signature) is not None


def _word(c: str) -> bool:
    return c.isalnum() or c in "_$"


def _cut_signature(sig: str, name: str, max_len: int) -> str:
    """SIG cut to about MAX_LEN characters at a token boundary, never into the name nor
    into any other word (``class NotFoundError(…``, not ``(InputErro…``)."""
    name_end = sig.find(name) + len(name)
    i = max(max_len - 1, name_end)
    if i >= len(sig):
        return sig
    if _word(sig[i]) and _word(sig[i - 1]):  # the limit falls inside a word: before it
        while i > name_end and _word(sig[i - 1]):
            i -= 1
    cut = sig[:i]
    pos = max(cut.rfind(", "), cut.rfind(" "))
    if pos > name_end:
        cut = cut[:pos]
    cut = cut.rstrip(" ,")
    if cut.endswith(("::", ".")):  # Sinatra::Base cut after Sinatra
        cut = cut.rstrip(".:")
    if len(cut) < name_end:
        cut = sig[:name_end]
    return cut + "…"


class MapLayout:
    """The item order of a ranked map and the rendering of any selection of items."""

    def __init__(
        self,
        files: list[RankedFile],
        query_idents: set[str] | None = None,
        limit: int | None = None,
        max_sig: int = MAX_SIG,
    ):
        self.files = files
        self.max_sig = max_sig
        self.query_idents = query_idents or set()
        self.items: list[tuple[int, int]] = []  # (file position, def index or -1)
        self._lines: dict[tuple[int, int], str] = {}
        self._parents: dict[int, list[int]] = {}
        self._order(limit)

    def parents(self, fpos: int) -> list[int]:
        p = self._parents.get(fpos)
        if p is None:
            p = self._parents[fpos] = _parents(self.files[fpos].defs)
        return p

    def _order(self, limit: int | None) -> None:
        """Items by priority. With LIMIT, only the first LIMIT items are wanted: files come
        in rank order and a file's best item has its rank as priority, so once LIMIT items
        beat the next file's rank, no later file can place an item."""
        keyed = []
        top: list[float] = []  # min-heap of the best LIMIT priorities so far
        boost = self.query_idents
        self.reach = len(self.files)  # the files looked at: the first REACH
        for fpos, f in enumerate(self.files):
            if limit is not None and len(top) >= limit and top[0] > f.rank**RANK_EXP:
                self.reach = fpos
                break
            if not f.defs:
                if f.manifest:
                    keyed.append((-(f.rank**RANK_EXP), fpos, 0, (fpos, -1)))
                    _push(top, f.rank**RANK_EXP, limit)
                continue
            scores = f.scores
            defs = f.defs
            top_pri = f.rank**RANK_EXP
            order = sorted(
                range(len(defs)),
                key=lambda k: (
                    -(scores[k] * (10.0 if boost and defs[k][1].lower() in boost else 1.0)),
                    is_alias(defs[k]),
                    defs[k][4] is not None,
                    defs[k][2],
                    k,
                ),
            )
            for j, k in enumerate(order):
                pri = top_pri / (j + 1) ** BREADTH
                if limit is not None and len(top) >= limit and pri < top[0]:
                    break
                keyed.append((-pri, fpos, defs[k][2], (fpos, k)))
                _push(top, pri, limit)
        keyed.sort(key=lambda t: t[:3])
        if limit is not None:
            del keyed[limit:]
        self.items = [t[3] for t in keyed]

    def _line(self, fpos: int, k: int, compact: bool = False) -> str:
        key = (fpos, k)
        if compact:
            line = self._line(fpos, k)
            name = self.files[fpos].defs[k][1]
            head, colon, sig = line.partition(":")
            at = sig.find(name)
            return head + colon + (sig[: at + len(name)] if at >= 0 else sig)
        line = self._lines.get(key)
        if line is None:
            f = self.files[fpos]
            kind, name, lineno, sig = f.defs[k][:4]
            depth = 0
            parents = self.parents(fpos)
            p = parents[k]
            while p >= 0 and depth < 3:
                depth += 1
                p = parents[p]
            line = f"{lineno}:" + "  " * depth + short_signature(kind, name, sig, self.max_sig)
            self._lines[key] = line
        return line

    def render(
        self,
        selection: list[tuple[int, int]],
        header: str = "",
        compact: set[tuple[int, int]] | frozenset = frozenset(),
    ) -> str:
        """The text of SELECTION (items), with the items in COMPACT shown by name only."""
        by_file: dict[int, set[int]] = {}
        for fpos, k in selection:
            chosen = by_file.setdefault(fpos, set())
            if k >= 0:
                parents = self.parents(fpos)
                while k >= 0 and k not in chosen:
                    chosen.add(k)
                    k = parents[k]
        lines = [header] if header else []
        for fpos in sorted(by_file):
            f = self.files[fpos]
            chosen = by_file[fpos]
            if not chosen:
                lines.append(f.shown)
                continue
            lines.append(f.shown + ":")
            for k in sorted(chosen, key=lambda k, f=f: (f.defs[k][2], k)):
                lines.append(self._line(fpos, k, (fpos, k) in compact))
        return "\n".join(lines) + "\n" if lines else ""


def _push(heap: list[float], value: float, limit: int | None) -> None:
    import heapq

    if limit is None:
        return
    if len(heap) < limit:
        heapq.heappush(heap, value)
    elif value > heap[0]:
        heapq.heapreplace(heap, value)


def _parents(defs: tuple) -> list[int]:
    """For each definition, the index of the class-like definition it sits in, or -1."""
    classes: dict[str, list[int]] = {}
    for m, e in enumerate(defs):
        if e.kind in CLASS_KINDS:
            classes.setdefault(e.name, []).append(m)
    out = []
    for k, d in enumerate(defs):
        scope = d.scope
        parent = -1
        if scope:
            scope = scope.rsplit(".", 1)[-1].rsplit("::", 1)[-1]
        if scope and scope in classes:
            for m in classes[scope]:
                e = defs[m]
                if m == k or e.line > d.line:
                    continue
                if parent < 0 or e.end_line is None or e.end_line >= d.line:
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
    # How many leading items of the layout the outcome depended on, and the search's
    # upper bound: the same lines for those items, with the same budget, header and ruler,
    # fit the same way (see ``layout_digest``).
    examined: int = 0
    bound: int = 0


def signature_width(budget: int) -> int:
    """How many characters of a signature to show at BUDGET tokens: terse for small maps
    (breadth first), longer when there is room."""
    return max(MAX_SIG, min(MAX_SIG_LIMIT, MAX_SIG + (budget - 1000) // 100))


def fit(layout: MapLayout, budget: int, count: Callable[[str], int], header: str = "") -> Fitted:
    """The fullest rendering of LAYOUT whose token count is at most BUDGET."""
    if header and count(header + "\n") > budget:
        header = ""
    items = layout.items
    best_text = layout.render([], header)
    best_tokens = count(best_text) if best_text else 0
    lo, hi = 0, min(len(items), budget)
    bound = hi
    examined = 0
    while lo < hi:
        mid = (lo + hi + 1) // 2
        examined = max(examined, mid)
        text = layout.render(items[:mid], header)
        n = count(text)
        if n <= budget:
            lo, best_text, best_tokens = mid, text, n
        else:
            hi = mid - 1
    selection = list(items[:lo])
    # Greedy fill: later items that still fit (shorter lines, files already shown); an item
    # whose full line does not fit may still fit by name only.
    compact: set[tuple[int, int]] = set()
    tries = 0
    shown = {fpos for fpos, _ in selection}
    for at, item in enumerate(items[lo : lo + FILL_WINDOW], lo):
        slack = budget - best_tokens
        if slack < 2 or tries >= FILL_TRIES:
            break
        examined = max(examined, at + 1)
        fpos, k = item
        header_cost = 0 if fpos in shown else count(layout.files[fpos].shown + ":\n")
        variants = [False] if k < 0 else [False, True]
        for short in variants:
            line = layout.files[fpos].shown if k < 0 else layout._line(fpos, k, short)
            if count(line + "\n") + header_cost > slack + 1:
                continue
            tries += 1
            trial = selection + [item]
            trial_compact = compact | {item} if short else compact
            text = layout.render(trial, header, trial_compact)
            n = count(text)
            if n <= budget:
                selection, compact, best_text, best_tokens = trial, trial_compact, text, n
                shown.add(fpos)
                break
    return Fitted(best_text, best_tokens, selection, examined, bound)


def layout_digest(layout: MapLayout, examined: int, bound: int, header: str) -> str:
    """A digest of everything ``fit`` saw of LAYOUT when it looked at the first EXAMINED
    items with upper bound BOUND: the items, their files' paths and positions, what their
    lines are made of (and those of the classes they bring along), the signature width,
    the header, and whether the items ended there."""
    import marshal

    import xxhash

    items = layout.items
    parts: list = [examined, bound, len(items) == examined, header, layout.max_sig]
    files = layout.files
    for fpos, k in items[:examined]:
        f = files[fpos]
        if k < 0:
            parts.append((fpos, k, f.rel, f.manifest))
            continue
        # An item's line (full or by name) follows from its definition's kind, name, line
        # number and signature, and its depth: the chain of classes it sits in, which
        # render brings along. Those, not the rendered lines, are what is hashed.
        chain = []
        parents = layout.parents(fpos)
        p = k
        while p >= 0 and len(chain) <= len(parents):
            chain.append((p, f.defs[p][:4]))
            p = parents[p]
        parts.append((fpos, k, f.rel, chain))
    return xxhash.xxh3_128_hexdigest(marshal.dumps(parts, 2))  # 2: by value only
