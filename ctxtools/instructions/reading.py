"""The project's standing instructions for a pack: which files, how much of them, which parts.

``load_instructions(root, pack_files)`` reads the instruction files under ROOT and returns
what the "Instructions" section of a ctx-pack holds. The contract:

Which files, in this order (``CANDIDATES``): ``AGENTS.md``, ``CLAUDE.md``, ``AGENT.md``,
``.cursorrules``, the rule files under ``.cursor/rules/`` (every non-hidden regular file,
subfolders included, at most ``RULES_LIMIT``, sorted by path), ``.ctx/AGENTS.md``,
``.ctx/PROJECT.md``, and ``README.md`` last with ``include_readme``. Names are exact (case
matters). ``.ctx/AGENTS.md`` is its own file and comes after (layers under) the root
``AGENTS.md``.

Once only: a file reached twice (a symlink such as ``CLAUDE.md -> AGENTS.md``, a hard link,
or a rule file linking to another candidate) appears once, under the first name reached
(de-duplicated by its resolved path relative to ROOT, and by inode); so does a file whose
bytes equal those of one already included (a copied ``CLAUDE.md``: compared only when the
sizes agree, up to ``SCAN_LIMIT``). Later copies are listed in ``dropped``.

Never outside ROOT: a candidate (or a folder on its way, such as ``.cursor``) that resolves
outside ROOT is skipped with a note, as are broken links, symlink loops, anything that is
not a regular file (a FIFO is never opened), unreadable files, and binary files (a NUL byte
in the first 8 KiB, git's test). Text is decoded as UTF-8 with ``replace``; a UTF-8 BOM is
dropped.

Gating by path. A pack's files are relative paths (``pack_files``); patterns are gitignore
globs (``pathspec``'s ``GitIgnoreSpec``): ``**`` crosses folders, a pattern without a slash
(``*.go``) matches at any depth, ``cmd/**`` everything under ``cmd``, ``!`` negates, and
``{a,b}`` braces are expanded first (Cursor writes ``**/*.{ts,tsx}``).

- Front matter (``---`` on the first line, closed by ``---`` or ``...`` within
  ``FRONT_MATTER_MAX_LINES`` lines) gates the whole file with ``paths:`` or Cursor's
  ``globs:``, each either a comma-separated list (``paths: pkg/**/*.go, cmd/**``) or a YAML
  list (``paths:`` then ``  - a/**`` lines); other keys are passed over unread (a nested
  mapping under ``metadata:`` is no error). Both keys are read in every file; given
  together, they add up. ``alwaysApply: true`` (Cursor) makes the file apply whatever its
  globs. An empty ``globs:`` (Cursor writes it) means no gate; an empty ``paths:`` is
  malformed. So a Cursor rule with neither globs nor ``alwaysApply`` (Cursor's "agent
  requested" and manual rules) is included: a pack has no agent to request it. Front
  matter is never part of the included text.
- A heading ``## Title <!-- paths: web/**/*.tsx -->`` gates its section: the heading and
  everything up to the next heading of the same or a higher level (fewer ``#``). Gates nest
  (a section applies when every enclosing gate applies). Only ATX headings count (``#`` to
  ``######`` at the start of a line, up to three spaces in); lines inside fenced code blocks
  (three or more backticks or tildes) are never headings. The comment is removed from the
  included heading.
- A gated part applies when at least one pack file matches. No gate: always applies. With
  ``pack_files`` None or empty, gating is off and everything applies (gates still parsed).
  A part that does not apply is listed in ``dropped`` (``section`` is its heading's title,
  None for a whole file).
- Malformed front matter (unterminated, a line that is not ``key: value`` / list item /
  continuation, an unclosed quote or bracket, a key given twice, an empty ``paths:``, a
  pattern that does not compile) or a malformed heading gate: a note, and the file (or
  section) is ungated (past ``GATE_NOTE_LIMIT`` malformed gates in one file, one note
  counts the rest). Unterminated front matter is read as ordinary text; terminated but
  malformed front matter is still removed.

Caps, in bytes of the included text (UTF-8, after gating, markers included): each file
gets ``min(max_file, max_total - bytes already included)``. A file over its share is cut
at a line boundary and ends with a marker line ``[… N bytes of PATH left out: CAP]``, N
being the file's bytes on disk after the cut; a single line is cut (at a character
boundary, never inside a UTF-8 sequence) only when no whole line fits. The total is checked
after each file is added: once a file was cut by the total cap, or the total is reached, no
further file is added (each left out is listed in ``dropped``, unread); a file whose share
cannot hold even the marker is not added at all. A file is read only as far as its share
needs (a 1 MB AGENTS.md costs the 8 KiB binary probe and about 4 KB of lines), and never
more than ``SCAN_LIMIT`` bytes when gated-out sections have to be skipped (the text then
ends with a ``read limit`` marker). Files whose included text is blank are left out. The
section headers a renderer adds are not counted. Each cut is also listed in ``dropped``
(``section``: the heading in effect where the cut fell), and one note names every file cut
or left out by a cap.

Output is deterministic: the same tree and pack files give the same result whatever the
directory order. The module never prints; ``notes`` holds the warnings for stderr.
"""

