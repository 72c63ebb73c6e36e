"""Memory files cut into sections: Markdown by headings, reStructuredText by underlined
titles, plain text by paragraph groups; every chunk keeps its real line range."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from ctxtools.binary import is_binary
from ctxtools.fsutil import check_resource

MEMORY_EXTENSIONS = (".md", ".markdown", ".txt", ".rst")
MAX_FILE_BYTES = 32 << 20  # a memory file over this is skipped, with a note
MAX_CHUNK_CHARS = 2000  # a longer section is cut at blank lines (~500 tokens a chunk)
PLAIN_CHUNK_CHARS = 1200  # paragraph groups of plain text
MIN_SECTION_CHARS = 200  # a section with less text than this under its title joins the next

_MD_HEADING = re.compile(r" {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*\Z")
_MD_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_RST_ADORN = re.compile(r"([=\-~^\"'`#*+:._])\1{2,}[ \t]*\Z")


@dataclass(frozen=True)
class Chunk:
    """One section of a memory file: FILE (its label), HEADING ('' when none), the 1-based
    inclusive line range START..END, and DIGEST (of its text: the cache key)."""

    file: str
    heading: str
    start: int
    end: int
    digest: str


def text_digest(text: str) -> str:
    import xxhash

    return xxhash.xxh3_128_hexdigest(text.encode("utf-8", "surrogatepass"))


def kind_of(label: str, lines: list[str]) -> str:
    """'markdown', 'rst' or 'plain': by extension; a .txt with reST titles is reST."""
    ext = os.path.splitext(label)[1].lower()
    if ext in (".md", ".markdown"):
        return "markdown"
    if ext == ".rst":
        return "rst"
    if _rst_titles(lines):
        return "rst"
    return "markdown" if any(_MD_HEADING.match(x) for x in lines[:200]) else "plain"


def chunk_lines(label: str, lines: list[str]) -> list[Chunk]:
    """LINES (without their newlines) of the file LABEL, cut into chunks in file order."""
    if not lines:
        return []
    kind = kind_of(label, lines)
    if kind == "markdown":
        sections = _markdown_sections(lines)
    elif kind == "rst":
        sections = _rst_sections(lines)
    else:
        sections = [("", 0, len(lines))]
    sections = _merge_small(lines, sections)
    limit = PLAIN_CHUNK_CHARS if kind == "plain" else MAX_CHUNK_CHARS
    out: list[Chunk] = []
    for heading, lo, hi in sections:
        for a, b in _paragraph_groups(lines, lo, hi, limit):
            while a < b and not lines[a].strip():
                a += 1
            while b > a and not lines[b - 1].strip():
                b -= 1
            if a == b:
                continue
            text = "\n".join(lines[a:b])
            out.append(Chunk(label, heading, a + 1, b, text_digest(text)))
    return out


def _merge_small(lines: list[str], sections: list[tuple[str, int, int]]):
    """Sections with next to no text of their own (a title over its first subsection, a
    one-line note) joined to the sections after them until the group holds enough text:
    alone, a few words score as if they were all about the task. The group takes the
    title under which most of its text stands (a parent title takes its first
    subsection's; three short notes take the longest one's)."""
    out: list[tuple[str, int, int]] = []
    group_lo = None
    best = (-1, "")
    total = 0
    for k, (heading, lo, hi) in enumerate(sections):
        size = sum(len(x.strip()) for x in lines[lo:hi])
        if group_lo is None:
            group_lo, best, total = lo, (size, heading), 0
        elif size > best[0]:
            best = (size, heading)
        total += size
        if total < MIN_SECTION_CHARS and k + 1 < len(sections):
            continue
        out.append((best[1], group_lo, hi))
        group_lo = None
    return out


def _markdown_sections(lines: list[str]) -> list[tuple[str, int, int]]:
    starts: list[tuple[str, int]] = [("", 0)]
    fence = None
    for i, line in enumerate(lines):
        m = _MD_FENCE.match(line)
        if m:
            mark = m.group(1)
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence) and not line.strip(" `~"):
                fence = None
            continue
        if fence is not None:
            continue
        h = _MD_HEADING.match(line)
        if h:
            starts.append((h.group(2).strip(), i))
    return _spans(starts, len(lines))


def _rst_titles(lines: list[str]) -> list[tuple[str, int]]:
    """(title, first line of its adornment) of every reST section title."""
    out = []
    for i in range(len(lines) - 1):
        title, under = lines[i], lines[i + 1]
        if not title.strip() or title[0] in " \t" or _RST_ADORN.match(title):
            continue
        if not _RST_ADORN.match(under) or len(under.rstrip()) < len(title.rstrip()):
            continue
        over = i > 0 and lines[i - 1].rstrip() == under.rstrip()
        out.append((title.strip(), i - 1 if over else i))
    return out


def _rst_sections(lines: list[str]) -> list[tuple[str, int, int]]:
    return _spans([("", 0), *_rst_titles(lines)], len(lines))


def _spans(starts: list[tuple[str, int]], n: int) -> list[tuple[str, int, int]]:
    out = []
    for k, (heading, lo) in enumerate(starts):
        hi = starts[k + 1][1] if k + 1 < len(starts) else n
        if hi > lo:
            out.append((heading, lo, hi))
    return out


def _paragraph_groups(lines: list[str], lo: int, hi: int, limit: int):
    """Yield (a, b) line spans covering LO..HI, cut at blank lines so that each holds at
    most LIMIT characters where it can (a longer paragraph is cut between lines)."""
    a = lo
    size = 0
    last_blank = None
    for i in range(lo, hi):
        size += len(lines[i]) + 1
        if not lines[i].strip():
            last_blank = i
        if size > limit and i > a:
            cut = last_blank + 1 if last_blank is not None and last_blank >= a else i
            if cut <= a:
                cut = i
            yield a, cut
            a = cut
            size = sum(len(x) + 1 for x in lines[a : i + 1])
            last_blank = None
    if a < hi:
        yield a, hi


@dataclass
class MemoryFile:
    """A memory file as read: its label, real path, bytes' digest and text lines."""

    label: str
    path: str
    digest: str
    lines: list[str]


