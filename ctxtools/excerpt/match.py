"""Matching: which lines of a text mention the query's identifiers, and how much.

A line matches an identifier when the identifier occurs in it as a whole word
(case-sensitive unless ``ignore_case``) -- an *exact* hit -- or when the identifier's words
are a run of the words of a compound name on the line (``verifyJwtToken`` holds ``jwt``;
``verify_token`` and ``verifyToken`` hold each other), compared without regard to case --
a *part* hit. A dotted identifier (``auth.jwt.verify``) matches its whole path. An exact hit
weighs 3 (a dotted path 4), a part hit 1, doubled on a line that defines the name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ctxtools.excerpt.definitions import defined_name
from ctxtools.excerpt.model import ExcerptOptions
from ctxtools.identifiers import compound_parts, is_dotted, joins_run, split_dotted

CLASSIFY_CACHE = 50_000  # matching lines remembered per Matcher (their classification)
WEIGHT_EXACT = 3.0
WEIGHT_PATH = 4.0
WEIGHT_PART = 1.0
DEFINITION_FACTOR = 2.0

_WORD_RE = re.compile(r"[^\W\d]\w*")
_FOLD = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")


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


def as_matcher(identifiers: Matcher | Iterable[str], options: ExcerptOptions) -> Matcher:
    if isinstance(identifiers, Matcher):
        return identifiers
    return Matcher(identifiers, options.ignore_case)
