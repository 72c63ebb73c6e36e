"""Discovery: the instruction files a root offers, in priority order, each resolved and
checked (never outside the root, only regular files)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass

from ctxtools.instructions.context import Context
from ctxtools.quoting import quote_name

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
RULES_LIMIT = 256  # rule files taken from .cursor/rules


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class Found:
    rel: str  # the candidate's path, relative to the root
    real: str  # its resolved path
    size: int
    key: str  # de-duplication key: the resolved path relative to the root
    inode: tuple[int, int]


def resolve(ctx: Context, rel: str) -> Found | None:
    path = os.path.join(ctx.root, *rel.split("/"))
    try:
        os.lstat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None
    except OSError as exc:
        ctx.notes.append(f"{quote_name(rel)}: cannot be read ({exc.strerror or exc}); skipped")
        return None
    real = os.path.realpath(path)
    if not _inside(real, ctx.root):
        ctx.notes.append(f"{quote_name(rel)}: a symlink to outside the root; skipped")
        return None
    try:
        st = os.stat(real)
    except FileNotFoundError:
        ctx.notes.append(f"{quote_name(rel)}: a broken symlink; skipped")
        return None
    except OSError as exc:  # ELOOP: a symlink loop
        ctx.notes.append(f"{quote_name(rel)}: cannot be read ({exc.strerror or exc}); skipped")
        return None
    if not stat.S_ISREG(st.st_mode):
        ctx.notes.append(f"{quote_name(rel)}: not a regular file; skipped")
        return None
    key = os.path.relpath(real, ctx.root).replace(os.sep, "/")
    return Found(rel, real, st.st_size, key, (st.st_dev, st.st_ino))


def _rule_files(ctx: Context) -> list[str]:
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


def candidate_paths(ctx: Context, include_readme: bool) -> Iterator[str]:
    """The candidates in priority order (lazily: notes come in that order too)."""
    for cand in CANDIDATES:
        if cand == RULES_DIR + "/*":
            yield from _rule_files(ctx)
        else:
            yield cand
    if include_readme:
        yield README
