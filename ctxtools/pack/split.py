"""A pack as numbered parts that each fit a token limit (``ctx-pack --split TOKENS``).

For chat interfaces that take a limited paste: ``split_pack(text, ruler, limit)`` cuts a
Markdown pack into parts, each starting with the line ``[ctx-pack: part I of N]``, and each
counted again whole by the pack's own ruler, never over LIMIT.

Where a part may end, best first: before a section heading (``# Files``), between blocks
(a file's fenced excerpt, an instruction file, a memory chunk), at a definition boundary
inside a file's block (a ``⋮`` gap between the chunks shown, or a line that follows a
blank one), then before any line; never inside a line. A part that ends inside a fenced
block closes the fence, and the next part opens it again with the same info string and
the block's ``==> path <==`` header marked ``(continued)``, so every part is valid
Markdown that names what it holds. Within those rules a part takes as much as fits, and
falls back to a weaker boundary only when the stronger one would leave the part less
than half full.

Nothing here prints; a LIMIT too small for one line of the pack (with the part's header
and its fence) is a ``UsageError`` naming the smallest limit that works.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ctxtools.defaults import SPLIT_MIN
from ctxtools.errors import UsageError

HEADER = "[ctx-pack: part {i} of {n}]\n\n"
PART_RE = re.compile(rb"\A\[ctx-pack: part [0-9]+ of [0-9]+\]\n")
# Between parts on one stream (no -o): a line no pack line can be, as the parts' own
# header lines follow it.
MARKER = "\n----- 8< ----- ctx-pack: cut here ----- 8< -----\n\n"
_FENCE_RE = re.compile(r"^ {0,3}(`{3,})(.*)$")
_GAP_RE = re.compile(r"^\s*[0-9]*\s*⋮")
_MAP_FILE_RE = re.compile(r"^[^\s0-9⋮].*:$")  # a repo map's file line: "path/to/file.py:"
_CODE_RE = re.compile(r"^[0-9]+\t(.*)$")  # a shown line (``quoting.numbered``): number, tab, code
# How good a boundary the place before a line is, best first: a section heading; a block
# (a file, an instruction file, a memory chunk); a gap between the chunks shown or a
# definition at the left margin after a blank line; one indented a level (a method) after
# a blank line; any other line after a blank line; any line.
SECTION, BLOCK, DEFINITION, MEMBER, PARAGRAPH, LINE = 6, 5, 4, 3, 2, 1
GRADES = (SECTION, BLOCK, DEFINITION, MEMBER, PARAGRAPH, LINE)


@dataclass(frozen=True)
class Part:
    """One part: its number, how many there are, its text, and its tokens by the ruler."""

    index: int
    total: int
    text: str
    tokens: int

    def as_dict(self) -> dict:
        return {"part": self.index, "of": self.total, "tokens": self.tokens, "text": self.text}


@dataclass(frozen=True)
class _Line:
    text: str  # with its newline
    cut: int  # how good a boundary the place before this line is; 0: no boundary
    fence: int | None  # index of the opening line of the fenced block it lies in


def looks_like_part(data: bytes) -> bool:
    """Whether DATA starts as a part of a split pack does."""
    return PART_RE.match(data) is not None


def split_pack(text: str, ruler, limit: int) -> list[Part]:
    """TEXT (a Markdown pack) as parts of at most LIMIT tokens each (see the module)."""
    if limit < SPLIT_MIN:
        raise UsageError(f"--split {limit}: a part needs at least {SPLIT_MIN} tokens")
    lines = _lines(text)
    total = 1
    for _ in range(8):  # the header's digits depend on the count: settle it
        bounds = _bounds(lines, ruler, limit, total)
        if len(bounds) == total:
            break
        total = len(bounds)
    else:  # pragma: no cover - needs a count that swings between digit widths forever
        raise UsageError(f"--split {limit}: the parts do not settle", hint="try another size")
    parts = []
    for i, (start, end) in enumerate(bounds, 1):
        body = _render(lines, start, end, i, total)
        parts.append(Part(i, total, body, ruler.count(body)))
    return parts


def joined(parts: list[Part]) -> str:
    """The parts on one stream, separated by the cut-here marker line."""
    return MARKER.join(p.text for p in parts)


def part_paths(output: str, total: int) -> list[str]:
    """Where ``-o OUTPUT`` writes the parts: OUTPUT without a ``.md`` suffix, then
    ``.1.md``, ``.2.md``, ... (``pack.md`` -> ``pack.1.md``; ``pack`` -> ``pack.1.md``)."""
    stem = _stem(output)
    return [f"{stem}.{i}.md" for i in range(1, total + 1)]


def _stem(output: str) -> str:
    """What a part's number follows: OUTPUT without a ``.md`` suffix."""
    return output[:-3] if output.endswith(".md") and len(output) > 3 else output


