"""Go scanner: functions (generic ones too), methods scoped to their receiver's type
(pointer or not, generic or not), struct/interface/other type declarations (grouped
``type ( ... )`` too), interface method specs, and package-level ``const``/``var`` names
(grouped too). Raw backtick strings, runes, strings and comments are masked first."""

from __future__ import annotations

import re

from ctxtools.source.scan.clike import CLikeLanguage, Decl, scan_clike
from ctxtools.source.scan.common import ScanResult, at_word_start, words
from ctxtools.source.scan.mask import C_COMMENTS

_MASTER = re.compile(
    C_COMMENTS
    + r"""
      | (?P<s>`[^`]*(?:`|\Z)
          | "[^"\\\n]*(?:\\.[^"\\\n]*)*(?:"|$)
          | '(?:[^'\\\n]|\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3}|.))')
    """,
    re.S | re.M | re.X,
)
_LEAD = re.compile(r"[/`\"']")  # where a match of _MASTER can start

_ID = r"[^\W\d]\w*"
_FUNC = re.compile(
    rf"""\s*func\s*
      (?:\(\s*(?:{_ID}\s+)?\*?\s*(?P<recv>{_ID})\s*(?:\[[^\]]*\])?\s*\)\s*)?
      (?P<name>{_ID})""",
    re.X,
)
_TYPE = re.compile(r"\s*type\s+")
_TYPE_SPEC = re.compile(
    rf"(?P<name>{_ID})\s*(?:\[[^\]]*\]\s*)?(?P<alias>=\s*)?(?P<what>struct|interface)?"
)
_VALUE = re.compile(r"\s*(?P<word>const|var)\s+")
_NAMES = re.compile(rf"(?P<name>{_ID})(?P<more>(?:\s*,\s*{_ID})*)")
_MORE_NAME = re.compile(_ID)
_INTERFACE_METHOD = re.compile(rf"\s*(?P<name>{_ID})\s*\(")
_IMPORT = re.compile(r"import\s*(?:\((?P<group>[^)]*)\)|(?:[\w.]+\s*)?\"(?P<one> *)\")")
_QUOTED = re.compile(r'"( *)"')

KEYWORDS = words(
    """break case chan const continue default defer else fallthrough for func go goto if
    import interface map package range return select struct switch type var nil true
    false iota"""
)


_SPEC_PART = re.compile(r"[^\n;]+")


def _group_lines(stmt: str, open_at: int):
    """(offset, text) of each spec of a grouped declaration ``kw ( ... )``: the lines at
    the group's first indentation (deeper lines continue a spec), or ';'-separated parts."""
    close = stmt.rfind(")")
    if close < open_at:
        close = len(stmt)
    indent = None
    base = open_at + 1
    for part in _SPEC_PART.finditer(stmt, base, close):
        line = part.group()
        stripped = line.lstrip()
        if not stripped:
            continue
        width = len(line) - len(stripped)
        after_newline = stmt[part.start() - 1] == "\n"
        if after_newline:
            if indent is None:
                indent = width
            if width != indent:
                continue
        yield part.start() + width, stripped.rstrip(), part.end()


class Go(CLikeLanguage):
    def classify(self, stmt, container, has_body, scope):
        if container == "interface":
            m = _INTERFACE_METHOD.match(stmt)
            if m is None:
                return []
            return [Decl("method", m.group("name"), m.start("name"), m.start("name"))]
        if container != "root":
            return []
        start = len(stmt) - len(stmt.lstrip())
        m = _FUNC.match(stmt)
        if m is not None:
            if m.group("name") == "_":
                return []
            recv = m.group("recv")
            if recv is not None:
                return [Decl("method", m.group("name"), m.start("name"), start, scope=recv)]
            return [Decl("function", m.group("name"), m.start("name"), start)]
        m = _TYPE.match(stmt)
        if m is not None:
            p = m.end()
            if stmt.startswith("(", p):
                out = []
                for at, text, end in _group_lines(stmt, p):
                    d = self._type_spec(stmt, at, at, text)
                    if d is not None:
                        d.end = end
                        out.append(d)
                return out
            d = self._type_spec(stmt, p, start, stmt[p:])
            return [d] if d is not None else []
        m = _VALUE.match(stmt)
        if m is not None:
            kind = "const" if m.group("word") == "const" else "variable"
            p = m.end()
            if stmt.startswith("(", p):
                out = []
                for at, text, end in _group_lines(stmt, p):
                    for d in self._names(kind, text, at, at):
                        d.end = end
                        out.append(d)
                return out
            return self._names(kind, stmt[p:], p, start)
        return []

    @staticmethod
    def _type_spec(stmt, at, start, text):
        m = _TYPE_SPEC.match(text)
        if m is None or m.group("name") == "_":
            return None
        what = m.group("what")
        name_at = at + m.start("name")
        if m.group("alias") is None and what == "struct":
            return Decl("struct", m.group("name"), name_at, start, one_line=True)
        if m.group("alias") is None and what == "interface":
            return Decl("interface", m.group("name"), name_at, start, body="members")
        return Decl("type", m.group("name"), name_at, start, one_line=True)

    @staticmethod
    def _names(kind, text, at, start):
        m = _NAMES.match(text)
        if m is None:
            return []
        out = [Decl(kind, m.group("name"), at + m.start("name"), start, one_line=True)]
        if m.group("more"):
            base = at + m.start("more")
            for extra in _MORE_NAME.finditer(m.group("more")):
                out.append(Decl(kind, extra.group(), base + extra.start(), start, one_line=True))
        return [d for d in out if d.name != "_"]  # the blank identifier defines nothing

    def imports(self, masked, text):
        out = []
        for m in _IMPORT.finditer(masked):
            if not at_word_start(masked, m.start()):
                continue
            if m.group("one") is not None:
                out.append(text[m.start("one") : m.end("one")])
            else:
                base = m.start("group")
                for q in _QUOTED.finditer(m.group("group")):
                    out.append(text[base + q.start(1) : base + q.end(1)])
        return out


_GO = Go("go", _MASTER, KEYWORDS, asi=True, lead=_LEAD)


def scan(text: str) -> ScanResult:
    return scan_clike(text, _GO)
