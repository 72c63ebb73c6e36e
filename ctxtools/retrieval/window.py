"""Windows of one file, chosen by the engine ctx-pack ranks with: what ctx-excerpt shows.

A file is ranked as ctx-pack ranks it (``rank.rank_sources``: the task read by
``analyzer.parse_query``, the file cut into its definitions by ``chunks.chunk_file`` on the
repo map scanners' definitions, BM25 over the chunks of every file of the run, names,
frames and messages pointing at chunks, the file's share, the callees). Its windows are:

* in a file with definitions, its best chunks (``chunk_windows``): those whose own
  evidence (words, pointers, callees) is positive, most relevant first, down to the
  engine's floor (``plan.FLOOR`` of the file's best chunk), at most ``keep``;
* in a text without definitions (a log, prose, JSON) or one too large to hold whole, the
  ±``window`` lines around its best-scoring lines (``LineWindows``): each line that holds
  a query term is the centre of a candidate window, scored by the same BM25 (the run's
  term weights; the window's words against the mean window of the text), the best taken
  first, none overlapping one taken, down to the same floor, at most ``keep`` -- in
  memory that does not grow with the text.

``window_query`` is the task plus ``--ident`` names, each an exact name pointer.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate, islice

from ctxtools.analyzer.query import Query, parse_query
from ctxtools.retrieval.plan import FLOOR
from ctxtools.retrieval.rank import FILE_DECAY, Doc
from ctxtools.retrieval.terms import Stats, Terms, bm25
from ctxtools.retrieval.vocab import WORD_BYTES

WORDS_KEPT = 50_000  # words remembered as standing for no term, at most
AVG_SAMPLE = 64 * 1024  # the head of a text whose lines say how long a window is on average
# WORD_BYTES with newlines kept: a piece's lines split after the translation
_WORD_LINES = WORD_BYTES[:10] + b"\n" + WORD_BYTES[11:]


@dataclass(frozen=True)
class Window:
    """Lines ``start``..``end`` chosen for their relevance ``score``, in ``parts`` as
    ctx-pack's JSON gives them (words: BM25; pointers: names, frames, messages; file: its
    share of the file's score; callees), ``chunk`` its label (``Scope.name 10-40``, or
    ``lines 10-60``) and the query ``terms`` it holds."""

    start: int
    end: int
    score: float
    parts: tuple[float, float, float, float]
    chunk: str
    terms: tuple[str, ...] = ()
    name: str = ""  # the definition's qualified name ("" for a gap or a text window)

    def parts_dict(self) -> dict:
        words, pointers, whole, callees = self.parts
        return {
            "chunk": self.chunk,
            "score": round(self.score, 3),
            "words": round(words, 3),
            "pointers": round(pointers, 3),
            "file": round(whole, 3),
            "callees": round(callees, 3),
        }


def window_query(task: str | None, idents: Sequence[str] = ()) -> Query:
    """The query of TASK (``parse_query``) with each of IDENTS as an exact name pointer: a
    code-shaped term and a name a definition may bear (a dotted path: each segment)."""
    from ctxtools.analyzer.query import CODE_WEIGHT, PART_WEIGHT
    from ctxtools.identifiers import compound_parts, is_dotted, split_dotted

    query = parse_query(task or "")
    if not idents:
        return query
    terms, names, code = dict(query.terms), dict(query.names), set(query.code)
    for ident in idents:
        for piece in split_dotted(ident) if is_dotted(ident) else [ident]:
            low = piece.lower()
            if not low:
                continue
            names[low] = max(names.get(low, 0.0), CODE_WEIGHT)
            terms[low] = max(terms.get(low, 0.0), CODE_WEIGHT)
            code.add(low)
            parts = compound_parts(piece)
            for part in parts if len(parts) > 1 else ():
                terms[part] = max(terms.get(part, 0.0), CODE_WEIGHT * PART_WEIGHT)
    return Query(
        terms=terms,
        code=frozenset(code),
        names=dict(sorted(names.items())),
        paths=query.paths,
        frames=query.frames,
        messages=query.messages,
    )


def definitions_of(label: str, data: bytes) -> tuple:
    """The definitions the repo map's scanners find in DATA (named LABEL: the name, or an
    extensionless script's ``#!`` line, picks the language), as ``rank.Source.defs``
    holds them; () for a file no scanner reads."""
    from ctxtools.source.scan import scan_bytes

    result = scan_bytes(label, data)
    if result is None:
        return ()
    return tuple(result.definitions)


def has_definitions(doc: Doc) -> bool:
    """Whether DOC was cut at definitions (else into plain windows of lines)."""
    return any(ch.kind != "window" for ch in doc.chunks)


def chunk_label(doc: Doc, k: int) -> str:
    """Chunk K of DOC as ctx-pack's JSON names it: ``Scope.name START-END``."""
    c = doc.chunks[k]
    name = f"{c.scope}.{c.name}" if c.scope and c.name else (c.name or c.kind)
    return f"{name} {c.start}-{c.end}"


