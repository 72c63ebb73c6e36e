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

The large held-out set (``LARGE_REPOS``, pinned in ``heldout_large.txt``, kind "large"):
written, with its repositories, before any of its tasks was run or looked at, and never
tuned on. Repositories: well-known projects, at least two in Python and one in each other
language ``gold.is_source`` reads (Go, Rust, Java, JavaScript, TypeScript, C, Ruby), none of
SWE-bench's twelve, the dev set's six or the first held-out set's five; candidates were tried
in this order a language and the first ones taken whose snapshot the fetch tool brings
(at most 500 MiB) and whose HEAD tree has at least 3,000 files:

- Python: pandas (refused, a 1.49 GB snapshot), mypy (1,921 files), wagtail (5,302 files,
  taken), ansible (5,053, taken), airflow (refused, 1.27 GB);
- Go: hugo (2,548 files), gitea (refused, 675 MB), terraform (5,457, taken);
- Rust: cargo (3,072, taken; rust-analyzer, 2,337 files, would not have qualified);
- Java: kafka (6,519, taken);
- JavaScript: webpack (16,995, taken);
- TypeScript: angular (refused, 902 MB), TypeScript (refused, 5.0 GB), nest (refused,
  579 MB), playwright (3,093, taken);
- C: curl (4,449, taken);
- Ruby: rails (4,983, taken).

Tasks: the rule above (``qualifies``) with one more condition, that the parent's tree
holds at least ``LARGE_MIN_FILES`` (3,000) files, so every task is asked of a large tree;
the first 10 qualifying commits of each repository by commit hash, as for the first set.
No date window: the file floor already keeps out the years a project was small, and a
window would move with the snapshot's date.

The second large held-out set (``LARGE2_REPOS``, pinned in ``heldout_large2.txt``, kind
"large2"): written on 2026-12-05, after the first large set had been looked at (its misses
read, one decision informed by it), so that one large set is again untouched. Same task rule
as the first (``qualifies``, 3,000+ files a tree, the first 10 by commit hash). Repositories:
none of any other set of this benchmark or of the tuning lists, and none used by another
bench; for each language, candidates tried in this order and the first one taken whose
snapshot the fetch tool brings (at most 500 MiB) and whose HEAD tree has at least 3,000
files:

- Python: zulip/zulip, saltstack/salt, home-assistant/core;
- Go: grafana/grafana, moby/moby, kubernetes/kubernetes;
- Rust: denoland/deno, bevyengine/bevy, tokio-rs/tokio;
- Java: spring-projects/spring-boot, jenkinsci/jenkins, elastic/elasticsearch;
- JavaScript: eslint/eslint, mrdoob/three.js, nodejs/node;
- TypeScript: prisma/prisma, storybookjs/storybook, microsoft/vscode;
- C: git/git, php/php-src;
- Ruby: discourse/discourse, mastodon/mastodon.

What the fetch tool brought (the same day, before any task was run): Python -- zulip
(902 MB), salt (589 MB) and home-assistant (2.1 GB) refused, so two candidates were added
after the refusals and before anything was run, matrix-org/synapse (1,639 files, too few)
and pantsbuild/pants (3,359, taken); Go -- grafana refused (3.2 GB), moby (13,024, taken);
Rust -- deno (14,807, taken); Java -- spring-boot (11,875, taken); JavaScript -- eslint
(2,358 files, too few), three.js (1.8 GB) and node (1.75 GB) refused: none; TypeScript --
prisma (7,293, taken); C -- git (4,847, taken); Ruby -- discourse (1.3 GB) and mastodon
(1.0 GB) refused, chatwoot/chatwoot tried after them (1.0 GB, refused): none.

The third large held-out set (``LARGE3_REPOS``, pinned in ``heldout_large3.txt``, kind
"large3"): written on 2026-12-06, with its candidates and their order, before anything of it
was fetched or run, so that one large set is again untouched. Same task rule as the first
(``qualifies``, 3,000+ files a tree, the first 10 by commit hash). Repositories: one a
language; for each language, candidates tried in this order and the first one taken whose
snapshot the fetch tool brings (at most 500 MiB) and whose HEAD tree has at least 3,000
files; a language with none taken has none:

