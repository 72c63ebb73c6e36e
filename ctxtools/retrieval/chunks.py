"""A file cut into the units a retriever ranks: its definitions.

``chunk_file(lines, defs)`` cuts a file (its lines, and the definitions the repo map's
scanners found in it: ``(kind, name, line, signature, scope, end_line)``) into chunks:

* each function or method, whole, from its decorators and the comments just above it to
  the last line of its body;
* each class (struct, interface, impl ...) as its *header* -- from its first line to its
  first member -- while its members are chunks of their own, and the lines between members
  (class attributes) chunks with the class as parent;
* the code between definitions (imports, constants, module-level statements) in pieces of
  at most ``GAP_LINES`` lines, cut at blank lines where there are some;
* a definition longer than ``LONG_LINES`` in parts of about ``PART_LINES``, each with the
  definition's first line as its head, so that a 600-line function is ranked and shown
  where the task touches it;
* a file with no definitions (docs, configuration, languages without a scanner) in windows
  of about ``WINDOW_LINES`` lines, cut at blank lines.

The chunks cover every line of the file exactly once and come in line order.
``import_lines`` finds a file's import statements (shown with its definitions).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

GAP_LINES = 40
WINDOW_LINES = 40
LONG_LINES = 150
PART_LINES = 60
MAX_IMPORT_LINES = 40
IMPORT_SCAN_LINES = 400  # imports further down than this are not looked for

_CONTAINERS = frozenset({"class", "interface", "struct", "trait", "impl", "enum", "type"})
_UNITS = frozenset({"function", "method"}) | _CONTAINERS
_COMMENT_PREFIXES = ("#", "//", "/*", "*", "--", ";")
_IMPORT_RE = re.compile(
    r"^(?:from\s+[\w.]+\s+import\b|import\s|package\s|use\s|require[\s(]|#include\b|using\s"
    r"|(?:const|let|var)\s+[\w{}\s,]+=\s*require\()"
)
# a module-level block whose body may hold imports: ``if TYPE_CHECKING:``, ``try:`` ...
_GUARD_RE = re.compile(r"^(?:if\s.*|elif\s.*|else|try|except\b.*|finally)\s*:\s*(?:#.*)?$")
# The C preprocessor's conditionals and includes (``#  include`` too: the directive may be
# indented after its ``#``), read only in a language that has them.
_CPP_INCLUDE_RE = re.compile(r"^\s*#\s*(?:include|import)\b")
_CPP_IF_RE = re.compile(r"^\s*#\s*if(?:n?def)?\b")
_CPP_ELSE_RE = re.compile(r"^\s*#\s*el(?:if|se|ifn?def)\b")
_CPP_ENDIF_RE = re.compile(r"^\s*#\s*endif\b")
CPP_LANGUAGES = frozenset({"c", "cpp", "objc"})


@dataclass(slots=True)
class Chunk:
    """Lines ``start``..``end`` (1-based, inclusive) of a file, ranked as one unit.
    ``kind`` is ``def`` (a function or method), ``class`` (a container's header),
    ``member`` (lines of a container between its members), ``part`` (a piece of a long
    definition), ``gap`` (module-level code) or ``window`` (a file without definitions).
    ``name``/``scope`` name the definition; ``parent`` is the index of the enclosing
    container's header chunk (or -1); ``head`` is the line to show above a part or a member
    (the definition's or container's first line; 0 for none)."""

    start: int
    end: int
    kind: str
    name: str = ""
    scope: str | None = None
    parent: int = -1
    head: int = 0
    line: int = 0  # the definition's own line (``def``/``class``), 0 for other chunks

    def __len__(self) -> int:
        return self.end - self.start + 1


@dataclass(slots=True)
class _Node:
    start: int
    end: int
    kind: str
    name: str
    scope: str | None
    line: int
    children: list


def _is_comment(text: str) -> bool:
    s = text.lstrip()
    return bool(s) and (s.startswith(_COMMENT_PREFIXES) or s.startswith("@"))


def _span_start(lines: list[str], line: int, floor: int) -> int:
    """The first line of a definition at LINE: decorators and comments just above count."""
    start = line
    while start - 1 > floor and _is_comment(lines[start - 2]):
        start -= 1
    return start


def _tree(lines: list[str], defs) -> list[_Node]:
    """The unit definitions as a tree of spans (children inside their parent's span)."""
    n = len(lines)
    nodes = []
    for kind, name, line, _sig, scope, end in sorted(
        defs, key=lambda d: (d.line, -(d.end_line or 0))
    ):
        if kind not in _UNITS or not 1 <= line <= n:
            continue
        end = min(max(end or line, line), n)
        nodes.append(_Node(line, end, kind, name, scope, line, []))
    roots: list[_Node] = []
    stack: list[_Node] = []
    for node in nodes:
        while stack and node.line > stack[-1].end:
            stack.pop()
        if stack and node.end > stack[-1].end:
            node.end = stack[-1].end  # a scanner's guess that leaks out of its parent
        floor = stack[-1].line if stack else 0
        if roots or stack:
            prev = stack[-1].children[-1] if stack and stack[-1].children else None
            if prev is None and not stack and roots:
                prev = roots[-1]
            if prev is not None:
                floor = max(floor, prev.end)
        node.start = _span_start(lines, node.line, floor)
        (stack[-1].children if stack else roots).append(node)
        if node.kind in _CONTAINERS:
            stack.append(node)
    return roots


def _cut(start: int, end: int, size: int, lines: list[str]) -> list[tuple[int, int]]:
    """START..END in pieces of at most SIZE lines, cut after a blank line when one is near."""
    out = []
    while start <= end:
        if end - start + 1 <= size:
            out.append((start, end))
            break
        cut = start + size - 1
        for k in range(cut, max(start + size // 2, start) - 1, -1):
            if not lines[k - 1].strip():
                cut = k
                break
        out.append((start, cut))
        start = cut + 1
    return out


def _emit_gap(out: list[Chunk], start: int, end: int, lines, kind: str, parent=-1, head=0):
    for a, b in _cut(start, end, GAP_LINES, lines):
        out.append(Chunk(a, b, kind, parent=parent, head=head))


def _emit_unit(out: list[Chunk], node: _Node, lines: list[str], parent: int) -> None:
    if node.kind in _CONTAINERS and node.children:
        first = node.children[0].start
        me = len(out)
        out.append(
            Chunk(node.start, first - 1, "class", node.name, node.scope, parent, 0, node.line)
        )
        pos = first
        for child in node.children:
            if child.start > pos:
                _emit_gap(out, pos, child.start - 1, lines, "member", me, node.line)
            _emit_unit(out, child, lines, me)
            pos = child.end + 1
        if pos <= node.end:
            _emit_gap(out, pos, node.end, lines, "member", me, node.line)
        return
    kind = "class" if node.kind in _CONTAINERS else "def"
    if node.end - node.start + 1 <= LONG_LINES:
        out.append(Chunk(node.start, node.end, kind, node.name, node.scope, parent, 0, node.line))
        return
    for a, b in _cut(node.start, node.end, PART_LINES, lines):
        head = node.line if a > node.line else 0
        out.append(Chunk(a, b, "part", node.name, node.scope, parent, head, node.line))


def chunk_file(lines: list[str], defs=()) -> list[Chunk]:
    """LINES (without their newlines) as chunks, in line order (see the module)."""
    n = len(lines)
    out: list[Chunk] = []
    if n == 0:
        return out
    roots = _tree(lines, defs)
    if not roots:
        for a, b in _cut(1, n, WINDOW_LINES, lines):
            out.append(Chunk(a, b, "window"))
        return out
    pos = 1
    for node in roots:
        if node.start > pos:
            _emit_gap(out, pos, node.start - 1, lines, "gap")
        _emit_unit(out, node, lines, -1)
        pos = node.end + 1
    if pos <= n:
        _emit_gap(out, pos, n, lines, "gap")
    return out


def import_lines(
    lines: list[str], limit: int = MAX_IMPORT_LINES, preprocessor: bool = False
) -> tuple[int, ...]:
    """The line numbers of the file's top-level import statements (at most LIMIT; a
    parenthesised Python import counts all its lines). Imports indented under a
    module-level guard (``if TYPE_CHECKING:``, ``try:`` / ``except ImportError:``) count
    too, with the guard's line; imports inside functions and classes do not.
    PREPROCESSOR (C, C++, Objective-C): ``#include`` lines with the ``#if``/``#ifdef``,
    ``#elif``/``#else`` and ``#endif`` lines around them, so that a conditional include
    does not read as an unconditional one."""
    if preprocessor:
        return _cpp_includes(lines, limit)
    out: list[int] = []
    guard = 0  # the line of the module-level guard the current block is under, or 0
    k = 0
    n = min(len(lines), IMPORT_SCAN_LINES)
    while k < n and len(out) < limit:
        text = lines[k]
        indented = text[:1] in (" ", "\t")
        if not indented and text.strip():
            guard = k + 1 if _GUARD_RE.match(text) else 0
        body = text.lstrip() if indented and guard else text
        if _IMPORT_RE.match(body):
            if indented and guard and (not out or out[-1] < guard):
                out.append(guard)
            k = _import_statement(lines, k, n, limit, out)
        k += 1
    return tuple(out[:limit])


def _cpp_includes(lines: list[str], limit: int) -> tuple[int, ...]:
    """``import_lines`` of a C-family file: its includes and the conditionals that hold
    them. An include is taken with every open conditional's opening line and the
    ``#elif``/``#else`` lines that lead to its branch (those not taken yet); a taken
    conditional's ``#endif`` with it. A directive continued with a backslash is taken with
    its continued lines. At LIMIT the list ends after a whole include."""
    out: list[int] = []
    # each open conditional, innermost last: [lines owed (its opening line, then the
    # #elif/#else lines since), whether anything inside it was taken]
    opened: list[list] = []
    n = min(len(lines), IMPORT_SCAN_LINES)
    k = 0
    while k < n:
        text = lines[k]
        if "#" not in text[:8]:
            k += 1
            continue
        end = k
        while lines[end].rstrip().endswith("\\") and end + 1 < n:
            end += 1
        span = list(range(k + 1, end + 2))
        if _CPP_INCLUDE_RE.match(text):
            if len(out) + sum(len(o[0]) for o in opened) + len(span) > limit:
                break
            for o in opened:
                out.extend(o[0])
                o[0], o[1] = [], True
            out.extend(span)
        elif _CPP_IF_RE.match(text):
            opened.append([span, False])
        elif _CPP_ELSE_RE.match(text):
            if opened:  # owed only if an include of its branch is taken
                opened[-1][0].extend(span)
        elif _CPP_ENDIF_RE.match(text) and opened:
            taken = opened.pop()[1]
            if taken and len(out) < limit:
                out.append(k + 1)
        k = end + 1
    return tuple(out)


def _import_statement(lines: list[str], k: int, n: int, limit: int, out: list[int]) -> int:
    """Add the lines of the import statement starting at line index K; return the index
    of its last line."""
    out.append(k + 1)
    tail = lines[k].rstrip()
    if tail.endswith("(") and ")" not in tail:
        while k + 1 < n and len(out) < limit:
            k += 1
            out.append(k + 1)
            if ")" in lines[k]:
                break
    else:
        while tail.endswith("\\") and k + 1 < n and len(out) < limit:
            k += 1
            out.append(k + 1)
            tail = lines[k].rstrip()
    return k