def write_parts(output: str, parts: list[Part]) -> list[str]:
    """Write PARTS to ``part_paths(OUTPUT)``, each as ``-o`` writes a file (a new or
    regular file replaced atomically, ``fsutil.replace_file``); the paths written."""
    import os

    from ctxtools.errors import InputError
    from ctxtools.fsutil import write_output
    from ctxtools.pack.model import replaceable

    paths = part_paths(output, len(parts))
    # A part's name is derived from -o, not given: notes.1.md of a packed tree is
    # somebody's notes, replaced only when it is empty or ctx-pack's own.
    for path in paths:
        if os.path.isfile(path) and not replaceable(path):
            raise UsageError(
                f"-o {output}: {path} exists and is not a part ctx-pack wrote; nothing was "
                "written",
                hint="move it, or write the parts under another -o name",
            )
    for path, part in zip(paths, parts, strict=True):
        problem = write_output(path, part.text.encode("utf-8", "surrogateescape"))
        if problem:
            raise InputError(f"-o {output}: cannot write {path} ({problem})")
    return paths


def stale_parts(output: str, total: int, most: int = 100_000) -> list[str]:
    """The part files after the last one written (``TOTAL``), one after another, that an
    earlier, longer split left (each a regular file that begins as a part does)."""
    import os

    stem = _stem(output)
    out: list[str] = []
    for k in range(total + 1, total + 1 + most):
        path = f"{stem}.{k}.md"
        try:
            with open(path, "rb") as f:
                if not (os.path.isfile(path) and looks_like_part(f.read(64))):
                    break
        except OSError:
            break
        out.append(path)
    return out


def _lines(text: str) -> list[_Line]:
    """TEXT's lines, each with the boundary before it and the fence it lies in."""
    out: list[_Line] = []
    fence: int | None = None
    ticks = 0
    prev_blank = True
    prev_code_blank = False
    for i, line in enumerate(text.splitlines(keepends=True)):
        bare = line.rstrip("\n")
        m = _FENCE_RE.match(bare)
        if fence is None:
            if bare.startswith("# ") and prev_blank:
                cut = SECTION
            elif m or bare.startswith("## ") or (prev_blank and bare.strip()):
                cut = BLOCK if (m or bare.startswith("## ")) else PARAGRAPH
            else:
                cut = LINE
            out.append(_Line(line, cut if i else 0, None))
            if m:
                fence, ticks, prev_code_blank = i, len(m.group(1)), False
            prev_blank = not bare.strip()
            continue
        if m and not m.group(2).strip() and len(m.group(1)) >= ticks:
            out.append(_Line(line, 0, fence))  # the closing fence stays with its block
            fence, prev_blank = None, False
            continue
        code = _CODE_RE.match(bare)
        body = code.group(1) if code else bare
        if i == fence + 1:
            cut = 0  # never an empty block
        elif _GAP_RE.match(bare) or bare.startswith("@@ ") or _MAP_FILE_RE.match(bare):
            cut = DEFINITION
        elif prev_code_blank and body.strip():
            indent = len(body) - len(body.lstrip())
            cut = DEFINITION if indent == 0 else MEMBER if indent <= 4 else PARAGRAPH
        else:
            cut = LINE
        out.append(_Line(line, cut, fence))
        prev_code_blank = not body.strip()
    return out


