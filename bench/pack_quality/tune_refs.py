"""The ticket tuning list: bug fixes from the tuning set's repositories whose task cites a
ticket that an earlier commit cites too.

The history's ticket link (``retrieval.history``, 7 of its docstring; ``rank.REF_BONUS``)
moves only a task that cites a ticket an earlier commit cites, and the other tuning lists
hold 10 such fixes of 280 -- too few to choose its weight on with confidence. This list
adds more, chosen by a rule written before any of its tasks was run or looked at
(2026-12-08):

- repositories: the tuning set's (``tune.TUNE_REPOS``, in that order), from their mirrors;
- commits: those the tuning set's rule takes (``tasks.qualifies`` on HEAD's history, one
  parent, the parent's tree at least ``tune.TUNE_MIN_FILES`` files), not pinned already in
  any tuning list, whose task text (``tasks.clean_message`` of the message) cites a ticket
  (``analyzer.refs.task_refs`` of ``read_task(text).prose``, the analyzer of the day) that
  one of the ``history.N_COMMITS`` commits before it cites (``history.citing_commits``);
- in each repository the first ``PER_REPO`` such commits by commit hash (tune.py's order).

Pinned by commit in ``tune_refs.txt`` (kind "tune_refs"); ``tune.py --set tune_refs``
reads it. Like the other tuning lists, it is for tuning: the held-out sets stay out of it.

``--large`` (written 2026-12-08, after the first list was run, before this one was): the
same over the large tuning list's repositories (``tune.TUNE_LARGE_REPOS``) by the large
sets' rule (``qualifies`` with ``tasks.LARGE_MIN_FILES``), not in ``tune_large.txt``:
``tune_refs_large.txt`` (kind "tune_refs_large"), for the weight on trees of 3,000+ files.

    .venv/bin/python bench/pack_quality/tune_refs.py           # pin tune_refs.txt (once)
    .venv/bin/python bench/pack_quality/tune_refs.py --large   # pin tune_refs_large.txt
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pack_quality.tasks import clean_message, qualifies  # noqa: E402

PER_REPO = 5
PINNED = HERE / "tune_refs.txt"
PINNED_LARGE = HERE / "tune_refs_large.txt"
LISTS = ("tune.txt", "tune2.txt", "tune3.txt", "tune_prose.txt", "tune_prose2.txt",
         "tune_large.txt")


def linked(mirror: Path, sha: str, refs) -> bool:
    """Whether one of the ``N_COMMITS`` commits before SHA cites one of REFS."""
    from ctxtools.retrieval.history import N_COMMITS, citing_commits, parse_messages
    from pack_quality.trees import git

    log = git("log", f"-n{N_COMMITS}", "--no-merges", "-z", "--format=%H %P%n%B", f"{sha}^",
              git_dir=mirror).stdout
    return bool(citing_commits(parse_messages(log), refs))


def select(mirror: Path, skip: set[str], large: bool = False) -> list[str]:
    """The first PER_REPO commits of MIRROR by the rule (the module's docstring; LARGE: the
    large sets' rule)."""
    from ctxtools.analyzer import read_task
    from pack_quality.tasks import LARGE_MIN_FILES
    from pack_quality.trees import TreeError
    from pack_quality.tune import TUNE_MIN_FILES, entries, n_files

    picked = []
    for sha, message in entries(mirror):
        if sha in skip:
            continue
        refs = read_task(clean_message(message)).query.refs
        if not refs:
            continue  # (the cheap tests first: the same commits as the other order)
        try:
            if large:
                if not qualifies(mirror, sha, message, min_files=LARGE_MIN_FILES):
                    continue
            elif not (qualifies(mirror, sha, message)
                      and n_files(mirror, f"{sha}^") >= TUNE_MIN_FILES):
                continue
        except TreeError:  # a blob the snapshot lacks: git cannot diff it, it does not qualify
            continue
        if linked(mirror, sha, refs):
            picked.append(sha)
            if len(picked) == PER_REPO:
                break
    return picked


def main() -> int:
    from pack_quality.tune import TUNE_LARGE_REPOS, pinned, refuse_pinned, select_each, write_pins

    large = "--large" in sys.argv[1:]
    path = PINNED_LARGE if large else PINNED
    if refuse_pinned(path, "tune_refs.py"):
        return 2
    skip = {s for name in LISTS for _r, s in pinned(HERE / name)}
    if large:
        pairs = select_each(lambda _repo, mirror: select(mirror, skip, large=True),
                            repos=TUNE_LARGE_REPOS)
        write_pins(path, "The large ticket tuning list (tune_refs.py --large)", pairs)
    else:
        pairs = select_each(lambda _repo, mirror: select(mirror, skip))
        write_pins(path, "The ticket tuning list (tune_refs.py's rule)", pairs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
