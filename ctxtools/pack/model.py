"""What a pack is made of: the request, the files it plans, and the built pack."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from ctxtools.defaults import SKILL_MAX_EXPANDED
from ctxtools.quoting import quote_name

SECTIONS = ("instructions", "skills", "memory", "map", "files", "task")
FORMATS = ("markdown", "xml", "json")
MAP_TOKENS = 900  # the map's budget when the files leave room (DESIGN.md)
MAP_MIN_TOKENS = 50  # a smaller map says nothing: left out
MAP_SHARE_MIN = 10  # percent of the room after the fixed sections the map keeps at least
SIGNATURE_ROLES = frozenset({"explorer", "context", "docs"})
MAX_FILE_BYTES = 32 << 20  # a file over this is skipped (a pack holds ~100K tokens)
FIT_ROUNDS = 12
SKILL_DISCLOSURES = ("auto", "cards", "full")
EXPLAIN_DROPPED = 40  # drops listed by --explain; --format json has them all
MEMORY_SHARE = 15  # percent of the budget the memory section may take by default
EXPLAIN_MEMORY = 20  # memory chunks listed by --explain; --format json has them all


@dataclass
class PackRequest:
    """What to pack. PATHS are files, directories, globs (relative to the current
    directory) and handle references ``ctx:[SESSION/]NAME``; CHANGED is a git revision
    whose changes (untracked files included) join the pack with their diff hunks."""

    task: str
    paths: Sequence[str] = ()
    root: str = "."
    model: str | None = None
    role: str | None = None
    tokens: int | None = None
    context_limit: int | None = None
    role_shares: dict[str, int] | None = None
    profiles_file: str | None = None
    changed: str | None = None
    include_readme: bool = False
    skills_dir: str | None = None
    pin_skills: Sequence[str] = ()
    skill_disclosure: str = "auto"
    skill_max_expanded: int = SKILL_MAX_EXPANDED
    identifiers_only: bool = False
    allow_drop: bool = False
    keep_going: bool = False
    allow_secrets: bool = False
    fmt: str = "markdown"
    use_map: bool = True
    store: str | os.PathLike | None = None
    session: str | None = None
    memory: Sequence[str] = ()  # memory files and directories (ctxtools.memory)
    memory_tokens: int | None = None  # default: MEMORY_SHARE percent of the budget
    retrieval: str | None = None  # hashing, tfidf or cmd (default: the memory default)
    embed_cmd: str | None = None
    embed_timeout: float | None = None
    min_score: float | None = None
    fill: bool = False  # fill the budget past the relevance floor
    listed: Sequence[str] = ()  # --files-from: candidates, not named
    jobs: int | None = None  # --jobs: processes (None: 2 for a big tree, several CPUs)
    include: Sequence[str] = ()  # --include GLOB: candidates whatever the noise rules say
    exclude: Sequence[str] = ()  # --exclude GLOB: never candidates
    output: str | None = None  # -o FILE: never a candidate
    progress: object | None = None  # progress(done, total): the files scanned, then read
    stage: object | None = None  # stage(name): a step begins (listing, scanning, ranking ...)


@dataclass
class FileEntry:
    """One file (or handle) of the pack, as planned: where its bytes come from and why."""

    label: str  # relative path under the root (POSIX), or the handle reference
    path: str | None  # on disk; None for a handle
    named: bool  # the user asked for it by name (argument, @-mention, --changed)
    why: str  # "argument", "directory DIR", "glob G", "@-mention", "changed", "handle"
    diff: str | None = None  # diff hunks (--changed)
    deleted: bool = False  # changed: deleted in the work tree (the diff alone is shown)
    data: bytes | None = None  # the bytes to excerpt when they differ from the file's
    redactions: list = field(default_factory=list)
    rank: float = 0.0  # repo-map rank
    # Found by a directory listing, which judged a link's target already (a link to a
    # secret is never listed): its real path need not be resolved again.
    target_judged: bool = False
    # (size, mtime_ns, ctime_ns) as that listing found them: not asked of the disk again
    stat: tuple[int, int, int] | None = None

    def as_input(self):
        """The excerpt library's input for this entry: its bytes, or its path."""
        from ctxtools.excerpt import Input

        if self.data is not None or self.path is None:
            return Input(self.label, data=self.data or b"")
        return Input(self.label, path=self.path)