- Python: saleor/saleor, netbox-community/netbox, apache/superset, frappe/frappe;
- Go: hashicorp/vault, hashicorp/consul, minio/minio, traefik/traefik, etcd-io/etcd;
- Rust: astral-sh/ruff, meilisearch/meilisearch, tauri-apps/tauri, helix-editor/helix;
- Java: jenkinsci/jenkins, apache/dubbo, netty/netty;
- JavaScript: mui/material-ui, babel/babel, facebook/react;
- TypeScript: storybookjs/storybook, n8n-io/n8n, microsoft/vscode;
- C: php/php-src, neovim/neovim, FFmpeg/FFmpeg, openssl/openssl, systemd/systemd;
- Ruby: Homebrew/brew, rubocop/rubocop, fastlane/fastlane.

What the fetch tool brought (the same day, before any task was run): Python -- saleor
(4,673 files, taken); Go -- vault (535 MB) and consul (546 MB) refused, minio (1,364 files),
traefik (2,256) and etcd (1,499) too few: none; Rust -- ruff (11,055, taken); Java --
jenkins (12,406, taken); JavaScript -- material-ui refused (1.3 GB), babel (27,674, taken);
TypeScript -- storybook (1.28 GB), n8n (1.9 GB) and vscode (2.17 GB) refused: none; C --
php-src (878 MB), neovim (541 MB), FFmpeg (540 MB), openssl (538 MB) and systemd (781 MB)
refused: none; Ruby -- brew (3,185, taken).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from pack_quality.gold import is_source
from pack_quality.trees import TreeError, git

HERE = Path(__file__).resolve().parent
# The SWE-bench Lite dev split (the set to tune on), carried with its licence in
# bench/data; a path only: nothing is read until a run asks for the dev tasks.
DEV = HERE.parent / "data" / "swe-bench-lite-dev" / "instances.jsonl"
PINNED = HERE / "heldout.txt"
PINNED_LARGE = HERE / "heldout_large.txt"
HELDOUT_REPOS = (
    "pallets/click", "psf/requests", "spf13/cobra", "expressjs/express", "sindresorhus/got")
LARGE_REPOS = (
    "wagtail/wagtail", "ansible/ansible", "hashicorp/terraform", "rust-lang/cargo",
    "apache/kafka", "webpack/webpack", "microsoft/playwright", "curl/curl", "rails/rails")
LARGE_MIN_FILES = 3000
PINNED_LARGE2 = HERE / "heldout_large2.txt"
LARGE2_REPOS = (
    "pantsbuild/pants", "moby/moby", "denoland/deno", "spring-projects/spring-boot",
    "prisma/prisma", "git/git")
PINNED_LARGE3 = HERE / "heldout_large3.txt"
LARGE3_REPOS = (
    "saleor/saleor", "astral-sh/ruff", "jenkinsci/jenkins", "babel/babel", "Homebrew/brew")
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
    kind: str  # "dev", "heldout", "large", "large2" or "large3"


def load_dev(path: Path) -> list[Task]:
    tasks = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        d = json.loads(line)
        tasks.append(Task(d["instance_id"], d["repo"], d["base_commit"],
                          d["problem_statement"], d["patch"], "dev"))
    return sorted(tasks, key=lambda t: t.id)


_MENTION = re.compile(r"\b(fix|bug|issue|error)", re.I)
_TRAILER = re.compile(
    r"^\s*((fix(es|ed)?|close[sd]?|resolve[sd]?|refs?|see|related|part of|pr|pull request"
    r"|issue)\b[\s:]*(#\d+|(gh-\d+)|https?://\S+/(issues|pull)/\d+)[\s,.]*)+$"
    r"|^\s*(signed-off-by|co-authored-by|reviewed-by|acked-by):", re.I)
_PR_REF = re.compile(r"\s*\((#\d+|gh-\d+)\)|\s*\b(close[sd]?|fix(es|ed)?|resolve[sd]?)\s+#\d+\.?",
                     re.I)
# Not a bug fix to localise: reverts, typo and formatting commits.
_NOT_A_FIX = re.compile(r"^revert\b|\b(typos?|spelling|gofmt|lint(er|ing)?|formatting|"
                        r"whitespace|godocs?|doc ?strings?)\b", re.I)


def clean_message(message: str) -> str:
    """The commit message without "Fixes #N" style trailer lines and "(#N)" PR numbers."""
    lines = [_PR_REF.sub("", ln).rstrip() for ln in message.splitlines()
             if not _TRAILER.match(ln)]
    return "\n".join(lines).strip()


def _numstat(mirror: Path, sha: str) -> list[tuple[str, int, int, str]]:
    """(path, added, removed, status) of each file SHA changes against its parent."""
    out = git("diff", "--no-renames", "--numstat", "--raw", f"{sha}^", sha,
              git_dir=mirror).stdout.decode(errors="replace")
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


