"""The C-like structure engine (Go, JavaScript/TypeScript, Rust, Java): a brace tree of
the masked text, statements split at ';' (and at line ends where a language has automatic
semicolons), and each language's classifier saying what a statement declares."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass

from ctxtools.source.scan.common import (
    MAX_SIGNATURE,
    Definition,
    LineStarts,
    ScanResult,
    at_word_start,
    collapse,
    count_references,
)
from ctxtools.source.scan.mask import Masked, mask_clike


@dataclass
class Decl:
    """A declaration found by a language's classifier in one statement.

    Offsets are relative to the statement text. ``body`` says what the statement's brace
    block holds, when this declaration owns it: "members" (definitions scoped to
    ``scope_name or name``; methods), "items" (definitions scoped likewise but keeping
    their top-level kinds: a namespace or module) or None (code, not walked).
    ``emit`` False for a declaration that only provides a scope (a Rust ``mod``).
    """

    kind: str
    name: str
    name_at: int
    start: int
    body: str | None = None
    scope_name: str | None = None
    emit: bool = True
    one_line: bool = False  # signature: the first line only (values, type aliases)
    scope: str | None = None  # overrides the enclosing scope (a Go method's receiver type)
    end: int = -1  # where the declaration ends when not at the statement's end (group specs)
    sig_end: int = -1  # where its signature ends, when before ``end`` (a function argument)


class CLikeLanguage:
    """Per-language hooks for ``scan_clike``: a subclass gives ``classify`` (and
    ``imports``), an instance the language's patterns."""

    _NOTHING = re.compile("")

    def __init__(
        self,
        name: str,
        master: re.Pattern[str],
        keywords: frozenset[str],
        *,
        asi: bool = False,
        prefix: re.Pattern[str] = _NOTHING,
        modifiers: re.Pattern[str] = _NOTHING,
        lead: re.Pattern[str] | None = None,
    ) -> None:
        self.name = name
        self.master = master  # comments and literals (see ``mask.mask_clike``)
        self.keywords = keywords
        self.asi = asi  # statements also end at newlines (Go, JavaScript, TypeScript)
        self.prefix = prefix  # annotations or attributes before a declaration
        self.modifiers = modifiers  # the words between them and the declaration's keyword
        self.lead = lead  # the characters a master match starts with (``mask.mask_clike``)

    def head(self, stmt: str) -> tuple[int, int]:
        """(where the declaration starts: after its annotations or attributes, where its
        keyword is: after its modifiers) in STMT."""
        start = self.prefix.match(stmt).end()
        return start, self.modifiers.match(stmt, start).end()

    def classify(self, stmt: str, container: str, has_body: bool, scope: str | None) -> list[Decl]:
        """Declarations in one statement. ``container`` is "root", "items" or the kind of
        the enclosing definition (class, interface, trait, impl, enum...); ``scope`` its
        dotted name."""
        raise NotImplementedError

    def imports(self, masked: str, text: str) -> list[str]:
        return []


_BRACE = re.compile(r"[{}]")
_SEMI_OR_BRACKET = re.compile(r"[;()\[\]]")
_CONTINUES_AFTER = frozenset(",=([{|&+-*/%:?<.!^~")
_CONTINUES_BEFORE = frozenset(".?:|&+-*/%=,)]>}")
_CONTINUE_WORDS = ("extends", "implements", "as ", "satisfies", "=>")
_STRONG_CONTINUE = frozenset("=([,:?|&+>")
# A line starting with one of these (outside brackets) always starts a statement.
_STATEMENT_WORDS = (
    "export ",
    "import ",
    "class ",
    "function ",
    "function*",
    "const ",
    "let ",
    "var ",
    "interface ",
    "type ",
    "enum ",
    "declare ",
    "abstract ",
    "namespace ",
    "async function",
    "func ",
    "@",
)


_HEADER_WORD = re.compile(r"(?:class|interface|function|type|impl|fn|struct|enum|trait|record)\b")


def _inside_angles(masked: str, a: int, b: int) -> bool:
    """Whether offset ``b`` is inside the <...> of a declaration header that starts in
    masked[a:b] (``class Box<T extends { id: Id }> {``): '=>' and '->' do not close."""
    start = -1
    for m in _HEADER_WORD.finditer(masked, a, b):
        if at_word_start(masked, m.start()):
            start = m.start()
    start = max(start, masked.rfind(";", a, b))
    if start < 0:  # a member header ('static create<U extends { id: Id }>() {'): its line
        start = max(a, masked.rfind("\n", a, b))
    count = masked.count
    opened = count("<", start, b)
    closed = count(">", start, b) - count("=>", start, b) - count("->", start, b)
    return opened > closed


