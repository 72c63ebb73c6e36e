"""From ranked files to what a pack shows of each, under a token budget.

In four steps:

1. **Named files first**: each file the user named gets its best chunk (else its
   signatures), and the room of its path line is held for it.
2. **The best chunks of the whole ranking**: every chunk of the best ``VALUE_DOCS`` files
   in one order, by its relevance (its own score, which holds its share of its file's),
   each shown with what makes it readable: the file's import lines (the first
   ``IMPORT_DOCS`` files), the line of the class a method belongs to, the first line of
   the definition a part belongs to. A file grows toward whole only as far as its chunks
   outrank every other file's. A chunk over ``MAX_CHUNK_SHARE`` of the budget is
   windowed around its best lines. This fills up to ``FILL`` of the budget -- or stops
   at the **floor**: a chunk whose relevance is under ``FLOOR`` of the floor's reference
   (the ``FLOOR_REF``-th best chunk's, or ``FLOOR_CAP`` of the best's, whichever is
   higher, among the chunks of files no ticket of the task reached) is worth too little
   for its tokens, and the pack ends there with budget to spare (the budget is a
   ceiling, not a target; ``fill`` takes them all the same).
3. **Signatures**: the next files, as the lines that declare their definitions (real
   lines, real numbers), ``SIG_LINES`` a file and "N more".
4. **Paths**: the next ones after that, as a list of paths.

A file the user named is never left out silently: if none of its lines fit it is listed
by path; ``Plan.unlisted_named`` says which named files did not even get that.
Costs come from ``Costs``, which counts each line with the caller's ruler as the pack
renders it (gutter and all), so the plan's sum is a close upper bound of the real count.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ctxtools.quoting import numbered
from ctxtools.retrieval.rank import Doc

FILL = 0.97
MAX_CHUNK_SHARE = 0.3
IMPORT_DOCS = 3
SIG_LINES = 12
SIG_DOCS = 20
PATH_DOCS = 30
HEADER_TOKENS = 30  # a file block's header and fences, before it is rendered
SEPARATOR_TOKENS = 3
WINDOW_HALF = 12
BRIDGE_BLANKS = 3  # a gap of at most this many blank lines is shown, not elided
MAX_LINE_CHARS = 500
PATH_TOKENS = 4  # per listed path, besides its own tokens
VALUE_DOCS = 100
MAX_MISSES = 200  # chunks in a row that do not fit before the planner gives up
# The floor, calibrated on the tuning set (bench/pack_quality/tune.py: 42 bug fixes in seven
# repositories of 1,500+ files, and the 22 SWE-bench Lite dev tasks): a chunk under 0.27 of
# the reference's relevance (the best chunk's then; FLOOR_REF below), or past the 250 best
# of the whole ranking, is worth too little for its tokens. With a 100k budget the files
# then held a median 33,500 tokens on dev and 38,200 on the tuning set and showed 0.91 and
# 0.78 of a fix's lines (0.25/200: 38,000 and 38,500 tokens for 0.91 and 0.75; 0.30/250:
# 24,800 and 32,500 for 0.89 and 0.77). Tried and left off: a file's j-th chunk discounted
# by 0.8 ** j (tuning set 16k 0.67 -> 0.60), the best chunk of each of the top 5 or 10 files
# kept (no change). Without fill the files also stop at FLOOR_TOKENS (the ceiling: a
# relative floor never binds where many chunks are alike).
FLOOR = 0.27
FLOOR_RANK = 250
# The floor is measured against the 5th best chunk, or half the best, whichever is
# higher -- not the best alone: a task that writes one function's name lifts that chunk far
# above the rest (1.00 against 0.27 for the next), and 0.27 of it cut the callers and the
# other files the fix was in (typescript-eslint 01efcbf498b4: a 16k pack of 3,596 tokens,
# the fix's files at 0.23 and 0.20 of the best). Half the best keeps the floor's point
# where one chunk stands out of a long tail of weak ones. Chosen on the five tuning lists
# (dev, tune, tune2, tune3, the large list: ``tune.py --history --variant``, 226 fixes at
# 8k, 16k and 32k): the 2nd, 3rd and 5th best each raised rows and lowered none (the 5th:
# 18 of 678 up; the large list 0.559 / 0.636 / 0.668 -> 0.592 / 0.696 / 0.737 of a fix's
# lines, every hunk 36 / 43 / 48% -> 38 / 45 / 52%); half the best changed no row there
# (0.6 of it lowered one); dev's median files at 32k 26,790 -> 29,721 tokens.
FLOOR_REF = 5
FLOOR_CAP = 0.5
FLOOR_TOKENS = 36_000  # without fill, the files hold at most this many tokens (0: no ceiling)

# The reference is read among the chunks of files no ticket of the task reached (all of
# them when every candidate's file was): the functions past commits citing the task's
# tickets changed (``rank.REF_BONUS``) rise, their files' other chunks rise with the files'
# scores, and the 5th best rose with them past chunks of the fix's own files. Qiskit
# 0e44c5e38066 (the large ticket tuning list): the reference 441.6 -> 479.5, the floor
# 119.2 -> 129.5, the fix's second file's chunk at 121.3, its 32k pack 1.00 -> 0.12 of the
# fix's lines at 22,000 tokens; with the reference read without them, 1.00 again.
# ``tune.py --history --variant`` on the 70 fixes of both ticket lists and the 38 tasks of
# the other six lists that cite a ticket (8k, 16k, 32k): that row up, none down.
FLOOR_UNLINKED = True


def floor_ref(cands: list) -> float:
    """The floor's reference among CANDS ((relevance, label, index, doc), best first): the
    ``FLOOR_REF``-th best relevance or ``FLOOR_CAP`` of the best, whichever is higher, among
    the chunks of files no ticket reached when some are (``FLOOR_UNLINKED``)."""
    pool = cands
    if FLOOR_UNLINKED:  # (each file asked once, not once a chunk)
        docs = {c[1]: c[3] for c in cands}
        linked = {lab for lab, d in docs.items() if any(getattr(d, "tickets", ()))}
        if linked:
            pool = [c for c in cands if c[1] not in linked] or cands
    return max(pool[min(FLOOR_REF, len(pool)) - 1][0], FLOOR_CAP * pool[0][0])


_SIG_KINDS = frozenset(
    {"function", "method", "class", "interface", "struct", "trait", "impl", "enum", "type"}
)


def cut(line: str) -> str:
    """A line as the pack shows it: at most MAX_LINE_CHARS characters."""
    if len(line) <= MAX_LINE_CHARS:
        return line
    return f"{line[:MAX_LINE_CHARS]}…[+{len(line) - MAX_LINE_CHARS} chars]"


def by_relevance(cands: list[tuple]) -> list[tuple]:
    """CANDS, tuples (relevance, label, index, ...), most relevant first; ties: the label,
    then the index (a chunk's, in line order): the one order a pack's chunks are taken in
    and ctx-excerpt's windows are kept in under a budget."""
    return sorted(cands, key=lambda t: (-t[0], t[1], t[2]))


def doc_imports(doc: Doc) -> tuple[int, ...]:
    """DOC's import lines (found on first use: most ranked files are never shown)."""
    if doc.imports is None:
        from ctxtools.retrieval.chunks import CPP_LANGUAGES, import_lines
        from ctxtools.source.scan import language_for

        cpp = language_for(doc.label) in CPP_LANGUAGES
        doc.imports = import_lines(doc.lines, preprocessor=cpp)
    return doc.imports


class Costs:
    """Tokens of a doc's lines as rendered (``excerpt.render.numbered``), counted once each."""

    def __init__(self, count: Callable[[str], int]):
        self.count = count
        self._lines: dict[str, list[int | None]] = {}

    def line(self, doc: Doc, n: int) -> int:
        cache = self._lines.get(doc.label)
        if cache is None:
            cache = self._lines[doc.label] = [None] * (len(doc.lines) + 1)
        c = cache[n]
        if c is None:
            c = cache[n] = self.count(numbered(n, cut(doc.lines[n - 1])) + "\n")
        return c

    def lines(self, doc: Doc, numbers) -> int:
        return sum(self.line(doc, n) for n in numbers)


@dataclass
class Shown:
    """What the pack shows of one file: its line numbers, the chunks they came from, and
    how (``whole``, ``definitions``, ``signatures``)."""

    doc: Doc
    lines: set[int] = field(default_factory=set)
    chunks: list[int] = field(default_factory=list)
    how: str = "definitions"
    more: int = 0  # signatures not shown
    cost: int = 0

    def spans(self) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        for n in sorted(self.lines):
            if out and n == out[-1][1] + 1:
                out[-1] = (out[-1][0], n)
            else:
                out.append((n, n))
        return out


@dataclass
class Plan:
    shown: list[Shown]  # in rank order
    paths: list[str]  # listed by path only, in rank order
    unlisted_named: list[str]  # named files with not even a path line
    left: int  # ranked files neither shown nor listed
    used: int = 0
    under: int = 0  # chunks left out because their relevance was under the floor
    stopped: str = ""  # "floor": the pack ended under the floor, with budget to spare;
    # "ceiling": at FLOOR_TOKENS, with chunks above the floor and budget left


class _Planner:
    def __init__(
        self,
        docs: list[Doc],
        budget: int,
        costs: Costs,
        top_terms: list[str],
        fill: bool = False,
        floor: float | None = None,
    ):
        self.docs = docs
        self.fill = fill
        self.floor = FLOOR if floor is None else floor
        self.under = 0  # chunks left out under the floor
        self.stopped = ""  # "floor" when the floor ended the pack before the budget
        self.ceiling = False  # BUDGET is the files' ceiling (FLOOR_TOKENS), not the pack's
        self.budget = budget
        self.costs = costs
        self.used = 0
        self.shown: dict[str, Shown] = {}
        self.order: list[str] = []
        self.top_terms = top_terms

    # -- costs --------------------------------------------------------------------------
    def _extra(self, sh: Shown, numbers) -> tuple[set[int], int]:
        new = {n for n in numbers if n not in sh.lines}
        if not new:
            return new, 0
        cost = self.costs.lines(sh.doc, new)
        # A new run of lines costs a separator line, roughly.
        cost += SEPARATOR_TOKENS * _new_runs(sh.lines, new)
        return new, max(cost, 0)

    def _context(self, doc: Doc, k: int, first: bool) -> set[int]:
        """The lines that make chunk K readable on its own."""
        ch = doc.chunks[k]
        extra: set[int] = set()
        if first and len(self.shown) < IMPORT_DOCS:
            extra.update(doc_imports(doc))
        if ch.head:
            extra.add(ch.head)
        p = ch.parent
        while p >= 0:
            parent = doc.chunks[p]
            extra.add(parent.line or parent.start)
            p = parent.parent
        return extra

    def _window(self, doc: Doc, k: int, room: int) -> set[int]:
        """The best lines of a chunk too long to show whole, within ROOM tokens."""
        ch = doc.chunks[k]
        terms = self.top_terms
        best = []
        for n in range(ch.start, ch.end + 1):
            low = doc.lines[n - 1].lower()
            s = sum(1 for t in terms if t in low)
            if s:
                best.append((-s, n))
        best.sort()
        out = {ch.line or ch.start}
        for _s, n in best:
            win = set(range(max(ch.start, n - WINDOW_HALF), min(ch.end, n + WINDOW_HALF) + 1))
            if self.costs.lines(doc, out | win) > room:
                break
            out |= win
        if len(out) == 1:
            out |= set(range(ch.start, min(ch.end, ch.start + 2 * WINDOW_HALF) + 1))
        return out

    # -- adding -------------------------------------------------------------------------
    def add(self, doc: Doc, k: int, limit: int) -> bool:
        """Show chunk K of DOC if it fits within LIMIT tokens in all; whether it did."""
        sh = self.shown.get(doc.label)
        first = sh is None
        if first:
            sh = Shown(doc)
        ch = doc.chunks[k]
        numbers = set(range(ch.start, ch.end + 1)) | self._context(doc, k, first)
        head = HEADER_TOKENS if first else 0
        new, cost = self._extra(sh, numbers)
        if cost > MAX_CHUNK_SHARE * self.budget and ch.kind != "gap":
            room = int(MAX_CHUNK_SHARE * self.budget)
            numbers = self._window(doc, k, room) | self._context(doc, k, first)
            new, cost = self._extra(sh, numbers)
        if not new:
            return False
        new, cost = self._extra(sh, new | _bridges(doc, sh.lines, new))
        if self.used + head + cost > limit:
            return False
        sh.lines |= new
        sh.chunks.append(k)
        sh.cost += head + cost
        self.used += head + cost
        if first:
            self.shown[doc.label] = sh
            self.order.append(doc.label)
        return True

    def named_first(self) -> None:
        """Each file the user named gets its best chunk, else its signatures, before
        anything is widened: named files degrade, they are not crowded out."""
        limit = int(self.budget * FILL)
        named = [d for d in self.docs if d.named]
        share = limit // max(len(named), 1)
        for d in named:
            if not d.chunks:
                continue
            best = max(range(len(d.chunks)), key=lambda k: (d.scores[k], -k))
            if not self.add(d, best, min(limit, self.used + share)):
                self.signatures([d], limit, max_docs=1)

    def candidates(self) -> list[tuple[float, str, int, Doc]]:
        """Every chunk of the best ``VALUE_DOCS`` files with a positive score as (relevance,
        label, index, doc), most relevant first. Relevance is the chunk's own score: its
        words, what points at it, its share of its file's score."""
        docs = [d for d in self.docs if d.score > 0 or d.named][:VALUE_DOCS]
        return by_relevance(
            [(s, d.label, k, d) for d in docs for k, s in enumerate(d.scores) if s > 0]
        )

    def by_value(self, limit_share: float = FILL) -> None:
        """Chunks of the whole ranking, best first (``candidates``), each with what makes it
        readable, while they fit; a file grows toward whole only as far as its own chunks
        outrank every other file's. Unless ``fill``, only the chunks above the floor are
        taken: a relevance of at least ``floor`` of the reference's (``FLOOR_REF``,
        ``FLOOR_CAP``), among the ``FLOOR_RANK`` most relevant, within the files' ceiling
        (``FLOOR_TOKENS``, when ``plan`` made it the budget): the budget is a ceiling, not
        a target. The chunks left out by the floor or the ceiling are counted in
        ``self.under``."""
        cands = self.candidates()
        if not cands:
            return
        ref = floor_ref(cands)
        floor = 0.0 if self.fill else self.floor * ref
        limit = int(self.budget * limit_share)
        ceiling = self.ceiling
        above = self._above(cands, floor)
        misses = 0
        full = False  # the budget (or the ceiling), not the floor, ended the pack
        capped = 0  # chunks above the floor left out at the ceiling
        for at in range(len(cands)):
            if self.used >= limit or misses >= MAX_MISSES:
                full = True
                if ceiling:
                    capped += sum(1 for a in above if a >= at)
                break
            if at not in above:
                continue
            _rel, lab, k, d = cands[at]
            sh = self.shown.get(lab)
            ch = d.chunks[k]
            if sh is not None and all(n in sh.lines for n in range(ch.start, ch.end + 1)):
                continue
            if self.add(d, k, limit):
                misses = 0
            else:
                misses += 1
                capped += ceiling  # above the floor, but past the files' ceiling
        if capped:
            self.under = len(cands) - len(above) + capped
            self.stopped = "ceiling"
        elif not self.fill and not full and len(above) < len(cands):
            self.under = len(cands) - len(above)
            self.stopped = "floor"
        for sh in self.shown.values():
            if len(sh.lines) >= len(sh.doc.lines):
                sh.how = "whole"

    def _above(self, cands: list, floor: float) -> set[int]:
        """The places in CANDS of the chunks above the floor (all of them with ``fill``)."""
        if self.fill:
            return set(range(len(cands)))
        return {at for at, c in enumerate(cands[:FLOOR_RANK]) if c[0] >= floor}

    def signatures(self, docs: list[Doc], limit: int, max_docs: int = SIG_DOCS) -> None:
        n_docs = 0
        for doc in docs:
            if n_docs >= max_docs or self.used >= limit:
                return
            if doc.label in self.shown:
                continue
            lines = sorted(
                {d[2] for d in doc.defs if d[0] in _SIG_KINDS and 1 <= d[2] <= len(doc.lines)}
            )
            if not lines:
                continue
            keep = lines[:SIG_LINES]
            sh = Shown(doc, how="signatures")
            _new, cost = self._extra(sh, keep)
            cost += HEADER_TOKENS
            while keep and self.used + cost > limit:
                keep = keep[: len(keep) // 2]
                _new, cost = self._extra(sh, keep)
                cost += HEADER_TOKENS
            if not keep:
                continue
            sh.lines = set(keep)
            sh.more = len(lines) - len(keep)
            sh.cost = cost
            self.used += cost
            self.shown[doc.label] = sh
            self.order.append(doc.label)
            n_docs += 1


def _bridges(doc: Doc, old: set[int], new: set[int]) -> set[int]:
    """The lines that join NEW's runs to each other and to OLD's, where an elision mark
    would cost as much as the lines it hides: a gap of one line, or of blank lines only
    (up to BRIDGE_BLANKS). A run that ends before a blank line gets that line too: it
    says that the definition ends there."""
    lines = doc.lines
    n_lines = len(lines)
    out: set[int] = set()

    def shown(x: int) -> bool:
        return x in new or x in old

    for n in new:
        if not shown(n + 1) and n < n_lines:
            j = n + 1
            while j <= n_lines and j - n <= BRIDGE_BLANKS and not lines[j - 1].strip():
                j += 1
            if j <= n_lines and (shown(j) or j == n + 1 and shown(j + 1)):
                out.update(range(n + 1, j + (0 if shown(j) else 1)))
            elif not lines[n].strip():
                out.add(n + 1)
        if not shown(n - 1) and n > 1:
            j = n - 1
            while j >= 1 and n - j <= BRIDGE_BLANKS and not lines[j - 1].strip():
                j -= 1
            if j >= 1 and (shown(j) or j == n - 1 and shown(j - 1)):
                out.update(range(j + (1 if shown(j) else 0), n))
    return out - new - old


def _new_runs(old: set[int], new: set[int]) -> int:
    """How many more runs of consecutive lines OLD | NEW has than OLD (may be negative:
    NEW can join two runs), in time linear in NEW."""
    both = old | new if len(new) < 64 else None

    def inside(x: int) -> bool:
        return x in new or x in old if both is None else x in both

    delta = 0
    for x in new:
        if not inside(x - 1):
            delta += 1  # x starts a run
        if x + 1 in old:
            delta -= 1  # the old run starting at x+1 is now joined
    return delta


def plan(
    docs: list[Doc],
    budget: int,
    costs: Costs,
    *,
    signatures_only: bool = False,
    top_terms: list[str] = (),
    path_cost: Callable[[str], int] | None = None,
    blind: list[str] = (),
    fill: bool = False,
    floor: float | None = None,
) -> Plan:
    """What to show of DOCS (best first) in BUDGET tokens (see the module's docstring);
    BLIND files (that nothing in the task reaches, best first) may follow as paths."""
    ceiling = not fill and not signatures_only and 0 < FLOOR_TOKENS < budget
    if ceiling:  # the files' ceiling: what follows is not worth the reader's attention
        budget = FLOOR_TOKENS
    p = _Planner(docs, budget, costs, list(top_terms), fill=fill, floor=floor)
    p.ceiling = ceiling
    count_path = path_cost or (lambda s: len(s) // 3 + 1)
    if signatures_only:
        p.signatures(docs, int(budget * FILL), max_docs=len(docs))
    else:
        p.named_first()
        # A named file that got nothing keeps the room for its path line.
        held = sum(
            count_path(d.label) + PATH_TOKENS for d in docs if d.named and d.label not in p.shown
        )
        p.used += held
        p.by_value()
        p.signatures([d for d in docs if d.score > 0], int(budget * FILL))
        p.used -= held
    listed: list[str] = []
    top_score = max((d.score for d in docs), default=0.0)
    named_first = [d for d in docs if d.named] + [d for d in docs if not d.named and d.score > 0]
    limit = budget
    for d in named_first:
        if d.label in p.shown:
            continue
        if p.stopped and not d.named and d.score < p.floor * top_score:
            continue  # under the floor: not worth even its path
        if not d.named and len(listed) >= PATH_DOCS:
            continue
        c = count_path(d.label) + PATH_TOKENS
        if p.used + c > limit:
            continue
        listed.append(d.label)
        p.used += c
    for lab in blind if not p.stopped else ():  # under the floor: nothing reached them
        if len(listed) >= PATH_DOCS:
            break
        c = count_path(lab) + PATH_TOKENS
        if p.used + c > limit:
            break
        listed.append(lab)
        p.used += c
    ranks = {d.label: i for i, d in enumerate(docs)}
    ranks.update({lab: len(docs) + i for i, lab in enumerate(blind)})
    listed.sort(key=lambda lab: ranks[lab])
    shown = sorted(p.shown.values(), key=lambda s: ranks[s.doc.label])
    unlisted = [
        d.label for d in docs if d.named and d.label not in p.shown and d.label not in listed
    ]
    left = sum(1 for d in docs if d.label not in p.shown and d.label not in listed)
    left += sum(1 for lab in blind if lab not in listed)
    return Plan(shown, listed, unlisted, left, p.used, p.under, p.stopped)
