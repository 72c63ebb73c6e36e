"""Which tasks of a set are prose-only: no code-shaped name, path, stack frame or quoted
message in their text (``ctxtools.retrieval.semantic.prose_only`` on the analyzer's
reading), the tasks the semantic signal is used for.

    .venv/bin/python bench/pack_quality/prose.py [--tasks SET]

(SET: dev, tune, tune_prose, heldout, large, large2, large3 or all)

prints the ids, one a line, for ``bench_pack_quality.py --only ID``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pack_quality.tasks import DEV, SETS, heldout_task, load_dev, read_pinned  # noqa: E402
from pack_quality.trees import MIRROR_ROOT, TreeError, find_mirror  # noqa: E402


def tasks_of(kind: str) -> list:
    if kind == "dev":
        return load_dev(DEV)
    if kind in ("tune", "tune_prose"):  # (pinned by tune.py's rules; trees made as it makes them)
        from pack_quality.tune import tasks_of as tune_tasks

        return [t for t, _tree in tune_tasks([kind])]
    out = []
    for repo, sha in read_pinned(SETS[kind].pinned):
        mirror = find_mirror(repo, {}, [MIRROR_ROOT])
        if mirror is None:
            print(f"prose.py: no mirror of {repo}", file=sys.stderr)
            continue
        try:
            out.append(heldout_task(repo, mirror, sha, kind))
        except TreeError as exc:
            print(f"prose.py: {repo} {sha[:12]}: {exc}", file=sys.stderr)
    return out


def main() -> int:
    from ctxtools.analyzer import parse_query
    from ctxtools.retrieval.semantic import prose_only

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", choices=["dev", "tune", "tune_prose", *SETS, "all"], default="all")
    args = ap.parse_args()
    kinds = ["dev", "tune", *SETS] if args.tasks == "all" else [args.tasks]
    for kind in kinds:
        tasks = tasks_of(kind)
        chosen = [t.id for t in tasks if prose_only(parse_query(t.text))]
        print(f"# {kind}: {len(chosen)} of {len(tasks)} prose-only", file=sys.stderr)
        for tid in chosen:
            print(tid)
    return 0


if __name__ == "__main__":
    sys.exit(main())
