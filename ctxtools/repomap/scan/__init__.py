"""Definition and reference scanners: the public API and the per-language dispatch.

Every scanner is hand-written (no parser library, no native code) and works in two steps:

1. *Masking*: a compiled master pattern per language finds comments and literals
   (strings, chars, Python prefixes and triple quotes, Go raw strings, Rust raw strings
   ``r#"..."#`` and nested block comments, Java text blocks, JS template literals whose
   ``${}`` code stays code, JS regular expression literals told from divisions by what
   precedes them); they become blanks of the same length, newlines kept and a string's
   quotes kept. Offsets and line numbers in the masked text are those of the original, and
   nothing inside a comment or a string can ever look like code.
2. *Structure*: Python is indentation-aware (``scan.python``); Go, JavaScript/TypeScript,
   Rust and Java share ``scan_clike``: a brace tree of the masked text, statements split
   at ';' (and at line ends for Go/JS/TS, outside brackets, unless the line continues),
   and a small per-language classifier that says what each statement declares and whether
   its block holds members (class, interface, trait, impl: methods, scoped) or items
   (namespace, Rust mod) or code (function bodies, initializers: never walked).

References are the words of the masked text (so never one inside a comment or a string)
that are not numbers or the language's keywords, minus one use per emitted definition
name: calls, base classes, imports, annotations, attribute names, but also parameters and
locals; a graph keeps those that another file defines.

Everything is linear in the input (a 10 MB single line included) and never raises.
Figures against Universal Ctags and the TypeScript compiler: bench/bench_scan_oracle.py.

Public API::

    language_for(path) -> str | None
    scan_source(path, text) -> ScanResult | None
    scan_bytes(path, data) -> ScanResult | None      (UTF-8, errors="replace")
    Definition(kind, name, line, signature, scope, end_line)
    ScanResult(language, definitions, references, imports)

The package reads top-down, imports going only downward: ``common`` (the shared types and
helpers) <- ``mask`` (masking of C-like comments and literals) <- ``clike`` (the C-like
structure engine) <- one module per language (``python``, ``go``, ``js``, ``rust``,
``java``) <- this module, which imports a language's module only when a file needs it.
"""

from __future__ import annotations

from ctxtools.repomap.scan.common import KINDS, LANGUAGES, Definition, ScanResult

__all__ = [
    "KINDS",
    "LANGUAGES",
    "Definition",
    "ScanResult",
    "language_for",
    "scan_bytes",
    "scan_source",
]

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
        from ctxtools.repomap.scan.python import scan
    elif language == "go":
        from ctxtools.repomap.scan.go import scan
    elif language in ("javascript", "typescript"):
        from ctxtools.repomap.scan.js import scan_javascript, scan_typescript

        scan = scan_typescript if language == "typescript" else scan_javascript
    elif language == "rust":
        from ctxtools.repomap.scan.rust import scan
    else:
        from ctxtools.repomap.scan.java import scan
    return scan(text)


def scan_bytes(path: str, data: bytes) -> ScanResult | None:
    """``scan_source`` on raw bytes, decoded as UTF-8 with errors="replace"."""
    if language_for(path) is None:
        return None
    return scan_source(path, data.decode("utf-8", errors="replace"))
