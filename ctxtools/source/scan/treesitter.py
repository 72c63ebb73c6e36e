"""The tree-sitter backend: C, C++, C#, Ruby, PHP, Kotlin, Swift, Scala, Lua and Bash.

Each language's grammar is its own registry wheel (``tree-sitter-c`` ...), loaded the first
time a file of that language is scanned, never before: a run that meets none loads no
grammar and not even the ``tree_sitter`` bindings. A grammar that is not installed is
recorded in ``MISSING`` (the map says so once, ``missing_note``) and its files are mapped
as text: references, no definitions.

The walk visits only what can hold definitions: the file's top level, namespaces,
preprocessor branches, class bodies. Function bodies are never entered, so the Python work
is proportional to the definitions, not to the file; parsing is tree-sitter's, in C. What
a language declares, and where its bodies are, is its rule table (``scan.tsrules_c``,
``scan.tsrules_other``, on ``scan.tsrules``), named beside its grammar in ``scan.languages``.

References are counted as the hand scanners count them (``common.count_references``) over
the source with every comment and string blanked (found by one query per grammar, run in
C); the keywords are the grammar's own anonymous word tokens. A file that does not parse
keeps every definition tree-sitter recovered around the error (an ``ERROR`` node is walked
like a container).
"""

from __future__ import annotations

import importlib
import re

from ctxtools.source.scan.common import (
    Definition,
    ScanResult,
    blank_spans,
    collapse,
    count_references,
)
from ctxtools.source.scan.languages import GRAMMARS

# Languages whose grammar (or the bindings) could not be loaded in this process.
MISSING: set[str] = set()


class _Grammar:
    """A loaded grammar: its parser, the literal-finding query, its keywords."""

    __slots__ = ("keywords", "literals", "parser", "rules", "ts", "whole")

    def __init__(self, language: str, ts, lang) -> None:
        module = f"{__package__}.{GRAMMARS[language].rules}"
        self.rules = importlib.import_module(module).rules(language)
        self.parser = ts.Parser(lang)
        self.ts = ts
        self.whole = self.parser.included_ranges  # (the default: everything)
        kinds = [k for k in self.rules.literals if _has_kind(lang, k)]
        pattern = " ".join(f"({k}) @x" for k in kinds)
        wanted = pattern and self.rules.strip is None
        self.literals = ts.QueryCursor(ts.Query(lang, pattern)) if wanted else None
        self.keywords = _keywords(lang) | self.rules.keywords


def _has_kind(lang, kind: str) -> bool:
    try:
        return lang.id_for_node_kind(kind, True) not in (None, 0)
    except Exception:  # an older or newer binding with another signature
        return False


_WORD = re.compile(r"[A-Za-z_]\w*\Z")


def _keywords(lang) -> frozenset[str]:
    """The grammar's anonymous tokens that look like words: its keywords."""
    out = set()
    for i in range(lang.node_kind_count):
        kind = lang.node_kind_for_id(i)
        if kind and not lang.node_kind_is_named(i) and _WORD.match(kind):
            out.add(kind)
    return frozenset(out)


_LOADED: dict[str, _Grammar] = {}


def grammar(language: str) -> _Grammar | None:
    """The loaded grammar for LANGUAGE, or None when its wheel is not installed."""
    g = _LOADED.get(language)
    if g is not None or language in MISSING:
        return g
    spec = GRAMMARS[language]
    try:
        import tree_sitter as ts

        lang = ts.Language(getattr(importlib.import_module(spec.module), spec.function)())
        g = _Grammar(language, ts, lang)
    except Exception:  # not installed, or a wheel built for another binding: text only
        MISSING.add(language)
        return None
    _LOADED[language] = g
    return g


def missing_note(languages) -> str | None:
    """One note for the tree-sitter languages among LANGUAGES whose grammar is missing."""
    missing = sorted(lang for lang in set(languages) if lang in GRAMMARS and not available(lang))
    if not missing:
        return None
    packages = " ".join(GRAMMARS[lang].package for lang in missing)
    return (
        f"no tree-sitter grammar for {', '.join(missing)}: those files are mapped as text"
        f" (pip install {packages})"
    )


def available(language: str) -> bool:
    """Whether LANGUAGE's grammar can be loaded (found without loading it when possible)."""
    if language in _LOADED:
        return True
    if language in MISSING:
        return False
    import importlib.util

    try:
        return (
            importlib.util.find_spec("tree_sitter") is not None
            and importlib.util.find_spec(GRAMMARS[language].module) is not None
        )
    except (ImportError, ValueError):
        return False


# --- masking ---------------------------------------------------------------------------------


def _masked(src: bytes, g: _Grammar, root) -> bytes:
    """SRC with every comment and string blanked (newlines kept), or without them: what
    the references are counted in, as bytes (``count_references`` counts bytes: a decoded
    copy would only be encoded again)."""
    strip = g.rules.strip
    if strip is not None:
        return strip.sub(b" ", src)
    if g.literals is None:
        return src
    spans = []
    for nodes in g.literals.captures(root).values():
        spans.extend((n.start_byte, n.end_byte) for n in nodes)
    if not spans:
        return src
    spans.sort()
    return blank_spans(src, spans)