@dataclass
class Pack:
    """A built pack: ``text`` (what to print), its ``tokens`` by the run's ruler, the
    ``budget`` (with its terms), and the record of what went in and what did not."""

    text: str
    tokens: int
    budget: dict
    ruler: str
    exact: bool
    fmt: str
    sections: list[dict]
    files: list[dict]
    dropped: list[dict]
    mentions: list[dict]
    redactions: list[dict]
    notes: list[str]
    named: list[str]
    memory: dict | None = None  # with --memory: the ranking and what went in (explain)

    def as_dict(self) -> dict:
        """The ``--format json`` document (``text`` is the Markdown pack it describes). A
        file row's name that is not UTF-8 has U+FFFD in ``path`` and the name as the text
        shows it in ``path_quoted`` (``fsutil.json_name``: its bytes come back from it)."""
        return {
            "budget": self.budget,
            "tokens": self.tokens,
            "counter": self.ruler,
            "exact": self.exact,
            "sections": self.sections,
            "files": self.files,
            "dropped": self.dropped,
            "mentions": self.mentions,
            "redactions": self.redactions,
            "notes": self.notes,
            "memory": self.memory,
            "text": self.text,
        }

    def explain(self, width: int = 30) -> str:
        """A ``/context``-style view: the budget term by term, tokens per section and per
        file as bars scaled to the budget, and what was dropped and why."""
        b = self.budget
        total = b["tokens"]
        lines = [
            f"budget {total:,} tokens ({self.ruler}{'' if self.exact else ', approximate'}); "
            f"used {self.tokens:,} ({_pct(self.tokens, total)})"
        ]
        if b.get("profile"):
            lines.append(f"  model {b['model']}: {b['profile']}")
        if b.get("context_limit") is not None:
            lines.append(
                f"  window {b['context_limit']:,} - system {b['reserve_system']:,}"
                f" - tools {b['reserve_tools']:,} - response {b['reserve_response']:,}"
                f" - slack {b['slack']:,} ({b['slack_percent']}%) = {b['before_share']:,};"
                f" x {b['role_share']}% ({b['role']}) = {b['computed']:,}"
            )
        else:
            lines.append("  given with --tokens")
        lines.append("sections")
        for sec in self.sections:
            lines.append(
                f"  {sec['name']:<13}{sec['tokens']:>8,}  {_bar(sec['tokens'], total, width)}"
                f"  {_pct(sec['tokens'], total)}"
            )
        if self.files:
            lines.append("files")
            for f in self.files:
                mark = "*" if f["named"] else " "
                lines.append(
                    f" {mark}{quote_name(f['path'])}  {f['tokens']:,}"
                    f"  {_bar(f['tokens'], total, width)}  [{f['shown']}]"
                )
                lines.extend(_explain_chunks(f))
        if self.memory is not None:
            lines.extend(_explain_memory(self.memory))
        if self.mentions:
            lines.append("mentions")
            for m in self.mentions:
                lines.append(f"  @{quote_name(m['mention'])}: {m['reason']}")
        if self.dropped:
            lines.append(f"dropped ({len(self.dropped):,})")
            # Whole files and sections first, then windows from the best one down: the
            # drops a reader would miss most come before the long tail.
            windows = [d for d in self.dropped if d["why"].startswith("window")]
            others = [d for d in self.dropped if not d["why"].startswith("window")]
            for d in (others + windows[::-1])[:EXPLAIN_DROPPED]:
                lines.append(f"  {d['what']}: {d['why']}")
            if len(self.dropped) > EXPLAIN_DROPPED:
                rest = len(self.dropped) - EXPLAIN_DROPPED
                lines.append(f"  ... and {rest:,} more (--format json lists them all)")
        if self.redactions:
            lines.append("redacted")
            for r in self.redactions:
                lines.append(f"  {r['where']}:{r['line']}: {r['kind']}")
        return "\n".join(lines) + "\n"


