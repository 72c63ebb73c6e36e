"""The tasks: SWE-bench Lite dev instances, and held-out bug-fix commits of other projects.

Held-out tasks are derived from a mirror at run time (nothing of a fetched repository is
committed): a rule picks the commits, ``heldout.txt`` pins the (repo, sha) pairs the rule
chose when the list was written, so the set stays the same when a mirror grows.

The rule (``qualifies``): a non-merge commit of HEAD's history with one parent; its
message, without "Fixes #N" / "(#N)" references and Signed-off-by style trailers, is at
least 60 characters, mentions fix/bug/issue/error and is not a revert, typo, lint,
formatting or doc-string commit; it modifies 1-3 existing non-test, non-doc source files
(``gold.is_source``), removing at least one line and changing at most 100 lines in them;
the parent's tree holds at least 256 KB (so that a 32k pack cannot just take it whole).
Candidates are sorted by commit hash and the first 10 of each repository taken. The task
text is the cleaned message, the base the parent, the gold the diff of those files.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from pack_quality.gold import is_source
from pack_quality.trees import TreeError, git

HERE = Path(__file__).resolve().parent
PINNED = HERE / "heldout.txt"
HELDOUT_REPOS = (
    "pallets/click",
    "psf/requests",
    "spf13/cobra",
    "expressjs/express",
    "sindresorhus/got",
)
PER_REPO = 10
MAX_CHANGED = 100  # added + removed lines in the gold files: a fix, not a rewrite
MIN_TREE_BYTES = 256 * 1024  # a tree the 32k pack (about 120 KB) cannot simply hold whole


@dataclass
class Task:
    id: str
    repo: str
    base: str
    text: str
    patch: str
    kind: str  # "dev" or "heldout"


def load_dev(path: Path) -> list[Task]:
    tasks = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        d = json.loads(line)
        tasks.append(
            Task(
                d["instance_id"],
                d["repo"],
                d["base_commit"],
                d["problem_statement"],
                d["patch"],
                "dev",
            )
        )
    return sorted(tasks, key=lambda t: t.id)


_MENTION = re.compile(r"\b(fix|bug|issue|error)", re.I)
_TRAILER = re.compile(
    r"^\s*((fix(es|ed)?|close[sd]?|resolve[sd]?|refs?|see|related|part of|pr|pull request"
    r"|issue)\b[\s:]*(#\d+|(gh-\d+)|https?://\S+/(issues|pull)/\d+)[\s,.]*)+$"
    r"|^\s*(signed-off-by|co-authored-by|reviewed-by|acked-by):",
    re.I,
)
_PR_REF = re.compile(
    r"\s*\((#\d+|gh-\d+)\)|\s*\b(close[sd]?|fix(es|ed)?|resolve[sd]?)\s+#\d+\.?", re.I
)
# Not a bug fix to localise: reverts, typo and formatting commits.
_NOT_A_FIX = re.compile(
    r"^revert\b|\b(typos?|spelling|gofmt|lint(er|ing)?|formatting|"
    r"whitespace|godocs?|doc ?strings?)\b",
    re.I,
)


def clean_message(message: str) -> str:
    """The commit message without "Fixes #N" style trailer lines and "(#N)" PR numbers."""
    lines = [_PR_REF.sub("", ln).rstrip() for ln in message.splitlines() if not _TRAILER.match(ln)]
    return "\n".join(lines).strip()


def _numstat(mirror: Path, sha: str) -> list[tuple[str, int, int, str]]:
    """(path, added, removed, status) of each file SHA changes against its parent."""
    out = git(
        "diff", "--no-renames", "--numstat", "--raw", f"{sha}^", sha, git_dir=mirror
    ).stdout.decode(errors="replace")
    status: dict[str, str] = {}
    rows = []
    for line in out.splitlines():
        if line.startswith(":"):
            meta, path = line.split("\t", 1)
            status[path] = meta.split()[-1]
        elif line.strip():
            add, rem, path = line.split("\t", 2)
            if add == "-":  # binary
                continue
            rows.append((path, int(add), int(rem), status.get(path, "?")))
    return rows


def tree_bytes(mirror: Path, rev: str) -> int:
    """The size of REV's files (blobs) in bytes."""
    out = git("ls-tree", "-r", "-l", rev, git_dir=mirror).stdout.decode(errors="replace")
    return sum(
        int(f[3])
        for f in (ln.split(None, 4) for ln in out.splitlines())
        if len(f) == 5 and f[1] == "blob" and f[3].isdigit()
    )


def qualifies(
    mirror: Path, sha: str, message: str, min_tree: int = MIN_TREE_BYTES
) -> list[str] | None:
    """The gold files of SHA when it is a usable bug fix (the rule), else None."""
    text = clean_message(message)
    if len(text) < 60 or not _MENTION.search(text) or _NOT_A_FIX.search(text):
        return None
    gold = [(p, a, r) for p, a, r, s in _numstat(mirror, sha) if s == "M" and is_source(p)]
    if not 1 <= len(gold) <= 3 or sum(r for _, _, r in gold) < 1:
        return None
    if sum(a + r for _, a, r in gold) > MAX_CHANGED:
        return None
    if tree_bytes(mirror, f"{sha}^") < min_tree:
        return None
    return sorted(p for p, _, _ in gold)


def select_commits(
    mirror: Path, limit: int = PER_REPO, min_tree: int = MIN_TREE_BYTES
) -> list[str]:
    """The first LIMIT qualifying non-merge commits of HEAD's history, by commit hash."""
    log = git(
        "log", "--no-merges", "--format=%H%x00%P%x00%B%x01", "HEAD", git_dir=mirror
    ).stdout.decode(errors="replace")
    picked: list[str] = []
    entries = []
    for entry in log.split("\x01"):
        parts = entry.strip("\n").split("\x00")
        if len(parts) == 3 and len(parts[1].split()) == 1:
            entries.append((parts[0], parts[2]))
    for sha, message in sorted(entries):
        if qualifies(mirror, sha, message, min_tree):
            picked.append(sha)
            if len(picked) == limit:
                break
    return picked


def heldout_task(repo: str, mirror: Path, sha: str) -> Task:
    message = git("log", "-1", "--format=%B", sha, git_dir=mirror).stdout.decode(errors="replace")
    files = qualifies(mirror, sha, message)
    if not files:
        raise TreeError(f"{sha[:12]} no longer satisfies the selection rule")
    patch = git("diff", "--no-renames", f"{sha}^", sha, "--", *files, git_dir=mirror).stdout.decode(
        errors="replace"
    )
    parent = git("rev-parse", f"{sha}^", git_dir=mirror).stdout.decode().strip()
    owner, name = repo.split("/")
    return Task(
        f"{owner}__{name}-{sha[:12]}", repo, parent, clean_message(message), patch, "heldout"
    )


def read_pinned(path: Path = PINNED) -> list[tuple[str, str]]:
    pairs = []
    if path.is_file():
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                repo, sha = line.split()
                pairs.append((repo, sha))
    return pairs


def write_pinned(pairs: list[tuple[str, str]], path: Path = PINNED) -> None:
    head = (
        "# Held-out tasks of bench/bench_pack_quality.py: (repository, commit) pairs the\n"
        "# selection rule chose (--select-heldout). Texts and diffs come from the mirror.\n"
    )
    path.write_text(head + "".join(f"{r} {s}\n" for r, s in pairs))