def _opening(lines: list[_Line], at: int) -> str:
    """What a part that starts at line AT, inside a fenced block, opens with: the fence
    again, and the block's header line (``==> path <==``) marked as continued."""
    fence = lines[at].fence
    if fence is None:
        return ""
    head = lines[fence].text
    first = lines[fence + 1].text if fence + 1 < len(lines) else ""
    if first.startswith("==> ") and " <==" in first and fence + 1 < at:
        path = first[: first.index(" <==") + 4]
        head += f"{path} (continued)\n"
    return head


def _closing(lines: list[_Line], end: int) -> str:
    """What a part that ends before line END, inside a fenced block, closes with."""
    fence = lines[end].fence if end < len(lines) else None
    if fence is None:
        return ""
    ticks = _FENCE_RE.match(lines[fence].text.rstrip("\n")).group(1)  # type: ignore[union-attr]
    return ticks + "\n"


def _render(lines: list[_Line], start: int, end: int, i: int, total: int) -> str:
    body = "".join(x.text for x in lines[start:end])
    if end < len(lines):
        body = body.rstrip("\n") + "\n" if body.strip() else body
    return HEADER.format(i=i, n=total) + _opening(lines, start) + body + _closing(lines, end)


def _bounds(lines: list[_Line], ruler, limit: int, total: int) -> list[tuple[int, int]]:
    """Where each part starts and ends (line indexes), for TOTAL parts' headers."""
    sizes = [ruler.count(x.text) for x in lines]
    bounds = []
    start = 0
    while start < len(lines):
        end = _part_end(lines, sizes, ruler, limit, start, len(bounds) + 1, total)
        bounds.append((start, end))
        start = end
    return bounds or [(0, 0)]


def _part_end(lines, sizes, ruler, limit, start, i, total) -> int:
    """The end of the part that starts at START: the most that fits, at the best boundary
    that leaves the part at least half full, checked by counting the part whole."""
    fixed = ruler.count(HEADER.format(i=i, n=total) + _opening(lines, start)) + 4
    room = limit - fixed
    used = 0
    reach = start  # lines start..reach-1 fit by their summed counts
    while reach < len(lines) and used + sizes[reach] <= room:
        used += sizes[reach]
        reach += 1
    while True:
        end = _best_cut(lines, sizes, start, reach, room)
        if end is None:  # the counts added up overstate a part of one unit, perhaps
            end = _next_cut(lines, start)
            if ruler.count(_render(lines, start, end, i, total)) <= limit:
                return end
            _too_small(lines, ruler, limit)
        if ruler.count(_render(lines, start, end, i, total)) <= limit:
            return end
        reach = end - 1  # the lines' counts add up to less than the part's: take less


def _next_cut(lines: list[_Line], start: int) -> int:
    """The first boundary after START (the smallest part that starts there)."""
    end = start + 1
    while end < len(lines) and lines[end].cut == 0:
        end += 1
    return end


def _best_cut(lines, sizes, start, reach, room) -> int | None:
    """The best place to end a part of lines START.. that may reach REACH (exclusive)."""
    if reach >= len(lines):
        return len(lines)
    running = 0
    filled = []
    for k in range(start, reach + 1):
        filled.append(running)
        if k < reach:
            running += sizes[k]
    for grade in GRADES:
        for k in range(reach, start, -1):
            if lines[k].cut >= grade:
                if grade == LINE or 2 * filled[k - start] >= room:
                    return k
                break
    return None


def _too_small(lines: list[_Line], ruler, limit: int) -> None:
    """Raise: a unit of the pack (a line, with the part's header and fence) does not fit
    LIMIT; say the smallest limit every unit fits (headers counted at their widest)."""
    widest = max(len(lines), 1)
    need, where = 0, 0
    start = 0
    while start < len(lines):
        end = _next_cut(lines, start)
        tokens = ruler.count(_render(lines, start, end, widest, widest))
        if tokens > need:
            need, where = tokens, start
        start = end
    raise UsageError(
        f"--split {limit}: line {where + 1} of the pack needs {need:,} tokens in a part",
        hint=f"give --split {need} or more",
    )
