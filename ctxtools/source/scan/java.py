"""Java scanner: classes, interfaces, enums, records and annotation types (nested and
inner ones scoped, dotted), methods and constructors (generic ones too), in any order of
annotations and modifiers. Text blocks, strings, chars and comments are masked first."""

from __future__ import annotations

import re

from ctxtools.source.scan.clike import CLikeLanguage, Decl, scan_clike
from ctxtools.source.scan.common import ScanResult, at_word_start, words
from ctxtools.source.scan.mask import C_COMMENTS

_MASTER = re.compile(
    C_COMMENTS
    + r"""
      | (?P<s>\"\"\"[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*(?:\"\"\"|\Z)
          | "[^"\\\n]*(?:\\.[^"\\\n]*)*(?:"|$)
          | '(?:[^'\\\n]|\\(?:u+[0-9a-fA-F]{4}|[0-7]{1,3}|.))')
    """,
    re.S | re.M | re.X,
)
_LEAD = re.compile(r"[/\"']")  # where a match of _MASTER can start

# Annotations (with arguments, one level of nested parentheses) before a declaration.
_PREFIX = re.compile(
    r"\s*(?:@(?!interface\b)[\w$.]+\s*(?:\((?:[^()]|\([^()]*\))*\)\s*)?)*",
)
# Modifiers, and annotations mixed among them ('public final native @Sig Object f()').
_MODIFIERS = re.compile(
    r"(?:(?:(?:public|protected|private|static|final|abstract|native|synchronized|transient"
    r"|volatile|strictfp|default|sealed|non-sealed)\b"
    r"|@(?!interface\b)[\w$.]+\s*(?:\((?:[^()]|\([^()]*\))*\))?)\s*)*"
)
_TYPE = re.compile(r"(class|interface|enum|record|@\s*interface)\s+((?:[^\W\d]|\$)[\w$]*)")
_METHOD = re.compile(
    r"(?:<[^{};=]*?>\s*)?"  # type parameters
    r"(?:([\w$.]+(?:\s*<[^{};=()]*>)?(?:\s*\[\s*\])*)\s+)?"  # return type (none: constructor)
    r"((?:[^\W\d]|\$)[\w$]*)\s*\("
)
_TYPE_KINDS = {
    "class": "class",
    "interface": "interface",
    "enum": "enum",
    "record": "class",
}
_NOT_NAMES = frozenset(
    ("if", "for", "while", "switch", "catch", "synchronized", "return", "new", "throw",
     "else", "try", "do", "case", "assert", "super", "this")
)  # fmt: skip
_IMPORT = re.compile(r"import\s+(?:static\s+)?([\w$.]+(?:\s*\.\s*\*)?)\s*;")

KEYWORDS = words(
    """abstract assert boolean break byte case catch char class const continue default do
    double else enum extends final finally float for goto if implements import instanceof
    int interface long native new package private protected public return short static
    strictfp super switch synchronized this throw throws transient try void volatile while
    true false null var record yield sealed permits non"""
)


class Java(CLikeLanguage):
    def classify(self, stmt, container, has_body, scope):
        start, p = self.head(stmt)
        m = _TYPE.match(stmt, p)
        if m is not None:
            word = m.group(1)
            kind = "interface" if word.startswith("@") else _TYPE_KINDS[word]
            return [Decl(kind, m.group(2), m.start(2), start, body="members")]
        if container == "root":
            return []
        m = _METHOD.match(stmt, p)
        if m is None:
            return []
        name = m.group(2)
        if name in _NOT_NAMES or (m.group(1) in _NOT_NAMES):
            return []
        if m.group(1) is None:
            # a constructor, or an enum constant with arguments
            own = scope.rsplit(".", 1)[-1] if scope else None
            if name != own:
                return []
        return [Decl("method", name, m.start(2), start)]

    def imports(self, masked, text):
        return [
            re.sub(r"\s+", "", m.group(1))
            for m in _IMPORT.finditer(masked)
            if at_word_start(masked, m.start())
        ]


_JAVA = Java("java", _MASTER, KEYWORDS, prefix=_PREFIX, modifiers=_MODIFIERS, lead=_LEAD)


def scan(text: str) -> ScanResult:
    return scan_clike(text, _JAVA)