from __future__ import annotations

import bisect
import os
import re
import stat
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import BinaryIO

from ctxtools.errors import UsageError
from ctxtools.fsutil import require_directory

CANDIDATES = (
    "AGENTS.md",
    "CLAUDE.md",
    "AGENT.md",
    ".cursorrules",
    ".cursor/rules/*",
    ".ctx/AGENTS.md",
    ".ctx/PROJECT.md",
)  # priority order; README.md only with include_readme (last)
README = "README.md"
RULES_DIR = ".cursor/rules"
MAX_TOTAL = 12_000  # bytes of instructions in a pack
MAX_FILE = 4_000  # bytes of one file
SCAN_LIMIT = 4 << 20  # raw bytes read from one file at most (skipping gated-out sections)
RULES_LIMIT = 256  # rule files taken from .cursor/rules
FRONT_MATTER_MAX_LINES = 200
BINARY_PROBE = 8192
BRACE_LIMIT = 256  # patterns one brace expression may expand to
FRONT_MATTER_KEYS = ("paths", "globs", "alwaysApply")  # the keys read; others pass unread
GATE_NOTE_LIMIT = 10  # malformed-gate notes for one file; the rest are counted

_BOM = b"\xef\xbb\xbf"
_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})(?=[ \t]|$)")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_GATE_RE = re.compile(r"[ \t]*<!--[ \t]*paths[ \t]*:(.*?)-->", re.IGNORECASE)
_GATE_OPEN_RE = re.compile(r"<!--[ \t]*paths[ \t]*:", re.IGNORECASE)
_KEY_RE = re.compile(r"^([A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]+(.*)|)$")
_ITEM_RE = re.compile(r"^([ \t]*)-(?:[ \t]+(.*)|)$")


@dataclass(frozen=True)
class InstructionFile:
    path: str  # relative to root, POSIX separators
    text: str  # what goes into the pack (after gating and caps), decoded UTF-8 with 'replace'
    size: int  # bytes of the file on disk
    truncated: bool  # cut by a cap


@dataclass
class Instructions:
    files: list[InstructionFile]  # in priority order (rule files sorted by path)
    dropped: list[dict]  # {"path", "section" (heading or None), "reason"}
    notes: list[str]  # warnings for stderr

    @property
    def total(self) -> int:
        """Bytes of included text (UTF-8), markers included: never over max_total."""
        return sum(len(f.text.encode("utf-8")) for f in self.files)


# --------------------------------------------------------------------------- front matter


class FrontMatterError(ValueError):
    """Front matter that cannot be read; the message says why (one line)."""


def parse_front_matter(
    lines: Sequence[str], keys: Collection[str] | None = None
) -> dict[str, str | list[str]]:
    """The keys of YAML-ish front matter (the lines between the ``---`` delimiters).

    A small subset of YAML, enough for instruction files, Cursor rules and SKILL.md:
    ``key: value`` (plain, ``'single'`` or ``"double"`` quoted, or a ``[a, b]`` flow list),
    ``key:`` followed by ``- item`` lines (a list) or by indented lines (a plain scalar
    continued, or a ``|``/``>`` block). ``#`` comments and blank lines are skipped. Values
    are strings or lists of strings; the caller interprets booleans. Anything else raises
    FrontMatterError. With KEYS, only those keys are read and checked: the indented block
    of any other key (a nested mapping, a list of mappings) is passed over unread.
    """
    out: dict[str, str | list[str]] = {}
    key: str | None = None
    i = 0
    n = len(lines)
    while i < n:
        raw = lines[i].rstrip("\r\n")
        i += 1
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        m = _KEY_RE.match(raw)
        if not m:
            raise FrontMatterError(f"line {i + 1} is not 'key: value': {_clip(raw)}")
        key = m.group(1)
        wanted = keys is None or key in keys
        if key in out and wanted:
            raise FrontMatterError(f"key {key!r} is given twice")
        value = (m.group(2) or "").strip()
        # the indented lines (or "- item" lines) that belong to this key
        block: list[str] = []
        while i < n:
            nxt = lines[i].rstrip("\r\n")
            if nxt.strip() and not nxt[:1].isspace() and not _ITEM_RE.match(nxt):
                break
            block.append(nxt)
            i += 1
        while block and not block[-1].strip():
            block.pop()
        if wanted:
            out[key] = _value(key, value, block)
    return out