# --- the walk --------------------------------------------------------------------------------


class Walk:
    """One file's walk: the source bytes and what has been found so far. The rules in
    ``tsrules`` call ``emit`` and ``visit``."""

    __slots__ = ("aliases", "defs", "imports", "language", "rules", "src")

    def __init__(self, src: bytes, rules, language: str) -> None:
        self.src = src
        self.rules = rules
        self.language = language
        self.defs: list[Definition] = []
        self.imports: list[str] = []
        self.aliases: dict[str, str] = {}  # a name bound by an import -> what it names

    def text(self, node) -> str:
        return self.src[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def visit(self, node, scope: str | None, in_class: bool) -> None:
        """Visit the children of a container NODE (a file, namespace or class body)."""
        handlers = self.rules.handlers
        containers = self.rules.containers
        for child in node.named_children:
            t = child.type
            h = handlers.get(t)
            if h is not None:
                h(self, child, scope, in_class)
            elif t in containers:
                self.visit(child, scope, in_class)

    def emit(
        self,
        kind: str,
        name: str,
        name_node,
        node,
        scope: str | None,
        body=None,
        sig_end: int | None = None,
        suffix: str = "",
    ) -> None:
        """Record a definition: its line is its name's, its signature the declaration up to
        its body (or SIG_END), its end line the node's."""
        if not name:
            return
        start = _signature_start(node, self.rules.leading)
        end = body.start_byte if body is not None else (sig_end or node.end_byte)
        raw = self.src[start:end]
        if body is None and sig_end is None:
            nl = raw.find(b"\n", name_node.end_byte - start) if name_node is not None else -1
            if nl > 0 and len(raw) > 200:
                raw = raw[:nl]
        sig = collapse(raw.decode("utf-8", "replace") + suffix).rstrip("{;:= ").rstrip()
        while sig.endswith(")") and sig.count(")") > sig.count("("):
            sig = sig[:-1].rstrip()  # a wrapping macro's: UV_UNUSED(static int f(void))
        if name_node is not None:
            line = name_node.start_point[0] + 1
        else:  # (a nameless init, a companion object): the line its signature starts on,
            # not its annotations' (``@available(...)`` above ``init(...)``)
            line = node.start_point[0] + 1 + self.src.count(b"\n", node.start_byte, start)
        end_row, end_col = node.end_point
        end_line = end_row + (1 if end_col > 0 or end_row == 0 else 0)
        self.defs.append(Definition(kind, name, line, sig, scope, max(end_line, line)))


def _signature_start(node, leading: frozenset) -> int:
    """Where a declaration's signature starts: after its leading attributes, annotations
    and comments."""
    if not leading:
        return node.start_byte
    for child in node.children:
        if child.type not in leading:
            return child.start_byte
    return node.start_byte


def _parse(g: _Grammar, src: bytes):
    """SRC's tree: its prepared bytes, without the spans the rules skip."""
    rules = g.rules
    skip = rules.skip(src) if rules.skip is not None else None
    data = rules.prepare(src) if rules.prepare is not None else src
    if not skip:
        return g.parser.parse(data)
    g.parser.included_ranges = _included(g.ts, src, skip)
    try:
        return g.parser.parse(data)
    finally:
        g.parser.included_ranges = g.whole


def _included(ts, src: bytes, skip) -> list:
    """The ranges of SRC between the SKIP spans, with their (row, byte column) points:
    the parser never reads what lies outside them, and its nodes keep SRC's positions."""
    out = []
    row = line_start = pos = 0
    count, rfind, Point, Range = src.count, src.rfind, ts.Point, ts.Range

    def point(at: int):
        nonlocal row, line_start, pos
        n = count(b"\n", pos, at)
        if n:
            row += n
            line_start = rfind(b"\n", pos, at) + 1
        pos = at
        return Point(row, at - line_start)

    start, start_point = 0, Point(0, 0)
    for a, b in skip:
        out.append(Range(start_point, point(a), start, a))
        start, start_point = b, point(b)
    out.append(Range(start_point, point(len(src)), start, len(src)))
    return out


def scope_join(scope: str | None, name: str) -> str:
    return f"{scope}.{name}" if scope else name


def scan(language: str, text: str) -> ScanResult:
    """Scan TEXT as LANGUAGE; without its grammar, references only (mapped as text)."""
    g = grammar(language)
    if text.startswith("\ufeff"):
        text = " " + text[1:]  # a BOM: one column, no line moved
    if g is None:
        return ScanResult(language, [], count_references(text, frozenset(), []), [])
    src = text.encode("utf-8", "surrogatepass")
    root = _parse(g, src).root_node
    w = Walk(src, g.rules, language)
    w.visit(root, None, False)
    masked = _masked(src, g, root)
    defs = w.defs
    refs = count_references(masked, g.keywords, defs)
    for alias, target in w.aliases.items():
        n = refs.pop(alias, 0)
        if n and target:
            refs[target] = refs.get(target, 0) + n
    return ScanResult(language, defs, refs, w.imports)
