"""Definition and reference scanners: the shared types and the per-language dispatcher.

Every scanner is hand-written and works in two steps:

1. *Masking*: one compiled regular expression per language family finds comments and
   string literals (``re.sub`` over a master pattern, so the work is done in C), and
   replaces them by blanks of the same length. Newlines are kept, and a string keeps its
   first and last character (a quote), so offsets and line numbers in the masked text are
   those of the original, and nothing inside a comment or a string can ever look like code.
2. *Structure*: Python is indentation-aware (``scan_python``); Go, JavaScript/TypeScript,
   Rust and Java share a brace-depth pass (``scan_clike``) that splits the masked text into
   blocks and asks a small per-language grammar what each block header declares.

References are every identifier of the masked text (so never one inside a comment or a
string), minus the language's keywords and minus one use per emitted definition name.

Public API::

    language_for(path) -> str | None
    scan_source(path, text) -> ScanResult | None
    Definition(kind, name, line, signature, scope, end_line)
    ScanResult(language, definitions, references, imports)
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field

__all__ = [
    "KINDS",
    "LANGUAGES",
    "Definition",
    "ScanResult",
    "language_for",
    "scan_bytes",
    "scan_source",
]

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

_EXTENSIONS = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".go": "go",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".rs": "rust",
    ".java": "java",
}

LANGUAGES = ("python", "go", "javascript", "typescript", "rust", "java")


@dataclass(frozen=True)
class Definition:
    """One definition: ``kind`` (see KINDS), ``name``, 1-based ``line`` of the name,
    ``signature`` (its declaration, whitespace collapsed), ``scope`` (enclosing
    class/impl/type names, dotted when nested, or None) and ``end_line`` (last line of its
    body, best effort)."""

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


def language_for(path: str) -> str | None:
    """The scanner language for a path, by extension; None when there is no scanner."""
    dot = path.rfind(".")
    if dot < 0 or "/" in path[dot:] or "\\" in path[dot:]:
        return None
    return _EXTENSIONS.get(path[dot:].lower())


def scan_source(path: str, text: str) -> ScanResult | None:
    """Scan decoded source text; None when ``path``'s language has no scanner.

    Never raises on odd input (invalid UTF-8 decoded with errors="replace", CRLF, NUL
    bytes, unbalanced braces, a multi-megabyte single line): the scanners are linear.
    """
    language = language_for(path)
    if language is None:
        return None
    if language == "python":
        from ctxtools.repomap.scan_python import scan
    elif language == "go":
        from ctxtools.repomap.scan_go import scan
    elif language in ("javascript", "typescript"):
        from ctxtools.repomap.scan_js import scan_javascript, scan_typescript

        scan = scan_typescript if language == "typescript" else scan_javascript
    elif language == "rust":
        from ctxtools.repomap.scan_rust import scan
    else:
        from ctxtools.repomap.scan_java import scan
    return scan(text)


def scan_bytes(path: str, data: bytes) -> ScanResult | None:
    """``scan_source`` on raw bytes, decoded as UTF-8 with errors="replace"."""
    if language_for(path) is None:
        return None
    return scan_source(path, data.decode("utf-8", errors="replace"))


# ---------------------------------------------------------------------------------------
# Shared helpers


class LineIndex:
    """Offset -> 1-based line number, by binary search over newline offsets."""

    __slots__ = ("_starts",)

    def __init__(self, text: str) -> None:
        self._starts = [m.end() for m in _NEWLINE.finditer(text)]

    def line(self, offset: int) -> int:
        return bisect_right(self._starts, offset) + 1


_NEWLINE = re.compile(r"\n")


def blank(s: str) -> str:
    """Blank a comment: spaces, newlines kept."""
    if "\n" not in s:
        return " " * len(s)
    return _NOT_NEWLINE.sub(" ", s)


def blank_string(s: str) -> str:
    """Blank a string literal to '"   "' (same length, newlines kept): a line that closes a
    multi-line string is not mistaken for an empty one, and no prefix letter survives."""
    n = len(s)
    if n <= 2:
        return s
    if "\n" not in s:
        return '"' + " " * (n - 2) + '"'
    return '"' + _NOT_NEWLINE.sub(" ", s[1:-1]) + '"'


_NOT_NEWLINE = re.compile(r"[^\n]")

_WS = re.compile(r"\s+")
_OPEN_WS = re.compile(r"([(\[<{])\s+")
_WS_CLOSE = re.compile(r",?\s+([)\]>}])")

MAX_SIGNATURE = 300


def collapse(sig: str) -> str:
    """Collapse a (possibly multi-line) declaration to one line."""
    if "\n" in sig or "\t" in sig or "  " in sig or "\r" in sig:
        sig = _WS.sub(" ", sig).strip()
        sig = _OPEN_WS.sub(r"\1", sig)
        sig = _WS_CLOSE.sub(r"\1", sig)
    else:
        sig = sig.strip()
    if len(sig) > MAX_SIGNATURE:
        sig = sig[: MAX_SIGNATURE - 1].rstrip() + "…"
    return sig


_WORD = re.compile(r"\w+")


def count_references(
    masked: str, keywords: frozenset[str], definitions: list[Definition], word=_WORD
) -> dict[str, int]:
    """Identifier uses in masked text, minus keywords and minus one per definition site.

    ``\\w+`` then dropping numbers is faster than an identifier pattern with a leading
    ``\\b`` (which defeats the regex engine's scan) and never splits ``0x1F`` into ``x1F``.
    """
    counts = Counter(word.findall(masked))
    for key in [k for k in counts if k[0].isdigit() or k in keywords]:
        del counts[key]
    for d in definitions:
        n = counts.get(d.name)
        if n is not None:
            if n <= 1:
                del counts[d.name]
            else:
                counts[d.name] = n - 1
    return dict(counts)
