"""Python scanner: indentation-aware, comment- and string-aware, no ``ast``.

Why not ``ast`` (decided by measurement): on Django 5.1.4's 2,788 ``.py`` files
``ast.parse`` alone takes 2.5 s (1,100 files/s) before any walking, and fails on Python 2
files; this scanner does the whole job (definitions, references, imports) in about 1.1 s
and agrees with ctags on every top-level and class-level definition there.

Steps: mask comments and strings (prefixes, triple quotes, escapes; an unterminated
string runs to the end of its line, or of the file for triple quotes); find ``def`` /
``class`` at line starts and module-level assignments at column 0; a block ends at the
first later non-blank line indented no deeper than its header (the masked text makes
docstring and comment lines blank, so they never end a block). A ``def`` inside a class
is a method scoped to the class (dotted for nested classes); anything inside a function
is local and not reported.
"""

from __future__ import annotations

import keyword
import re

from ctxtools.source.scan.common import (
    Definition,
    LineStarts,
    ScanResult,
    blank_string,
    collapse,
    count_references,
)

# Comments and strings. No string prefix here: a pattern that starts with an optional part
# defeats the regex engine's first-character scan (measured 4x slower); the loop in
# ``mask`` takes a prefix (r, b, f, u, rb, ...) back from the code before the quote.
_MASK = re.compile(
    r"""\#[^\n]*
      | '''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*(?:'''|\Z)
      | \"\"\"[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*(?:\"\"\"|\Z)
      | '[^'\\\n]*(?:\\.[^'\\\n]*)*(?:'|$)
      | "[^"\\\n]*(?:\\.[^"\\\n]*)*(?:"|$)
    """,
    re.X | re.S | re.M,
)
_PREFIX = frozenset("rRbBuUfF")


def mask(text: str) -> str:
    """The text with comments and string literals blanked (same length, same lines)."""
    out: list[str] = []
    last = 0
    for m in _MASK.finditer(text):
        s, e = m.span()
        if text[s] == "#":
            out.append(text[last:s])
            out.append(" " * (e - s))
        else:
            p = s
            while p > last and p > s - 2 and text[p - 1] in _PREFIX:
                p -= 1
            if p < s and (p == 0 or not (text[p - 1].isalnum() or text[p - 1] == "_")):
                s = p
            out.append(text[last:s])
            out.append(blank_string(text[s:e]))
        last = e
    out.append(text[last:])
    return "".join(out)


# Patterns start with a literal or a plain character class so that the regex engine can
# skip ahead quickly; line-start conditions are checked in Python on the few hits. Runs
# of blanks and names are possessive (``*+``, ``++``) where what follows can never be
# part of them (not the blanks after ``from`` or ``import``: "import  " matched one), so
# a line that does not match fails at once instead of giving the run back a character
# at a time (Django's 2,786 files: the three patterns 0.25 -> 0.11 s).
_DEF = re.compile(r"(?:def|class)[ \t]+([^\W\d]\w*)")
# Module-level assignments: at column 0 (UPPER_CASE or annotated; 'A, B = 1, 2' too), and
# UPPER_CASE ones indented under a module-level if/try (checked: not a keyword argument).
_VAR = re.compile(r"\n([^\W\d]\w*+(?:[ \t]*+,[ \t]*+[^\W\d]\w*+)*+)[ \t]*+(:[^=\n]*+)?=(?!=)")
_VAR_INDENTED = re.compile(r"\n[ \t]++([A-Z_][A-Z0-9_]*+)[ \t]*+=(?!=)")
# The previous line ends a statement (or opens a block) when it ends with none of these.
_LINE_CONTINUES = frozenset("([{,\\=+-*/%|&.<>~^@")
_IMPORT = re.compile(
    r"\n[ \t]*+(?:from[ \t]+(\.*+[\w.]*+)[ \t]++import\b|import[ \t]+([^\n;]++))"
)
# Where a def/class header ends: the first ':' outside brackets.
_HEADER_TOKEN = re.compile(r"[()\[\]{}:]")
_MAX_HEADER = 4000

_KEYWORDS = frozenset(keyword.kwlist) | {"self", "cls"}

_dedent_cache: dict[int, re.Pattern[str]] = {}


def _dedent(indent: int) -> re.Pattern[str]:
    pat = _dedent_cache.get(indent)
    if pat is None:
        # starts with a literal newline so that the engine can skip ahead (not '^')
        pat = re.compile(rf"\n[ \t]{{0,{indent}}}[^ \t\r\n\f\v]")
        _dedent_cache[indent] = pat
    return pat


def _is_constant(name: str) -> bool:
    """UPPER_CASE, not a dunder."""
    return (
        name.upper() == name
        and name.lower() != name
        and not (name.startswith("__") and name.endswith("__"))
    )


def _header_end(masked: str, start: int) -> int:
    """Offset just past the ':' that ends the header beginning at ``start`` (or -1)."""
    depth = 0
    limit = min(len(masked), start + _MAX_HEADER)
    for m in _HEADER_TOKEN.finditer(masked, start, limit):
        c = m.group()
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth <= 0:
            return m.end()
    return -1