def _frames(masked: str) -> list:
    """Brace tree: each frame is [open, close, children]; the root is [-1, len, [...]]."""
    root: list = [-1, len(masked), []]
    stack = [root]
    for m in _BRACE.finditer(masked):
        if m.group() == "{":
            frame = [m.start(), -1, []]
            stack[-1][2].append(frame)
            stack.append(frame)
        elif len(stack) > 1:
            stack.pop()[1] = m.start()
    n = len(masked)
    for frame in stack[1:]:
        frame[1] = n
    return root


def _split_statements(flat: str, asi: bool) -> list[tuple[int, int]]:
    """Statement spans of a flattened segment: split at ';' outside brackets and, with
    ``asi``, at line ends outside brackets where neither side looks like a continuation."""
    spans: list[tuple[int, int]] = []
    start = 0
    if not asi:
        if "[" not in flat and "(" not in flat:
            pos = flat.find(";")
            while pos >= 0:
                spans.append((start, pos))
                start = pos + 1
                pos = flat.find(";", start)
        else:  # ';' inside brackets ([T; N], for(;;)) does not end a statement
            depth = 0
            for m in _SEMI_OR_BRACKET.finditer(flat):
                c = m.group()
                if c == ";":
                    if depth <= 0:
                        spans.append((start, m.start()))
                        start = m.end()
                elif c in "([":
                    depth += 1
                else:
                    depth -= 1
        spans.append((start, len(flat)))
        return [(a, b) for a, b in spans if not flat[a:b].isspace() and b > a]
    depth = 0
    pos = 0
    prev = ""  # the previous non-blank line, stripped
    in_literal = False  # inside a multi-line literal ('`' opens and closes one when masked)
    for line in flat.split("\n"):
        stripped = line.strip()
        if stripped:
            was_in_literal = in_literal
            if "`" in line and line.count("`") % 2:
                in_literal = not in_literal
            if (
                not was_in_literal
                and depth <= 0
                and prev
                and pos > start
                and (
                    (stripped.startswith(_STATEMENT_WORDS) and prev[-1] not in _STRONG_CONTINUE)
                    or (
                        prev[-1] not in _CONTINUES_AFTER
                        and not prev.endswith(_CONTINUE_WORDS)
                        and stripped[0] not in _CONTINUES_BEFORE
                        and not stripped.startswith(_CONTINUE_WORDS)
                    )
                )
            ):
                spans.append((start, pos))
                start = pos
            if ";" in line:
                off = pos
                base = depth
                for part in line.split(";")[:-1]:
                    base += part.count("(") + part.count("[") - part.count(")") - part.count("]")
                    off += len(part)
                    if base <= 0:
                        spans.append((start, off))
                        start = off + 1
                    off += 1
            depth += line.count("(") + line.count("[") - line.count(")") - line.count("]")
            if depth < 0:
                depth = 0
            prev = stripped
        pos += len(line) + 1
    spans.append((start, len(flat)))
    return [(a, b) for a, b in spans if b > a and not flat[a:b].isspace()]


def _strip_comment_spans(text: str, a: int, b: int, comments: list[tuple[int, int]]) -> str:
    """text[a:b] without the comments inside it."""
    i = bisect_right(comments, (a, -1))
    if i > 0 and comments[i - 1][1] > a:
        i -= 1
    parts = []
    pos = a
    while i < len(comments) and comments[i][0] < b:
        cs, ce = comments[i]
        if cs > pos:
            parts.append(text[pos:cs])
        parts.append(" ")
        pos = max(pos, ce)
        i += 1
    if pos < b:
        parts.append(text[pos:b])
    return "".join(parts)


def scan_clike(text: str, lang: CLikeLanguage) -> ScanResult:
    """Definitions, references and imports of a C-like source text."""
    masked = mask_clike(text, lang.master, lang.lead)
    walker = _Walker(text, masked, lang)
    walker.walk(_frames(masked.text), "root", None)
    definitions = walker.definitions
    definitions.sort(key=lambda d: d.line)
    refs = count_references(masked.text, lang.keywords, definitions)
    return ScanResult(lang.name, definitions, refs, lang.imports(masked.text, text))


