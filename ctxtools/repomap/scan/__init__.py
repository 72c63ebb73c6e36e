"""Definition and reference scanners: the shared types and the per-language dispatcher.

Every scanner is hand-written (no parser library, no native code) and works in two steps:

1. *Masking*: a compiled master pattern per language finds comments and literals
   (strings, chars, Python prefixes and triple quotes, Go raw strings, Rust raw strings
   ``r#"..."#`` and nested block comments, Java text blocks, JS template literals whose
   ``${}`` code stays code, JS regular expression literals told from divisions by what
   precedes them); they become blanks of the same length, newlines kept and a string's
   quotes kept. Offsets and line numbers in the masked text are those of the original, and
   nothing inside a comment or a string can ever look like code.
2. *Structure*: Python is indentation-aware (``scan_python``); Go, JavaScript/TypeScript,
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


# ---------------------------------------------------------------------------------------
# Shared helpers


class LineIndex:
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


def at_word_start(text: str, i: int) -> bool:
    """Whether offset ``i`` starts a word (patterns avoid a leading ``\\b``, which
    stops the regex engine from skipping ahead to a literal prefix: several times slower)."""
    return i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_$")


def words(text: str) -> frozenset[str]:
    """A keyword set from a whitespace-separated list."""
    return frozenset(text.split())


_WORD = re.compile(r"\w+")
# Bytes that are not part of a word become spaces; bytes >= 0x80 (UTF-8 sequences) stay,
# and words holding any are re-split with the Unicode-aware ``\w+`` afterwards.
_WORD_BYTES = bytes(b if (chr(b).isalnum() or b == 0x5F or b >= 0x80) else 0x20 for b in range(256))


def count_references(
    masked: str, keywords: frozenset[str], definitions: list[Definition]
) -> dict[str, int]:
    """Identifier uses in masked text, minus keywords and minus one per definition site.

    Measured on Django: encoding to UTF-8, ``bytes.translate`` and ``split`` count the
    words three times faster than ``re.findall``; numbers are dropped afterwards, so
    ``0x1F`` never yields ``x1F``.
    """
    raw = Counter(masked.encode("utf-8", "surrogatepass").translate(_WORD_BYTES).split())
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
    for d in definitions:
        n = counts.get(d.name)
        if n is not None:
            if n <= 1:
                del counts[d.name]
            else:
                counts[d.name] = n - 1
    return dict(counts)


# ---------------------------------------------------------------------------------------
# The C-like family (Go, JavaScript/TypeScript, Rust, Java): masking


class Masked:
    """Masked text plus the comment spans (to drop comments from signatures)."""

    __slots__ = ("text", "comments")

    def __init__(self, text: str, comments: list[tuple[int, int]]) -> None:
        self.text = text
        self.comments = comments


_NESTED_COMMENT = re.compile(r"/\*|\*/")
_JS_REGEX_BODY = re.compile(r"/(?:[^/\\\n\[]|\\.|\[(?:[^\]\\\n]|\\.)*\])+/[a-zA-Z]*")
_TPL_PART = re.compile(r"`|\\.|\$\{", re.S)
_TPL_EXPR = re.compile(r"[{}`'\"]|//|/\*|/", re.S)
_JS_STRING = {
    "'": re.compile(r"'[^'\\\n]*(?:\\.[^'\\\n]*)*(?:'|$)", re.S | re.M),
    '"': re.compile(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*(?:"|$)', re.S | re.M),
}
_LINE_COMMENT = re.compile(r"//[^\n]*")
_BLOCK_COMMENT = re.compile(r"/\*[^*]*(?:\*+[^/*][^*]*)*(?:\*+/|\**\Z)", re.S)
# Characters after which a '/' starts a regular expression literal, not a division.
_REGEX_AFTER = frozenset("(,=:[!&|?{};+-*%<>~^")
_REGEX_AFTER_WORDS = frozenset(
    ("return", "typeof", "case", "do", "else", "in", "of", "void", "yield", "await",
     "delete", "throw", "new", "instanceof")
)  # fmt: skip


def mask_clike(text: str, master: re.Pattern[str]) -> Masked:
    """Blank comments and literals found by ``master`` (named groups decide how):

    c: comment; nc: nestable /* */ comment (Rust); s: string or char literal;
    lt: a Rust lifetime ('a: blanked so that it does not count as a use of ``a``);
    tpl: JS template literal (``${}`` code stays code, recursively masked);
    rx: a '/' that may start a JS regular expression literal.
    """
    out: list[str] = []
    comments: list[tuple[int, int]] = []
    _mask_into(text, 0, len(text), master, out, comments)
    return Masked("".join(out), comments)


def _mask_into(text, start, stop, master, out, comments) -> None:
    pos = start
    last = start
    search = master.search
    while True:
        m = search(text, pos, stop)
        if m is None:
            break
        kind = m.lastgroup
        s, e = m.span()
        if kind == "c":
            out.append(text[last:s])
            out.append(blank(text[s:e]))
            comments.append((s, e))
        elif kind == "s":
            out.append(text[last:s])
            out.append(blank_string(text[s:e], "`"))
        elif kind == "lt":
            out.append(text[last:s])
            out.append(" " * (e - s))
        elif kind == "nc":
            e = _nested_comment_end(text, s, stop)
            out.append(text[last:s])
            out.append(blank(text[s:e]))
            comments.append((s, e))
        elif kind == "tpl":
            out.append(text[last:s])
            e = _template(text, s, stop, master, out, comments)
        elif kind == "rx":
            if _slash_starts_regex(text, s, start, comments):
                r = _JS_REGEX_BODY.match(text, s, stop)
                if r is not None:
                    e = r.end()
                    out.append(text[last:s])
                    out.append(blank_string(text[s:e]))
                    last = pos = e
                    continue
            pos = s + 1
            continue
        last = pos = e
    out.append(text[last:stop])


def _nested_comment_end(text: str, s: int, stop: int) -> int:
    depth = 0
    pos = s
    while True:
        m = _NESTED_COMMENT.search(text, pos, stop)
        if m is None:
            return stop
        depth += 1 if m.group() == "/*" else -1
        pos = m.end()
        if depth == 0:
            return pos


def _slash_starts_regex(
    text: str, s: int, start: int, comments: list[tuple[int, int]] | tuple = ()
) -> bool:
    """Whether the '/' at ``s`` begins a regular expression literal (by what precedes,
    comments skipped: ``a ||\n  // why\n  /^[a-z]:/.test(p)`` is a regex after ``||``)."""
    j = s - 1
    k = len(comments) - 1
    while True:
        while j >= start and text[j] in " \t\r\n":
            j -= 1
        while k >= 0 and comments[k][0] > j:
            k -= 1
        if k >= 0 and comments[k][1] > j >= start:  # j is inside a comment: before it
            j = comments[k][0] - 1
            k -= 1
            continue
        break
    if j < start:
        return True
    c = text[j]
    if c in _REGEX_AFTER:
        return True
    if c.isalpha():
        k = j
        while k > start and (text[k - 1].isalnum() or text[k - 1] in "_$"):
            k -= 1
        return text[k : j + 1] in _REGEX_AFTER_WORDS
    return False


def _blank_template_piece(text: str, a: int, b: int, s: int, closed: bool) -> str:
    piece = blank(text[a:b])
    if a == s and piece:
        piece = "`" + piece[1:]
    if closed and piece:
        piece = piece[:-1] + "`"
    return piece


def _template(text, s, stop, master, out, comments) -> int:
    """Mask the template literal at ``s``; return its end. The code of each ``${...}``
    stays code (masked recursively); the literal text, ``${`` and ``}`` are blanked."""
    pos = s + 1
    lit_start = s
    while True:
        m = _TPL_PART.search(text, pos, stop)
        if m is None:
            out.append(_blank_template_piece(text, lit_start, stop, s, False))
            return stop
        g = m.group()
        if g == "`":
            out.append(_blank_template_piece(text, lit_start, m.end(), s, True))
            return m.end()
        if g[0] == "\\":
            pos = m.end()
            continue
        out.append(_blank_template_piece(text, lit_start, m.end(), s, False))
        code_end = _template_expr_end(text, m.end(), stop)
        _mask_into(text, m.end(), code_end, master, out, comments)
        if code_end >= stop:
            return stop
        lit_start = code_end
        pos = code_end + 1


def _template_expr_end(text: str, pos: int, stop: int) -> int:
    """Offset of the '}' closing a ``${`` expression that starts at ``pos``."""
    depth = 1
    expr_start = pos
    while True:
        m = _TPL_EXPR.search(text, pos, stop)
        if m is None:
            return stop
        g = m.group()
        if g == "{":
            depth += 1
            pos = m.end()
        elif g == "}":
            depth -= 1
            if depth == 0:
                return m.start()
            pos = m.end()
        elif g == "`":
            pos = _skip_template(text, m.start(), stop)
        elif g == "//":
            c = _LINE_COMMENT.match(text, m.start(), stop)
            pos = c.end()
        elif g == "/*":
            c = _BLOCK_COMMENT.match(text, m.start(), stop)
            pos = c.end()
        elif g == "/":
            r = None
            if _slash_starts_regex(text, m.start(), expr_start):
                r = _JS_REGEX_BODY.match(text, m.start(), stop)
            pos = r.end() if r is not None else m.end()
        else:
            c = _JS_STRING[g].match(text, m.start(), stop)
            pos = c.end() if c is not None else m.end()


def _skip_template(text: str, s: int, stop: int) -> int:
    pos = s + 1
    while True:
        m = _TPL_PART.search(text, pos, stop)
        if m is None:
            return stop
        g = m.group()
        if g == "`":
            return m.end()
        if g[0] == "\\":
            pos = m.end()
            continue
        end = _template_expr_end(text, m.end(), stop)
        pos = min(stop, end + 1)


# ---------------------------------------------------------------------------------------
# The C-like family: structure


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
    """Per-language hooks for ``scan_clike``; subclasses set the attributes."""

    name = ""
    master: re.Pattern[str]
    keywords: frozenset[str] = frozenset()
    asi = False  # statements also end at newlines (Go, JavaScript, TypeScript)

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
    masked_obj = mask_clike(text, lang.master)
    masked = masked_obj.text
    comments = masked_obj.comments
    lines = LineIndex(masked)
    root = _frames(masked)
    definitions: list[Definition] = []
    classify = lang.classify
    asi = lang.asi
    count = masked.count

    def signature(a: int, b: int, one_line: bool) -> str:
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

    def segment(a: int, b: int, inner: list, body, container: str, scope: str | None):
        """Handle the statements of masked[a:b] (inner: child frames inside it, shown as
        '{}'); ``body`` is the frame that follows the segment, or None."""
        if inner:
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
            flat = "".join(pieces)

            flats = [fl for fl, _ in marks]

            def real(f: int) -> int:
                k = bisect_right(flats, f)  # the last mark at or before f (log time: a
                if k == 0:  # segment may hold a hundred thousand call statements)
                    return a + f
                fl, rl = marks[k - 1]
                return rl + (f - fl)
        else:
            flat = masked[a:b]

            def real(f: int) -> int:
                return a + f

        spans = _split_statements(flat, asi)
        last_index = len(spans) - 1
        for i, (sa, sb) in enumerate(spans):
            has_body = body is not None and i == last_index and not flat[sb:].strip()
            stmt = flat[sa:sb]
            decls = classify(stmt, container, has_body, scope)
            if not decls:
                if has_body:
                    body = None  # code block: not walked
                continue
            for j, d in enumerate(decls):
                owns = has_body and j == len(decls) - 1
                start = real(sa + d.start)
                name_at = real(sa + d.name_at)
                line = lines.line(name_at)
                if owns:
                    end = body[1]
                    sig = signature(start, body[0], d.one_line)
                elif d.end >= 0:
                    end = real(sa + d.end)
                    sig_end = real(sa + d.sig_end) if d.sig_end >= 0 else end
                    sig = signature(start, sig_end, d.one_line)
                else:
                    end = real(sa + len(stmt.rstrip()))
                    sig = signature(start, end, d.one_line)
                if d.emit:
                    definitions.append(
                        Definition(
                            d.kind,
                            d.name,
                            line,
                            sig,
                            d.scope if d.scope is not None else scope,
                            max(line, lines.line(end)),
                        )
                    )
                if owns:
                    if d.body is not None:
                        inner_scope = d.scope_name if d.scope_name is not None else d.name
                        if not inner_scope:
                            inner_scope = scope
                        elif scope:
                            inner_scope = scope + "." + inner_scope
                        walk(body, d.body if d.body == "items" else d.kind, inner_scope)
                    body = None

    def walk(frame, container: str, scope: str | None):
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
                segment(seg_start, o, inner, child, container, scope)
                inner = []
                seg_start = child[1] + 1
                balance = 0
            pos = child[1] + 1
        segment(seg_start, end, inner, None, container, scope)

    walk(root, "root", None)
    definitions.sort(key=lambda d: d.line)
    refs = count_references(masked, lang.keywords, definitions)
    return ScanResult(lang.name, definitions, refs, lang.imports(masked, text))