def discover(paths, notes: list[str], allow_secrets: bool = False) -> list[tuple[str, str]]:
    """(label, real path) of the memory files under PATHS, sorted by label, each once.
    Directories give their .md/.markdown/.txt/.rst files (hidden ones left out, and links
    to a file outside the directory not followed); a missing path raises NotFoundError
    naming all of them. A file that is a secret by its name or its link target's
    (``ctxtools.secrets.secret_path``) is left out, said in NOTES, unless ALLOW_SECRETS."""
    from ctxtools.errors import NotFoundError
    from ctxtools.fsutil import check_cwd
    from ctxtools.quoting import quote_name

    for p in paths:
        check_cwd(p, f"--memory {quote_name(p)}")
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        raise NotFoundError(
            "--memory: no such file or directory: " + ", ".join(map(quote_name, missing)),
            hint="give Markdown or text files, or directories holding them",
        )
    found: dict[str, str] = {}
    for p in paths:
        if os.path.isdir(p):
            other = outside = 0
            top = os.path.realpath(p)
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for name in sorted(filenames):
                    if name.startswith("."):
                        continue
                    full = os.path.join(dirpath, name)
                    if not name.lower().endswith(MEMORY_EXTENSIONS):
                        other += 1
                        continue
                    real = os.path.realpath(full)
                    if not real.startswith(top.rstrip(os.sep) + os.sep):
                        outside += 1
                    elif os.path.isfile(full):
                        found.setdefault(_label(full), real)
            shown = quote_name(p)
            if other:
                notes.append(f"--memory {shown}: {other} file(s) skipped (not .md, .txt or .rst)")
            if outside:
                notes.append(
                    f"--memory {shown}: {outside} file(s) skipped (a symbolic link out of {shown})"
                )
        elif os.path.isfile(p):
            found.setdefault(_label(p), os.path.realpath(p))
        else:
            notes.append(f"--memory {quote_name(p)}: skipped (not a regular file)")
    seen: set[str] = set()
    out = []
    for label in sorted(found):
        real = found[label]
        kind = None if allow_secrets else _secret(label, real)
        if kind is not None:
            notes.append(f"memory: skipped {quote_name(label)}: a secret by its name ({kind})")
        elif real not in seen:
            seen.add(real)
            out.append((label, real))
    return out


def _secret(label: str, real: str) -> str | None:
    from ctxtools.secrets import secret_path

    return secret_path(label, real)


def _label(path: str) -> str:
    """PATH relative to the working directory when it is under it, else absolute (as it
    is when the working directory was removed: ``check_cwd`` let only absolute ones by)."""
    from ctxtools.fsutil import current_dir

    cwd = current_dir()
    rel = os.path.relpath(path, cwd) if cwd is not None else path
    if rel.startswith(".." + os.sep) or rel == "..":
        rel = os.path.abspath(path)
    return rel.replace(os.sep, "/")


def read_memory_file(label: str, path: str, notes: list[str]) -> MemoryFile | None:
    """The file at PATH, or None (said in NOTES) when it is binary, too large or unreadable."""
    import xxhash

    try:
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            notes.append(f"memory: skipped {label}: {size:,} bytes, over 32 MB")
            return None
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        check_resource(exc, path)
        notes.append(f"memory: skipped {label}: {exc.strerror or exc}")
        return None
    if is_binary(data):
        notes.append(f"memory: skipped {label}: binary file")
        return None
    text = data.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    return MemoryFile(label, path, xxhash.xxh3_128_hexdigest(data), split_lines(text))


def split_lines(text: str) -> list[str]:
    """TEXT's lines, cut at newlines only (so line numbers are an editor's), CR removed."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if "\r" not in text:
        return lines
    return [x[:-1] if x.endswith("\r") else x for x in lines]
