"""Mirrors (bare git repositories brought by the fetch tool) and task trees made from them.

A task's tree is ``git archive BASE | tar -x`` into ``bench/corpora/swe/<id>`` (or
``bench/corpora/heldout/<id>``), then made a git work tree of its own with one commit of
fixed author, committer and date, so a tool that asks git sees a clean checkout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

MIRROR_ROOT = Path("/work/.mirror")
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
}


class TreeError(Exception):
    """A task whose tree cannot be made (no mirror, no commit, a patch that does not apply)."""


def git(*args: str, cwd: Path | None = None, git_dir: Path | None = None,
        input: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess:
    cmd = ["git"] + ([f"--git-dir={git_dir}"] if git_dir else []) + list(args)
    env = {**os.environ, **_GIT_ENV}
    proc = subprocess.run(cmd, cwd=cwd, input=input, capture_output=True, env=env)
    if check and proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip().splitlines()
        raise TreeError(f"git {args[0]}: {err[0] if err else proc.returncode}")
    return proc


def _is_git_dir(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir()


def find_mirror(repo: str, given: dict[str, Path], roots: list[Path]) -> Path | None:
    """The bare mirror of REPO (``owner/name``): given on the command line, else
    ``ROOT/owner+name/...`` under one of ROOTS (the fetch tool's layout)."""
    if repo in given:
        return given[repo]
    key = repo.replace("/", "+").lower()
    for root in roots:
        if not root.is_dir():
            continue
        for child in sorted(root.iterdir()):
            if child.name.lower() != key:
                continue
            for cand in [child, *sorted(child.iterdir())] if child.is_dir() else []:
                if _is_git_dir(cand):
                    return cand
    return None


def materialise(mirror: Path, commit: str, dest: Path) -> Path:
    """DEST holding the tree of COMMIT as a one-commit git work tree (kept when present)."""
    done = dest / ".git" / "bench-done"
    if done.is_file() and done.read_text().strip() == commit:
        return dest
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    missing = missing_blobs(mirror, commit)
    excludes = [f":(exclude,literal){p}" for p in missing]
    archive = git("archive", "--format=tar", commit, "--", ".", *excludes, git_dir=mirror)
    proc = subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout,
                          capture_output=True)
    if proc.returncode != 0:
        raise TreeError(f"tar: {proc.stderr.decode(errors='replace').strip()[:200]}")
    git("init", "-q", cwd=dest)
    git("add", "-A", "-f", cwd=dest)
    git("commit", "-q", "--no-gpg-sign", "--allow-empty", "-m", f"tree of {commit}", cwd=dest)
    (dest / ".git" / "bench-missing").write_text("".join(p + "\n" for p in missing))
    done.write_text(commit + "\n")
    return dest


def missing_blobs(mirror: Path, commit: str) -> list[str]:
    """Paths of COMMIT whose blobs the mirror lacks (snapshots leave out files of 4 MiB+)."""
    listing = git("ls-tree", "-r", "-z", commit, git_dir=mirror).stdout.decode(errors="replace")
    entries = []
    for rec in listing.split("\0"):
        if rec:
            meta, path = rec.split("\t", 1)
            kind, obj = meta.split()[1:3]
            if kind == "blob":
                entries.append((obj, path))
    if not entries:
        return []
    batch = "".join(obj + "\n" for obj, _ in entries).encode()
    out = git("cat-file", "--batch-check", git_dir=mirror, input=batch).stdout.decode()
    return sorted(path for (_, path), line in zip(entries, out.splitlines(), strict=True)
                  if line.endswith(" missing"))


def check_patch(tree: Path, patch: str) -> None:
    """Raise TreeError unless PATCH applies to TREE (``git apply --check``)."""
    proc = git("apply", "--check", "-", cwd=tree, input=patch.encode(), check=False)
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip().splitlines()
        raise TreeError(f"gold patch does not apply: {err[0] if err else proc.returncode}")