def _clip(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _value(key: str, value: str, block: list[str]) -> str | list[str]:
    if value[:1] in ("|", ">") and re.fullmatch(r"[|>][+-]?[0-9]?", value):
        lines = [b.strip() for b in block]
        if value[0] == "|":
            return "\n".join(lines)
        return " ".join(x for x in lines if x)
    items = [b for b in block if b.strip() and not b.strip().startswith("#")]
    if value:
        if value[0] in "\"'":
            text = " ".join([value, *(b.strip() for b in items)])
            unquoted, rest = _unquote(text, key)
            if rest and not rest.startswith("#"):
                raise FrontMatterError(f"{key}: text after the closing quote")
            return unquoted
        if value.startswith("["):
            text = " ".join([value, *(b.strip() for b in items)])
            if not text.split(" #", 1)[0].rstrip().endswith("]"):
                raise FrontMatterError(f"{key}: unclosed '['")
            inner = text.split(" #", 1)[0].rstrip()[1:-1]
            return [_scalar(p, key) for p in split_top_level(inner) if p.strip()]
        if any(_ITEM_RE.match(b) for b in items):
            raise FrontMatterError(f"{key}: a value and list items at once")
        return " ".join([_strip_comment(value), *(_strip_comment(b.strip()) for b in items)])
    if not items:
        return ""
    if all(_ITEM_RE.match(b) for b in items):
        return [_scalar(_ITEM_RE.match(b).group(2) or "", key) for b in items]  # type: ignore[union-attr]
    if any(_ITEM_RE.match(b) for b in items):
        raise FrontMatterError(f"{key}: list items mixed with other lines")
    return " ".join(_strip_comment(b.strip()) for b in items)


def _strip_comment(text: str) -> str:
    return re.split(r"[ \t]#", text, maxsplit=1)[0].rstrip()


def _unquote(text: str, key: str) -> tuple[str, str]:
    """The quoted string at the start of TEXT, unescaped, and what follows it."""
    quote = text[0]
    out: list[str] = []
    i = 1
    while i < len(text):
        c = text[i]
        if quote == "'" and c == "'":
            if text[i + 1 : i + 2] == "'":
                out.append("'")
                i += 2
                continue
            return "".join(out), text[i + 1 :].strip()
        if quote == '"' and c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append({"n": "\n", "t": "\t"}.get(nxt, nxt))
            i += 2
            continue
        if quote == '"' and c == '"':
            return "".join(out), text[i + 1 :].strip()
        out.append(c)
        i += 1
    raise FrontMatterError(f"{key}: unclosed {quote}")


def _scalar(text: str, key: str) -> str:
    text = text.strip()
    if text[:1] in ("'", '"'):
        value, rest = _unquote(text, key)
        if rest and not rest.startswith("#"):
            raise FrontMatterError(f"{key}: text after the closing quote")
        return value
    return _strip_comment(text)


def split_top_level(text: str) -> list[str]:
    """TEXT split at the commas outside braces, brackets and quotes."""
    parts: list[str] = []
    depth = 0
    quote = ""
    start = 0
    for i, c in enumerate(text):
        if quote:
            if c == quote:
                quote = ""
        elif c in "\"'" and not text[start:i].strip():
            quote = c
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth = max(0, depth - 1)
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def split_front_matter(lines: Sequence[str]) -> tuple[list[str] | None, int, str | None]:
    """Find front matter at the top of LINES (each with its line ending).

    Returns (the lines between the delimiters or None, the number of lines it takes
    including both delimiters, an error). No front matter: (None, 0, None). Unterminated
    within ``FRONT_MATTER_MAX_LINES``: (None, 0, reason).
    """
    if not lines or lines[0].lstrip("\ufeff").rstrip() != "---":
        return None, 0, None
    for j in range(1, min(len(lines), FRONT_MATTER_MAX_LINES + 2)):
        if lines[j].rstrip() in ("---", "..."):
            return list(lines[1:j]), j + 1, None
    return None, 0, f"no closing '---' within {FRONT_MATTER_MAX_LINES} lines"


# --------------------------------------------------------------------------- globs


def expand_braces(pattern: str, limit: int = BRACE_LIMIT) -> list[str]:
    """``**/*.{ts,tsx}`` -> ``['**/*.ts', '**/*.tsx']`` (nested braces too; at most LIMIT)."""
    out: list[str] = []
    todo = [pattern]
    while todo:
        p = todo.pop(0)
        start = -1
        depth = 0
        found = None
        for i, c in enumerate(p):
            if c == "{":
                if depth == 0:
                    start = i
                depth += 1
            elif c == "}" and depth:
                depth -= 1
                if depth == 0:
                    inner = p[start + 1 : i]
                    alts = split_top_level(inner)
                    if len(alts) > 1:
                        found = (start, i, alts)
                        break
        if found is None:
            out.append(p)
        else:
            s, e, alts = found
            todo.extend(p[:s] + a + p[e + 1 :] for a in alts)
        if len(out) + len(todo) > limit:
            raise FrontMatterError(f"braces in {_clip(pattern)!r} expand to over {limit} patterns")
    return out


def glob_patterns(value: str | list[str], key: str) -> list[str]:
    """The patterns of a ``paths:``/``globs:`` value: comma-separated or a list, braces
    expanded, quotes removed, leading ``./`` dropped."""
    items = value if isinstance(value, list) else split_top_level(value)
    out: list[str] = []
    for item in items:
        item = _scalar(item, key) if item.strip() else ""
        if not item:
            continue
        for p in expand_braces(item):
            p = p.strip()
            while p.startswith("./"):
                p = p[2:]
            if p and p not in out:
                out.append(p)
    return out


@dataclass(frozen=True)
class Gate:
    """A set of globs deciding whether a part applies to a pack's files."""

    label: str  # "paths" or "globs"
    patterns: tuple[str, ...]
    match: Callable[[str], bool] = field(compare=False, repr=False)
    # Without negations: per pattern, the folder every match lies under, a piece of text
    # every match contains, and its regex's match; applies() then looks only at the sorted
    # files under that folder that hold that text.
    probes: tuple[tuple[str, str, str, Callable], ...] | None = field(
        default=None, compare=False, repr=False
    )

    def applies(self, files: Sequence[str], cache: dict[str, bool] | None = None) -> bool:
        """Whether any of FILES matches. FILES must be sorted (as normalise_pack_files
        gives them). CACHE, shared between the gates of one run over the same FILES,
        keeps each pattern's answer."""
        if self.probes is None:
            return any(self.match(f) for f in files)
        for pattern, prefix, tail, match in self.probes:
            hit = cache.get(pattern) if cache is not None else None
            if hit is None:
                hit = _probe(files, prefix, tail, match)
                if cache is not None:
                    cache[pattern] = hit
            if hit:
                return True
        return False

    def describe(self) -> str:
        return f"{self.label}: {', '.join(self.patterns)}"


_GLOB_META_RE = re.compile(r"[*?\[\]\\]")


def _probe(files: Sequence[str], prefix: str, tail: str, match: Callable) -> bool:
    start = bisect.bisect_left(files, prefix) if prefix else 0
    for i in range(start, len(files)):
        f = files[i]
        if prefix and not f.startswith(prefix):
            break
        if tail in f and match(f) is not None:
            return True
    return False


def _literal_folder(pattern: str) -> str:
    """The folder every path a gitignore PATTERN matches starts with ('' when unknown):
    ``pkg/**/*.go`` -> ``pkg/``; ``*.go``, ``**/x`` and ``docs/`` (any depth) -> ''."""
    body = pattern.rstrip("/")
    if "/" not in body:
        return ""  # no slash, or only a trailing one: matches at any depth
    body = body.removeprefix("/")
    meta = _GLOB_META_RE.search(body)
    literal = body if meta is None else body[: meta.start()]
    return literal[: literal.rfind("/") + 1]


def _literal_tail(pattern: str) -> str:
    """Text every path a PATTERN matches contains: what follows its last wildcard, without
    a leading slash (``**/*.tsx`` -> ``.tsx``; ``**/b`` matches ``b``, so -> ``b``)."""
    last = -1
    for m in _GLOB_META_RE.finditer(pattern):
        last = m.end()
    return pattern[last if last >= 0 else 0 :].lstrip("/")


def compile_gate(patterns: Sequence[str], label: str = "paths") -> Gate:
    """A Gate for PATTERNS (gitignore rules); FrontMatterError when one does not compile."""
    import pathspec

    try:
        spec = pathspec.GitIgnoreSpec.from_lines(list(patterns))
    except (ValueError, TypeError, re.error) as exc:
        raise FrontMatterError(f"{label}: bad pattern ({exc})") from None
    probes: tuple[tuple[str, Callable], ...] | None = None
    compiled = list(zip(patterns, spec.patterns, strict=False))
    if len(compiled) == len(patterns) and all(
        p.include is True and getattr(p, "regex", None) is not None for _, p in compiled
    ):
        probes = tuple(
            (text, _literal_folder(text), _literal_tail(text), p.regex.match)
            for text, p in compiled
        )
    return Gate(label, tuple(patterns), spec.match_file, probes)


def normalise_pack_files(
    root: str, pack_files: Sequence[str] | None, *also_roots: str
) -> list[str]:
    """Pack files as sorted relative POSIX paths (``./a`` -> ``a``; absolute paths under
    ROOT, or one of ALSO_ROOTS, made relative; others kept as given, where they match
    nothing anchored)."""
    out: list[str] = []
    if isinstance(pack_files, str | os.PathLike):  # one path, not its characters
        pack_files = [os.fspath(pack_files)]
    for p in pack_files or ():
        p = os.fspath(p)
        if os.path.isabs(p):
            for base, path in [(b, p) for b in (root, *also_roots)] + [
                (root, os.path.realpath(p))  # last: through symlinks (one more lookup)
            ]:
                rel = os.path.relpath(path, base)
                if not rel.startswith(".."):
                    p = rel
                    break
        p = p.replace(os.sep, "/")
        while p.startswith("./"):
            p = p[2:]
        if p:
            out.append(p)
    return sorted(set(out))


# --------------------------------------------------------------------------- reading


def _fmt(n: int) -> str:
    return f"{n:,}"


@dataclass
class _Ctx:
    root: str  # real path of the root
    files: list[str]  # normalised pack files; empty: gating off
    notes: list[str]
    dropped: list[dict]

    cache: dict[str, bool] = field(default_factory=dict)  # pattern -> matches a pack file
    gates: dict[str, Gate | FrontMatterError] = field(default_factory=dict)
    gate_notes: int = 0  # malformed-gate notes of the file being read

    def gate_applies(self, gate: Gate) -> bool:
        return not self.files or gate.applies(self.files, self.cache)

    def section_gate(self, value: str) -> Gate | FrontMatterError:
        """The gate of a heading's ``<!-- paths: VALUE -->``, compiled once per text."""
        got = self.gates.get(value)
        if got is None:
            try:
                got = compile_gate(glob_patterns(value, "paths"), "paths")
                if not got.patterns:
                    raise FrontMatterError("paths: is empty")
            except FrontMatterError as exc:
                got = exc
            self.gates[value] = got
        return got

    def note_gate(self, text: str) -> None:
        """A malformed-gate note; past GATE_NOTE_LIMIT in one file they are only counted."""
        self.gate_notes += 1
        if self.gate_notes <= GATE_NOTE_LIMIT:
            self.notes.append(text + "; section ungated")


# What reading one file gave: its text, or why there is none.
_SKIPPED = "skipped"  # binary, unreadable: noted
_GATED = "gated"  # the whole file gated out: in dropped
_BLANK = "blank"  # nothing but whitespace applies
_NO_ROOM = "no room"  # the share cannot hold even the marker


@dataclass
class _Read:
    text: str
    truncated: bool
    cut_section: str | None = None  # the heading in effect where the text was cut
    cut_reason: str | None = None  # the cap (or read limit) that cut it


@dataclass
class _Line:
    offset: int  # where the line starts in the file
    text: str  # as included
    cost: int  # bytes of TEXT in UTF-8
    src: bytes  # its bytes, for a cut inside it
    section: str | None  # the heading in effect


def _pieces(fh: BinaryIO, limit: int) -> Iterator[tuple[int, bytes, bool]]:
    """(offset, bytes, starts a line) for each line of FH, long lines in pieces of LIMIT."""
    offset = 0
    at_start = True
    while True:
        piece = fh.readline(limit)
        if not piece:
            return
        yield offset, piece, at_start
        offset += len(piece)
        at_start = piece.endswith(b"\n")


def _marker(left: int, path: str, reason: str) -> str:
    return f"[… {_fmt(left)} bytes of {path} left out: {reason}]\n"


def _fit_prefix(src: bytes, avail: int) -> tuple[str, int]:
    """The longest prefix of SRC whose decoded text takes at most AVAIL bytes as UTF-8,
    never ending inside a character: (its text, the raw bytes it covers)."""
    text = src.decode("utf-8", "surrogateescape")
    out_bytes = 0
    raw_bytes = 0
    end = 0
    for ch in text:
        if "\udc80" <= ch <= "\udcff":  # one invalid byte, shown as U+FFFD
            cost, raw = 3, 1
        else:
            cost = raw = len(ch.encode("utf-8"))
        if out_bytes + cost > avail:
            break
        out_bytes += cost
        raw_bytes += raw
        end += 1
    shown = text[:end].encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return shown, raw_bytes


def _read_file(ctx: _Ctx, found: _Found, budget: int, cap_reason: str) -> _Read | str:
    """Read one instruction file under its BUDGET: a _Read, or why there is none."""
    try:
        fh = open(found.real, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        ctx.notes.append(f"{found.rel}: cannot be read ({exc.strerror or exc}); skipped")
        return _SKIPPED
    ctx.gate_notes = 0
    with fh:
        try:
            return _read_open(ctx, fh, found.rel, found.size, budget, cap_reason)
        except OSError as exc:
            ctx.notes.append(f"{found.rel}: cannot be read ({exc.strerror or exc}); skipped")
            return _SKIPPED
        finally:
            if ctx.gate_notes > GATE_NOTE_LIMIT:
                more = ctx.gate_notes - GATE_NOTE_LIMIT
                ctx.notes.append(f"{found.rel}: {more} more malformed gates; sections ungated")


def _front_matter(
    ctx: _Ctx, rel: str, pieces: Iterator[tuple[int, bytes, bool]]
) -> tuple[list[tuple[int, bytes, bool]], int, Gate | None, bool]:
    """Read front matter off the top of PIECES: (the pieces read, how many of them it
    takes, its gate, alwaysApply). Pieces not part of it are replayed as the body."""
    first: list[tuple[int, bytes, bool]] = []
    for item in pieces:
        first.append(item)
        if len(first) == 1 and item[1].removeprefix(_BOM).rstrip() != b"---":
            return first, 0, None, False
        if len(first) > 1 and item[1].rstrip() in (b"---", b"..."):
            break
        if len(first) > FRONT_MATTER_MAX_LINES + 1 or not item[1].endswith(b"\n"):
            break
    if len(first) < 2 or first[-1][1].rstrip() not in (b"---", b"..."):
        if first:
            ctx.notes.append(
                f"{rel}: malformed front matter (no closing '---' within "
                f"{FRONT_MATTER_MAX_LINES} lines); read as ungated text"
            )
        return first, 0, None, False
    lines = [p.decode("utf-8", "replace") for _, p, _ in first[1:-1]]
    try:
        gate, always = _file_gate(parse_front_matter(lines, FRONT_MATTER_KEYS))
    except FrontMatterError as exc:
        ctx.notes.append(f"{rel}: malformed front matter ({exc}); read as ungated")
        return first, len(first), None, False
    return first, len(first), gate, always


def _read_open(
    ctx: _Ctx, fh: BinaryIO, rel: str, size: int, budget: int, cap_reason: str
) -> _Read | str:
    head = fh.read(BINARY_PROBE)
    if b"\0" in head:
        ctx.notes.append(f"{rel}: binary file (NUL bytes); skipped")
        return _SKIPPED
    fh.seek(0)
    limit = max(budget, 4096) + 1
    pieces = _pieces(fh, limit)
    first, body_from, gate, always = _front_matter(ctx, rel, pieces)
    if gate is not None and not always and not ctx.gate_applies(gate):
        reason = f"{gate.describe()} match no pack file"
        ctx.dropped.append({"path": rel, "section": None, "reason": reason})
        return _GATED

    def body() -> Iterator[tuple[int, bytes, bool]]:
        yield from first[body_from:]
        yield from pieces

    kept: list[_Line] = []
    used = 0
    overflow: _Line | None = None  # the first kept line that did not fit
    stack: list[tuple[int, bool]] = []  # (level, applies) of the gated sections we are in
    fence: str | None = None
    section: str | None = None
    line_kept = True  # whether the line in progress (long lines come in pieces) is kept
    scanned = 0
    for offset, piece, at_start in body():
        scanned = offset + len(piece)
        if not at_start:  # the rest of a long line: only a gated-out line gets here, since
            continue  # a kept line's first piece (LIMIT bytes) is over the budget already
        if offset == 0 and piece.startswith(_BOM):
            piece, offset = piece[len(_BOM) :], len(_BOM)
        line = piece.decode("utf-8", "replace")
        src = piece
        bare = line.rstrip("\r\n")
        if fence is not None:
            close = _FENCE_RE.match(bare)
            if (
                close
                and close.group(1)[0] == fence[0]
                and len(close.group(1)) >= len(fence)
                and not bare[close.end() :].strip()
            ):
                fence = None
        elif (m := _FENCE_RE.match(bare)) is not None:
            fence = m.group(1)
        elif (h := _HEADING_RE.match(bare)) is not None:
            level = len(h.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            was_kept = all(a for _, a in stack)
            g = _GATE_RE.search(bare)
            if g is not None:
                bare = bare[: g.start()] + bare[g.end() :]
                line = bare + line[len(line.rstrip("\r\n")) :]
                src = line.encode("utf-8")
                section = _title(bare)
                sgate = ctx.section_gate(g.group(1))
                if isinstance(sgate, FrontMatterError):
                    ctx.note_gate(f"{rel}: malformed gate on heading {section!r} ({sgate})")
                else:
                    applies = ctx.gate_applies(sgate)
                    stack.append((level, applies))
                    if was_kept and not applies:
                        reason = f"{sgate.describe()} match no pack file"
                        ctx.dropped.append({"path": rel, "section": section, "reason": reason})
            else:
                section = _title(bare)
                if _GATE_OPEN_RE.search(bare):
                    ctx.note_gate(
                        f"{rel}: malformed gate on heading {section!r} (no closing '-->')"
                    )
        line_kept = all(a for _, a in stack)
        if line_kept:
            entry = _Line(offset, line, len(line.encode("utf-8")), src, section)
            whole = piece.endswith(b"\n") or len(piece) < limit
            if not whole or used + entry.cost > budget:
                overflow = entry
                break
            kept.append(entry)
            used += entry.cost
        if scanned >= SCAN_LIMIT and scanned < size:
            break
    else:
        text = "".join(x.text for x in kept)
        if not text.strip():
            return _BLANK
        return _Read(text, False)

    # Cut: whole lines first; part of one line only when no whole line fits.
    if overflow is None:  # the read limit, with everything read so far fitting
        reason = f"read limit of {_fmt(SCAN_LIMIT)} bytes"
        cut_at, pending = scanned, [_Line(scanned, "", 0, b"", section)]
    else:
        reason, cut_at, pending = cap_reason, overflow.offset, [overflow]

    def marker_for(cut: int) -> str:
        return _marker(max(0, size - cut), rel, reason)

    while kept:
        marker = marker_for(cut_at)
        sep = "" if kept[-1].text.endswith("\n") else "\n"
        if used + len(sep) + len(marker.encode("utf-8")) <= budget:
            text = "".join(x.text for x in kept) + sep + marker
            return _Read(text, True, pending[0].section, reason)
        popped = kept.pop()
        used -= popped.cost
        cut_at = popped.offset
        pending.insert(0, popped)
    head_line = pending[0]
    if not head_line.src:  # the read limit, and nothing before it applied
        ctx.notes.append(
            f"{rel}: nothing in its first {_fmt(SCAN_LIMIT)} bytes applies; the rest is not read"
        )
        return _BLANK
    avail = budget - len(marker_for(head_line.offset).encode("utf-8")) - 1  # "\n" after it
    if avail <= 0:
        return _NO_ROOM
    shown, raw_used = _fit_prefix(head_line.src, avail)
    if not shown.strip():
        return _NO_ROOM
    text = shown.rstrip("\r\n") + "\n" + marker_for(head_line.offset + raw_used)
    return _Read(text, True, head_line.section, reason)


def _title(heading: str) -> str:
    return heading.strip().lstrip("#").strip()


def _truthy(value: str | list[str] | None) -> bool:
    return isinstance(value, str) and value.strip().strip("\"'").lower() in ("true", "yes", "on")


def _file_gate(meta: dict[str, str | list[str]]) -> tuple[Gate | None, bool]:
    patterns: list[str] = []
    labels: list[str] = []
    if "paths" in meta:
        value = meta["paths"]
        found = glob_patterns(value, "paths")
        if not found:
            raise FrontMatterError("paths: is empty")
        patterns += found
        labels.append("paths")
    if "globs" in meta:
        found = glob_patterns(meta["globs"], "globs")
        if found:
            patterns += [p for p in found if p not in patterns]
            labels.append("globs")
    always = _truthy(meta.get("alwaysApply"))
    if not patterns:
        return None, always
    return compile_gate(patterns, "+".join(labels)), always


# --------------------------------------------------------------------------- discovery


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class _Found:
    rel: str  # the candidate's path, relative to the root
    real: str  # its resolved path
    size: int
    key: str  # de-duplication key: the resolved path relative to the root
    inode: tuple[int, int]


def _resolve(ctx: _Ctx, rel: str) -> _Found | None:
    path = os.path.join(ctx.root, *rel.split("/"))
    try:
        os.lstat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None
    except OSError as exc:
        ctx.notes.append(f"{rel}: cannot be read ({exc.strerror or exc}); skipped")
        return None
    real = os.path.realpath(path)
    if not _inside(real, ctx.root):
        ctx.notes.append(f"{rel}: a symlink to outside the root; skipped")
        return None
    try:
        st = os.stat(real)
    except FileNotFoundError:
        ctx.notes.append(f"{rel}: a broken symlink; skipped")
        return None
    except OSError as exc:  # ELOOP: a symlink loop
        ctx.notes.append(f"{rel}: cannot be read ({exc.strerror or exc}); skipped")
        return None
    if not stat.S_ISREG(st.st_mode):
        ctx.notes.append(f"{rel}: not a regular file; skipped")
        return None
    key = os.path.relpath(real, ctx.root).replace(os.sep, "/")
    return _Found(rel, real, st.st_size, key, (st.st_dev, st.st_ino))


def _rule_files(ctx: _Ctx) -> list[str]:
    """Relative paths of the rule files under .cursor/rules, sorted (not yet checked)."""
    top = os.path.join(ctx.root, *RULES_DIR.split("/"))
    try:
        os.lstat(top)
    except OSError:
        return []
    real_top = os.path.realpath(top)
    if not _inside(real_top, ctx.root):
        ctx.notes.append(f"{RULES_DIR}: a symlink to outside the root; skipped")
        return []
    if not os.path.isdir(real_top):
        ctx.notes.append(f"{RULES_DIR}: not a directory; skipped")
        return []
    found: list[str] = []
    unreadable: list[str] = []

    def onerror(exc: OSError) -> None:
        unreadable.append(exc.filename or RULES_DIR)

    for dirpath, dirnames, filenames in os.walk(real_top, onerror=onerror):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        sub = os.path.relpath(dirpath, real_top).replace(os.sep, "/")
        prefix = RULES_DIR if sub == "." else f"{RULES_DIR}/{sub}"
        found.extend(f"{prefix}/{name}" for name in filenames if not name.startswith("."))
        if len(found) > 10 * RULES_LIMIT:
            break
    if unreadable:
        ctx.notes.append(f"{RULES_DIR}: {len(unreadable)} folder(s) cannot be read; skipped")
    found.sort()
    if len(found) > RULES_LIMIT:
        ctx.notes.append(
            f"{RULES_DIR}: over {RULES_LIMIT} rule files; only the first {RULES_LIMIT} "
            "by path are read"
        )
        found = found[:RULES_LIMIT]
    return found


def _same_bytes(a: _Found, b: _Found) -> bool:
    """Whether two files hold the same bytes (compared only when their sizes agree and
    they are at most SCAN_LIMIT long; read in blocks, stopping at the first difference)."""
    if a.size != b.size or a.size > SCAN_LIMIT:
        return False
    try:
        with open(a.real, "rb") as fa, open(b.real, "rb") as fb:
            while True:
                block = fa.read(1 << 16)
                if block != fb.read(1 << 16):
                    return False
                if not block:
                    return True
    except OSError:
        return False


def _candidate_paths(ctx: _Ctx, include_readme: bool) -> Iterator[str]:
    """The candidates in priority order (lazily: notes come in that order too)."""
    for cand in CANDIDATES:
        if cand == RULES_DIR + "/*":
            yield from _rule_files(ctx)
        else:
            yield cand
    if include_readme:
        yield README


def load_instructions(
    root: str | os.PathLike,
    pack_files: Sequence[str] | None,
    *,
    include_readme: bool = False,
    max_total: int = MAX_TOTAL,
    max_file: int = MAX_FILE,
) -> Instructions:
    """The instructions under ROOT for a pack of PACK_FILES (see the module's contract)."""
    for name, value in (("max_total", max_total), ("max_file", max_file)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise UsageError(f"{name} must be a positive number of bytes, not {value!r}")
    root_str = os.fspath(root)
    require_directory(root_str, f"root {root_str}")
    real_root = os.path.realpath(root_str)
    files = normalise_pack_files(real_root, pack_files, os.path.abspath(root_str))
    ctx = _Ctx(real_root, files, [], [])
    files: list[InstructionFile] = []
    seen_keys: dict[str, str] = {}
    seen_inodes: dict[tuple[int, int], str] = {}
    included: list[_Found] = []
    total = 0
    stopped = False
    total_reason = f"cap of {_fmt(max_total)} bytes in all"
    file_reason = f"cap of {_fmt(max_file)} bytes a file"
    for rel in _candidate_paths(ctx, include_readme):
        found = _resolve(ctx, rel)
        if found is None:
            continue
        first = seen_keys.get(found.key) or seen_inodes.get(found.inode)
        if first is not None:
            ctx.dropped.append({"path": rel, "section": None, "reason": f"same file as {first}"})
            continue
        seen_keys[found.key] = rel
        seen_inodes[found.inode] = rel
        if stopped:
            ctx.dropped.append({"path": rel, "section": None, "reason": total_reason})
            continue
        copy_of = next((f.rel for f in included if _same_bytes(f, found)), None)
        if copy_of is not None:
            reason = f"same content as {copy_of}"
            ctx.dropped.append({"path": rel, "section": None, "reason": reason})
            continue
        share = min(max_file, max_total - total)
        by_total = share < max_file
        cap = total_reason if by_total else file_reason
        read = _read_file(ctx, found, share, cap)
        if read == _NO_ROOM:
            ctx.dropped.append({"path": rel, "section": None, "reason": cap})
            stopped = by_total
            continue
        if not isinstance(read, _Read):
            continue
        files.append(InstructionFile(rel, read.text, found.size, read.truncated))
        included.append(found)
        total += len(read.text.encode("utf-8"))
        if read.truncated:
            reason = read.cut_reason or cap
            ctx.dropped.append({"path": rel, "section": read.cut_section, "reason": reason})
        if (read.truncated and by_total) or total >= max_total:
            stopped = True
    capped = [
        d["path"]
        for d in ctx.dropped
        if d["reason"] in (total_reason, file_reason) or d["reason"].startswith("read limit")
    ]
    if capped:
        ctx.notes.append(
            f"instructions over their caps ({_fmt(max_file)} bytes a file, {_fmt(max_total)} "
            f"in all): {', '.join(dict.fromkeys(capped))} cut or left out"
        )
    return Instructions(files, ctx.dropped, ctx.notes)