def _explain_memory(mem: dict) -> list[str]:
    th = mem["threshold"]
    if th["threshold"] is None:
        head = f"memory ({mem['method']}): {th['rule']}"
    else:
        if th["rule"] == "min_score":
            rule = "--min-score"
        else:
            rule = (
                f"max(floor {th['floor']:.2f}, median {th['median']:.3f} + margin "
                f"{th['margin']:.2f}, {th['share']:.2f} x best {th['best']:.3f})"
            )
        head = (
            f"memory ({mem['method']}): threshold {th['threshold']:.3f} = {rule}; "
            f"{mem['kept']:,} of {len(mem['chunks']):,} chunks in, {mem['tokens']:,} of "
            f"{mem['budget']:,} tokens"
        )
    lines = [head]
    for c in mem["chunks"][:EXPLAIN_MEMORY]:
        mark = "+" if c["in_pack"] else "-"
        lines.append(
            f"  {mark} {c['score']:.3f}  {quote_name(c['file'])}:{c['start']}-{c['end']}"
            f"{' § ' + c['heading'] if c['heading'] else ''}: {c['why']}"
        )
    if len(mem["chunks"]) > EXPLAIN_MEMORY:
        rest = len(mem["chunks"]) - EXPLAIN_MEMORY
        lines.append(f"  ... and {rest:,} more (--format json lists them all)")
    return lines


def _pct(n: int, total: int) -> str:
    return f"{100.0 * n / total:.1f}%" if total else "0.0%"


def _bar(n: int, total: int, width: int) -> str:
    filled = min(width, round(width * n / total)) if total else 0
    if n and not filled:
        filled = 1
    return "█" * filled + "░" * (width - filled)


EXPLAIN_CHUNKS = 3  # chunks of a file --explain breaks down; JSON's chunk_scores has them all


def _explain_chunks(row: dict) -> list[str]:
    """A file's best shown chunks with their score in parts (which signal gave what)."""
    scored = sorted(row.get("chunk_scores") or (), key=lambda c: (-c["score"], c["chunk"]))
    out = []
    for c in scored[:EXPLAIN_CHUNKS]:
        parts = [
            f"{name} {c[name]:.3g}"
            for name in ("words", "pointers", "tickets", "file", "callees", "semantic", "history")
            if c.get(name)
        ]
        out.append(f"     {c['chunk']}: {c['score']:.3g} = " + " + ".join(parts or ["0"]))
    if len(scored) > EXPLAIN_CHUNKS:
        out.append(f"     and {len(scored) - EXPLAIN_CHUNKS} more chunks")
    return out


_PACK_HEADS = ("# Instructions\n", "# Skills\n", "# Memory\n", "# Repository map\n", "# Files\n")


def looks_like_pack(data: bytes) -> bool:
    """Whether DATA is a pack ctx-pack wrote (Markdown, XML or JSON)."""
    head = data[:64].lstrip()
    if head.startswith(b"<pack>\n"):
        return True
    if head.startswith(b'{"budget":'):
        return b'"sections":' in data[:4096]
    text = data[:32].decode("utf-8", "replace")
    if text.startswith("[ctx-pack: part "):  # a part of a split pack (pack.split)
        return True
    return text.startswith(_PACK_HEADS) and b"\n# Task\n" in data


def replaceable(path: str) -> bool:
    """Whether the existing file PATH is one ctx-pack may write over though no one named it
    (a file of a packed directory that ``-o`` names, a ``--split`` part's path): empty, or
    a pack it wrote in any format, a part of a split one included. Any other file -- and
    one that cannot be read, or is larger than a pack input may be -- is somebody's."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError:
        return False
    return not data.strip() or (len(data) <= MAX_FILE_BYTES and looks_like_pack(data))
