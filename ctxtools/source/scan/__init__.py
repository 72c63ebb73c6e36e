"""Definition and reference scanners: the public API and the per-language dispatch.

Which scanner reads a file is one table, ``scan.languages``: a language's extensions, file
names and ``#!`` interpreters, and either its hand-written scanner or its tree-sitter
grammar with the rule table beside it. Dispatch is a look-up in it; a scanner's module (or a
grammar) is imported the first time a file needs it.

The hand-written scanners (Python, Go, JavaScript/TypeScript, Rust, Java: no parser
library, no native code) work in two steps:

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

The tree-sitter languages (C, C++, C#, Ruby, PHP, Kotlin, Swift, Scala, Lua, Bash) are
parsed by their grammar wheel, in C, and walked by their rule table (``scan.treesitter``,
``scan.tsrules*``); a grammar that is not installed leaves its files mapped as text.

References are the words of the masked text (so never one inside a comment or a string)
that are not numbers or the language's keywords, minus one use per emitted definition
name: calls, base classes, imports, annotations, attribute names, but also parameters and
locals; a graph keeps those that another file defines.

Everything is linear in the input (a 10 MB single line included) and never raises.
Figures against Universal Ctags and the TypeScript compiler: bench/bench_scan_oracle.py.

Public API::

    language_for(path) -> str | None
    script_name(path) -> bool                        (no extension: a #! line may say)
    language_of(path, text) -> str | None            (the name, else the #! line)
    scan_source(path, text) -> ScanResult | None
    scan_bytes(path, data) -> ScanResult | None      (UTF-8, errors="replace")
    Definition(kind, name, line, signature, scope, end_line)
    ScanResult(language, definitions, references, imports)

The package reads top-down, imports going only downward: ``common`` (the shared types and
helpers) <- ``mask`` (masking of C-like comments and literals) <- ``clike`` (the C-like
structure engine) <- one module per language (``python``, ``go``, ``js``, ``rust``,
``java``), and ``treesitter`` <- ``tsrules`` <- ``tsrules_c``, ``tsrules_other``;
``languages`` (the table) imports nothing; this module imports ``common`` and the table,
and a scanner's module only when a file needs it.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable

from ctxtools.source.scan.common import KINDS, Definition, ScanResult, count_references
from ctxtools.source.scan.languages import (
    BY_NAME,
    EXTENSIONS,
    INTERPRETERS,
    LANGUAGES,
    NAMES,
    TREE_SITTER,
)

__all__ = [
    "KINDS",
    "LANGUAGES",
    "Definition",
    "ScanResult",
    "grammar_note",
    "header_language",
    "language_for",
    "language_of",
    "preload",
    "script_language",
    "script_name",
    "shebang_language",
    "scan_bytes",
    "scan_source",
]

# A #! line: the interpreter it names (looked up in ``languages.INTERPRETERS``).
_SHEBANG = re.compile(rb"#![ \t]*(?:/usr)?(?:/local)?/bin/(?:env[ \t]+(?:-S[ \t]+)?)?([\w.+-]+)")
# What only C++ says in a header (a C header may say extern "C" under __cplusplus): a line
# that starts so (after a newline, or at the very start: the search then skips to each
# newline at C speed), a ``std::`` name, or one of three keywords.
_CPP_LINE = (
    rb"[ \t]*(?:template[ \t]*<|namespace[ \t]+\w*[ \t]*\{|(?:class|struct)[ \t]+\w+"
    rb"(?:[ \t]+final)?[ \t]*(?::[ \t]*(?:public|private|protected)\b|\{[^}]*\b(?:public|private"
    rb"|protected)[ \t]*:)|(?:public|private|protected)[ \t]*:|using[ \t]+namespace\b"
    rb"|#[ \t]*include[ \t]*<(?:iostream|string|vector|memory|map|utility|algorithm"
    rb"|cstdint|cstddef|cstdio|cstdlib|cstring|functional|type_traits)>)"
)
_CPP_FIRST_LINE = re.compile(_CPP_LINE)
_CPP_NEXT_LINE = re.compile(rb"\n" + _CPP_LINE)
_CPP_STD = re.compile(rb"\bstd::\w")
_CPP_KEYWORD = re.compile(rb"\b(?:constexpr|nullptr|noexcept)\b")
_CPP_WORDS = ("template", "namespace", "class", "public", "private", "protected", "using",
              "#include <", "std::", "constexpr", "nullptr", "noexcept")  # fmt: skip


def _says_cpp(head: bytes) -> bool:
    """Whether HEAD has a line, a name or a keyword only C++ has (``_CPP_LINE``...)."""
    return bool(
        _CPP_FIRST_LINE.match(head)
        or _CPP_NEXT_LINE.search(head)
        or (b"std::" in head and _CPP_STD.search(head))
        or (
            (b"constexpr" in head or b"nullptr" in head or b"noexcept" in head)
            and _CPP_KEYWORD.search(head)
        )
    )


def language_for(path: str) -> str | None:
    """The scanner language for a path, by extension (a ``.h`` header says "c": its
    content decides, ``header_language``); None when there is no scanner."""
    dot = path.rfind(".")
    if dot < 0 or "/" in path[dot:] or "\\" in path[dot:]:
        return NAMES.get(path.rsplit("/", 1)[-1])
    lang = EXTENSIONS.get(path[dot:].lower())
    if lang is None:
        return NAMES.get(path.rsplit("/", 1)[-1])
    return lang


def script_name(path: str) -> bool:
    """Whether PATH's language is for its ``#!`` line to say: a name with no scanner and
    no extension (no dot after its first character: ``bin/deploy``, ``.profile``; not
    ``notes.txt`` nor ``manage.py-tpl``)."""
    name = path.rsplit("/", 1)[-1]
    return "." not in name[1:] and language_for(path) is None


def script_language(path: str, head: bytes | str) -> str | None:
    """The language of a script named PATH whose content starts with HEAD: its ``#!``
    line's interpreter when the name says nothing (``script_name``), else None."""
    if not head.startswith("#!" if isinstance(head, str) else b"#!") or not script_name(path):
        return None
    return shebang_language(head)


