"""The scanners' shared types (``Definition``, ``ScanResult``) and helpers: line numbers
from offsets, blanking literals, collapsing signatures, counting references."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple

from ctxtools.analyzer.tokenizer import WORD_BYTES as _WORD_BYTES

KINDS = (
    "class",
    "function",
    "method",
    "interface",
    "struct",
    "enum",
    "trait",
    "impl",
    "type",
    "const",
    "variable",
)


class Definition(NamedTuple):
    """One definition: ``kind`` (see KINDS), ``name``, 1-based ``line`` of the name,
    ``signature`` (its declaration, whitespace collapsed), ``scope`` (enclosing
    class/impl/type names, dotted when nested, or None) and ``end_line`` (last line of its
    body, best effort).

    The one record of a definition, from the scanners through the scan cache (which keeps
    it as a plain tuple on disk: ``scancache.ScanPayload``) to the map, the ranking and the
    excerpts; read it by field name."""

    kind: str
    name: str
    line: int
    signature: str
    scope: str | None = None
    end_line: int = 0


@dataclass
class ScanResult:
    """What one file defines and uses."""

    language: str
    definitions: list[Definition] = field(default_factory=list)
    references: dict[str, int] = field(default_factory=dict)
    imports: list[str] = field(default_factory=list)


class LineStarts:
    """Offset -> 1-based line number, counting newlines from the previous query (queries
    come mostly in file order, so the total work stays close to one pass, in C)."""

    __slots__ = ("_count", "_line", "_pos", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._count = text.count
        self._pos = 0
        self._line = 1

    def line(self, offset: int) -> int:
        pos = self._pos
        if offset >= pos:
            self._line += self._count("\n", pos, offset)
        else:
            self._line -= self._count("\n", offset, pos)
        self._pos = offset
        return self._line


def blank(s: str) -> str:
    """Blank a comment: spaces, newlines kept."""
    if "\n" not in s:
        return " " * len(s)
    return "\n".join([" " * len(line) for line in s.split("\n")])


def blank_string(s: str, multi: str = '"') -> str:
    """Blank a string literal to '"   "' (same length, newlines kept): a line that closes a
    multi-line string is not mistaken for an empty one, and no prefix letter survives.
    A multi-line literal gets ``multi`` as its quotes (the C-like scanners use '`' so that
    statement splitting can tell a line that opens or closes one)."""
    n = len(s)
    if n <= 2:
        return s
    if "\n" not in s:
        return '"' + " " * (n - 2) + '"'
    return multi + blank(s[1:-1]) + multi


# Every byte but a newline as a space: a span blanked in bytes keeps its lines.
BLANK_BYTES = bytes(0x0A if b == 0x0A else 0x20 for b in range(256))
_SPLICE = re.compile(rb"(\\\r?\n)")


def blank_spans(src: bytes, spans) -> bytes:
    """SRC with each (start, end) span blanked, spans in order (one starting inside the
    one before is skipped): newlines kept, and line splices (a ``\\`` ending a line inside
    a C macro), so a macro still ends where it did."""
    parts = []
    pos = 0
    for a, b in spans:
        if a < pos:
            continue
        piece = src[a:b]
        if b"\\" in piece:
            pieces = _SPLICE.split(piece)
            pieces[::2] = [p.translate(BLANK_BYTES) for p in pieces[::2]]
            piece = b"".join(pieces)
        else:
            piece = piece.translate(BLANK_BYTES)
        parts.append(src[pos:a])
        parts.append(piece)
        pos = b
    if not parts:
        return src
    parts.append(src[pos:])
    return b"".join(parts)


_OPEN_WS = re.compile(r"([(\[<{])\s+")
_WS_CLOSE = re.compile(r",?\s+([)\]>}])")

MAX_SIGNATURE = 300


def collapse(sig: str) -> str:
    """Collapse a (possibly multi-line) declaration to one line."""
    if "\n" in sig or "\t" in sig or "  " in sig or "\r" in sig:
        sig = " ".join(sig.split())  # every run of whitespace one space, none at the ends
        # each space now single: a pattern that needs an opener before one, or a closer
        # after one, is run only when the text has that pair
        if "( " in sig or "[ " in sig or "< " in sig or "{ " in sig:
            sig = _OPEN_WS.sub(r"\1", sig)
        if " )" in sig or " ]" in sig or " >" in sig or " }" in sig:
            sig = _WS_CLOSE.sub(r"\1", sig)
    else:
        sig = sig.strip()
    if len(sig) > MAX_SIGNATURE:
        sig = sig[: MAX_SIGNATURE - 1].rstrip() + "…"
    return sig


def at_word_start(text: str, i: int) -> bool:
    """Whether offset ``i`` starts a word (patterns avoid a leading ``\\b``, which
    stops the regex engine from skipping ahead to a literal prefix: several times slower)."""
    return i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_$")


def words(text: str) -> frozenset[str]:
    """A keyword set from a whitespace-separated list."""
    return frozenset(text.split())


_WORD = re.compile(r"\w+")
# Where bytes break into words is the analyzer's one rule (``WORD_BYTES``: bytes >= 0x80,
# UTF-8 sequences, stay); words holding any are re-split with the Unicode-aware ``\w+``.


def count_references(
    masked: str | bytes, keywords: frozenset[str], definitions: list[Definition]
) -> dict[str, int]:
    """Identifier uses in masked text (or its UTF-8 bytes), minus keywords and minus one
    per definition site.

    Measured on Django: encoding to UTF-8, ``bytes.translate`` and ``split`` count the
    words three times faster than ``re.findall``; numbers are dropped afterwards, so
    ``0x1F`` never yields ``x1F``.
    """
    if isinstance(masked, str):
        masked = masked.encode("utf-8", "surrogatepass")
    raw = Counter(masked.translate(_WORD_BYTES).split())
    if masked.isascii():  # every word ASCII: no word to re-split (the same counts, faster)
        skip = _keyword_bytes(keywords)
        counts = {w.decode("ascii"): n for w, n in raw.items() if w[0] > 0x39 and w not in skip}
        return _less_definitions(counts, definitions)
    counts: Counter[str] = Counter()
    for word, n in raw.items():
        if word[0] < 0x3A:  # a digit: a number
            continue
        if word.isascii():
            key = word.decode("ascii")
            if key not in keywords:
                counts[key] = n
        else:
            for part in _WORD.findall(word.decode("utf-8", "replace")):
                if not part[0].isdigit() and part not in keywords:
                    counts[part] += n
    return _less_definitions(dict(counts), definitions)


def _less_definitions(counts: dict[str, int], definitions: list[Definition]) -> dict[str, int]:
    """COUNTS less one use per definition site (a name counted once is dropped)."""
    for d in definitions:
        n = counts.get(d.name)
        if n is not None:
            if n <= 1:
                del counts[d.name]
            else:
                counts[d.name] = n - 1
    return counts


# keyword set -> the same words as ASCII bytes (few sets: one per language)
_KEYWORD_BYTES: dict[frozenset, frozenset] = {}


def _keyword_bytes(keywords: frozenset[str]) -> frozenset[bytes]:
    kb = _KEYWORD_BYTES.get(keywords)
    if kb is None:
        kb = frozenset(k.encode("utf-8", "surrogatepass") for k in keywords)
        _KEYWORD_BYTES[keywords] = kb
    return kb