def _strip_comments(orig: str, masked_part: str) -> str:
    """Drop '#' comments from a multi-line header (comments are blank in the mask)."""
    out = []
    pos = 0
    for line in orig.split("\n"):
        mline = masked_part[pos : pos + len(line)]
        pos += len(line) + 1
        h = line.find("#")
        while h >= 0:
            if not mline[h:].strip():
                line = line[:h]
                break
            h = line.find("#", h + 1)
        out.append(line)
    return "\n".join(out)


def _last_content_end(masked: str, lo: int, hi: int) -> int:
    """Offset of the last non-blank character in masked[lo:hi] (or lo)."""
    step = 4096
    end = hi
    while end > lo:
        start = max(lo, end - step)
        chunk = masked[start:end].rstrip()
        if chunk:
            return start + len(chunk) - 1
        end = start
        step *= 4
    return lo


def scan(text: str) -> ScanResult:
    masked = mask(text)
    nl_masked = "\n" + masked  # so that the first line starts after a newline too
    definitions = _definitions(text, masked, _candidates(masked, nl_masked))
    return ScanResult(
        "python", definitions, count_references(masked, _KEYWORDS, definitions), _imports(nl_masked)
    )


def _candidates(masked: str, nl_masked: str) -> list[tuple]:
    """Where a definition may be, in text order: (line start offset, indent, "class", "def"
    or None for a module-level variable, the match or the variables' names)."""
    candidates: list[tuple[int, int, str | None, re.Match[str] | list[str]]] = []
    for m in _DEF.finditer(masked):
        start = m.start()
        ls = masked.rfind("\n", 0, start) + 1
        pre = masked[ls:start]
        if pre:
            if not pre[-1].isspace():
                continue
            stripped = pre.strip()
            if stripped and stripped != "async":
                continue
        indent = len(pre) - len(pre.lstrip())
        candidates.append((ls, indent, "class" if masked[start] == "c" else "def", m))
    has_vars = False
    for m in _VAR.finditer(nl_masked):
        names = [
            name.strip()
            for name in m.group(1).split(",")
            if (m.group(2) or _is_constant(name.strip())) and name.strip() not in _KEYWORDS
        ]
        if names:
            candidates.append((m.start(1) - 1, 0, None, names))
            has_vars = True
    for m in _VAR_INDENTED.finditer(nl_masked):
        name = m.group(1)
        if _is_constant(name):
            pos = m.start() + 1 - 1  # the line start in masked (nl_masked is one longer)
            before = _last_content_end(masked, 0, pos)
            if before < pos and masked[before] not in _LINE_CONTINUES:
                candidates.append((pos, 1, None, [name]))
                has_vars = True
    if has_vars:
        candidates.sort(key=lambda c: c[0])
    return candidates


def _definitions(text: str, masked: str, candidates: list[tuple]) -> list[Definition]:
    """The CANDIDATES that are definitions: classes and functions outside functions
    (methods scoped to their classes), module-level variables outside blocks."""
    lines = LineStarts(masked)
    n = len(masked)
    definitions: list[Definition] = []
    # Open blocks: (end offset, keyword, name)
    stack: list[tuple[int, str, str]] = []
    in_function = 0  # how many "def" entries the stack holds
    for pos, indent, keyword_, m in candidates:
        while stack and stack[-1][0] <= pos:
            if stack.pop()[1] == "def":
                in_function -= 1
        if keyword_ is None:
            if stack:
                continue
            eol = masked.find("\n", pos)
            if eol < 0:
                eol = n
            sig_text = text[pos:eol]
            if "#" in sig_text:
                sig_text = _strip_comments(sig_text, masked[pos:eol])
            line = lines.line(pos)
            sig = collapse(sig_text)
            for name in m:
                definitions.append(Definition("variable", name, line, sig, None, line))
            continue
        if in_function:
            continue  # local to a function
        name = m.group(1)
        head_start = pos + indent
        hend = _header_end(masked, m.end())
        if hend < 0:
            eol = masked.find("\n", m.end())
            hend = n if eol < 0 else eol
            sig_text = text[head_start:hend]
        else:
            sig_text = text[head_start:hend]
            if "#" in sig_text and "\n" in sig_text:
                sig_text = _strip_comments(sig_text, masked[head_start:hend])
        # The body: from the line after the header to the first line indented no deeper.
        body_line_end = masked.find("\n", hend)
        if body_line_end < 0:
            block_end = n
        else:
            d = _dedent(indent).search(masked, body_line_end)
            block_end = n if d is None else d.start() + 1
        last = _last_content_end(masked, hend, block_end)
        line = lines.line(pos)
        end_line = max(line, lines.line(last))
        scope = ".".join(entry[2] for entry in stack) or None
        if keyword_ == "class":
            kind = "class"
        else:
            kind = "method" if stack else "function"
            in_function += 1
        definitions.append(Definition(kind, name, line, collapse(sig_text), scope, end_line))
        stack.append((block_end, keyword_, name))
    return definitions


def _imports(nl_masked: str) -> list[str]:
    """The modules named by import statements (``from X import``: X, dots kept)."""
    imports: list[str] = []
    for m in _IMPORT.finditer(nl_masked):
        if m.group(1) is not None:
            imports.append(m.group(1))
        else:
            for part in m.group(2).split(","):
                words = part.split()
                if words and words[0] not in ("(", "\\"):
                    imports.append(words[0])
    return imports
