"""Masking for the C-like family (Go, JavaScript/TypeScript, Rust, Java): comments and
literals become blanks of the same length, so that no structure is seen inside them."""

from __future__ import annotations

import re

from ctxtools.source.scan.common import blank, blank_string


class Masked:
    """Masked text plus the comment spans (to drop comments from signatures)."""

    __slots__ = ("text", "comments")

    def __init__(self, text: str, comments: list[tuple[int, int]]) -> None:
        self.text = text
        self.comments = comments


# The comments of Go, JavaScript/TypeScript and Java: the first group of their master
# patterns (runs of // lines are one comment; an unclosed /* runs to the end).
C_COMMENTS = r"(?P<c>//[^\n]*(?:\n[ \t]*//[^\n]*)*|/\*[^*]*(?:\*+[^/*][^*]*)*(?:\*+/|\**\Z))"

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


def mask_clike(
    text: str, master: re.Pattern[str], lead: re.Pattern[str] | None = None
) -> Masked:
    """Blank comments and literals found by ``master`` (named groups decide how):

    c: comment; nc: nestable /* */ comment (Rust); s: string or char literal;
    lt: a Rust lifetime ('a: blanked so that it does not count as a use of ``a``);
    tpl: JS template literal (``${}`` code stays code, recursively masked);
    rx: a '/' that may start a JS regular expression literal.

    LEAD, when given, finds the characters a match of MASTER can start with: the search
    then tries MASTER only where one is (the same matches, found faster when MASTER's
    alternatives start with named groups, which the regex engine cannot skip ahead on).
    """
    out: list[str] = []
    comments: list[tuple[int, int]] = []
    _mask_into(text, 0, len(text), _searcher(master, lead), out, comments)
    return Masked("".join(out), comments)


def _searcher(master: re.Pattern[str], lead: re.Pattern[str] | None):
    """``master.search``, or the same search led by LEAD (``mask_clike``)."""
    if lead is None:
        return master.search
    find = lead.search
    match = master.match

    def search(text: str, pos: int, stop: int):
        while True:
            c = find(text, pos, stop)
            if c is None:
                return None
            pos = c.start()
            m = match(text, pos, stop)
            if m is not None:
                return m
            pos += 1

    return search


def _mask_into(text, start, stop, search, out, comments) -> None:
    """Mask text[start:stop] into OUT; SEARCH finds the next comment or literal."""
    pos = start
    last = start
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
            e = _template(text, s, stop, search, out, comments)
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
    """Offset after the '*/' closing the '/*' at S (nested pairs counted); STOP if none."""
    depth = 0
    for m in _NESTED_COMMENT.finditer(text, s, stop):
        depth += 1 if m.group() == "/*" else -1
        if depth == 0:
            return m.end()
    return stop


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


def _template(text, s, stop, search, out, comments) -> int:
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
        _mask_into(text, m.end(), code_end, search, out, comments)
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
    """Offset after the template literal opening at S (its ``${}`` expressions skipped)."""
    m = _TPL_PART.search(text, s + 1, stop)
    while m is not None and m.group() != "`":
        if m.group()[0] == "\\":
            pos = m.end()
        else:
            pos = min(stop, _template_expr_end(text, m.end(), stop) + 1)
        m = _TPL_PART.search(text, pos, stop)
    return stop if m is None else m.end()