def shebang_language(head: bytes | str) -> str | None:
    """The language a script's ``#!`` line names (``#!/usr/bin/env ruby``), or None."""
    if isinstance(head, str):
        head = head[:200].encode("utf-8", "replace")
    if not head.startswith(b"#!"):
        return None
    m = _SHEBANG.match(head)
    if m is None:
        return None
    name = m.group(1).decode("ascii", "replace")
    return INTERPRETERS.get(name) or INTERPRETERS.get(name.rstrip("0123456789.-"))


# What only Objective-C says in a header: a directive at a line's start.
_OBJC_HEADER = re.compile(r"^[ \t]*@(?:interface|protocol|implementation|end)\b", re.M)


def header_language(text: str) -> str:
    """C, C++ or Objective-C for a ``.h`` header, by what it says: ``@interface`` makes it
    Objective-C (mapped as text: no grammar reads it); a class with access specifiers, a
    namespace, a template, ``std::``, a C++ standard header... make it C++."""
    head = text[:65536]
    if "@" in head and _OBJC_HEADER.search(head):
        return "objc"
    if not any(w in head for w in _CPP_WORDS):
        return "c"  # none of the words the pattern needs: no search
    return "cpp" if _says_cpp(head.encode("utf-8", "replace")) else "c"


def language_of(path: str, text: str) -> str | None:
    """The language of a file: by its name, by its shebang when the name says nothing and
    has no extension (``script_name``), and a ``.h`` header by its content."""
    language = language_for(path)
    if language is None:
        return script_language(path, text)
    if language == "c" and path[-2:].lower() == ".h":
        return header_language(text)
    return language


# language -> its hand-written scanner (the function its entry names), once imported
_SCANNERS: dict[str, Callable[[str], ScanResult]] = {}


def _hand_scanner(language: str) -> Callable[[str], ScanResult]:
    """LANGUAGE's hand-written scanner, its module imported the first time it is asked."""
    scan = _SCANNERS.get(language)
    if scan is None:
        module, function = BY_NAME[language].scanner
        scan = getattr(importlib.import_module(f"{__name__}.{module}"), function)
        _SCANNERS[language] = scan
    return scan


def preload(languages) -> None:
    """Load the scanners of LANGUAGES now (a hand scanner's module, a grammar): done once
    before worker processes are forked, each of them has them without loading them again.
    A grammar that is not installed is only noted missing, as on first use."""
    for language in sorted(set(languages) - {None, "objc"}):
        if language in TREE_SITTER:
            from ctxtools.source.scan.treesitter import grammar

            grammar(language)
        elif language in BY_NAME and BY_NAME[language].scanner is not None:
            _hand_scanner(language)


def scan_source(path: str, text: str) -> ScanResult | None:
    """Scan decoded source text; None when ``path``'s language has no scanner.

    Never raises on odd input (invalid UTF-8 decoded with errors="replace", CRLF, NUL
    bytes, unbalanced braces, a multi-megabyte single line): the scanners are linear.
    """
    language = language_of(path, text)
    if language is None:
        return None
    if language == "objc":  # references only, like a language whose grammar is missing
        return ScanResult(language, [], count_references(text, frozenset(), []), [])
    if language in TREE_SITTER:
        from ctxtools.source.scan.treesitter import scan as scan_tree

        return scan_tree(language, text)
    return _hand_scanner(language)(text)


def grammar_note(languages) -> str | None:
    """One note naming the tree-sitter languages among LANGUAGES whose grammar wheel is
    not installed (their files were mapped as text), or None. Loads no grammar."""
    wanted = [lang for lang in languages if lang in TREE_SITTER]
    if not wanted:
        return None
    from ctxtools.source.scan.treesitter import missing_note

    return missing_note(wanted)


def scan_bytes(path: str, data: bytes) -> ScanResult | None:
    """``scan_source`` on raw bytes, decoded as UTF-8 with errors="replace"."""
    if language_for(path) is None and script_language(path, data[:256]) is None:
        return None
    return scan_source(path, data.decode("utf-8", errors="replace"))