def tree_stats(mirror: Path, rev: str) -> tuple[int, int]:
    """The number of REV's files (blobs) and their size in bytes."""
    out = git("ls-tree", "-r", "-l", rev, git_dir=mirror).stdout.decode(errors="replace")
    sizes = [int(f[3]) for f in (ln.split(None, 4) for ln in out.splitlines())
             if len(f) == 5 and f[1] == "blob" and f[3].isdigit()]
    return len(sizes), sum(sizes)


def tree_bytes(mirror: Path, rev: str) -> int:
    """The size of REV's files (blobs) in bytes."""
    return tree_stats(mirror, rev)[1]


def qualifies(mirror: Path, sha: str, message: str, min_tree: int = MIN_TREE_BYTES,
              min_files: int = 0) -> list[str] | None:
    """The gold files of SHA when it is a usable bug fix (the rule), else None."""
    text = clean_message(message)
    if len(text) < 60 or not _MENTION.search(text) or _NOT_A_FIX.search(text):
        return None
    gold = [(p, a, r) for p, a, r, s in _numstat(mirror, sha) if s == "M" and is_source(p)]
    if not 1 <= len(gold) <= 3 or sum(r for _, _, r in gold) < 1:
        return None
    if sum(a + r for _, a, r in gold) > MAX_CHANGED:
        return None
    files, size = tree_stats(mirror, f"{sha}^")
    if size < min_tree or files < min_files:
        return None
    return sorted(p for p, _, _ in gold)


def select_commits(mirror: Path, limit: int = PER_REPO, min_tree: int = MIN_TREE_BYTES,
                   min_files: int = 0) -> list[str]:
    """The first LIMIT qualifying non-merge commits of HEAD's history, by commit hash."""
    log = git("log", "--no-merges", "--format=%H%x00%P%x00%B%x01", "HEAD",
              git_dir=mirror).stdout.decode(errors="replace")
    picked: list[str] = []
    entries = []
    for entry in log.split("\x01"):
        parts = entry.strip("\n").split("\x00")
        if len(parts) == 3 and len(parts[1].split()) == 1:
            entries.append((parts[0], parts[2]))
    for sha, message in sorted(entries):
        if qualifies(mirror, sha, message, min_tree, min_files):
            picked.append(sha)
            if len(picked) == limit:
                break
    return picked


def heldout_task(repo: str, mirror: Path, sha: str, kind: str = "heldout") -> Task:
    """The task of a pinned commit of a held-out set (KIND "heldout", "large", "large2"
    or "large3")."""
    message = git("log", "-1", "--format=%B", sha, git_dir=mirror).stdout.decode(
        errors="replace")
    files = qualifies(mirror, sha, message, min_files=SETS[kind].min_files)
    if not files:
        raise TreeError(f"{sha[:12]} no longer satisfies the selection rule")
    patch = git("diff", "--no-renames", f"{sha}^", sha, "--", *files,
                git_dir=mirror).stdout.decode(errors="replace")
    parent = git("rev-parse", f"{sha}^", git_dir=mirror).stdout.decode().strip()
    owner, name = repo.split("/")
    return Task(f"{owner}__{name}-{sha[:12]}", repo, parent, clean_message(message), patch,
                kind)


def read_pinned(path: Path = PINNED) -> list[tuple[str, str]]:
    pairs = []
    if path.is_file():
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                repo, sha = line.split()
                pairs.append((repo, sha))
    return pairs


def write_pinned(pairs: list[tuple[str, str]], path: Path = PINNED,
                 what: str = "Held-out") -> None:
    head = (f"# {what} tasks of bench/bench_pack_quality.py: (repository, commit) pairs the\n"
            "# selection rule chose (--select-heldout). Texts and diffs come from the mirror.\n")
    path.write_text(head + "".join(f"{r} {s}\n" for r, s in pairs))


@dataclass(frozen=True)
class HeldoutSet:
    """A held-out set: its repositories, where its pairs are pinned, its file floor."""

    kind: str
    title: str
    repos: tuple[str, ...]
    pinned: Path
    min_files: int


SETS = {
    "heldout": HeldoutSet("heldout", "Held-out", HELDOUT_REPOS, PINNED, 0),
    "large": HeldoutSet("large", "Large held-out", LARGE_REPOS, PINNED_LARGE, LARGE_MIN_FILES),
    "large2": HeldoutSet("large2", "Second large held-out", LARGE2_REPOS, PINNED_LARGE2,
                         LARGE_MIN_FILES),
    "large3": HeldoutSet("large3", "Third large held-out", LARGE3_REPOS, PINNED_LARGE3,
                         LARGE_MIN_FILES),
}
