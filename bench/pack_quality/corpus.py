"""A task tree read as the baselines see it: text files, their terms, their chunks.

Terms are lowercase identifiers ``[A-Za-z_][A-Za-z0-9_]*`` plus, when an identifier has
several, its snake_case / CamelCase parts. Python files are chunked with ``ast`` (each
top-level function, each method, a class's header and class-level statements, module code
between definitions in pieces of at most 60 lines); other files in 60-line windows.
"""

from __future__ import annotations

import ast
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

MAX_BYTES = 512 * 1024
WINDOW = 60
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SPLIT: dict[str, tuple[str, ...]] = {}


def _expand(ident: str) -> tuple[str, ...]:
    got = _SPLIT.get(ident)
    if got is None:
        low = ident.lower()
        parts = [p.lower() for p in _PARTS.findall(ident)]
        got = (low, *parts) if len(parts) > 1 else (low,)
        if len(_SPLIT) < 2_000_000:
            _SPLIT[ident] = got
    return got


def terms(text: str) -> list[str]:
    out: list[str] = []
    for ident in _IDENT.findall(text):
        out.extend(_expand(ident))
    return out


@dataclass
class Unit:
    """A retrievable piece: a whole file, or a chunk of one (1-based inclusive ranges)."""

    path: str
    ranges: list[tuple[int, int]]
    tf: Counter
    length: int


@dataclass
class SourceFile:
    path: str
    lines: list[str]
    units: list[Unit] = field(default_factory=list)  # its chunks
    whole: Unit | None = None  # the file as one unit, made on first use

    def as_whole(self) -> Unit:
        if self.whole is None:
            tf: Counter = Counter()
            for u in self.units:
                tf.update(u.tf)
            span = [(1, len(self.lines))] if self.lines else []
            self.whole = Unit(self.path, span, tf, sum(tf.values()))
        return self.whole


def split_lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def _windows(lo: int, hi: int) -> list[tuple[int, int]]:
    return [(s, min(s + WINDOW - 1, hi)) for s in range(lo, hi + 1, WINDOW)]


def _span(node: ast.AST) -> tuple[int, int]:
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return start, node.end_lineno or node.lineno


def _gaps(lo: int, hi: int, taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The runs of lines LO..HI that no span in TAKEN covers."""
    out, cur = [], lo
    for s, e in sorted(taken):
        if s > cur:
            out.append((cur, s - 1))
        cur = max(cur, e + 1)
    if cur <= hi:
        out.append((cur, hi))
    return out


def python_chunks(text: str, n: int) -> list[list[tuple[int, int]]] | None:
    """Chunk ranges of a Python file; None when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    chunks: list[list[tuple[int, int]]] = []
    taken = []
    defs = (ast.FunctionDef, ast.AsyncFunctionDef)
    for node in tree.body:
        if isinstance(node, defs):
            chunks.append([_span(node)])
            taken.append(_span(node))
        elif isinstance(node, ast.ClassDef):
            lo, hi = _span(node)
            methods = [_span(m) for m in node.body if isinstance(m, defs)]
            chunks.extend([m] for m in methods)
            header = _gaps(lo, hi, methods)
            if header:
                chunks.append(header)
            taken.append((lo, hi))
    for lo, hi in _gaps(1, n, taken):
        chunks.extend([w] for w in _windows(lo, hi))
    return chunks


def _unit(path: str, lines: list[str], ranges: list[tuple[int, int]]) -> Unit:
    body = "\n".join("\n".join(lines[s - 1 : e]) for s, e in ranges)
    tf = Counter(terms(body))
    return Unit(path, ranges, tf, sum(tf.values()))


def read_file(root: Path, path: str) -> SourceFile | None:
    full = root / path
    try:
        if full.is_symlink() or full.stat().st_size > MAX_BYTES:
            return None
        data = full.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    text = data.decode("utf-8", errors="replace")
    lines = split_lines(text)
    sf = SourceFile(path, lines)
    n = len(lines)
    ranges = python_chunks(text, n) if path.endswith(".py") else None
    if ranges is None:
        ranges = [[w] for w in _windows(1, n)] if n else []
    sf.units = [_unit(path, lines, r) for r in ranges]
    return sf


def list_files(root: Path) -> list[str]:
    """The tree's files (not .git, not symbolic links), sorted."""
    walked = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        for name in filenames:
            rel = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
            walked.append(rel)
    return sorted(walked)


class Corpus:
    """The text files of a tree (at most 512 KB, no NUL byte in the first 8 KB), read."""

    def __init__(self, root: Path):
        self.root = root
        self.files: dict[str, SourceFile] = {}
        for path in list_files(root):
            sf = read_file(root, path)
            if sf is not None:
                self.files[path] = sf

    def whole_files(self) -> list[Unit]:
        return [sf.as_whole() for sf in self.files.values()]

    def chunks(self) -> list[Unit]:
        return [u for sf in self.files.values() for u in sf.units]