def chunk_windows(
    doc: Doc, terms: Sequence[str], keep: int, floor: float = FLOOR, shown: int = 0
) -> tuple[list[Window], int, int]:
    """DOC's best chunks as windows, most relevant first (ctx-pack's order: score, then
    line), those with evidence of their own, down to FLOOR of the best, at most KEEP; and
    how many more above the floor KEEP left out. A chunk whose words count only through
    its path or class name (a blank line between two methods) is no window. The floor
    compares each chunk's own evidence (its score less its file's share, the same in every
    chunk of a file: words, pointers, callees) with the best chunk's. TERMS are the
    ranking's (``Terms`` order), to name what each chunk holds. A chunk within the first
    SHOWN lines (a head shown anyway) does not count towards KEEP. Last, how many chunks
    could be windows (the file's matches)."""
    cands = []
    for k, s in enumerate(doc.scores):
        parts = doc.parts[k] if doc.parts else (s, 0.0, 0.0, 0.0)
        own = parts[0] + parts[1] + parts[3]
        if s > 0 and own > 0 and (parts[1] > 0 or parts[3] > 0 or _says(doc, k, terms)):
            cands.append((s, k, own))
    cands.sort(key=lambda t: (-t[0], t[1]))
    if not cands:
        return [], 0, 0
    low = floor * max(c[2] for c in cands)
    above = [k for _s, k, own in cands if own >= low]
    out = []
    counted = 0
    left = 0
    for k in above:
        ch = doc.chunks[k]
        if ch.end > shown:
            if counted >= max(0, keep):
                left += 1
                continue
            counted += 1
        parts = tuple(doc.parts[k]) if doc.parts else (doc.scores[k], 0.0, 0.0, 0.0)
        tf = doc.tfs[k] if k < len(doc.tfs) else {}
        name = ""
        if ch.name and ch.kind in ("def", "class", "part"):
            name = f"{ch.scope}.{ch.name}" if ch.scope else ch.name
        out.append(
            Window(
                ch.start,
                ch.end,
                doc.scores[k],
                parts,
                chunk_label(doc, k),
                tuple(terms[i] for i in sorted(tf) if i < len(terms)),
                name,
            )
        )
    return out, left, len(cands)


def _says(doc: Doc, k: int, terms: Sequence[str]) -> bool:
    """Whether chunk K's own lines hold one of the query terms it counts."""
    ch = doc.chunks[k]
    tf = doc.tfs[k] if k < len(doc.tfs) else {}
    if not tf:
        return False
    text = "\n".join(doc.lines[ch.start - 1 : ch.end]).lower()
    return any(terms[i] in text for i in tf if i < len(terms))


def file_score(windows: Iterable[Window]) -> float:
    """A file's score from its windows as the engine sums a file's chunks: the best three,
    decaying (for a text the ranking did not read)."""
    top = sorted((w.score for w in windows), reverse=True)[: len(FILE_DECAY)]
    return sum(s * d for s, d in zip(top, FILE_DECAY, strict=False))


