"""Layering: the candidates in priority order, each included once (by path, inode or
content), under the per-file and total caps; the result of a run."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import ctxtools.instructions.reading as reading
from ctxtools.errors import UsageError
from ctxtools.fsutil import require_directory
from ctxtools.instructions.context import Context
from ctxtools.instructions.discovery import Found, candidate_paths, resolve
from ctxtools.instructions.gates import normalise_pack_files
from ctxtools.instructions.reading import NO_ROOM, ReadText, commas, read_file

MAX_TOTAL = 12_000  # bytes of instructions in a pack
MAX_FILE = 4_000  # bytes of one file


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


def _same_bytes(a: Found, b: Found) -> bool:
    """Whether two files hold the same bytes (compared only when their sizes agree and
    they are at most SCAN_LIMIT long; read in blocks, stopping at the first difference)."""
    if a.size != b.size or a.size > reading.SCAN_LIMIT:
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
    ctx = Context(real_root, files, [], [])
    files: list[InstructionFile] = []
    seen_keys: dict[str, str] = {}
    seen_inodes: dict[tuple[int, int], str] = {}
    included: list[Found] = []
    total = 0
    stopped = False
    total_reason = f"cap of {commas(max_total)} bytes in all"
    file_reason = f"cap of {commas(max_file)} bytes a file"
    for rel in candidate_paths(ctx, include_readme):
        found = resolve(ctx, rel)
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
        read = read_file(ctx, found, share, cap)
        if read == NO_ROOM:
            ctx.dropped.append({"path": rel, "section": None, "reason": cap})
            stopped = by_total
            continue
        if not isinstance(read, ReadText):
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
            f"instructions over their caps ({commas(max_file)} bytes a file, {commas(max_total)} "
            f"in all): {', '.join(dict.fromkeys(capped))} cut or left out"
        )
    return Instructions(files, ctx.dropped, ctx.notes)
