"""The prose tuning list: prose-only bug fixes from the tuning set's repositories.

The semantic signal runs only for prose-only tasks (``semantic.prose_only``), and dev +
tune hold few of them, too few to tune its constants on. This list adds more, chosen by a
rule written before any of its tasks was run or looked at:

- repositories: the tuning set's (``tune.TUNE_REPOS``, in that order), from their mirrors;
- commits: those the tuning set's rule takes (``tasks.qualifies`` on HEAD's history, one
  parent, the parent's tree at least ``tune.TUNE_MIN_FILES`` files), not pinned already
  in ``tune.txt``, whose task text (``tasks.clean_message`` of the message) is prose only
  (``prose_only(parse_query(text))`` with the analyzer of the day the list was made);
- in each repository the first ``PER_REPO`` such commits by commit hash (tune.py's order).

Pinned by commit in ``tune_prose.txt`` (kind "tune_prose"); ``tune.py --set tune_prose``
and ``prose.py --tasks tune_prose`` read it. Like the tuning set, it is for tuning: the
held-out sets stay out of it.

    .venv/bin/python bench/pack_quality/tune_prose.py           # pin tune_prose.txt again
    .venv/bin/python bench/pack_quality/tune_prose.py --second  # pin tune_prose2.txt

The second prose tuning list (kind "tune_prose2", ``tune_prose2.txt``; written 2026-12-05,
before any of its tasks was run): the same rule, skipping the commits of ``tune.txt`` and of
the first list, so each repository's next ``PER_REPO``. Made because the first list's 27
tasks could not tell whether the semantic part helps a pack (the difference between on and
off was two or three tasks either way).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pack_quality.tasks import clean_message, qualifies  # noqa: E402

PER_REPO = 3
PINNED = HERE / "tune_prose.txt"
PINNED_SECOND = HERE / "tune_prose2.txt"


def select(mirror: Path, skip: set[str]) -> list[str]:
    """The first PER_REPO commits of MIRROR by the rule (the module's docstring)."""
    from ctxtools.analyzer import parse_query
    from ctxtools.retrieval.semantic import prose_only
    from pack_quality.tune import TUNE_MIN_FILES, entries, n_files

    picked = []
    for sha, message in entries(mirror):
        if sha in skip or not prose_only(parse_query(clean_message(message))):
            continue  # (the cheap test first: the same commits as the other order)
        if qualifies(mirror, sha, message) and n_files(mirror, f"{sha}^") >= TUNE_MIN_FILES:
            picked.append(sha)
            if len(picked) == PER_REPO:
                break
    return picked


def main(argv=None) -> int:
    from pack_quality.tune import pinned, refuse_pinned, select_each, write_pins

    second = "--second" in (sys.argv[1:] if argv is None else argv)
    if second and refuse_pinned(PINNED_SECOND, "tune_prose.py"):
        return 2
    skip = {s for _r, s in pinned()}
    if second:
        skip |= {s for _r, s in pinned(PINNED)}
    pairs = select_each(lambda _repo, mirror: select(mirror, skip))
    if second:
        write_pins(PINNED_SECOND, "The second prose tuning list (tune_prose.py --second)", pairs)
    else:
        write_pins(PINNED, "The prose tuning list (tune_prose.py's rule)", pairs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
