"""Gold lines from a unified diff, the lines a pack shows, and the per-task metrics.

Scoring is identical for every method: it reads only the pack's text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# A path is not "source" for the gold when it is a test, a doc or a changelog.
_TEST_DIRS = {"test", "tests", "testing", "__tests__", "spec", "specs", "testdata", "fixtures"}
_DOC_DIRS = {"doc", "docs", "documentation", "examples", "example", "benchmarks"}
_DOC_EXT = (".md", ".rst", ".txt", ".adoc", ".markdown", ".html", ".ipynb")
_CHANGELOG = re.compile(r"^(changelog|changes|history|news|authors|contributors|release)", re.I)
_TEST_FILE = re.compile(
    r"(^test_.*\.py$|_test\.py$|^conftest\.py$|_test\.go$|\.(test|spec)\.[cm]?[jt]sx?$|^test\.[jt]s$)"
)
SOURCE_EXT = (
    ".py", ".pyi", ".go", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".rs", ".java",
    ".c", ".h", ".cc", ".cpp", ".hpp", ".rb", ".sh",
)


def is_source(path: str) -> bool:
    """True for a non-test, non-doc source file (the only files the gold keeps)."""
    parts = path.split("/")
    name = parts[-1]
    dirs = {p.lower() for p in parts[:-1]}
    if dirs & _TEST_DIRS or dirs & _DOC_DIRS:
        return False
    if _TEST_FILE.search(name) or _CHANGELOG.match(name) or name.lower().endswith(_DOC_EXT):
        return False
    return name.endswith(SOURCE_EXT)


@dataclass
class Hunk:
    path: str
    lines: list[int]  # changed pre-image lines (old-side numbers)


@dataclass
class Gold:
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def files(self) -> list[str]:
        return sorted({h.path for h in self.hunks})

    def lines_of(self, path: str) -> list[int]:
        return sorted({n for h in self.hunks if h.path == path for n in h.lines})

    def all_lines(self) -> list[tuple[str, int]]:
        return sorted({(h.path, n) for h in self.hunks for n in h.lines})


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _hunk_lines(body: list[str], start: int) -> list[int]:
    """Old-side numbers of the '-' lines; for a pure insertion, the old line before each
    inserted run (line 1 at the file's start)."""
    old = start
    removed: list[int] = []
    anchors: list[int] = []
    prev_plus = False
    for line in body:
        tag = line[:1]
        if tag == "-":
            removed.append(old)
            old += 1
        elif tag == "+":
            if not prev_plus:
                anchors.append(max(old - 1, 1))
        elif tag in (" ", ""):
            old += 1
        prev_plus = tag == "+"
    return removed if removed else sorted(set(anchors))


def _hunk_body(lines: list[str], i: int, m: re.Match) -> tuple[list[str], int]:
    """The hunk's lines from I (its counts say where it ends), and the index after it."""
    old_left = int(m.group(2)) if m.group(2) is not None else 1
    new_left = int(m.group(4)) if m.group(4) is not None else 1
    body: list[str] = []
    while i < len(lines) and (old_left > 0 or new_left > 0):
        line = lines[i]
        i += 1
        tag = line[:1]
        if tag == "\\":
            continue
        if tag == "-":
            old_left -= 1
        elif tag == "+":
            new_left -= 1
        else:  # context (an empty line is a context line whose space was stripped)
            old_left -= 1
            new_left -= 1
        body.append(line)
    return body, i


def parse_patch(patch: str, keep=is_source) -> Gold:
    """The gold of PATCH, restricted to existing files KEEP accepts."""
    gold = Gold()
    path: str | None = None
    new_file = False
    lines = patch.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("diff --git "):
            path, new_file = None, False
        elif line.startswith("--- "):
            new_file = line[4:].strip() == "/dev/null"
        elif line.startswith("+++ "):
            target = line[4:].strip()
            path = target[2:] if target.startswith("b/") else target
        elif (m := _HUNK.match(line)) and path is not None:
            body, i = _hunk_body(lines, i + 1, m)
            if not new_file and keep(path):
                nums = _hunk_lines(body, int(m.group(1)))
                if nums:
                    gold.hunks.append(Hunk(path, nums))
            continue
        i += 1
    return gold


_HEADER = re.compile(r"^==> (.+?) <==")
_NUMBERED = re.compile(r"^(\d+)\t|^\s*(\d+)│")  # a shown line: ``12<TAB>``, or ``  12│ `` before


def shown_lines(text: str) -> dict[str, set[int]]:
    """PATH -> the line numbers a pack shows under that path's ``==> PATH <==`` header.

    A file's block ends at the next header or at a closing code fence."""
    shown: dict[str, set[int]] = {}
    current: str | None = None
    for line in text.split("\n"):
        if m := _HEADER.match(line):
            current = m.group(1).strip()
            shown.setdefault(current, set())
        elif line.startswith("```") and current is not None:
            current = None
        elif current is not None and (m := _NUMBERED.match(line)):
            shown[current].add(int(m.group(1) or m.group(2)))
    return shown


def file_order(text: str) -> list[str]:
    """The paths of the pack's file headers, in the order they appear."""
    out: list[str] = []
    for line in text.split("\n"):
        if (m := _HEADER.match(line)) and m.group(1).strip() not in out:
            out.append(m.group(1).strip())
    return out


NEAR = 25  # a shown line within this many lines of a changed line counts for file recall


def score(gold: Gold, text: str) -> dict:
    """line recall, complete, file recall, and the gold lines missed."""
    shown = shown_lines(text)
    wanted = gold.all_lines()
    missed = [(p, n) for p, n in wanted if n not in shown.get(p, ())]
    line_recall = (len(wanted) - len(missed)) / len(wanted) if wanted else 0.0
    complete = bool(gold.hunks) and all(
        all(n in shown.get(h.path, ()) for n in h.lines) for h in gold.hunks
    )
    near = 0
    for path in gold.files:
        got = shown.get(path, set())
        targets = gold.lines_of(path)
        if any(abs(s - t) <= NEAR for s in got for t in targets):
            near += 1
    file_recall = near / len(gold.files) if gold.files else 0.0
    return {
        "line_recall": line_recall,
        "complete": complete,
        "file_recall": file_recall,
        "missed": [f"{p}:{n}" for p, n in missed],
    }