def mean_window(head: bytes, window: int) -> float:
    """The mean length in words of a ±WINDOW window of a text whose first bytes are HEAD
    (its complete lines in the first ``AVG_SAMPLE`` bytes): BM25's average unit length."""
    sample = head[:AVG_SAMPLE]
    if len(head) > AVG_SAMPLE:
        cut = sample.rfind(b"\n")
        sample = sample[: cut + 1] if cut >= 0 else sample
    lines = sample.count(b"\n") + (0 if not sample or sample.endswith(b"\n") else 1)
    words = len(sample.translate(WORD_BYTES).split())
    return max(1.0, words / max(lines, 1) * (2 * max(0, window) + 1))


class LineWindows:
    """The ±``window`` windows of a text without definitions (see the module): ``add`` its
    pieces of complete lines in order (a line longer than a piece continues in the next,
    ``mid``), then ``finish``. What is kept is bounded: the best ``cap`` candidates (a
    chosen window rules out at most ``4 × window + 1`` others, so the greedy choice over
    them is the choice over all), the lines of one window, and a count a line of the
    piece at hand. KNOWN: the words already sorted into those that stand for a weighted
    term and those that do not, shared by the texts of a run."""

    def __init__(
        self,
        terms: Terms,
        weights: Sequence[float],
        window: int,
        keep: int,
        avg_len: float,
        known: tuple[set, set] | None = None,
    ):
        self.terms = terms
        self.weights = list(weights)
        self.w = max(0, window)
        self.keep = max(0, keep)
        self.cap = self.keep * (4 * self.w + 1) + 1
        self.stats = Stats(units=1, total_len=int(round(avg_len)) or 1)
        self.needles = [n for n, wt in zip(terms.needles, self.weights, strict=True) if wt and n]
        self.matched: set[int] = set()
        self.hit_lines = 0
        self.lines = 0  # complete lines seen
        self._cum = [0]  # words of lines _base.. as running sums
        self._base = 1
        self._recent: deque[tuple[int, dict]] = deque()  # hit lines in the next window
        self._added = 0  # of _recent, in the tally
        self._pending: deque[int] = deque()  # hit lines whose window is not complete
        self._tally: dict[int, int] = {}
        self._best: list[tuple] = []  # (score, -line, line, terms): the worst on top
        self._open = False  # the last piece ended inside a line
        self._last_word = False  # ... inside a word
        # words that stand for a weighted term, and words that stand for none: KNOWN shares
        # them between the texts of a run (the same TERMS and WEIGHTS)
        self._yes, self._no = known if known is not None else (set(), set())

    def add(self, first: int, data: bytes, mid: bool = False) -> None:
        if not data:
            return
        rows = data.translate(_WORD_LINES).split(b"\n")
        ends = data.endswith(b"\n")
        if ends:
            rows.pop()
        splits = list(map(bytes.split, rows))
        counts = list(map(len, splits))
        if mid and self._open and counts:
            # a word the cut went through is one word
            joined = self._last_word and _WORD_LINES[data[0]] not in (0x20, 0x0A)
            self._cum[-1] += counts[0] - (1 if joined else 0)
            counts = counts[1:]
        self._last_word = _WORD_LINES[data[-1]] not in (0x20, 0x0A)
        self._cum.extend(islice(accumulate(counts, initial=self._cum[-1]), 1, None))
        self._open = not ends and bool(data)
        if self.needles:
            self._hits(first, data, splits)
        self.lines = self._base + len(self._cum) - 2 - (1 if self._open else 0)
        self._score_ready(self.lines)
        self._trim()

    def _tf(self, words: list[bytes]) -> dict[int, int]:
        """The weighted query terms WORDS (one line's) stand for, counted."""
        distinct = set(words)
        yes, no = self._yes, self._no
        new = distinct - yes - no
        if new:
            if len(no) > WORDS_KEPT:  # a log of unique ids: what is remembered stays bounded
                no.clear()
            needles = self.needles
            for w in new:
                low = w.lower()
                bare = low.replace(b"_", b"")
                maybe = any(n in low or n in bare for n in needles)
                if maybe and any(self.weights[i] for i in self.terms.ids_of(w)):
                    yes.add(w)
                else:
                    no.add(w)
        tf: dict[int, int] = {}
        for w in distinct & yes:
            c = words.count(w)
            for i in self.terms.ids_of(w):
                if self.weights[i]:
                    tf[i] = tf.get(i, 0) + c
        return tf

    def _hits(self, first: int, data: bytes, splits: list[list[bytes]]) -> None:
        low = data.lower()
        positions: list[int] = []
        for needle in self.needles:
            find = low.find
            p = find(needle)
            while p >= 0:
                positions.append(p)
                p = find(needle, p + len(needle))
        if not positions:
            return
        positions.sort()
        line, prev, line_end = first, 0, -1
        for p in positions:
            if p <= line_end:
                continue
            line += data.count(b"\n", prev, p)
            prev = p
            line_end = data.find(b"\n", p)
            if line_end < 0:
                line_end = len(data)
            tf = self._tf(splits[line - first]) if line - first < len(splits) else {}
            if not tf:
                continue
            if self._recent and self._recent[-1][0] == line:  # a long line, continued
                old = self._recent[-1][1]
                for i, c in tf.items():
                    old[i] = old.get(i, 0) + c
                continue
            self.matched.update(tf)
            self.hit_lines += 1
            self._recent.append((line, tf))
            self._pending.append(line)

    def _words(self, a: int, b: int) -> int:
        base, cum = self._base, self._cum
        b = min(b, base + len(cum) - 2)
        return cum[b - base + 1] - cum[max(a, base) - base]

    def _score_ready(self, complete: int) -> None:
        """Score the candidates whose window's lines have all come (up to COMPLETE)."""
        w, recent, tally = self.w, self._recent, self._tally
        while self._pending and self._pending[0] + w <= complete:
            c = self._pending.popleft()
            while self._added < len(recent) and recent[self._added][0] <= c + w:
                for i, n in recent[self._added][1].items():
                    tally[i] = tally.get(i, 0) + n
                self._added += 1
            while recent[0][0] < c - w:
                for i, n in recent.popleft()[1].items():
                    tally[i] -= n
                    if not tally[i]:
                        del tally[i]
                self._added -= 1
            score = bm25(tally, self._words(c - w, c + w), self.weights, self.stats)
            key = (score, -c)
            best = self._best
            if len(best) >= self.cap and key <= best[0][:2]:
                continue
            entry = (score, -c, c, tuple(sorted(tally)))
            if len(best) < self.cap:
                heapq.heappush(best, entry)
            else:
                heapq.heapreplace(best, entry)

    def _trim(self) -> None:
        need = (self._pending[0] if self._pending else self.lines + 1) - self.w
        drop = need - self._base
        if drop > 4096 and drop > len(self._cum) // 2:
            del self._cum[:drop]
            self._base = need

    def finish(self, floor: float = FLOOR) -> tuple[list[Window], int, int]:
        """The windows, most relevant first; how many more above the floor (among the
        candidates kept) ``keep`` left out; the number of lines."""
        n = self._base + len(self._cum) - 2
        self.lines = n
        self._score_ready(n + self.w)
        ranked = sorted(self._best, key=lambda e: (-e[0], e[2]))
        if not ranked or ranked[0][0] <= 0:
            return [], 0, n
        low = floor * ranked[0][0]
        chosen: list[int] = []
        out: list[Window] = []
        extra = 0
        names = self.terms.terms
        for score, _neg, c, ids in ranked:
            if score < low:
                break
            if any(abs(c - x) <= 2 * self.w for x in chosen):
                continue
            chosen.append(c)
            if len(out) >= self.keep:
                extra += 1
                continue
            a, b = max(1, c - self.w), min(n, c + self.w)
            label = f"lines {a}-{b}"
            terms = tuple(names[i] for i in ids)
            out.append(Window(a, b, score, (score, 0.0, 0.0, 0.0), label, terms))
        return out, extra, n
