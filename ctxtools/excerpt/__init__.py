"""Files windowed around what a task is about, with real line numbers.

A file is not cut at its first N bytes (which routinely loses the function the task is
about): it is cut down to its first lines (package clause, imports), plus windows of lines
around the lines that mention the task's identifiers, each line keeping its real number so
that a model can ask for more by number. When nothing matches, the file's last lines stand
in for the windows.

The pieces, for a library user such as ctx-pack::

    matcher = Matcher(identifiers_from_query(task))      # once per run
    ex = excerpt_text(text_or_bytes, matcher)             # -> Excerpt (spans, lines, scores)
    ex = excerpt_file(path, matcher)                      # files over 512 KB are streamed
    render_excerpt(ex, label)                             # the text ctx-excerpt prints
    fit_budget(items, tokens, ruler.count)                # drop windows, then files, to fit

Many inputs at once (paths, ``ctx:`` handles, bytes; per-file status, one budget over all,
worker processes) as ctx-excerpt runs them: ``ctxtools.excerpt.run.excerpt_sources``.

Matching: a line matches an identifier when the identifier occurs in it as a whole word
(case-sensitive unless ``ignore_case``) -- an *exact* hit -- or when the identifier's words
are a run of the words of a compound name on the line (``verifyJwtToken`` holds ``jwt``;
``verify_token`` and ``verifyToken`` hold each other), compared without regard to case --
a *part* hit. A dotted identifier (``auth.jwt.verify``) matches its whole path.

Scoring: an exact hit weighs 3 (a dotted path 4), a part hit 1, doubled on a line that
defines the name (``def``, ``class``, ``func``, ``fn``, ``function``, a Java method...). A
window scores the sum over the distinct identifiers in it of their best weight there, plus
0.25 for each further line that mentions them (at most 1 per identifier): distinct
identifiers count for more than repeats.

Windows: a window is the ±``window`` lines around one chosen matching line. Windows are
chosen best first (the highest score over the matching lines they would add; a matching
line inside a chosen window starts none), at most ``max_windows`` of them; chosen windows
that overlap or touch are shown merged. A file thus shows at most ``head + max_windows ×
(2 × window + 1)`` lines, and its header says how many matching lines were left out.

Lines are lines between ``\\n`` bytes (as grep and editors number them): a ``\\r`` before the
``\\n`` is not shown, invalid UTF-8 shows as U+FFFD, and neither moves a line number.
A line longer than ``max_line_chars`` is cut and ends with ``…[+N chars]``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import repeat
from typing import BinaryIO, NamedTuple

from ctxtools.fsutil import json_text
from ctxtools.identifiers import compound_parts, is_dotted, joins_run, split_dotted

LARGE_FILE = 512 * 1024  # files above this are streamed in blocks, never held whole
BLOCK_SIZE = 1 << 20
BINARY_SNIFF = 8192  # a NUL byte in the first 8 KB makes a file binary (as git decides)

CLASSIFY_CACHE = 50_000  # matching lines remembered per Matcher (their classification)
WEIGHT_EXACT = 3.0
WEIGHT_PATH = 4.0
WEIGHT_PART = 1.0
DEFINITION_FACTOR = 2.0
REPEAT_BONUS = 0.25
REPEAT_CAP = 4

_WORD_RE = re.compile(r"[^\W\d]\w*")
_IDENT = r"[A-Za-z_$][\w$]*"
# Lines that define a name, in the languages we know (Python, Go, JS/TS, Rust, Java and
# their cousins). Used only to rank windows; the repo map's scanners do the real parsing.
_DEF_PATTERNS = (
    (
        r"\s*(?:@\w+(?:\([^)]*\))?\s+)*"
        r"(?:(?:export|default|declare|pub(?:\([^)]*\))?|public|private|protected|internal|"
        r"static|final|abstract|async|unsafe|extern(?:\s+\"[^\"]*\")?|override|sealed|const|"
        r"open|data|inline)\s+)*"
        r"(?:def|class|func|fn|function\*?|struct|enum|trait|interface|type|impl(?:<[^>]*>)?|"
        r"record|mod|object|union|namespace)\s+(?:\([^)]*\)\s*)?"
        rf"(?P<name>{_IDENT})"
    ),
    (
        r"\s*(?:export\s+)?(?:const|let|var)\s+"
        rf"(?P<name>{_IDENT})\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|\(|{_IDENT}\s*=>)"
    ),
    (
        r"\s*(?:@\w+(?:\([^)]*\))?\s+)*"
        r"(?:(?:public|private|protected|static|final|abstract|synchronized|native|default|"
        r"async|override|virtual|readonly)\s+)+"
        r"(?:<[^>]*>\s*)?(?:[\w$.<>\[\],?]+\s+)?"
        rf"(?P<name>{_IDENT})\s*\("
    ),
    (
        r"\s*(?!(?:return|new|else|throw|if|for|while|switch|catch|case|await|yield|typeof|"
        r"delete|do|try)\b)(?:(?:async|static|get|set)\s+)*(?:[\w$.<>\[\],?]+\s+)?"
        rf"(?P<name>{_IDENT})\s*(?:<[^>]*>)?\([^;]*\)\s*(?::\s*[^{{;=]+)?(?:throws\s+[\w., ]+)?"
        r"\{\s*$"
    ),
)
_NOT_NAMES = frozenset(["if", "for", "while", "switch", "catch", "function", "return"])
# Bytes 0x80-0xBF continue a UTF-8 character: deleting them leaves one byte per character.
_CONTINUATION = bytes(range(0x80, 0xC0))
_FOLD = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")


_DEF_RES: tuple[re.Pattern[str], ...] = ()
_DEF_RE: re.Pattern[str] | None = None


def _def_re() -> re.Pattern[str]:
    """All of them in one pattern (one match call a line): alternative K names its group
    nK. Compiled at the first line that might define a name (start-up stays cheap)."""
    global _DEF_RE
    if _DEF_RE is None:
        _DEF_RE = re.compile(
            "|".join(
                "(?:" + p.replace("(?P<name>", f"(?P<n{k}>") + ")"
                for k, p in enumerate(_DEF_PATTERNS)
            )
        )
    return _DEF_RE


# Words a definition line can start with (else it ends with "{": a bare method).
_DEF_STARTS = frozenset(
    [
        "def",
        "class",
        "func",
        "fn",
        "function",
        "function*",
        "struct",
        "enum",
        "trait",
        "interface",
        "type",
        "impl",
        "record",
        "mod",
        "object",
        "union",
        "namespace",
        "export",
        "default",
        "declare",
        "pub",
        "public",
        "private",
        "protected",
        "internal",
        "static",
        "final",
        "abstract",
        "async",
        "unsafe",
        "extern",
        "override",
        "sealed",
        "const",
        "open",
        "data",
        "inline",
        "let",
        "var",
        "synchronized",
        "native",
        "virtual",
        "readonly",
    ]
)


def defined_name(line: str) -> str | None:
    """The name a line defines (``def verify(`` -> ``verify``), or None."""
    stripped = line.strip()
    first = stripped.split(None, 1)[0] if stripped else ""
    if not (
        first in _DEF_STARTS or first.startswith(("@", "pub(", "impl<")) or stripped.endswith("{")
    ):
        return None
    m = _def_re().match(line)
    if m is None:
        return None
    name = m.group(m.lastgroup)
    if name in _NOT_NAMES:
        global _DEF_RES
        if not _DEF_RES:  # each pattern alone: only for the rare line it is needed
            _DEF_RES = tuple(re.compile(p) for p in _DEF_PATTERNS)
        for rx in _DEF_RES[int(m.lastgroup[1:]) + 1 :]:
            m = rx.match(line)
            if m and m.group("name") not in _NOT_NAMES:
                return m.group("name")
        return None
    return name


# --- options and results -------------------------------------------------------------------


@dataclass(frozen=True)
class ExcerptOptions:
    """How a file is cut: ±``window`` lines around matches, the first ``head`` lines always,
    at most ``max_windows`` windows, the last ``tail`` lines when nothing matches."""

    window: int = 25
    head: int = 15
    max_windows: int = 6
    tail: int = 40
    ignore_case: bool = False
    max_line_chars: int = 500

    def as_dict(self) -> dict:
        return {
            "window": self.window,
            "head": self.head,
            "max_windows": self.max_windows,
            "tail": self.tail,
            "ignore_case": self.ignore_case,
        }


@dataclass(frozen=True)
class Hit:
    """A matching line: its number and, per identifier, the weight of its best hit there."""

    line: int
    weights: tuple[tuple[str, float], ...]

    @property
    def identifiers(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.weights)


@dataclass(frozen=True)
class Span:
    """Lines ``start``..``end`` (1-based, inclusive) shown for one reason: ``head``,
    ``window`` (around matches) or ``tail`` (the fallback when nothing matched)."""

    kind: str
    start: int
    end: int
    score: float = 0.0
    identifiers: tuple[str, ...] = ()

    def __len__(self) -> int:
        return self.end - self.start + 1


@dataclass(frozen=True)
class Excerpt:
    """One file cut down: disjoint ``spans`` in file order, the text of their ``lines``,
    the query identifiers ``matched`` anywhere in the file (query order), its ``hits``
    (the matching lines), how many windows were ``omitted`` (left out by ``max_windows``
    -- the fewest that would show the rest -- or dropped for a budget), and how many
    matching lines no span shows (``omitted_matches``)."""

    line_count: int
    spans: tuple[Span, ...]
    lines: dict[int, str] = field(repr=False)
    matched: tuple[str, ...] = ()
    hits: tuple[Hit, ...] = field(default=(), repr=False)
    omitted: int = 0
    binary: bool = False
    size: int = 0
    omitted_matches: int = 0

    @property
    def score(self) -> float:
        return sum(s.score for s in self.spans)

    @property
    def windows(self) -> tuple[Span, ...]:
        return tuple(s for s in self.spans if s.kind == "window")

    def without(self, span: Span) -> Excerpt:
        """This excerpt with SPAN dropped (a dropped window counts as omitted, and so do
        the matching lines it showed)."""
        spans = tuple(s for s in self.spans if s != span)
        if span.kind != "window":
            return replace(self, spans=spans)
        lines = sum(1 for hit in self.hits if span.start <= hit.line <= span.end)
        return replace(
            self,
            spans=spans,
            omitted=self.omitted + 1,
            omitted_matches=self.omitted_matches + lines,
        )

    def shown(self) -> Iterator[tuple[int, str]]:
        """(line number, text) of every shown line, in order."""
        for span in self.spans:
            for n in range(span.start, span.end + 1):
                yield n, self.lines.get(n, "")


# --- matching -----------------------------------------------------------------------------


class _Ident:
    __slots__ = ("name", "key", "parts", "joined", "probes", "probe_texts", "path_re")

    def __init__(self, name: str, ignore_case: bool):
        self.name = name
        self.key = name.lower() if ignore_case else name
        self.path_re = None
        if is_dotted(name):
            flags = re.IGNORECASE if ignore_case else 0
            self.path_re = re.compile(r"(?<![\w.:])" + re.escape(name) + r"(?!\w)", flags)
            self.parts = ()
            self.joined = ""
            # What to look for in the lower-cased bytes: the path's longest segment.
            probes = {max(split_dotted(name), key=len).lower()}
        else:
            self.parts = compound_parts(name) or (name.lower(),)
            self.joined = "".join(self.parts)
            # Any spelling of the name's words in a row, lower-cased, holds one of these:
            # verifyJwtToken, VerifyJWTToken -> verifyjwttoken; verify_jwt_token, VERIFY_JWT_TOKEN
            probes = {self.joined, "_".join(self.parts)}
        raw = sorted({p.encode("utf-8", "surrogatepass").lower() for p in probes if p})
        self.probes = tuple(raw)
        self.probe_texts = tuple(p.decode("utf-8", "replace") for p in raw)


class Matcher:
    """The identifiers of one run, compiled for fast scanning of many files."""

    def __init__(self, identifiers: Iterable[str], ignore_case: bool = False):
        self.ignore_case = ignore_case
        idents: list[_Ident] = []
        seen: set[str] = set()
        for name in identifiers:
            ident = _Ident(name, ignore_case)
            if name and ident.key not in seen:
                seen.add(ident.key)
                idents.append(ident)
        self.idents = tuple(idents)
        self.identifiers = tuple(i.name for i in idents)
        self._order = {name: k for k, name in enumerate(self.identifiers)}
        self._plain = tuple(i for i in idents if i.path_re is None)
        self._paths = tuple(i for i in idents if i.path_re is not None)
        self._probes = tuple(sorted({p for i in idents for p in i.probes}))
        self._presence = tuple(sorted({p.replace(b"_", b"") for p in self._probes} - {b""}))
        # A line's bytes -> its classification: the same lines recur across a code base.
        self._cache: dict[bytes, dict[str, float]] = {}

    def order(self, names: Iterable[str]) -> tuple[str, ...]:
        """NAMES in query order."""
        return tuple(sorted(set(names), key=self._order.__getitem__))

    def classify(self, line: str) -> dict[str, float]:
        """Identifier -> weight of its best hit on LINE (empty when the line does not match)."""
        low = line.lower()
        words: set[str] | None = None
        keys: set[str] = set()
        found: dict[str, float] = {}
        for ident in self._plain:
            probe = None
            for text in ident.probe_texts:
                if text in low:
                    probe = text
                    break
            if probe is None:
                continue
            if words is None:
                words = set(_WORD_RE.findall(line))
                keys = {w.lower() for w in words} if self.ignore_case else words
            if ident.key in keys:
                found[ident.name] = WEIGHT_EXACT
                continue
            for word in words:
                if probe in word.lower() and joins_run(compound_parts(word), ident.joined):
                    found[ident.name] = WEIGHT_PART
                    break
        for ident in self._paths:
            if ident.path_re.search(line):
                found[ident.name] = WEIGHT_PATH
        if found:
            name = defined_name(line)
            if name is not None:
                for ident in self.idents:
                    if ident.name not in found:
                        continue
                    if ident.path_re is not None:
                        hit = name == split_dotted(ident.name)[-1]
                    else:  # the defined name is the identifier, or holds it as a part
                        same = name.lower() == ident.key if self.ignore_case else name == ident.name
                        hit = same or joins_run(compound_parts(name), ident.joined)
                    if hit:
                        found[ident.name] *= DEFINITION_FACTOR
        return found

    def scan(self, data: bytes, first_line: int, hits: dict[int, dict[str, float]]) -> None:
        """Add the matching lines of DATA (whose first line is FIRST_LINE) to HITS."""
        if not self._probes:
            return
        # One pass to rule most texts out: ASCII lower-cased, underscores deleted, which
        # holds every probe (with its underscores deleted) wherever DATA holds it.
        folded = data.translate(_FOLD, b"_")
        present = {p for p in self._presence if p in folded}
        if not present:
            return
        low = data.lower()  # ASCII only: offsets stay those of DATA
        positions: list[int] = []
        for probe in self._probes:
            if probe.replace(b"_", b"") not in present:
                continue
            find = low.find
            p = find(probe)
            step = len(probe)
            while p >= 0:
                positions.append(p)
                p = find(probe, p + step)
        if not positions:
            return
        positions.sort()
        cache = self._cache
        line = first_line
        prev = 0
        line_end = -1
        for p in positions:
            if p <= line_end:
                continue
            line += data.count(b"\n", prev, p)
            prev = p
            start = data.rfind(b"\n", 0, p) + 1
            line_end = data.find(b"\n", p)
            if line_end < 0:
                line_end = len(data)
            raw = data[start:line_end]
            found = cache.get(raw)
            if found is None:
                found = self.classify(raw.decode("utf-8", "replace"))
                if len(cache) < CLASSIFY_CACHE:
                    cache[raw] = found
            if found:
                old = hits.get(line)
                if old is None:
                    hits[line] = found.copy()
                else:
                    for name, w in found.items():
                        if w > old.get(name, 0.0):
                            old[name] = w


# --- windows --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """What a file shows: its ``spans`` (disjoint, in file order), and what was left out:
    ``omitted_matches`` matching lines outside every span, which ``omitted_windows`` more
    windows (the fewest, each around one of those lines) would show."""

    spans: tuple[Span, ...]
    omitted_windows: int = 0
    omitted_matches: int = 0


def plan_spans(
    hits: dict[int, dict[str, float]], line_count: int, options: ExcerptOptions, matcher: Matcher
) -> Plan:
    """The spans to show for a file with HITS (matching line -> identifier -> weight).

    A window is the ±``window`` lines around one chosen matching line. They are chosen
    best first: each candidate (one a matching line) is scored over the matching lines in
    its range that no chosen window shows yet, the best is chosen (ties: the earlier
    line), the candidates it overlaps are scored again, and so on until ``max_windows``
    are chosen or every matching line is shown; a matching line inside a chosen window
    starts none. Chosen windows that overlap or touch are shown merged (scored over all
    the matching lines they show), so at most ``head + max_windows × (2 × window + 1)``
    lines are shown.
    """
    n = line_count
    h = max(0, min(options.head, n))
    if not hits:  # the common case over many files: head and tail only
        spans = [Span("head", 1, h)] if h else []
        t = max(0, options.tail)
        start = max(h + 1, n - t + 1)
        if t and start <= n:
            spans.append(Span("tail", start, n))
        return Plan(tuple(spans))
    lines = sorted(hits)
    w = max(0, options.window)
    chosen = _choose_windows(lines, hits, w, max(0, options.max_windows))
    windows: list[Span] = []
    cur_start = cur_end = None
    for c in sorted(chosen):
        s, e = max(1, c - w), min(n, c + w)
        if cur_end is not None and s <= cur_end + 1:
            cur_end = max(cur_end, e)
        else:
            if cur_end is not None:
                windows.append(_score_window(cur_start, cur_end, lines, hits, matcher))
            cur_start, cur_end = s, e
    if cur_end is not None:
        windows.append(_score_window(cur_start, cur_end, lines, hits, matcher))
    head = Span("head", 1, h) if h else None
    spans: list[Span] = []
    for win in windows:
        if win.start <= h:
            if win.end <= h:  # wholly inside the head: the head carries its score
                assert head is not None
                head = Span(
                    "head",
                    1,
                    h,
                    head.score + win.score,
                    matcher.order(head.identifiers + win.identifiers),
                )
                continue
            win = replace(win, start=h + 1)
        spans.append(win)
    if head is not None:
        spans.insert(0, head)
    left = _left_out(lines, spans)
    return Plan(tuple(spans), _fewest_windows(left, w), len(left))


def _choose_windows(
    lines: list[int], hits: dict[int, dict[str, float]], w: int, keep: int
) -> list[int]:
    """The matching lines (of LINES, sorted) whose ±W windows are shown: at most KEEP,
    best first; on equal scores, the window around the weightier line (a definition),
    then the earlier line. Lazy greedy: the heap holds upper bounds of the candidates'
    scores (a score only falls as windows are chosen), and a candidate is scored again
    only when it comes to the top with a bound that may be stale."""
    import heapq
    from bisect import bisect_left, bisect_right

    if keep == 0:
        return []
    count = len(lines)
    lo = [0] * count  # candidate k covers the matching lines lines[lo[k]:hi[k]]
    hi = [0] * count
    a = b = 0
    for k, c in enumerate(lines):
        while lines[a] < c - w:
            a += 1
        while b < count and lines[b] <= c + w:
            b += 1
        lo[k], hi[k] = a, b
    ws = [hits[line] for line in lines]
    # ties: the window around the weightier line (a definition), then the earlier one
    own = [-sum(found.values()) for found in ws]
    if count == 1:
        return lines[:1]
    if sum(hi) - sum(lo) > 8 * count:  # dense: most ranges hold many matching lines
        scores = _sliding_scores(lines, hits, lo, hi)
        dirty = [False] * count
    else:
        # Sparse: each range starts with an upper bound of its score, the sum of its lines'
        # weights (a weight is at least 1, a repeat adds 0.25), exact for one line; the
        # exact score is worked out when the range comes to the top of the heap.
        prefix = [0.0]
        for x in own:
            prefix.append(prefix[-1] - x)
        scores = [prefix[hi[k]] - prefix[lo[k]] for k in range(count)]
        dirty = [hi[k] - lo[k] > 1 for k in range(count)]
    heap = [(-score, own[k], k) for k, score in enumerate(scores)]
    heapq.heapify(heap)
    covered = [False] * count
    chosen: list[int] = []
    while heap and len(chosen) < keep:
        _neg, _own, k = heapq.heappop(heap)
        if covered[k]:
            continue
        if dirty[k]:
            dirty[k] = False
            left = [ws[j] for j in range(lo[k], hi[k]) if not covered[j]]
            heapq.heappush(heap, (-_score_of(left), own[k], k))
            continue
        chosen.append(lines[k])
        first, last = lo[k], hi[k]
        for j in range(first, last):
            covered[j] = True
        # the candidates whose ranges overlap lines[first:last] are scored again
        for j in range(bisect_right(hi, first), bisect_left(lo, last)):
            dirty[j] = True
    return chosen


def _score_of(weights: Iterable[dict[str, float]]) -> float:
    """A window's score from the identifier weights of its matching lines."""
    best: dict[str, float] = {}
    count: dict[str, int] = {}
    for found in weights:
        for name, weight in found.items():
            old = best.get(name)
            if old is None:
                best[name] = weight
                count[name] = 1
            else:
                if weight > old:
                    best[name] = weight
                count[name] += 1
    total = sum(best.values())
    for c in count.values():
        if c > 1:
            total += REPEAT_BONUS * min(c - 1, REPEAT_CAP)
    return total


def _sliding_scores(
    lines: list[int], hits: dict[int, dict[str, float]], lo: list[int], hi: list[int]
) -> list[float]:
    """``_score_of`` the matching lines ``lines[lo[k]:hi[k]]`` for every k, in time linear
    in the number of lines (the ranges only move forward): a dense file has as many
    candidates as lines, each range holding up to 2 × window + 1 of them."""
    per_weight: dict[str, dict[float, int]] = {}  # identifier -> weight -> lines in range
    count: dict[str, int] = {}
    scores: list[float] = []
    a = b = 0
    for k in range(len(lines)):
        while b < hi[k]:
            for name, weight in hits[lines[b]].items():
                slot = per_weight.setdefault(name, {})
                slot[weight] = slot.get(weight, 0) + 1
                count[name] = count.get(name, 0) + 1
            b += 1
        while a < lo[k]:
            for name, weight in hits[lines[a]].items():
                slot = per_weight[name]
                slot[weight] -= 1
                if not slot[weight]:
                    del slot[weight]
                count[name] -= 1
                if not count[name]:
                    del count[name]
                    del per_weight[name]
            a += 1
        best = sum(max(slot) for slot in per_weight.values())
        scores.append(best + sum(REPEAT_BONUS * min(c - 1, REPEAT_CAP) for c in count.values()))
    return scores


def _left_out(lines: list[int], spans: Sequence[Span]) -> list[int]:
    """The matching LINES that no span shows."""
    left: list[int] = []
    k = 0
    for line in lines:
        while k < len(spans) and spans[k].end < line:
            k += 1
        if k == len(spans) or line < spans[k].start:
            left.append(line)
    return left


def _fewest_windows(left: list[int], w: int) -> int:
    """The fewest ±W windows, each around one of the sorted lines LEFT, that show them
    all (each window around the last line within W of the first line not yet shown)."""
    windows = i = 0
    while i < len(left):
        first = left[i]
        while i + 1 < len(left) and left[i + 1] <= first + w:
            i += 1
        reach = left[i] + w
        while i < len(left) and left[i] <= reach:
            i += 1
        windows += 1
    return windows


def _score_window(
    start: int, end: int, lines: list[int], hits: dict[int, dict[str, float]], matcher: Matcher
) -> Span:
    """The window of lines START..END, scored over the matching lines in it."""
    from bisect import bisect_left, bisect_right

    found = [hits[line] for line in lines[bisect_left(lines, start) : bisect_right(lines, end)]]
    names: set[str] = set()
    for f in found:
        names.update(f)
    return Span("window", start, end, _score_of(found), matcher.order(names))


# --- reading lines --------------------------------------------------------------------------

Piece = tuple[int, bytes, bool]  # (number of its first line, bytes, starts mid-line)


def _char_count(data: bytes) -> int:
    return len(data.translate(None, _CONTINUATION))


def _pieces_of_stream(fh: BinaryIO, block: int = BLOCK_SIZE) -> Iterator[Piece]:
    """Pieces of complete lines; a line longer than BLOCK is cut into several pieces."""
    line = 1
    mid = False
    carry = b""
    while True:
        chunk = fh.read(block)
        if not chunk:
            break
        buf = carry + chunk if carry else chunk
        cut = buf.rfind(b"\n")
        if cut >= 0:
            piece, carry = buf[: cut + 1], buf[cut + 1 :]
            yield line, piece, mid
            line += piece.count(b"\n")
            mid = False
        else:
            carry = buf
        if len(carry) >= block:  # one line longer than a block: cut it between words
            k = max(carry.rfind(b" ", len(carry) // 2), carry.rfind(b"\t", len(carry) // 2))
            if k < 0:
                k = len(carry) - 1
            yield line, carry[: k + 1], mid
            carry = carry[k + 1 :]
            mid = True
    if carry:
        yield line, carry, mid


def _count_lines(last: Piece | None) -> int:
    """Lines of a text whose last piece is LAST (a last line without a newline counts)."""
    if last is None:
        return 0
    first, data, _ = last
    n = first + data.count(b"\n")
    return n - 1 if data.endswith(b"\n") else n


def _collect_lines(
    pieces: Iterable[Piece], spans: Sequence[Span], max_chars: int
) -> dict[int, str]:
    """The text of the lines SPANS cover, read from PIECES."""
    ranges = [(s.start, s.end) for s in spans if s.end >= s.start]
    if not ranges:
        return {}
    cap = max_chars * 4 + 8
    acc: dict[int, list] = {}
    ri = 0
    for first, data, _mid in pieces:
        last = first + data.count(b"\n")
        while ri < len(ranges) and ranges[ri][1] < first:
            ri += 1
        if ri == len(ranges):
            break
        if ranges[ri][0] > last:
            continue
        wanted: list[int] = []
        for a, b in ranges[ri:]:
            if a > last:
                break
            wanted.extend(range(max(a, first), min(b, last) + 1))
        lo, hi = wanted[0], wanted[-1]
        if hi - first <= last - lo:
            frags = data.split(b"\n", hi - first + 1)

            def frag(line: int, frags=frags, first=first) -> bytes:
                return frags[line - first]
        else:
            frags = data.rsplit(b"\n", last - lo + 1)

            def frag(line: int, frags=frags, last=last) -> bytes:
                return frags[len(frags) - 1 - (last - line)]

        for line in wanted:
            piece = frag(line)
            slot = acc.get(line)
            if slot is None:
                slot = acc[line] = [b"", 0, False]
            if piece:
                slot[2] = piece.endswith(b"\r")
            room = cap - len(slot[0])
            if room > 0:
                slot[0] += piece[:room]
                if len(piece) > room:
                    slot[1] += _char_count(piece[room:])
            else:
                slot[1] += _char_count(piece)
    out: dict[int, str] = {}
    for line, (prefix, extra, ends_cr) in acc.items():
        if ends_cr:  # the CR of a CRLF line is not shown, nor counted
            if extra:
                extra -= 1
            else:
                prefix = prefix[:-1]
        if extra or len(prefix) > max_chars:
            text = prefix.decode("utf-8", "replace")
            total = (_char_count(prefix) if extra else len(text)) + extra
            if total > max_chars:
                text = f"{text[:max_chars]}…[+{total - max_chars} chars]"
        else:
            text = prefix.decode("utf-8", "replace")
        out[line] = text
    return out


def _cut(line: str, max_chars: int) -> str:
    return f"{line[:max_chars]}…[+{len(line) - max_chars} chars]"


def _lines_of_whole(
    data: bytes, newlines: int, spans: Sequence[Span], max_chars: int
) -> dict[int, str]:
    """``_collect_lines`` for a text held whole: one split, one decode per span."""
    ranges: list[list[int]] = []
    for s in spans:
        if s.end < s.start:
            continue
        if ranges and s.start == ranges[-1][1] + 1:
            ranges[-1][1] = s.end
        else:
            ranges.append([s.start, s.end])
    if not ranges:
        return {}
    frag_count = newlines + 1  # fragment k-1 is line k; a final "" follows a last newline
    full = data.split(b"\n") if len(ranges) > 2 else None

    def fragments(a: int, b: int) -> list[bytes]:
        """Lines A..B as bytes, splitting no more of DATA than needed."""
        if full is not None:
            return full[a - 1 : b]
        if b <= frag_count - a:  # nearer the start: split up to line B
            return data.split(b"\n", b)[a - 1 : b]
        frags = data.rsplit(b"\n", frag_count - a + 1)
        base = frag_count - len(frags)  # fragment index of frags[0]
        return frags[a - 1 - base : b - base]

    out: dict[int, str] = {}
    for a, b in ranges:
        chunk = b"\n".join(fragments(a, b))
        text = chunk.decode("utf-8", "replace")
        lines = text.split("\n")
        if "\r" in text:
            lines = [x[:-1] if x.endswith("\r") else x for x in lines]
        if len(text) > max_chars and max(map(len, lines)) > max_chars:
            lines = [_cut(x, max_chars) if len(x) > max_chars else x for x in lines]
        out.update(zip(range(a, b + 1), lines, strict=True))
    return out


# --- excerpts -------------------------------------------------------------------------------


def _as_matcher(identifiers: Matcher | Iterable[str], options: ExcerptOptions) -> Matcher:
    if isinstance(identifiers, Matcher):
        return identifiers
    return Matcher(identifiers, options.ignore_case)


def _to_bytes(text: str | bytes) -> bytes:
    if isinstance(text, bytes | bytearray | memoryview):
        return bytes(text)
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def _excerpt(
    pieces: Callable[[], Iterable[Piece]] | None,
    matcher: Matcher,
    options: ExcerptOptions,
    size: int,
    whole: bytes | None = None,
) -> Excerpt:
    hits: dict[int, dict[str, float]] = {}
    if whole is not None:  # held whole: one piece, counted once
        newlines = whole.count(b"\n")
        if whole:
            matcher.scan(whole, 1, hits)
        line_count = newlines + (0 if not whole or whole.endswith(b"\n") else 1)
    else:
        last: Piece | None = None
        for piece in pieces():
            matcher.scan(piece[1], piece[0], hits)
            last = piece
        line_count = _count_lines(last)
    plan = plan_spans(hits, line_count, options, matcher)
    spans = plan.spans
    if whole is not None:
        lines = _lines_of_whole(whole, newlines, spans, options.max_line_chars)
    else:
        lines = _collect_lines(pieces(), spans, options.max_line_chars)
    matched: set[str] = set()
    hit_list: tuple[Hit, ...] = ()
    if hits:
        for found in hits.values():
            matched.update(found)
        hit_list = tuple(
            Hit(line, tuple((name, hits[line][name]) for name in matcher.order(hits[line])))
            for line in sorted(hits)
        )
    return Excerpt(
        line_count=line_count,
        spans=spans,
        lines=lines,
        matched=matcher.order(matched) if matched else (),
        hits=hit_list,
        omitted=plan.omitted_windows,
        size=size,
        omitted_matches=plan.omitted_matches,
    )


def is_binary(head: bytes) -> bool:
    return b"\0" in head[:BINARY_SNIFF]


def excerpt_text(
    text: str | bytes,
    identifiers: Matcher | Iterable[str],
    options: ExcerptOptions | None = None,
) -> Excerpt:
    """Cut TEXT (a str, or bytes read as UTF-8) down to the windows around IDENTIFIERS.

    IDENTIFIERS is a ``Matcher`` (build it once for many files) or a list of names (e.g.
    from ``identifiers_from_query``). Text with a NUL byte in its first 8 KB is binary:
    the result has ``binary=True`` and no spans.
    """
    options = options or ExcerptOptions()
    matcher = _as_matcher(identifiers, options)
    data = _to_bytes(text)
    if is_binary(data):
        return Excerpt(0, (), {}, binary=True, size=len(data))
    return _excerpt(None, matcher, options, len(data), whole=data)


def excerpt_stream(
    fh: BinaryIO,
    identifiers: Matcher | Iterable[str],
    options: ExcerptOptions | None = None,
    *,
    block: int = BLOCK_SIZE,
) -> Excerpt:
    """Like ``excerpt_text`` for a seekable binary stream of any size, in bounded memory:
    one pass finds the matches, a second keeps only the lines the spans need (a line
    longer than ``max_line_chars`` is kept as its cut prefix and a count)."""
    options = options or ExcerptOptions()
    matcher = _as_matcher(identifiers, options)
    fh.seek(0)
    head = fh.read(BINARY_SNIFF)
    size = fh.seek(0, 2)
    if is_binary(head):
        return Excerpt(0, (), {}, binary=True, size=size)

    def pieces() -> Iterator[Piece]:
        fh.seek(0)
        return _pieces_of_stream(fh, block)

    return _excerpt(pieces, matcher, options, size)


def read_file_bytes(path: str) -> bytes:
    """A whole file's bytes (plain os calls: measurably cheaper over thousands of files)."""
    import os

    fd = os.open(path, os.O_RDONLY)
    try:
        return _read_fd(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)


def _read_fd(fd: int, size: int) -> bytes:
    import os

    data = os.read(fd, size + 1)
    if len(data) <= size and size:  # a regular file read short: its end (one call a file)
        return data
    chunks = []
    while data:
        chunks.append(data)
        data = os.read(fd, 1 << 20)
    return b"".join(chunks) if len(chunks) != 1 else chunks[0]


def excerpt_file(
    path: str,
    identifiers: Matcher | Iterable[str],
    options: ExcerptOptions | None = None,
    *,
    large: int = LARGE_FILE,
) -> Excerpt:
    """Excerpt the file at PATH: read whole up to LARGE bytes, streamed above that.

    OSError (missing file, permissions...) is left to the caller."""
    import os

    options = options or ExcerptOptions()
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        if size <= large:
            data = _read_fd(fd, size)
            if len(data) <= large:
                return excerpt_text(data, identifiers, options)
            os.lseek(fd, 0, os.SEEK_SET)
        fh = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with fh:
        return excerpt_stream(fh, identifiers, options)


class FileBlock(NamedTuple):
    """A file as ``file_block`` renders it: ``block``, its text as UTF-8 bytes (None when
    the file is ``binary``, or has no match and was not to be shown), and ``matches``,
    how many of its lines match."""

    block: bytes | None
    matches: int = 0
    binary: bool = False


def file_block(
    path: str,
    label: str,
    matcher: Matcher,
    options: ExcerptOptions,
    *,
    large: int = LARGE_FILE,
    show_unmatched: bool = True,
) -> FileBlock:
    """``render_excerpt(excerpt_file(PATH, ...), LABEL)`` as UTF-8 bytes (lone surrogates
    of the label as their bytes), with the file's match count; no block for a binary file,
    nor for a file with no match unless SHOW_UNMATCHED. The common case over many files
    -- nothing matched -- is rendered straight from the file's bytes (or not at all): no
    Excerpt, no Span, no str per line. OSError is left to the caller."""
    import os

    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        data = _read_fd(fd, size) if size <= large else None
    finally:
        os.close(fd)
    if data is None:  # a large file: streamed, as excerpt_file does
        ex = excerpt_file(path, matcher, options, large=large)
    elif len(data) > large:  # it grew, or was not a regular file: not read again
        import io

        ex = excerpt_stream(io.BytesIO(data), matcher, options)
    else:
        if b"\0" in data[:BINARY_SNIFF]:
            return FileBlock(None, binary=True)
        hits: dict[int, dict[str, float]] = {}
        if data:
            matcher.scan(data, 1, hits)
        if not hits:
            return FileBlock(_no_match_block(data, label, options) if show_unmatched else None)
        return FileBlock(_hits_block(data, label, matcher, options, hits), len(hits))
    if ex.binary:
        return FileBlock(None, binary=True)
    if not ex.hits and not show_unmatched:
        return FileBlock(None)
    return FileBlock(render_excerpt(ex, label).encode("utf-8", "surrogateescape"), len(ex.hits))


def excerpt_file_block(
    path: str,
    label: str,
    matcher: Matcher,
    options: ExcerptOptions,
    *,
    large: int = LARGE_FILE,
) -> bytes | None:
    """``render_excerpt(excerpt_file(PATH, ...), LABEL)`` as UTF-8 bytes, None for a
    binary file (``file_block``'s block)."""
    return file_block(path, label, matcher, options, large=large).block


_BGUTTERS: dict[int, list[bytes]] = {}


def _bgutters(width: int, upto: int) -> list[bytes]:
    """``[b"", b"\\n    1\xe2\x94\x82 ", ...]``: a newline and the gutter of each line
    number up to UPTO, made once per width."""
    cache = _BGUTTERS.setdefault(width, [b""])
    if len(cache) <= upto:
        cache.extend(
            f"\n{n:>{width}}│ ".encode() for n in range(len(cache), max(upto + 1, 2 * len(cache)))
        )
    return cache


def _block_lines(out: list[bytes], frags: list[bytes], first: int, width: int, cap: int) -> None:
    """Append to OUT each of FRAGS (lines FIRST... as bytes) after its gutter, as
    ``render_body`` shows them: CR dropped, invalid UTF-8 replaced, long lines cut."""
    chunk = b"\n".join(frags)
    if not chunk.isascii() or b"\r" in chunk or (len(chunk) > cap and max(map(len, frags)) > cap):
        lines = chunk.decode("utf-8", "replace").split("\n")
        lines = [x[:-1] if x.endswith("\r") else x for x in lines]
        lines = [_cut(x, cap) if len(x) > cap else x for x in lines]
        frags = [x.encode("utf-8", "surrogateescape") for x in lines]
    last = first + len(frags) - 1
    if last <= GUTTER_CACHE_LINES:
        gutters = _bgutters(width, last)[first : last + 1]
    else:
        gutters = [f"\n{n:>{width}}│ ".encode() for n in range(first, last + 1)]
    both: list[bytes] = [b""] * (2 * len(frags))
    both[::2] = gutters
    both[1::2] = frags
    out.extend(both)


def _hits_block(
    data: bytes,
    label: str,
    matcher: Matcher,
    options: ExcerptOptions,
    hits: dict[int, dict[str, float]],
) -> bytes:
    """The rendered block of a file held whole with HITS: its spans' lines, from bytes."""
    newlines = data.count(b"\n")
    n = newlines + (0 if data.endswith(b"\n") else 1)
    plan = plan_spans(hits, n, options, matcher)
    spans = plan.spans
    matched: set[str] = set()
    for found in hits.values():
        matched.update(found)
    head = _header(
        label, n, matcher.order(matched), spans, plan.omitted_windows, plan.omitted_matches
    )
    out = [head.encode("utf-8", "surrogateescape")]
    width = gutter_width(n)
    cap = options.max_line_chars
    full = data.split(b"\n") if len(spans) > 2 else None
    sep = b"\n" + "⋮".rjust(width).encode()
    prev_end = None
    for span in spans:
        a, b = span.start, span.end
        if prev_end is not None and a > prev_end + 1:
            out.append(sep)
        prev_end = b
        if b < a:
            continue
        if full is not None:
            frags = full[a - 1 : b]
        elif b <= newlines + 1 - a:  # nearer the start: split up to line B
            frags = data.split(b"\n", b)[a - 1 : b]
        else:  # nearer the end: split from line A on
            frags = data.rsplit(b"\n", newlines + 2 - a)  # frags[1]: line A, if A > 1
            base = newlines + 1 - len(frags)  # the line of frags[0], less one
            frags = frags[a - 1 - base : b - base]
        _block_lines(out, frags, a, width, cap)
    out.append(b"\n")
    return b"".join(out)


def _no_match_block(data: bytes, label: str, options: ExcerptOptions) -> bytes:
    """The rendered block of a file held whole in which nothing matched: head and tail."""
    newlines = data.count(b"\n")
    n = newlines + (0 if not data or data.endswith(b"\n") else 1)
    h = max(0, min(options.head, n))
    t = max(0, options.tail)
    start = max(h + 1, n - t + 1)
    tail = t and start <= n
    if n == 0:
        what = "empty"
    elif tail:
        what = f"no match, last {n - start + 1} lines"
    else:
        what = "no match"
    head = f"==> {label} <== {n} line{'' if n == 1 else 's'}; {what}"
    out = [head.encode("utf-8", "surrogateescape")]
    width = gutter_width(n)
    cap = options.max_line_chars
    if tail and start == h + 1:  # head and tail touch: one run of lines
        _block_lines(out, data.split(b"\n", n)[:n], 1, width, cap)
    else:
        if h:
            _block_lines(out, data.split(b"\n", h)[:h], 1, width, cap)
        if tail:
            if h:
                out.append(b"\n" + "⋮".rjust(width).encode())
            frags = data.rsplit(b"\n", newlines - start + 2)
            _block_lines(out, frags[1 : 1 + n - start + 1], start, width, cap)
    out.append(b"\n")
    return b"".join(out)


# --- rendering -------------------------------------------------------------------------------


def gutter_width(line_count: int) -> int:
    """Width of the line-number column: the file's largest number, plus two spaces."""
    return len(str(max(line_count, 1))) + 2


def render_header(ex: Excerpt, label: str) -> str:
    return _header(label, ex.line_count, ex.matched, ex.spans, ex.omitted, ex.omitted_matches)


def _header(
    label: str,
    n: int,
    matched: Sequence[str],
    spans: Sequence[Span],
    omitted: int,
    omitted_matches: int = 0,
) -> str:
    parts = [f"{n} line" + ("" if n == 1 else "s")]
    if matched:
        parts.append("matched: " + ", ".join(matched))
    elif n == 0:
        parts.append("empty")
    else:
        tail = next((s for s in spans if s.kind == "tail"), None)
        parts.append(f"no match, last {len(tail)} lines" if tail else "no match")
    if omitted_matches:
        k = omitted_matches
        parts.append(
            f"{k} more matching line{'' if k == 1 else 's'} not shown"
            f" ({omitted} more window{'' if omitted == 1 else 's'})"
        )
    return f"==> {label} <== " + "; ".join(parts)


_GUTTERS: dict[int, list[str]] = {}
GUTTER_CACHE_LINES = 20_000


def _gutters(width: int, upto: int) -> list[str]:
    """``["", "    1│ ", "    2│ ", ...]`` up to UPTO, made once per width."""
    cache = _GUTTERS.setdefault(width, [""])
    if len(cache) <= upto:
        cache.extend(f"{n:>{width}}│ " for n in range(len(cache), max(upto + 1, 2 * len(cache))))
    return cache


def render_body(ex: Excerpt) -> list[str]:
    """The shown lines as ``  120│ code``, with a ``⋮`` line between non-adjacent spans."""
    w = gutter_width(ex.line_count)
    out: list[str] = []
    lines = ex.lines
    prev_end = None
    sep = "⋮".rjust(w)
    last = ex.spans[-1].end if ex.spans else 0
    gutters = _gutters(w, last) if last <= GUTTER_CACHE_LINES else None
    for span in ex.spans:
        if prev_end is not None and span.start > prev_end + 1:
            out.append(sep)
        numbers = range(span.start, span.end + 1)
        texts = map(lines.get, numbers, repeat(""))
        if gutters is not None:
            out.extend(map(str.__add__, gutters[span.start : span.end + 1], texts))
        else:  # a huge file: no cache of millions of gutters
            out.extend(f"{n:>{w}}│ {t}" for n, t in zip(numbers, texts, strict=True))
        prev_end = span.end
    return out


def render_excerpt(ex: Excerpt, label: str) -> str:
    """The text block ctx-excerpt prints for one file (ends with a newline)."""
    body = render_body(ex)
    body.insert(0, render_header(ex, label))
    body.append("")
    return "\n".join(body)


def render_all(items: Sequence[tuple[str, Excerpt]]) -> str:
    """Several files' blocks, separated by a blank line."""
    return "\n".join(render_excerpt(ex, label) for label, ex in items)


def excerpt_dict(ex: Excerpt, label: str) -> dict:
    """The JSON form of one file (see ctx-excerpt --help for the schema)."""
    spans = []
    for s in ex.spans:
        text = "".join(ex.lines.get(n, "") + "\n" for n in range(s.start, s.end + 1))
        spans.append(
            {
                "kind": s.kind,
                "start": s.start,
                "end": s.end,
                "score": s.score,
                "identifiers": list(s.identifiers),
                "text": text,
            }
        )
    return {
        "path": json_text(label),
        "status": "ok",
        "lines": ex.line_count,
        "bytes": ex.size,
        "matched": list(ex.matched),
        "score": ex.score,
        "matches": len(ex.hits),
        "omitted_windows": ex.omitted,
        "omitted_matches": ex.omitted_matches,
        "spans": spans,
    }


# --- budget -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dropped:
    """What a budget took out: a ``window`` of a file, or a whole ``file``."""

    label: str
    kind: str
    start: int = 0
    end: int = 0
    score: float = 0.0
    matched: bool = False


def _drop_order(items: Sequence[tuple[str, Excerpt]]) -> list[tuple[int, Span | None]]:
    """Lowest value first: files with nothing matched (their head and tail score 0; the
    last file first), then windows by score (on ties later files and later windows
    first), then matched files left with only their head (lowest score first)."""
    order: list[tuple[tuple, int, Span | None]] = []
    n = len(items)
    for i, (_label, ex) in enumerate(items):
        if not ex.matched:
            order.append(((0, 0.0, n - i, 0), i, None))
            continue
        for k, span in enumerate(ex.spans):
            if span.kind == "window":
                order.append(((1, span.score, n - i, -k), i, span))
        order.append(((2, ex.score, n - i, 0), i, None))
    order.sort(key=lambda t: t[0])
    return [(i, span) for _key, i, span in order]


def value_drop_order(items: Sequence[tuple[str, Excerpt]]) -> list[tuple[int, Span | None]]:
    """Lowest value first, windows and whole files interleaved: files with nothing matched
    (the last file first), then every window and every matched file by score -- a window
    by its own score, a file by its total, so a weak file goes before a strong file's
    windows (a file always after its own windows; on ties later files first). For many
    files (a pack of a whole tree), this keeps the best files in depth instead of the heads
    of every file that mentions a word."""
    order: list[tuple[tuple, int, Span | None]] = []
    n = len(items)
    for i, (_label, ex) in enumerate(items):
        if not ex.matched:
            order.append(((0, 0.0, 0, n - i, 0), i, None))
            continue
        for k, span in enumerate(ex.spans):
            if span.kind == "window":
                order.append(((1, span.score, 0, n - i, -k), i, span))
        order.append(((1, ex.score, 1, n - i, 0), i, None))
    order.sort(key=lambda t: t[0])
    return [(i, span) for _key, i, span in order]


def fit_budget(
    items: Sequence[tuple[str, Excerpt]],
    tokens: int,
    count: Callable[[str], int],
    render_one: Callable[[Excerpt, str], str] = render_excerpt,
    drop_order: Callable[[Sequence[tuple[str, Excerpt]]], list] | None = None,
) -> tuple[list[tuple[str, Excerpt]], list[Dropped], int]:
    """Drop windows, then whole files, until ``count(render(kept)) <= tokens``.

    Lowest value first: files with nothing matched (head and tail both score 0; the last
    file first), then windows, lowest score first (a file that keeps any window keeps its
    head), then matched files left with their head only, lowest score first. Returns the
    kept items (in the given order), what was dropped, and the token count of the result.
    DROP_ORDER replaces that order (``value_drop_order`` interleaves windows and files).
    """

    def render(kept: Sequence[tuple[str, Excerpt]]) -> str:
        return "\n".join(render_one(ex, label) for label, ex in kept)

    current = list(items)
    plan = (drop_order or _drop_order)(current)
    costs: dict[int, int] = {}

    def cost_of(k: int) -> int:
        """What unit K adds to the text, as the ruler counts it (a window's join included;
        a file's, a newline between it and the one before, is not)."""
        if k in costs:
            return costs[k]
        i, span = plan[k]
        label, ex = current[i]
        if span is None:  # the file itself: header, head, and a tail when nothing matched
            bare = ex
            for w in getattr(ex, "windows", ()):
                bare = bare.without(w)
            cost = count(render_one(bare, label))
        else:
            lines = ex.lines
            w = gutter_width(ex.line_count)
            rows = range(span.start, span.end + 1)
            cost = count("\n".join(f"{n:>{w}}│ {lines.get(n, '')}" for n in rows)) + 2
        costs[k] = cost
        return cost

    # Keep the most valuable units (the end of the drop order) while their counts add up
    # to the budget: only what can be kept is ever counted, however big the input.
    keep_from = len(plan)
    used = 0
    for k in range(len(plan) - 1, -1, -1):
        cost = cost_of(k) + (1 if used and plan[k][1] is None else 0)
        if used + cost > tokens:
            break
        used += cost
        keep_from = k
    alive = [True] * len(current)
    dropped: list[Dropped] = []

    def drop(k: int) -> None:
        i, span = plan[k]
        label, ex = current[i]
        if span is None:
            alive[i] = False
            dropped.append(Dropped(label, "file", matched=bool(ex.matched), score=ex.score))
        else:
            current[i] = (label, ex.without(span))
            dropped.append(Dropped(label, "window", span.start, span.end, span.score, True))

    for k in range(keep_from):
        drop(k)

    def kept() -> list[tuple[str, Excerpt]]:
        return [it for it, ok in zip(current, alive, strict=True) if ok]

    total = count(render(kept()))
    k = keep_from
    while total > tokens and k < len(plan):
        # The estimate was short: drop the next units worth the excess, then count again
        # (one recount per shortfall, not one per unit: the text may be megabytes).
        freed = 0
        while freed < total - tokens and k < len(plan):
            freed += cost_of(k)
            drop(k)
            k += 1
        total = count(render(kept()))
    result = kept()
    return result, dropped, (total if result else 0)


# --- signatures -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Signatures:
    """What a file declares, from the repo map's scanners: ``language`` (None: no scanner
    for this file type), ``definitions`` in line order, and the query identifiers their
    signatures match. ``too_large``: over 512 KB, not scanned (as the repo map skips it)."""

    language: str | None
    definitions: tuple = ()
    line_count: int = 0
    matched: tuple[str, ...] = ()
    score: float = 0.0
    size: int = 0
    binary: bool = False
    too_large: bool = False
    spans: tuple[Span, ...] = ()
    matches: int = 0  # definitions whose signature matches


def signatures_of(
    path: str,
    data: bytes | None,
    matcher: Matcher | None = None,
    *,
    size: int | None = None,
    binary: bool = False,
) -> Signatures:
    """The definitions of the source DATA named PATH (the name picks the language).

    DATA None means the file was too large to scan (SIZE bytes)."""
    from ctxtools.repomap.scan import language_for, scan_source

    language = language_for(path) if path else None
    if binary:
        return Signatures(language, binary=True)
    if data is None:
        return Signatures(language, size=size or 0, too_large=True)
    line_count = data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)
    if language is None:
        return Signatures(None, line_count=line_count, size=len(data))
    result = scan_source(path, data.decode("utf-8", "replace"))
    defs = tuple(sorted(result.definitions, key=lambda d: (d.line, d.name))) if result else ()
    matched: set[str] = set()
    score = 0.0
    matches = 0
    if matcher is not None and matcher.identifiers:
        for d in defs:
            found = matcher.classify(d.signature)
            matched.update(found)
            score += sum(found.values())
            matches += bool(found)
    return Signatures(
        language,
        defs,
        line_count,
        matcher.order(matched) if matcher else (),
        score,
        len(data),
        matches=matches,
    )


def render_signatures(sig: Signatures, label: str) -> str:
    """A file's header, then ``  120│ def verify(token)`` per definition, indented by scope."""
    n = sig.line_count
    parts = []
    if sig.too_large:
        parts.append(f"{sig.size} bytes; over 512 KB, not scanned")
    else:
        parts.append(f"{n} line" + ("" if n == 1 else "s"))
        if sig.language is None:
            parts.append("no definition scanner for this file type")
        else:
            k = len(sig.definitions)
            parts.append(f"{sig.language}, {k} definition" + ("" if k == 1 else "s"))
    if sig.matched:
        parts.append("matched: " + ", ".join(sig.matched))
    out = [f"==> {label} <== " + "; ".join(parts)]
    w = gutter_width(n)
    for d in sig.definitions:
        depth = d.scope.count(".") + 1 if d.scope else 0
        out.append(f"{d.line:>{w}}│ {'  ' * depth}{d.signature}")
    out.append("")
    return "\n".join(out)


def signatures_dict(sig: Signatures, label: str) -> dict:
    return {
        "path": json_text(label),
        "status": "too_large" if sig.too_large else "ok",
        "lines": sig.line_count,
        "bytes": sig.size,
        "language": sig.language,
        "matched": list(sig.matched),
        "score": sig.score,
        "matches": sig.matches,
        "definitions": [
            {
                "kind": d.kind,
                "name": d.name,
                "line": d.line,
                "end_line": d.end_line,
                "scope": d.scope,
                "signature": d.signature,
            }
            for d in sig.definitions
        ],
    }