class _Walker:
    """The walk of one text's brace tree: each frame's segments are split into statements,
    the language classifies them, and a block of members or items is walked in turn."""

    def __init__(self, text: str, masked: Masked, lang: CLikeLanguage) -> None:
        self.text = text
        self.masked = masked.text
        self.comments = masked.comments
        self.lines = LineStarts(masked.text)
        self.classify = lang.classify
        self.asi = lang.asi
        self.definitions: list[Definition] = []

    def signature(self, a: int, b: int, one_line: bool) -> str:
        masked, text, comments = self.masked, self.text, self.comments
        b = max(a, b)
        if one_line:
            nl = masked.find("\n", a, b)
            if nl >= 0:
                b = nl
        if b - a > 4 * MAX_SIGNATURE:
            b = a + 4 * MAX_SIGNATURE
        if comments and masked[a:b] != text[a:b]:
            sig = collapse(_strip_comment_spans(text, a, b, comments))
        else:
            sig = collapse(text[a:b])
        return sig[:-1].rstrip() if sig.endswith(",") else sig  # 'where T: Send,'

    def flatten(self, a: int, b: int, inner: list) -> tuple[str, Callable[[int], int]]:
        """masked[a:b] with its child frames INNER shown as '{}', and the function taking
        an offset in that text back to one in the whole text."""
        masked = self.masked
        if not inner:

            def real_plain(f: int) -> int:
                return a + f

            return masked[a:b], real_plain
        pieces = []
        marks = []  # (flat offset, real offset)
        pos = a
        flat_len = 0
        for child in inner:
            pieces.append(masked[pos : child[0]])
            flat_len += child[0] - pos
            marks.append((flat_len, child[0]))
            pieces.append("{}")
            flat_len += 2
            pos = child[1] + 1
            marks.append((flat_len, pos))
        pieces.append(masked[pos:b])
        flats = [fl for fl, _ in marks]

        def real(f: int) -> int:
            k = bisect_right(flats, f)  # the last mark at or before f (log time: a
            if k == 0:  # segment may hold a hundred thousand call statements)
                return a + f
            fl, rl = marks[k - 1]
            return rl + (f - fl)

        return "".join(pieces), real

    def segment(self, a: int, b: int, inner: list, body, container: str, scope: str | None):
        """Handle the statements of masked[a:b] (inner: child frames inside it, shown as
        '{}'); ``body`` is the frame that follows the segment, or None."""
        flat, real = self.flatten(a, b, inner)
        spans = _split_statements(flat, self.asi)
        last_index = len(spans) - 1
        for i, (sa, sb) in enumerate(spans):
            has_body = body is not None and i == last_index and not flat[sb:].strip()
            stmt = flat[sa:sb]
            decls = self.classify(stmt, container, has_body, scope)
            last = len(decls) - 1
            for j, d in enumerate(decls):
                owned = body if has_body and j == last else None
                self.declare(d, stmt, sa, real, owned, scope)

    def declare(self, d: Decl, stmt: str, sa: int, real, body, scope: str | None) -> None:
        """Record declaration D of the statement at flat offset SA; BODY is the frame it
        owns (walked when it holds members or items), or None."""
        start = real(sa + d.start)
        line = self.lines.line(real(sa + d.name_at))
        if body is not None:
            end = body[1]
            sig = self.signature(start, body[0], d.one_line)
        elif d.end >= 0:
            end = real(sa + d.end)
            sig_end = real(sa + d.sig_end) if d.sig_end >= 0 else end
            sig = self.signature(start, sig_end, d.one_line)
        else:
            end = real(sa + len(stmt.rstrip()))
            sig = self.signature(start, end, d.one_line)
        if d.emit:
            self.definitions.append(
                Definition(
                    d.kind,
                    d.name,
                    line,
                    sig,
                    d.scope if d.scope is not None else scope,
                    max(line, self.lines.line(end)),
                )
            )
        if body is not None and d.body is not None:
            inner_scope = d.scope_name if d.scope_name is not None else d.name
            if not inner_scope:
                inner_scope = scope
            elif scope:
                inner_scope = scope + "." + inner_scope
            self.walk(body, d.body if d.body == "items" else d.kind, inner_scope)

    def walk(self, frame, container: str, scope: str | None) -> None:
        masked = self.masked
        count = masked.count
        pos = frame[0] + 1
        end = frame[1]
        seg_start = pos
        balance = 0
        inner: list = []
        for child in frame[2]:
            o = child[0]
            balance += (
                count("(", pos, o) + count("[", pos, o) - count(")", pos, o) - count("]", pos, o)
            )
            if balance > 0 or (
                masked.find("<", seg_start, o) >= 0 and _inside_angles(masked, seg_start, o)
            ):
                inner.append(child)
            else:
                self.segment(seg_start, o, inner, child, container, scope)
                inner = []
                seg_start = child[1] + 1
                balance = 0
            pos = child[1] + 1
        self.segment(seg_start, end, inner, None, container, scope)
