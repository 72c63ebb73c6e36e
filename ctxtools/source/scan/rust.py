"""Rust scanner: functions, structs, enums, unions, traits (with their methods), ``impl``
blocks (``impl<T> Trait for Type<T>``: the block is named after the type, and its methods
are scoped to it), type aliases, consts and statics; items inside ``mod`` blocks are scoped
to the module. Nested block comments, raw strings (``r#"..."#``), byte strings and char
literals are masked first; a lifetime (``'a``) is not mistaken for a char literal."""

from __future__ import annotations

import re

from ctxtools.source.scan.clike import CLikeLanguage, Decl, scan_clike
from ctxtools.source.scan.common import ScanResult, at_word_start, words

_MASTER = re.compile(
    r"""(?P<c>//[^\n]*(?:\n[ \t]*//[^\n]*)*)
      | (?P<nc>/\*)
      | (?P<s>r(?P<hashes>\#*)".*?(?:"(?P=hashes)|\Z)
          | br(?P<bhashes>\#*)".*?(?:"(?P=bhashes)|\Z)
          | b?"[^"\\]*(?:\\.[^"\\]*)*(?:"|\Z)
          | b?'(?:[^'\\\n]|\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F_]{1,8}\}|.))')
      | (?P<lt>'[^\W\d]\w*)
    """,
    re.S | re.X,
)

# Attributes and visibility before an item.
_PREFIX = re.compile(r"\s*(?:\#!?\[(?:[^\[\]]|\[(?:[^\[\]]|\[[^\[\]]*\])*\])*\]\s*)*")
_VIS = re.compile(r"(?:pub\s*(?:\(\s*(?:crate|self|super|in\s+[\w:]+)\s*\)\s*)?)?")
_QUALIFIERS = re.compile(r"(?:(?:default|const|async|unsafe|extern\s*(?:\"\s*\")?|auto)\s+)+")
_ITEM = re.compile(
    r"(fn|struct|enum|union|trait|type|const|static|mod|impl|macro_rules\s*!|extern\s+crate)"
    r"\b\s*(?:mut\s+)?([^\W\d]\w*)?"
)
_IMPL_GENERICS = re.compile(r"impl\s*")
_IDENT = re.compile(r"[^\W\d]\w*")
_WHERE = re.compile(r"\bwhere\b")
_KINDS = {
    "fn": "function",
    "struct": "struct",
    "union": "struct",
    "enum": "enum",
    "trait": "trait",
    "type": "type",
    "const": "const",
    "static": "variable",
}
_USE = re.compile(r"use\s+([^;]+);")
_CRATE = re.compile(r"extern\s+crate\s+(\w+)")

KEYWORDS = words(
    """as async await break const continue crate dyn else enum extern false fn for if impl
    in let loop match mod move mut pub ref return self Self static struct super trait true
    type union unsafe use where while"""
)


def _angle_depth(s: str, i: int, depth: int) -> int:
    """DEPTH of <...> nesting after s[i]: '<' opens, '>' closes, the '>' of '->' does not."""
    c = s[i]
    if c == "<":
        return depth + 1
    if c == ">" and s[i - 1] != "-":
        return depth - 1
    return depth


def _skip_angle(s: str, i: int) -> int:
    """Index after a balanced <...> starting at s[i] == '<' ('->' does not close)."""
    depth = 0
    n = len(s)
    while i < n:
        if s[i] in "{;":
            return i
        depth = _angle_depth(s, i, depth)
        if depth == 0:
            return i + 1
        i += 1
    return n


def _impl_target(stmt: str, p: int) -> tuple[str, int] | None:
    """The type an ``impl`` header (starting at ``p``, just after 'impl') is for."""
    i = p
    n = len(stmt)
    while i < n and stmt[i].isspace():
        i += 1
    if i < n and stmt[i] == "<":
        i = _skip_angle(stmt, i)
    # 'impl Trait for Type' or 'impl Type': find a top-level ' for ' (outside <>)
    target = i
    depth = 0
    j = i
    while j < n:
        c = stmt[j]
        depth = _angle_depth(stmt, j, depth)
        if depth == 0 and c == "f" and stmt.startswith("for", j):
            before = stmt[j - 1] if j > 0 else " "
            after = stmt[j + 3] if j + 3 < n else " "
            if before.isspace() and after.isspace():
                target = j + 3
                break
        elif depth == 0 and c == "w" and stmt.startswith("where", j) and stmt[j - 1].isspace():
            break
        j += 1
    # the type's name: the last path segment before generics, skipping & 'a mut dyn
    stop = len(stmt)
    w = _WHERE.search(stmt, target)
    if w is not None:
        stop = w.start()
    k = target
    while k < stop and stmt[k].isspace():
        k += 1
    if k < stop and (stmt[k] in "([*!" or stmt.startswith(("fn(", "fn ("), k)):
        # not a path: a tuple, array, slice, pointer, never or fn type (a reference
        # '&'a mut Type' and a trait object 'dyn Trait' are named after the path)
        text = " ".join(stmt[k:stop].split())
        return (text, k) if text else None
    name = None
    at = target
    while True:
        m = _IDENT.search(stmt, k, stop)
        if m is None:
            break
        word = m.group()
        if word in ("mut", "dyn", "impl") or (m.start() > 0 and stmt[m.start() - 1] == "'"):
            k = m.end()
            continue
        name, at = word, m.start()
        rest = m.end()
        while rest < n and stmt[rest].isspace():
            rest += 1
        if stmt.startswith("::", rest):
            k = rest + 2
            continue
        break
    if name is None:
        text = " ".join(stmt[target:stop].split())
        return (text, target) if text else None
    return name, at


class Rust(CLikeLanguage):
    def classify(self, stmt, container, has_body, scope):
        start, p = self.head(stmt)
        m = _ITEM.match(stmt, p)
        if m is None or (m.group(1) == "const" and m.group(2) in ("fn", "unsafe", "async")):
            q = _QUALIFIERS.match(stmt, p)  # 'const fn', 'async fn', 'unsafe impl'...
            if q is None:
                return []
            m = _ITEM.match(stmt, q.end())
            if m is None:
                return []
        word = m.group(1)
        name = m.group(2)
        if word == "impl":
            target = _impl_target(stmt, m.start(1) + 4)
            if target is None:
                return []
            tname, _ = target  # the line of an impl is that of its 'impl' keyword
            return [Decl("impl", tname, m.start(1), start, body="members", scope_name=tname)]
        if name is None or word.startswith(("macro_rules", "extern")):
            return []
        if word == "mod":
            return [Decl("module", name, m.start(2), start, body="items", emit=False)]
        kind = _KINDS[word]
        if kind == "function" and container in ("impl", "trait"):
            kind = "method"
        if kind == "trait":
            return [Decl(kind, name, m.start(2), start, body="members")]
        return [Decl(kind, name, m.start(2), start, one_line=kind in ("type", "const", "variable"))]

    def imports(self, masked, text):
        out = [
            re.sub(r"\s+", "", m.group(1))
            for m in _USE.finditer(masked)
            if at_word_start(masked, m.start())
        ]
        out.extend(m.group(1) for m in _CRATE.finditer(masked) if at_word_start(masked, m.start()))
        return out


_RUST = Rust("rust", _MASTER, KEYWORDS, prefix=_PREFIX, modifiers=_VIS)


def scan(text: str) -> ScanResult:
    return scan_clike(text, _RUST)