HISTORY_ROOT = Path(__file__).resolve().parent.parent / "corpora" / "history"


def with_history(mirror: Path, commit: str, tree: Path, name: str) -> dict[str, str]:
    """The environment under which git sees TREE (made by ``materialise``) as a checkout of
    COMMIT with the mirror's whole history before it: a git directory of its own under
    ``HISTORY_ROOT/NAME.git`` (made once; the mirror's objects borrowed, HEAD detached at
    COMMIT, an index of COMMIT's tree less the blobs the mirror lacks), named by GIT_DIR
    and GIT_WORK_TREE. The tree's own one-commit ``.git`` is left as it is, so a run
    without this environment is the run it always was."""
    gd = HISTORY_ROOT / f"{name}.git"
    env = {"GIT_DIR": str(gd), "GIT_WORK_TREE": str(tree)}
    done = gd / "bench-done"
    if done.is_file() and done.read_text().strip() == f"{commit} {tree}":
        return env
    if gd.exists():
        shutil.rmtree(gd)
    HISTORY_ROOT.mkdir(parents=True, exist_ok=True)
    git("init", "-q", "--bare", str(gd))
    git("config", "core.bare", "false", git_dir=gd)
    (gd / "objects" / "info" / "alternates").write_text(str(mirror / "objects") + "\n")
    git("update-ref", "--no-deref", "HEAD", commit, git_dir=gd)
    subprocess.run(["git", "read-tree", "HEAD"], env={**os.environ, **_GIT_ENV, **env},
                   check=True, capture_output=True)
    missing = (tree / ".git" / "bench-missing")
    gone = missing.read_text().split("\n") if missing.is_file() else []
    gone = [p for p in gone if p]
    if gone:
        subprocess.run(["git", "update-index", "--force-remove", "-z", "--stdin"],
                       input="".join(p + "\0" for p in gone).encode(),
                       env={**os.environ, **_GIT_ENV, **env}, check=True, capture_output=True)
    done.write_text(f"{commit} {tree}\n")
    return env


COCHANGE_COMMITS = 2000  # the commits before a task's base that co-change is counted over
COCHANGE_MAX_FILES = 40  # a commit of more files (a rename, a reformat) says nothing of pairs


def commit_files(mirror: Path, rev: str, n: int = COCHANGE_COMMITS,
                 max_files: int = COCHANGE_MAX_FILES) -> list[frozenset[str]]:
    """The files of each of the last N non-merge commits reachable from REV, newest first;
    a commit of more than MAX_FILES files is left out (one ``git log``)."""
    # (no rename detection: it reads blobs, and a snapshot's mirror lacks its largest ones)
    out = git("-c", "core.quotePath=false", "log", f"-n{n}", "--no-merges", "--no-renames",
              "--name-only", "--format=%x00", rev, git_dir=mirror).stdout.decode("utf-8", "replace")
    records = (frozenset(line for line in r.split("\n") if line) for r in out.split("\0"))
    return [files for files in records if files and len(files) <= max_files]


def ranked_co_changers(commits: list[frozenset[str]], path: str) -> list[tuple[str, int]]:
    """The files changed together with PATH in COMMITS, with how many commits each shared
    with it: most first, then by path."""
    together: dict[str, int] = {}
    for files in commits:
        if path in files:
            for f in files - {path}:
                together[f] = together.get(f, 0) + 1
    return sorted(together.items(), key=lambda kv: (-kv[1], kv[0]))


def co_changers(mirror: Path, rev: str, path: str, n: int = COCHANGE_COMMITS,
                max_files: int = COCHANGE_MAX_FILES) -> list[tuple[str, int]]:
    """``ranked_co_changers`` of PATH over ``commit_files(MIRROR, REV, N, MAX_FILES)``."""
    return ranked_co_changers(commit_files(mirror, rev, n, max_files), path)
